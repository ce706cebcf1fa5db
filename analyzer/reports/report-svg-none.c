/* report-svg-none.c - the call graph's writer when profview is built
 * without graphviz (-Dgraphviz=disabled): --svg says so (report.c keeps
 * the report in its table, so the option is the same in every build). */
#include "report.h"
#include "report-svg.h"
#include "error.h"

void report_svg_ready(void)
{
}

void report_svg_unready(void)
{
}

int report_svg(FILE *out, const struct pv_report_ctx *rc)
{
	(void)out;
	(void)rc;
	return pv_error("this profview was built without graphviz (-Dgraphviz=disabled): no --svg call graph; --flame draws the stacks");
}
