/* prefork.c - a pre-forked server for collect-timer -p with several
 * processes: a parent and three workers it forks, each computing in a
 * function of its own (parent_work, worker_1..worker_3) in bursts, the
 * k-th worker's bursts 2k times as long as the parent's, with a pause
 * between.  Each process prints "ready PID" once started; on SIGUSR1
 * each prints "cpu PID FUNCTION NS", its own CPU time so far.  SIGTERM
 * ends the parent, which ends the workers.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 3

static volatile sig_atomic_t asked, stopping;
static volatile unsigned long sink;

static void on_usr1(int sig)
{
	(void)sig;
	asked = 1;
}

static void on_term(int sig)
{
	(void)sig;
	stopping = 1;
}

static void burn(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
}

__attribute__((noinline)) static void parent_work(void) { burn(400000); }
__attribute__((noinline)) static void worker_1(void) { for (int k = 0; k < 2; k++) burn(400000); }
__attribute__((noinline)) static void worker_2(void) { for (int k = 0; k < 4; k++) burn(400000); }
__attribute__((noinline)) static void worker_3(void) { for (int k = 0; k < 6; k++) burn(400000); }

/* Prints this process's CPU time, as one write. */
static void say_cpu(const char *fn)
{
	struct timespec ts;
	char line[128];
	int n;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	n = snprintf(line, sizeof(line), "cpu %d %s %lld\n", (int)getpid(), fn,
		     (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec);
	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		exit(1);
}

/* Computes in fn with pauses until SIGTERM, answering SIGUSR1. */
static void serve(void (*fn)(void), const char *name)
{
	struct timespec pause = { 0, 2000000 };
	char line[64];
	int n = snprintf(line, sizeof(line), "ready %d\n", (int)getpid());

	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		exit(1);
	while (!stopping) {
		fn();
		nanosleep(&pause, NULL);
		if (asked) {
			asked = 0;
			say_cpu(name);
		}
	}
}

int main(void)
{
	static void (*const fns[WORKERS])(void) = { worker_1, worker_2, worker_3 };
	static const char *const names[WORKERS] = { "worker_1", "worker_2", "worker_3" };
	struct sigaction sa;
	pid_t kids[WORKERS];

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IONBF, 0);
	for (int k = 0; k < WORKERS; k++) {
		kids[k] = fork();
		if (kids[k] == 0) {
			serve(fns[k], names[k]);
			return 0;
		}
		if (kids[k] < 0)
			return 1;
	}
	serve(parent_work, "parent_work");
	for (int k = 0; k < WORKERS; k++) {
		kill(kids[k], SIGTERM);
		waitpid(kids[k], NULL, 0);
	}
	return 0;
}
