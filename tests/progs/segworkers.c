/* segworkers.c - a parent that forks workers living across --split's
 * segment boundaries, each of which, like a server's main loop, blocks the
 * profiling signal while it works for a while: its first sample after
 * weighs all that CPU time, more than one segment's length.
 * Usage: segworkers WORKERS BLOCKED_CPU_SECONDS SPIN_CPU_SECONDS */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin(double secs)
{
	double end = cpu_now() + secs;

	while (cpu_now() < end)
		for (int i = 0; i < 20000; i++)
			sink += i * 0.5;
}

__attribute__((noinline)) static void blocked_work(double secs)
{
	sigset_t set, old;

	sigemptyset(&set);
	sigaddset(&set, SIGPROF);
	sigprocmask(SIG_BLOCK, &set, &old);
	spin(secs);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

__attribute__((noinline)) static void worker(double blocked, double secs)
{
	spin(secs / 2);
	blocked_work(blocked);
	spin(secs / 2);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	double blocked = argc > 2 ? atof(argv[2]) : 0.8, secs = argc > 3 ? atof(argv[3]) : 0.4;

	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			worker(blocked, secs);
			return 0;
		}
		if (pid < 0) {
			perror("fork");
			return 1;
		}
	}
	worker(blocked, secs);
	while (wait(NULL) > 0)
		;
	return 0;
}
