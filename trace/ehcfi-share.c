/* ehcfi-share.c - unwind rows made once for every process of a run (see
 * ehcfi-share.h)
 */
#include "ehcfi-share.h"

#include <string.h>

_Static_assert(sizeof(struct ehcfi_row) == 16, "a row is 16 bytes: the share's rows are 16-aligned");

/* An object in the directory: its key (0: a free slot), then where its
 * chunk states are, once they are (0 until then): their offset in the
 * data in 8-byte words, times 2^24, plus the number of chunks. */
struct share_slot {
	_Atomic uint64_t key;
	_Atomic uint64_t info;
};

struct share_head {
	_Atomic uint64_t used;  /* bytes of the data taken */
	uint64_t reserved[7];
	struct share_slot slot[EHCFI_SHARE_SLOTS];
};

/* The data start on the page after the head. */
#define SHARE_DATA_AT ((sizeof(struct share_head) + 4095) & ~(size_t)4095)
#define SHARE_PROBES 32
#define NCHUNKS_BITS 24

/* A chunk state: the tag in the low 2 bits; made, the rows' count in the
 * next 24 and their offset in the data, in 16-byte units, above. */
enum { ST_NONE = 0, ST_MAKING = 1, ST_MADE = 2 };
#define ST_NROWS_BITS 24
#define ST_OFF_SHIFT (2 + ST_NROWS_BITS)

static struct share_head *_Atomic share;
static size_t share_data_len;
/* the share had no room for rows this process made: it makes its own */
static _Atomic int share_full;

void ehcfi_share_use(void *base, size_t len)
{
	if (base == NULL || len <= SHARE_DATA_AT + 4096) {
		atomic_store(&share, NULL);
		return;
	}
	share_data_len = len - SHARE_DATA_AT;
	atomic_store(&share_full, 0);
	atomic_store(&share, (struct share_head *)base);
}

uint64_t ehcfi_share_id(const void *id, size_t len)
{
	const unsigned char *p = id;
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	if (id == NULL || len == 0)
		return 0;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h | 1;
}

/* The directory's key of an object: its name and its search table's
 * size (never 0, a free slot's). */
static uint64_t share_key(uint64_t id, uint32_t count)
{
	uint64_t h = id;

	for (int i = 0; i < 4; i++)
		h = (h ^ ((count >> (8 * i)) & 0xff)) * 0x100000001b3ull;
	return h | 1;
}

static unsigned char *share_data(const struct share_head *s)
{
	return (unsigned char *)s + SHARE_DATA_AT;
}

/* n bytes (a multiple of 16) of the data: their offset, or -1 when full. */
static int64_t share_take(struct share_head *s, size_t n)
{
	uint64_t at = atomic_fetch_add_explicit(&s->used, n, memory_order_relaxed);

	if (at > share_data_len || n > share_data_len - at)
		return -1; /* (used stays past the end: full from now on) */
	return (int64_t)at;
}

_Atomic uint64_t *ehcfi_share_states(uint64_t id, uint32_t count, uint32_t nchunks)
{
	struct share_head *s = atomic_load_explicit(&share, memory_order_acquire);
	uint64_t key = share_key(id, count);

	if (s == NULL || id == 0 || nchunks == 0 || nchunks >= (1u << NCHUNKS_BITS))
		return NULL;
	for (uint32_t i = 0; i < SHARE_PROBES; i++) {
		struct share_slot *slot = &s->slot[(key + i) % EHCFI_SHARE_SLOTS];
		uint64_t k = atomic_load_explicit(&slot->key, memory_order_acquire), info, at;
		int64_t took;

		if (k == 0 && atomic_compare_exchange_strong_explicit(&slot->key, &k, key,
								      memory_order_acq_rel,
								      memory_order_acquire)) {
			/* ours: its states, zero (the data is never reused) */
			took = share_take(s, ((size_t)nchunks * 8 + 15) & ~(size_t)15);
			if (took < 0)
				return NULL; /* (left without states: not shared) */
			atomic_store_explicit(&slot->info,
					      ((uint64_t)took / 8) << NCHUNKS_BITS | nchunks,
					      memory_order_release);
			return (_Atomic uint64_t *)(share_data(s) + took);
		}
		/* (a failed exchange read the key another process entered) */
		if (k != key)
			continue;
		info = atomic_load_explicit(&slot->info, memory_order_acquire);
		at = (info >> NCHUNKS_BITS) * 8;
		if (info == 0 || (info & ((1u << NCHUNKS_BITS) - 1)) != nchunks || at > share_data_len ||
		    (uint64_t)nchunks * 8 > share_data_len - at)
			return NULL;
		return (_Atomic uint64_t *)(share_data(s) + at);
	}
	return NULL;
}

int ehcfi_share_made(uint64_t state, const struct ehcfi_row **rows, uint32_t *n)
{
	struct share_head *s = atomic_load_explicit(&share, memory_order_acquire);
	uint64_t off = (state >> ST_OFF_SHIFT) * 16, count = (state >> 2) & ((1u << ST_NROWS_BITS) - 1);

	if (s == NULL || (state & 3) != ST_MADE || off > share_data_len ||
	    count * sizeof(struct ehcfi_row) > share_data_len - off)
		return 0;
	*rows = (const struct ehcfi_row *)(share_data(s) + off);
	*n = (uint32_t)count;
	return 1;
}

int ehcfi_share_claim(_Atomic uint64_t *st)
{
	uint64_t none = ST_NONE;

	return !atomic_load_explicit(&share_full, memory_order_relaxed) &&
	       atomic_compare_exchange_strong_explicit(st, &none, ST_MAKING, memory_order_acq_rel,
						       memory_order_acquire);
}

void ehcfi_share_unclaim(_Atomic uint64_t *st)
{
	atomic_store_explicit(st, ST_NONE, memory_order_release);
}

int ehcfi_share_publish(_Atomic uint64_t *st, const struct ehcfi_row *rows, uint32_t n)
{
	struct share_head *s = atomic_load_explicit(&share, memory_order_acquire);
	size_t bytes = ((size_t)n * sizeof(*rows) + 15) & ~(size_t)15;
	int64_t at = -1;

	if (s != NULL && n < (1u << ST_NROWS_BITS))
		at = share_take(s, bytes > 0 ? bytes : 16);
	if (at < 0) {
		atomic_store_explicit(&share_full, 1, memory_order_relaxed);
		atomic_store_explicit(st, ST_NONE, memory_order_release);
		return 0;
	}
	if (n > 0)
		memcpy(share_data(s) + at, rows, (size_t)n * sizeof(*rows));
	atomic_store_explicit(st, ((uint64_t)at / 16) << ST_OFF_SHIFT | (uint64_t)n << 2 | ST_MADE,
			      memory_order_release);
	return 1;
}
