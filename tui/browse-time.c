/* browse-time.c - when the samples were taken: the time strip, the time
 * cursor and the span of the run the tree is of (see browse.h) */
#include "browse.h"

#include "error.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool browse_untimed(struct browse *b)
{
	if (b->orig->timed)
		return false;
	snprintf(b->status, sizeof b->status, "this profile has no sample times");
	return true;
}

/* The run's length as the pipeline takes it (its spans' percentages and
 * open ends): the profile's duration, or its last sample's time; kept in
 * the strip, at least 1 ns. */
static int64_t run_len(struct browse *b)
{
	int64_t end;

	if (b->strip.len > 0)
		return b->strip.len;
	end = pv_run_length(b->orig);
	b->strip.len = end > 0 ? end : 1;
	return b->strip.len;
}

/* The column of time t among n over a run of len ns: column c holds
 * [ceil(len c / n), ceil(len (c + 1) / n)). */
static size_t column_of(int64_t t, int64_t len, size_t n)
{
	size_t c;

	if (t <= 0 || n == 0)
		return 0;
	c = (size_t)((unsigned __int128)t * n / (uint64_t)len);
	return c < n ? c : n - 1;
}

static int64_t column_start(size_t c, int64_t len, size_t n)
{
	if (c >= n)
		return len;
	return (int64_t)(((unsigned __int128)len * c + n - 1) / n);
}

void browse_time_column(const struct browse *b, size_t col, int64_t *from, int64_t *to)
{
	size_t n = b->strip.ncols;

	*from = column_start(col, b->strip.len, n);
	*to = column_start(col + 1, b->strip.len, n);
}

size_t browse_time_cursor(const struct browse *b)
{
	return column_of(b->time_at, b->strip.len, b->strip.ncols);
}

/* ---- the strip --------------------------------------------------------- */

static void strip_free(struct browse_strip *s)
{
	for (size_t i = 0; i < s->nrows; i++) {
		free(s->rows[i].on);
		free(s->rows[i].off);
	}
	free(s->rows);
	s->rows = NULL;
	s->nrows = 0;
	s->ncols = s->maxrows = 0;
	s->max = 0;
	s->offcpu = false;
}

void browse_time_free(struct browse *b)
{
	strip_free(&b->strip);
}

/* The heaviest first, then by thread index. */
static int cmp_heavier(const void *x, const void *y, void *ctx)
{
	const int64_t *n = ctx;
	uint32_t a = *(const uint32_t *)x, c = *(const uint32_t *)y;

	if (n[a] != n[c])
		return n[a] > n[c] ? -1 : 1;
	return a < c ? -1 : a > c;
}

static int cmp_index(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, c = *(const uint32_t *)y;

	return a < c ? -1 : a > c;
}

