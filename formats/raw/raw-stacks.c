/* raw-stacks.c - the stack table of a raw trace, and stacks stored once
 * (see raw-reader.h) */
#include "error.h"
#include "raw-python.h"
#include "raw-reader.h"
#include "raw-stacks.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct stack_ref *rd_stack_slot(struct reader *rd, uint32_t id)
{
	size_t mask = rd->stk.nstacks_slots - 1;
	size_t i = (id * 0x9e3779b1u) & mask;

	if (!rd->stk.nstacks_slots)
		return NULL;
	while (rd->stk.stacks[i].id && rd->stk.stacks[i].id != id)
		i = (i + 1) & mask;
	return &rd->stk.stacks[i];
}

static int stacks_grow(struct reader *rd)
{
	struct stack_ref *old = rd->stk.stacks;
	size_t oldn = rd->stk.nstacks_slots;
	size_t n = oldn ? oldn * 2 : 1024;

	if ((rd->stk.nstacks + 1) * 2 <= oldn)
		return 0;
	rd->stk.stacks = calloc(n, sizeof *rd->stk.stacks);
	if (!rd->stk.stacks) {
		rd->stk.stacks = old;
		return pv_oom();
	}
	rd->stk.nstacks_slots = n;
	for (size_t i = 0; i < oldn; i++)
		if (old[i].id)
			*rd_stack_slot(rd, old[i].id) = old[i];
	free(old);
	return 0;
}

/* Store a stack of locations once: samples with the same frames share it. */
uint32_t rd_dedup_stack(struct reader *rd, const uint32_t *locs, uint32_t n)
{
	struct pv_profile *p = rd->p;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
	size_t mask, i;

	for (uint32_t j = 0; j < n; j++) {
		h ^= locs[j];
		h *= 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	if ((rd->stk.ndedup + 1) * 2 > rd->stk.ndedup_slots) {
		size_t nn = rd->stk.ndedup_slots ? rd->stk.ndedup_slots * 2 : 4096;
		struct stack_key *t = calloc(nn, sizeof *t);
		if (!t) {
			pv_oom();
			return UINT32_MAX;
		}
		for (size_t k = 0; k < rd->stk.ndedup_slots; k++) {
			const struct stack_key *e = &rd->stk.dedup[k];
			if (!e->hash)
				continue;
			size_t j = e->hash & (nn - 1);
			while (t[j].hash)
				j = (j + 1) & (nn - 1);
			t[j] = *e;
		}
		free(rd->stk.dedup);
		rd->stk.dedup = t;
		rd->stk.ndedup_slots = nn;
	}
	h |= 1; /* 0 marks an empty slot */
	mask = rd->stk.ndedup_slots - 1;
	for (i = h & mask; rd->stk.dedup[i].hash; i = (i + 1) & mask) {
		const struct stack_key *e = &rd->stk.dedup[i];
		if (e->hash == h && e->n == n &&
		    (n == 0 || memcmp(p->stack_locs + e->off, locs, n * sizeof *locs) == 0))
			return e->off;
	}
	uint32_t off = pv_add_stack(p, locs, n);
	if (off == UINT32_MAX)
		return off;
	rd->stk.dedup[i] = (struct stack_key){ h, off, n };
	rd->stk.ndedup++;
	return off;
}

/* Is mapping m (PV_NONE: none) the collector's preload library
 * (libprofview-timer.so, libprofview-heap.so)? */
static bool own_mapping(struct reader *rd, uint32_t m)
{
	const char *path, *base;

	if (m == PV_NONE)
		return false;
	if (m != rd->stk.own_map) {
		path = pv_str(rd->p, rd->p->mappings[m].file);
		base = strrchr(path, '/');
		base = base != NULL ? base + 1 : path;
		rd->stk.own_map = m;
		rd->stk.own_map_is = (strncmp(base, "libprofview-timer.so", 20) == 0 ||
				  strncmp(base, "libprofview-heap.so", 19) == 0);
	}
	return rd->stk.own_map_is;
}

/* Turn raw addresses into a stored stack of locations.  In a
 * frame-pointer trace frames[1] is a candidate (see raw.h): dropped here
 * when the collector left it 0, else kept and *candidate set.  A caller
 * frame in the collector's preload library is dropped: the library's
 * wrappers (exec, dlopen, the thread start) only pass the program's call
 * on, and the program's functions are not to be shown under the
 * library's names (a sample whose own frame is in the library is the
 * collector's work, RAW_SAMPLE_COLLECTOR, left out of the profile). */
uint32_t rd_store_frames(struct reader *rd, const unsigned char *frames, uint32_t n,
			 bool *candidate)
{
	struct pv_profile *p = rd->p;
	uint32_t k = 0;

	*candidate = false;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a;
		memcpy(&a, frames + 8 * (size_t)i, 8);
		if (raw_pystack_is(a)) {
			uint32_t got = rd_python_stack_locations(rd, a, rd->locs + k, RAW_MAX_FRAMES - k);
			if (got == UINT32_MAX)
				return UINT32_MAX;
			k += got;
			continue;
		}
		if (k == RAW_MAX_FRAMES)
			break;
		if (raw_py_is(a)) {
			rd->locs[k] = rd_python_location(rd, a);
			if (rd->locs[k++] == PV_NONE)
				return UINT32_MAX;
			continue;
		}
		if (i == 1 && rd->fp_candidate) {
			if (a == 0)
				continue;
			*candidate = true;
		}
		uint32_t m;

		/* Callers' addresses are return addresses: step back into the call. */
		if (i > 0 && a > 0)
			a--;
		m = pv_find_mapping(p, a);
		if (i > 0 && own_mapping(rd, m))
			continue;
		rd->locs[k] = pv_get_location(p, a, m);
		if (rd->locs[k] == PV_NONE)
			return UINT32_MAX;
		k++;
	}
	rd->nlocs = k;
	return rd_dedup_stack(rd, rd->locs, k);
}

