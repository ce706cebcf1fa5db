/* raw-unwind.c - the register samples of a raw trace (DWARF mode):
 * walked a batch at a time ahead of the sample pass, in threads, or
 * unwound one by one; and the unwind check of a RAW_UNWIND_CHECK trace
 * (see raw-read.c, raw-reader.h) */
#include "error.h"
#include "raw-reader.h"
#include "raw-unwind.h"
#include "raw-samples.h"
#include "raw-stacks.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A batch of register samples walked ahead of the sample pass. */
#define WALK_BATCH 4096
#define WALK_THREADS 8
#define WALK_MIN_SHARE 256     /* fewer samples a thread are walked in one */

struct walk_pool {
	uint64_t *v;
	size_t n, cap;
	int oom;
};

struct walk_result {
	uint32_t pool, n;          /* n 0: not walked, ask unwind */
	size_t off;
	bool complete;
};

struct walk_batch {
	const struct raw_unwinder *uw;
	const struct raw_sample_regs *recs[WALK_BATCH];
	struct walk_result res[WALK_BATCH];
	size_t n, next;            /* samples in the batch, the next one to take */
	struct walk_pool pools[WALK_THREADS];
	unsigned threads;
};

static void walk_share(struct walk_batch *b, unsigned k, size_t lo, size_t hi)
{
	struct walk_pool *pool = &b->pools[k];
	uint64_t frames[RAW_MAX_FRAMES];

	pool->n = 0;
	for (size_t i = lo; i < hi; i++) {
		const struct raw_sample_regs *s = b->recs[i];
		const uint64_t *regs = (const void *)(s + 1);
		const unsigned char *stack = (const unsigned char *)(regs + s->nregs);
		struct walk_result *res = &b->res[i];
		int n = pool->oom ? 0
				  : b->uw->walk(b->uw->ctx, regs, s->nregs, stack, s->stack_len, frames,
						RAW_MAX_FRAMES, &res->complete);

		res->n = 0;
		if (n <= 0)
			continue;
		if (pool->n + (size_t)n > pool->cap) {
			size_t cap = pool->cap ? pool->cap : 1 << 14;
			uint64_t *v;

			while (cap < pool->n + (size_t)n)
				cap *= 2;
			v = realloc(pool->v, cap * sizeof *v);
			if (!v) {
				pool->oom = 1; /* the rest go to unwind */
				continue;
			}
			pool->v = v;
			pool->cap = cap;
		}
		memcpy(pool->v + pool->n, frames, (size_t)n * sizeof *frames);
		*res = (struct walk_result){ k, (uint32_t)n, pool->n, res->complete };
		pool->n += (size_t)n;
	}
}

struct walk_job {
	struct walk_batch *b;
	unsigned k;
	size_t lo, hi;
};

static void *walk_thread(void *arg)
{
	struct walk_job *j = arg;

	walk_share(j->b, j->k, j->lo, j->hi);
	return NULL;
}

/* Fills the batch with the register samples from rec on (it: the walk
 * just past rec) and walks them, a fixed share a thread. */
static void walk_fill(struct reader *rd, const struct raw_iter *it, const struct raw_record *rec)
{
	struct walk_batch *b = rd->unw.batch;
	struct raw_iter ahead = *it;
	struct raw_record r;
	struct walk_job jobs[WALK_THREADS];
	pthread_t tids[WALK_THREADS];
	bool started[WALK_THREADS] = { false };
	unsigned threads;

	b->n = 0;
	b->next = 0;
	b->recs[b->n++] = (const void *)rec->data;
	while (b->n < WALK_BATCH && raw_iter_next(&ahead, &r) == RAW_NEXT_RECORD)
		if (r.type == RAW_SAMPLE_REGS)
			b->recs[b->n++] = (const void *)r.data;
	threads = (unsigned)((b->n + WALK_MIN_SHARE - 1) / WALK_MIN_SHARE);
	if (threads > b->threads)
		threads = b->threads;
	if (threads < 1)
		threads = 1;
	for (unsigned k = 0; k < threads; k++)
		jobs[k] = (struct walk_job){ b, k, b->n * k / threads, b->n * (k + 1) / threads };
	for (unsigned k = 1; k < threads; k++)
		started[k] = pthread_create(&tids[k], NULL, walk_thread, &jobs[k]) == 0;
	walk_share(b, 0, jobs[0].lo, jobs[0].hi);
	for (unsigned k = 1; k < threads; k++) {
		if (started[k])
			pthread_join(tids[k], NULL);
		else
			walk_share(b, k, jobs[k].lo, jobs[k].hi); /* no thread: here */
	}
}

/* The walked frames of the register sample s, the next one of the batch,
 * into rd->unw.unwound: how many, 0 when the walk could not do it. */
