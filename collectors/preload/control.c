/* control.c - pausing and resuming sampling, for either host of the
 * preload library, and the library's thread for the work put off
 *
 * A signal (SIGUSR2 unless the launcher says otherwise) pauses sampling,
 * the next resumes it, as gperftools' CPUPROFILESIGNAL does, in every
 * process of the run: the handler (and the launcher's, for the signal
 * sent to it) only adds one to the run's control word (collect-env.h);
 * sampling is paused while the word is odd (or --delay's start is to
 * come) and runs while it is even.
 *
 * No thread watches the word: each process looks at it where it samples
 * (control_poll), in the timer's signal handler at each sample and in
 * the heap's sampler when an allocation's countdown crosses zero, and the
 * signal's handler looks at once in the process it reaches.  So a pause
 * or a resume takes effect in each thread at its next sample; a thread
 * that does not run misses nothing.  What a change does is the host's
 * (host.h: control_apply, signal-safe): control-timer.c's for
 * libprofview-timer.so, heap-start.c's for libprofview-heap.so.  --delay
 * starts the process paused, with a resume due at PROFVIEW_START_NS; for
 * a library that asks (control_init's stop_ns), --duration is a pause for
 * good at PROFVIEW_STOP_NS (CONTROL_END).
 *
 * The control signal is taken only if the program has left it at its
 * default action (or ignores it); the program is told that action by
 * sigaction() and signal() (the libraries' interposed ones: sigs.c,
 * heap-start.c), as if ours were not there.  A program
 * that installs a handler of its own for it gets the signal: ours steps
 * aside, and the signal sent to the program no longer pauses sampling
 * (sent to the launcher, it still does).  The signal a thread of the
 * program sends to a thread of its own (raise, pthread_kill) while the
 * program has left the default action is the program's, not a request: it
 * gets that action (which ends the process), as without the collector.  A
 * kill(2) of the process, from any process, itself too, is a request.
 *
 * The trace's written memory is released (writer_release) where records
 * are written, once enough was written since the last release
 * (control_release_due), so the program's resident memory does not grow
 * with its trace.  A host that has work which needs a thread (the timer's
 * sweeper, once a thread samples without a perf event) starts the
 * library's thread "profview-ctl" (control_start): it does that work when
 * due (host.h: control_deferred), faults in the trace's next pages and the
 * stack table's ahead of the program's threads, releases the trace's
 * memory a few times a second and looks at the control word as it wakes.
 * A process that needs none, most short ones, makes no thread.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cfi.h"
#include "collect-env.h"
#include "control.h"
#include "procs.h"
#include "helper.h"
#include "notice.h"
#include "host.h"
#include "preload.h"
#include "stacktab.h"
#include "writer.h"

#define CONTROL_RELEASE_NS 250000000ull   /* how often the trace's memory is released */
#define CONTROL_PREFAULT_NS 20000000ull   /* and its next pages faulted in, while it grows */
#define CONTROL_POPULATE_NS 50000000ull   /* the stack table's pages faulted in once the */
#define CONTROL_POPULATE_CPU_NS 50000000ull /* process has used this much CPU time (looked at */
					    /* every CONTROL_POPULATE_NS at most) */
#define CONTROL_RELEASE_BYTES ((uint64_t)1 << 20) /* written, the trace's memory released */

static struct {
	int signo;                /* the control signal, 0 for none */
	_Atomic int active;       /* our handler is its action */
	struct sigaction app;     /* the action the program believes it has */
	uint64_t start_ns;        /* sampling resumes then (--delay), or 0 */
	uint64_t stop_ns;         /* sampling ends then (--duration), or 0 */
	int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
	pthread_t thread;
	uint32_t wake_bit;        /* the thread's futex bitset (control_start) */
	_Atomic int started;
	_Atomic int stop;
	/* the run's control word (collect-env.h), or NULL: then requests
	 * are this process's own, in local */
	struct collect_control *run;
	struct collect_control local;
	char taken_note[256];     /* the line for a program's own handler */
	size_t taken_len;
	char said[2][160];        /* the lines for a resume [0] and a pause [1] */
} control;

/* The requests word: the run's, or this process's. */
static _Atomic uint32_t *control_word(void)
{
	return control.run != NULL ? &control.run->requests : &control.local.requests;
}

/* Wakes every thread waiting on the word (every process's, for the
 * run's).  Signal-safe. */
