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

#include "pystacks.h"
#include "raw.h"
#include "writer.h"

#define PYSTACKS_PROBES 64
_Static_assert(PYSTACKS_SLOTS <= RAW_PY_MAX_PARTS, "indices a reader takes");

/* The slot of t that holds the key k (a hash of a list of
 * Python frames, | 1), claimed by this call when claim and it is not
 * there yet (*fresh: its caller writes the record).  0 when the table is
 * full, or when k is not there and not claimed.  Signal-safe. */
static uint32_t pystacks_slot(_Atomic uint64_t *t, uint64_t k, int claim, int *fresh)
{
	*fresh = 0;
	for (uint32_t i = 0, s = (uint32_t)(k >> 16) & (PYSTACKS_SLOTS - 1); i < PYSTACKS_PROBES;
	     i++, s = (s + 1) & (PYSTACKS_SLOTS - 1)) {
		uint64_t old = atomic_load_explicit(&t[s], memory_order_relaxed);

		if (old == k)
			return s + 1;
		if (old != 0)
			continue;
		if (!claim)
			return 0;
		if (atomic_compare_exchange_strong(&t[s], &old, k)) {
			*fresh = 1;
			return s + 1;
		}
		if (old == k)
			return s + 1;
	}
	return 0;
}

static uint64_t pystacks_mix(uint64_t k, uint64_t v)
{
	k = (k ^ v) * 0xbf58476d1ce4e5b9ull;
	return k ^ k >> 31;
}

/* The word of the Python frames w[0..n), stored once as a RAW_PYSTACK
 * record (known by a 64-bit hash of its words); 0 when the table is
 * full.  Signal-safe. */
static uint64_t pystacks_word(_Atomic uint64_t *t, const uint64_t *w, uint32_t n)
{
	uint64_t k = 0x9e3779b97f4a7c15ull ^ n;
	struct raw_pystack *rec;
	uint32_t size = (uint32_t)(sizeof(*rec) + n * 8), s;
	int fresh;

	for (uint32_t i = 0; i < n; i++)
		k = pystacks_mix(k, w[i]);
	s = pystacks_slot(t, k | 1, 1, &fresh);
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

/* Writes the RAW_PYPART record of the Python frames w[0..k) (their
 * calls ending at gend[0..ng) as far as they are among them), its outer
 * frames those of part parent, idx[j] the index of the part from word j
 * on.  Signal-safe. */
static void pystacks_write_part(const uint32_t *idx, uint32_t parent, const uint64_t *w, uint32_t k,
				const uint32_t *gend, uint32_t ng, uint64_t eval_lo,
				uint64_t eval_hi)
{
	uint32_t ne = 0, head = parent == 0 ? 16 : 0, size;
	struct raw_pypart *rec;
	unsigned char *p;

	while (ne < ng && gend[ne] <= k)
		ne++;
	size = (uint32_t)sizeof(*rec) + raw_pad(head + k * 12 - 4 + ne * 4);
	writer_need_file();
	rec = writer_reserve(size, 0);
	if (rec == NULL) /* its frames are "not recorded" */
		return;
	memset(rec, 0, size);
	rec->index = idx[0];
	rec->parent = parent;
	rec->nwords = k;
	rec->nends = ne;
	p = (unsigned char *)(rec + 1);
	if (parent == 0) {
		uint64_t eval[2] = { eval_lo, eval_hi };

		memcpy(p, eval, 16);
	}
	p += head;
	memcpy(p, w, k * 8);
	memcpy(p + k * 8, gend, ne * 4);
	memcpy(p + k * 8 + ne * 4, idx + 1, (k - 1) * 4);
	writer_publish(rec, RAW_PYPART, size);
}

/* A new part is written with the longest list of its outer frames
 * already known as its parent.  Each list is known by a 64-bit hash of
 * its words and of where its calls end. */
uint32_t pystacks_part(_Atomic uint64_t *t, const uint64_t *w, uint32_t n,
		       const uint32_t *gend, uint32_t ng, uint64_t eval_lo, uint64_t eval_hi)
{
	uint64_t h[RAW_PY_MAX_STACK + 1];
	uint32_t idx[RAW_PY_MAX_STACK], g = ng, parent = 0, k = n;
	int fresh;

	/* h[j]: of the outer frames w[j..n), each with whether it ends a call */
	h[n] = 0x6a09e667f3bcc909ull;
	for (uint32_t j = n; j-- > 0;) {
		int end = g > 0 && gend[g - 1] == j + 1;

		g -= (uint32_t)end;
		h[j] = pystacks_mix(h[j + 1], w[j] ^ (uint64_t)end << 47);
	}
	idx[0] = pystacks_slot(t, h[0] | 1, 1, &fresh);
	if (idx[0] == 0 || !fresh)
		return idx[0];
	/* the outer lists: those not known yet are this record's */
	for (uint32_t j = 1; j < n; j++) {
		idx[j] = pystacks_slot(t, h[j] | 1, 1, &fresh);
		if (idx[j] == 0) { /* (full: the rest unnamed) */
			memset(idx + j, 0, (n - j) * sizeof(*idx));
			break;
		}
		if (!fresh) {
			parent = idx[j];
			k = j;
			break;
		}
	}
	pystacks_write_part(idx, parent, w, k, gend, ng, eval_lo, eval_hi);
	return idx[0];
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

