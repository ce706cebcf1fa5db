/* pystacks.c - the Python frames of a trace's stacks, each list written
 * once (see pystacks.h)
 *
 * A part's record names, besides its own index, the index of each list of
 * its outer frames that was not written before, so that a later part can
 * take any of them as its parent: a part differing from one written in
 * its innermost frames only (another instruction, another callee) costs
 * those frames.
 */
#include <string.h>

#include "pyslots.h"
#include "pystacks.h"
#include "raw.h"
#include "raw-py.h"
#include "writer.h"

#define PYSTACKS_PROBES 64

#define PYSTACKS_IDX 0xfffffu /* an entry's index: its low 20 bits */
_Static_assert(PYSTACKS_IDX == RAW_PY_MAX_PARTS, "an entry holds any index");

/* The index t holds for the key k (a hash of a list of Python frames;
 * its low 20 bits are the entry's index), 0 when none.  With claim not
 * 0, installs claim as its index when it is not there (*fresh: the
 * caller writes the record).  0 also when the table is full.  Slot 0
 * holds the count of the indices given.  Signal-safe. */
static uint32_t pystacks_slot(_Atomic uint64_t *t, uint64_t k, uint32_t claim, int *fresh)
{
	*fresh = 0;
	k = (k | 1ull << 63) & ~(uint64_t)PYSTACKS_IDX;
	for (uint32_t i = 0; i < PYSLOTS_NEAR_PROBES + PYSTACKS_PROBES; i++) {
		uint32_t s = pyslots_at(k >> 24, i, PYSLOTS_NEAR, PYSTACKS_SLOTS);
		uint64_t old;

		if (s == 0)
			continue;
		old = atomic_load_explicit(&t[s], memory_order_relaxed);
		if ((old & ~(uint64_t)PYSTACKS_IDX) == k)
			return (uint32_t)(old & PYSTACKS_IDX);
		if (old != 0)
			continue;
		if (claim == 0)
			return 0;
		if (atomic_compare_exchange_strong(&t[s], &old, k | claim)) {
			*fresh = 1;
			return claim;
		}
		if ((old & ~(uint64_t)PYSTACKS_IDX) == k)
			return (uint32_t)(old & PYSTACKS_IDX);
	}
	return 0;
}

/* The first of n indices not given before, 0 when they would pass
 * RAW_PY_MAX_PARTS.  Signal-safe. */
static uint32_t pystacks_new(_Atomic uint64_t *t, uint32_t n)
{
	uint64_t first = atomic_fetch_add_explicit(&t[0], n, memory_order_relaxed) + 1;

	return first + n - 1 <= RAW_PY_MAX_PARTS ? (uint32_t)first : 0;
}

/* The index of the key k, given and claimed (*fresh) when new; 0 when
 * the table is full.  Signal-safe. */
static uint32_t pystacks_claim(_Atomic uint64_t *t, uint64_t k, uint32_t n, int *fresh)
{
	uint32_t idx = pystacks_slot(t, k, 0, fresh), first;

	if (idx != 0)
		return idx;
	first = pystacks_new(t, n);
	return first != 0 ? pystacks_slot(t, k, first, fresh) : 0;
}

static uint64_t pystacks_mix(uint64_t k, uint64_t v)
{
	k = (k ^ v) * 0xbf58476d1ce4e5b9ull;
	return k ^ k >> 31;
}

/* The word of the Python frames w[0..n), stored once as a RAW_PYSTACK
 * record (known by a hash of its words); 0 when the table is full.
 * Signal-safe. */
static uint64_t pystacks_word(_Atomic uint64_t *t, const uint64_t *w, uint32_t n)
{
	uint64_t k = 0x9e3779b97f4a7c15ull ^ n;
	struct raw_pystack *rec;
	uint32_t size = (uint32_t)(sizeof(*rec) + n * 8), s;
	int fresh;

	for (uint32_t i = 0; i < n; i++)
		k = pystacks_mix(k, w[i]);
	s = pystacks_claim(t, k, 1, &fresh);
	if (s == 0)
		return 0;
	if (fresh) {
		writer_need_file();
		rec = writer_reserve(size, 0);
		if (rec != NULL) { /* else its frames are "not recorded" */
			rec->index = s;
			rec->nframes = n;
			memcpy(rec + 1, w, n * 8);
			writer_publish(rec, RAW_PYSTACK, size);
		}
	}
	return raw_pystack_word(s);
}

