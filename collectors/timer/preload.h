/* preload.h - internals shared by the files of libprofview-timer.so
 *
 * Nothing here is exported from the library: it is built with
 * -fvisibility=hidden and only the interposed libc functions (threads.c,
 * sigs.c, dlhook.c) are visible.  Functions marked "signal-safe" may be
 * called from the SIGPROF handler: they take no locks, allocate nothing and
 * never block.
 */
#ifndef PROFVIEW_TIMER_PRELOAD_H
#define PROFVIEW_TIMER_PRELOAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "raw.h"

#define PRELOAD_PREFIX "collect-timer: "

/* sample.c */

/* Monotonic time in nanoseconds.  Signal-safe. */
uint64_t preload_now(void);

/* preload.c */

/* Writes one line to stderr, prefixed with PRELOAD_PREFIX.  Not signal-safe
 * (uses vsnprintf); used only outside the handler. */
void preload_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* writer.c - the trace file, written through a growing MAP_SHARED mapping */

/* How writer_reserve may get space: a signal handler's sample never waits
 * and never takes the tail kept for the end of the trace; WRITER_WAIT grows
 * the file as needed (not signal-safe); WRITER_FINAL may take the tail but
 * never grows the file or waits (signal-safe: the end of the trace written
 * from a signal handler). */
enum { WRITER_NOWAIT = 0, WRITER_WAIT = 1, WRITER_FINAL = 2 };

/* Opens (creates) this process image's trace.  path is absolute.  With
 * use_given, path itself when it is an empty regular file (the launcher
 * creates it); else, or when it is not empty, the first free name of
 * "<stem>.<pid>.raw", "<stem>.<pid>.1.raw", "<stem>.<pid>.2.raw"... created
 * with O_EXCL, where stem is path without a final ".raw".  Returns 0 or -1
 * (errno set).  The file stays open until writer_init. */
int writer_open(const char *path, int use_given);
/* The name writer_open chose.  Valid until the next writer_open. */
const char *writer_path(void);
/* Reserves address space, maps the first chunk of the file and writes the
 * header, the architecture after it (a version 2 header) and the exe path,
 * then closes the file: later growth reopens it by path and checks it is
 * the same file.  tailed: collect-timer reads the launcher's file as it is
 * written and frees the page cache of what it has read (writer_release
 * then leaves that to it).  Returns 0 or -1 (errno set); on failure
 * nothing is left (a file writer_open created is removed). */
int writer_init(const struct raw_header *header, const struct raw_arch *arch, const char *exe,
		int tailed);
/* Reserves size bytes (a multiple of 8, at most 1 MiB) for records and
 * returns where to write them, or NULL when there is no space; wait is one
 * of WRITER_NOWAIT (signal-safe; may grow the file, but only when no other
 * thread is growing it), WRITER_WAIT and WRITER_FINAL (see above).  Every
 * byte reserved must be published, as one record or several: until then
 * the memory of the trace from there on cannot be released. */
void *writer_reserve(uint32_t size, int wait);
/* Makes a record written at rec valid: stores its type and size word last,
 * with release order.  The record is not touched again.  Signal-safe. */
void writer_publish(void *rec, uint32_t type, uint32_t size);
/* Drops the pages of the trace that are written (every record in them
 * published) from the mapping, so that the program's memory does not grow
 * with its trace, and (unless tailed) from the page cache once written
 * back; their place in the address space can then be used again.  Call it
 * a few times a second.  Not signal-safe; never blocks for long. */
void writer_release(void);
/* Truncates the file to the bytes used.  Call only when no other writer can
 * run any more.  Signal-safe.  Returns 0 or -1. */
int writer_finish(void);
/* Drops the mapping without touching the file (fork child). */
void writer_forget(void);
/* Keeps the trace open from now on: the program is about to change its
 * user id, after which it may not open the file any more.  Not
 * signal-safe. */
void writer_keep(void);
/* The errno of the last failed attempt to grow the trace, 0 if none.
 * Signal-safe. */
int writer_error(void);

/* stacktab.c - stack deduplication */

/* Allocates the hash table and the frame arena.  Returns 0 or -1. */
int stacktab_init(void);
/* Returns the id of the stack frames[0..n), writing a RAW_STACK record the
 * first time it is seen, or 0 when the stack cannot be stored (table or
 * arena full, slot being filled by another thread, no trace space): the
 * caller then writes the frames inline.  Signal-safe. */
uint32_t stacktab_intern(const uint64_t *frames, uint32_t n);
/* Forgets every stack (a fork child starts a new trace).  Call only when no
 * handler can run. */
void stacktab_reset(void);

/* sample.c and sigs.c, for the other files */