static void control_wake(void)
{
	syscall(SYS_futex, (void *)control_word(), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Wakes this process's thread alone, and those of the few processes
 * whose bit is the same (they look and wait again): not every process of
 * the run, each time one of them ends. */
static void control_wake_own(void)
{
	syscall(SYS_futex, (void *)control_word(), FUTEX_WAKE_BITSET, INT_MAX, NULL, NULL,
		control.wake_bit);
}

/* ---- the thread ---- */

/* What sampling should be now: ended (--duration's end is past), paused
 * (a pause asked for, or --delay's start still to come) or running.  The
 * clock is read only when a start or an end is due.  Signal-safe. */
static int control_want(void)
{
	uint64_t now = control.start_ns != 0 || control.stop_ns != 0 ? preload_now() : 0;

	if (control.stop_ns != 0 && now >= control.stop_ns)
		return CONTROL_END;
	return (atomic_load(control_word()) & 1) || (control.start_ns != 0 && now < control.start_ns)
		       ? CONTROL_PAUSE
		       : CONTROL_RESUME;
}

/* The time the thread wakes at without a request: the next release, or
 * the start or the end if sooner. */
static uint64_t control_due(uint64_t next)
{
	uint64_t now = preload_now();

	if (control.start_ns > now && control.start_ns < next)
		next = control.start_ns;
	if (control.stop_ns > now && control.stop_ns < next)
		next = control.stop_ns;
	return next;
}

/* The lines said when a pause or a resume is acted on, made once:
 * said from a signal handler too. */
static void control_said_lines(void)
{
	int sig = control.signo != 0 ? control.signo : COLLECT_CONTROL_DEFAULT;

	for (int pause = 0; pause <= 1; pause++)
		snprintf(control.said[pause], sizeof(control.said[pause]),
			 "sampling %s (signal %d)%s; the same signal %s it",
			 pause ? "paused" : "resumed", control.run == NULL ? control.signo : sig,
			 control.run == NULL ? "" : " in every process of the run",
			 pause ? "resumes" : "pauses");
}

/* One line for a pause or a resume asked for: for the run, from the
 * first process to act on request req.  Signal-safe. */
static void control_say(int pause, uint32_t req)
{
	_Atomic uint32_t *said = control.run != NULL ? &control.run->said : &control.local.said;

	if (atomic_exchange(said, req) != req)
		notice_line(control.said[pause]);
}

int control_poll(void)
{
	uint32_t req = atomic_load(control_word());
	int how = control_want();

	if (preload_host.control_apply(how) && how != CONTROL_END)
		control_say(how == CONTROL_PAUSE, req);
	return how;
}

void control_release_due(void)
{
	if (writer_unreleased() >= CONTROL_RELEASE_BYTES)
		writer_release();
}

/* The host's deferred work (host.h), if it has any. */
static uint64_t control_deferred(uint64_t now)
{
	return preload_host.control_deferred != NULL ? preload_host.control_deferred(now) : 0;
}

/* The host's part of an exec (host.h), if it has one. */
static void control_exec_prepare(int undo)
{
	if (preload_host.exec_prepare != NULL)
		preload_host.exec_prepare(undo);
}

static void *control_main(void *unused)
{
	/* The first pages faulted in ahead of the trace not at once: a
	 * process that ends within CONTROL_PREFAULT_NS writes a few pages
	 * of records, and the pages faulted in past them would only be
	 * dropped again by its end (or read by the launcher, after an
	 * exec). */
	uint64_t next = preload_now() + CONTROL_RELEASE_NS, tick = preload_now() + CONTROL_PREFAULT_NS;
	/* The page faults of the stack table (3 MiB), here rather than in
	 * the program's threads; not before the process has used some CPU
	 * time, since most short ones (a compiler that make runs) would
	 * never touch most of its pages. */
	uint64_t populate = preload_now() + CONTROL_POPULATE_NS;

	(void)unused;
	/* its allocations are not the program's (libprofview-heap.so) */
	preload_own_begin();
	/* a fork child, made before its parent acted on a request */
	control_poll();
	while (!atomic_load(&control.stop)) {
		uint64_t due, now, later = control_deferred(preload_now());
		uint32_t req = atomic_load(control_word());
		struct timespec ts;

		if (populate != 0 && populate <= preload_now()) {
			struct timespec cpu;

			if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu) != 0 ||
			    (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec >=
				    CONTROL_POPULATE_CPU_NS) {
				stacktab_populate(&control.stop);
				populate = 0;
			} else {
				populate = preload_now() + CONTROL_POPULATE_NS;
			}
		}
		if (tick <= preload_now()) {
			/* often while the trace grows, seldom when it does not */
			uint64_t grew = writer_prefault_tick();

			tick = preload_now() + (grew > 0 ? CONTROL_PREFAULT_NS : CONTROL_RELEASE_NS);
		}
		due = control_due(tick < next ? tick : next);
		if (populate != 0 && populate < due)
			due = populate;
		if (later != 0 && later < due)
			due = later;
		ts.tv_sec = (time_t)(due / 1000000000ull);
		ts.tv_nsec = (long)(due % 1000000000ull);
		/* until a request, the stop, the start, the end, the next
		 * release or the next pages to fault in */
		syscall(SYS_futex, (void *)control_word(), FUTEX_WAIT_BITSET, req, &ts, NULL,
			control.wake_bit);
		if (atomic_load(&control.stop))
			break;
		now = preload_now();
		control_poll();
		if (now >= next) {
			writer_release();
			next = now + CONTROL_RELEASE_NS;
		}
	}
	return NULL;
}

int control_start(void)
{
	/* also in the child of a fork, where the parent's thread does not
	 * exist */
	atomic_store(&control.started, 0);
	atomic_store(&control.stop, 0);
	/* a request (control_wake) wakes every waiter whatever its bits */
	control.wake_bit = 1u << (getpid() % 32);
	if (threads_start_helper(&control.thread, control_main, "profview-ctl", 64 << 10, 0) != 0)
		return -1;
	atomic_store(&control.started, 1);
	return 0;
}

void control_forget(void)
{
	atomic_store(&control.started, 0);
}

uint64_t control_cpu_ns(void)
{
	return threads_helper_cpu_ns(control.thread, atomic_load(&control.started));
}

void control_stop(void)
{
	struct timespec ts;

	if (!atomic_exchange(&control.started, 0))
		return;
	atomic_store(&control.stop, 1);
	/* woken until it has seen the stop: one wake may come just before it
	 * waits */
	for (;;) {
		control_wake_own();
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 2000000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		if (pthread_timedjoin_np(control.thread, NULL, &ts) != ETIMEDOUT)
			break;
	}
}

/* ---- the signal ---- */

int control_default_kills(int sig)
{
	switch (sig) {
	case SIGCHLD: case SIGCONT: case SIGURG: case SIGWINCH:
	case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
		return 0;
	default:
		return sig > 0 && sig < NSIG;
	}
}

/* Did a thread of the process send sig to one of its own threads (raise,
 * pthread_kill, tgkill)?  A signal sent to the process with kill(2),
 * by itself too, is a request, as the same kill from a shell would be. */
static int control_from_self(const siginfo_t *si)
{
	return si->si_code == SI_TKILL && si->si_pid == getpid();
}

/* The program's own signal while its action is the default: the default
 * action, as without the collector.  Signal-safe. */
static void control_take_default(int sig)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	atomic_store(&control.active, 0);
	control_real_sigaction(sig, &dfl, NULL);
	/* pending until this handler returns, then the default action */
	syscall(SYS_tgkill, (long)getpid(), (long)syscall(SYS_gettid), (long)sig);
}

