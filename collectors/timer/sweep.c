/* sweep.c - samples for the threads the CPU timers miss
 *
 * The kernel checks a thread's CPU timers only at the scheduler tick, and
 * only if the thread is the one running then.  When busy threads outnumber
 * CPUs, the scheduler can preempt a thread between ticks again and again
 * (on a 6.x kernel a thread that makes system calls is preempted at the
 * end of its slice, one that only computes at the tick): that thread runs
 * but is never current at a tick, and its timer never fires.  Its samples
 * would then carry only a part of its CPU time, or none.
 *
 * So a thread of our own wakes every few periods and reads the CPU clock
 * of every registered thread that has a POSIX timer (perf events sample on
 * a high-resolution timer, not at the tick).  A thread whose perf event the
 * program closed (engine_lost) gets a new one, or is looked at as one with
 * a POSIX timer while none can be opened.  A thread that used
 * more than two periods (or ticks) of CPU time since its last signal and
 * is on a CPU as the sweeper looks gets its sampling signal sent directly
 * (engine_request): it samples itself where it is, and the sample weighs
 * all the CPU time since its previous one, as any other.  One that is
 * ready to run but preempted would take a signal where it resumes, not
 * where it computes (threads_sweep): it gets a nudge, a one-shot timer on
 * the monotonic clock that sends it the signal at a random moment within
 * a period.  A nudge that comes more than 100 microseconds late found the
 * thread waiting for a CPU again; the handler turns it down and sets it
 * again, three times in a row at most (sample.c).  (Asking only threads
 * found on a CPU lost up to three quarters of a thread's samples when the
 * sweeper kept sharing its CPU: the sweeper then only ever ran while the
 * thread waited.)  A thread blocked
 * in a system call is never signalled: that would interrupt the call; nor
 * one that blocks the signal or has it pending (a real-time signal, used
 * when the program has SIGPROF, would queue up); nor one that blocked of
 * its own will since the sweeper's previous look (threads_may_ask): a
 * signal that comes as a thread enters a sleeping call interrupts it with
 * EINTR, and a thread that runs in bursts between sleeps is found running
 * by the tick anyway.  (Without that rule a thread alternating 5 ms of
 * work and 5 ms of nanosleep saw an EINTR in one run of five.)
 *
 * The pass reads one clock per thread (two, and its /proc status, for one
 * that may be asked); with many threads it runs less
 * often (every 100 microseconds per thread at least).
 *
 * A pass in which every thread had its perf event looked at nothing: the
 * next one is then a tenth of a second later, not two periods (a thread
 * whose event the program closed, or one made later without an event,
 * waits that long for its first look).
 *
 * The thread is started only when its first pass is due, two periods after
 * the process started profiling, by the control thread (control.c): most
 * processes of a build end before that, and would otherwise each make,
 * name and join a thread that never looks at anything.  Nor while every
 * thread has its perf event (a pass would look at none of them): the
 * control thread then asks again every tenth of a second, and starts it
 * once a thread has a POSIX timer or lost its event (an attached process
 * has it as before: see sweep_launch).  The control thread itself is
 * started only in a process where that can happen and be seen: one with a
 * second thread, a thread with a POSIX timer, or an attached one
 * (preload_control_need), and in any process once the program closes one
 * of the events through libc: by the range (close_range, closefrom: a
 * daemon closing every descriptor as it starts), one at a time (close, as
 * older daemons do in a loop up to the descriptor limit), or by reusing its
 * number (dup2, dup3).  A process of one thread whose event the program
 * closes by the system call itself, not through libc, is not sampled from
 * then on.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "helper.h"
#include "engine.h"
#include "preload-state.h"
#include "preload.h"
#include "sample.h"
#include "sweep.h"
#include "threads.h"

/* The time between passes when the last one looked at no thread. */
#define SWEEP_IDLE_NS 100000000ull

static struct {
	pthread_t thread;
	_Atomic int started;
	pthread_mutex_t lock;
	pthread_cond_t wake;  /* on CLOCK_MONOTONIC */
	int stop;             /* under lock */
	int ready;            /* under lock: sweep_start was called */
	uint64_t due_ns;      /* when the thread is to start */
	uint64_t threshold_ns;
	_Atomic uint64_t asked;
} sweep;

