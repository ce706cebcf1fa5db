/* sigs.h - the signals: the one the timers send, the handlers of the
 * termination signals that end the trace first, and the interposed
 * signal functions that keep the program's actions apart from ours
 * (sigs.c)
 */
#ifndef PROFVIEW_TIMER_SIGS_H
#define PROFVIEW_TIMER_SIGS_H

/* (The signal the timers send is preload_signal, preload-state.h.) */

#pragma GCC visibility push(hidden)

#define SIGS_NTERM 5
/* The termination signals whose default action ends the trace first. */
extern const int sigs_term_signals[SIGS_NTERM];
/* The signal to sample with (see sigs.c), or 0 when there is none.  Not
 * signal-safe. */
int sigs_pick_signal(void);
/* Our handler for each termination signal whose action is the default.
 * Not signal-safe. */
void sigs_hook_term(void);
/* A signal of the program's own (not from our timers) came to the
 * profiler's signal while the program's action for it is the default:
 * ends the trace, restores the default action and raises sig again, so
 * that the process ends by it as it would have without the collector
 * once the handler returns.  Signal-safe; call it from the handler. */
void sigs_take_default(int sig);
/* The host's exec members (host.h): the sampling signal, held across an
 * exec of an image that loads the library again (signal-safe), and the
 * program's action for it put back before an exec (undo 0) and ours again
 * after one that failed (undo 1) (not signal-safe). */
int sigs_exec_signal(void);
void sigs_exec_prepare(int undo);

#pragma GCC visibility pop

#endif
