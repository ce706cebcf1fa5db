/* report-strip.h - what the two pictures along the run share: the time
 * axis cut into pixel columns, the frames and the distinct stacks of the
 * samples with their colours, the layout and the subtitle
 *
 * report-timeline.c draws a row per thread of a CPU profile,
 * report-heapline.c the heap in use of a heap profile; report.c picks one
 * by the profile.  A strip lives inside the writer's call: strip_init
 * fills it, strip_free frees what it holds (not the struct itself).  Names
 * are valid until strip_free.
 */
#ifndef PROFVIEW_REPORT_STRIP_H
#define PROFVIEW_REPORT_STRIP_H

#include "report.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Pixel columns of the time axis. */
#define STRIP_COLUMNS 1200
#define STRIP_NAME_LEN 4096

/* Layout, px. */
#define STRIP_LEFT 190          /* room for the rows' labels */
#define STRIP_RIGHT 10
#define STRIP_WIDTH (STRIP_LEFT + STRIP_COLUMNS + STRIP_RIGHT)
#define STRIP_TOP 52            /* below the title and the subtitle */
#define STRIP_AXIS 30           /* the ticks and their labels */
#define STRIP_LEGEND_COLS 4
#define STRIP_LEGEND_W 350
#define STRIP_LEGEND_ROW 17
#define STRIP_FLAME_ROW 16
#define STRIP_BOTTOM 30         /* the details line */
#define STRIP_FONT 12
#define STRIP_CHAR_W 7.3        /* width of a character at STRIP_FONT, a little generous */

/* The colour of a stack without frames. */
#define STRIP_NO_COLOUR PV_NONE

struct strip_frame {
	uint32_t id;           /* the tree's frame */
	char *name;            /* shown name, escaped (pv_escape) */
	uint32_t rgb;
	bool matched;          /* by --highlight */
	int64_t weight;        /* of the coloured samples it colours */
};

struct strip_stack {
	uint32_t off, len;     /* frames in sframes, outermost first */
	uint32_t colour;       /* the frame its samples are coloured by, or STRIP_NO_COLOUR */
	bool off_cpu, matched;
	uint64_t hash;
};

/* A stored stack of the profile (and its off-CPU flag) -> its strip_stack. */
struct strip_lkey {
	uint32_t loc_off, nlocs, stack;
	bool off_cpu;
	uint64_t hash;
};

struct strip {
	FILE *out;
	struct calltree *t;
	const struct pv_profile *p;
	const struct pv_report_ctx *c;
	int64_t from, len;     /* the axis, ns */

	struct strip_frame *frames; size_t nframes, cap_frames;
	uint32_t *frame_map; size_t cap_frame_map; /* tree frame -> strip frame + 1 */

	struct strip_stack *stacks; size_t nstacks, cap_stacks;
	uint32_t *sframes; size_t nsframes, cap_sframes;
	uint32_t *stack_slots; size_t nstack_slots;

	struct strip_lkey *lkeys; size_t nlkeys, cap_lkeys;
	uint32_t *lkey_slots; size_t nlkey_slots;

	char name[STRIP_NAME_LEN], esc[STRIP_NAME_LEN];
};

/* The strip of the context's tree writing to out, its axis from the start
 * of the context's spans to their end (the whole run without spans).  0,
 * or -1 after reporting an error: a profile that does not say when its
 * samples were taken, or a comparison. */
int strip_init(struct strip *strip, FILE *out, const struct pv_report_ctx *c);
/* Frees what the strip holds. */
void strip_free(struct strip *strip);

/* Hash tables: open addressing over the index + 1 of an array's
 * elements, which keep their own hash (hash(ctx, i)); doubled at half
 * full.  Room for one more of n elements in the table *slots of *nslots;
 * 0 or -1 after reporting running out of memory. */
typedef uint64_t (*strip_hash_of)(const void *ctx, size_t i);
int strip_table_room(const void *ctx, uint32_t **slots, size_t *nslots, size_t n, strip_hash_of hash);

/* The escaped name of s, in strip->esc: valid UTF-8 without control
 * characters. */
const char *strip_escaped(struct strip *strip, const char *s);
/* The stack of sample s (its frames at the tree's granularity), made when
 * new; PV_NONE when out of memory. */
uint32_t strip_stack_of(struct strip *strip, const struct pv_sample *s);
/* The column of time t (ns from the start): column c holds the times from
 * from + ceil(c * len / STRIP_COLUMNS) on; the end of the axis is in the
 * last. */
uint32_t strip_column_of(const struct strip *strip, int64_t t);
/* The subtitle's end: the columns' length, the time spans and the filters
 * of the view, escaped. */
void strip_put_view(struct strip *strip);
/* The time axis, its line at y. */
void strip_put_axis(struct strip *strip, double y);
/* The frames and the stacks as the script's "f", "fc", "fm", "s" and "so". */
void strip_put_frames(struct strip *strip);

#endif
