/* raw-heap.c - collect-heap's records (sampled blocks, their frees) into profile samples */
#include "raw-heap.h"
#include "raw-reader.h"
#include "raw-samples.h"
#include "raw-stacks.h"
#include "raw.h"
#include "error.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The value types, in the order raw_heap_new adds them. */
enum {
	V_SAMPLES, V_ALLOC_SAMPLES, V_PEAK_SAMPLES, V_ALLOC_OBJECTS, V_ALLOC_SPACE,
	V_INUSE_OBJECTS, V_INUSE_SPACE, V_PEAK_OBJECTS, V_PEAK_SPACE, V_N
};

_Static_assert(V_N <= PV_MAX_VALUES, "the heap's values fit a sample");

struct block {
	size_t sample;      /* its index in the profile */
	uint64_t alloc_at;  /* the event of its allocation, and of its free */
	uint64_t free_at;   /* (UINT64_MAX: never freed) */
};

struct raw_heap {
	struct pv_profile *p;
	double rate;
	struct block *blocks;
	size_t nblocks, cap_blocks;
	/* live blocks by address: open addressing, index + 1 (0 empty,
	 * SIZE_MAX a removed one) */
	uint64_t *keys;
	size_t *vals;
	size_t nslots, nused, nremoved;
	uint64_t events;
	double live, peak;      /* estimated bytes allocated, now and at most */
	uint64_t peak_at;       /* the last event of the peak */
	int64_t peak_ns;
};