static int walk_take(struct reader *rd, const struct raw_iter *it, const struct raw_record *rec,
		     bool *complete)
{
	struct walk_batch *b = rd->unw.batch;
	const struct walk_result *res;

	if (b->next == b->n)
		walk_fill(rd, it, rec);
	res = &b->res[b->next++];
	if (res->n == 0)
		return 0;
	memcpy(rd->unw.unwound, b->pools[res->pool].v + res->off, (size_t)res->n * sizeof *rd->unw.unwound);
	*complete = res->complete;
	return (int)res->n;
}

/* A sample with registers and a stack copy: unwound by the analyzer's
 * unwinder (walked ahead when it can: walk_take), or, without one, its
 * program counter alone (truncated). */
/* The RAW_SAMPLE_PY record of the register sample s (it: the walk just
 * past s): the next record, or the one after its kernel record; NULL
 * when there is none or it does not hold together. */
static const struct raw_sample_py *py_record(const struct raw_sample_regs *s, const struct raw_iter *it)
{
	struct raw_iter ahead = *it;
	struct raw_record next;
	struct raw_sample_py y;
	const uint32_t *gend;

	if (raw_iter_next(&ahead, &next) != RAW_NEXT_RECORD)
		return NULL;
	if (next.type == RAW_SAMPLE_KERNEL && raw_iter_next(&ahead, &next) != RAW_NEXT_RECORD)
		return NULL;
	if (next.type != RAW_SAMPLE_PY)
		return NULL;
	memcpy(&y, next.data, sizeof y);
	if (y.tid != s->tid || y.time_ns != s->time_ns)
		return NULL;
	/* (raw-iter.c checked the counts against the size) */
	gend = (const uint32_t *)(next.data + sizeof y + (size_t)y.nwords * 8);
	for (uint32_t g = 0; g < y.ngroups; g++)
		if (gend[g] > y.nwords || (g > 0 && gend[g] < gend[g - 1]))
			return NULL;
	return (const void *)next.data;
}

int rd_regs_sample(struct reader *rd, const struct raw_sample_regs *s, const struct raw_iter *it,
		   const struct raw_record *rec, const struct raw_sample_kernel *k)
{
	const struct raw_sample_py *py = py_record(s, it);
	const uint64_t *regs = (const void *)(s + 1);
	const unsigned char *stack = (const unsigned char *)(regs + s->nregs);
	struct pv_sample ps = { 0 };
	bool complete = false, cand;
	int n = 0;

	if (rd->unw.batch)
		n = walk_take(rd, it, rec, &complete);
	if (rd->unw.uw && n == 0)
		n = rd->unw.uw->unwind(rd->unw.uw->ctx, regs, s->nregs, stack, s->stack_len, rd->unw.unwound,
				   RAW_MAX_FRAMES, &complete);
	if (n < 0)
		return -1;
	if (n == 0) {
		if (!rd->unw.uw)
			rd->unw.not_unwound++;
		rd->unw.unwound[0] = regs[RAW_REG_RIP];
		n = 1;
		complete = false;
	}
	rd->unw.check.pending = true;
	rd->unw.check.tid = s->tid;
	rd->unw.check.time_ns = s->time_ns;
	rd->unw.check.n = (uint32_t)n;
	rd->unw.check.complete = complete;
	if (py != NULL) {
		const uint64_t *words = (const void *)(py + 1);

		n = (int)raw_py_merge(rd->unw.unwound, (uint32_t)n, RAW_MAX_FRAMES, words, py->nwords,
				      (const uint32_t *)(words + py->nwords), py->ngroups, py->eval_lo,
				      py->eval_hi);
	}
	ps.loc_off = rd_store_frames(rd, (const unsigned char *)rd->unw.unwound, (uint32_t)n, &cand);
	if (ps.loc_off == UINT32_MAX)
		return -1;
	ps.nlocs = rd->nlocs;
	if (!complete)
		ps.flags |= PV_SAMPLE_TRUNCATED;
	return rd_add_sample(rd, &ps, s->tid, s->flags, s->weight_ns, s->time_ns, k);
}

