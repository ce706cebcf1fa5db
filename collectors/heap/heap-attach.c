/* heap-attach.c - libprofview-heap.so loaded into a running process
 * (collect-heap -p)
 *
 * collect-heap loads the library with dlopen, called by one thread it
 * stops (collectors/launch/inject.c), and calls profview_heap_attach there
 * with its settings, collect-env.h's names one a line.  The library is not
 * in the program's lookup scope, so nothing reaches its entry points by
 * itself: the GOT entries of the allocator's functions (got.c) of every
 * loaded object but the library are rewritten to them, and the allocator
 * they call is the one those entries held (glibc's, or an allocator the
 * program was linked or preloaded with), not the next in the lookup order.
 * Objects loaded later are found by the library's thread
 * ("profview-heapat"), which looks at the loader's count of loads every
 * HEAP_ATTACH_POLL_MS and rewrites the entries of the new ones: an
 * object's allocations in its first HEAP_ATTACH_POLL_MS (its constructors'
 * among them) are not seen.
 *
 * The trace is a launched one's (same file family, permissions, header),
 * its header flagged RAW_HEAP_SINCE_ATTACH: the blocks allocated before
 * the attach are unknown to the table of sampled blocks, so their frees
 * and reallocs pass through unrecorded, and what is in use is what was
 * allocated since.
 *
 * Two FIFOs of collect-heap's: the library's lines go to one; when
 * collect-heap closes the other (--duration, ^C, or it died), the thread
 * writes every GOT entry back (read back: a line says how many differ),
 * ends the trace with its end record and closes both.  The library stays
 * loaded, dormant: a call still inside an entry point goes to the
 * allocator, a block allocated while attached is freed by the allocator
 * itself, and a later attach starts it again.  A fork's child gets its GOT
 * back at once (pthread_atfork, registered at the first attach and doing
 * nothing while not attached) and is not profiled.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collect-env.h"
#include "got.h"
#include "heap.h"
#include "helper.h"
#include "mappings.h"
#include "notice.h"
#include "preload.h"
#include "pyframes.h"
#include "stacktab.h"
#include "writer.h"

#define HEAP_ATTACH_POLL_MS 10
#define HEAP_ATTACH_RELEASE_NS 250000000ull

/* What profview_heap_attach returns (collect-attach.c says each). */
enum {
	HEAP_ATTACH_OK = 0,
	HEAP_ATTACH_BUSY = 1,     /* an attach is running (another collect-heap -p) */
	HEAP_ATTACH_BAD = 2,      /* settings unreadable, or the pipes cannot be opened */
	HEAP_ATTACH_FAILED = 3,   /* profiling could not start (said on the pipe) */
};

static int heap_attach_in = -1, heap_attach_out = -1;
static _Atomic int heap_attach_busy;
static _Atomic int heap_attached;      /* the GOT is ours: a fork's child puts it back */
static int heap_attach_forks;          /* the atfork handlers are registered */
static struct got_state heap_attach_got;
static unsigned long long heap_attach_adds;

static const struct got_hook heap_attach_hooks[] = {
	{ "malloc", (void *)heap_hook_malloc },
	{ "free", (void *)heap_hook_free },
	{ "calloc", (void *)heap_hook_calloc },
	{ "realloc", (void *)heap_hook_realloc },
	{ "reallocarray", (void *)heap_hook_reallocarray },
	{ "posix_memalign", (void *)heap_hook_posix_memalign },
	{ "aligned_alloc", (void *)heap_hook_aligned_alloc },
	{ "memalign", (void *)heap_hook_memalign },
	{ "valloc", (void *)heap_hook_valloc },
	{ "pvalloc", (void *)heap_hook_pvalloc },
};
#define HEAP_ATTACH_NHOOKS (sizeof(heap_attach_hooks) / sizeof(heap_attach_hooks[0]))

/* The definition the program's GOT entries of name hold (got_bound), or
 * the global scope's when none is bound yet; never one of ours. */
static void *heap_attach_next(const char *name)
{
	uintptr_t v = (uintptr_t)got_bound(name, &heap);

	if (v == 0 || (v >= heap.own_lo && v < heap.own_hi))
		v = (uintptr_t)dlsym(RTLD_DEFAULT, name);
	return v >= heap.own_lo && v < heap.own_hi ? NULL : (void *)v;
}

/* The allocator the entry points call: what the GOT held.  0, or -1 said
 * when one that cannot be done without is missing. */