static void *sweep_main(void *unused)
{
	uint64_t t, interval = sweep.threshold_ns;
	struct timespec next;
	size_t n = 0, watched = 1;

	(void)unused;
	/* started when the first pass is due */
	t = preload_now();
	pthread_mutex_lock(&sweep.lock);
	while (!sweep.stop) {
		next.tv_sec = (time_t)(t / 1000000000ull);
		next.tv_nsec = (long)(t % 1000000000ull);
		if (pthread_cond_timedwait(&sweep.wake, &sweep.lock, &next) != ETIMEDOUT)
			continue;
		pthread_mutex_unlock(&sweep.lock);
		if (sample_running() && !control_paused())
			atomic_fetch_add(&sweep.asked, threads_sweep(sweep.threshold_ns, &n, &watched));
		/* A clock read costs under a microsecond: with many threads
		 * the pass runs less often, at most about half a percent of
		 * a CPU. */
		interval = watched > 0 ? sweep.threshold_ns : SWEEP_IDLE_NS;
		if (n * 100000ull > interval)
			interval = n * 100000ull;
		t += interval;
		if (t < preload_now()) /* fell behind: skip, do not catch up */
			t = preload_now() + interval;
		pthread_mutex_lock(&sweep.lock);
	}
	pthread_mutex_unlock(&sweep.lock);
	return NULL;
}

int sweep_start(uint64_t period_ns)
{
	struct timespec res;
	uint64_t tick = 0;
	pthread_condattr_t cattr;

	/* The coarse clocks advance once a tick. */
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0)
		tick = (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec;
	if (tick == 0 || tick > 100000000ull)
		tick = 10000000ull;
	/* Also in the child of a fork, where the parent's thread does not
	 * exist: start afresh. */
	atomic_store(&sweep.started, 0);
	atomic_store(&sweep.asked, 0);
	sweep.stop = 0;
	pthread_mutex_init(&sweep.lock, NULL);
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&sweep.wake, &cattr);
	pthread_condattr_destroy(&cattr);
	sweep.threshold_ns = 2 * (period_ns > tick ? period_ns : tick);
	sweep.due_ns = preload_now() + sweep.threshold_ns;
	sweep.ready = 1;
	return 0;
}

int sweep_start_now(void)
{
	return sweep_launch(UINT64_MAX) == 0 && atomic_load(&sweep.started) ? 0 : -1;
}

/* When the first pass is due, 0 when the thread is not to start. */
static uint64_t sweep_due(void)
{
	uint64_t due;

	pthread_mutex_lock(&sweep.lock);
	due = sweep.ready && !sweep.stop && !atomic_load(&sweep.started) ? sweep.due_ns : 0;
	pthread_mutex_unlock(&sweep.lock);
	return due;
}

uint64_t sweep_launch(uint64_t now)
{
	uint64_t due = sweep_due();

	if (due == 0 || now < due)
		return due;
	/* Every thread has its perf event: a pass would look at nothing.
	 * Asked again as often as an idle pass would run (no thread made,
	 * named and joined in a process that never needs one).  Not in an
	 * attached process: each attach makes the same threads, so that
	 * glibc's cache of the stacks of joined threads leaves the process
	 * with the mappings it had after the first. */
	if (now != UINT64_MAX && !preload.attached && !threads_sweep_wanted()) {
		pthread_mutex_lock(&sweep.lock);
		if (sweep.ready && !sweep.stop)
			sweep.due_ns = now + SWEEP_IDLE_NS;
		due = sweep.ready && !sweep.stop ? sweep.due_ns : 0;
		pthread_mutex_unlock(&sweep.lock);
		return due;
	}
	due = 0;
	pthread_mutex_lock(&sweep.lock);
	if (!sweep.ready || sweep.stop || atomic_load(&sweep.started))
		goto out;
	if (now < sweep.due_ns) {
		due = sweep.due_ns;
		goto out;
	}
	sweep.ready = 0; /* once, started or not */
	if (threads_start_helper(&sweep.thread, sweep_main, "profview-sweep", 64 << 10, 0) == 0)
		atomic_store(&sweep.started, 1);
	else
		preload_warn("cannot start the sweeper thread (%s): threads the CPU timers miss stay "
			     "unsampled", strerror(errno));
out:
	pthread_mutex_unlock(&sweep.lock);
	return due;
}

uint64_t sweep_cpu_ns(void)
{
	return threads_helper_cpu_ns(sweep.thread, atomic_load(&sweep.started));
}

