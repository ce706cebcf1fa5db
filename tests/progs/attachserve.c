/* attachserve.c - a server for collect-timer -p: four threads that
 * compute in spin_a..spin_d, each sleeping between bursts, the d-th
 * burst d times as long as the first, and on SIGUSR2 a fifth, spin_e,
 * twice as long; a thread blocked in read on a
 * pipe, one in nanosleep, one in epoll_wait and one in a futex wait, each
 * of which says how its call ended ("blocked").  SIGUSR1 (taken by a
 * thread in sigwait, not started with "blocked") prints every computing thread's
 * CPU time (0 for the fifth before it starts), its thread count and the
 * SIGPROF action; stdin closed or
 * SIGTERM ends it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_t workers[5];
static int nworkers;
static volatile unsigned long sink;
static int wake_pipe[2];
static _Atomic uint32_t futex_word;

static void burn(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
}

__attribute__((noinline)) static void spin_a(void) { burn(200000); }
__attribute__((noinline)) static void spin_b(void) { for (int k = 0; k < 2; k++) burn(200000); }
__attribute__((noinline)) static void spin_c(void) { for (int k = 0; k < 3; k++) burn(200000); }
__attribute__((noinline)) static void spin_d(void) { for (int k = 0; k < 4; k++) burn(200000); }
__attribute__((noinline)) static void spin_e(void) { for (int k = 0; k < 2; k++) burn(200000); }

static void *worker(void *arg)
{
	static void (*const fns[5])(void) = { spin_a, spin_b, spin_c, spin_d, spin_e };
	int k = (int)(long)arg;
	struct timespec pause = { 0, 2000000 };

	for (;;) {
		fns[k]();
		nanosleep(&pause, NULL);
	}
	return NULL;
}

static double thread_cpu(pthread_t t)
{
	clockid_t c;
	struct timespec ts;

	if (pthread_getcpuclockid(t, &c) != 0 || clock_gettime(c, &ts) != 0)
		return -1;
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int thread_count(void)
{
	char buf[4096];
	FILE *f = fopen("/proc/self/status", "r");
	int n = -1;

	while (f != NULL && fgets(buf, sizeof(buf), f) != NULL)
		if (strncmp(buf, "Threads:", 8) == 0)
			n = atoi(buf + 8);
	if (f != NULL)
		fclose(f);
	return n;
}

static void report(void)
{
	struct sigaction sa;

	sigaction(SIGPROF, NULL, &sa);
	printf("cpu %.6f %.6f %.6f %.6f %.6f threads %d sigprof %s\n", thread_cpu(workers[0]),
	       thread_cpu(workers[1]), thread_cpu(workers[2]), thread_cpu(workers[3]),
	       nworkers > 4 ? thread_cpu(workers[4]) : 0.0, thread_count(),
	       (sa.sa_flags & SA_SIGINFO) ? "handler"
	       : sa.sa_handler == SIG_DFL ? "default" : sa.sa_handler == SIG_IGN ? "ignore"
									      : "handler");
	fflush(stdout);
}

static void say_end(const char *call, long r, int err)
{
	printf("%s returned %ld%s%s\n", call, r, r < 0 ? " " : "", r < 0 ? strerror(err) : "");
	fflush(stdout);
}

static void *reader(void *unused)
{
	char c;
	long r = read(wake_pipe[0], &c, 1);

	(void)unused;
	say_end("read", r, errno);
	return NULL;
}

static void *sleeper(void *unused)
{
	struct timespec ts = { 4, 0 };
	long r = nanosleep(&ts, NULL);

	(void)unused;
	say_end("nanosleep", r, errno);
	return NULL;
}

static void *poller(void *unused)
{
	struct epoll_event ev;
	int ep = epoll_create1(0);
	long r;

	(void)unused;
	r = epoll_wait(ep, &ev, 1, 4000);
	say_end("epoll_wait", r, errno);
	return NULL;
}

static void *waiter(void *unused)
{
	struct timespec ts = { 4, 0 };
	long r = syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);

	(void)unused;
	/* the timeout is the end it must have */
	say_end("futex", r, errno);
	return NULL;
}

static void *signals(void *unused)
{
	sigset_t set;
	int sig;

	(void)unused;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGTERM);
	for (;;) {
		if (sigwait(&set, &sig) != 0)
			continue;
		if (sig == SIGTERM)
			exit(0);
		if (sig == SIGUSR2 && nworkers == 4)
			pthread_create(&workers[nworkers++], NULL, worker, (void *)4L);
		else if (sig == SIGUSR1)
			report();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	sigset_t set;
	pthread_t t;
	char c;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (pipe(wake_pipe) != 0)
		return 1;
	if (argc > 1 && strcmp(argv[1], "blocked") == 0) {
		/* (no thread in sigwait: the four calls are all there is) */
		pthread_create(&t, NULL, reader, NULL);
		pthread_create(&t, NULL, sleeper, NULL);
		pthread_create(&t, NULL, poller, NULL);
		pthread_create(&t, NULL, waiter, NULL);
	} else {
		pthread_create(&t, NULL, signals, NULL);
		for (nworkers = 0; nworkers < 4; nworkers++)
			pthread_create(&workers[nworkers], NULL, worker, (void *)(long)nworkers);
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	if (argc > 1 && strcmp(argv[1], "blocked") == 0) {
		/* the reader's read ends with a byte */
		if (write(wake_pipe[1], "x", 1) != 1)
			return 1;
		sleep(1);
	}
	return 0;
}