/* The part index of the Python frames w[0..k) as a RAW_PYPARTS record
 * holds it, at p (NULL: counted only), frame i ending a call where gend
 * says: its length.  Signal-safe. */
static uint32_t pystacks_encode(unsigned char *p, uint32_t index, uint32_t parent, const uint64_t *w,
				uint32_t k, const uint32_t *gend, uint32_t ng, uint64_t eval_lo,
				uint64_t eval_hi)
{
	uint32_t len = 0, g = 0;

	len += raw_varint_put(p ? p + len : NULL, k);
	len += raw_varint_put(p ? p + len : NULL, raw_zigzag(index));
	len += raw_varint_put(p ? p + len : NULL,
			       parent == 0 ? 0 : raw_zigzag((int64_t)index - parent) + 1);
	if (parent == 0) {
		len += raw_varint_put(p ? p + len : NULL, eval_lo);
		len += raw_varint_put(p ? p + len : NULL, eval_hi - eval_lo);
	}
	for (uint32_t i = 0; i < k; i++) {
		uint32_t end = g < ng && gend[g] == i + 1;

		g += end;
		len += raw_varint_put(p ? p + len : NULL, raw_py_code(w[i]));
		len += raw_varint_put(p ? p + len : NULL, (uint64_t)raw_py_instr(w[i]) << 1 | end);
	}
	return len;
}

/* Writes the part index of the Python frames w[0..k) (their calls ending
 * at gend[0..ng) as far as they are among them), its outer frames those
 * of part parent, as a RAW_PYPARTS record of its own.  Signal-safe. */
static void pystacks_write_part(uint32_t index, uint32_t parent, const uint64_t *w, uint32_t k,
				const uint32_t *gend, uint32_t ng, uint64_t eval_lo,
				uint64_t eval_hi)
{
	uint32_t len = pystacks_encode(NULL, index, parent, w, k, gend, ng, eval_lo, eval_hi), size;
	struct raw_pyparts *rec;

	size = (uint32_t)sizeof(*rec) + raw_pad(len);
	writer_need_file();
	rec = writer_reserve(size, 0);
	if (rec == NULL) /* its frames are "not recorded" */
		return;
	memset(rec, 0, size);
	pystacks_encode((unsigned char *)(rec + 1), index, parent, w, k, gend, ng, eval_lo, eval_hi);
	writer_publish(rec, RAW_PYPARTS, size);
}

/* A new part is written with the longest list of its outer frames
 * already known as its parent, n indices given to it: those of its
 * lists of outer frames follow its own.  Each list is known by a hash
 * of its words and of where its calls end. */
uint32_t pystacks_part(_Atomic uint64_t *t, const uint64_t *w, uint32_t n,
		       const uint32_t *gend, uint32_t ng, uint64_t eval_lo, uint64_t eval_hi)
{
	uint64_t h[RAW_PY_MAX_STACK + 1];
	uint32_t g = ng, parent = 0, k = n, idx;
	int fresh;

	/* h[j]: of the outer frames w[j..n), each with whether it ends a call */
	h[n] = 0x6a09e667f3bcc909ull;
	for (uint32_t j = n; j-- > 0;) {
		int end = g > 0 && gend[g - 1] == j + 1;

		g -= (uint32_t)end;
		h[j] = pystacks_mix(h[j + 1], w[j] ^ (uint64_t)end << 47);
	}
	idx = pystacks_claim(t, h[0], n, &fresh);
	if (idx == 0 || !fresh)
		return idx;
	/* the outer lists: those not known yet are this record's */
	for (uint32_t j = 1; j < n; j++) {
		uint32_t s = pystacks_slot(t, h[j], idx + j, &fresh);

		if (s != 0 && !fresh) {
			parent = s;
			k = j;
			break;
		}
	}
	pystacks_write_part(idx, parent, w, k, gend, ng, eval_lo, eval_hi);
	return idx;
}

uint32_t pystacks_words(_Atomic uint64_t *t, uint64_t *w, uint32_t *gend, uint32_t ng)
{
	uint32_t lo = 0, k = 0;

	for (uint32_t g = 0; g < ng; g++) {
		uint64_t word = gend[g] - lo > 1 ? pystacks_word(t, w + lo, gend[g] - lo) : 0;

		if (word != 0) {
			w[k++] = word;
		} else {
			memmove(w + k, w + lo, (gend[g] - lo) * 8);
			k += gend[g] - lo;
		}
		lo = gend[g];
		gend[g] = k;
	}
	return k;
}

