/* sigs.c - the profiler's signal, the program's signal actions, and the
 * end of the trace when a signal ends the program
 *
 * If the program already uses SIGPROF (a handler, or ITIMER_PROF running) at
 * start, the profiler uses a free real-time signal instead (the highest
 * one with the default action that the thread does not block), with one
 * line on stderr, and leaves SIGPROF to the program.  If the program
 * installs a handler for the profiler's signal later, sigaction() and
 * signal() are answered as if it had been installed, ours stays in place,
 * and the signals that are not from our timers (kill, setitimer) are
 * passed on to the program's handler.
 *
 * Termination: a program that ends by a signal whose action is the default
 * (SIGINT from the terminal, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE) would leave
 * an unfinished trace, so for those signals, when the program has not set
 * an action of its own at start, a handler of ours writes the end of the
 * trace without taking locks, restores SIG_DFL and raises the signal
 * again: the program ends exactly as it would have.  sigaction() reports
 * SIG_DFL for them as long as our handler is there; a handler the program
 * installs replaces ours.  Crashes (SIGSEGV, SIGABRT...) and SIGKILL leave
 * the trace unfinished, with every record stored before.
 *
 * The profiler's signal sent by the program or anyone else (kill, raise,
 * an ITIMER_PROF timer the program arms after the start) while the
 * program's action for it is the default ends the process as it would
 * have without the collector (sigs_take_default): the collector's own
 * signals are told apart by their si_code and value (engine_signal).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "engine.h"
#include "lost.h"
#include "notice.h"
#include "preload-state.h"
#include "sample.h"
#include "sigs.h"
#include "threads.h"
#include "writer.h"

/* ---- the profiler's signal ---- */

static int preload_sigprof_in_use(const char **why)
{
	struct sigaction old;
	struct itimerval it;

	if (preload.real_sigaction(SIGPROF, NULL, &old) == 0 &&
	    ((old.sa_flags & SA_SIGINFO) ||
	     (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN))) {
		*why = "the program already has a SIGPROF handler";
		return 1;
	}
	if (getitimer(ITIMER_PROF, &it) == 0 &&
	    (it.it_value.tv_sec || it.it_value.tv_usec)) {
		*why = "the program already runs an ITIMER_PROF timer";
		return 1;
	}
	preload.app_action[0] = old;
	return 0;
}

/* The signal to sample with: SIGPROF, or when the program uses it, the
 * highest real-time signal whose action is the default and that this
 * thread does not block.  Returns 0 when there is none. */
int sigs_pick_signal(void)
{
	struct sigaction old;
	sigset_t mask;
	const char *why;

	if (!preload_sigprof_in_use(&why))
		return SIGPROF;
	pthread_sigmask(SIG_BLOCK, NULL, &mask);
	for (int sig = SIGRTMAX; sig >= SIGRTMIN; sig--) {
		if (sigismember(&mask, sig) == 1 || preload.real_sigaction(sig, NULL, &old) != 0 ||
		    (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		preload.app_action[0] = old;
		preload_warn("%s: sampling with signal %d (SIGRTMIN+%d) instead of SIGPROF",
			     why, sig, sig - SIGRTMIN);
		return sig;
	}
	preload_warn("profiling disabled: %s and no real-time signal is free", why);
	return 0;
}

/* ---- the end of the trace from a signal handler ---- */

const int sigs_term_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE };
/* Which of them carry our handler (bit per signal number). */
static _Atomic unsigned long preload_term_hooked;

/* Writes the end of the trace without locks: samples stop, handlers still
 * running get a moment to finish, then the lost count and the end record
 * go into the space kept for them.  The file is not cut to size (a thread
 * could still be writing a record): the reader ignores the zeros after the
 * end, and collect-timer cuts them.  Signal-safe. */
static void preload_end_from_signal(void)
{
	struct timespec ms = { 0, 1000000 };
	int expected = PRELOAD_RUNNING;

	if (atomic_exchange(&preload.ending, 1))
		return;
	if (!atomic_compare_exchange_strong(&preload.state, &expected, PRELOAD_STOPPED))
		return;
	for (int i = 0; i < 200 && atomic_load(&preload.inflight) != 0; i++)
		nanosleep(&ms, NULL);
	lost_write(WRITER_FINAL);
	preload_write_end(WRITER_FINAL, 0);
}

static void preload_on_term(int sig)
{
	struct sigaction dfl;
	int saved_errno = errno;

	if (atomic_load(&preload.state) == PRELOAD_RUNNING)
		preload_end_from_signal();
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	atomic_fetch_and(&preload_term_hooked, ~(1ul << sig));
	preload.real_sigaction(sig, &dfl, NULL);
	/* Pending until this handler returns (the signal is blocked in it),
	 * then the default action. */
	syscall(SYS_tgkill, (long)getpid(), (long)preload_gettid(), (long)sig);
	errno = saved_errno;
}

void sigs_take_default(int sig)
{
	preload_on_term(sig);
}

/* Our handler for each termination signal whose action is the default.
 * Each is set, and the action before it read, in one system call (rather
 * than a look and then a change: five fewer in every process's start);
 * an action that was not the default (a signal the program's parent left
 * ignored) is put back.  The signals are blocked meanwhile: one that
 * arrives in between waits, and is discarded as the program's SIG_IGN is
 * put back, as the program would have ignored it. */
void sigs_hook_term(void)
{
	struct sigaction sa, old;
	sigset_t term, mask;
	int blocked;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = preload_on_term;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, preload.signo);
	sigemptyset(&term);
	for (size_t i = 0; i < sizeof(sigs_term_signals) / sizeof(sigs_term_signals[0]); i++)
		sigaddset(&term, sigs_term_signals[i]);
	blocked = pthread_sigmask(SIG_BLOCK, &term, &mask) == 0;
	for (size_t i = 0; i < sizeof(sigs_term_signals) / sizeof(sigs_term_signals[0]); i++) {
		int sig = sigs_term_signals[i];

		if (!blocked) {
			/* (not expected) then only a look first */
			if (preload.real_sigaction(sig, NULL, &old) != 0 ||
			    (old.sa_handler != SIG_DFL && old.sa_handler != preload_on_term) ||
			    (old.sa_flags & SA_SIGINFO))
				continue;
		}
		if (preload.real_sigaction(sig, &sa, &old) != 0)
			continue;
		/* ours already: inherited through fork */
		if ((old.sa_handler == preload_on_term || old.sa_handler == SIG_DFL) &&
		    !(old.sa_flags & SA_SIGINFO))
			atomic_fetch_or(&preload_term_hooked, 1ul << sig);
		else
			preload.real_sigaction(sig, &old, NULL);
	}
	if (blocked)
		pthread_sigmask(SIG_SETMASK, &mask, NULL);
}

