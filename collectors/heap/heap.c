/* heap.c - libprofview-heap.so: allocations sampled by bytes
 *
 * Loaded with LD_PRELOAD by collect-heap, which sets PROFVIEW_OUTPUT,
 * PROFVIEW_PID, PROFVIEW_INHERIT and PROFVIEW_HEAP_RATE (collect-env.h).
 * The library interposes the allocator's entry points (malloc, calloc,
 * realloc, reallocarray, free, posix_memalign, aligned_alloc, memalign,
 * valloc, pvalloc; C++'s operator new and delete reach them through
 * libstdc++) and calls the next definition of each (glibc's, or another
 * preloaded allocator's).  Each thread counts down the bytes it allocates
 * from a number drawn from an exponential distribution of mean RATE: the
 * block during which it reaches zero is sampled, and a new number drawn.
 * So every byte is sampled with the probability 1/RATE, and a block of S
 * bytes with 1 - exp(-S/RATE) (raw.h).  A sampled block gets a
 * RAW_HEAP_ALLOC record with its stack, unwound in the program with the
 * objects' CFI as collect-timer's samples are (cfi.h), and goes into a
 * table of the sampled blocks; its free writes a RAW_HEAP_FREE record.
 *
 * The fast path of an unsampled allocation is a subtraction from a
 * thread-local counter and a test (a pause of sampling, control.c, is
 * looked at only when the counter crosses zero); that of a free, one byte
 * of a filter that counts the sampled blocks starting in the address's
 * KiB (by the address's bits 10 to 31), almost always zero.  One byte for
 * a KiB keeps the filter of one part of the heap in a few cache lines (a
 * byte for each 16 bytes missed the cache on every other free), and the
 * free's test is six instructions.
 *
 * The trace is written as collect-timer's (writer.c, stacktab.c,
 * mappings.c, dlhook.c): the same file family, permissions and kill -9
 * safety, a trace of its own for the child of a fork and for a program
 * exec'd.  The library never calls the allocator in a way that comes back
 * to the sampler: a thread that is sampling (busy) allocates straight from
 * the real allocator, as do the collector's own threads and its work after
 * a dlopen; until the real allocator is known (dlsym allocates), blocks
 * come from a static arena and are never given back.
 *
 * This file: the entry points, the sampler and the table of sampled
 * blocks; heap-start.c starts and ends the trace and follows fork.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "cfi.h"
#include "collect-env.h"
#include "control.h"
#include "heap.h"
#include "mappings.h"
#include "neglog.h"
#include "preload.h"
#include "pyframes.h"
#include "raw-py.h"
#include "stacktab.h"
#include "writer.h"

struct heap_global heap;
struct heap_real heap_real;
__thread struct heap_tls heap_tls __attribute__((tls_model("initial-exec")));

/* The filter: the sampled blocks in each KiB of addresses, modulo 4 GiB
 * (a count that reached 255 stays).  In .bss: its pages are the zero page
 * until a block is sampled there.  It also sends free the blocks of the
 * arena below (counted 255), which its fast path so need not test. */
static _Atomic uint8_t heap_filter[HEAP_FILTER];

static _Alignas(64) unsigned char heap_arena[HEAP_ARENA];
static _Atomic size_t heap_arena_used;

static void *heap_boot_malloc(size_t n);
static void heap_boot_free(void *p);
static void heap_filter_add(uintptr_t p, int d);
/* malloc's and free's way to the real allocator: through the lookup
 * until it is done, then straight (no test on the fast paths) */
static void *(*_Atomic heap_malloc_fn)(size_t) = heap_boot_malloc;
static void (*_Atomic heap_free_fn)(void *) = heap_boot_free;

/* ---- the arena for the time before the real allocator is known ---- */

static void *heap_arena_alloc(size_t n, size_t align)
{
	size_t at, old = atomic_load(&heap_arena_used);

	if (align < 16)
		align = 16;
	do {
		/* 16 bytes before the block hold its size, for realloc */
		at = (old + 16 + align - 1) & ~(align - 1);
		if (n > HEAP_ARENA || at + n > HEAP_ARENA)
			return NULL;
	} while (!atomic_compare_exchange_weak(&heap_arena_used, &old, at + n));
	memcpy(heap_arena + at - 16, &n, sizeof(n));
	/* its free must not reach the real allocator: through the filter's
	 * slow path, for good (a count of 255 stays) */
	for (int i = 0; i < 255; i++)
		heap_filter_add((uintptr_t)(heap_arena + at), 1);
	return heap_arena + at;
}

