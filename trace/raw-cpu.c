/* raw-cpu.c - the CPU time each sample of a raw trace stands for (see
 * raw-cpu.h for the rules).  libc only. */
#include "raw-cpu.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum share { SHARE_RECORDED, SHARE_SCALED, SHARE_POOLED };

struct thread {
	uint32_t tid;
	bool exited;               /* an exit record came */
	bool has_base;
	uint64_t base_ns;          /* CPU time before profiling started */
	uint64_t exit_ns;          /* CPU clock at the end */
	uint64_t n;                /* samples */
	uint64_t sum_ns;           /* their recorded weights, saturating */
	/* decided by raw_cpu_settle */
	uint8_t share;             /* enum share */
	uint64_t cpu_ns;           /* CPU time while profiled */
	/* what raw_cpu_weight has handed out so far */
	uint64_t seen_ns, seen_n, given_ns;
};

struct raw_cpu {
	uint64_t short_ns;
	uint64_t period_ns;
	bool legacy;
	struct thread *threads;
	size_t n, cap;
	uint32_t *slots;           /* tid -> index + 1 of its latest thread */
	size_t nslots, used;
	/* the short threads, measured together */
	uint64_t pool_ns, pool_n, pool_k, pool_given;
	bool settled;
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

struct raw_cpu *raw_cpu_new(uint32_t short_thread_us, uint64_t period_ns)
{
	struct raw_cpu *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->short_ns = (uint64_t)short_thread_us * 1000;
	c->period_ns = period_ns;
	c->legacy = short_thread_us == 0;
	return c;
}

void raw_cpu_free(struct raw_cpu *c)
{
	if (!c)
		return;
	free(c->threads);
	free(c->slots);
	free(c);
}

static size_t slot_of(const struct raw_cpu *c, uint32_t tid)
{
	size_t mask = c->nslots - 1;
	size_t i = (tid * 0x9e3779b1u) & mask;

	while (c->slots[i] && c->threads[c->slots[i] - 1].tid != tid)
		i = (i + 1) & mask;
	return i;
}

static int grow_slots(struct raw_cpu *c)
{
	uint32_t *old = c->slots;
	size_t oldn = c->nslots, n = oldn ? oldn * 2 : 256;

	if ((c->used + 1) * 2 <= oldn)
		return 0;
	c->slots = calloc(n, sizeof *c->slots);
	if (!c->slots) {
		c->slots = old;
		return -1;
	}
	c->nslots = n;
	for (size_t i = 0; i < oldn; i++)
		if (old[i])
			c->slots[slot_of(c, c->threads[old[i] - 1].tid)] = old[i];
	free(old);
	return 0;
}

/* The latest thread with this id, or a new one when there is none or
 * (fresh) the latest has ended.  Returns its index or -1. */
static int64_t thread_of(struct raw_cpu *c, uint32_t tid, bool fresh)
{
	size_t s;

	if (c->nslots) {
		s = slot_of(c, tid);
		if (c->slots[s] && !(fresh && c->threads[c->slots[s] - 1].exited))
			return c->slots[s] - 1;
	}
	if (c->n >= UINT32_MAX - 1 || grow_slots(c) < 0)
		return -1;
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct thread *v = realloc(c->threads, cap * sizeof *v);
		if (!v)
			return -1;
		c->threads = v;
		c->cap = cap;
	}
	memset(&c->threads[c->n], 0, sizeof c->threads[c->n]);
	c->threads[c->n].tid = tid;
	s = slot_of(c, tid);
	if (!c->slots[s])
		c->used++;
	c->slots[s] = (uint32_t)(c->n + 1);
	return (int64_t)c->n++;
}

int raw_cpu_thread(struct raw_cpu *c, uint32_t tid, int has_base, uint64_t base_ns)
{
	int64_t i = thread_of(c, tid, true);

	if (i < 0)
		return -1;
	/* a later record of a running thread only renames it */
	if (has_base && !c->threads[i].has_base) {
		c->threads[i].has_base = true;
		c->threads[i].base_ns = base_ns;
	}
	return 0;
}

int raw_cpu_exit(struct raw_cpu *c, uint32_t tid, uint64_t cpu_ns)
{
	int64_t i = thread_of(c, tid, false);

	if (i < 0)
		return -1;
	c->threads[i].exited = true;
	c->threads[i].exit_ns = cpu_ns;
	return 0;
}