/* Is our termination handler the action of sig? */
static int preload_term_is_ours(int sig)
{
	return sig > 0 && sig < 64 && (atomic_load(&preload_term_hooked) >> sig & 1);
}

/* ---- across an exec ---- */

/* The program set the profiler's signal to SIG_IGN while our handler kept
 * it: an exec would reset our handler to the default action, where the
 * program's own would have stayed ignored, and a timer of the program's
 * (ITIMER_PROF goes on in the new image) would end the new image before
 * its constructors ran.  So the program's SIG_IGN is made real for the
 * exec, and ours put back if the exec fails. */
static struct sigaction preload_exec_saved;
static int preload_exec_swapped;

/* The calling thread's perf event around the exec (engine_exec_quiet): the
 * one in its entry, which the sweeper may have replaced (engine_replace). */
static void preload_exec_timer(int undo)
{
	struct engine_timer timer;

	if (!preload_tls.active)
		return;
	pthread_mutex_lock(&preload.registry_lock);
	threads_settle(&preload.entries[preload_tls.entry]);
	timer = preload.entries[preload_tls.entry].timer;
	pthread_mutex_unlock(&preload.registry_lock);
	engine_exec_quiet(&timer, undo);
}

int sigs_exec_signal(void)
{
	return preload.hooked ? preload.signo : 0;
}

void sigs_exec_prepare(int undo)
{
	struct sigaction app;

	if (!undo)
		preload_write_cost(); /* the image's end: no destructor runs */
	if (undo) {
		if (preload_exec_swapped)
			preload.real_sigaction(preload.signo, &preload_exec_saved, NULL);
		preload_exec_swapped = 0;
		preload_exec_timer(1);
		return;
	}
	if (!preload.hooked || preload.real_sigaction == NULL)
		return;
	preload_exec_timer(0);
	preload_exec_end_threads();
	app = preload.app_action[atomic_load(&preload.app_current)];
	if ((app.sa_flags & SA_SIGINFO) || app.sa_handler != SIG_IGN)
		return;
	preload_exec_swapped = preload.real_sigaction(preload.signo, &app, &preload_exec_saved) == 0;
}

/* ---- interposed functions ---- */

/* For SIGPROF while we profile: remembers the program's action instead of
 * installing it (ours stays), and answers with the one it set last.  No
 * lock, since sigaction may be called from a signal handler: two threads
 * racing to set SIGPROF actions may see each other's old action. */
PRELOAD_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	static const char note[] = "the program installed its own handler for the profiler's "
		"signal while profiled: it gets only the signals the profiler did not send";
	int cur;

	if (preload_term_is_ours(sig)) {
		int rc = control_real_sigaction(sig, act, old);

		if (rc == 0 && old != NULL && !(old->sa_flags & SA_SIGINFO) &&
		    old->sa_handler == preload_on_term) {
			old->sa_handler = SIG_DFL;
			old->sa_flags = 0;
			sigemptyset(&old->sa_mask);
		}
		if (rc == 0 && act != NULL)
			atomic_fetch_and(&preload_term_hooked, ~(1ul << sig));
		return rc;
	}
	if (control_owns(sig))
		return control_sigaction(sig, act, old);
	if (sig != preload.signo || !preload.hooked)
		return control_real_sigaction(sig, act, old);
	cur = atomic_load(&preload.app_current);
	if (old != NULL)
		*old = preload.app_action[cur];
	if (act != NULL) {
		preload.app_action[!cur] = *act;
		atomic_store_explicit(&preload.app_current, !cur, memory_order_release);
		if ((act->sa_flags & SA_SIGINFO) ||
		    (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN)) {
			if (!atomic_exchange(&preload.app_warned, 1))
				notice_line(note);
		}
	}
	return 0;
}

/* The signals this library holds: the sampling signal once it is set,
 * the termination signals it finishes the trace on, the control signal. */
static int sigs_held(int sig)
{
	return (sig == preload.signo && preload.hooked) || preload_term_is_ours(sig) || control_owns(sig);
}

PRELOAD_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	return control_signal(sig, handler, sigs_held, sigaction);
}
