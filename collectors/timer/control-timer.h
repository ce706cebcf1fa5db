/* control-timer.h - what a pause and a resume are in libprofview-timer.so
 * (control-timer.c): its side of the preload library's control
 * (control.h, host.h)
 *
 * The process's state is a generation count: odd while sampling is
 * paused, even while it runs, one more at each change (control_gen and
 * control_paused, preload-state.h, where the handler's files read it).
 * Each thread's own state is its profiled stretch (struct preload_seen's
 * open), which its handler closes and opens again as it sees a pause and
 * a resume.
 */
#ifndef PROFVIEW_TIMER_CONTROL_TIMER_H
#define PROFVIEW_TIMER_CONTROL_TIMER_H

#include <stdatomic.h>
#include <stdint.h>

#include "control.h"
#include "preload-state.h"

#pragma GCC visibility push(hidden)

/* The host's members (host.h): how sampling starts (not signal-safe),
 * the process's state changed (signal-safe), and the sweeper started
 * when its first pass is due (the control thread's, not signal-safe). */
void control_timer_initial(int how);
int control_timer_apply(int how);
uint64_t control_timer_deferred(uint64_t now);

/* In a thread's handler, with what sampling is to be (how, from
 * control_poll) and the thread's CPU clock now (cpu): may the thread be
 * sampled?  Paused: no, and the clock becomes its last sample (*last_cpu),
 * so that the time paused is in no weight; the first time, its stretch
 * (seen->open) ends with an exit record at its last sample.  Running
 * again, the first time: a thread record opens a new stretch at cpu, which
 * becomes its last sample, and this signal is not sampled either.  A
 * thread without seen is not recorded.  Signal-safe. */
int control_timer_thread(struct preload_seen *seen, int64_t *last_cpu, int64_t cpu, int how);

/* Closes the profiled stretch of the thread whose shared state is seen:
 * 1 if it was open, and the caller writes its exit record; a thread
 * without that state (it could not be allocated) is always open.  For
 * the end of a thread or of the trace.  Signal-safe. */
static inline int control_thread_close(struct preload_seen *seen)
{
	return seen == NULL || atomic_exchange(&seen->open, 0);
}

#pragma GCC visibility pop

#endif
