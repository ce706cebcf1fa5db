/* stacktab.c - stack deduplication: frames -> stack id, lock-free
 *
 * An open-addressing hash table of fixed size and an arena holding the
 * frames of every stored stack, both mapped once at start.  A slot goes
 * EMPTY -> CLAIMED (one thread won the CAS and is filling it) -> the stack's
 * hash (published with release order, after its RAW_STACK record was
 * written).  A lookup compares the frames themselves on a hash match.  A
 * thread that meets a CLAIMED slot on its probe path, or finds no free slot
 * within STACKTAB_PROBES, gets 0 and writes its frames inline: nobody ever
 * waits.  Ids start at 1.  The table (3 MiB) is populated soon after it is
 * made, by the collector's control thread in a process that has one
 * (stacktab_populate; in one that has none its pages are touched as
 * stacks land on them): new stacks
 * land on random slots, and a first touch of each page in the handler
 * would cost a page fault (a p90 of 10 us instead of 2 us, on a program
 * whose samples keep finding new stacks).  Not in the program's thread,
 * where it cost a millisecond at the start of every process, and not
 * before the process has used 50 ms of CPU time (control.c): a short one
 * touches a few of its pages, not 768: the first probes of every stack
 * are on the table's first three pages (STACKTAB_FRONT).
 */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "preload.h"
#include "raw-py.h"
#include "stacktab.h"
#include "writer.h"

#define STACKTAB_SLOTS (1u << 17)                  /* power of two */
#define STACKTAB_PROBES 64
/* A stack's probe path begins in the table's first slots, a few pages
 * that every stack may land on, and goes on in the rest of the table:
 * the hundred stacks of a short process take a page fault or two, not
 * one each (random slots of 768 pages). */
#define STACKTAB_FRONT 512u                        /* power of two */
#define STACKTAB_FRONT_PROBES 8
#define STACKTAB_ARENA_WORDS ((uint64_t)4 << 20)   /* 32 MiB of frames */

#define STACKTAB_EMPTY 0
#define STACKTAB_CLAIMED 1

struct stacktab_slot {
	_Atomic uint64_t key;  /* EMPTY, CLAIMED or hash | 1 << 63 */
	uint32_t id;
	uint32_t nframes;
	uint64_t offset;       /* of the frames in the arena, in words */
};

static struct {
	struct stacktab_slot *slots;
	uint64_t *arena;
	_Atomic uint64_t arena_used;  /* words */
	_Atomic uint32_t next_id;
} stacktab;

/* The ids of the stacks of kept walks, by the walk's serial (see
 * stacktab_known), with a word of the caller's: a seqlock each, whose
 * writers of one serial all write the same. */
#define STACKTAB_KNOWN 64
struct stacktab_known {
	_Atomic uint64_t serial;
	_Atomic uint64_t value;   /* id | word << 32 */
};
static struct stacktab_known stacktab_known_v[STACKTAB_KNOWN];

uint32_t stacktab_known(uint64_t serial, uint32_t *word)
{
	struct stacktab_known *k = &stacktab_known_v[serial % STACKTAB_KNOWN];
	uint64_t v;

	if (serial == 0 || atomic_load_explicit(&k->serial, memory_order_acquire) != serial)
		return 0;
	v = atomic_load_explicit(&k->value, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&k->serial, memory_order_relaxed) != serial)
		return 0;
	*word = (uint32_t)(v >> 32);
	return (uint32_t)v;
}

void stacktab_know(uint64_t serial, uint32_t id, uint32_t word)
{
	struct stacktab_known *k = &stacktab_known_v[serial % STACKTAB_KNOWN];

	if (serial == 0 || id == 0)
		return;
	atomic_store_explicit(&k->serial, 0, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&k->value, id | (uint64_t)word << 32, memory_order_relaxed);
	atomic_store_explicit(&k->serial, serial, memory_order_release);
}

/* The table and the arena are one mapping: one system call to make, to
 * drop and to reset, and one area for the kernel to keep per process. */
#define STACKTAB_SLOTS_BYTES ((size_t)STACKTAB_SLOTS * sizeof(struct stacktab_slot))
#define STACKTAB_BYTES (STACKTAB_SLOTS_BYTES + (size_t)STACKTAB_ARENA_WORDS * sizeof(uint64_t))