static void control_on_signal(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;

	(void)uc;
	if (control_from_self(si) && !(control.app.sa_flags & SA_SIGINFO) &&
	    control.app.sa_handler == SIG_DFL && control_default_kills(sig)) {
		control_take_default(sig);
	} else if (atomic_load(&control.active)) {
		atomic_fetch_add(control_word(), 1);
		/* this process at once, the others at their next samples (and
		 * the control threads of those that have one) */
		control_poll();
		control_wake();
	}
	errno = saved_errno;
}

/* Is act a handler of the program's own (not the default, not ignore)? */
static int control_is_handler(const struct sigaction *act)
{
	return (act->sa_flags & SA_SIGINFO) ||
	       (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN);
}

/* Maps the run's control word the launcher names, if it does. */
static void control_map_run(void)
{
	static const char memfd[] = "/memfd:profview-control";
	const char *path = preload_setting(COLLECT_ENV_CONTROL_WORD);
	char target[64];
	struct stat st;
	void *p = MAP_FAILED;
	ssize_t n;
	int fd;

	control.run = NULL;
	if (path == NULL)
		return;
	/* the launcher's, not a file of a process that has its pid now */
	n = readlink(path, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	if (strncmp(target, memfd, sizeof(memfd) - 1) != 0 ||
	    (fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
		return;
	/* the word, and the share of unwind rows after it when there is one
	 * (one mapping: no more system calls than the word's) */
	if (fstat(fd, &st) != 0)
		st.st_size = 0;
	if (st.st_size == COLLECT_CONTROL_SIZE + (off_t)COLLECT_SHARE_SIZE)
		p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED)
		cfi_share((char *)p + COLLECT_CONTROL_SIZE, COLLECT_SHARE_SIZE);
	/* the word alone (an address space limit may refuse the share) */
	else if (st.st_size == COLLECT_CONTROL_SIZE ||
		 st.st_size == COLLECT_CONTROL_SIZE + (off_t)COLLECT_SHARE_SIZE)
		p = mmap(NULL, COLLECT_CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p != MAP_FAILED)
		control.run = p;
}

/* The line said when the program handles the control signal itself. */
static void control_taken_note(int sig)
{
	const char *abbrev = sigabbrev_np(sig) != NULL ? sigabbrev_np(sig) : "?";
	int n = snprintf(control.taken_note, sizeof(control.taken_note),
			 "the program installed its own handler for the control signal "
			 "(SIG%s): it gets that signal; sent to %s, the signal still pauses and "
			 "resumes sampling in every process; --control-signal chooses another",
			 abbrev, preload_host.collector);

	control.taken_len = n > 0 && (size_t)n < sizeof(control.taken_note) ? (size_t)n : 0;
}

/* Says it, once for the run.  Signal-safe. */
static void control_say_taken(void)
{
	if (control.run != NULL && atomic_exchange(&control.run->taken, 1))
		return;
	if (control.taken_len > 0)
		notice_line(control.taken_note);
}

int control_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (control.real_sigaction == NULL)
		control.real_sigaction = dlsym(RTLD_NEXT, "sigaction");
	if (control.real_sigaction == NULL) {
		errno = ENOSYS;
		return -1;
	}
	return control.real_sigaction(sig, act, old);
}

sighandler_t control_signal(int sig, sighandler_t handler, int (*held)(int),
			    int (*set)(int, const struct sigaction *, struct sigaction *))
{
	static sighandler_t (*real_signal)(int, sighandler_t);
	struct sigaction act, old;

	if (held(sig)) {
		memset(&act, 0, sizeof(act));
		act.sa_handler = handler;
		act.sa_flags = SA_RESTART;
		sigemptyset(&act.sa_mask);
		if (set(sig, &act, &old) != 0)
			return SIG_ERR;
		return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)old.sa_sigaction
						   : old.sa_handler;
	}
	if (real_signal == NULL)
		real_signal = (sighandler_t(*)(int, sighandler_t))dlsym(RTLD_NEXT, "signal");
	if (real_signal == NULL) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	return real_signal(sig, handler);
}