/* Describes frames[0..n) in hex into buf (at most 12 of them). */
static void describe_frames(char *buf, size_t size, const uint64_t *frames, uint32_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < n && i < 12 && used < size; i++) {
		int w = snprintf(buf + used, size - used, "%s%" PRIx64, i ? " " : "", frames[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
	if (n > 12 && used < size)
		snprintf(buf + used, size - used, " ... (%u)", n);
}

/* The collector's frames for the register sample just read: do they agree
 * with the unwinding of its stack copy?  Where that unwinding stopped
 * short (the copy ends before the stack does) the collector's must start
 * with its frames; where the collector stopped at its frame limit, its
 * frames must start the other's. */
void rd_check_record(struct reader *rd, const struct raw_unwind_check *c)
{
	const uint64_t *frames = (const void *)(c + 1), *off = rd->unw.unwound;
	uint32_t n = c->nframes, on = rd->unw.check.n;
	bool agree;

	if (!rd->unw.check.pending || c->tid != rd->unw.check.tid || c->time_ns != rd->unw.check.time_ns) {
		rd->unw.check.unpaired++;
		return;
	}
	rd->unw.check.pending = false;
	rd->unw.check.samples++;
	if (c->result > RAW_CHECK_FAILED || (c->result == RAW_CHECK_FAILED &&
					     (c->reason == 0 || c->reason > RAW_CHECK_NOT_TRIED))) {
		rd->unw.check.failed[0]++; /* a result or reason this reader does not know */
		return;
	}
	if (c->result == RAW_CHECK_FAILED) {
		rd->unw.check.failed[c->reason]++;
		return;
	}
	if (c->result == RAW_CHECK_COMPLETE && rd->unw.check.complete)
		agree = n == on && memcmp(frames, off, (size_t)n * 8) == 0;
	else if (!rd->unw.check.complete)
		agree = on <= n && memcmp(frames, off, (size_t)on * 8) == 0;
	else
		agree = n <= on && memcmp(frames, off, (size_t)n * 8) == 0;
	if (agree) {
		rd->unw.check.agree++;
		return;
	}
	if (rd->unw.check.differ < 3) {
		char a[200], b[200];

		describe_frames(a, sizeof a, frames, n);
		describe_frames(b, sizeof b, off, on);
		snprintf(rd->unw.check.first[rd->unw.check.differ], sizeof rd->unw.check.first[0],
			 "thread %u at %" PRIu64 " ns: collector [%s]%s, stack copy [%s]%s", c->tid,
			 c->time_ns, a, c->result == RAW_CHECK_COMPLETE ? "" : " (cut)", b,
			 rd->unw.check.complete ? "" : " (cut)");
	}
	rd->unw.check.differ++;
}

/* The check's verdict, one line, and the first differences. */
static void check_report(struct reader *rd)
{
	const uint64_t *f = rd->unw.check.failed;

	if (rd->unw.check.samples == 0 && rd->unw.check.unpaired == 0)
		return;
	pv_warn("%s: unwind check: %" PRIu64 " samples: %" PRIu64 " agree with the stack copy, %" PRIu64
		" differ, %" PRIu64 " not unwound in the collector (no object %" PRIu64 ", no CFI %" PRIu64
		", rule %" PRIu64 ", stack %" PRIu64 ", stack unknown %" PRIu64 ", other %" PRIu64
		"), %" PRIu64 " unpaired",
		rd->who, rd->unw.check.samples, rd->unw.check.agree, rd->unw.check.differ,
		rd->unw.check.samples - rd->unw.check.agree - rd->unw.check.differ, f[RAW_CHECK_NO_OBJECT],
		f[RAW_CHECK_NO_ROW], f[RAW_CHECK_RULE], f[RAW_CHECK_STACK], f[RAW_CHECK_NOT_TRIED], f[0],
		rd->unw.check.unpaired);
	for (uint64_t i = 0; i < rd->unw.check.differ && i < 3; i++)
		pv_warn("%s: unwind check: %s", rd->who, rd->unw.check.first[i]);
}

void rd_unwind_report(struct reader *rd)
{
	check_report(rd);
	if (rd->unw.not_unwound)
		pv_warn("%s: %" PRIu64 " samples need DWARF unwinding, which this reader cannot do; only their leaf is shown",
			rd->who, rd->unw.not_unwound);
}

int rd_batch_new(struct reader *rd)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (!rd->unw.uw || !rd->unw.uw->walk)
		return 0;
	rd->unw.batch = calloc(1, sizeof *rd->unw.batch);
	if (!rd->unw.batch)
		return pv_oom();
	rd->unw.batch->uw = rd->unw.uw;
	rd->unw.batch->threads = cpus < 1 ? 1 : cpus > WALK_THREADS ? WALK_THREADS : (unsigned)cpus;
	return 0;
}

static void rd_batch_free(struct walk_batch *b)
{
	if (!b)
		return;
	for (unsigned k = 0; k < WALK_THREADS; k++)
		free(b->pools[k].v);
	free(b);
}

int rd_unwind_init(struct rd_unwind *u)
{
	u->unwound = malloc(RAW_MAX_FRAMES * sizeof *u->unwound);
	return u->unwound ? 0 : -1;
}

void rd_unwind_free(struct rd_unwind *u)
{
	free(u->unwound);
	rd_batch_free(u->batch);
}