static const char *const names[V_N][2] = {
	{ "samples", "count" }, { "alloc_samples", "count" }, { "peak_samples", "count" },
	{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
	{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	{ "peak_objects", "count" }, { "peak_space", "bytes" },
};

struct raw_heap *raw_heap_new(struct pv_profile *p, uint64_t rate)
{
	struct raw_heap *h;

	if (rate == 0 || rate > RAW_HEAP_RATE_MAX) {
		pv_error("the heap trace's sampling rate, %" PRIu64 " bytes, is not 1 to %" PRIu64
			 ": a damaged header", rate, RAW_HEAP_RATE_MAX);
		return NULL;
	}
	if (!(h = calloc(1, sizeof *h))) {
		pv_oom();
		return NULL;
	}
	h->p = p;
	h->rate = rate > 1 ? (double)rate : 1;
	h->peak_at = UINT64_MAX;
	for (int i = 0; i < V_N; i++)
		if (pv_add_value_type(p, names[i][0], names[i][1]) != (uint32_t)i) {
			free(h);
			return NULL;
		}
	p->period_type.type = pv_intern_str(p, "space");
	p->period_type.unit = pv_intern_str(p, "bytes");
	p->period = (int64_t)h->rate;
	if (p->period_type.type == PV_NONE || p->period_type.unit == PV_NONE) {
		free(h);
		return NULL;
	}
	return h;
}

static size_t slot_of(const struct raw_heap *h, uint64_t a)
{
	return (size_t)((a >> 4) * 0x9e3779b97f4a7c15ull >> 17) & (h->nslots - 1);
}

/* The slot of address a, or of the free slot it would go in. */
static size_t find(const struct raw_heap *h, uint64_t a, bool *found)
{
	size_t i = slot_of(h, a), free_at = SIZE_MAX;

	for (;; i = (i + 1) & (h->nslots - 1)) {
		if (h->vals[i] == 0) {
			*found = false;
			return free_at != SIZE_MAX ? free_at : i;
		}
		if (h->vals[i] == SIZE_MAX) {
			if (free_at == SIZE_MAX)
				free_at = i;
		} else if (h->keys[i] == a) {
			*found = true;
			return i;
		}
	}
}

static int rehash(struct raw_heap *h)
{
	size_t n = 1024, oldn = h->nslots;
	uint64_t *ok = h->keys;
	size_t *ov = h->vals;
	bool found;

	/* for the live ones only, at most a quarter full */
	while (n < 4 * (h->nused + 1))
		n *= 2;
	h->keys = calloc(n, sizeof *h->keys);
	h->vals = calloc(n, sizeof *h->vals);
	if (!h->keys || !h->vals) {
		free(h->keys);
		free(h->vals);
		h->keys = ok;
		h->vals = ov;
		return pv_oom();
	}
	h->nslots = n;
	h->nused = 0;
	h->nremoved = 0;
	for (size_t i = 0; i < oldn; i++)
		if (ov[i] != 0 && ov[i] != SIZE_MAX) {
			size_t j = find(h, ok[i], &found);
			h->keys[j] = ok[i];
			h->vals[j] = ov[i];
			h->nused++;
		}
	free(ok);
	free(ov);
	return 0;
}

/* Blocks of a sample of size bytes stands for. */
static double scale(const struct raw_heap *h, uint64_t size)
{
	if (h->rate <= 1 || size == 0)
		return 1;
	return 1 / -expm1(-(double)size / h->rate);
}

static int64_t whole(double v)
{
	return v >= 0x1p62 ? INT64_C(1) << 62 : (int64_t)llround(v);
}

/* v rounded up or down at random, up with the probability of its
 * fraction: unbiased for any set of samples, where rounding each to the
 * nearest would count 3 blocks for every sample of 2.5.  The draw is a
 * hash of key, so that a trace reads the same every time. */
static int64_t whole_random(double v, uint64_t key)
{
	double f = floor(v);
	uint64_t z = key * 0x9e3779b97f4a7c15ull;

	if (v >= 0x1p62)
		return INT64_C(1) << 62;
	z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ z >> 27) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (int64_t)f + ((double)(z >> 11) * 0x1p-53 < v - f);
}

static float to_var(double v)
{
	return v < 0x1p127 ? (float)v : 0x1p127f;
}

/* The variances sample ps adds to the estimates (profile.h): a block
 * of size bytes is sampled with probability p = 1 / n and stands for n
 * blocks, n * size bytes: w^2 (1 - p) for both, nothing for a block
 * sampled with certainty (one larger than the rate by far); the objects'
 * random rounding (whole_random) adds f (1 - f).  A count of samples is
 * its own variance. */
static void block_var(struct pv_sample *ps, double n, uint64_t size)
{
	double q = n > 1 ? 1 - 1 / n : 0, f = n - floor(n);

	ps->flags |= PV_SAMPLE_VAR;
	ps->var[V_ALLOC_SAMPLES] = 1;
	ps->var[V_ALLOC_OBJECTS] = to_var(n * n * q + f * (1 - f));
	ps->var[V_ALLOC_SPACE] = to_var(n * (double)size * n * (double)size * q);
}

/* Block b ends at time_ns (ns from the start; stored as at least 1: 0
 * is "never freed"). */
static void end_block(struct raw_heap *h, size_t b, int64_t time_ns)
{
	struct pv_sample *s = &h->p->samples[h->blocks[b].sample];

	h->blocks[b].free_at = h->events++;
	s->end_ns = time_ns > s->time_ns ? time_ns : s->time_ns;
	if (s->end_ns < 1)
		s->end_ns = 1;
	h->live -= (double)s->values[V_ALLOC_SPACE];
}

int raw_heap_alloc(struct raw_heap *h, struct pv_sample *ps, uint64_t size, uint64_t address)
{
	double n = scale(h, size);
	bool found;
	size_t i;

	memset(ps->values, 0, sizeof ps->values);
	memset(ps->var, 0, sizeof ps->var);
	ps->end_ns = 0;
	ps->values[V_ALLOC_SAMPLES] = 1;
	ps->values[V_ALLOC_OBJECTS] = whole_random(n, address ^ (uint64_t)ps->time_ns << 20 ^ h->nblocks);
	ps->values[V_ALLOC_SPACE] = whole(n * (double)size);
	block_var(ps, n, size);
	if (pv_grow(&h->blocks, &h->cap_blocks, h->nblocks + 1, sizeof *h->blocks) < 0)
		return pv_oom();
	if ((h->nused + h->nremoved + 1) * 2 > h->nslots && rehash(h) < 0)
		return -1;
	i = find(h, address, &found);
	if (found) /* its free was lost: it ended before this one */
		end_block(h, h->vals[i] - 1, ps->time_ns);
	else
		h->nused++;
	if (!found && h->vals[i] == SIZE_MAX)
		h->nremoved--;
	h->keys[i] = address;
	h->vals[i] = h->nblocks + 1;
	h->blocks[h->nblocks++] = (struct block){ h->p->nsamples, h->events++, UINT64_MAX };
	if (pv_add_sample(h->p, ps) < 0)
		return -1;
	h->live += (double)ps->values[V_ALLOC_SPACE];
	if (h->live > h->peak) {
		h->peak = h->live;
		h->peak_at = h->events - 1;
		h->peak_ns = ps->time_ns;
	}
	return 0;
}

int raw_heap_free(struct raw_heap *h, uint64_t address, int64_t time_ns)
{
	bool found;
	size_t i;

	if (h->nslots == 0)
		return 0;
	i = find(h, address, &found);
	if (!found)
		return 0;
	end_block(h, h->vals[i] - 1, time_ns);
	h->vals[i] = SIZE_MAX;
	h->nused--;
	h->nremoved++;
	return 0;
}

void raw_heap_finish(struct raw_heap *h, int64_t *peak_ns, int64_t *peak_bytes)
{
	for (size_t b = 0; b < h->nblocks; b++) {
		const struct block *k = &h->blocks[b];
		int64_t *v = h->p->samples[k->sample].values;
		bool inuse = k->free_at == UINT64_MAX;
		bool at_peak = h->peak_at != UINT64_MAX && k->alloc_at <= h->peak_at && k->free_at > h->peak_at;

		v[V_SAMPLES] = inuse;
		v[V_INUSE_OBJECTS] = inuse ? v[V_ALLOC_OBJECTS] : 0;
		v[V_INUSE_SPACE] = inuse ? v[V_ALLOC_SPACE] : 0;
		v[V_PEAK_SAMPLES] = at_peak;
		v[V_PEAK_OBJECTS] = at_peak ? v[V_ALLOC_OBJECTS] : 0;
		v[V_PEAK_SPACE] = at_peak ? v[V_ALLOC_SPACE] : 0;
		float *q = h->p->samples[k->sample].var;
		q[V_SAMPLES] = (float)v[V_SAMPLES];
		q[V_INUSE_OBJECTS] = inuse ? q[V_ALLOC_OBJECTS] : 0;
		q[V_INUSE_SPACE] = inuse ? q[V_ALLOC_SPACE] : 0;
		q[V_PEAK_SAMPLES] = (float)v[V_PEAK_SAMPLES];
		q[V_PEAK_OBJECTS] = at_peak ? q[V_ALLOC_OBJECTS] : 0;
		q[V_PEAK_SPACE] = at_peak ? q[V_ALLOC_SPACE] : 0;
	}
	*peak_ns = h->peak_ns;
	*peak_bytes = whole(h->peak);
}

void raw_heap_delete(struct raw_heap *h)
{
	if (!h)
		return;
	free(h->blocks);
	free(h->keys);
	free(h->vals);
	free(h);
}

/* A record of a heap trace: a sampled block (its stack as a sample's)
 * or the free of one. */
int rd_heap_record(struct reader *rd, const struct raw_record *rec)
{
	const unsigned char *r = rec->data;
	struct pv_sample ps = { 0 };
	struct raw_heap_alloc a;
	uint64_t t;

	if (rec->type == RAW_HEAP_FREE) {
		const struct raw_heap_free *f = (const void *)r;
		t = f->time_ns;
		return raw_heap_free(rd->heap, f->address,
				     t > rd->start_mono ? (int64_t)(t - rd->start_mono) : 0);
	}
	if (rec->type != RAW_HEAP_ALLOC)
		return 0;
	memcpy(&a, r, sizeof a);
	if (a.stack_id) {
		const struct stack_ref *ref = rd_stack_slot(rd, a.stack_id);
		if (!ref || !ref->id) {
			rd->unresolved++;
			return 0;
		}
		ps.loc_off = ref->off;
		ps.nlocs = ref->n;
	} else {
		bool cand;
		ps.loc_off = rd_store_frames(rd, r + sizeof a, a.nframes, &cand);
		if (ps.loc_off == UINT32_MAX)
			return -1;
		ps.nlocs = rd->nlocs;
	}
	ps.thread = rd_thread_index(rd, a.tid);
	if (ps.thread == PV_NONE)
		return -1;
	ps.time_ns = a.time_ns > rd->start_mono ? (int64_t)(a.time_ns - rd->start_mono) : 0;
	if (a.flags & RAW_SAMPLE_TRUNCATED)
		ps.flags |= PV_SAMPLE_TRUNCATED;
	if (a.time_ns > rd->last_time)
		rd->last_time = a.time_ns;
	return raw_heap_alloc(rd->heap, &ps, a.size, a.address);
}