int64_t raw_cpu_sample(struct raw_cpu *c, uint32_t tid, uint64_t weight_ns)
{
	int64_t i = thread_of(c, tid, false);

	if (i < 0)
		return -1;
	c->threads[i].n++;
	c->threads[i].sum_ns = sat_add(c->threads[i].sum_ns, weight_ns);
	return i;
}

/* The CPU time from which a group of threads with no sample is improbable
 * when `groups` groups are tested: at one sample a period on average (the
 * engines sample at least that often, from a random phase), no sample in
 * T has probability at most exp(-T / period), which is below 10^-4 / groups
 * from T = period * ln(10^4 * groups) on.  The logarithm rounded up,
 * without libm: ln(10^4) < 9.2104, ln(2) < 0.6932. */
static uint64_t improbable_ns(const struct raw_cpu *c, uint64_t groups)
{
	double ln = 9.2104, ns;

	for (uint64_t k = 1; k < groups; k *= 2)
		ln += 0.6932;
	ns = (double)c->period_ns * ln;
	/* a damaged header's period: no time is long enough */
	return ns >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)ns;
}

/* Settles the time in no sample of the threads above the threshold with
 * none, and of the short ones together when none has one: unsampled when
 * that is improbable (improbable_ns), else brief. */
static void settle_unsampled(struct raw_cpu *c, struct raw_cpu_summary *s, uint64_t long_threads,
			     uint64_t short_unsampled)
{
	uint64_t groups = long_threads + (c->pool_ns > 0), bar = improbable_ns(c, groups);

	for (size_t i = 0; i < c->n; i++) {
		const struct thread *t = &c->threads[i];

		if (!t->exited || t->cpu_ns < c->short_ns || t->n > 0)
			continue;
		if (t->cpu_ns >= bar) {
			s->unsampled_threads++;
			s->unsampled_cpu_ns = sat_add(s->unsampled_cpu_ns, t->cpu_ns);
		} else {
			s->brief_threads++;
			s->brief_cpu_ns = sat_add(s->brief_cpu_ns, t->cpu_ns);
		}
	}
	if (c->pool_n > 0 || c->pool_ns == 0)
		return;
	if (c->pool_ns >= bar) {
		s->unsampled_threads += short_unsampled;
		s->unsampled_cpu_ns = sat_add(s->unsampled_cpu_ns, c->pool_ns);
	} else {
		s->brief_threads += short_unsampled;
		s->brief_cpu_ns = sat_add(s->brief_cpu_ns, c->pool_ns);
	}
}

void raw_cpu_settle(struct raw_cpu *c, struct raw_cpu_summary *s)
{
	uint64_t short_unsampled = 0, long_threads = 0;

	memset(s, 0, sizeof *s);
	s->legacy = c->legacy;
	s->threads = c->n;
	s->tids = c->used;
	c->pool_ns = c->pool_n = c->pool_k = c->pool_given = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct thread *t = &c->threads[i];

		t->share = SHARE_RECORDED;
		t->seen_ns = t->seen_n = t->given_ns = 0;
		if (!t->exited) {
			s->weight_ns = sat_add(s->weight_ns, t->sum_ns);
			continue;
		}
		s->measured_threads++;
		if (c->legacy) {
			/* recorded weights; what they miss is only reported */
			t->cpu_ns = t->exit_ns;
			s->cpu_ns = sat_add(s->cpu_ns, t->cpu_ns);
			s->weight_ns = sat_add(s->weight_ns, t->sum_ns);
			if (t->cpu_ns > t->sum_ns)
				s->unsampled_cpu_ns = sat_add(s->unsampled_cpu_ns, t->cpu_ns - t->sum_ns);
			if (t->n == 0 && t->cpu_ns > 0)
				s->unsampled_threads++;
			continue;
		}
		t->cpu_ns = t->has_base && t->base_ns <= t->exit_ns ? t->exit_ns - t->base_ns
			    : t->has_base ? 0 : t->exit_ns;
		s->cpu_ns = sat_add(s->cpu_ns, t->cpu_ns);
		if (t->cpu_ns < c->short_ns) {
			t->share = SHARE_POOLED;
			s->short_threads++;
			s->short_cpu_ns = sat_add(s->short_cpu_ns, t->cpu_ns);
			c->pool_ns = sat_add(c->pool_ns, t->cpu_ns);
			c->pool_n = sat_add(c->pool_n, t->n);
			if (t->cpu_ns > 0)
				short_unsampled++;
			continue;
		}
		long_threads++;
		if (t->n > 0) {
			t->share = SHARE_SCALED;
			s->weight_ns = sat_add(s->weight_ns, t->cpu_ns);
		}
	}
	if (c->pool_n > 0)
		s->weight_ns = sat_add(s->weight_ns, c->pool_ns);
	if (!c->legacy)
		settle_unsampled(c, s, long_threads, short_unsampled);
	c->settled = true;
}

