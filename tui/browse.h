/* browse.h - what the browser shows, without the screen
 *
 * The state of one browsing session over a profile: the view (the command
 * line's, plus the actions taken: filters, callers, zooms, time spans),
 * the call tree the pipeline built for it, which rows are expanded and
 * where the cursor is, the flat view, the search, the thread picker's
 * rows and the time strip's.  Every
 * action is a function here, so that they are tested without a terminal;
 * screen.c draws the state and turns keys into these calls.
 *
 * Expanded rows, the cursor and zooms are kept across a rebuild (a
 * filter, an undo, another thread or granularity) by a node's path: the
 * frames from the root down to it, as tmux's mode tree keeps its rows by
 * tag.  A path the new tree does not have is dropped; when none is left,
 * the hottest path is expanded.
 *
 * The tree shown before the last rebuild is kept: an undo or a toggle back
 * (granularity, thread) shows it again without building it.
 *
 * A timed profile (pv_profile.timed) has a time strip (browse-time.c): the
 * run cut into columns, and for each thread the samples of each column,
 * on and off CPU; a time cursor on a column; and the span of the run the
 * tree is of.  The span starts as the command line's (--time) and a span
 * chosen here takes its place, as an action an undo takes back.
 *
 * A comparison (diff.h) tests the nodes under the view's root as one
 * family: whenever the tree or the root changes (a rebuild, a zoom, an
 * undo) the cells are computed again, for the zoomed subtree as
 * calltree_subtree() makes it.  The filter of significant nodes shows the
 * nodes with a verdict and the nodes above them alone.
 */
#ifndef PROFVIEW_BROWSE_H
#define PROFVIEW_BROWSE_H

#include "calltree.h"
#include "diff.h"
#include "pipeline.h"
#include "tree-widget.h"

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>

enum browse_act { BROWSE_ZOOM, BROWSE_FOCUS, BROWSE_IGNORE, BROWSE_HIDE, BROWSE_CALLERS, BROWSE_TIME };

/* One entry of the stack an undo unwinds. */
struct browse_action {
	enum browse_act kind;
	uint64_t path;         /* BROWSE_ZOOM: the new root's path (a hash) */
	uint32_t node;         /* BROWSE_ZOOM: that node in the tree shown, PV_NONE if none */
	char *name;            /* the filters: a function name */
	/* BROWSE_TIME: the span from then on, in ns from the profile's start
	 * (to: INT64_MAX up to the end); from < 0: none, the whole run. */
	int64_t from, to;
};

/* The time strip: a row a thread (or the rest of them), a cell a column
 * of the run, each column 1/ncols of it.  Samples are counted by the
 * profile's "samples" value (else one each), off CPU apart. */
struct browse_strip_row {
	uint32_t tid;          /* the thread's id (0: no thread, or the rest) */
	uint32_t name;         /* its name, a string index of the profile */
	uint32_t thread;       /* its index in the profile (PV_NONE: none, or the rest) */
	size_t nthreads;       /* > 1: the rest of the threads */
	int64_t samples;
	uint32_t *on, *off;    /* per column: samples on CPU, off CPU */
};

struct browse_strip {
	size_t ncols, maxrows; /* what it was computed for (0: not yet) */
	int64_t len;           /* the run's length, ns (at least 1) */
	struct browse_strip_row *rows;
	size_t nrows;
	uint32_t max;          /* the fullest cell's samples, on and off CPU */
	bool offcpu;           /* a sample is off CPU */
};

/* The thread picker's rows. */
#define BROWSE_ALL_THREADS 0
#define BROWSE_CMD_THREADS UINT32_MAX /* the threads of --tid=A,B */
struct browse_thread {
	uint32_t tid;          /* or one of the two above */
	uint32_t name;         /* string index of the thread's name */
	int64_t count, value;  /* its samples and their weight (as the tree's) */
	int64_t cpu_ns;        /* the CPU time the collector measured, -1 unknown */
	uint32_t thread;       /* its index in the profile (for its process) */
};

/* A node's links, as the tree's (calltree.h) with TW_NONE for PV_NONE,
 * and its frame (PV_NONE for the root and threads). */
struct browse_link {
	uint32_t first_child, next_sibling;
	uint32_t frame;
};

/* A tree in pre-order (its rows with everything expanded). */
struct browse_preorder {
	uint32_t *node;                /* by rank: the node */
	uint32_t *frame;               /* by rank: its frame (browse_link's) */
	uint32_t *rank;                /* by node: its rank */
	uint32_t *end;                 /* by node: the rank after its subtree */
};