/* Takes the control signal sig when the program has left it at its
 * default action (or ignores it). */
static void control_take(int sig)
{
	struct sigaction sa, old;

	control_taken_note(sig);
	if (control_real_sigaction(sig, NULL, &old) != 0)
		return;
	if (control_is_handler(&old)) {
		control_say_taken();
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = control_on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (control_real_sigaction(sig, &sa, NULL) != 0)
		return;
	control.app = old;
	control.signo = sig;
	atomic_store(&control.active, 1);
}

void control_init(int profiler_signal, uint64_t stop_ns)
{
	const char *env = preload_setting(COLLECT_ENV_CONTROL);
	const char *start = preload_setting(COLLECT_ENV_START_NS);
	long sig = env != NULL ? atol(env) : COLLECT_CONTROL_DEFAULT;

	control.start_ns = start != NULL ? strtoull(start, NULL, 10) : 0;
	control.stop_ns = stop_ns;
	control_map_run();
	/* paused until the start, or while the run is; a fork child keeps
	 * its parent's state */
	preload_host.control_initial(control_want());
	control.signo = 0;
	atomic_store(&control.active, 0);
	if (sig != 0 && collect_env_control_ok((int)sig) && sig != profiler_signal)
		control_take((int)sig);
	control_said_lines();
}

int control_owns(int sig)
{
	return sig != 0 && sig == control.signo && atomic_load(&control.active);
}

int control_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev = control.app;
	int rc;

	if (act == NULL || !control_is_handler(act)) {
		if (act != NULL)
			control.app = *act;
		if (old != NULL)
			*old = prev;
		return 0;
	}
	/* No lock: sigaction may be called from a signal handler. */
	atomic_store(&control.active, 0);
	rc = control_real_sigaction(sig, act, NULL);
	if (rc != 0) {
		atomic_store(&control.active, 1);
		return rc;
	}
	if (old != NULL)
		*old = prev;
	control_say_taken();
	return 0;
}

