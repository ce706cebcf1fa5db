/* preload.h - what the files shared by the two preload libraries need of
 * the library they are in
 *
 * writer.c, stacktab.c, mappings.c, cfi.c, dlhook.c and notice.c are built into
 * libprofview-timer.so and libprofview-heap.so; each library defines what
 * is declared here (libprofview-timer.so in sample.c and preload.c,
 * libprofview-heap.so in heap-start.c).  The library's other files each
 * have a header of their own: writer.h, stacktab.h, mappings.h, cfi.h,
 * engine.h, threads.h, sample.h, sigs.h, control.h, wall.h, sweep.h, and
 * preload-state.h for the state that preload.c, sample.c, threads.c and
 * sigs.c share; ids.c and dlhook.c only interpose libc functions.
 *
 * Nothing here is exported from the library: it is built with
 * -fvisibility=hidden and only the interposed libc functions (threads.c,
 * sigs.c, dlhook.c, ids.c) are visible.  Functions marked "signal-safe"
 * may be called from the sampling handler: they take no locks, allocate
 * nothing and never block.
 */
#ifndef PROFVIEW_TIMER_PRELOAD_H
#define PROFVIEW_TIMER_PRELOAD_H

#include <stdint.h>

/* The launcher's name ("collect-timer"), and the library's file name
 * without ".so", for the lines and the checks of the files shared. */
extern const char preload_collector[];
extern const char preload_library[];

/* Monotonic time in nanoseconds.  Signal-safe. */
uint64_t preload_now(void);

/* Writes one line to stderr that begins with the collector's name and the
 * process's pid and program (notice.c).  Not signal-safe (uses
 * vsnprintf); used only outside the handler. */
void preload_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Is no sampling handler of ours running right now?  A handler that starts
 * after this returned 1 sees every pointer published (seq_cst) before the
 * call.  Signal-safe. */
int preload_handlers_idle(void);
/* Is this process being profiled right now?  Signal-safe. */
int preload_running(void);
/* Writes a RAW_COLLECTOR record: the library's CPU time since the last
 * one (its start and end, making unwind rows, the handler with --stats).
 * At the end and before an exec.  Not signal-safe. */
void preload_write_cost(void);

#endif
