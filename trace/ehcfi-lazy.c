/* ehcfi-lazy.c - unwind rows made chunk by chunk as walks need them (see
 * ehcfi-lazy.h)
 *
 * Libc only; what runs in a walk (ehcfi_lazy_row) is signal-safe: atomic
 * loads and one compare-and-swap, mmap/munmap and clock_gettime.
 */
#include "ehcfi-lazy.h"
#include "ehcfi-int.h"
#include "ehcfi-share.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* A chunk's state: none, being made, or made: CHUNK_MADE + the number
 * of its record among the object's made chunks. */
enum { CHUNK_NONE = 0, CHUNK_MAKING, CHUNK_MADE };

/* A chunk made: its rows.  An object's made chunks' records are taken one
 * after the other as chunks are made (made[nmade++]), so that a short
 * run's few dozen chunks write one page of them, and the states, 4 bytes
 * a chunk, are packed four times as densely as state and record together
 * were (a walk of a compiler's stacks writes some 150 chunks' states
 * spread over its 45,000 FDEs: each page of states written is a page
 * fault). */
struct ehcfi_made {
	const struct ehcfi_row *rows;  /* in the arena */
	uint32_t nrows;
};

/* The arena: blocks from mmap, each taken from the front by an atomic
 * add, never given back (the rows of an object closed stay until the
 * process ends). */
#define ARENA_BLOCK ((size_t)256 << 10)
struct arena_block {
	_Atomic size_t used;   /* may pass size: then the block is full */
	size_t size;
	unsigned char data[];
};
static struct arena_block *_Atomic lazy_arena;

/* The chunks' states and records of a large object are a mapping of
 * their own, whose pages the kernel gives zeroed when a walk first writes
 * them: calloc would clear them all at the object's load, a page fault
 * each (a compiler's 45,000 FDEs are 11,250 chunks: 44 KB of states and
 * 180 KB of records, of which a short run's walks write a few pages).
 * Smaller ones follow the header. */
#define LAZY_MAP_MIN ((size_t)4096)

/* Where an object's search table is: read at ehcfi_lazy_new, or by the
 * first walk into an object made by ehcfi_lazy_defer (index, nchunks and
 * chunk are written before "ready" is stored, and read after it is). */
enum { INDEX_UNREAD = 0, INDEX_READING, INDEX_READY, INDEX_NONE };

struct ehcfi_lazy {
	struct ehcfi_image img;
	_Atomic uint32_t index;     /* INDEX_* */
	struct ehcfi_index ix;
	uint32_t nchunks;
	size_t map_len;             /* state is a mapping of this length, or 0 */
	/* walks that may be making a chunk: ehcfi_lazy_after_fork reads
	 * the states only when some may be "making" */
	_Atomic uint32_t makers;
	_Atomic uint64_t rows;      /* made in all its chunks */
	_Atomic uint32_t *state;    /* nchunks of them, then the records: */
	struct ehcfi_made *made;
	_Atomic uint32_t nmade;     /* records taken */
	/* the run's share of rows (ehcfi-share.h): the object's name there
	 * (0: not shared), its chunks' states there once found, and how
	 * often they were looked for */
	uint64_t share_id;
	_Atomic uint64_t *_Atomic shared;
	_Atomic uint32_t share_looks;
	_Alignas(16) unsigned char inline_mem[];
};

/* Bytes of n chunks' states and records, the records 16-byte aligned. */
static size_t lazy_chunks_size(uint32_t n)
{
	return (((size_t)n * sizeof(uint32_t) + 15) & ~(size_t)15) + (size_t)n * sizeof(struct ehcfi_made);
}

/* Points lz's states and records at mem (zeroed, lazy_chunks_size(n)). */
static void lazy_chunks_at(struct ehcfi_lazy *lz, void *mem, uint32_t n)
{
	lz->state = mem;
	lz->made = (struct ehcfi_made *)((unsigned char *)mem +
					 (((size_t)n * sizeof(uint32_t) + 15) & ~(size_t)15));
	lz->nchunks = n;
}

static _Atomic uint64_t lazy_chunks, lazy_rows, lazy_cpu_ns;

/* Looks for an object's chunks in the share this many times at most: one
 * that another process is entering is made for this process alone. */
#define LAZY_SHARE_LOOKS 4

struct ehcfi_lazy *ehcfi_lazy_new(const struct ehcfi_image *img)
{
	struct ehcfi_index ix;
	struct ehcfi_lazy *lz;
	uint32_t n;
	size_t len;
	int big;

