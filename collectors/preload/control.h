/* control.h - pausing and resuming sampling: the control signal, the
 * start after --delay, and the thread that also releases the trace's
 * memory (writer_release) (control.c, in the preload library); what a
 * pause does is the host's (host.h: control_initial, control_apply)
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
/* Starts the library's thread "profview-ctl": it toggles sampling when the
 * signal comes, resumes at the start time, ends sampling at stop_ns, and
 * releases the trace's memory a few times a second.  Also in the child of
 * a fork.  Returns 0 or -1.  Not signal-safe. */
int control_start(void);
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