static int heap_attach_allocator(void)
{
	struct heap_real r;

	r.malloc = (void *(*)(size_t))heap_attach_next("malloc");
	r.calloc = (void *(*)(size_t, size_t))heap_attach_next("calloc");
	r.realloc = (void *(*)(void *, size_t))heap_attach_next("realloc");
	r.free = (void (*)(void *))heap_attach_next("free");
	r.posix_memalign = (int (*)(void **, size_t, size_t))heap_attach_next("posix_memalign");
	r.aligned_alloc = (void *(*)(size_t, size_t))heap_attach_next("aligned_alloc");
	r.memalign = (void *(*)(size_t, size_t))heap_attach_next("memalign");
	r.valloc = (void *(*)(size_t))heap_attach_next("valloc");
	r.pvalloc = (void *(*)(size_t))heap_attach_next("pvalloc");
	if (r.malloc == NULL || r.calloc == NULL || r.realloc == NULL || r.free == NULL ||
	    r.memalign == NULL) {
		preload_warn("profiling disabled: the process's malloc, calloc, realloc, free or "
			     "memalign cannot be found");
		return -1;
	}
	heap_use_allocator(&r);
	return 0;
}

static int heap_attach_count_adds(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(unsigned long long *)data = info->dlpi_adds;
	return 1;
}

/* The loader's count of objects loaded so far. */
static unsigned long long heap_attach_loads(void)
{
	unsigned long long adds = 0;

	dl_iterate_phdr(heap_attach_count_adds, &adds);
	return adds;
}

/* The GOT entries of every object not rewritten yet (all at the start,
 * then those of objects loaded since).  0, or -1 said. */