	if (ehcfi_index_read(img, &ix) < 0 || ix.count == 0)
		return NULL;
	n = (ix.count + EHCFI_LAZY_CHUNK - 1) / EHCFI_LAZY_CHUNK;
	len = lazy_chunks_size(n);
	big = len >= LAZY_MAP_MIN;
	lz = calloc(1, sizeof *lz + (big ? 0 : len));
	if (lz == NULL)
		return NULL;
	lazy_chunks_at(lz, lz->inline_mem, n);
	if (big) {
		/* (CHUNK_NONE is 0: the zeroed pages are chunks not made) */
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED) {
			free(lz);
			return NULL;
		}
		lazy_chunks_at(lz, m, n);
		lz->map_len = len;
	}
	lz->img = *img;
	lz->ix = ix;
	atomic_init(&lz->index, INDEX_READY);
	return lz;
}

struct ehcfi_lazy *ehcfi_lazy_defer(const struct ehcfi_image *img)
{
	struct ehcfi_lazy *lz = calloc(1, sizeof *lz);

	if (lz == NULL)
		return NULL;
	lz->img = *img;
	atomic_init(&lz->index, INDEX_UNREAD);
	return lz;
}

void ehcfi_lazy_free(struct ehcfi_lazy *lz)
{
	if (lz != NULL && lz->map_len > 0)
		munmap((void *)lz->state, lz->map_len);
	free(lz);
}

void ehcfi_lazy_after_fork(struct ehcfi_lazy *lz)
{
	if (lz == NULL)
		return;
	/* a table a walk was reading is read again (what it had mapped for
	 * the chunks' states is lost) */
	if (atomic_load_explicit(&lz->index, memory_order_acquire) == INDEX_READING)
		atomic_store_explicit(&lz->index, INDEX_UNREAD, memory_order_release);
	/* no walk was making a chunk: no state to look at (reading the
	 * untouched pages of a mapped table would fault each in) */
	if (atomic_load_explicit(&lz->makers, memory_order_acquire) == 0)
		return;
	atomic_store_explicit(&lz->makers, 0, memory_order_relaxed);
	for (uint32_t k = 0; k < lz->nchunks; k++) {
		uint32_t making = CHUNK_MAKING;

		/* its half-made mapping is lost, not reused; the others are
		 * only read (a compare-and-swap writes the line even when it
		 * fails: each page of the states copied in every child) */
		if (atomic_load_explicit(&lz->state[k], memory_order_relaxed) == CHUNK_MAKING)
			atomic_compare_exchange_strong(&lz->state[k], &making, CHUNK_NONE);
	}
}

/* The time a chunk's making takes, by the monotonic clock: read in the
 * vDSO, where the thread's CPU clock is a system call, two a chunk, a
 * fifth of making one; the making is a few microseconds in the thread's
 * own signal handler or call, which it spends on the CPU but when it is
 * preempted. */
static uint64_t lazy_clock_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* n bytes (a multiple of 16) of the arena, or NULL; *blk and *off say
 * where, for arena_trim.  Signal-safe. */
static void *arena_take(size_t n, struct arena_block **blk, size_t *off)
{
	for (;;) {
		struct arena_block *b = atomic_load_explicit(&lazy_arena, memory_order_acquire), *nb;
		size_t size, at;
		void *m;

		if (b != NULL) {
			at = atomic_fetch_add_explicit(&b->used, n, memory_order_relaxed);
			if (at <= b->size && n <= b->size - at) {
				*blk = b;
				*off = at;
				return b->data + at;
			}
		}
		size = n + sizeof(*nb) > ARENA_BLOCK ? n + sizeof(*nb) : ARENA_BLOCK;
		m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return NULL;
		nb = m;
		nb->size = size - sizeof(*nb);
		atomic_init(&nb->used, 0);
		if (!atomic_compare_exchange_strong_explicit(&lazy_arena, &b, nb, memory_order_acq_rel,
							     memory_order_acquire))
			munmap(m, size); /* another thread's block came first: take from it */
	}
}

/* Gives back the end of what arena_take gave, [off + keep, off + n), when
 * nothing was taken after it. */
static void arena_trim(struct arena_block *b, size_t off, size_t n, size_t keep)
{
	size_t end = off + n;

	atomic_compare_exchange_strong_explicit(&b->used, &end, off + keep, memory_order_relaxed,
						memory_order_relaxed);
}

void ehcfi_lazy_share_id(struct ehcfi_lazy *lz, uint64_t id)
{
	if (lz != NULL)
		lz->share_id = id;
}

