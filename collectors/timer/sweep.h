/* sweep.h - samples for threads the CPU timers miss: a thread of the
 * library's own that asks for them (sweep.c; the pass over the threads is
 * threads_sweep, threads.h)
 */
#ifndef PROFVIEW_TIMER_SWEEP_H
#define PROFVIEW_TIMER_SWEEP_H

#include <stdint.h>

/* Makes ready the thread that asks for a sample of every registered
 * thread whose CPU clock ran on for long without one: sweep_launch starts
 * it when its first pass is due (two periods from now), or
 * sweep_start_now at once.  Also in the child of a fork.  Returns 0.  Not
 * signal-safe. */
int sweep_start(uint64_t period_ns);
/* Starts the thread if its first pass is due at now (preload_now) and
 * would look at a thread (threads_sweep_wanted), once (a line on stderr
 * when it cannot).  Returns when to ask again: when the pass is due, if
 * that is later, or a tenth of a second on while every thread has its perf
 * event (not in an attached process); else 0.  Not signal-safe. */
uint64_t sweep_launch(uint64_t now);
/* Starts it now (no control thread to start it later).  Returns 0 or -1.
 * Not signal-safe. */
int sweep_start_now(void);
/* Stops it and waits for it; after this it is not started.  Returns the
 * samples it asked for.  Not signal-safe. */
uint64_t sweep_stop(void);
/* The CPU time its thread used so far, 0 when it is not running.  Not
 * signal-safe. */
uint64_t sweep_cpu_ns(void);

#endif
