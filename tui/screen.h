/* screen.h - the call tree browsed on a terminal (profview's default on a
 * terminal, and --tui)
 *
 * The screen and the keys; the state they show and change (the view, the
 * expanded rows, the cursor, the zoom and filter stack, the search) is
 * browse.h's, without the screen.  Filters chosen in the browser (focus,
 * ignore, hide, callers) are steps of the view, run by the pipeline on a
 * copy of the profile; zooming only re-roots the view.
 */
#ifndef PROFVIEW_SCREEN_H
#define PROFVIEW_SCREEN_H

#include "calltree.h"
#include "diff.h"
#include "pipeline.h"

#include <stdbool.h>

struct screen_options {
	/* The command line's view (pipeline.h): the threads to start on, the
	 * steps the browser's own come after, the granularity and value to
	 * start with.  Borrowed for the whole run. */
	struct pv_view view;
	double noisefloor;       /* dim nodes within K times the noise of their parent's samples; 0 off */
	bool color;              /* colours allowed (NO_COLOR and monochrome terminals: attributes only) */
	/* A comparison's test (diff.h), NULL when the profile is not one;
	 * borrowed.  significant: start with only the significant nodes. */
	const struct pv_diff_options *diff;
	bool significant;
};

/* Browse profile p (symbolized, no view applied; it must stay alive and
 * unchanged) until the user quits.  0, or -1 after reporting an error
 * with the terminal restored. */
int screen_run(const struct pv_profile *p, const struct screen_options *o);

#endif
