/* timer-cases.c - programs that exercise collect-timer's edge cases
 *
 * timer-cases MODE [args]; modes:
 *   churn N       N short threads, in waves of 8; half return, half call
 *                 pthread_exit, some detached; prints the POSIX timers left
 *   sigprof-late  installs its own SIGPROF handler and ITIMER_PROF in main,
 *                 spins, prints how many of its own signals it got
 *   sigprof-early the same from a constructor (after profiling starts)
 *   sigprof-exec  starts ITIMER_PROF, ignores SIGPROF and execs itself in
 *                 mode sigprof-early: profiling must be off in the new image
 *   exit N        spins, then _exit(N) (no exit handlers)
 *   fork          forks a child that spins too; waits for it
 *   exec          spins, then execs itself in mode "spin" (same pid)
 *   deep N        recursion N deep, spinning at the bottom
 *   wide S        for S seconds, recursion to random depths up to 1000 with a
 *                 short spin at the bottom: many distinct deep stacks
 *   rename        a thread renames itself "worker-1" and spins
 *   blocked       a thread that blocks SIGPROF spins beside one that does not
 *   crash         spins, then dereferences NULL
 *   spin S        spins about S seconds (default 0.3)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static volatile int own_signals;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin(double seconds)
{
	double end = cpu_now() + seconds;
	uint64_t x = 1;

	while (cpu_now() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1;
	sink = x;
}

static int count_timers(void)
{
	FILE *f = fopen("/proc/self/timers", "r");
	char line[256];
	int n = 0;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		n += strncmp(line, "ID:", 3) == 0;
	fclose(f);
	return n;
}

static void *churn_thread(void *arg)
{
	long i = (long)arg;

	spin(0.0005);
	if (i % 2)
		pthread_exit(NULL);
	return NULL;
}

static int mode_churn(int n)
{
	pthread_t t[8];

	for (int i = 0; i < n; i += 8) {
		for (int j = 0; j < 8; j++) {
			if (pthread_create(&t[j], NULL, churn_thread, (void *)(long)(i + j)) != 0) {
				fprintf(stderr, "pthread_create: failed at %d\n", i + j);
				return 1;
			}
			if (j == 7)
				pthread_detach(t[j]);
		}
		for (int j = 0; j < 7; j++)
			pthread_join(t[j], NULL);
	}
	usleep(100000); /* let the detached ones finish */
	printf("timers left: %d\n", count_timers());
	return 0;
}

static void own_handler(int sig)
{
	(void)sig;
	own_signals++;
}

static int mode_sigprof(void)
{
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };

	if (signal(SIGPROF, own_handler) == SIG_ERR || setitimer(ITIMER_PROF, &it, NULL) != 0) {
		perror("sigprof");
		return 1;
	}
	spin(0.5);
	printf("own SIGPROF signals: %d\n", own_signals);
	return 0;
}

static int early;
__attribute__((constructor)) static void early_sigprof(void)
{
	const char *m = getenv("TIMER_CASES_EARLY");
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };

	if (m != NULL) {
		early = 1;
		signal(SIGPROF, own_handler);
		setitimer(ITIMER_PROF, &it, NULL);
	}
}

__attribute__((noinline)) static int deep(int n)
{
	int r;

	if (n == 0) {
		spin(0.3);
		return 0;
	}
	r = deep(n - 1);
	sink += (uint64_t)r; /* keeps the call a real call */
	return r + 1;
}

__attribute__((noinline)) static int wide(int n, double seconds)
{
	int r;

	if (n == 0) {
		spin(seconds);
		return 0;
	}
	r = wide(n - 1, seconds);
	sink += (uint64_t)r;
	return r + 1;
}

static void *rename_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker-1");
	spin(0.2);
	return NULL;
}

static void *blocked_thread(void *arg)
{
	sigset_t s;

	(void)arg;
	sigemptyset(&s);
	sigaddset(&s, SIGPROF);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	spin(0.3);
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	spin(0.01);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "spin";
	pthread_t t;

	if (strcmp(mode, "churn") == 0)
		return mode_churn(argc > 2 ? atoi(argv[2]) : 2000);
	if (strcmp(mode, "sigprof-late") == 0 || strcmp(mode, "sigprof-early") == 0) {
		if (early) {
			spin(0.5);
			printf("own SIGPROF signals: %d\n", own_signals);
			return 0;
		}
		return mode_sigprof();
	}
	if (strcmp(mode, "sigprof-exec") == 0) {
		struct itimerval it = { { 0, 10000 }, { 0, 10000 } };

		signal(SIGPROF, SIG_IGN);
		setitimer(ITIMER_PROF, &it, NULL);
		setenv("TIMER_CASES_EARLY", "1", 1);
		execl("/proc/self/exe", argv[0], "sigprof-early", (char *)NULL);
		perror("execl");
		return 1;
	}
	if (strcmp(mode, "exit") == 0) {
		spin(0.2);
		_exit(argc > 2 ? atoi(argv[2]) : 0);
	}
	if (strcmp(mode, "fork") == 0) {
		pid_t pid = fork();
		int st;

		spin(0.2);
		if (pid == 0)
			_exit(0);
		waitpid(pid, &st, 0);
		return 0;
	}
	if (strcmp(mode, "exec") == 0) {
		spin(0.1);
		execl("/proc/self/exe", argv[0], "spin", "0.1", (char *)NULL);
		perror("execl");
		return 1;
	}
	if (strcmp(mode, "deep") == 0)
		return deep(argc > 2 ? atoi(argv[2]) : 2000) > 0 ? 0 : 1;
	if (strcmp(mode, "wide") == 0) {
		double end = cpu_now() + (argc > 2 ? atof(argv[2]) : 1.0);

		srand(1);
		while (cpu_now() < end)
			wide(1 + rand() % 1000, 0.002);
		return 0;
	}
	if (strcmp(mode, "rename") == 0) {
		pthread_create(&t, NULL, rename_thread, NULL);
		pthread_join(t, NULL);
		return 0;
	}
	if (strcmp(mode, "blocked") == 0) {
		pthread_create(&t, NULL, blocked_thread, NULL);
		spin(0.3);
		pthread_join(t, NULL);
		return 0;
	}
	if (strcmp(mode, "crash") == 0) {
		spin(0.2);
		*(volatile int *)(uintptr_t)argc = 0;
		return 0;
	}
	spin(argc > 2 ? atof(argv[2]) : 0.3);
	return 0;
}