/* A tree built for a view, with what the session keeps beside it. */
struct browse_tree {
	struct pv_result res;          /* its profile and tree */
	char *key;                     /* the view it is of (browse.c) */
	struct browse_link *links;     /* per node */
	uint64_t *fkeys;               /* per frame, what it stands for (a hash); NULL until needed */
	uint64_t *paths;               /* per node, its path; NULL until needed */
	struct browse_preorder *pre;   /* NULL until a search needs it */
	struct ct_flat_row *rows;      /* the flat view's, NULL until shown */
	size_t nrows;
};

struct browse {
	const struct pv_profile *orig; /* as read, before any view */
	struct pv_view base;           /* the command line's view (pipeline.h) */
	struct pv_result res;          /* the view shown: its profile and tree */
	struct calltree *t;            /* res.t */
	char *key;                     /* the rest of the tree shown's browse_tree */
	struct browse_link *links;     /* what the widget and the search walk */
	uint64_t *fkeys, *paths;
	struct browse_preorder *pre;
	struct browse_tree prev;       /* the tree shown before, kept for an undo */
	double build_ms;               /* the time the last tree built took, ms */
	struct ct_options copt;        /* granularity and value in force */
	uint32_t tid;                  /* the one thread shown, 0 all */
	const uint32_t *cmd_tids;      /* --tid with several: shown together */
	size_t ncmd_tids;
	bool on_cmd_tids;
	double floor;                  /* dim nodes within floor times the noise of their parent's samples */

	struct tree_widget *w;         /* rows, expanded nodes, cursor */
	uint32_t root;                 /* the view's root node */
	struct browse_action *acts;
	size_t nacts, cap_acts;

	/* The flat view. */
	bool flat, flat_by_cum;
	struct ct_flat_row *rows;
	size_t nrows, fcursor, ftop;

	/* Search. */
	bool have_re;
	regex_t re;
	char pattern[256];
	const uint32_t *order;         /* pre-order rank of each node (pre->rank) */
	uint32_t *matches;
	size_t nmatches;
	uint8_t *frame_match;          /* per frame: 0 not matched yet, 1 matches, 2 not */
	int64_t match_weight;

	/* A comparison: the test's options (NULL: not shown as one); per node
	 * of the tree shown, its cell (NULL when not a comparison; zeroed
	 * outside the root's subtree); per node, whether it has a verdict or
	 * a node below it has (the filter shows those alone); how many nodes
	 * under the root have a verdict; the filter on.  The flat view's
	 * cells, per row (self or cumulative, as it is sorted), and how many
	 * of its rows are shown (those with a verdict first, when filtered). */
	const struct pv_diff_options *dopt;
	struct pv_diff_cell *cells;
	uint8_t *sig;
	size_t nsig;
	bool significant;
	struct pv_diff_cell *fcells;
	size_t nflat;

	/* The thread picker. */
	struct browse_thread *threads;
	size_t nthreads, tcursor, ttop;

	/* The time strip (computed when first shown) and the time cursor: a
	 * time in ns from the start, the column holding it is the cursor's. */
	struct browse_strip strip;
	int64_t time_at;

	char status[10000];            /* the message for the status line */
	char last_error[512];          /* the last error said */
	int exports;
	void *ui;                      /* the front end's own */
};

/* A session over profile p (symbolized, no view applied; it must stay
 * alive and unchanged) starting from the command line's view base
 * (borrowed for the session) and noise floor; draw draws a row of the
 * tree (tree-widget.h; NULL without a screen), called with the session as
 * its context.  The tree is built.  NULL after reporting an error. */
struct browse *browse_new(const struct pv_profile *p, const struct pv_view *base, double floor,
			  void (*draw)(void *ctx, uint32_t item, int depth, bool expanded,
				       bool has_children, bool selected, int y, int width));
void browse_free(struct browse *b);

/* Builds the tree again for the view in force (or takes the one shown
 * before when it is that view's), keeping the expanded rows, the cursor
 * and the zooms whose paths the new tree has.  0, or -1 after reporting an
 * error (the tree shown is then the one before). */
int browse_rebuild(struct browse *b);
/* Drops the zooms from the actions (the tree's nodes change meaning). */
void browse_drop_zooms(struct browse *b);