/* ---- the signal across exec ----
 *
 * Between an exec and the new image's constructor the control signal has
 * its default action, which ends the process.  So it is held (blocked)
 * there: the launcher holds it from before its fork, and an exec of the
 * program's, while the library takes the signal, holds it across the exec
 * with PROFVIEW_CONTROL_HELD=1 in the new image's environment; the new
 * image's constructor (control_unhold) lets it through once the library's
 * handler is there, and takes the variable out of the environment, so that
 * the images started otherwise (posix_spawn, system) keep the mask they
 * were given.  A signal that came meanwhile was pending, and is taken
 * then.  The sampling signal is held the same way: an event the exec has
 * not closed yet (another thread of ours may have armed it again after
 * engine_exec_quiet) can still send one, which at its default action ends
 * the new image; the new constructor drops such late ones. */

/* Lets sig, the previous image's sampling signal, through.  When this
 * image handles it (its library samples with it: preload_init ran), its
 * handler tells a late one of the old image's events from its own events'
 * (which must not be taken: an event whose signal is lost is never armed
 * again) and from the program's.  When nothing handles it, the instances
 * pending from the old image's sampling (a perf event's POLL_IN or
 * POLL_HUP, a timer's) are taken back first, and one the program sent is
 * queued again, as engine_exec_quiet does. */
static void control_unhold_one(int sig)
{
	static const struct timespec now = { 0, 0 };
	struct sigaction cur;
	sigset_t set;
	siginfo_t si;

	sigemptyset(&set);
	sigaddset(&set, sig);
	if (control_real_sigaction(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
	    cur.sa_sigaction != NULL) {
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		return;
	}
	while (sigtimedwait(&set, &si, &now) == sig) {
		if (si.si_code == POLL_IN || si.si_code == POLL_HUP || si.si_code == SI_TIMER)
			continue;
		syscall(SYS_rt_tgsigqueueinfo, (long)getpid(), (long)syscall(SYS_gettid), (long)sig, &si);
		break;
	}
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

void control_unhold(void)
{
	const char *held = preload_setting(COLLECT_ENV_HELD);
	const char *env = preload_setting(COLLECT_ENV_CONTROL);
	long sig = env != NULL ? atol(env) : COLLECT_CONTROL_DEFAULT;
	sigset_t set;

	if (held == NULL)
		return;
	if (strcmp(held, "1") == 0 && collect_env_control_ok((int)sig)) {
		sigemptyset(&set);
		sigaddset(&set, (int)sig);
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	} else if (strncmp(held, "1,", 2) == 0 || strncmp(held, "0,", 2) == 0) {
		/* "1,S": the control signal (if 1) and S, the previous image's
		 * sampling signal */
		long s = atol(held + 2);
		if (held[0] == '1' && collect_env_control_ok((int)sig)) {
			sigemptyset(&set);
			sigaddset(&set, (int)sig);
			pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		}
		if (s > 0 && s < NSIG && s != SIGKILL && s != SIGSTOP)
			control_unhold_one((int)s);
	}
	unsetenv(COLLECT_ENV_HELD);
}

/* Before an exec with environment env that loads the library again: the
 * control signal (when the library takes it and the thread does not block
 * it) and the sampling signal (the host's exec_signal: a late one of an event
 * the exec has not yet closed would end the new image before its
 * constructor) are blocked, and env is returned with PROFVIEW_CONTROL_HELD
 * saying which ("1,S" or "0,S", S the sampling signal; "1" the control
 * signal alone), malloc'd, the string after the array; *old gets the mask
 * to restore if the exec fails.  Else returns env itself. */
static char **control_exec_hold(char *const env[], sigset_t *old)
{
	size_t n = 0, k = 0, len = strlen(COLLECT_ENV_HELD);
	int ctl, samp = preload_host.exec_signal != NULL ? preload_host.exec_signal() : 0;
	sigset_t set;
	char **v;

	if (!procs_env_preloads(env) || pthread_sigmask(SIG_BLOCK, NULL, old) != 0)
		return (char **)env;
	ctl = control_owns(control.signo) && !sigismember(old, control.signo);
	if (samp > 0 && sigismember(old, samp))
		samp = 0;
	if (!ctl && samp <= 0)
		return (char **)env;
	while (env[n] != NULL)
		n++;
	v = malloc((n + 2) * sizeof(*v) + len + 32);
	if (v == NULL)
		return (char **)env;
	for (size_t i = 0; i < n; i++)
		if (strncmp(env[i], COLLECT_ENV_HELD, len) != 0 || env[i][len] != '=')
			v[k++] = env[i];
	v[k] = (char *)(v + n + 2);
	if (samp > 0)
		snprintf(v[k], len + 32, "%s=%d,%d", COLLECT_ENV_HELD, ctl, samp);
	else
		snprintf(v[k], len + 32, "%s=1", COLLECT_ENV_HELD);
	v[++k] = NULL;
	sigemptyset(&set);
	if (ctl)
		sigaddset(&set, control.signo);
	if (samp > 0)
		sigaddset(&set, samp);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	return v;
}

/* The exec failed: the mask as it was, and the copy freed. */
static void control_exec_failed(char **v, char *const env[], const sigset_t *old)
{
	int saved_errno = errno;

	if (v != (char **)env) {
		pthread_sigmask(SIG_SETMASK, old, NULL);
		free(v);
	}
	errno = saved_errno;
}

/* An exec by the libc function named name (execve or execvpe), the
 * control signal held across it (control_exec_hold). */
static int control_exec(const char *name, const char *file, char *const argv[], char *const envp[])
{
	int (*real)(const char *, char *const[], char *const[]) =
		(int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, name);
	sigset_t old;
	char **v;

	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	v = control_exec_hold(envp, &old);
	procs_note_exec(file, strcmp(name, "execve") != 0, procs_env_preloads(v));
	control_exec_prepare(0);
	writer_flush_staged(1);
	real(file, argv, v);
	control_exec_prepare(1);
	control_exec_failed(v, envp, &old);
	return -1;
}

PRELOAD_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return control_exec("execve", path, argv, envp);
}

PRELOAD_EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

PRELOAD_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	return control_exec("execvpe", file, argv, envp);
}

