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
 * report-heapline.c: the bytes in use along the run.  What the two
 * share, the frames, the stacks, the time axis, is declared below.
 */
#ifndef PROFVIEW_REPORT_TIMELINE_H
#define PROFVIEW_REPORT_TIMELINE_H

#include "report.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Pixel columns of the time axis. */
#define TIMELINE_COLUMNS 1200

/* The writer is report_timeline (report.h): the samples of the tree's
 * profile, framed at the tree's granularity and weighed as it weighs them
 * (ct_pick), from the start of the context's spans to their end (the
 * whole run without spans); -1 after reporting an error: a profile that
 * does not say when its samples were taken, or out of memory. */

/* Shared with report-heapline.c. */

#define NCOL TIMELINE_COLUMNS
#define NAME_LEN 4096

/* Layout, px. */
#define LEFT 190          /* room for the rows' labels */
#define RIGHT 10
#define WIDTH (LEFT + NCOL + RIGHT)
#define ROWS_TOP 52       /* below the title and the subtitle */
#define ROW 18            /* height of a thread's row */
#define ROW_STEP 21       /* from one row to the next */
#define AXIS 30           /* the ticks and their labels */
#define LEGEND_COLS 4
#define LEGEND_W 350
#define LEGEND_ROW 17
#define LEGEND_MAX 16     /* functions in the legend */
#define FLAME_ROW 16
#define BOTTOM 30         /* the details line */
#define FONT 12
#define CHAR_W 7.3        /* width of a character at FONT, a little generous */
#define LABEL_CHARS 24    /* of a row's label */
/* Rows drawn at most: past them, the threads with the fewest samples are
 * one row, "N more threads", so that the picture and the time it takes
 * stay bounded whatever the number of threads. */
#define TIMELINE_MAX_ROWS 500

/* What a part of a column shows, bottom up. */
enum { PART_ON, PART_OFF, PART_ON_GREY, PART_OFF_GREY, NPARTS };

/* Fills that are no function's. */
#define FILL_GREY 0xc4c4c4u     /* not matching --highlight */
#define FILL_NONE 0x9a9a9au     /* a stack without frames */
#define NO_COLOUR PV_NONE
#define GREY_COLOUR (PV_NONE - 1)

struct tl_frame {
	uint32_t id;           /* the tree's frame */
	char *name;            /* shown name, escaped (pv_escape) */
	uint32_t rgb;
	bool matched;          /* by --highlight */
	int64_t weight;        /* of the coloured samples it colours */
};

struct tl_stack {
	uint32_t off, len;     /* frames in tl.sframes, outermost first */
	uint32_t colour;       /* the frame its samples are coloured by, or NO_COLOUR */
	bool off_cpu, matched;
	uint64_t hash;
};

/* A stored stack of the profile (and its off-CPU flag) -> its tl_stack. */
struct tl_lkey {
	uint32_t loc_off, nlocs, stack;
	bool off_cpu;
	uint64_t hash;
};

struct tl_cell {
	uint32_t row, col, stack;
	int64_t count, weight;
	double sq;             /* the variance of weight (pv_sample_var) */
	uint64_t hash;
};

/* How one column of a row is drawn. */
struct tl_mark {
	uint32_t colour[NPARTS];
	uint8_t y[NPARTS], h[NPARTS]; /* from the row's top; h 0: no such part */
};

struct tl_row {
	uint32_t thread;       /* thread index, p->nthreads for samples with none */
	bool more;             /* the row of the tl.nmore threads not drawn alone */
	int64_t first;         /* its first sample's time */
	uint32_t hold, usual, last; /* columns: see hold_columns() */
};

struct tl {
	FILE *out;
	struct calltree *t;
	const struct pv_profile *p;
	const struct pv_report_ctx *c;
	int64_t from, len;     /* the axis, ns */
	bool any_off, any_grey;

	struct tl_row *rows; size_t nrows;
	size_t nmore;          /* threads in the row of the rest, if any */
	uint32_t *row_of;      /* thread index (p->nthreads: none) -> row */

	struct tl_frame *frames; size_t nframes, cap_frames;
	uint32_t *frame_map; size_t cap_frame_map; /* tree frame -> tl frame + 1 */

	struct tl_stack *stacks; size_t nstacks, cap_stacks;
	uint32_t *sframes; size_t nsframes, cap_sframes;
	uint32_t *stack_slots; size_t nstack_slots;

	struct tl_lkey *lkeys; size_t nlkeys, cap_lkeys;
	uint32_t *lkey_slots; size_t nlkey_slots;

	struct tl_cell *cells; size_t ncells, cap_cells;
	uint32_t *cell_slots; size_t ncell_slots;

	struct tl_mark *marks; /* NCOL, one row at a time */
	int64_t *acc;          /* NPARTS * nframes, one column at a time */
	uint32_t *touched; size_t ntouched, cap_touched;

	char name[NAME_LEN], esc[NAME_LEN];
};

/* The escaped name of s, in tl->esc: valid UTF-8 without control
 * characters. */
const char *tl_escaped(struct tl *tl, const char *s);
/* The stack of sample s (its frames at the tree's granularity), made when
 * new; PV_NONE when out of memory. */
uint32_t tl_stack_of(struct tl *tl, const struct pv_sample *s);
/* The column of time t (ns from the start): column c holds the times from
 * from + ceil(c * len / NCOL) on; the end of the axis is in the last. */
uint32_t tl_column_of(const struct tl *tl, int64_t t);
/* The subtitle's end: the columns' length, the time spans and the filters
 * of the view, escaped. */
void tl_put_view(struct tl *tl);
/* The time axis, its line at y. */
void tl_put_axis(struct tl *tl, double y);
/* The frames and the stacks as the script's "f", "fc", "fm", "s" and "so". */
void tl_put_frames(struct tl *tl);
void tl_free(struct tl *tl);

/* The heap in use along the run, of a heap profile (report-heapline.c);
 * tl has the axis.  0, or -1 after reporting an error. */
int heapline_write(struct tl *tl);

#endif
