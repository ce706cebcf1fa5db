/* report-timeline.c - the samples along the run, a row per thread, with
 * the flame graph of a span dragged across it (see report-timeline.h)
 *
 * The time axis is cut into TIMELINE_COLUMNS columns of a pixel.  Each
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

/* Hash tables: open addressing over the index + 1 of an array's
 * elements, which keep their own hash; doubled at half full. */

typedef uint64_t (*tl_hash_of)(const struct tl *tl, size_t i);

static uint64_t stack_hash(const struct tl *tl, size_t i) { return tl->stacks[i].hash; }
static uint64_t lkey_hash(const struct tl *tl, size_t i) { return tl->lkeys[i].hash; }
static uint64_t cell_hash(const struct tl *tl, size_t i) { return tl->cells[i].hash; }

/* Room for one more of n elements in the table; 0 or -1. */
static int table_room(struct tl *tl, uint32_t **slots, size_t *nslots, size_t n, tl_hash_of hash)
{
	size_t cap;
	uint32_t *s;

	if ((n + 1) * 2 <= *nslots)
		return 0;
	if (n >= UINT32_MAX - 1)
		return pv_oom();
	cap = *nslots ? *nslots * 2 : 1024;
	if (!(s = calloc(cap, sizeof *s)))
		return pv_oom();
	for (size_t i = 0; i < n; i++) {
		size_t j = hash(tl, i) & (cap - 1);
		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(*slots);
	*slots = s;
	*nslots = cap;
	return 0;
}

/* Names. */

/* The escaped name in tl->esc: valid UTF-8 without control characters. */
const char *tl_escaped(struct tl *tl, const char *s)
{
	return pv_escape(tl->esc, sizeof tl->esc, s);
}

/* A colour from the name, the same for the same name in every picture:
 * any hue, saturated enough to be told from the greys; a kernel frame's
 * darker than any other's, so the time in the kernel stands apart. */
static uint32_t colour_of(const char *name, bool kernel)
{
	uint32_t h = 2166136261u;
	double hue, s, l, c, x, m, r = 0, g = 0, b = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	/* names that differ in a letter get unrelated colours */
	h = (uint32_t)pv_mix64(h);
	hue = (double)(h % 360);
	s = 0.55 + (double)((h >> 9) % 30) / 100;
	l = (kernel ? 0.25 : 0.48) + (double)((h >> 17) % 16) / 100;
	c = (1 - fabs(2 * l - 1)) * s;
	x = c * (1 - fabs(fmod(hue / 60, 2) - 1));
	m = l - c / 2;
	switch ((int)(hue / 60)) {
	case 0: r = c; g = x; break;
	case 1: r = x; g = c; break;
	case 2: g = c; b = x; break;
	case 3: g = x; b = c; break;
	case 4: r = x; b = c; break;
	default: r = c; b = x; break;
	}
	return (uint32_t)lround((r + m) * 255) << 16 | (uint32_t)lround((g + m) * 255) << 8 |
	       (uint32_t)lround((b + m) * 255);
}

/* Frames and stacks. */

/* The timeline's frame of tree frame id, made when new; PV_NONE when out
 * of memory. */
static uint32_t frame_of(struct tl *tl, uint32_t id)
{
	struct tl_frame *f;

	if (id >= tl->cap_frame_map) {
		size_t old = tl->cap_frame_map;
		if (pv_grow(&tl->frame_map, &tl->cap_frame_map, (size_t)id + 1, sizeof *tl->frame_map) < 0)
			return PV_NONE;
		memset(tl->frame_map + old, 0, (tl->cap_frame_map - old) * sizeof *tl->frame_map);
	}
	if (tl->frame_map[id])
		return tl->frame_map[id] - 1;
	if (pv_grow(&tl->frames, &tl->cap_frames, tl->nframes + 1, sizeof *tl->frames) < 0)
		return PV_NONE;
	f = &tl->frames[tl->nframes];
	bool kernel = calltree_frame_is_kernel(tl->t, id);
	size_t at = kernel ? CT_KERNEL_MARK_LEN : 0;
	/* the name shown, a kernel frame's marked; --highlight sees it bare */
	memcpy(tl->name, CT_KERNEL_MARK, at);
	calltree_frame_name(tl->t, id, tl->name + at, sizeof tl->name - at);
	if (!tl->name[at])
		snprintf(tl->name + at, sizeof tl->name - at, "[unknown]");
	*f = (struct tl_frame){ .id = id,
				.matched = !tl->c->o->highlight ||
					   regexec(tl->c->o->highlight, tl->name + at, 0, NULL, 0) == 0 };
	if (!(f->name = strdup(tl_escaped(tl, tl->name)))) {
		pv_oom();
		return PV_NONE;
	}
	f->rgb = colour_of(f->name + at, kernel);
	tl->frame_map[id] = (uint32_t)tl->nframes + 1;
	return (uint32_t)tl->nframes++;
}

/* Is the leaf of sample s the frame a reader made up for an off-CPU
 * sample ("[off-cpu]", "[blocked]": no mapping, one line, a bracketed
 * name)?  Then it is coloured by the frame it waited in. */
static bool made_up_leaf(const struct pv_profile *p, const struct pv_sample *s)
{
	const struct pv_location *loc;

	if (!(s->flags & PV_SAMPLE_OFFCPU) || !s->nlocs)
		return false;
	loc = &p->locations[pv_sample_locs(p, s)[0]];
	return loc->mapping == PV_NONE && loc->nlines == 1 &&
	       pv_str(p, p->functions[pv_location_lines(p, loc)[0].function].name)[0] == '[';
}

/* The stack of sample s, made when new; PV_NONE when out of memory. */
uint32_t tl_stack_of(struct tl *tl, const struct pv_sample *s)
{
	bool off = s->flags & PV_SAMPLE_OFFCPU;
	uint64_t h = pv_mix64((uint64_t)s->loc_off << 32 ^ (uint64_t)s->nlocs << 1 ^ off);
	size_t mask, i;
	const uint32_t *fr;
	struct tl_stack st = { .off_cpu = off, .colour = NO_COLOUR };
	int n;

	if (table_room(tl, &tl->lkey_slots, &tl->nlkey_slots, tl->nlkeys, lkey_hash) < 0)
		return PV_NONE;
	mask = tl->nlkey_slots - 1;
	for (i = h & mask; tl->lkey_slots[i]; i = (i + 1) & mask) {
		const struct tl_lkey *k = &tl->lkeys[tl->lkey_slots[i] - 1];
		if (k->loc_off == s->loc_off && k->nlocs == s->nlocs && k->off_cpu == off)
			return k->stack;
	}
	if (pv_grow(&tl->lkeys, &tl->cap_lkeys, tl->nlkeys + 1, sizeof *tl->lkeys) < 0)
		return PV_NONE;
	tl->lkeys[tl->nlkeys] = (struct tl_lkey){ .loc_off = s->loc_off, .nlocs = s->nlocs,
						  .off_cpu = off, .hash = h, .stack = PV_NONE };
	tl->lkey_slots[i] = (uint32_t)tl->nlkeys + 1;
	struct tl_lkey *key = &tl->lkeys[tl->nlkeys++];

	/* Its frames, as the timeline's, at the end of sframes: kept if the
	 * stack is new. */
	if ((n = calltree_expand(tl->t, s, &fr)) < 0 ||
	    pv_grow(&tl->sframes, &tl->cap_sframes, tl->nsframes + (size_t)n + 1, sizeof *tl->sframes) < 0)
		return PV_NONE;
	st.off = (uint32_t)tl->nsframes;
	st.len = (uint32_t)n;
	st.hash = pv_mix64(off ? 0x6f6666 : 0x6f6e);
	for (int j = 0; j < n; j++) {
		uint32_t f = frame_of(tl, fr[j]);
		if (f == PV_NONE)
			return PV_NONE;
		tl->sframes[tl->nsframes + (size_t)j] = f;
		st.hash = pv_mix64(st.hash ^ f);
		st.matched |= tl->frames[f].matched;
	}
	if (n > 0)
		st.colour = tl->sframes[st.off + (uint32_t)n - 1];
	if (n > 1 && made_up_leaf(tl->p, s))
		st.colour = tl->sframes[st.off + (uint32_t)n - 2];

	if (table_room(tl, &tl->stack_slots, &tl->nstack_slots, tl->nstacks, stack_hash) < 0)
		return PV_NONE;
	mask = tl->nstack_slots - 1;
	for (i = st.hash & mask; tl->stack_slots[i]; i = (i + 1) & mask) {
		const struct tl_stack *o = &tl->stacks[tl->stack_slots[i] - 1];
		if (o->hash == st.hash && o->len == st.len && o->off_cpu == st.off_cpu &&
		    memcmp(tl->sframes + o->off, tl->sframes + st.off, st.len * sizeof *tl->sframes) == 0)
			return key->stack = tl->stack_slots[i] - 1;
	}
	if (pv_grow(&tl->stacks, &tl->cap_stacks, tl->nstacks + 1, sizeof *tl->stacks) < 0)
		return PV_NONE;
	tl->stacks[tl->nstacks] = st;
	tl->stack_slots[i] = (uint32_t)tl->nstacks + 1;
	tl->nsframes += st.len;
	return key->stack = (uint32_t)tl->nstacks++;
}

/* The column of time t (ns from the start): column c holds the times from
 * from + ceil(c * len / NCOL) on; the end of the axis is in the last. */
uint32_t tl_column_of(const struct tl *tl, int64_t t)
{
	__int128 c;

	if (t <= tl->from)
		return 0;
	c = (__int128)(t - tl->from) * NCOL / tl->len;
	return c >= NCOL ? NCOL - 1 : (uint32_t)c;
}

/* Add a sample to its cell.  0 or -1. */
static int add_sample(struct tl *tl, uint32_t row, uint32_t col, uint32_t stack, int64_t count,
		      int64_t weight, double sq)
{
	uint64_t h = pv_mix64((uint64_t)row << 40 ^ (uint64_t)col << 28 ^ stack ^ (uint64_t)stack << 52);
	size_t mask, i;

	if (table_room(tl, &tl->cell_slots, &tl->ncell_slots, tl->ncells, cell_hash) < 0)
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
	const struct pv_profile *p = tl->p;
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
		w[s->thread < p->nthreads ? s->thread : p->nthreads] += ct_sample_count(tl->t, s);
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
	const struct pv_profile *p = tl->p;
	const struct calltree *t = tl->t;
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
		uint32_t stack = tl_stack_of(tl, s);
		int64_t c = ct_sample_count(t, s), w = ct_sample_weight(t, s);
		double sq = pv_sample_var(s, t->v_value != PV_NONE ? t->v_value : t->v_count, t->v_count);

		if (stack == PV_NONE ||
		    add_sample(tl, tl->row_of[th], tl_column_of(tl, s->time_ns), stack, c, w, sq) < 0)
			goto out;
		if (tl->stacks[stack].off_cpu)
			tl->any_off = true;
		if (!tl->stacks[stack].matched)
			tl->any_grey = true;
		else if (tl->stacks[stack].colour != NO_COLOUR)
			tl->frames[tl->stacks[stack].colour].weight += w;
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
	size_t nf = tl->nframes;
	int bottom = 0;

	for (int k = 0; k < NPARTS; k++)
		m->colour[k] = NO_COLOUR;
	tl->ntouched = 0;
	for (size_t c = i; c < j; c++) {
		const struct tl_cell *cell = &tl->cells[c];
		const struct tl_stack *st = &tl->stacks[cell->stack];
		int k = (st->off_cpu ? PART_OFF : PART_ON) + (st->matched ? 0 : PART_ON_GREY);
		w[k] += cell->weight;
		n[k] += cell->count;
		if (k >= PART_ON_GREY) {
			m->colour[k] = GREY_COLOUR;
			continue;
		}
		if (st->colour == NO_COLOUR)
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
	uint32_t count[NCOL + 1] = { 0 }, ngaps = 0, prev = PV_NONE, seen = 0;

	row->last = PV_NONE;
	for (uint32_t c = 0; c < NCOL; c++) {
		if (!sampled[c])
			continue;
		if (prev != PV_NONE) {
			count[c - prev]++;
			ngaps++;
		}
		prev = row->last = c;
	}
	row->usual = 1;
	for (uint32_t g = 1; g <= NCOL && ngaps; g++) {
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
	return colour == GREY_COLOUR ? FILL_GREY : colour == NO_COLOUR ? FILL_NONE : tl->frames[colour].rgb;
}

/* Rectangles for part k of the row's columns, one per run of columns
 * drawn alike. */
static void put_runs(struct tl *tl, int k)
{
	const struct tl_mark *m = tl->marks;

	for (uint32_t c = 0; c < NCOL;) {
		uint32_t e = c + 1;
		if (!m[c].h[k]) {
			c++;
			continue;
		}
		while (e < NCOL && same_part(&m[c], &m[e], k))
			e++;
		fprintf(tl->out, "<rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" fill=\"#%06x\"/>\n",
			LEFT + c, m[c].y[k], e - c, m[c].h[k], fill_of(tl, m[c].colour[k]));
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
	const struct pv_profile *p = tl->p;
	FILE *out = tl->out;

	if (row->more) {
		snprintf(tl->name, sizeof tl->name, "%zu more threads", tl->nmore);
	} else if (row->thread >= p->nthreads) {
		snprintf(tl->name, sizeof tl->name, "[unknown thread]");
	} else {
		const struct pv_thread *th = &p->threads[row->thread];
		char name[512];
		thread_label(p, row->thread, name, sizeof name);
		snprintf(tl->name, sizeof tl->name, "%" PRIu32 "%s%s", th->tid, name[0] ? " " : "", name);
	}
	tl_escaped(tl, tl->name);
	fputs("<title>", out);
	pv_xml_put(out, tl->esc, SIZE_MAX, true);
	fprintf(out, "</title><text class=\"label\" x=\"6\" y=\"%.0f\">", y);
	pv_xml_put(out, tl->esc, LABEL_CHARS, true);
	fputs("</text>\n", out);
}

/* Every row: its label, its on-CPU marks, its off-CPU ones (hatched). */
static void put_rows(struct tl *tl)
{
	FILE *out = tl->out;
	bool sampled[NCOL];
	size_t i = 0;

	fputs("<g id=\"rows\">\n", out);
	for (size_t r = 0; r < tl->nrows; r++) {
		struct tl_row *row = &tl->rows[r];
		double y = ROWS_TOP + (double)r * ROW_STEP;

		memset(tl->marks, 0, NCOL * sizeof *tl->marks);
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
		for (uint32_t c = 0, prev = PV_NONE; c < NCOL; c++) {
			if (!sampled[c])
				continue;
			if (prev != PV_NONE && c - prev <= row->hold)
				for (uint32_t x = prev + 1; x < c; x++)
					tl->marks[x] = tl->marks[prev];
			prev = c;
		}
		for (uint32_t x = row->last + 1; row->last != PV_NONE && x < NCOL && x - row->last < row->usual; x++)
			tl->marks[x] = tl->marks[row->last];
		if (row->more)
			fprintf(out, "<g class=\"row\" id=\"t-more\" transform=\"translate(0,%.0f)\">", y);
		else if (row->thread < tl->p->nthreads)
			fprintf(out, "<g class=\"row\" id=\"t%" PRIu32 "\" transform=\"translate(0,%.0f)\">",
				tl->p->threads[row->thread].tid, y);
		else
			fprintf(out, "<g class=\"row\" id=\"t-none\" transform=\"translate(0,%.0f)\">", y);
		put_label(tl, row, ROW - 5);
		fprintf(out, "<rect class=\"bg\" x=\"%d\" y=\"0\" width=\"%d\" height=\"%d\"/>\n", LEFT, NCOL, ROW);
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

/* The time axis under the rows: ticks at 1, 2 or 5 times a power of ten
 * seconds, at least 90 px apart, labelled in seconds from the start. */
void tl_put_axis(struct tl *tl, double y)
{
	FILE *out = tl->out;
	double from = (double)tl->from / 1e9, len = (double)tl->len / 1e9;
	double min = len * 90 / NCOL, step = pow(10, floor(log10(min > 0 ? min : 1e-9)));
	int decimals;

	if (step < min)
		step *= step * 2 >= min ? 2 : step * 5 >= min ? 5 : 10;
	decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	fprintf(out, "<g id=\"axis\">\n<line x1=\"%d\" y1=\"%.0f\" x2=\"%d\" y2=\"%.0f\"/>\n", LEFT, y,
		LEFT + NCOL, y);
	for (double k = ceil(from / step - 1e-9);; k++) {
		double v = k == 0 ? 0 : k * step, x = LEFT + (v - from) / len * NCOL;
		if (x > LEFT + NCOL + 0.5)
			break;
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/>"
			"<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.*f</text>\n",
			x, y, x, y + 5, x, y + 17, decimals, v);
	}
	fprintf(out, "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">s from the start</text>\n</g>\n",
		LEFT - 24, y + 17);
}

static int cmp_legend(const void *a, const void *b, void *ctx)
{
	const struct tl *tl = ctx;
	const struct tl_frame *x = &tl->frames[*(const uint32_t *)a], *y = &tl->frames[*(const uint32_t *)b];

	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The legend: the colours of the functions that colour the most, then
 * what hatched and grey marks are.  Returns its height. */
static int put_legend(struct tl *tl, double y)
{
	FILE *out = tl->out;
	uint32_t *order = malloc((tl->nframes ? tl->nframes : 1) * sizeof *order);
	size_t n = 0, item = 0;
	size_t fit = (size_t)((LEGEND_W - 24) / CHAR_W);

	if (!order)
		return pv_oom();
	for (size_t f = 0; f < tl->nframes; f++)
		if (tl->frames[f].weight > 0)
			order[n++] = (uint32_t)f;
	qsort_r(order, n, sizeof *order, cmp_legend, tl);
	if (n > LEGEND_MAX)
		n = LEGEND_MAX;
	fputs("<g id=\"legend\">\n", out);
	for (; item < n + tl->any_off + tl->any_grey; item++) {
		double x = LEFT + (double)(item % LEGEND_COLS) * LEGEND_W;
		double iy = y + (double)(item / LEGEND_COLS) * LEGEND_ROW;
		const char *what;

		if (item < n) {
			const struct tl_frame *f = &tl->frames[order[item]];
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
	return (int)((item + LEGEND_COLS - 1) / LEGEND_COLS) * LEGEND_ROW;
}

static void put_head(struct tl *tl, double height)
{
	FILE *out = tl->out;
	const struct calltree *t = tl->t;
	const char *prog = pv_str(tl->p, tl->p->program);
	char d[32];

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" id=\"timeline\" width=\"%d\" "
		"height=\"%.0f\" viewBox=\"0 0 %d %.0f\">\n", WIDTH, height, WIDTH, height);
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
		"</style>\n", FONT);
	/* Off-CPU marks are seen through stripes: pale, hatched. */
	fputs("<defs><pattern id=\"stripes\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" "
	      "patternTransform=\"rotate(45)\"><rect width=\"5\" height=\"5\" fill=\"#5a5a5a\"/>"
	      "<rect width=\"2\" height=\"5\" fill=\"#fff\"/></pattern>"
	      "<mask id=\"hatched\" maskUnits=\"userSpaceOnUse\" x=\"-10\" y=\"-100000\" width=\"100000\" "
	      "height=\"200000\"><rect x=\"-10\" y=\"-100000\" width=\"100000\" height=\"200000\" "
	      "fill=\"url(#stripes)\"/></mask></defs>\n", out);
	fprintf(out, "<rect id=\"background\" x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#fbfaf7\"/>\n",
		WIDTH, height);
	fprintf(out, "<text class=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">", WIDTH / 2);
	pv_xml_put(out, tl_escaped(tl, prog[0] ? prog : "profile"), SIZE_MAX, true);
	fprintf(out, " \u2014 timeline</text>\n<text x=\"%d\" y=\"40\" text-anchor=\"middle\">%" PRId64 " samples",
		WIDTH / 2, t->samples);
	if (t->v_value != PV_NONE) {
		calltree_value_str(t, t->nodes[0].value, d, sizeof d);
		fprintf(out, ", %s %s", pv_value_label(calltree_weight_name(t)), d);
	}
	fprintf(out, ", %zu thread%s; ", tl->nrows, tl->nrows == 1 ? "" : "s");
	tl_put_view(tl);
	if (tl->c->o->highlight_text) {
		fputs("; highlight=", out);
		pv_xml_put(out, tl_escaped(tl, tl->c->o->highlight_text), SIZE_MAX, true);
	}
	fputs("</text>\n", out);
}

void tl_put_view(struct tl *tl)
{
	FILE *out = tl->out;
	char d[64];

	fputs("columns of ", out);
	if (tl->len >= NCOL * 1000)
		fputs(pv_format_duration(d, sizeof d, tl->len / NCOL), out);
	else
		fprintf(out, "%.3g us", (double)tl->len / NCOL / 1e3);
	if (tl->c->time_spans && tl->c->time_spans[0]) {
		fputs("; time ", out);
		pv_xml_put(out, tl_escaped(tl, tl->c->time_spans), SIZE_MAX, true);
	}
	if (tl->c->filters && tl->c->filters[0]) {
		fputs("; ", out);
		pv_xml_put(out, tl_escaped(tl, tl->c->filters), SIZE_MAX, true);
	}
}

/* The frames (names, colours, matched by --highlight) and the stacks
 * (frames, off-CPU) as the script's "f", "fc", "fm", "s" and "so". */
void tl_put_frames(struct tl *tl)
{
	FILE *out = tl->out;

	fputs("\"f\":[", out);
	for (size_t f = 0; f < tl->nframes; f++) {
		if (f)
			fputc(',', out);
		pv_json_put(out, tl->frames[f].name);
	}
	fputs("],\n\"fc\":\"", out);
	for (size_t f = 0; f < tl->nframes; f++)
		fprintf(out, "%06x", tl->frames[f].rgb);
	fputs("\",\n\"fm\":\"", out);
	for (size_t f = 0; f < tl->nframes; f++)
		fputc(tl->frames[f].matched ? '1' : '0', out);
	fputs("\",\n\"s\":[", out);
	for (size_t s = 0; s < tl->nstacks; s++) {
		const struct tl_stack *st = &tl->stacks[s];
		fputs(s ? ",[" : "[", out);
		for (uint32_t j = 0; j < st->len; j++)
			fprintf(out, "%s%" PRIu32, j ? "," : "", tl->sframes[st->off + j]);
		fputc(']', out);
	}
	fputs("],\n\"so\":\"", out);
	for (size_t s = 0; s < tl->nstacks; s++)
		fputc(tl->stacks[s].off_cpu ? '1' : '0', out);
	fputc('"', out);
}

/* The data of the script.  Frames and stacks as lists, the cells per row
 * as flat lists of numbers. */
static void put_data(struct tl *tl, double flame_top)
{
	FILE *out = tl->out;
	const struct calltree *t = tl->t;
	bool weighed = t->v_value != PV_NONE;
	size_t i = 0;

	fprintf(out, "var TL = {\"a\":%" PRId64 ",\"l\":%" PRId64 ",\"n\":%d,\"x0\":%d,\"y0\":%d,\"step\":%d,"
		"\"row\":%d,\"w\":%d,\"ft\":%.0f,\"fr\":%d,\"cw\":%.2f,\"wc\":%d,\"time\":%s,\"value\":",
		tl->from, tl->len, NCOL, LEFT, ROWS_TOP, ROW_STEP, ROW, WIDTH, flame_top, FLAME_ROW, CHAR_W,
		weighed ? 4 : 3, weighed && strcmp(pv_str(tl->p, tl->p->sample_types[t->v_value].unit),
						   "nanoseconds") == 0 ? "true" : "false");
	pv_json_put(out, pv_value_label(calltree_weight_name(t)));
	fprintf(out, ",\"byThread\":%s,\"hl\":%s,\n\"th\":[", tl->c->view && tl->c->view->by_thread ? "true" : "false",
		tl->c->o->highlight ? "true" : "false");
	for (size_t r = 0; r < tl->nrows; r++) {
		const struct tl_row *row = &tl->rows[r];
		bool known = row->thread < tl->p->nthreads;
		fprintf(out, "%s[%" PRIu32 ",", r ? "," : "", known ? tl->p->threads[row->thread].tid : 0);
		char name[512];
		if (row->more)
			snprintf(name, sizeof name, "%zu more threads", tl->nmore);
		else
			thread_label(tl->p, row->thread, name, sizeof name);
		pv_json_put(out, tl_escaped(tl, name));
		fprintf(out, ",%u,%u,%d]", row->hold, row->usual, row->last == PV_NONE ? -1 : (int)row->last);
	}
	fputs("],\n", out);
	tl_put_frames(tl);
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
	FILE *out = tl->out;

	fprintf(out, "<rect id=\"sel-box\" x=\"%d\" y=\"%d\" width=\"0\" height=\"%.0f\" style=\"display: none\"/>\n",
		LEFT, ROWS_TOP - 2, (double)tl->nrows * ROW_STEP + 4);
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

void tl_free(struct tl *tl)
{
	for (size_t f = 0; f < tl->nframes; f++)
		free(tl->frames[f].name);
	free(tl->frames);
	free(tl->frame_map);
	free(tl->stacks);
	free(tl->sframes);
	free(tl->stack_slots);
	free(tl->lkeys);
	free(tl->lkey_slots);
	free(tl->cells);
	free(tl->cell_slots);
	free(tl->rows);
	free(tl->row_of);
	free(tl->marks);
	free(tl->acc);
	free(tl->touched);
	free(tl);
}

int report_timeline(FILE *out, const struct pv_report_ctx *c)
{
	struct calltree *t = c->t;
	const struct pv_profile *p = t->p;
	struct tl *tl;
	int ret = -1, legend_h;
	double axis_y, sel_y, flame_top, height;

	if (!p->timed)
		return pv_error("--timeline: this profile does not say when its samples were taken "
				"(only collect-timer, collect-heap and collect-gdb traces do)");
	if (p->diff)
		return pv_error("--timeline shows one profile, not a comparison: leave out --diff-base");
	if (!(tl = calloc(1, sizeof *tl)))
		return pv_oom();
	tl->out = out;
	tl->t = t;
	tl->p = p;
	tl->c = c;
	if (c->span_to > c->span_from) {
		tl->from = c->span_from;
		tl->len = c->span_to - c->span_from;
	} else {
		tl->len = c->run_length;
	}
	if (tl->len <= 0)
		tl->len = 1;
	if (pv_profile_has_lifetimes(p)) {
		ret = heapline_write(tl);
		goto out;
	}
	if (gather(tl) < 0)
		goto out;
	tl->marks = malloc(NCOL * sizeof *tl->marks);
	tl->acc = pv_budget_calloc((size_t)NPARTS * (tl->nframes ? tl->nframes : 1), sizeof *tl->acc);
	tl->touched = pv_budget_calloc((size_t)NPARTS * (tl->nframes ? tl->nframes : 1), sizeof *tl->touched);
	if (!tl->marks || !tl->acc || !tl->touched) {
		pv_oom();
		goto out;
	}

	axis_y = ROWS_TOP + (double)tl->nrows * ROW_STEP + 2;
	/* the legend's height, before it is written: as many items as it has */
	{
		size_t items = 0;
		for (size_t f = 0; f < tl->nframes && items < LEGEND_MAX; f++)
			items += tl->frames[f].weight > 0;
		items += tl->any_off + tl->any_grey;
		legend_h = (int)((items + LEGEND_COLS - 1) / LEGEND_COLS) * LEGEND_ROW;
	}
	sel_y = axis_y + AXIS + legend_h + 16;
	flame_top = sel_y + 10;
	height = flame_top + 2 * FLAME_ROW + BOTTOM;
	put_head(tl, height);
	if (!tl->nrows) {
		fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">no samples</text>\n</svg>\n",
			WIDTH / 2, ROWS_TOP + 14);
		ret = 0;
		goto out;
	}
	put_rows(tl);
	tl_put_axis(tl, axis_y);
	if (put_legend(tl, axis_y + AXIS) < 0)
		goto out;
	put_tail(tl, sel_y, flame_top, height);
	ret = 0;
out:
	tl_free(tl);
	return ret;
}
