/* control.h - pausing and resuming sampling: the control signal, the
 * start after --delay, and the thread that also releases the trace's
 * memory (writer_release) (control.c)
 *
 * The state is a generation count: odd while sampling is paused, even
 * while it runs, one more at each change.  control_paused is inline so
 * that the handler pays one load for it (sample.c's control_sample_ok
 * reads it the same way).
 */
#ifndef PROFVIEW_TIMER_CONTROL_H
#define PROFVIEW_TIMER_CONTROL_H

#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>

/* Odd while sampling is paused. */
extern _Atomic uint64_t control_gen;

/* Is sampling paused?  Signal-safe. */
static inline int control_paused(void)
{
	return (int)(atomic_load(&control_gen) & 1);
}

/* Reads the control signal and the start time from the environment
 * (collect-env.h), starts paused when the start is still to come, and
 * takes the control signal when the program has left it at its default.
 * Call before the first thread is registered.  Not signal-safe. */
void control_init(void);
/* Starts the library's thread "profview-ctl": it toggles sampling when the
 * signal comes, resumes at the start time, and releases the trace's
 * memory a few times a second.  Also in the child of a fork.  Returns 0
 * or -1.  Not signal-safe. */
int control_start(void);
/* Stops that thread and waits for it.  Not signal-safe. */
void control_stop(void);
/* For the interposed sigaction (sigs.c): is sig the control signal, whose
 * action the library holds?  Then control_sigaction answers in its place:
 * SIG_DFL or SIG_IGN are noted as the program's and ours stays; a handler
 * of the program's own is installed, and the signal no longer toggles
 * sampling (one line on stderr says so).  control_owns is signal-safe,
 * control_sigaction not. */
int control_owns(int sig);
int control_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* In the constructor, once the library has its handler: lets through the
 * control signal collect-timer or an exec held (blocked) until then.  Not
 * signal-safe. */
void control_unhold(void);

#endif