/* The actions: 0, or -1 after an error that leaves the session unusable
 * (out of memory).  One that cannot be done says why on the status line
 * and returns 0. */
/* Focus, ignore, hide or callers on the function under the cursor. */
int browse_filter(struct browse *b, enum browse_act kind);
/* The node under the cursor becomes the view's root. */
int browse_zoom(struct browse *b);
/* Take back the last zoom, filter or time span. */
int browse_undo(struct browse *b);
/* Functions or source lines. */
int browse_toggle_lines(struct browse *b);
/* The kernel frames shown or hidden (pipeline.h's hide_kernel), keeping
 * the zooms and the rows the new tree has. */
int browse_toggle_kernel(struct browse *b);
/* Inlined calls as frames of their own, or part of the function they were
 * inlined into (--noinlines), in turn; the zooms are dropped. */
int browse_toggle_inlines(struct browse *b);
/* The flat view on or off, sorted by self or cumulative weight
 * (browse-flat.c). */
int browse_set_flat(struct browse *b, bool on, bool by_cum);
/* Search function names (extended regular expression) and go to the
 * first match. */
int browse_search(struct browse *b, const char *re);
/* The next or previous match. */
void browse_next_match(struct browse *b, bool forward);
/* The thread picker's rows, the one in force under the cursor
 * (browse-scope.c, as the next two and browse_time_mark, _clear). */
int browse_list_threads(struct browse *b);
/* Show the picker's row i. */
int browse_pick_thread(struct browse *b, size_t i);
/* Writes what is shown (the zoomed subtree) as a flame graph or a call
 * graph, profview-PID-N.svg in the current directory; says where. */
int browse_export(struct browse *b, bool flame);
/* What the text reports' header warns about, on the status line. */
void browse_startup_warnings(struct browse *b);
/* Show a comparison's profile as one, tested with options o (borrowed for
 * the session), and start with the filter of significant nodes on or off;
 * nothing when the profile is not a comparison. */
int browse_set_diff(struct browse *b, const struct pv_diff_options *o, bool significant);
/* The filter of significant nodes on or off (the flat view: the rows
 * with a verdict alone). */
int browse_toggle_significant(struct browse *b);
/* Go to the next or previous node (flat row) with a verdict. */
int browse_next_verdict(struct browse *b, bool forward);

/* The time strip (browse-time.c).  In a profile without sample times
 * each of these says so on the status line and changes nothing. */
/* The strip for ncols columns and at most maxrows rows (the heaviest
 * threads, the last row the rest of them when there are more), computed
 * again when either changed.  0, or -1 out of memory (said). */
int browse_time_strip(struct browse *b, size_t ncols, size_t maxrows);
/* Move the time cursor by delta columns, within the run. */
void browse_time_move(struct browse *b, long delta);
/* The span starts at the time cursor's column (end: ends after it); the
 * other end is kept when it is on the right side, else is the run's. */
int browse_time_mark(struct browse *b, bool end);
/* The whole run again (the command line's span too). */
int browse_time_clear(struct browse *b);
/* The times column col covers, [*from, *to) in ns, of the strip's. */
void browse_time_column(const struct browse *b, size_t col, int64_t *from, int64_t *to);
/* The time cursor's column. */
size_t browse_time_cursor(const struct browse *b);
/* The spans in force, resolved to [from, to) in ns (to INT64_MAX: to the
 * end): up to max of them in ends; how many there are (0: the whole
 * run). */
size_t browse_time_spans(struct browse *b, int64_t (*ends)[2], size_t max);
/* (browse.c's) The spans of the view in force, for pipeline.h: the
 * command line's, or the one chosen here put in *one; *n of them. */
const struct pv_span *browse_time_view(const struct browse *b, struct pv_span *one, size_t *n);
/* (browse.c's) Frees the strip. */
void browse_time_free(struct browse *b);
/* Says so on the status line when the profile has no sample times (for
 * browse-scope.c). */
bool browse_untimed(struct browse *b);

/* Reading the state. */
/* The function under the cursor (tree or flat view), or NULL. */
const char *browse_current_function(const struct browse *b);
/* Is node within the noise of its parent (dimmed)?  In a comparison the
 * larger side's counts. */
bool browse_below_floor(const struct browse *b, uint32_t node);
/* "all threads", "thread 12 "name"", "threads 12,13": what is shown. */
const char *browse_threads_shown(const struct browse *b, char *buf, size_t n);

#endif
