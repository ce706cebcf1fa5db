/* report-timeline.c - the samples along the run, a row per thread, with
 * the flame graph of a span dragged across it (see report-timeline.h)
 *
 * The time axis is cut into STRIP_COLUMNS columns of a pixel.  Each
 * sample goes to a cell: its thread's row, the column of its time and its
 * stack, which is one of the distinct stacks of the view (the frames at the
 * tree's granularity, outermost first, and whether the thread was off the
 * CPU).  A cell holds the samples and the weight of its stack there.
 *
 * The picture draws each column of a row as up to four stacked parts, in
 * proportion to their weight: on-CPU and off-CPU samples, and, with
 * --highlight, those without a matching frame (grey).  A part is coloured
 * by the function that weighs most in it; consecutive columns drawn alike
 * are one rectangle.  A column without samples between two close ones (at
 * most twice the row's usual distance apart) shows the one before, so
 * that a thread sampled less often than once a column is not drawn as
 * thin stripes; the script's hover follows the same rule.
 *
 * The script gets the frames, the stacks and the cells (per row, in
 * column order: column, number of stacks, then stack, samples[, weight],
 * the variance of the weight for each), and computes everything else from them: the hover, the
 * selection's flame graph and its totals, timelineSelect().
 */
#include "report.h"
#include "report-timeline.h"
#include "report-strip.h"
#include "present.h"
#include "error.h"
#include "escape.h"
#include "scripts.h"
#include "units.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Layout of the rows, px (the rest is the strip's). */
#define ROW 18            /* height of a thread's row */
#define ROW_STEP 21       /* from one row to the next */
#define LEGEND_MAX 16     /* functions in the legend */
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
#define GREY_COLOUR (PV_NONE - 1)

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

/* The strip, and the rows of the threads and their cells. */
struct tl {
	struct strip s;
	bool any_off, any_grey;

	struct tl_row *rows; size_t nrows;
	size_t nmore;          /* threads in the row of the rest, if any */
	uint32_t *row_of;      /* thread index (p->nthreads: none) -> row */

	struct tl_cell *cells; size_t ncells, cap_cells;
	uint32_t *cell_slots; size_t ncell_slots;

	struct tl_mark *marks; /* STRIP_COLUMNS, one row at a time */
	int64_t *acc;          /* NPARTS * nframes, one column at a time */
	uint32_t *touched; size_t ntouched, cap_touched;
};

static uint64_t cell_hash(const void *ctx, size_t i)
{
	return ((const struct tl *)ctx)->cells[i].hash;
}

static void tl_free(struct tl *tl)
{
	strip_free(&tl->s);
	free(tl->cells);
	free(tl->cell_slots);
	free(tl->rows);
	free(tl->row_of);
	free(tl->marks);
	free(tl->acc);
	free(tl->touched);
	free(tl);
}

/* Add a sample to its cell.  0 or -1. */
static int add_sample(struct tl *tl, uint32_t row, uint32_t col, uint32_t stack, int64_t count,
		      int64_t weight, double sq)
{
	uint64_t h = pv_mix64((uint64_t)row << 40 ^ (uint64_t)col << 28 ^ stack ^ (uint64_t)stack << 52);
	size_t mask, i;

	if (strip_table_room(tl, &tl->cell_slots, &tl->ncell_slots, tl->ncells, cell_hash) < 0)
		return -1;
	mask = tl->ncell_slots - 1;
	for (i = h & mask; tl->cell_slots[i]; i = (i + 1) & mask) {
		struct tl_cell *c = &tl->cells[tl->cell_slots[i] - 1];
		if (c->row == row && c->col == col && c->stack == stack) {
			c->count += count;
			c->weight += weight;
			c->sq += sq;
			return 0;
		}
	}
	if (pv_grow(&tl->cells, &tl->cap_cells, tl->ncells + 1, sizeof *tl->cells) < 0)
		return -1;
	tl->cells[tl->ncells] = (struct tl_cell){ .row = row, .col = col, .stack = stack,
						  .count = count, .weight = weight, .sq = sq,
						  .hash = h };
	tl->cell_slots[i] = (uint32_t)tl->ncells + 1;
	tl->ncells++;
	return 0;
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	const struct tl_row *x = a, *y = b;
	const struct pv_profile *p = ctx;
	uint32_t tx = x->thread < p->nthreads ? p->threads[x->thread].tid : UINT32_MAX;
	uint32_t ty = y->thread < p->nthreads ? p->threads[y->thread].tid : UINT32_MAX;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return tx < ty ? -1 : tx > ty;
}

