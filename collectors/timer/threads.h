/* threads.h - the registry of the program's threads: their timers, their
 * RAW_THREAD and RAW_THREAD_EXIT records, and the pass of the sweeper over
 * them (threads.c); the library's own helper threads are helper.h's
 *
 * Functions marked signal-safe may run in the sampling handler: they take
 * no lock, allocate nothing and never block.
 */
#ifndef PROFVIEW_TIMER_THREADS_H
#define PROFVIEW_TIMER_THREADS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "helper.h"

/* Reads /proc/self/task/TID/FILE into buf (NUL-terminated, at most size
 * - 1 bytes); returns the bytes read, or -1.  Not signal-safe. */
ssize_t threads_read_task_file(pid_t tid, const char *file, char *buf, size_t size);

struct preload_thread_view {
	pid_t tid;
	uintptr_t stack_lo, stack_hi; /* 0, 0 when unknown */
	uint64_t since_ns;    /* monotonic time it was registered */
	uintptr_t pthread;    /* its pthread_t, 0 when unknown (found running) */
	int open;             /* its profiled stretch is open (control-timer.c) */
};
/* Copies up to cap registered threads into v; returns how many.  Not
 * signal-safe (the registry's lock). */
size_t preload_threads(struct preload_thread_view *v, size_t cap);

/* One pass over the registry (sweep.c): asks for a sample of each thread
 * that is running or ready to run and used more than threshold_ns of CPU
 * time since its last signal.  Returns how many were asked for; the
 * registered threads in *nthreads, and in *watched those it looked at
 * (those with a perf event it did not: it samples them).  Not
 * signal-safe. */
size_t threads_sweep(uint64_t threshold_ns, size_t *nthreads, size_t *watched);
/* Would a pass look at any thread: is there a registered thread without
 * a perf event, or whose event the program closed?  Not signal-safe. */
int threads_sweep_wanted(void);

#pragma GCC visibility push(hidden)

/* Write a RAW_THREAD / RAW_THREAD_EXIT record (waiting for space);
 * cpu_base is the thread's CPU time when profiling started for it.  The
 * exit record's system time is read then (getrusage for the calling
 * thread, /proc for another).  Not signal-safe. */
void threads_write_thread(pid_t tid, const char name[16], int64_t cpu_base);
void threads_write_exit(pid_t tid, const struct preload_seen *seen, int64_t cpu_ns);
/* The calling thread's own record, from its handler, without waiting for
 * space: a RAW_THREAD record with its name now (open 1: its profiled
 * stretch starts at CPU time cpu_ns) or a RAW_THREAD_EXIT (open 0: it ends
 * there, its system time read now).  Signal-safe. */
void threads_write_own(int open, int64_t cpu_ns);
/* The same exit record at the end of the trace, as the image ends without
 * its destructors: in the space kept for the end (WRITER_FINAL), the system
 * time known only for the calling thread (RAW_UNKNOWN for another).
 * Signal-safe. */
void threads_write_exit_final(pid_t tid, const struct preload_seen *seen, int64_t cpu_ns);
/* The calling thread's user and system time, as getrusage(RUSAGE_THREAD)
 * gives them (the kernel scales its tick samples of either to the
 * thread's runtime), in nanoseconds.  Returns 0 or -1.  Signal-safe. */
int threads_rusage(int64_t *user_ns, int64_t *sys_ns);
/* The calling thread's context switches, voluntary and involuntary
 * (getrusage).  Returns 0 or -1.  Signal-safe. */
int threads_switches(int64_t *switches);
/* With the registry locked: e's timer as its handler left it, a POSIX
 * timer in place of its perf event if the handler moved it (engine_move;
 * its event closed then).  Not signal-safe. */
void threads_settle(struct preload_entry *e);
/* The name of thread tid of this process, "" if unknown.  Not
 * signal-safe. */
void threads_read_comm(pid_t tid, char name[16]);
/* Registers the calling thread: stack bounds, frame buffer, RAW_THREAD
 * record, timer, and the key whose destructor unregisters it.  Not
 * signal-safe. */
void threads_register(void);
/* Gives back a thread's frame buffer (NULL: nothing). */
void threads_frames_free(uint64_t *frames);
/* The key destructor: runs when a registered thread exits.  Not
 * signal-safe. */
void threads_exit(void *unused);
/* Timers for the threads that were running before we started (attached:
 * the calling one too); at a process's start, /proc/self/task is read only
 * if the C library says a thread was made (__libc_single_threaded).  Not
 * signal-safe. */
void threads_adopt_existing(void);
/* A timer for thread tid of this process, found running (attach.c's
 * thread: one created after the attach).  0 or -1.  Not signal-safe. */
int threads_adopt(pid_t tid);
/* Is tid one of the library's own threads?  Not signal-safe. */
int threads_own(pid_t tid);

#pragma GCC visibility pop

#endif
