/* control.h - pausing and resuming sampling: the control signal, the
 * start after --delay, the end at --duration, looked at where the host
 * samples (control_poll), and the library's thread for the work that
 * needs one (control.c, in the preload library); what a pause does is
 * the host's (host.h: control_initial, control_apply)
 */
#ifndef PROFVIEW_PRELOAD_CONTROL_H
#define PROFVIEW_PRELOAD_CONTROL_H

#include <signal.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* What sampling is to be. */
enum control_how {
	CONTROL_RESUME = 0,
	CONTROL_PAUSE = 1,
	CONTROL_END = 2,  /* paused for good: --duration is over */
};

/* Reads the control signal and the start time from the environment
 * (collect-env.h), starts paused when the start is still to come (or
 * ended when stop_ns, if not 0, is past), and takes the control signal
 * when the program has left it at its default and it is not
 * profiler_signal.  Call before the first thread is registered.  Not
 * signal-safe. */
void control_init(int profiler_signal, uint64_t stop_ns);
/* Looks at the control word and the clock (only when a start or an end
 * is due): the host's control_apply with what sampling should be now
 * (enum control_how, returned), and the line about a pause or a resume
 * asked for, once for the run.  The host calls it where it samples (the
 * timer's handler at each sample, the heap's sampler when a countdown
 * crosses zero); the control signal's handler calls it too.
 * Signal-safe. */
int control_poll(void);
/* After the host wrote records: the trace's written memory released
 * (writer_release) once a megabyte was written since the last release.
 * Signal-safe. */
void control_release_due(void);
/* Starts the library's thread "profview-ctl", for a host whose work needs
 * a thread (host.h: control_deferred): it does that work when due, looks
 * at the control word as it wakes (control_poll), releases the trace's
 * memory a few times a second and faults in the pages the trace and the
 * stack table will use.  Pausing, resuming, the start and the end need no
 * thread.  Also in the child of a fork.  Returns 0 or -1.  Not
 * signal-safe. */
int control_start(void);
/* In the child of a fork: the parent's thread is not there (the child
 * starts its own, if it needs one).  Not signal-safe. */
void control_forget(void);
/* Stops that thread and waits for it.  Not signal-safe. */
void control_stop(void);
/* The CPU time the control thread used so far, 0 when it is not
 * running.  Not signal-safe. */
uint64_t control_cpu_ns(void);
/* For the interposed sigaction: is sig the control signal, whose
 * action the library holds?  Then control_sigaction answers in its place:
 * SIG_DFL or SIG_IGN are noted as the program's and ours stays; a handler
 * of the program's own is installed, and the signal no longer toggles
 * sampling (one line on stderr says so).  control_owns is signal-safe,
 * control_sigaction not. */
int control_owns(int sig);
/* Does the default action of sig end the process (not ignore, stop or
 * continue it)?  Signal-safe. */
int control_default_kills(int sig);
int control_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* The libc sigaction, past the interposed one.  Signal-safe once it has
 * been called (control_init does). */
int control_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* The interposed signal() of both libraries: for a signal the library
 * holds (held(sig)), signal() said as a sigaction with SA_RESTART, set
 * through the library's own sigaction; else libc's signal().  Not
 * signal-safe. */
sighandler_t control_signal(int sig, sighandler_t handler, int (*held)(int),
			    int (*set)(int, const struct sigaction *, struct sigaction *));
/* In the constructor, once the library has its handler: lets through the
 * control signal the launcher or an exec held (blocked) until then.  Not
 * signal-safe. */
void control_unhold(void);

#pragma GCC visibility pop

#endif