static int cmp_cells(const void *a, const void *b)
{
	const struct tl_cell *x = a, *y = b;

	if (x->row != y->row)
		return x->row < y->row ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_weight(const void *a, const void *b, void *ctx)
{
	const int64_t *w = ctx;
	const struct tl_row *x = a, *y = b;

	if (w[x->thread] != w[y->thread])
		return w[x->thread] > w[y->thread] ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* More rows than TIMELINE_MAX_ROWS: the threads with the most samples
 * keep theirs, in their order, and the rest share the last one.  0 or
 * -1. */
static int fold_rows(struct tl *tl)
{
	const struct pv_profile *p = tl->s.p;
	int64_t *w = pv_budget_calloc(p->nthreads + 1, sizeof *w);
	struct tl_row *by = pv_budget_calloc(tl->nrows, sizeof *by);
	size_t n = 0, keep = TIMELINE_MAX_ROWS - 1;
	int64_t first = INT64_MAX;
	int ret = -1;

	if (!w || !by) {
		pv_oom();
		goto out;
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pv_sample *s = &p->samples[i];
		w[s->thread < p->nthreads ? s->thread : p->nthreads] += ct_sample_count(tl->s.t, s);
	}
	memcpy(by, tl->rows, tl->nrows * sizeof *by);
	qsort_r(by, tl->nrows, sizeof *by, cmp_weight, w);
	/* w now marks who stays: -1 */
	for (size_t r = 0; r < keep; r++)
		w[by[r].thread] = -1;
	for (size_t r = keep; r < tl->nrows; r++)
		first = by[r].first < first ? by[r].first : first;
	for (size_t r = 0; r < tl->nrows; r++)
		if (w[tl->rows[r].thread] == -1)
			tl->rows[n++] = tl->rows[r];
	tl->nmore = tl->nrows - keep;
	for (size_t r = keep; r < tl->nrows; r++)
		tl->row_of[by[r].thread] = (uint32_t)n;
	tl->rows[n] = (struct tl_row){ .thread = p->nthreads, .first = first, .more = true };
	tl->nrows = n + 1;
	pv_note("--timeline: %zu threads with the fewest samples are drawn as one row, of the %d rows drawn",
		tl->nmore, TIMELINE_MAX_ROWS);
	ret = 0;
out:
	free(w);
	free(by);
	return ret;
}

/* The rows (threads with samples, by their first sample's time), then
 * every sample in its cell, the cells sorted.  0 or -1. */
static int gather(struct tl *tl)
{
	const struct pv_profile *p = tl->s.p;
	const struct calltree *t = tl->s.t;
	int64_t *first = malloc((p->nthreads + 1) * sizeof *first);
	int ret = -1;

	tl->row_of = pv_budget_calloc(p->nthreads + 1, sizeof *tl->row_of);
	tl->rows = pv_budget_calloc(p->nthreads + 1, sizeof *tl->rows);
	if (!first || !tl->row_of || !tl->rows) {
		pv_oom();
		goto out;
	}
	for (size_t i = 0; i <= p->nthreads; i++)
		first[i] = INT64_MAX;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pv_sample *s = &p->samples[i];
		size_t th = s->thread < p->nthreads ? s->thread : p->nthreads;
		if (s->time_ns < first[th])
			first[th] = s->time_ns;
	}
	for (size_t i = 0; i <= p->nthreads; i++)
		if (first[i] != INT64_MAX)
			tl->rows[tl->nrows++] = (struct tl_row){ .thread = (uint32_t)i, .first = first[i] };
	if (tl->nrows > 1) /* none: no array at all */
		qsort_r(tl->rows, tl->nrows, sizeof *tl->rows, cmp_rows, (void *)p);
	for (size_t r = 0; r < tl->nrows; r++)
		tl->row_of[tl->rows[r].thread] = (uint32_t)r;
	if (tl->nrows > TIMELINE_MAX_ROWS && fold_rows(tl) < 0)
		goto out;

	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pv_sample *s = &p->samples[i];
		uint32_t th = s->thread < p->nthreads ? s->thread : (uint32_t)p->nthreads;
		uint32_t stack = strip_stack_of(&tl->s, s);
		int64_t c = ct_sample_count(t, s), w = ct_sample_weight(t, s);
		double sq = pv_sample_var(s, t->v_value != PV_NONE ? t->v_value : t->v_count, t->v_count);

		if (stack == PV_NONE ||
		    add_sample(tl, tl->row_of[th], strip_column_of(&tl->s, s->time_ns), stack, c, w, sq) < 0)
			goto out;
		if (tl->s.stacks[stack].off_cpu)
			tl->any_off = true;
		if (!tl->s.stacks[stack].matched)
			tl->any_grey = true;
		else if (tl->s.stacks[stack].colour != STRIP_NO_COLOUR)
			tl->s.frames[tl->s.stacks[stack].colour].weight += w;
	}
	if (tl->ncells > 1)
		qsort(tl->cells, tl->ncells, sizeof *tl->cells, cmp_cells);
	ret = 0;
out:
	free(first);
	return ret;
}