/* floor(k * total / n), k <= n */
static uint64_t part(uint64_t k, uint64_t total, uint64_t n)
{
	if (k >= n)
		return total;
	return (uint64_t)((unsigned __int128)k * total / n);
}

uint64_t raw_cpu_weight(struct raw_cpu *c, int64_t handle, uint64_t weight_ns)
{
	struct thread *t;
	uint64_t upto, r;

	if (!c->settled || handle < 0 || (uint64_t)handle >= c->n)
		return weight_ns;
	t = &c->threads[handle];
	switch (t->share) {
	case SHARE_SCALED:
		t->seen_ns = sat_add(t->seen_ns, weight_ns);
		t->seen_n++;
		/* weights that overflowed or are all 0: share by count */
		if (t->sum_ns > 0 && t->sum_ns < UINT64_MAX)
			upto = part(t->seen_ns, t->cpu_ns, t->sum_ns);
		else
			upto = part(t->seen_n, t->cpu_ns, t->n);
		r = upto > t->given_ns ? upto - t->given_ns : 0;
		t->given_ns += r;
		return r;
	case SHARE_POOLED:
		if (c->pool_n == 0)
			return 0;
		c->pool_k++;
		upto = part(c->pool_k, c->pool_ns, c->pool_n);
		r = upto > c->pool_given ? upto - c->pool_given : 0;
		c->pool_given += r;
		return r;
	default:
		return weight_ns;
	}
}

void raw_cpu_thread_at(const struct raw_cpu *c, uint64_t i, uint32_t *tid, int64_t *cpu_ns)
{
	const struct thread *t = &c->threads[i];

	*tid = t->tid;
	*cpu_ns = t->exited && c->settled && t->cpu_ns <= INT64_MAX ? (int64_t)t->cpu_ns : -1;
}

int raw_cpu_unsampled_say(char *buf, size_t n, uint64_t unsampled_ns, uint64_t cpu_ns,
			  uint64_t unsampled_threads, uint64_t threads, uint64_t lost)
{
	char amount[32], used[32];

	if (cpu_ns == 0 || unsampled_ns == 0 || (double)unsampled_ns * 100 <= (double)cpu_ns)
		return 0;
	pv_format_duration(amount, sizeof amount, unsampled_ns > INT64_MAX ? INT64_MAX : (int64_t)unsampled_ns);
	pv_format_duration(used, sizeof used, cpu_ns > INT64_MAX ? INT64_MAX : (int64_t)cpu_ns);
	snprintf(buf, n,
		 "%s of the %s of CPU time the threads used (%.1f%%) is in no sample: %" PRIu64
		 " of %" PRIu64 " threads were never sampled (%sthey blocked the profiling signal, or "
		 "the timers missed them; see ACCURACY in collect-timer(1))",
		 amount, used, 100.0 * (double)unsampled_ns / (double)cpu_ns, unsampled_threads, threads,
		 lost ? "their samples were lost, or " : "");
	return 1;
}

const char *raw_lost_cause(uint32_t error)
{
	switch (error) {
	case 0:
		return NULL;
	case ENOSPC:
		return "the disk was full";
	case EDQUOT:
		return "the disk quota was reached";
	case EFBIG:
		return "it reached the file size limit (ulimit -f)";
	case EACCES:
	case EPERM:
		return "the program changed its user id and could not open it any more";
	case ESTALE:
	case ENOENT:
		return "the file was removed or replaced while it was written";
	case EXDEV:
		return "the program changed its root directory (chroot) and could not open it any more";
	case ENOMEM:
		return "no address space was left to map it";
	default:
		return strerror((int)error);
	}
}