uint64_t sweep_stop(void)
{
	int started;

	/* under the lock: no thread is started after this */
	pthread_mutex_lock(&sweep.lock);
	sweep.stop = 1;
	sweep.ready = 0;
	started = atomic_exchange(&sweep.started, 0);
	pthread_cond_signal(&sweep.wake);
	pthread_mutex_unlock(&sweep.lock);
	if (started)
		pthread_join(sweep.thread, NULL);
	return atomic_load(&sweep.asked);
}

/* ---- the program closing descriptors by the range ---- */

/* The events may be gone: the control thread, which starts the sweeper
 * that gives them new ones (sweep_launch), if it is not there yet. */
static void sweep_closed(void)
{
	int saved_errno = errno;

	preload_control_need();
	errno = saved_errno;
}

PRELOAD_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	int (*real)(unsigned int, unsigned int, int) =
		(int (*)(unsigned int, unsigned int, int))dlsym(RTLD_NEXT, "close_range");
	int rc = real != NULL ? real(first, last, flags)
			      : (int)syscall(SYS_close_range, first, last, flags);

	if (rc == 0 && !(flags & CLOSE_RANGE_CLOEXEC))
		sweep_closed();
	return rc;
}

PRELOAD_EXPORT void closefrom(int lowfd)
{
	void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "closefrom");

	if (real != NULL)
		real(lowfd);
	else if (lowfd >= 0)
		syscall(SYS_close_range, (unsigned int)lowfd, ~0u, 0);
	sweep_closed();
}

/* ---- the program closing one of the events by its number ----
 *
 * close, dup2 and dup3 are called often, so they look for the next
 * library's function once, when the library is loaded (dlsym is not for
 * every call), and only a descriptor of ours costs more than a compare. */

static int (*sweep_next_close)(int);
/* dup2 of a descriptor onto itself: it, if it is open. */
static int sweep_fd_probe(int fd)
{
	return syscall(SYS_fcntl, fd, F_GETFD) < 0 ? -1 : fd;
}

static int (*sweep_next_dup2)(int, int);
/* EBUSY tries of a dup2 or dup3 (some 20 ms at most) */
#define SWEEP_DUP_TRIES 1000
static int (*sweep_next_dup3)(int, int, int);

__attribute__((constructor)) static void sweep_find_next(void)
{
	sweep_next_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	sweep_next_dup2 = (int (*)(int, int))dlsym(RTLD_NEXT, "dup2");
	sweep_next_dup3 = (int (*)(int, int, int))dlsym(RTLD_NEXT, "dup3");
}

PRELOAD_EXPORT int close(int fd)
{
	int ours = engine_owns_fd(fd);
	int rc = sweep_next_close != NULL ? sweep_next_close(fd) : (int)syscall(SYS_close, fd);

	if (ours)
		sweep_closed();
	return rc;
}

/* dup2 or dup3 (flags -1: dup2) by the next library's function, again
 * while the kernel says EBUSY: the number is one an open in another
 * thread has taken and not yet filled, which a moment settles.  The
 * sweeper's new event for a thread is such an open, at the lowest free
 * number first (then moved above FD_SETSIZE): a program that puts a file
 * on every number in turn would otherwise meet it there. */
static int sweep_dup(int oldfd, int newfd, int flags)
{
	struct timespec wait = { 0, 20000 };
	int rc;

	for (int i = 0;; i++) {
		if (flags >= 0 && sweep_next_dup3 != NULL)
			rc = sweep_next_dup3(oldfd, newfd, flags);
		else if (flags >= 0)
			rc = (int)syscall(SYS_dup3, oldfd, newfd, flags);
		else if (sweep_next_dup2 != NULL)
			rc = sweep_next_dup2(oldfd, newfd);
		else
			rc = oldfd == newfd ? sweep_fd_probe(oldfd) : (int)syscall(SYS_dup3, oldfd, newfd, 0);
		if (rc >= 0 || errno != EBUSY || i == SWEEP_DUP_TRIES)
			return rc;
		if (i < 10)
			sched_yield();
		else
			nanosleep(&wait, NULL);
	}
}

PRELOAD_EXPORT int dup2(int oldfd, int newfd)
{
	int ours = oldfd != newfd && engine_owns_fd(newfd);
	int rc = sweep_dup(oldfd, newfd, -1);

	if (ours && rc >= 0)
		sweep_closed();
	return rc;
}

PRELOAD_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	int ours = engine_owns_fd(newfd);
	int rc = flags >= 0 ? sweep_dup(oldfd, newfd, flags) : (errno = EINVAL, -1);

	if (ours && rc >= 0)
		sweep_closed();
	return rc;
}
