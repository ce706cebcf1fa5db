/* duty.c - two threads: "spinner" is always on a CPU, "halfduty" spins for
 * about half of the time and sleeps the rest.  At the end it prints each
 * thread's own CPU time (CLOCK_THREAD_CPUTIME_ID), the truth a profile of it
 * must match. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink;
static double run_seconds = 1.0;

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

__attribute__((noinline)) void *spinner(void *arg)
{
	double start = now(CLOCK_MONOTONIC);
	(void)arg;
	while (now(CLOCK_MONOTONIC) - start < run_seconds)
		spin_for(0.005);
	return (void *)(intptr_t)(now(CLOCK_THREAD_CPUTIME_ID) * 1e9);
}

__attribute__((noinline)) void *halfduty(void *arg)
{
	double start = now(CLOCK_MONOTONIC);
	uint64_t rng = 88172645463325252ULL;
	(void)arg;
	while (now(CLOCK_MONOTONIC) - start < run_seconds) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		double unit = 0.003 + (rng % 4000) / 1e6; /* 3..7 ms */
		spin_for(unit);
		struct timespec ts = { 0, (long)(unit * 1e9) };
		nanosleep(&ts, NULL);
	}
	return (void *)(intptr_t)(now(CLOCK_THREAD_CPUTIME_ID) * 1e9);
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	void *ca, *cb;

	if (argc > 1)
		run_seconds = atof(argv[1]);
	pthread_create(&a, NULL, spinner, NULL);
	pthread_setname_np(a, "spinner");
	pthread_create(&b, NULL, halfduty, NULL);
	pthread_setname_np(b, "halfduty");
	pthread_join(a, &ca);
	pthread_join(b, &cb);
	printf("cpu_ns spinner %ld halfduty %ld\n", (long)(intptr_t)ca, (long)(intptr_t)cb);
	return 0;
}