/* Drawing. */

/* The marks of one column: cells [i, j) of one row and column. */
static void mark_column(struct tl *tl, size_t i, size_t j, struct tl_mark *m)
{
	int64_t w[NPARTS] = { 0 }, n[NPARTS] = { 0 }, best[NPARTS] = { 0 }, sum = 0, nsum = 0, cum = 0;
	size_t nf = tl->s.nframes;
	int bottom = 0;

	for (int k = 0; k < NPARTS; k++)
		m->colour[k] = STRIP_NO_COLOUR;
	tl->ntouched = 0;
	for (size_t c = i; c < j; c++) {
		const struct tl_cell *cell = &tl->cells[c];
		const struct strip_stack *st = &tl->s.stacks[cell->stack];
		int k = (st->off_cpu ? PART_OFF : PART_ON) + (st->matched ? 0 : PART_ON_GREY);
		w[k] += cell->weight;
		n[k] += cell->count;
		if (k >= PART_ON_GREY) {
			m->colour[k] = GREY_COLOUR;
			continue;
		}
		if (st->colour == STRIP_NO_COLOUR)
			continue;
		size_t a = (size_t)k * nf + st->colour;
		if (!tl->acc[a])
			tl->touched[tl->ntouched++] = (uint32_t)a;
		/* weights of 0 (a profile whose values are): the samples decide */
		tl->acc[a] += cell->weight > 0 ? cell->weight : 1;
	}
	for (size_t x = 0; x < tl->ntouched; x++) {
		uint32_t a = tl->touched[x], k = a / (uint32_t)nf, f = a % (uint32_t)nf;
		if (tl->acc[a] > best[k] || (tl->acc[a] == best[k] && f < m->colour[k])) {
			best[k] = tl->acc[a];
			m->colour[k] = f;
		}
		tl->acc[a] = 0;
	}
	for (int k = 0; k < NPARTS; k++) {
		sum += w[k];
		nsum += n[k];
	}
	/* each part as high as its share of the weight (of the samples when
	 * the weights are 0), the bounds rounded: the parts fill the row */
	for (int k = 0; k < NPARTS; k++) {
		int top;
		cum += sum > 0 ? w[k] : n[k];
		top = (int)lround((double)ROW * (double)cum / (double)(sum > 0 ? sum : nsum > 0 ? nsum : 1));
		m->h[k] = (uint8_t)(top - bottom);
		m->y[k] = (uint8_t)(ROW - top);
		bottom = top;
	}
	if (bottom == 0) { /* a cell of no weight and no count: shown as on-CPU */
		m->h[PART_ON] = ROW;
		m->y[PART_ON] = 0;
	}
}