PRELOAD_EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* execl, execle and execlp: libc's call its execve inside libc, past the
 * ones above, so they are interposed too.  Their list of arguments (n of
 * them after arg, up to the NULL) into an array; NULL when out of memory. */
static char **control_list_argv(const char *arg, va_list ap, size_t n)
{
	char **v = malloc((n + 2) * sizeof(*v));

	if (v == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	v[0] = (char *)arg;
	for (size_t i = 1; i <= n + 1; i++)
		v[i] = va_arg(ap, char *); /* the last is the NULL */
	return v;
}

/* The arguments after arg up to the NULL. */
static size_t control_list_count(va_list ap)
{
	size_t n = 0;

	while (va_arg(ap, const char *) != NULL)
		n++;
	return n;
}

PRELOAD_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	size_t n;
	char **v;

	va_start(ap, arg);
	n = control_list_count(ap);
	va_end(ap);
	va_start(ap, arg);
	v = control_list_argv(arg, ap, n);
	va_end(ap);
	if (v == NULL)
		return -1;
	execve(path, v, environ);
	free(v);
	return -1;
}

PRELOAD_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	size_t n;
	char **v;

	va_start(ap, arg);
	n = control_list_count(ap);
	va_end(ap);
	va_start(ap, arg);
	v = control_list_argv(arg, ap, n);
	va_end(ap);
	if (v == NULL)
		return -1;
	execvp(file, v);
	free(v);
	return -1;
}

PRELOAD_EXPORT int execle(const char *path, const char *arg, ...)
{
	char *const *envp;
	va_list ap;
	size_t n;
	char **v;

	va_start(ap, arg);
	n = control_list_count(ap);
	va_end(ap);
	va_start(ap, arg);
	v = control_list_argv(arg, ap, n);
	envp = va_arg(ap, char *const *); /* after the NULL */
	va_end(ap);
	if (v == NULL)
		return -1;
	execve(path, v, envp);
	free(v);
	return -1;
}
