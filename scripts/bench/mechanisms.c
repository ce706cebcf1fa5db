/* mechanisms.c - how many samples each kernel timer delivers, measured
 * from inside a program (LD_PRELOAD), for scripts/bench/mechanisms
 *
 * MECH chooses what sends SIGPROF, at MECH_HZ (default 250):
 *   thread      a POSIX timer on each thread's CPU clock (SIGEV_THREAD_ID),
 *               one expiry a period, the first at a random part of one
 *   tick        the same timer expiring every microsecond: it fires at
 *               every scheduler tick that finds the thread running
 *   process     one POSIX timer on the process's CPU clock (SIGEV_SIGNAL)
 *   itimer      setitimer(ITIMER_PROF), as gperftools uses
 *   perf        a perf_event_open task-clock event per thread, the first
 *               period a random part of one
 *   perffixed   the same with a whole first period
 * At exit it prints one line: the process's CPU time, the samples a
 * timer exact to the nanosecond would have taken (CPU time x rate), the
 * signals that came, and their share of that.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static _Atomic long signals;
static long period;
static const char *mech = "thread";
static _Atomic unsigned long rng = 88172645463325252ul;

/* A pseudo-random number in [1, n]. */
static long random_part(long n)
{
	unsigned long z = atomic_fetch_add(&rng, 0x9e3779b97f4a7c15ul);

	z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ul;
	z = (z ^ z >> 27) * 0x94d049bb133111ebul;
	z ^= z >> 31;
	return (long)(z % (unsigned long)n) + 1;
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	atomic_fetch_add(&signals, 1);
	if (si->si_code == POLL_HUP || si->si_code == POLL_IN) {
		long p = period;

		if (strcmp(mech, "perf") == 0)
			ioctl(si->si_fd, PERF_EVENT_IOC_PERIOD, &p);
		ioctl(si->si_fd, PERF_EVENT_IOC_REFRESH, 1);
	}
}

/* The calling thread's own timer, for the per-thread mechanisms. */
static void arm_thread(void)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);

	if (strncmp(mech, "perf", 4) == 0) {
		struct perf_event_attr a;
		struct f_owner_ex owner = { F_OWNER_TID, tid };
		int fd;

		memset(&a, 0, sizeof a);
		a.size = sizeof a;
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_TASK_CLOCK;
		a.sample_period = strcmp(mech, "perf") == 0 ? (unsigned long)random_part(period)
							    : (unsigned long)period;
		a.disabled = 1;
		a.exclude_hv = 1;
		fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, 8 /* FD_CLOEXEC */);
		if (fd < 0)
			return;
		fcntl(fd, F_SETSIG, SIGPROF);
		fcntl(fd, F_SETOWN_EX, &owner);
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC);
		ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
	} else if (strcmp(mech, "thread") == 0 || strcmp(mech, "tick") == 0) {
		struct sigevent sev;
		struct itimerspec its = { { 0, period }, { 0, random_part(period) } };
		timer_t t;

		memset(&sev, 0, sizeof sev);
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = SIGPROF;
		sev._sigev_un._tid = tid;
		if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &t) != 0)
			return;
		if (strcmp(mech, "tick") == 0)
			its = (struct itimerspec){ { 0, 1000 }, { 0, 1000 } };
		timer_settime(t, 0, &its, NULL);
	}
}

struct start {
	void *(*fn)(void *);
	void *arg;
};

static void *trampoline(void *p)
{
	struct start s = *(struct start *)p;

	free(p);
	arm_thread();
	return s.fn(s.arg);
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	struct start *s = malloc(sizeof *s);

	if (!real)
		real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))
			dlsym(RTLD_NEXT, "pthread_create");
	if (!s)
		return real(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	return real(th, attr, trampoline, s);
}

__attribute__((constructor)) static void start(void)
{
	struct sigaction sa;
	long hz = getenv("MECH_HZ") ? atol(getenv("MECH_HZ")) : 250;

	if (getenv("MECH"))
		mech = getenv("MECH");
	period = 1000000000L / (hz > 0 ? hz : 250);
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	arm_thread();
	if (strcmp(mech, "process") == 0) {
		struct sigevent sev;
		struct itimerspec its = { { 0, period }, { 0, random_part(period) } };
		timer_t t;

		memset(&sev, 0, sizeof sev);
		sev.sigev_notify = SIGEV_SIGNAL;
		sev.sigev_signo = SIGPROF;
		if (timer_create(CLOCK_PROCESS_CPUTIME_ID, &sev, &t) == 0)
			timer_settime(t, 0, &its, NULL);
	} else if (strcmp(mech, "itimer") == 0) {
		struct itimerval iv = { { 0, period / 1000 }, { 0, period / 1000 } };

		setitimer(ITIMER_PROF, &iv, NULL);
	}
}

__attribute__((destructor)) static void end(void)
{
	struct timespec ts;
	double cpu, want;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	cpu = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	want = cpu * 1e9 / (double)period;
	fprintf(stderr, "mechanisms: %s %ld Hz: cpu %.3f s, asked %.0f, came %ld (%.0f%%)\n", mech,
		1000000000L / period, cpu, want, atomic_load(&signals), 100.0 * (double)signals / want);
}
