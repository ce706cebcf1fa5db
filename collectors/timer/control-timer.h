/* control-timer.h - what a pause and a resume are in libprofview-timer.so
 * (control-timer.c): its side of the preload library's control thread
 * (control.h, host.h)
 *
 * The state is a generation count: odd while sampling is paused, even
 * while it runs, one more at each change (control_gen and control_paused,
 * preload-state.h, where the handler's files read it).
 */
#ifndef PROFVIEW_TIMER_CONTROL_TIMER_H
#define PROFVIEW_TIMER_CONTROL_TIMER_H

#include <stdatomic.h>
#include <stdint.h>

#include "control.h"

#pragma GCC visibility push(hidden)

/* The host's members (host.h) for the control thread: how sampling
 * starts, a pause or resume of every thread, and the sweeper started when
 * its first pass is due.  Not signal-safe. */
void control_timer_initial(int how);
int control_timer_apply(int how);
uint64_t control_timer_deferred(uint64_t now);

#pragma GCC visibility pop

#endif