int stacktab_init(void)
{
	void *p = mmap(NULL, STACKTAB_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	stacktab.slots = p;
	stacktab.arena = (uint64_t *)((char *)p + STACKTAB_SLOTS_BYTES);
	atomic_store(&stacktab.next_id, 1);
	return 0;
}

void stacktab_populate(const _Atomic int *stop)
{
	unsigned char *slots = (unsigned char *)stacktab.slots;
	size_t size = STACKTAB_SLOTS_BYTES, step = 256 << 10;

	if (slots == NULL)
		return;
	/* in steps, so that a short program's exit does not wait for it */
	for (size_t at = 0; at < size && !atomic_load_explicit(stop, memory_order_relaxed); at += step) {
		size_t n = size - at < step ? size - at : step;

		if (madvise(slots + at, n, MADV_POPULATE_WRITE) == 0)
			continue;
		/* before Linux 5.14: a write to each page (to the key of the
		 * first slot that starts in it), one that cannot undo a slot
		 * another thread is claiming */
		for (size_t p = at; p < at + n; p += 4096) {
			size_t i = (p + sizeof(struct stacktab_slot) - 1) / sizeof(struct stacktab_slot);

			if (i < STACKTAB_SLOTS)
				atomic_fetch_add_explicit(&stacktab.slots[i].key, 0, memory_order_relaxed);
		}
	}
}

static void stacktab_forget_known(void)
{
	atomic_store(&stacktab.arena_used, 0);
	for (int i = 0; i < STACKTAB_KNOWN; i++)
		atomic_store(&stacktab_known_v[i].serial, 0);
}

void stacktab_release(void)
{
	if (stacktab.slots == NULL)
		return;
	munmap(stacktab.slots, STACKTAB_BYTES);
	stacktab.slots = NULL;
	stacktab.arena = NULL;
	stacktab_forget_known();
}

void stacktab_reset(void)
{
	if (stacktab.slots == NULL)
		return;
	/* zeros again, the pages given back (in a fork child, its copies of
	 * the parent's), the mapping kept */
	if (madvise(stacktab.slots, STACKTAB_BYTES, MADV_DONTNEED) != 0) {
		stacktab_release();
		stacktab_init();
		return;
	}
	stacktab_forget_known();
	atomic_store(&stacktab.next_id, 1);
}

static uint64_t stacktab_hash(const uint64_t *frames, uint32_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n;

	for (uint32_t i = 0; i < n; i++) {
		h ^= frames[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h | 1ull << 63;
}

/* The slot of probe i of the path of key: STACKTAB_FRONT_PROBES in the
 * front, then STACKTAB_PROBES in the rest of the table. */
static uint32_t stacktab_probe(uint64_t key, uint32_t i)
{
	if (i < STACKTAB_FRONT_PROBES)
		return ((uint32_t)(key >> 40) + i) & (STACKTAB_FRONT - 1);
	i -= STACKTAB_FRONT_PROBES;
	return STACKTAB_FRONT +
	       (((uint32_t)(key ^ key >> 29) + i) % (STACKTAB_SLOTS - STACKTAB_FRONT));
}

/* A slot of the native frames of a RAW_STACK_PY (its frames without the
 * part, the part's record id in its id) has this bit in its nframes, so
 * that no lookup of a stack takes it, and a key of its own. */
#define STACKTAB_NATIVE (1u << 31)
static uint64_t stacktab_native_key(const uint64_t *frames, uint32_t n)
{
	return stacktab_hash(frames, n) ^ 0x2545f4914f6cdd1dull; /* (bit 63 kept) */
}

/* The id of a RAW_STACK_PY written before whose native frames are
 * frames[0..n), or 0.  Signal-safe. */
static uint32_t stacktab_base(uint64_t nkey, const uint64_t *frames, uint32_t n)
{
	for (uint32_t i = 0; i < STACKTAB_FRONT_PROBES + STACKTAB_PROBES; i++) {
		struct stacktab_slot *slot = &stacktab.slots[stacktab_probe(nkey, i)];
		uint64_t cur = atomic_load_explicit(&slot->key, memory_order_acquire);

		if (cur == STACKTAB_EMPTY || cur == STACKTAB_CLAIMED)
			return 0;
		if (cur == nkey && slot->nframes == (n | STACKTAB_NATIVE) &&
		    memcmp(stacktab.arena + slot->offset, frames, n * sizeof(uint64_t)) == 0)
			return slot->id;
	}
	return 0;
}

/* Notes that the RAW_STACK_PY id, whose frames are at off in the arena,
 * has the native frames[0..n), where a slot is free for it (else later
 * stacks on them repeat them).  Signal-safe. */
static void stacktab_note_native(uint64_t nkey, uint32_t id, const uint64_t *frames, uint32_t n,
				 uint64_t off)
{
	for (uint32_t i = 0; i < STACKTAB_FRONT_PROBES + STACKTAB_PROBES; i++) {
		struct stacktab_slot *slot = &stacktab.slots[stacktab_probe(nkey, i)];
		uint64_t cur = atomic_load_explicit(&slot->key, memory_order_acquire);

		if (cur == STACKTAB_EMPTY &&
		    atomic_compare_exchange_strong_explicit(&slot->key, &cur, STACKTAB_CLAIMED,
							    memory_order_acquire, memory_order_acquire)) {
			slot->id = id;
			slot->nframes = n | STACKTAB_NATIVE;
			slot->offset = off;
			atomic_store_explicit(&slot->key, nkey, memory_order_release);
			return;
		}
		if (cur == STACKTAB_CLAIMED ||
		    (cur == nkey && slot->nframes == (n | STACKTAB_NATIVE) &&
		     memcmp(stacktab.arena + slot->offset, frames, n * sizeof(uint64_t)) == 0))
			return;
	}
}

/* Fills a slot this thread has claimed: copies the frames to the arena and
 * writes the RAW_STACK record; when the last frame is a stacktab_py_word,
 * a RAW_STACK_PY, or a RAW_STACK_PYREF when a RAW_STACK_PY written before
 * has its native frames.  Returns the id, or 0 (slot released). */
static uint32_t stacktab_fill(struct stacktab_slot *slot, uint64_t key,
			      const uint64_t *frames, uint32_t n)
{
	int py = (frames[n - 1] >> 48) == STACKTAB_PY_TAG;
	uint32_t nat = n - (uint32_t)py, size = (uint32_t)sizeof(struct raw_stack) + nat * 8;
	uint64_t off = atomic_fetch_add_explicit(&stacktab.arena_used, n, memory_order_relaxed);
	uint64_t nkey = py && nat >= 2 ? stacktab_native_key(frames, nat) : 0;
	uint32_t id, base = nkey ? stacktab_base(nkey, frames, nat) : 0;
	void *rec;

	_Static_assert(sizeof(struct raw_stack) == sizeof(struct raw_stack_py), "one header size");
	if (off + n > STACKTAB_ARENA_WORDS)
		goto release;
	if (base != 0)
		size = (uint32_t)sizeof(struct raw_stack_pyref);
	rec = writer_reserve(size, 0);
	if (rec == NULL)
		goto release;
	id = atomic_fetch_add_explicit(&stacktab.next_id, 1, memory_order_relaxed);
	memcpy(stacktab.arena + off, frames, n * sizeof(uint64_t));
	if (base != 0) {
		struct raw_stack_pyref *r = rec;

		r->id = id;
		r->py = (uint32_t)frames[n - 1];
		r->base = base;
		r->reserved = 0;
		writer_publish(rec, RAW_STACK_PYREF, size);
	} else {
		struct raw_stack *r = rec;

		r->id = id;
		/* (a RAW_STACK_PY's count is its size's; its second word the part) */
		r->nframes = py ? (uint32_t)frames[n - 1] : n;
		memcpy(r + 1, frames, nat * sizeof(uint64_t));
		writer_publish(rec, py ? RAW_STACK_PY : RAW_STACK, size);
	}
	slot->id = id;
	slot->nframes = n;
	slot->offset = off;
	atomic_store_explicit(&slot->key, key, memory_order_release);
	if (nkey != 0 && base == 0)
		stacktab_note_native(nkey, id, frames, nat, off);
	return id;
release:
	/* The arena words are lost; the slot can be used again. */
	atomic_store_explicit(&slot->key, STACKTAB_EMPTY, memory_order_release);
	return 0;
}

uint32_t stacktab_intern(const uint64_t *frames, uint32_t n)
{
	uint64_t key, cur;
	uint32_t i;

	if (stacktab.slots == NULL || n == 0)
		return 0;
	key = stacktab_hash(frames, n);
	for (i = 0; i < STACKTAB_FRONT_PROBES + STACKTAB_PROBES; i++) {
		struct stacktab_slot *slot = &stacktab.slots[stacktab_probe(key, i)];

		cur = atomic_load_explicit(&slot->key, memory_order_acquire);
		if (cur == STACKTAB_EMPTY) {
			if (atomic_compare_exchange_strong_explicit(&slot->key, &cur,
								    STACKTAB_CLAIMED,
								    memory_order_acquire,
								    memory_order_acquire))
				return stacktab_fill(slot, key, frames, n);
			/* Lost the race: look at what the winner put there. */
		}
		if (cur == STACKTAB_CLAIMED)
			return 0;
		if (cur == key && slot->nframes == n &&
		    memcmp(stacktab.arena + slot->offset, frames, n * sizeof(uint64_t)) == 0)
			return slot->id;
	}
	return 0;
}