/* The columns a row's marks are held over: from the distances between
 * its sampled columns, the usual one (the median); a gap up to twice that
 * is filled, and after the last sampled column, the usual distance less
 * one.  The script gets these (hold, usual, last) for its hover. */
static void hold_columns(struct tl_row *row, const bool *sampled)
{
	uint32_t count[STRIP_COLUMNS + 1] = { 0 }, ngaps = 0, prev = PV_NONE, seen = 0;

	row->last = PV_NONE;
	for (uint32_t c = 0; c < STRIP_COLUMNS; c++) {
		if (!sampled[c])
			continue;
		if (prev != PV_NONE) {
			count[c - prev]++;
			ngaps++;
		}
		prev = row->last = c;
	}
	row->usual = 1;
	for (uint32_t g = 1; g <= STRIP_COLUMNS && ngaps; g++) {
		seen += count[g];
		if (seen * 2 >= ngaps) {
			row->usual = g;
			break;
		}
	}
	row->hold = 2 * row->usual;
}

static bool same_part(const struct tl_mark *a, const struct tl_mark *b, int k)
{
	if (!a->h[k] || !b->h[k])
		return !a->h[k] && !b->h[k];
	return a->colour[k] == b->colour[k] && a->y[k] == b->y[k] && a->h[k] == b->h[k];
}

static uint32_t fill_of(const struct tl *tl, uint32_t colour)
{
	return colour == GREY_COLOUR ? FILL_GREY : colour == STRIP_NO_COLOUR ? FILL_NONE : tl->s.frames[colour].rgb;
}

/* Rectangles for part k of the row's columns, one per run of columns
 * drawn alike. */
static void put_runs(struct tl *tl, int k)
{
	const struct tl_mark *m = tl->marks;

	for (uint32_t c = 0; c < STRIP_COLUMNS;) {
		uint32_t e = c + 1;
		if (!m[c].h[k]) {
			c++;
			continue;
		}
		while (e < STRIP_COLUMNS && same_part(&m[c], &m[e], k))
			e++;
		fprintf(tl->s.out, "<rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" fill=\"#%06x\"/>\n",
			STRIP_LEFT + c, m[c].y[k], e - c, m[c].h[k], fill_of(tl, m[c].colour[k]));
		c = e;
	}
}

/* The name of a row's thread, "name", and in a run of several processes
 * the process, "name in pid 123 (make)" (not for a process's main thread:
 * its tid is the pid), into buf. */
static const char *thread_label(const struct pv_profile *p, uint32_t thread, char *buf, size_t n)
{
	const struct pv_thread *th;
	char pr[256];

	if (thread >= p->nthreads) {
		snprintf(buf, n, "[unknown thread]");
		return buf;
	}
	th = &p->threads[thread];
	if (th->process < p->nprocesses && p->processes[th->process].pid != th->tid)
		snprintf(buf, n, "%s in %s", pv_str(p, th->name),
			 pv_thread_process_name(p, thread, pr, sizeof pr));
	else
		snprintf(buf, n, "%s", pv_str(p, th->name));
	return buf;
}

/* A row's label: "TID name", the name cut to fit. */
static void put_label(struct tl *tl, const struct tl_row *row, double y)
{
	const struct pv_profile *p = tl->s.p;
	FILE *out = tl->s.out;

	if (row->more) {
		snprintf(tl->s.name, sizeof tl->s.name, "%zu more threads", tl->nmore);
	} else if (row->thread >= p->nthreads) {
		snprintf(tl->s.name, sizeof tl->s.name, "[unknown thread]");
	} else {
		const struct pv_thread *th = &p->threads[row->thread];
		char name[512];
		thread_label(p, row->thread, name, sizeof name);
		snprintf(tl->s.name, sizeof tl->s.name, "%" PRIu32 "%s%s", th->tid, name[0] ? " " : "", name);
	}
	strip_escaped(&tl->s, tl->s.name);
	fputs("<title>", out);
	pv_xml_put(out, tl->s.esc, SIZE_MAX, true);
	fprintf(out, "</title><text class=\"label\" x=\"6\" y=\"%.0f\">", y);
	pv_xml_put(out, tl->s.esc, LABEL_CHARS, true);
	fputs("</text>\n", out);
}

