/* scripts.h - the reports' scripts, each written in a .js file of its own
 * and made a C string at build time (embed-js.py) */
#ifndef PROFVIEW_SCRIPTS_H
#define PROFVIEW_SCRIPTS_H

/* flame.js: the flame graph's zoom and search (report-flame.c). */
extern const char pv_script_flame[];
/* spansel.js: what the two timelines' scripts share (the tooltip, the
 * selection's flame graph, choosing a span): written before either. */
extern const char pv_script_spansel[];
/* timeline.js: the timeline's hover, selection and flame graph
 * (report-timeline.c). */
extern const char pv_script_timeline[];
/* heapline.js: the heap timeline's hover, selection and flame graph
 * (report-heapline.c). */
extern const char pv_script_heapline[];

#endif
