/* preload.h - the preload library's common ground: its clock, its
 * warning, its wait for the host's handlers, its count of the collector's
 * own work in a thread, and the mark of what it exports
 *
 * The library (libprofview-preload.a: writer.c, stacktab.c, mappings.c,
 * cfi.c, dlhook.c, control.c, helper.c, notice.c, procs.c and
 * preload-base.c here) is linked whole into libprofview-timer.so and
 * libprofview-heap.so; it reaches the library it is in only through
 * host.h.  Each of its files has a header of its own: writer.h,
 * stacktab.h, mappings.h, cfi.h, control.h, helper.h, notice.h, procs.h;
 * dlhook.c only interposes libc functions.
 *
 * Nothing of the library is exported: it is built with -fvisibility=hidden
 * and only the libc functions it interposes (dlhook.c's dlopen family,
 * control.c's exec family, procs.c's wait family) are visible;
 * PRELOAD_EXPORT marks them, and a host's.  Functions
 * marked "signal-safe" may be called from a sampling handler: they take no
 * locks, allocate nothing and never block.
 */
#ifndef PROFVIEW_PRELOAD_PRELOAD_H
#define PROFVIEW_PRELOAD_PRELOAD_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define PRELOAD_EXPORT __attribute__((visibility("default")))
/* A large static array of the library that a process's start does not
 * write (a table its samples fill, the buffer of a rare path) goes to
 * .lbss, which the linker puts after .bss: the small variables every
 * start writes then share a few pages rather than a page each between
 * the large arrays, and each page first written is a page fault.  Only
 * for what is zero at the start.  GCC's alone: clang (14) makes a named
 * section of zeros take room in the file. */
#if defined(__GNUC__) && !defined(__clang__)
#define PRELOAD_COLD __attribute__((section(".lbss")))
#else
#define PRELOAD_COLD
#endif

#pragma GCC visibility push(hidden)

#ifdef PRELOAD_CLOCK_SKEW
/* A unit test's build moves the library's time on without sleeping. */
extern _Atomic uint64_t PRELOAD_CLOCK_SKEW;
#endif

/* The settings of an attached process (collect-timer -p): "NAME=value"
 * strings with the names of collect-env.h, each ended by a NUL and the
 * last by two, copied from the attach call; NULL in a launched process.  preload_setting reads one: from them while
 * attached (NULL when not there: the program's environment is not ours),
 * else from the environment.  Not signal-safe. */
extern const char *preload_settings;
const char *preload_setting(const char *name);
/* An attach's settings, "NAME=value" one a line, copied and made
 * preload_settings.  0, or -1 when they do not fit.  Not signal-safe. */
int preload_settings_take(const char *s);
/* Opens the attach's FIFO whose path is setting name (the collector holds
 * the other ends: no open waits), or -1.  Not signal-safe. */
int preload_attach_fifo(const char *name, int flags);

/* Monotonic time in nanoseconds.  Inline, so that a handler pays no call
 * for it.  Signal-safe. */
static inline uint64_t preload_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec
#ifdef PRELOAD_CLOCK_SKEW
	       + PRELOAD_CLOCK_SKEW
#endif
		;
}

/* A timespec in nanoseconds.  Signal-safe. */
static inline int64_t preload_ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000ll + ts->tv_nsec;
}

/* The calling thread's id.  Signal-safe. */
static inline pid_t preload_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* Writes one line to stderr that begins with the collector's name and the
 * process's pid and program (notice.c).  Not signal-safe (uses
 * vsnprintf); used only outside handlers. */
void preload_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Waits until no handler of the host's is running (its handlers_idle),
 * looking every step_ns, for timeout_ns at most (preload-base.c).
 * Returns 0, or -1 when some handler was still running at the end.  Not
 * signal-safe (sleeps). */
int preload_quiesce(uint64_t timeout_ns, uint64_t step_ns);

/* > 0 while this thread does the collector's own work (recording new
 * mappings after a dlopen, the control thread, a host's start and end):
 * a host's sample or event taken then is the collector's, not the
 * program's (preload-base.c).  Read by handlers of the same thread. */
extern __thread int preload_own_depth __attribute__((tls_model("initial-exec")));

/* The collector's own work in this thread starts and ends.  The handler
 * runs on the same thread: a signal fence orders the count against the
 * work.  Signal-safe. */
static inline void preload_own_begin(void)
{
	preload_own_depth++;
	atomic_signal_fence(memory_order_seq_cst);
}

static inline void preload_own_end(void)
{
	atomic_signal_fence(memory_order_seq_cst);
	preload_own_depth--;
}

#pragma GCC visibility pop

#endif