int browse_time_strip(struct browse *b, size_t ncols, size_t maxrows)
{
	const struct pv_profile *p = b->orig;
	struct browse_strip *s = &b->strip;
	uint32_t vi = pv_find_value_type(p, "samples");
	size_t nt = p->nthreads + 1; /* the last: samples of no thread */
	int64_t *per = NULL;
	uint32_t *order = NULL, *row_of = NULL;
	size_t nused = 0, nrows;
	int64_t len;
	int ret = -1;

	if (browse_untimed(b))
		return 0;
	if (ncols == 0 || maxrows == 0)
		return 0;
	if (s->ncols == ncols && s->maxrows == maxrows)
		return 0;
	len = run_len(b);
	strip_free(s);
	per = calloc(nt, sizeof *per);
	order = malloc(nt * sizeof *order);
	row_of = malloc(nt * sizeof *row_of);
	if (!per || !order || !row_of) {
		pv_oom();
		goto out;
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pv_sample *sm = &p->samples[i];
		per[sm->thread < p->nthreads ? sm->thread : p->nthreads] += vi != PV_NONE ? sm->values[vi] : 1;
	}
	for (uint32_t k = 0; k < nt; k++)
		if (per[k] > 0)
			order[nused++] = k;
	/* the heaviest threads, shown in the order of the profile's (the
	 * first thread is the first row); the others in one row, the last */
	qsort_r(order, nused, sizeof *order, cmp_heavier, per);
	nrows = nused <= maxrows ? nused : maxrows;
	qsort(order, nused > maxrows ? maxrows - 1 : nrows, sizeof *order, cmp_index);
	if (!(s->rows = calloc(nrows + 1, sizeof *s->rows))) {
		pv_oom();
		goto out;
	}
	s->nrows = nrows;
	for (size_t r = 0; r < nrows; r++) {
		struct browse_strip_row *row = &s->rows[r];
		if (!(row->on = calloc(ncols, sizeof *row->on)) || !(row->off = calloc(ncols, sizeof *row->off))) {
			pv_oom();
			goto out;
		}
	}
	for (size_t j = 0; j < nt; j++)
		row_of[j] = PV_NONE;
	for (size_t j = 0; j < nused; j++) {
		size_t r = j < nrows ? j : nrows - 1;
		uint32_t k = order[j];
		struct browse_strip_row *row = &s->rows[r];
		row_of[k] = (uint32_t)r;
		row->samples += per[k];
		row->nthreads++;
		if (row->nthreads > 1 || k == p->nthreads) {
			row->tid = 0;
			row->name = 0;
			row->thread = PV_NONE;
		} else {
			row->tid = p->threads[k].tid;
			row->name = p->threads[k].name;
			row->thread = k;
		}
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pv_sample *sm = &p->samples[i];
		uint32_t r = row_of[sm->thread < p->nthreads ? sm->thread : p->nthreads];
		int64_t n = vi != PV_NONE ? sm->values[vi] : 1;
		size_t c = column_of(sm->time_ns, len, ncols);
		uint32_t *cell;
		if (r == PV_NONE || n <= 0)
			continue;
		cell = sm->flags & PV_SAMPLE_OFFCPU ? &s->rows[r].off[c] : &s->rows[r].on[c];
		*cell = n >= UINT32_MAX - *cell ? UINT32_MAX : *cell + (uint32_t)n;
		s->offcpu |= (sm->flags & PV_SAMPLE_OFFCPU) != 0;
	}
	for (size_t r = 0; r < nrows; r++)
		for (size_t c = 0; c < ncols; c++) {
			uint64_t both = (uint64_t)s->rows[r].on[c] + s->rows[r].off[c];
			if (both > s->max)
				s->max = both > UINT32_MAX ? UINT32_MAX : (uint32_t)both;
		}
	s->ncols = ncols;
	s->maxrows = maxrows;
	ret = 0;
out:
	if (ret < 0)
		strip_free(s);
	free(per);
	free(order);
	free(row_of);
	return ret;
}

void browse_time_move(struct browse *b, long delta)
{
	size_t n = b->strip.ncols, c;

	if (browse_untimed(b) || n == 0)
		return;
	c = browse_time_cursor(b);
	if (delta < 0)
		c = (size_t)-delta > c ? 0 : c - (size_t)-delta;
	else
		c = (size_t)delta >= n - c ? n - 1 : c + (size_t)delta;
	b->time_at = column_start(c, b->strip.len, n);
}

/* ---- the span ---------------------------------------------------------- */

/* The last span chosen here, or NULL: the command line's is in force. */
static const struct browse_action *chosen(const struct browse *b)
{
	for (size_t i = b->nacts; i-- > 0;)
		if (b->acts[i].kind == BROWSE_TIME)
			return &b->acts[i];
	return NULL;
}

size_t browse_time_spans(struct browse *b, int64_t (*ends)[2], size_t max)
{
	const struct browse_action *a = chosen(b);
	int64_t len;
	size_t n = 0;

	if (a) {
		if (a->from < 0)
			return 0;
		if (max > 0) {
			ends[0][0] = a->from;
			ends[0][1] = a->to;
		}
		return 1;
	}
	if (!b->base.nspans)
		return 0;
	len = run_len(b);
	for (size_t k = 0; k < b->base.nspans; k++, n++) {
		if (n < max)
			pv_span_resolve(&b->base.spans[k], len, &ends[n][0], &ends[n][1]);
	}
	return n;
}

/* The spans of the view in force (pipeline.h): the command line's, or
 * the one chosen here in *one; *n of them. */
const struct pv_span *browse_time_view(const struct browse *b, struct pv_span *one, size_t *n)
{
	const struct browse_action *a = chosen(b);

	if (!a) {
		*n = b->base.nspans;
		return b->base.spans;
	}
	/* in seconds, half a nanosecond over: the pipeline's nanoseconds,
	 * truncated, are the action's */
	*n = a->from >= 0;
	*one = (struct pv_span){ .from = ((double)a->from + 0.5) / 1e9, .to = ((double)a->to + 0.5) / 1e9,
				 .has_from = a->from > 0, .has_to = a->to != INT64_MAX };
	return one;
}