/* lz's chunks' states in the share, or NULL.  Signal-safe. */
static _Atomic uint64_t *lazy_shared(struct ehcfi_lazy *lz)
{
	_Atomic uint64_t *sh = atomic_load_explicit(&lz->shared, memory_order_acquire);

	/* (read before it is counted: once given up, a walk writes nothing
	 * here, which other threads' walks would contend for) */
	if (sh != NULL || lz->share_id == 0 ||
	    atomic_load_explicit(&lz->share_looks, memory_order_relaxed) >= LAZY_SHARE_LOOKS ||
	    atomic_fetch_add_explicit(&lz->share_looks, 1, memory_order_relaxed) >= LAZY_SHARE_LOOKS)
		return sh;
	sh = ehcfi_share_states(lz->share_id, lz->ix.count, lz->nchunks);
	if (sh != NULL)
		atomic_store_explicit(&lz->shared, sh, memory_order_release);
	return sh;
}

/* Makes chunk k's rows into the arena: *made (no rows when memory ran
 * out: 0 then, else 1). */
static int lazy_build(struct ehcfi_lazy *lz, uint32_t k, struct ehcfi_made *made)
{
	uint32_t first = k * EHCFI_LAZY_CHUNK;
	uint64_t t0 = lazy_clock_ns();
	size_t bound = ehcfi_fdes_bound(&lz->ix, first, EHCFI_LAZY_CHUNK), off = 0;
	struct ehcfi_rows b = { 0 };
	struct arena_block *blk = NULL;
	struct ehcfi_row *v = NULL;

	made->rows = NULL;
	made->nrows = 0;
	if (bound > 0 && bound <= SIZE_MAX / 4 / sizeof(*v))
		v = arena_take(2 * bound * sizeof(*v), &blk, &off);
	if (v != NULL) {
		b.v = v;
		b.cap = bound;
		b.fixed = 1;
		/* the second half for a sort, if the rows come unsorted */
		ehcfi_build_fdes(&lz->img, &lz->ix, first, EHCFI_LAZY_CHUNK, &b, v + bound);
		if (b.oom)
			b.n = 0;
		arena_trim(blk, off, 2 * bound * sizeof(*v), b.n * sizeof(*v));
		made->rows = v;
		made->nrows = (uint32_t)b.n;
	}
	atomic_fetch_add_explicit(&lazy_chunks, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&lazy_rows, made->nrows, memory_order_relaxed);
	atomic_fetch_add_explicit(&lz->rows, made->nrows, memory_order_relaxed);
	atomic_fetch_add_explicit(&lazy_cpu_ns, lazy_clock_ns() - t0, memory_order_relaxed);
	return v != NULL || bound == 0;
}

/* Makes chunk k's rows for this process (the caller moved it to
 * "making"). */
static void lazy_make(struct ehcfi_lazy *lz, uint32_t k)
{
	struct ehcfi_made made;
	uint32_t at;

	lazy_build(lz, k, &made);
	/* each chunk is made once (a fork's child makes again only those
	 * whose making never ended, which took no record): a record each */
	at = atomic_fetch_add_explicit(&lz->nmade, 1, memory_order_relaxed);
	if (at >= lz->nchunks)
		return; /* (cannot be: left "making", its walks take the stack copy) */
	lz->made[at] = made;
	atomic_store_explicit(&lz->state[k], CHUNK_MADE + at, memory_order_release);
}

/* Chunk k's rows from the run's share (*made): made by another process,
 * or by this walk and put there.  0 when the share cannot say (none, or
 * the chunk is being made by another walk, here or in another process):
 * then this process's own states decide.  Signal-safe. */
static int lazy_shared_chunk(struct ehcfi_lazy *lz, uint32_t k, struct ehcfi_made *made)
{
	_Atomic uint64_t *sh = lazy_shared(lz);
	uint64_t t0;

	if (sh == NULL)
		return 0;
	if (ehcfi_share_made(atomic_load_explicit(&sh[k], memory_order_acquire), &made->rows,
			     &made->nrows))
		return 1;
	if (!ehcfi_share_claim(&sh[k]))
		return 0;
	if (!lazy_build(lz, k, made)) {
		ehcfi_share_unclaim(&sh[k]); /* (out of memory: not the run's) */
		return 1;
	}
	t0 = lazy_clock_ns();
	ehcfi_share_publish(&sh[k], made->rows, made->nrows);
	atomic_fetch_add_explicit(&lazy_cpu_ns, lazy_clock_ns() - t0, memory_order_relaxed);
	return 1;
}

/* The last entry of lz's table at or before address a, or -1. */
static int64_t lazy_entry(const struct ehcfi_lazy *lz, uintptr_t a)
{
	uint32_t lo = 0, hi = lz->ix.count;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ehcfi_index_pc(&lz->ix, mid) <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int64_t)lo - 1;
}

/* Reads the search table of an object made by ehcfi_lazy_defer, and
 * maps its chunks' states (the caller moved it to "reading"): a large
 * one a mapping of its own, as ehcfi_lazy_new does, a small one from the
 * arena, cleared (the arena's bytes may have been a sort's).  Signal-safe. */
