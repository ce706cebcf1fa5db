/* split.c - a single-threaded program that spends 3/4 of its CPU time in
 * hot_work() and 1/4 in cold_work().  The work comes in units of random
 * size so that it does not beat in time with the scheduler tick. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static unsigned jitter(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % 2000);
}

__attribute__((noinline)) void hot_work(unsigned n)
{
	volatile uint64_t acc = 0;
	for (unsigned i = 0; i < n; i++)
		acc += i * 2654435761u;
	sink += acc;
}

__attribute__((noinline)) void cold_work(unsigned n)
{
	volatile uint64_t acc = 0;
	for (unsigned i = 0; i < n; i++)
		acc += i * 2654435761u;
	sink += acc;
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;

	while (cpu_seconds() < seconds) {
		for (int k = 0; k < 20; k++) {
			unsigned n = 3000 + jitter();
			hot_work(3 * n);
			cold_work(n);
		}
	}
	printf("done %.3f s CPU\n", cpu_seconds());
	return 0;
}
