/* symbolize-bfd-none.c - the second symbolizer when profview is built
 * without libbfd (-Dbfd=disabled): --symbolizer=bfd says so. */
#include "symbolize-bfd.h"
#include "error.h"

int pv_symbolize_bfd(struct pv_profile *p, struct pv_modules *mods,
		     const struct pv_symbolize_options *opt)
{
	(void)p;
	(void)mods;
	(void)opt;
	return pv_error("this profview was built without libbfd (-Dbfd=disabled): --symbolizer=bfd is not available");
}
