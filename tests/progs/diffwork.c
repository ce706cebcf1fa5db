/* diffwork - three functions that use given amounts of CPU time, in
 * turns of 50 ms, so that a comparison of two runs has a known truth:
 * diffwork MS_ALPHA MS_BETA MS_GAMMA
 *
 * Each function computes until its thread has used its share of CPU time
 * (by the thread's CPU clock, read every few microseconds), so the CPU
 * time each one gets does not depend on how fast the machine is today. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Compute until the thread's CPU clock reaches until: a macro, so that
 * each function's samples are its own. */
#define BURN(ns)                                                                  \
	do {                                                                      \
		int64_t until = cpu_ns() + (ns);                                  \
		uint64_t x = sink | 1;                                            \
		while (cpu_ns() < until) {                                        \
			for (int i = 0; i < 20000; i++)                           \
				x = x * 6364136223846793005ULL + 1442695040888963407ULL; \
			sink = x;                                                 \
		}                                                                 \
	} while (0)

__attribute__((noinline)) void alpha(int64_t ns) { BURN(ns); }
__attribute__((noinline)) void beta(int64_t ns) { BURN(ns); }
__attribute__((noinline)) void gamma_(int64_t ns) { BURN(ns); }

int main(int argc, char **argv)
{
	int64_t want[3], done[3] = { 0, 0, 0 };
	/* 50 ms turns: long against a sample's period (a sample's CPU time
	 * since the last one may begin in the turn before), short against
	 * the run, so that the machine's load falls on all three alike */
	const int64_t slice = 50000000;
	void (*fn[3])(int64_t) = { alpha, beta, gamma_ };

	if (argc != 4) {
		fprintf(stderr, "usage: diffwork MS_ALPHA MS_BETA MS_GAMMA\n");
		return 2;
	}
	for (int i = 0; i < 3; i++)
		want[i] = atoll(argv[i + 1]) * 1000000;
	for (;;) {
		int busy = 0;
		for (int i = 0; i < 3; i++) {
			int64_t left = want[i] - done[i];
			if (left <= 0)
				continue;
			int64_t step = left < slice ? left : slice;
			int64_t t0 = cpu_ns();
			fn[i](step);
			done[i] += cpu_ns() - t0;
			busy = 1;
		}
		if (!busy)
			break;
	}
	return 0;
}