/* Every row: its label, its on-CPU marks, its off-CPU ones (hatched). */
static void put_rows(struct tl *tl)
{
	FILE *out = tl->s.out;
	bool sampled[STRIP_COLUMNS];
	size_t i = 0;

	fputs("<g id=\"rows\">\n", out);
	for (size_t r = 0; r < tl->nrows; r++) {
		struct tl_row *row = &tl->rows[r];
		double y = STRIP_TOP + (double)r * ROW_STEP;

		memset(tl->marks, 0, STRIP_COLUMNS * sizeof *tl->marks);
		memset(sampled, 0, sizeof sampled);
		while (i < tl->ncells && tl->cells[i].row == r) {
			size_t j = i;
			while (j < tl->ncells && tl->cells[j].row == r && tl->cells[j].col == tl->cells[i].col)
				j++;
			mark_column(tl, i, j, &tl->marks[tl->cells[i].col]);
			sampled[tl->cells[i].col] = true;
			i = j;
		}
		hold_columns(row, sampled);
		for (uint32_t c = 0, prev = PV_NONE; c < STRIP_COLUMNS; c++) {
			if (!sampled[c])
				continue;
			if (prev != PV_NONE && c - prev <= row->hold)
				for (uint32_t x = prev + 1; x < c; x++)
					tl->marks[x] = tl->marks[prev];
			prev = c;
		}
		for (uint32_t x = row->last + 1; row->last != PV_NONE && x < STRIP_COLUMNS && x - row->last < row->usual; x++)
			tl->marks[x] = tl->marks[row->last];
		if (row->more)
			fprintf(out, "<g class=\"row\" id=\"t-more\" transform=\"translate(0,%.0f)\">", y);
		else if (row->thread < tl->s.p->nthreads)
			fprintf(out, "<g class=\"row\" id=\"t%" PRIu32 "\" transform=\"translate(0,%.0f)\">",
				tl->s.p->threads[row->thread].tid, y);
		else
			fprintf(out, "<g class=\"row\" id=\"t-none\" transform=\"translate(0,%.0f)\">", y);
		put_label(tl, row, ROW - 5);
		fprintf(out, "<rect class=\"bg\" x=\"%d\" y=\"0\" width=\"%d\" height=\"%d\"/>\n", STRIP_LEFT, STRIP_COLUMNS, ROW);
		fputs("<g class=\"on\">\n", out);
		put_runs(tl, PART_ON);
		put_runs(tl, PART_ON_GREY);
		fputs("</g><g class=\"off\" mask=\"url(#hatched)\">\n", out);
		put_runs(tl, PART_OFF);
		put_runs(tl, PART_OFF_GREY);
		fputs("</g></g>\n", out);
	}
	fputs("</g>\n", out);
}

