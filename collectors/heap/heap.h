/* heap.h - what the files of libprofview-heap.so share: heap.c (the
 * allocator's entry points and the sampler) and heap-start.c (the trace's
 * start and end, fork, and what the files shared with
 * libprofview-timer.so need).  Everything is hidden but the entry points.
 */
#ifndef PROFVIEW_HEAP_HEAP_H
#define PROFVIEW_HEAP_HEAP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "raw-py.h"

#define HEAP_EXPORT __attribute__((visibility("default")))
#define HEAP_LIKELY(x) __builtin_expect(!!(x), 1)
#define HEAP_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Frames kept of a sampled block's stack: on the stack of whatever thread
 * allocates (a signal handler's too), so a modest number. */
#define HEAP_FRAMES 128
/* And room for the Python frames merged into them (pyframes.h): one
 * word a frame at most, as many as the walk of a thread's frames reads
 * (RAW_PY_MAX_STACK); 3.9 and 3.10 run each Python call in a C call of
 * its own, whose native frames fill HEAP_FRAMES in a few dozen calls. */
#define HEAP_PY_FRAMES 256
/* The table of sampled blocks: open addressing, 16 bytes a slot, mapped
 * without reserve.  Blocks near each other in memory have slots near each
 * other (heap_hash), but a long run's heap can reach every page of it: it
 * is sized for the sampled blocks
 * that can be allocated at once, 2^16 slots at the default rate (32 GiB
 * of blocks in use), more at smaller rates, up to 2^22.  A block that
 * finds no slot in HEAP_PROBES is not sampled (counted lost). */
#define HEAP_SLOTS_MIN_LOG 16
#define HEAP_SLOTS_MAX_LOG 22
#define HEAP_PROBES 4096
#define HEAP_FILTER (1u << 22)  /* bytes: one for each KiB of 4 GiB */
#define HEAP_ARENA (256u << 10)

enum heap_state { HEAP_OFF = 0, HEAP_RUNNING, HEAP_STOPPED, HEAP_DISABLED };

/* A slot: key 0 is empty, 1 a block freed since. */
struct heap_slot {
	_Atomic uintptr_t key;
	uint64_t size;
};

struct heap_tls {
	int64_t left;         /* bytes to the next sample */
	int seeded;           /* left and rng are set */
	int busy;             /* in the sampler: allocate straight */
	unsigned named;       /* its RAW_THREAD record is written: heap.trace_gen + 1 */
	pid_t tid;
	uint64_t rng;
	uintptr_t stack_lo, stack_hi;
};

/* The allocator behind the entry points (heap.c). */
struct heap_real {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*memalign)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
};

/* The library's state. */
struct heap_global {
	_Atomic int state;
	_Atomic int inflight;       /* threads between heap_enter and heap_leave */
	_Atomic int resolving;      /* dlsym is looking up the real allocator */
	int inherit;
	int tailed;                 /* the launcher reads the trace as it goes */
	double rate;
	uintptr_t own_lo, own_hi;   /* the library's code */
	struct heap_slot *table;
	int slots_log;
	_Atomic uint64_t samples, lost;
	/* sampling is paused (control.c): the countdowns run on, and a
	 * block whose countdown crosses zero is not sampled; frees are
	 * recorded as ever */
	_Atomic int paused;
	_Atomic int ended;          /* paused for good (--duration) */
	/* the traces started before this one in the process image (each
	 * attach starts one): a thread's record is written once a trace */
	unsigned trace_gen;
};

#pragma GCC visibility push(hidden)

extern struct heap_global heap;
extern struct heap_real heap_real;
extern __thread struct heap_tls heap_tls __attribute__((tls_model("initial-exec")));

/* heap.c */

/* Looks up the real allocator (once).  Returns 0, or -1 while it is being
 * looked up or when it cannot be found. */
int heap_resolve(void);

/* The entry points under names of the library's own, for collect-heap -p
 * to write into the GOT (a reference to malloc from this library binds to
 * the program's).  Signal-safe as the entry points. */
void *heap_hook_malloc(size_t n);
void heap_hook_free(void *p);
void *heap_hook_calloc(size_t m, size_t n);
void *heap_hook_realloc(void *p, size_t n);
void *heap_hook_reallocarray(void *p, size_t m, size_t n);
int heap_hook_posix_memalign(void **out, size_t align, size_t n);
void *heap_hook_aligned_alloc(size_t align, size_t n);
void *heap_hook_memalign(size_t align, size_t n);
void *heap_hook_valloc(size_t n);
void *heap_hook_pvalloc(size_t n);

/* The allocator the entry points call from now on (collect-heap -p: what
 * the GOT held), instead of the next one in the lookup order.  Before the
 * GOT sends any call here.  Not signal-safe. */
void heap_use_allocator(const struct heap_real *next);
/* Forgets every sampled block (the table and the filter emptied), for a
 * new attach: the blocks of an earlier one were freed unseen.  Only while
 * no entry point runs in the sampler (heap.inflight 0, not running).  Not
 * signal-safe. */
void heap_forget_blocks(void);

/* heap-start.c */

/* Maps the table of sampled blocks for heap.rate (once; later calls keep
 * it).  0, or -1 said. */
int heap_table_make(void);
/* Opens this process image's trace and writes its header, with flags
 * (enum raw_heap_flags), and mappings.  0, or -1 said. */
int heap_start_trace(const char *out, int root, uint32_t flags);
/* The trace's end: the hooks still writing waited for, the lost count and
 * the end record written, the file cut to its size.  Once the state is no
 * longer HEAP_RUNNING.  Not signal-safe. */
void heap_end_trace(void);

#pragma GCC visibility pop

#endif
