/* report-flame.h - the call tree as a flame graph: one SVG file with its own
 * script (hover, click to zoom, search), no external files or network */
#ifndef PROFVIEW_REPORT_FLAME_H
#define PROFVIEW_REPORT_FLAME_H

#include "calltree.h"
#include "diff.h"

#include <stdio.h>

struct flame_options {
	double noisefloor;     /* grey nodes with n <= K * sqrt(parent n), and
				* everything below them; 0 off */
	int64_t mincount;      /* leave out nodes with fewer samples; 0 off */
	int maxdepth;          /* leave out nodes deeper than this; 0 off */
	bool icicle;           /* root on top, callees below */
	const char *filters;   /* the filters in force, for the subtitle, or NULL */
	/* A comparison's (t->dn) test: widths stay the new side's, colours
	 * show the verdicts; NULL: the defaults. */
	const struct pv_diff_options *diff;
};

/* Write the flame graph of t to out (stdio-buffered; the caller checks
 * ferror).  Returns 0, or -1 after reporting an error (out of memory). */
int report_flame(FILE *out, const struct calltree *t, const struct flame_options *o);

#endif
