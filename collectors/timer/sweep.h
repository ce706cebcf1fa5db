/* sweep.h - samples for threads the CPU timers miss: a thread of the
 * library's own that asks for them (sweep.c; the pass over the threads is
 * threads_sweep, threads.h)
 */
#ifndef PROFVIEW_TIMER_SWEEP_H
#define PROFVIEW_TIMER_SWEEP_H

#include <stdint.h>

/* Starts the thread that asks for a sample of every registered thread
 * whose CPU clock ran on for long without one (POSIX timers only).  Returns 0
 * or -1.  Not signal-safe. */
int sweep_start(uint64_t period_ns);
/* Stops it and waits for it.  Returns the samples it asked for.  Not
 * signal-safe. */
uint64_t sweep_stop(void);
/* The CPU time its thread used so far, 0 when it is not running.  Not
 * signal-safe. */
uint64_t sweep_cpu_ns(void);

#endif