static int cmp_legend(const void *a, const void *b, void *ctx)
{
	const struct tl *tl = ctx;
	const struct strip_frame *x = &tl->s.frames[*(const uint32_t *)a], *y = &tl->s.frames[*(const uint32_t *)b];

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The legend: the colours of the functions that colour the most, then
 * what hatched and grey marks are.  Returns its height. */
static int put_legend(struct tl *tl, double y)
{
	FILE *out = tl->s.out;
	uint32_t *order = malloc((tl->s.nframes ? tl->s.nframes : 1) * sizeof *order);
	size_t n = 0, item = 0;
	size_t fit = (size_t)((STRIP_LEGEND_W - 24) / STRIP_CHAR_W);

	if (!order)
		return pv_oom();
	for (size_t f = 0; f < tl->s.nframes; f++)
		if (tl->s.frames[f].weight > 0)
			order[n++] = (uint32_t)f;
	qsort_r(order, n, sizeof *order, cmp_legend, tl);
	if (n > LEGEND_MAX)
		n = LEGEND_MAX;
	fputs("<g id=\"legend\">\n", out);
	for (; item < n + tl->any_off + tl->any_grey; item++) {
		double x = STRIP_LEFT + (double)(item % STRIP_LEGEND_COLS) * STRIP_LEGEND_W;
		double iy = y + (double)(item / STRIP_LEGEND_COLS) * STRIP_LEGEND_ROW;
		const char *what;

		if (item < n) {
			const struct strip_frame *f = &tl->s.frames[order[item]];
			fprintf(out, "<g class=\"item\"><rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\" fill=\"#%06x\"/>"
				"<text x=\"%.0f\" y=\"%.0f\">", x, iy, f->rgb, x + 20, iy + 10);
			pv_xml_put(out, f->name, fit, true);
			fputs("</text><title>", out);
			pv_xml_put(out, f->name, SIZE_MAX, true);
			fputs("</title></g>\n", out);
			continue;
		}
		if (item == n && tl->any_off) {
			what = "off-CPU: blocked or waiting, in the colour of where it waited";
			fprintf(out, "<g class=\"item off-key\"><g mask=\"url(#hatched)\"><rect x=\"%.0f\" y=\"%.0f\" "
				"width=\"14\" height=\"12\" fill=\"#606060\"/></g>", x, iy);
		} else {
			what = "no frame matches --highlight";
			fprintf(out, "<g class=\"item grey-key\"><rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\" "
				"fill=\"#%06x\"/>", x, iy, FILL_GREY);
		}
		fprintf(out, "<text x=\"%.0f\" y=\"%.0f\">%s</text></g>\n", x + 20, iy + 10, what);
	}
	fputs("</g>\n", out);
	free(order);
	return (int)((item + STRIP_LEGEND_COLS - 1) / STRIP_LEGEND_COLS) * STRIP_LEGEND_ROW;
}

static void put_head(struct tl *tl, double height)
{
	FILE *out = tl->s.out;
	const struct calltree *t = tl->s.t;
	const char *prog = pv_str(tl->s.p, tl->s.p->program);
	char d[32];

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" id=\"timeline\" width=\"%d\" "
		"height=\"%.0f\" viewBox=\"0 0 %d %.0f\">\n", STRIP_WIDTH, height, STRIP_WIDTH, height);
	fprintf(out, "<style>\n"
		"#timeline text { font-family: monospace; font-size: %dpx; fill: #000; }\n"
		"#timeline .title { font-size: 17px; font-weight: bold; }\n"
		"#timeline .bg { fill: #f0eee8; }\n"
		"#timeline .row rect, #legend rect { shape-rendering: crispEdges; }\n"
		"#axis line { stroke: #555; }\n"
		"#sel-box { fill: #3584e4; fill-opacity: 0.18; stroke: #1a5fb4; pointer-events: none; }\n"
		"#rows { cursor: crosshair; }\n"
		"#flame text { pointer-events: none; }\n"
		"#flame rect { stroke: #fff; stroke-width: 0.5; }\n"
		"#flame g:hover rect { stroke: #000; stroke-width: 1; }\n"
		"#flame g.hl rect { stroke: #000; stroke-width: 1.5; }\n"
		"#tip { pointer-events: none; }\n"
		"#tip rect { fill: #fffff0; stroke: #777; }\n"
		"</style>\n", STRIP_FONT);
	/* Off-CPU marks are seen through stripes: pale, hatched. */
	fputs("<defs><pattern id=\"stripes\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" "
	      "patternTransform=\"rotate(45)\"><rect width=\"5\" height=\"5\" fill=\"#5a5a5a\"/>"
	      "<rect width=\"2\" height=\"5\" fill=\"#fff\"/></pattern>"
	      "<mask id=\"hatched\" maskUnits=\"userSpaceOnUse\" x=\"-10\" y=\"-100000\" width=\"100000\" "
	      "height=\"200000\"><rect x=\"-10\" y=\"-100000\" width=\"100000\" height=\"200000\" "
	      "fill=\"url(#stripes)\"/></mask></defs>\n", out);
	fprintf(out, "<rect id=\"background\" x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#fbfaf7\"/>\n",
		STRIP_WIDTH, height);
	fprintf(out, "<text class=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">", STRIP_WIDTH / 2);
	pv_xml_put(out, strip_escaped(&tl->s, prog[0] ? prog : "profile"), SIZE_MAX, true);
	fprintf(out, " \u2014 timeline</text>\n<text x=\"%d\" y=\"40\" text-anchor=\"middle\">%" PRId64 " samples",
		STRIP_WIDTH / 2, t->samples);
	if (t->v_value != PV_NONE) {
		calltree_value_str(t, t->nodes[0].value, d, sizeof d);
		fprintf(out, ", %s %s", pv_value_label(calltree_weight_name(t)), d);
	}
	fprintf(out, ", %zu thread%s; ", tl->nrows, tl->nrows == 1 ? "" : "s");
	strip_put_view(&tl->s);
	if (tl->s.c->o->highlight_text) {
		fputs("; highlight=", out);
		pv_xml_put(out, strip_escaped(&tl->s, tl->s.c->o->highlight_text), SIZE_MAX, true);
	}
	fputs("</text>\n", out);
}

/* The data of the script.  Frames and stacks as lists, the cells per row
 * as flat lists of numbers. */
static void put_data(struct tl *tl, double flame_top)
{
	FILE *out = tl->s.out;
	const struct calltree *t = tl->s.t;
	bool weighed = t->v_value != PV_NONE;
	size_t i = 0;

	fprintf(out, "var TL = {\"a\":%" PRId64 ",\"l\":%" PRId64 ",\"n\":%d,\"x0\":%d,\"y0\":%d,\"step\":%d,"
		"\"row\":%d,\"w\":%d,\"ft\":%.0f,\"fr\":%d,\"cw\":%.2f,\"wc\":%d,\"time\":%s,\"value\":",
		tl->s.from, tl->s.len, STRIP_COLUMNS, STRIP_LEFT, STRIP_TOP, ROW_STEP, ROW, STRIP_WIDTH, flame_top, STRIP_FLAME_ROW, STRIP_CHAR_W,
		weighed ? 4 : 3, weighed && strcmp(pv_str(tl->s.p, tl->s.p->sample_types[t->v_value].unit),
						   "nanoseconds") == 0 ? "true" : "false");
	pv_json_put(out, pv_value_label(calltree_weight_name(t)));
	fprintf(out, ",\"byThread\":%s,\"hl\":%s,\n\"th\":[", tl->s.c->view && tl->s.c->view->by_thread ? "true" : "false",
		tl->s.c->o->highlight ? "true" : "false");
	for (size_t r = 0; r < tl->nrows; r++) {
		const struct tl_row *row = &tl->rows[r];
		bool known = row->thread < tl->s.p->nthreads;
		fprintf(out, "%s[%" PRIu32 ",", r ? "," : "", known ? tl->s.p->threads[row->thread].tid : 0);
		char name[512];
		if (row->more)
			snprintf(name, sizeof name, "%zu more threads", tl->nmore);
		else
			thread_label(tl->s.p, row->thread, name, sizeof name);
		pv_json_put(out, strip_escaped(&tl->s, name));
		fprintf(out, ",%u,%u,%d]", row->hold, row->usual, row->last == PV_NONE ? -1 : (int)row->last);
	}
	fputs("],\n", out);
	strip_put_frames(&tl->s);
	fputs(",\n\"c\":[", out);
	for (size_t r = 0; r < tl->nrows; r++) {
		bool first = true;
		fputs(r ? ",\n[" : "[", out);
		while (i < tl->ncells && tl->cells[i].row == r) {
			size_t j = i;
			while (j < tl->ncells && tl->cells[j].row == r && tl->cells[j].col == tl->cells[i].col)
				j++;
			fprintf(out, "%s%" PRIu32 ",%zu", first ? "" : ",", tl->cells[i].col, j - i);
			for (; i < j; i++) {
				const struct tl_cell *c = &tl->cells[i];
				fprintf(out, ",%" PRIu32 ",%" PRId64, c->stack, c->count);
				if (weighed)
					fprintf(out, ",%" PRId64, c->weight);
				fprintf(out, ",%.6g", c->sq);
			}
			first = false;
		}
		fputc(']', out);
	}
	fputs("]};\n", out);
}

static void put_tail(struct tl *tl, double sel_y, double flame_top, double height)
{
	FILE *out = tl->s.out;

	fprintf(out, "<rect id=\"sel-box\" x=\"%d\" y=\"%d\" width=\"0\" height=\"%.0f\" style=\"display: none\"/>\n",
		STRIP_LEFT, STRIP_TOP - 2, (double)tl->nrows * ROW_STEP + 4);
	fprintf(out, "<text id=\"selection\" x=\"10\" y=\"%.0f\">the whole timeline</text>\n", sel_y);
	fprintf(out, "<g id=\"flame\" transform=\"translate(0,0)\"></g>\n");
	fprintf(out, "<text id=\"details\" x=\"10\" y=\"%.0f\"></text>\n", height - 10);
	fputs("<g id=\"tip\" display=\"none\"><rect x=\"0\" y=\"0\" width=\"0\" height=\"0\" rx=\"3\"/><text></text></g>\n",
	      out);
	fputs("<script><![CDATA[\n", out);
	put_data(tl, flame_top);
	fputs(pv_script_spansel, out);
	fputs(pv_script_timeline, out);
	fputs("]]></script>\n</svg>\n", out);
}

int report_timeline(FILE *out, const struct pv_report_ctx *c)
{
	struct tl *tl;
	int ret = -1, legend_h;
	double axis_y, sel_y, flame_top, height;

	if (!(tl = calloc(1, sizeof *tl)))
		return pv_oom();
	if (strip_init(&tl->s, out, c) < 0) {
		free(tl);
		return -1;
	}
	if (gather(tl) < 0)
		goto out;
	tl->marks = malloc(STRIP_COLUMNS * sizeof *tl->marks);
	tl->acc = pv_budget_calloc((size_t)NPARTS * (tl->s.nframes ? tl->s.nframes : 1), sizeof *tl->acc);
	tl->touched = pv_budget_calloc((size_t)NPARTS * (tl->s.nframes ? tl->s.nframes : 1), sizeof *tl->touched);
	if (!tl->marks || !tl->acc || !tl->touched) {
		pv_oom();
		goto out;
	}

	axis_y = STRIP_TOP + (double)tl->nrows * ROW_STEP + 2;
	/* the legend's height, before it is written: as many items as it has */
	{
		size_t items = 0;
		for (size_t f = 0; f < tl->s.nframes && items < LEGEND_MAX; f++)
			items += tl->s.frames[f].weight > 0;
		items += tl->any_off + tl->any_grey;
		legend_h = (int)((items + STRIP_LEGEND_COLS - 1) / STRIP_LEGEND_COLS) * STRIP_LEGEND_ROW;
	}
	sel_y = axis_y + STRIP_AXIS + legend_h + 16;
	flame_top = sel_y + 10;
	height = flame_top + 2 * STRIP_FLAME_ROW + STRIP_BOTTOM;
	put_head(tl, height);
	if (!tl->nrows) {
		fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no samples</text>\n</svg>\n",
			STRIP_WIDTH / 2, STRIP_TOP + 14);
		ret = 0;
		goto out;
	}
	put_rows(tl);
	strip_put_axis(&tl->s, axis_y);
	if (put_legend(tl, axis_y + STRIP_AXIS) < 0)
		goto out;
	put_tail(tl, sel_y, flame_top, height);
	ret = 0;
out:
	tl_free(tl);
	return ret;
}