/* Is no SIGPROF handler of ours running right now?  A handler that starts
 * after this returned 1 sees every pointer published (seq_cst) before the
 * call.  Signal-safe. */
int preload_handlers_idle(void);
/* Is this process being profiled right now? */
int preload_running(void);
/* The signal the timers send: SIGPROF, or a real-time signal when the
 * program uses SIGPROF.  Signal-safe. */
int preload_signal(void);

/* mappings.c - RAW_MAPPING records and the table of executable ranges */

/* Writes a RAW_MAPPING record for the executable mappings in
 * /proc/self/maps, with build ids: all of them, or with only_new those not
 * written by an earlier call (a line that went away and came back counts as
 * new).  Also rebuilds the table mappings_is_code reads.  Not signal-safe;
 * serialized by its own lock.  Returns the number of records written or
 * -1. */
int mappings_write(int only_new);
/* Around fork: phase 0 (prepare) takes the lock, 1 (parent) releases it,
 * 2 (child) makes a fresh one, so a fork while another thread writes
 * mappings cannot leave the child's lock held forever. */
void mappings_atfork(int phase);
/* Calls mappings_write(1) if the dynamic loader has loaded an object since
 * the last mappings_write.  The collector's own work (preload_own_begin):
 * its samples are not the program's.  Not signal-safe. */
void mappings_refresh(void);
/* From now on every mappings_write also brings the unwind tables (cfi.h)
 * up to date, under the same lock. */
void mappings_use_cfi(void);
/* Does v point into an executable mapping, as of the last mappings_write?
 * Lock-free; signal-safe. */
int mappings_is_code(uintptr_t v);
/* Stores the [start, end) of up to cap mappings of /proc/self/maps in
 * ranges, in address order: the executable ones when executable is set,
 * else the writable private ones.  Returns how many. */
int mappings_ranges(uintptr_t (*ranges)[2], int cap, int executable);

/* engine.c - the timers that send each thread its SIGPROF */

enum engine_kind { ENGINE_POSIX = 0, ENGINE_PERF = 1 };

/* A thread's sampling timer: a perf event when fd >= 0, else a POSIX
 * timer. */
struct engine_timer {
	timer_t timer;
	int fd;
	uint64_t id;          /* PERF_EVENT_IOC_ID of the event */
	/* The event's ring buffer, where the kernel writes each overflow's
	 * mode and kernel call chain; NULL when it has none. */
	void *ring;
};

/* Chooses the engine: ENGINE_PERF when want is ENGINE_PERF and the calling
 * thread may open a task-clock perf event, else ENGINE_POSIX (with one line
 * on stderr when perf was wanted).  cookie is the sival_ptr of the POSIX
 * timers.  Returns the engine in use. */
int engine_init(int want, uint64_t period_ns, void *cookie);
/* Creates a disarmed timer for thread tid of this process; clock is its
 * CPU clock, for the POSIX engine (also used when a perf event cannot be
 * opened for that thread).  A perf event's first period is first_ns (a
 * random part of one period).  Returns 0 or -1. */
int engine_create(clockid_t clock, pid_t tid, uint64_t first_ns, struct engine_timer *t);
/* Arms it: a perf event for its first period, then every period; a POSIX
 * timer in tick mode, for a young thread (a signal at every tick that
 * finds the thread running). */
void engine_arm(struct engine_timer *t);
/* Turns a POSIX timer from tick mode to a signal every period of CPU
 * time, the first after first_ns (nothing for a perf event).
 * Signal-safe. */
void engine_mature(struct engine_timer *t, uint64_t first_ns);
/* Stops and frees it (an fd the program closed is left alone).  Its ring
 * buffer stays mapped: a handler may still read it. */
void engine_delete(struct engine_timer *t);
/* Unmaps a deleted timer's ring buffer (NULL: nothing), once no handler
 * can read it: its own thread, with our signal blocked, after its last
 * sample. */
void engine_unmap(void *ring);
/* Stops it without freeing it (sampling is paused), and arms it again, in
 * tick mode for a young thread, else from a random phase (first_ns) of a
 * period.  An fd the program closed is left alone. */
void engine_disarm(struct engine_timer *t);
void engine_rearm(struct engine_timer *t, int young, uint64_t first_ns);
/* Closes every perf event fd without touching the events' owners (the
 * child of a fork). */
void engine_forget(void);
/* Asks thread tid of process pid (ours) for a sample now: our signal,
 * queued with the request cookie.  Returns 0 or -1. */
int engine_request(pid_t pid, pid_t tid);
/* A one-shot POSIX timer on CLOCK_MONOTONIC that sends thread tid our
 * signal with the nudge cookie: a sample asked for at a set moment
 * (sweep.c).  Returns 0 or -1. */
