/* sleeper.c - for wall-clock profiles: "napper" spins and blocks in turn,
 * about half of the time each, alternating nanosleep and poll; "spinner"
 * is always on a CPU.  At the end it prints, per thread, its CPU time, its
 * wall-clock time, the time it spent in nanosleep and poll, and the time it
 * waited on a run queue (from /proc/thread-self/schedstat), the truth a
 * wall-clock profile must match; and how
 * many times a sleep or poll failed with EINTR (which a profiler must not
 * change), then how many it made ("naps N"). */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;
static double run_seconds = 1.5;

static double now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void spin_for(double seconds)
{
	double end = now(CLOCK_THREAD_CPUTIME_ID) + seconds;
	volatile uint64_t acc = 0;
	while (now(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			acc += (uint64_t)i * 2654435761u;
	sink += acc;
}

/* Nanoseconds the calling thread waited on a run queue (runnable, not
 * running), from /proc/thread-self/schedstat; 0 if unknown. */
static double runq_wait(void)
{
	unsigned long long run = 0, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");

	if (f == NULL)
		return 0;
	if (fscanf(f, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	fclose(f);
	return wait / 1e9;
}

struct result {
	double cpu, wall, blocked, runq;
	int eintr, naps;
};

__attribute__((noinline)) void nap_nanosleep(double seconds, int *eintr)
{
	struct timespec ts = { 0, (long)(seconds * 1e9) };
	if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
		(*eintr)++;
}

__attribute__((noinline)) void nap_poll(double seconds, int *eintr)
{
	if (poll(NULL, 0, (int)(seconds * 1e3 + 0.5)) < 0 && errno == EINTR)
		(*eintr)++;
}

static void *sleeper(void *arg)
{
	struct result *r = arg;
	double start = now(CLOCK_MONOTONIC), q0 = runq_wait();
	uint64_t rng = 88172645463325252ULL;

	for (int k = 0; now(CLOCK_MONOTONIC) - start < run_seconds; k++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		double unit = 0.003 + (rng % 5000) / 1e6; /* 3..8 ms */
		spin_for(unit);
		double t0 = now(CLOCK_MONOTONIC);
		if (k & 1)
			nap_poll(unit, &r->eintr);
		else
			nap_nanosleep(unit, &r->eintr);
		r->naps++;
		r->blocked += now(CLOCK_MONOTONIC) - t0;
	}
	r->cpu = now(CLOCK_THREAD_CPUTIME_ID);
	r->wall = now(CLOCK_MONOTONIC) - start;
	r->runq = runq_wait() - q0;
	return NULL;
}

static void *spinner(void *arg)
{
	struct result *r = arg;
	double start = now(CLOCK_MONOTONIC), q0 = runq_wait();

	while (now(CLOCK_MONOTONIC) - start < run_seconds)
		spin_for(0.005);
	r->cpu = now(CLOCK_THREAD_CPUTIME_ID);
	r->wall = now(CLOCK_MONOTONIC) - start;
	r->runq = runq_wait() - q0;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	struct result ra = { 0 }, rb = { 0 };

	if (argc > 1)
		run_seconds = atof(argv[1]);
	pthread_create(&a, NULL, sleeper, &ra);
	pthread_setname_np(a, "napper");
	pthread_create(&b, NULL, spinner, &rb);
	pthread_setname_np(b, "spinner");
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("thread napper cpu %.6f wall %.6f blocked %.6f runq %.6f\n", ra.cpu, ra.wall,
	       ra.blocked, ra.runq);
	printf("thread spinner cpu %.6f wall %.6f blocked %.6f runq %.6f\n", rb.cpu, rb.wall,
	       rb.blocked, rb.runq);
	printf("eintr %d\n", ra.eintr);
	printf("naps %d\n", ra.naps);
	return 0;
}