static int heap_in_arena(const void *p)
{
	return (const unsigned char *)p >= heap_arena && (const unsigned char *)p < heap_arena + HEAP_ARENA;
}

static size_t heap_arena_size(const void *p)
{
	size_t n;

	memcpy(&n, (const unsigned char *)p - 16, sizeof(n));
	return n;
}

/* Looks up the real allocator (once; dlsym's own allocations come from the
 * arena meanwhile).  Returns 0, or -1 while it is being looked up. */
int heap_resolve(void)
{
	int no = 0;

	if (heap_real.malloc != NULL)
		return 0;
	if (!atomic_compare_exchange_strong(&heap.resolving, &no, 1))
		return -1;
	heap_real.calloc = dlsym(RTLD_NEXT, "calloc");
	heap_real.realloc = dlsym(RTLD_NEXT, "realloc");
	heap_real.free = dlsym(RTLD_NEXT, "free");
	heap_real.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	heap_real.aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	heap_real.memalign = dlsym(RTLD_NEXT, "memalign");
	heap_real.valloc = dlsym(RTLD_NEXT, "valloc");
	heap_real.pvalloc = dlsym(RTLD_NEXT, "pvalloc");
	/* last: the others are set when it is */
	__atomic_store_n(&heap_real.malloc, (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc"), __ATOMIC_RELEASE);
	atomic_store(&heap.resolving, 0);
	if (heap_real.malloc == NULL || heap_real.calloc == NULL || heap_real.realloc == NULL || heap_real.free == NULL ||
	    heap_real.memalign == NULL)
		return -1;
	atomic_store(&heap_free_fn, heap_real.free);
	atomic_store(&heap_malloc_fn, heap_real.malloc);
	return 0;
}

static void *heap_boot_malloc(size_t n)
{
	if (heap_resolve() != 0)
		return heap_arena_alloc(n, 16);
	return heap_real.malloc(n);
}

/* Only the arena's blocks can be freed before the lookup: left alone. */
static void heap_boot_free(void *p)
{
	if (heap_resolve() == 0 && !heap_in_arena(p))
		heap_real.free(p);
}

/* ---- the table of sampled blocks ---- */

static inline uint32_t heap_filter_at(uintptr_t p)
{
	_Static_assert(HEAP_FILTER == 1u << 22, "the filter covers 4 GiB by KiB");
	return (uint32_t)p >> 10;
}

/* A block's first slot.  Blocks near each other in memory get slots near
 * each other (a slot for each 64 bytes of a region of 2^slots_log such
 * granules), so that the slots a program's sampled blocks use stay in a
 * few pages of the table and in the cache; the regions are scattered
 * over the table by a multiplicative hash, so that heaps far apart do not
 * pile up at the same slots. */
static size_t heap_hash(uintptr_t p)
{
	uint64_t g = (uint64_t)p >> 6, region = g >> heap.slots_log;

	return (size_t)(g + ((region * 0x9e3779b97f4a7c15ull) >> (64 - heap.slots_log)));
}

/* Counts a sampled block in or out of p's filter byte. */
static void heap_filter_add(uintptr_t p, int d)
{
	_Atomic uint8_t *c = &heap_filter[heap_filter_at(p)];
	uint8_t v = atomic_load(c);

	do {
		if (v == 255 || (d < 0 && v == 0))
			return;
	} while (!atomic_compare_exchange_weak(c, &v, (uint8_t)(v + d)));
}

static int heap_table_insert(uintptr_t p, uint64_t size)
{
	size_t h = heap_hash(p);

	if (heap.table == NULL)
		return 0;
	for (size_t i = 0; i < HEAP_PROBES; i++) {
		struct heap_slot *s = &heap.table[(h + i) & (((size_t)1 << heap.slots_log) - 1)];
		uintptr_t k = atomic_load(&s->key);

		if (k == p) { /* a free that was never seen */
			s->size = size;
			return 1;
		}
		if (k <= 1 && atomic_compare_exchange_strong(&s->key, &k, p)) {
			s->size = size;
			heap_filter_add(p, 1);
			return 1;
		}
	}
	return 0;
}

/* Takes block p out of the table: 1 (its size in *size) if it was there. */
static int heap_table_remove(uintptr_t p, uint64_t *size)
{
	size_t h = heap_hash(p);

	if (heap.table == NULL)
		return 0;
	for (size_t i = 0; i < HEAP_PROBES; i++) {
		struct heap_slot *s = &heap.table[(h + i) & (((size_t)1 << heap.slots_log) - 1)];
		uintptr_t k = atomic_load(&s->key);

		if (k == 0)
			return 0;
		if (k == p) {
			*size = s->size;
			if (!atomic_compare_exchange_strong(&s->key, &k, 1))
				return 0;
			heap_filter_add(p, -1);
			return 1;
		}
	}
	return 0;
}

/* ---- sampling ---- */

/* Is the trace being written?  Counts the thread in until heap_leave, so
 * that the end of the trace waits for it. */
static int heap_enter(void)
{
	atomic_fetch_add(&heap.inflight, 1);
	if (atomic_load(&heap.state) == HEAP_RUNNING)
		return 1;
	atomic_fetch_sub(&heap.inflight, 1);
	return 0;
}

static void heap_leave(void)
{
	atomic_fetch_sub(&heap.inflight, 1);
}

/* The bytes to the next sample: exponential, of mean heap.rate. */
static int64_t heap_draw(struct heap_tls *t)
{
	uint64_t x = t->rng;
	double u, d;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	t->rng = x;
	u = (double)(((x * 0x2545f4914f6cdd1dull) >> 11) + 1) * 0x1p-53; /* (0, 1] */
	d = heap_neglog(u) * heap.rate;
	return d < 1 ? 1 : d > 0x1p62 ? (int64_t)1 << 62 : (int64_t)d;
}

static void heap_thread_record(struct heap_tls *t)
{
	struct raw_thread *rec = writer_reserve(sizeof(*rec), t->busy > 1 ? WRITER_NOWAIT : WRITER_WAIT);

	if (rec == NULL)
		return;
	memset((char *)rec + sizeof(rec->h), 0, sizeof(*rec) - sizeof(rec->h));
	rec->tid = (uint32_t)t->tid;
	rec->time_ns = preload_now();
	prctl(PR_GET_NAME, rec->name, 0, 0, 0);
	writer_publish(rec, RAW_THREAD, sizeof(*rec));
	t->named = heap.trace_gen + 1;
}

static void heap_stack_bounds(struct heap_tls *t)
{
	pthread_attr_t attr;
	size_t size;
	void *addr;

	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
		t->stack_lo = (uintptr_t)addr;
		t->stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&attr);
}

/* The registers the walk needs (the program counter, the stack pointer
 * and the callee-saved ones), here: as getcontext, without its system
 * call for the signal mask.  Inline, so that they are the caller's. */
static inline __attribute__((always_inline)) void heap_context(ucontext_t *uc)
{
	greg_t *g = uc->uc_mcontext.gregs;

	memset(g, 0, sizeof(uc->uc_mcontext.gregs));
#if defined(__x86_64__)
	__asm__ volatile("lea 0(%%rip), %%rax\n\t"
			 "mov %%rax, %0\n\t"
			 "mov %%rsp, %1\n\t"
			 "mov %%rbp, %2\n\t"
			 "mov %%rbx, %3\n\t"
			 "mov %%r12, %4\n\t"
			 "mov %%r13, %5\n\t"
			 "mov %%r14, %6\n\t"
			 "mov %%r15, %7"
			 : "=m"(g[REG_RIP]), "=m"(g[REG_RSP]), "=m"(g[REG_RBP]), "=m"(g[REG_RBX]),
			   "=m"(g[REG_R12]), "=m"(g[REG_R13]), "=m"(g[REG_R14]), "=m"(g[REG_R15])
			 :
			 : "rax");
#endif
}

/* The stack of the allocation: its id in the stack table, or 0 with its
 * frames in frames[0..*n), from the caller of the allocator on (the
 * library's own frames left out), frames[0] inside its call instruction.
 * frames has room for HEAP_FRAMES + HEAP_PY_FRAMES.
 * *flags gets RAW_SAMPLE_TRUNCATED when the walk did not reach the
 * outermost frame.  A walk the unwinder kept (cfi_unwind_memo) has its id
 * kept too, and takes no lookup in the stack table, unless the process
 * runs Python: the thread's Python frames are merged in as collect-timer's
 * samples have them (pyframes.h: no lock, no allocation, reads that cannot
 * fault), and they change under one native walk. */
static __attribute__((noinline)) uint32_t heap_stack(struct heap_tls *t, const void *caller,
						     ucontext_t *from, uint64_t *frames, uint32_t *n,
						     uint32_t *flags)
{
	enum cfi_failure why = CFI_FAIL_NONE;
	enum cfi_result r = CFI_FAILED;
	uint32_t k = 0, id;
	uint64_t serial = 0;
	ucontext_t uc;

	*n = 0;
	if (t->stack_hi != 0) {
		if (from == NULL) {
			heap_context(&uc);
			from = &uc;
		}
		r = cfi_unwind_memo(from, t->stack_lo, t->stack_hi, (uintptr_t)caller, frames,
				    HEAP_FRAMES, n, &why, &serial);
		/* the same native walk runs different Python code: with
		 * Python frames read, a stack is never the walk's alone */
		if (pyframes_on())
			serial = 0;
		if ((id = stacktab_known(serial, flags)) != 0)
			return id;
	}
	while (k < *n && frames[k] >= heap.own_lo && frames[k] < heap.own_hi)
		k++;
	if (k == *n) {
		/* no walk (a stack of unknown bounds, an alternate signal
		 * stack): the caller alone */
		frames[0] = (uint64_t)(uintptr_t)caller;
		*n = 1;
		k = 0;
		r = CFI_FAILED;
		serial = 0; /* the caller is not the walk's */
	}
	if (r != CFI_COMPLETE)
		*flags |= RAW_SAMPLE_TRUNCATED;
	if (k > 0)
		memmove(frames, frames + k, (*n - k) * sizeof(*frames));
	*n -= k;
	frames[0]--;
	/* an address in no mapping written yet: the end reads the maps */
	mappings_note_frames(frames, *n);
	_Static_assert(HEAP_PY_FRAMES >= RAW_PY_MAX_STACK, "room for a thread's Python frames");
	id = pyframes_stack(frames, n, HEAP_FRAMES + HEAP_PY_FRAMES);
	stacktab_know(serial, id, *flags);
	return id;
}

static void heap_write_alloc(struct heap_tls *t, uintptr_t p, uint64_t size, const void *caller,
			     ucontext_t *from)
{
	uint64_t frames[HEAP_FRAMES + HEAP_PY_FRAMES];
	uint32_t flags = 0, n, stack_id = heap_stack(t, caller, from, frames, &n, &flags);
	uint32_t bytes = (uint32_t)sizeof(struct raw_heap_alloc) + (stack_id ? 0 : n * 8);
	struct raw_heap_alloc *rec;

	writer_need_file();
	rec = writer_reserve(bytes, t->busy > 1 ? WRITER_NOWAIT : WRITER_WAIT);

	if (rec == NULL) {
		uint64_t ignored;

		/* no record: the block is not one of the sampled */
		heap_table_remove(p, &ignored);
		atomic_fetch_add(&heap.lost, 1);
		return;
	}
	rec->tid = (uint32_t)t->tid;
	rec->stack_id = stack_id;
	rec->time_ns = preload_now();
	rec->size = size;
	rec->address = p;
	rec->flags = flags;
	rec->nframes = stack_id ? 0 : n;
	if (!stack_id)
		memcpy(rec + 1, frames, n * 8);
	writer_publish(rec, RAW_HEAP_ALLOC, bytes);
	atomic_fetch_add(&heap.samples, 1);
}

/* Block p of size bytes is sampled.  In the table before its record, so
 * that its free (which can only come after we return) finds it.  from:
 * where the walk of the stack starts (NULL: here), a frame of the library
 * close to the program's, so that few of its own frames are walked. */
static void heap_sample(struct heap_tls *t, uintptr_t p, uint64_t size, const void *caller,
			ucontext_t *from)
{
	if (!heap_enter())
		return;
	t->busy++;
	if (t->tid == 0)
		t->tid = preload_gettid();
	if (t->stack_hi == 0)
		heap_stack_bounds(t);
	if (t->named != heap.trace_gen + 1)
		heap_thread_record(t);
	if (heap_table_insert(p, size))
		heap_write_alloc(t, p, size, caller, from);
	else
		atomic_fetch_add(&heap.lost, 1);
	t->busy--;
	heap_leave();
}

/* The countdown crossed zero in a block of n bytes at p. */
static __attribute__((noinline)) void heap_slow(struct heap_tls *t, void *p, size_t n,
						const void *caller)
{
	int state = atomic_load(&heap.state);
	ucontext_t uc;

	/* the collector's own work first: it runs while the state changes
	 * (a fork child's new trace), and must not stop the countdown */
	if (p == NULL || t->busy || preload_own_depth)
		return;
	if (state != HEAP_RUNNING) {
		/* before the start, look again at the next block; after the
		 * end (or in a process not profiled), never */
		t->left = state == HEAP_OFF ? 0 : INT64_MAX;
		return;
	}
	if (!t->seeded) {
		t->rng = preload_now() ^ (uint64_t)(uintptr_t)t ^ (uint64_t)preload_gettid() << 32;
		if (t->rng == 0)
			t->rng = 1;
		t->seeded = 1;
		t->left = heap_draw(t) - (int64_t)n;
		if (t->left > 0)
			return;
	}
	/* memoryless: the next interval starts at the block's end */
	t->left = heap_draw(t);
	/* a pause or a resume asked for, the start (--delay), the end
	 * (--duration): looked at here, where no thread is needed */
	control_poll();
	if (HEAP_UNLIKELY(atomic_load_explicit(&heap.paused, memory_order_relaxed))) {
		/* the countdown runs on while paused, so that it is as
		 * random at the resume as ever; after --duration, never */
		if (atomic_load_explicit(&heap.ended, memory_order_relaxed))
			t->left = INT64_MAX;
		return;
	}
	heap_context(&uc);
	heap_sample(t, (uintptr_t)p, n, caller, &uc);
	control_release_due();
}

static inline void heap_count(void *p, size_t n, const void *caller)
{
	struct heap_tls *t = &heap_tls;

	t->left -= (int64_t)n;
	if (HEAP_UNLIKELY(t->left <= 0))
		heap_slow(t, p, n, caller);
}

/* The free of sampled block p (taken out of the table): its record. */
static void heap_write_free(uintptr_t p)
{
	struct heap_tls *t = &heap_tls;
	struct raw_heap_free *rec;
	/* nested in the collector's work (a signal handler's free): never
	 * wait for the writer */
	int nested = t->busy || preload_own_depth;

	if (!heap_enter())
		return;
	t->busy++;
	if (t->tid == 0)
		t->tid = preload_gettid();
	rec = writer_reserve(sizeof(*rec), nested ? WRITER_NOWAIT : WRITER_WAIT);
	if (rec != NULL) {
		rec->tid = (uint32_t)t->tid;
		rec->reserved = 0;
		rec->time_ns = preload_now();
		rec->address = p;
		writer_publish(rec, RAW_HEAP_FREE, sizeof(*rec));
	} else {
		atomic_fetch_add(&heap.lost, 1);
	}
	t->busy--;
	heap_leave();
}

/* Before p goes back to the allocator: if it is sampled, its free record.
 * Returns 1 when it was sampled (its size in *size). */
static inline int heap_unsample(void *p, uint64_t *size)
{
	uintptr_t a = (uintptr_t)p;

	if (HEAP_LIKELY(atomic_load_explicit(&heap_filter[heap_filter_at(a)], memory_order_relaxed) == 0))
		return 0;
	if (!heap_table_remove(a, size))
		return 0;
	heap_write_free(a);
	return 1;
}

/* ---- the entry points ---- */

/* The block whose n bytes make the countdown cross zero. */
static __attribute__((noinline)) void *heap_malloc_slow(struct heap_tls *t, size_t n, const void *caller)
{
	void *p = atomic_load(&heap_malloc_fn)(n);

	heap_slow(t, p, n, caller);
	return p;
}

/* Counted before the call, so that the real malloc is a tail call on the
 * fast path: a few instructions. */
HEAP_EXPORT void *malloc(size_t n)
{
	struct heap_tls *t = &heap_tls;
	int crossed;

#if defined(__x86_64__)
	/* the countdown (left is the first field) in one instruction on
	 * the thread's memory, with its flags */
	_Static_assert(offsetof(struct heap_tls, left) == 0, "left comes first");
	__asm__("movq heap_tls@gottpoff(%%rip), %%rdx\n\t"
		"subq %[n], %%fs:(%%rdx)"
		: "=@ccle"(crossed)
		: [n] "r"(n)
		: "rdx", "memory");
#else
	t->left -= (int64_t)n;
	crossed = t->left <= 0;
#endif
	if (HEAP_LIKELY(!crossed))
		return atomic_load_explicit(&heap_malloc_fn, memory_order_relaxed)(n);
	return heap_malloc_slow(t, n, __builtin_return_address(0));
}

/* A free whose filter byte is set: the arena's, or maybe sampled. */
static __attribute__((noinline)) void heap_free_slow(void *p)
{
	uint64_t size;

	if (p == NULL || heap_in_arena(p))
		return;
	if (heap_table_remove((uintptr_t)p, &size))
		heap_write_free((uintptr_t)p);
	atomic_load(&heap_free_fn)(p);
}

HEAP_EXPORT void free(void *p)
{
	if (HEAP_LIKELY(atomic_load_explicit(&heap_filter[heap_filter_at((uintptr_t)p)],
					     memory_order_relaxed) == 0))
		atomic_load_explicit(&heap_free_fn, memory_order_relaxed)(p);
	else
		heap_free_slow(p);
}

HEAP_EXPORT void *calloc(size_t m, size_t n)
{
	size_t bytes;
	void *p;

	if (__builtin_mul_overflow(m, n, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	if (HEAP_UNLIKELY(heap_real.malloc == NULL) && heap_resolve() != 0)
		return heap_arena_alloc(bytes, 16); /* static: zeros */
	p = heap_real.calloc(m, n);
	if (HEAP_LIKELY(p != NULL))
		heap_count(p, bytes, __builtin_return_address(0));
	return p;
}

static void *heap_realloc(void *p, size_t n, const void *caller)
{
	uint64_t old = 0;
	int sampled;
	void *q;

	if (HEAP_UNLIKELY(heap_real.malloc == NULL) && heap_resolve() != 0) {
		q = heap_arena_alloc(n, 16);
		if (q != NULL && p != NULL)
			memcpy(q, p, heap_arena_size(p) < n ? heap_arena_size(p) : n);
		return q;
	}
	if (HEAP_UNLIKELY(heap_in_arena(p))) {
		q = heap_real.malloc(n);
		if (q != NULL)
			memcpy(q, p, heap_arena_size(p) < n ? heap_arena_size(p) : n);
		return q;
	}
	/* the free record before the block can be anyone else's */
	sampled = p != NULL && heap_unsample(p, &old);
	q = heap_real.realloc(p, n);
	if (q == NULL && n != 0) {
		/* p is still allocated: sampled again, where it failed */
		if (sampled && !heap_tls.busy && !preload_own_depth)
			heap_sample(&heap_tls, (uintptr_t)p, old, caller, NULL);
		return NULL;
	}
	if (q != NULL)
		heap_count(q, n, caller);
	return q;
}

HEAP_EXPORT void *realloc(void *p, size_t n)
{
	return heap_realloc(p, n, __builtin_return_address(0));
}

HEAP_EXPORT void *reallocarray(void *p, size_t m, size_t n)
{
	size_t bytes;

	if (__builtin_mul_overflow(m, n, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return heap_realloc(p, bytes, __builtin_return_address(0));
}

/* The aligned ones, by the real function fn (NULL: memalign). */
static void *heap_aligned(void *(*fn)(size_t, size_t), size_t align, size_t n, const void *caller)
{
	void *p;

	if (HEAP_UNLIKELY(heap_real.malloc == NULL) && heap_resolve() != 0)
		return align <= 4096 ? heap_arena_alloc(n, align) : NULL;
	p = (fn != NULL ? fn : heap_real.memalign)(align, n);
	if (HEAP_LIKELY(p != NULL))
		heap_count(p, n, caller);
	return p;
}

HEAP_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	int rc;

	if (HEAP_UNLIKELY(heap_real.malloc == NULL) && heap_resolve() != 0) {
		*out = align <= 4096 ? heap_arena_alloc(n, align) : NULL;
		return *out != NULL ? 0 : ENOMEM;
	}
	if (heap_real.posix_memalign == NULL) {
		*out = heap_aligned(NULL, align, n, __builtin_return_address(0));
		return *out != NULL ? 0 : ENOMEM;
	}
	rc = heap_real.posix_memalign(out, align, n);
	if (rc == 0 && *out != NULL)
		heap_count(*out, n, __builtin_return_address(0));
	return rc;
}

HEAP_EXPORT void *aligned_alloc(size_t align, size_t n)
{
	return heap_aligned(heap_real.aligned_alloc, align, n, __builtin_return_address(0));
}

HEAP_EXPORT void *memalign(size_t align, size_t n)
{
	return heap_aligned(heap_real.memalign, align, n, __builtin_return_address(0));
}

HEAP_EXPORT void *valloc(size_t n)
{
	const void *caller = __builtin_return_address(0);
	void *p;

	if (heap_real.valloc == NULL || heap_real.malloc == NULL)
		return heap_aligned(NULL, (size_t)sysconf(_SC_PAGESIZE), n, caller);
	p = heap_real.valloc(n);
	if (p != NULL)
		heap_count(p, n, caller);
	return p;
}

HEAP_EXPORT void *pvalloc(size_t n)
{
	const void *caller = __builtin_return_address(0);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *p;

	if (heap_real.pvalloc == NULL || heap_real.malloc == NULL)
		return heap_aligned(NULL, page, (n + page - 1) & ~(page - 1), caller);
	p = heap_real.pvalloc(n);
	if (p != NULL)
		heap_count(p, n, caller);
	return p;
}


/* ---- collect-heap -p (heap-attach.c) ---- */

/* (only their addresses are taken: glibc's attributes of the names, leaf
 * and nothrow, are not copied) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-attributes"
#define HEAP_HOOK(name) \
	extern __typeof(name) heap_hook_##name __attribute__((alias(#name), visibility("hidden")))
HEAP_HOOK(malloc);
HEAP_HOOK(free);
HEAP_HOOK(calloc);
HEAP_HOOK(realloc);
HEAP_HOOK(reallocarray);
HEAP_HOOK(posix_memalign);
HEAP_HOOK(aligned_alloc);
HEAP_HOOK(memalign);
HEAP_HOOK(valloc);
HEAP_HOOK(pvalloc);
#pragma GCC diagnostic pop

void heap_use_allocator(const struct heap_real *next)
{
	heap_real = *next;
	atomic_store(&heap_free_fn, next->free);
	atomic_store(&heap_malloc_fn, next->malloc);
}

void heap_forget_blocks(void)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)heap_filter + page - 1) & ~(page - 1);
	uintptr_t hi = ((uintptr_t)heap_filter + sizeof(heap_filter)) & ~(page - 1);
	size_t used = atomic_load(&heap_arena_used);

	if (heap.table != NULL)
		madvise(heap.table, sizeof(struct heap_slot) << heap.slots_log, MADV_DONTNEED);
	/* the filter's whole pages given back as zero pages, the rest
	 * cleared; the arena's blocks counted again */
	memset(heap_filter, 0, lo - (uintptr_t)heap_filter);
	memset((void *)hi, 0, (uintptr_t)heap_filter + sizeof(heap_filter) - hi);
	if (hi <= lo || madvise((void *)lo, hi - lo, MADV_DONTNEED) != 0)
		memset(heap_filter, 0, sizeof(heap_filter));
	for (uintptr_t a = (uintptr_t)heap_arena & ~(uintptr_t)1023; a < (uintptr_t)heap_arena + used;
	     a += 1024)
		for (int i = 0; i < 255; i++)
			heap_filter_add(a, 1);
}
