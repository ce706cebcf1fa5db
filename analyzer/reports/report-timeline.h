/* report-timeline.h - the samples along the run: one SVG file with its own
 * script, no external files or network
 *
 * A row per thread, time across: each pixel column of a row is coloured
 * by the function its samples were mostly in (the leaf at the tree's
 * granularity; the frame the thread waited in for off-CPU samples, drawn
 * pale and hatched).  Hovering over a column shows its samples and most
 * frequent stack; dragging across the rows selects a span, whose flame
 * graph (icicle) is drawn below, live.  The file embeds the frames, the
 * distinct stacks and, per thread and column, the weight of each stack,
 * so that the flame graph and the totals of any run of columns are exact:
 * the same as "profview --flat --time=FROM,TO" over the columns' span.
 *
 * A heap profile (pv_profile_has_lifetimes) is drawn otherwise, by
 * report-heapline.c (report_heapline): the bytes in use along the run;
 * report.c picks the one.  What the two share, the frames, the stacks,
 * the time axis, is report-strip.c's.
 */
#ifndef PROFVIEW_REPORT_TIMELINE_H
#define PROFVIEW_REPORT_TIMELINE_H

#include "report.h"

/* The writer is report_timeline (report.h): the samples of the tree's
 * profile, framed at the tree's granularity and weighed as it weighs them
 * (ct_pick), from the start of the context's spans to their end (the
 * whole run without spans); -1 after reporting an error: a profile that
 * does not say when its samples were taken, or out of memory. */

#endif
