/* report-svg.h - the call graph drawn as SVG by graphviz, in process
 *
 * pprof's picture: a box per node labelled with its name, flat and
 * cumulative values and shares, growing with its flat share; edges as
 * thick and as red as their weight, dashed where the call skips dropped
 * frames; a legend with the program, the totals, the filters and what was
 * left out.  Laid out by graphviz's dot through libgvc and libcgraph.
 *
 * A comparison (t->dn) keeps the new side's boxes and edges and marks
 * each box with the test of its frame's cumulative value (diff.h, as the
 * flat table sorted by cum tests it): red worse, blue better, stronger
 * for a larger change, grey where the change is not significant.
 * The writer is report_svg (report.h).
 */
#ifndef PROFVIEW_REPORT_SVG_H
#define PROFVIEW_REPORT_SVG_H

/* Start graphviz in the background (plugins, fonts) before the profile is
 * read, for a report_svg to come; optional. */
void report_svg_ready(void);
/* When no more call graph is to be made (at the end, or after an error):
 * graphviz's one context, kept for every call graph of the process, is
 * freed, and its start waited for if it is still going on. */
void report_svg_unready(void);

#endif
