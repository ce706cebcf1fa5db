/* switchpong.c - a ping-pong of one byte through two pipes, pinned to one
 * CPU, for scripts/bench/switchcost: every round trip is two context
 * switches.
 *
 * usage: switchpong threads|procs|spin ROUNDS [CPU]
 *
 * threads: two threads of one process; procs: two processes (a fork);
 * spin: one thread computing, a round being a fixed amount of arithmetic
 * (no switch), to show what sampling costs where nothing switches.  All
 * run on CPU (default 0).  Prints the wall-clock microseconds a round
 * took, measured around the rounds only (not the start or the end).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];
static long rounds;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The far side: each byte read from ping goes back on pong. */
static void *echo(void *arg)
{
	char c;

	(void)arg;
	for (long i = 0; i < rounds; i++) {
		if (read(ping[0], &c, 1) != 1 || write(pong[1], &c, 1) != 1)
			exit(1);
	}
	return NULL;
}

static volatile unsigned long sink;

/* About as much arithmetic as a round trip takes here, alone. */
static void spin_round(void)
{
	unsigned long x = sink;

	for (int i = 0; i < 4000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

int main(int argc, char **argv)
{
	cpu_set_t set;
	pthread_t th;
	pid_t pid = -1;
	double t0, t1;
	char c = 'x';

	if (argc < 3 || (strcmp(argv[1], "threads") && strcmp(argv[1], "procs") &&
			 strcmp(argv[1], "spin"))) {
		fprintf(stderr, "usage: switchpong threads|procs|spin ROUNDS [CPU]\n");
		return 2;
	}
	rounds = atol(argv[2]);
	CPU_ZERO(&set);
	CPU_SET(argc > 3 ? atoi(argv[3]) : 0, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		perror("sched_setaffinity");
		return 1;
	}
	if (pipe(ping) != 0 || pipe(pong) != 0)
		return 1;
	if (!strcmp(argv[1], "spin")) {
		t0 = now_us();
		for (long i = 0; i < rounds; i++)
			spin_round();
		t1 = now_us();
	} else {
		if (!strcmp(argv[1], "threads")) {
			if (pthread_create(&th, NULL, echo, NULL) != 0)
				return 1;
		} else if ((pid = fork()) == 0) {
			echo(NULL);
			_exit(0);
		} else if (pid < 0) {
			return 1;
		}
		t0 = now_us();
		for (long i = 0; i < rounds; i++) {
			if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
				return 1;
		}
		t1 = now_us();
		if (pid > 0)
			waitpid(pid, NULL, 0);
		else
			pthread_join(th, NULL);
	}
	printf("%.3f us/round\n", (t1 - t0) / (double)rounds);
	return 0;
}
