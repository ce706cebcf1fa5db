/* screen-none.c - the browser when profview is built without ncurses
 * (-Dtui=disabled): --tui says so; on a terminal profview prints the tree. */
#include "screen.h"
#include "error.h"

int screen_run(const struct pv_profile *p, const struct screen_options *o)
{
	(void)p;
	(void)o;
	return pv_error("this profview was built without the browser (-Dtui=disabled): use --tree, --flat or a picture");
}