static int heap_attach_patch(void)
{
	heap_attach_adds = heap_attach_loads();
	if (got_patch(&heap_attach_got, heap_attach_hooks, HEAP_ATTACH_NHOOKS, &heap) < 0) {
		preload_warn("cannot rewrite the allocator's GOT entries: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Every entry back as it was.  A line when one could not be. */
static void heap_attach_restore(void)
{
	size_t bad;

	atomic_store(&heap_attached, 0);
	bad = got_restore(&heap_attach_got);
	if (bad > 0)
		preload_warn("%zu of the allocator's GOT entries could not be put back as they were "
			     "(rewritten by something else meanwhile): calls through them still go "
			     "through the library, which passes them on", bad);
}

static void heap_attach_release(void);

/* ---- fork: the child is not profiled, and gets its GOT back ---- */

/* The mappings' lock was taken by the fork's prepare (which the lock
 * itself serialises), whatever the end does meanwhile. */
static int heap_attach_locked;

static void heap_attach_prepare(void)
{
	if (atomic_load(&heap_attached)) {
		mappings_atfork(0);
		heap_attach_locked = 1;
	}
}

static void heap_attach_parent(void)
{
	if (heap_attach_locked) {
		heap_attach_locked = 0;
		mappings_atfork(1);
	}
}

static void heap_attach_child(void)
{
	if (heap_attach_locked) {
		heap_attach_locked = 0;
		mappings_atfork(2);
	}
	if (!atomic_load(&heap_attached))
		return;
	atomic_store(&heap.state, HEAP_DISABLED);
	atomic_store(&heap.inflight, 0);
	heap_tls.tid = 0;
	writer_forget();
	heap_attach_restore();
	/* (the FIFOs are collect-heap's and the parent's; the child may be
	 * attached to on its own) */
	heap_attach_release();
}

/* ---- the attach and its end ---- */

/* The channel to collect-heap closed and the settings dropped: the
 * library is free for the next attach. */
static void heap_attach_release(void)
{
	atomic_store(&notice_fd, STDERR_FILENO);
	preload_settings = NULL;
	if (heap_attach_in >= 0)
		close(heap_attach_in);
	if (heap_attach_out >= 0)
		close(heap_attach_out);
	heap_attach_in = heap_attach_out = -1;
	atomic_store(&heap_attach_busy, 0);
}

/* The end: the GOT put back, the trace ended (unless the process's exit
 * did already), the library dormant (HEAP_OFF: a call still in an entry
 * point looks again at its next block, so a later attach samples it). */
static void heap_attach_stop(void)
{
	int running = HEAP_RUNNING;

	heap_attach_restore();
	if (atomic_compare_exchange_strong(&heap.state, &running, HEAP_OFF)) {
		heap_tls.busy++;
		heap_end_trace();
		heap_tls.busy--;
	}
	stacktab_release();
	writer_forget();
}

static void *heap_attach_main(void *unused)
{
	uint64_t release = preload_now() + HEAP_ATTACH_RELEASE_NS;

	(void)unused;
	heap_tls.busy++; /* never sampled */
	for (;;) {
		struct pollfd p = { heap_attach_in, POLLIN, 0 };
		int r = poll(&p, 1, HEAP_ATTACH_POLL_MS);

		/* collect-heap closed its end, or wrote: either ends it */
		if (r > 0 || (r < 0 && errno != EINTR))
			break;
		if (heap_attach_loads() != heap_attach_adds) {
			preload_own_begin();
			mappings_refresh();
			heap_attach_patch();
			preload_own_end();
		}
		if (preload_now() >= release) {
			writer_release();
			release = preload_now() + HEAP_ATTACH_RELEASE_NS;
		}
	}
	heap_attach_stop();
	heap_attach_release();
	heap_tls.busy--;
	return NULL;
}

/* The trace started as a launched one's, from the settings.  0, or -1
 * said. */
static int heap_attach_start(void)
{
	const char *rate_env = preload_setting(COLLECT_ENV_HEAP_RATE);
	const char *out = preload_setting(COLLECT_ENV_OUTPUT);
	long long rate = rate_env != NULL ? atoll(rate_env) : 0;

	if (atomic_load(&heap.state) == HEAP_RUNNING) {
		preload_warn("the process runs under collect-heap already");
		return -1;
	}
	if (heap_resolve() != 0 || mappings_own_code(&heap.own_lo, &heap.own_hi) != 0 ||
	    heap_attach_allocator() != 0)
		return -1;
	heap.rate = (double)(collect_env_rate_ok(rate) ? rate : COLLECT_RATE_DEFAULT);
	heap.inherit = 0;
	heap.tailed = 0;
	atomic_store(&heap.samples, 0);
	atomic_store(&heap.lost, 0);
	atomic_store(&heap.paused, 0);
	atomic_store(&heap.ended, 0);
	heap_forget_blocks();
	heap.trace_gen++;
	heap_tls.tid = 0;
	if (heap_table_make() != 0)
		return -1;
	mappings_use_cfi();
	if (out == NULL || out[0] != '/' || heap_start_trace(out, 1, RAW_HEAP_SINCE_ATTACH) != 0)
		return -1;
	stacktab_init();
	pyframes_init(); /* a CPython program's frames in its stacks */
	if (!heap_attach_forks) {
		if (pthread_atfork(heap_attach_prepare, heap_attach_parent, heap_attach_child) != 0) {
			preload_warn("profiling disabled: cannot follow fork");
			writer_forget();
			return -1;
		}
		heap_attach_forks = 1;
	}
	atomic_store(&heap.state, HEAP_RUNNING);
	atomic_store(&heap_attached, 1);
	if (heap_attach_patch() != 0) {
		heap_attach_stop();
		return -1;
	}
	return 0;
}

/* Called by collect-heap in a thread it stopped.  The thread's errno is
 * collect-heap's to keep. */
HEAP_EXPORT int profview_heap_attach(const char *settings)
{
	pthread_t thread;
	int ret = HEAP_ATTACH_OK;

	if (atomic_exchange(&heap_attach_busy, 1))
		return HEAP_ATTACH_BUSY;
	if (preload_settings_take(settings) != 0)
		goto bad;
	heap_attach_out = preload_attach_fifo("PROFVIEW_ATTACH_OUT", O_WRONLY);
	heap_attach_in = preload_attach_fifo("PROFVIEW_ATTACH_IN", O_RDONLY);
	if (heap_attach_in < 0 || heap_attach_out < 0)
		goto bad;
	atomic_store(&notice_fd, heap_attach_out);
	heap_tls.busy++;
	preload_own_begin();
	if (heap_attach_start() != 0) {
		ret = HEAP_ATTACH_FAILED;
	} else if (threads_start_helper(&thread, heap_attach_main, "profview-heapat", 64 << 10, 1) != 0) {
		preload_warn("cannot start a thread");
		heap_attach_stop();
		ret = HEAP_ATTACH_FAILED;
	}
	preload_own_end();
	heap_tls.busy--;
	if (ret != HEAP_ATTACH_OK)
		heap_attach_release();
	return ret;
bad:
	heap_attach_release();
	return HEAP_ATTACH_BAD;
}
