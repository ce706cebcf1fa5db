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
	int named;            /* its RAW_THREAD record is written */
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
	int control_running;        /* the control thread is started */
};

#pragma GCC visibility push(hidden)

extern struct heap_global heap;
extern struct heap_real heap_real;
extern __thread struct heap_tls heap_tls __attribute__((tls_model("initial-exec")));

/* heap.c */

/* Looks up the real allocator (once).  Returns 0, or -1 while it is being
 * looked up or when it cannot be found. */
int heap_resolve(void);

#pragma GCC visibility pop

#endif