/* Stores the stack id (of the record at byte off) of frames[0..n).
 * 0, or -1 when out of memory. */
static int define_stack(struct reader *rd, uint32_t id, const unsigned char *frames, uint32_t n,
			size_t off, size_t rec)
{
	struct stack_ref *slot;
	uint32_t at;
	bool cand;

	if (id == 0) {
		pv_warn("%s: stack record at byte %zu has id 0; ignored", rd->who, off);
		return 0;
	}
	if (stacks_grow(rd) < 0)
		return -1;
	slot = rd_stack_slot(rd, id);
	if (slot->id) {
		pv_warn("%s: stack id %u at byte %zu is defined twice; the first is kept", rd->who, id,
			off);
		return 0;
	}
	at = rd_store_frames(rd, frames, n, &cand);
	if (at == UINT32_MAX)
		return -1;
	*slot = (struct stack_ref){ id, at, rd->nlocs, cand, rec };
	rd->stk.nstacks++;
	return 0;
}

/* A stack of native frames[0..n) with the Python part py, as stack id. */
static int define_py(struct reader *rd, uint32_t id, uint32_t py, const unsigned char *native,
		     uint32_t n, size_t off, size_t rec)
{
	uint64_t frames[RAW_MAX_FRAMES + RAW_PY_MAX_STACK];

	memcpy(frames, native, (size_t)n * 8);
	n = rd_python_part_merge(rd, py, frames, n, RAW_MAX_FRAMES + RAW_PY_MAX_STACK);
	return define_stack(rd, id, (const unsigned char *)frames, n, off, rec);
}

/* A RAW_STACK_PY record: its native frames with its Python part's. */
static int define_stack_py(struct reader *rd, const unsigned char *r, uint32_t size, size_t off)
{
	struct raw_stack_py s;
	uint32_t n = (size - (uint32_t)sizeof s) / 8; /* (raw-iter.c: at most RAW_MAX_FRAMES) */

	memcpy(&s, r, sizeof s);
	return define_py(rd, s.id, s.py, r + sizeof s, n, off, (size_t)(r - rd->buf));
}

/* A RAW_STACK_PYREF record: the native frames of the stack it names (a
 * RAW_STACK or RAW_STACK_PY before it) with its Python part's. */
static int define_stack_pyref(struct reader *rd, const unsigned char *r, size_t off)
{
	struct raw_stack_pyref s;
	const struct stack_ref *b;
	const unsigned char *base;
	struct raw_stack h;
	uint32_t n;

	memcpy(&s, r, sizeof s);
	b = s.base != 0 ? rd_stack_slot(rd, s.base) : NULL;
	if (b == NULL || b->id != s.base || b->rec == SIZE_MAX) {
		pv_warn("%s: stack %u at byte %zu names stack %u, which is not a stack of native "
			"frames before it; ignored", rd->who, s.id, off, s.base);
		return 0;
	}
	/* (a record read before: its type one of the two, its frames whole) */
	base = rd->buf + b->rec;
	memcpy(&h, base, sizeof h);
	n = h.h.type == RAW_STACK ? h.nframes
				  : (h.h.size - (uint32_t)sizeof(struct raw_stack_py)) / 8;
	return define_py(rd, s.id, s.py, base + sizeof(struct raw_stack), n, off, SIZE_MAX);
}

int rd_stack_pass(struct reader *rd)
{
	struct raw_iter it;
	struct raw_record rec;

	if (rd->nstack_records == 0)
		return 0;
	rd_records(rd, &it);
	while (raw_iter_next(&it, &rec) == RAW_NEXT_RECORD) {
		const unsigned char *r = rec.data;
		int rc = 0;

		if ((it.nrecords & 4095) == 0)
			rd_release(rd, it.off);
		if (rec.type == RAW_STACK) {
			const struct raw_stack *s = (const void *)r;

			rc = define_stack(rd, s->id, r + sizeof *s, s->nframes, rec.off,
					  (size_t)(r - rd->buf));
		} else if (rec.type == RAW_STACK_PY) {
			rc = define_stack_py(rd, r, rec.size, rec.off);
		} else if (rec.type == RAW_STACK_PYREF) {
			rc = define_stack_pyref(rd, r, rec.off);
		}
		if (rc < 0)
			return -1;
	}
	rd_release(rd, rd->len);
	return 0;
}

void rd_stacks_free(struct rd_stacks *s)
{
	free(s->stacks);
	free(s->dedup);
}