static void lazy_read_index(struct ehcfi_lazy *lz)
{
	uint64_t t0 = lazy_clock_ns();
	struct arena_block *blk;
	struct ehcfi_index ix;
	void *chunk = NULL;
	size_t len = 0, off;
	uint32_t n = 0;

	if (ehcfi_index_read(&lz->img, &ix) == 0 && ix.count > 0) {
		n = (ix.count + EHCFI_LAZY_CHUNK - 1) / EHCFI_LAZY_CHUNK;
		len = lazy_chunks_size(n);
		if (len >= LAZY_MAP_MIN) {
			void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (m != MAP_FAILED) {
				chunk = m;
				lz->map_len = len;
			}
		} else if ((chunk = arena_take((len + 15) & ~(size_t)15, &blk, &off)) != NULL) {
			memset(chunk, 0, len);
		}
	}
	if (chunk != NULL) {
		lz->ix = ix;
		lazy_chunks_at(lz, chunk, n);
	}
	atomic_fetch_add_explicit(&lazy_cpu_ns, lazy_clock_ns() - t0, memory_order_relaxed);
	atomic_store_explicit(&lz->index, chunk != NULL ? INDEX_READY : INDEX_NONE,
			      memory_order_release);
}

/* Is lz's search table read (reading it when no walk is)?  *pending when
 * another walk is reading it.  Signal-safe. */
static int lazy_index_ready(struct ehcfi_lazy *lz, int *pending)
{
	uint32_t state = atomic_load_explicit(&lz->index, memory_order_acquire);

	if (state == INDEX_UNREAD &&
	    atomic_compare_exchange_strong_explicit(&lz->index, &state, INDEX_READING,
						    memory_order_acquire, memory_order_acquire)) {
		lazy_read_index(lz);
		state = atomic_load_explicit(&lz->index, memory_order_acquire);
	}
	*pending = state == INDEX_READING;
	return state == INDEX_READY;
}

const struct ehcfi_row *ehcfi_lazy_row(const struct ehcfi_range *r, uintptr_t pc, int *pending)
{
	struct ehcfi_lazy *lz = r->lazy;
	uint64_t off = pc - r->bias;
	const struct ehcfi_made *c;
	struct ehcfi_made shared;
	_Atomic uint32_t *st;
	uint32_t state, lo = 0, hi;
	int64_t e;

	*pending = 0;
	if (pc < r->bias || off > UINT32_MAX || !lazy_index_ready(lz, pending))
		return NULL;
	/* (the image's table holds addresses of the image's bytes, which
	 * need not be where the object runs) */
	e = lazy_entry(lz, lz->img.bias + (uintptr_t)off);
	if (e < 0)
		return NULL;
	/* shared by the run: this process's own states (a page of them each
	 * few chunks) are not touched */
	if (lazy_shared_chunk(lz, (uint32_t)((uint64_t)e / EHCFI_LAZY_CHUNK), &shared)) {
		c = &shared;
		goto search;
	}
	st = &lz->state[(uint64_t)e / EHCFI_LAZY_CHUNK];
	state = atomic_load_explicit(st, memory_order_acquire);
	if (state == CHUNK_NONE) {
		uint32_t none = CHUNK_NONE;

		/* counted before the state moves and until it is made, so
		 * that a fork's copy of a chunk "making" has makers above 0 */
		atomic_fetch_add_explicit(&lz->makers, 1, memory_order_acq_rel);
		if (atomic_compare_exchange_strong_explicit(st, &none, CHUNK_MAKING,
							    memory_order_acquire, memory_order_acquire))
			lazy_make(lz, (uint32_t)((uint64_t)e / EHCFI_LAZY_CHUNK));
		atomic_fetch_sub_explicit(&lz->makers, 1, memory_order_acq_rel);
		state = atomic_load_explicit(st, memory_order_acquire);
	}
	if (state < CHUNK_MADE) {
		*pending = 1;
		return NULL;
	}
	c = &lz->made[state - CHUNK_MADE];
search:
	hi = c->nrows;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (c->rows[mid].pc <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? NULL : &c->rows[lo - 1];
}

void ehcfi_lazy_stats(struct ehcfi_lazy_stats *st)
{
	st->chunks = atomic_load_explicit(&lazy_chunks, memory_order_relaxed);
	st->rows = atomic_load_explicit(&lazy_rows, memory_order_relaxed);
	st->cpu_ns = atomic_load_explicit(&lazy_cpu_ns, memory_order_relaxed);
}

uint64_t ehcfi_lazy_rows(const struct ehcfi_lazy *lz)
{
	return lz == NULL ? 0 : atomic_load_explicit(&lz->rows, memory_order_relaxed);
}
