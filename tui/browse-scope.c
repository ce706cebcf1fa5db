/* browse-scope.c - what the view is of: which threads (the thread picker)
 * and which span of the run (the time marks); each a change of the view,
 * the tree built again (see browse.h) */
#include "browse.h"

#include "error.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- the threads ------------------------------------------------------- */

static int cmp_threads(const void *x, const void *y)
{
	const struct browse_thread *a = x, *c = y;

	if (a->tid == BROWSE_ALL_THREADS || c->tid == BROWSE_ALL_THREADS)
		return a->tid == BROWSE_ALL_THREADS ? -1 : c->tid == BROWSE_ALL_THREADS;
	if (a->tid == BROWSE_CMD_THREADS || c->tid == BROWSE_CMD_THREADS)
		return a->tid == BROWSE_CMD_THREADS ? -1 : c->tid == BROWSE_CMD_THREADS;
	if (a->value != c->value)
		return a->value > c->value ? -1 : 1;
	if (a->count != c->count)
		return a->count > c->count ? -1 : 1;
	return a->tid < c->tid ? -1 : a->tid > c->tid;
}

int browse_list_threads(struct browse *b)
{
	const struct pv_profile *p = b->orig;
	struct browse_thread *rows = calloc(p->nthreads + 2, sizeof *rows);
	int64_t *count_of = calloc(2 * (p->nthreads + 1), sizeof *count_of), *value_of;
	size_t n = 1;

	if (!rows || !count_of) {
		free(rows);
		free(count_of);
		return pv_oom();
	}
	value_of = count_of + p->nthreads + 1;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pv_sample *sm = &p->samples[i];
		size_t k = sm->thread < p->nthreads ? sm->thread : p->nthreads;
		count_of[k] += ct_sample_count(b->t, sm);
		value_of[k] += ct_sample_weight(b->t, sm);
	}
	rows[0] = (struct browse_thread){ .tid = BROWSE_ALL_THREADS, .cpu_ns = -1 };
	for (size_t k = 0; k <= p->nthreads; k++) {
		rows[0].count += count_of[k];
		rows[0].value += value_of[k];
	}
	if (b->ncmd_tids > 1) {
		rows[n] = (struct browse_thread){ .tid = BROWSE_CMD_THREADS, .cpu_ns = -1 };
		for (size_t k = 0; k < p->nthreads; k++)
			for (size_t j = 0; j < b->ncmd_tids; j++)
				if (p->threads[k].tid == b->cmd_tids[j]) {
					rows[n].count += count_of[k];
					rows[n].value += value_of[k];
				}
		n++;
	}
	for (size_t k = 0; k < p->nthreads; k++) {
		if (p->threads[k].tid == 0 || p->threads[k].tid == BROWSE_CMD_THREADS)
			continue; /* no id to select it by */
		rows[n++] = (struct browse_thread){ p->threads[k].tid, p->threads[k].name, count_of[k], value_of[k],
						    p->threads[k].cpu_ns, (uint32_t)k };
	}
	free(count_of);
	qsort(rows, n, sizeof *rows, cmp_threads);
	free(b->threads);
	b->threads = rows;
	b->nthreads = n;
	b->tcursor = b->ttop = 0;
	for (size_t i = 0; i < n; i++)
		if (b->on_cmd_tids ? rows[i].tid == BROWSE_CMD_THREADS : rows[i].tid == b->tid)
			b->tcursor = i;
	return 0;
}

int browse_pick_thread(struct browse *b, size_t i)
{
	uint32_t tid;

	if (i >= b->nthreads)
		return 0;
	tid = b->threads[i].tid;
	if (tid == BROWSE_CMD_THREADS) {
		if (b->on_cmd_tids)
			return 0;
		b->on_cmd_tids = true;
		b->tid = 0;
	} else {
		if (!b->on_cmd_tids && tid == b->tid)
			return 0;
		b->on_cmd_tids = false;
		b->tid = tid;
	}
	browse_drop_zooms(b);
	return browse_rebuild(b);
}

const char *browse_threads_shown(const struct browse *b, char *buf, size_t n)
{
	if (b->on_cmd_tids) {
		size_t len = (size_t)snprintf(buf, n, "threads ");
		for (size_t i = 0; i < b->ncmd_tids && len + 16 < n; i++)
			len += (size_t)snprintf(buf + len, n - len, "%s%" PRIu32, i ? "," : "", b->cmd_tids[i]);
	} else if (b->tid) {
		const char *tname = "";
		for (size_t i = 0; i < b->orig->nthreads; i++)
			if (b->orig->threads[i].tid == b->tid)
				tname = pv_str(b->orig, b->orig->threads[i].name);
		if (*tname)
			snprintf(buf, n, "thread %" PRIu32 " \"%s\"", b->tid, tname);
		else
			snprintf(buf, n, "thread %" PRIu32, b->tid);
	} else {
		snprintf(buf, n, "all threads");
	}
	return buf;
}

/* ---- the span of the run ----------------------------------------------- */

/* Put span [from, to) (from < 0: none) in force: an action, the tree
 * built again; said on the status line with the samples it holds. */
static int set_span(struct browse *b, int64_t from, int64_t to)
{
	struct browse_action *a;

	if (pv_grow(&b->acts, &b->cap_acts, b->nacts + 1, sizeof *b->acts) < 0)
		return -1;
	a = &b->acts[b->nacts++];
	*a = (struct browse_action){ .kind = BROWSE_TIME, .node = PV_NONE, .from = from, .to = to };
	if (browse_rebuild(b) < 0) {
		/* take it back, and leave the message on the status line */
		char said[sizeof b->status];
		snprintf(said, sizeof said, "%s", b->status);
		b->nacts--;
		if (browse_rebuild(b) < 0)
			return -1;
		snprintf(b->status, sizeof b->status, "%s", said);
		return 0;
	}
	if (b->res.spans[0])
		snprintf(b->status, sizeof b->status, "time: %s; %" PRId64 " samples", b->res.spans,
			 b->res.in_spans);
	else
		snprintf(b->status, sizeof b->status, "time: the whole run; %" PRId64 " samples", b->res.before);
	return 0;
}

int browse_time_mark(struct browse *b, bool end)
{
	int64_t ends[16][2], from = 0, to = INT64_MAX, c0, c1;
	size_t n;

	if (browse_untimed(b))
		return 0;
	if (b->strip.ncols == 0) {
		snprintf(b->status, sizeof b->status, "no time strip: w shows it");
		return 0;
	}
	/* the span in force, as one from its first start to its last end */
	n = browse_time_spans(b, ends, sizeof ends / sizeof *ends);
	if (n > sizeof ends / sizeof *ends)
		n = sizeof ends / sizeof *ends;
	for (size_t k = 0; k < n; k++) {
		if (k == 0 || ends[k][0] < from)
			from = ends[k][0];
		if (k == 0 || ends[k][1] > to)
			to = ends[k][1];
	}
	browse_time_column(b, browse_time_cursor(b), &c0, &c1);
	if (c1 >= b->strip.len)
		c1 = INT64_MAX; /* the last column: up to the end, its last sample too */
	if (!end) {
		from = c0;
		if (to <= from)
			to = INT64_MAX;
	} else {
		to = c1;
		if (from >= to)
			from = 0;
	}
	return set_span(b, from, to);
}

int browse_time_clear(struct browse *b)
{
	int64_t ends[1][2];

	if (browse_untimed(b))
		return 0;
	if (browse_time_spans(b, ends, 1) == 0) {
		snprintf(b->status, sizeof b->status, "time: the whole run already");
		return 0;
	}
	return set_span(b, -1, -1);
}