int engine_nudge_create(pid_t tid, timer_t *timer);
/* Sets it to fire once, delay_ns from now.  Signal-safe. */
void engine_nudge(timer_t timer, uint64_t delay_ns);
/* In the handler, of one of our signals: did a nudge timer send it? */
int engine_is_nudge(const siginfo_t *si);
/* How the samples' system time is measured (enum raw_system_source):
 * RAW_SYSTEM_PERF when the perf events count system time and tell each
 * sample's mode, else RAW_SYSTEM_RUSAGE. */
int engine_system_source(void);
/* In the handler of a perf signal of timer t: the sample the event's
 * overflow wrote.  Returns 1 when it was taken in the kernel (its kernel
 * call chain, leaf first, in frames[0..*n), at most cap), 0 in user mode,
 * -1 when there is no record (no ring buffer, or none since the last
 * call).  Consumes what the ring holds.  Signal-safe. */
int engine_perf_sample(const struct engine_timer *t, uint64_t *frames, uint32_t cap, uint32_t *n);

/* In the handler: is this SIGPROF one of ours?  Returns 0 if not, else
 * the engine + 1; re-arms a perf event, with the whole period when first
 * (the thread's first perf signal).  Signal-safe. */
int engine_signal(const siginfo_t *si, int first);

/* wall.c - off-CPU samples for --clock=wall */

/* Starts the thread that samples the registered threads that are off CPU
 * every period of wall-clock time.  Returns 0 or -1. */
int wall_start(uint64_t period_ns, uint32_t stack_size);
/* Stops it and waits for it.  Returns the samples it wrote. */
uint64_t wall_stop(void);

/* sweep.c - samples for threads the CPU timers miss */

/* Starts the thread that asks for a sample of every registered thread
 * whose CPU clock ran on for long without one (POSIX timers only).  Returns 0
 * or -1. */
int sweep_start(uint64_t period_ns);
/* Stops it and waits for it.  Returns the samples it asked for. */
uint64_t sweep_stop(void);
/* One pass over the registry: asks for a sample of each thread that is
 * running or ready to run and used more than threshold_ns of CPU time
 * since its last signal.  Returns how many were asked for; the registered
 * threads in *nthreads. */
size_t threads_sweep(uint64_t threshold_ns, size_t *nthreads);

/* control.c - pausing and resuming sampling: the control signal, the
 * start after --delay, and the thread that also releases the trace's
 * memory (writer_release) */

/* Odd while sampling is paused (see control.h). */
extern _Atomic uint64_t control_gen;

/* Is sampling paused?  Signal-safe. */
static inline int control_paused(void)
{
	return (int)(atomic_load(&control_gen) & 1);
}

/* Reads the control signal and the start time from the environment
 * (collect-env.h), starts paused when the start is still to come, and
 * takes the control signal when the program has left it at its default.
 * Call before the first thread is registered. */
void control_init(void);
/* Starts the library's thread "profview-ctl": it toggles sampling when the
 * signal comes, resumes at the start time, and releases the trace's
 * memory a few times a second.  Also in the child of a fork.  Returns 0
 * or -1. */
int control_start(void);
/* Stops that thread and waits for it. */
void control_stop(void);
/* For the interposed sigaction (sigs.c): is sig the control signal, whose
 * action the library holds?  Then control_sigaction answers in its place:
 * SIG_DFL or SIG_IGN are noted as the program's and ours stays; a handler
 * of the program's own is installed, and the signal no longer toggles
 * sampling (one line on stderr says so). */
int control_owns(int sig);
int control_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* In the constructor, once the library has its handler: lets through the
 * control signal collect-timer or an exec held (blocked) until then. */
void control_unhold(void);

/* threads.c and sample.c, for wall.c */

/* Starts a thread of the library's own: not registered (no timer, no
 * samples), every signal blocked, named name; stack 0 for the default
 * size.  Returns 0 or -1. */
int threads_start_helper(pthread_t *thread, void *(*fn)(void *), const char *name, size_t stack,
			 int detached);
/* Reads /proc/self/task/TID/FILE into buf (NUL-terminated, at most size
 * - 1 bytes); returns the bytes read, or -1. */
ssize_t threads_read_task_file(pid_t tid, const char *file, char *buf, size_t size);

struct preload_thread_view {
	pid_t tid;
	uintptr_t stack_lo, stack_hi; /* 0, 0 when unknown */
	uint64_t since_ns;    /* monotonic time it was registered */
};
/* Copies up to cap registered threads into v; returns how many. */
size_t preload_threads(struct preload_thread_view *v, size_t cap);
/* Reads len bytes at addr of our own memory without faulting (see
 * sample.c); returns the bytes read.  Signal-safe. */
uint32_t preload_read_memory(void *dst, uintptr_t addr, uint32_t len);

#endif
