/*
 * floor.c - the least any in-process sampler preloaded into every process
 * costs: a library startcost --floor preloads in two modes, to measure the
 * floor under collect-timer's cost in short processes.
 *
 *   PROFVIEW_FLOOR=preload  the library is loaded and its constructor runs,
 *                           nothing else (the dynamic loader's share)
 *   PROFVIEW_FLOOR=event    the constructor opens a task-clock perf event
 *                           of the main thread with collect-timer's
 *                           default period (4 ms of its CPU time), which
 *                           signals the thread at each period; the
 *                           handler only arms the next one (the kernel's
 *                           share of per-thread CPU clocks: the event's
 *                           switches in and out, its signals)
 *   PROFVIEW_FLOOR=posix    the same clock as a POSIX CPU timer of the
 *                           main thread (timer_create on its thread CPU
 *                           clock, SIGEV_THREAD_ID), periodic: checked at
 *                           the scheduler's ticks, nothing at a switch
 *
 * Threads made later are not sampled, and nothing is written: the figures
 * are a floor, not a profiler.
 *
 * cc -O2 -shared -fPIC -o floor.so floor.c
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static void floor_handler(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	if (si->si_code != SI_TIMER)
		ioctl(si->si_fd, PERF_EVENT_IOC_REFRESH, 1);
}

/* A periodic POSIX timer on the thread's CPU clock, signalling the thread. */
static void floor_posix(void)
{
	struct sigevent sev;
	struct itimerspec its;
	clockid_t clock;
	timer_t timer;

	if (pthread_getcpuclockid(pthread_self(), &clock) != 0)
		return;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGPROF;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(clock, &sev, &timer) != 0)
		return;
	its.it_interval.tv_sec = 0;
	its.it_interval.tv_nsec = 4000000;
	its.it_value = its.it_interval;
	timer_settime(timer, 0, &its, NULL);
}

__attribute__((constructor)) static void floor_start(void)
{
	const char *mode = getenv("PROFVIEW_FLOOR");
	struct perf_event_attr attr;
	struct sigaction sa;
	struct f_owner_ex owner;
	int fd;

	if (mode == NULL || (strcmp(mode, "event") != 0 && strcmp(mode, "posix") != 0))
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = floor_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) != 0)
		return;
	if (strcmp(mode, "posix") == 0) {
		floor_posix();
		return;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = 4000000;
	attr.disabled = 1;
	attr.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return;
	owner.type = F_OWNER_TID;
	owner.pid = (pid_t)syscall(SYS_gettid);
	if (fcntl(fd, F_SETSIG, SIGPROF) != 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0 ||
	    fcntl(fd, F_SETFL, O_ASYNC) != 0 || ioctl(fd, PERF_EVENT_IOC_REFRESH, 1) != 0)
		close(fd);
}
