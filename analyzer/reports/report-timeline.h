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
 */
#ifndef PROFVIEW_REPORT_TIMELINE_H
#define PROFVIEW_REPORT_TIMELINE_H

#include "calltree.h"

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>

/* Pixel columns of the time axis. */
#define TIMELINE_COLUMNS 1200

struct timeline_options {
	/* The time axis, ns from the profile's start; to <= from: from 0 to
	 * the end of the run (pv_run_length). */
	int64_t from_ns, to_ns;
	/* Colour only the samples with a frame whose name (as shown) matches,
	 * grey the others; NULL: colour all.  highlight_text is the
	 * expression as given, for the subtitle. */
	const regex_t *highlight;
	const char *highlight_text;
	bool by_thread;        /* the flame graph has a level of threads */
	const char *filters;   /* the steps in force, for the subtitle, or NULL */
	const char *spans;     /* the --time spans, resolved, or NULL */
};

/* Write the timeline of the samples of t's profile, framed at t's
 * granularity and weighed as t weighs them (ct_pick), to out
 * (stdio-buffered: the caller checks ferror).  Returns 0, or -1 after
 * reporting an error: a profile that does not say when its samples were
 * taken, or out of memory. */
int report_timeline(FILE *out, struct calltree *t, const struct timeline_options *o);

#endif
