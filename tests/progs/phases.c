/* phases - a run with a known "when": phase_one computes for a second of
 * CPU time, then phase_two for a second, then both at once in two
 * threads (a second each), with a pause between phases.  Each phase's
 * start and end (CLOCK_MONOTONIC, ns) are printed on standard output:
 *   one START END / two START END / both START END
 * so that a test can find them in a trace whatever the machine's load.
 * phases [SECONDS] changes the second. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static int64_t work_ns = 1000000000;

static int64_t now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Compute until the thread has used ns more of CPU time. */
#define BURN(ns)                                                                          \
	do {                                                                              \
		int64_t until = now(CLOCK_THREAD_CPUTIME_ID) + (ns);                      \
		uint64_t x = sink | 1;                                                    \
		while (now(CLOCK_THREAD_CPUTIME_ID) < until) {                            \
			for (int i = 0; i < 20000; i++)                                   \
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;  \
			sink = x;                                                         \
		}                                                                         \
	} while (0)

__attribute__((noinline)) void phase_one(void) { BURN(work_ns); }
__attribute__((noinline)) void phase_two(void) { BURN(work_ns); }

static void *second_thread(void *arg)
{
	(void)arg;
	phase_two();
	return NULL;
}

int main(int argc, char **argv)
{
	int64_t a, b;
	pthread_t t;

	if (argc > 1)
		work_ns = (int64_t)(atof(argv[1]) * 1e9);
	a = now(CLOCK_MONOTONIC);
	phase_one();
	b = now(CLOCK_MONOTONIC);
	printf("one %lld %lld\n", (long long)a, (long long)b);
	usleep(100000);
	a = now(CLOCK_MONOTONIC);
	phase_two();
	b = now(CLOCK_MONOTONIC);
	printf("two %lld %lld\n", (long long)a, (long long)b);
	usleep(100000);
	a = now(CLOCK_MONOTONIC);
	if (pthread_create(&t, NULL, second_thread, NULL) != 0)
		return 1;
	phase_one();
	pthread_join(t, NULL);
	b = now(CLOCK_MONOTONIC);
	printf("both %lld %lld\n", (long long)a, (long long)b);
	return 0;
}
