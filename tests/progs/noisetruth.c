/* noisetruth.c - known work for the tests of the reports' noise (one
 * standard error), repeated many times
 *
 *   noisetruth heap    small() allocates 40000 blocks of 64 bytes, large()
 *                      8 blocks of 1 MiB, mixed() 20000 blocks of 64 bytes
 *                      to 64 KiB (log-uniform, the same sizes every run);
 *                      each block is freed at once.  It prints
 *                      "mixed_bytes N", the bytes mixed() asked for.
 *   noisetruth cpu MS  MS milliseconds of the thread's CPU time (after 20 ms
 *                      that measure its speed) in units of 50 to 150 us,
 *                      each unit given to heavy() (70%) or light() (30%);
 *                      it prints "light_ns N", the CPU time light()'s units
 *                      took, by the thread's CPU clock.
 *
 * The units are far shorter than a sampling period and interleaved, so
 * that where a sample lands is a draw: light()'s share of the samples is
 * binomial, as the reports' standard error assumes. */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *volatile sink;
static volatile uint64_t spin;

static uint64_t rng = 0x853c49e6748fea9bull;

static uint32_t next(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng >> 33);
}

static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void one(size_t size)
{
	void *p = malloc(size);

	if (!p)
		abort();
	memset(p, 1, size < 64 ? size : 64);
	sink = p;
	free(p);
}

__attribute__((noinline)) static void small(void)
{
	for (int i = 0; i < 40000; i++)
		one(64);
}

__attribute__((noinline)) static void large(void)
{
	for (int i = 0; i < 8; i++)
		one(1 << 20);
}

__attribute__((noinline)) static uint64_t mixed(void)
{
	uint64_t bytes = 0;

	for (int i = 0; i < 20000; i++) {
		/* 2^6 to 2^16 bytes, log-uniform */
		double e = 6 + 10 * (double)next() / 2147483648.0;
		size_t size = (size_t)__builtin_exp2(e);
		one(size);
		bytes += size;
	}
	return bytes;
}

/* Spin n rounds: a round is a few ns, the same in both functions. */
#define SPIN(n) do { for (uint64_t i_ = 0; i_ < (n); i_++) spin += i_; } while (0)

__attribute__((noinline)) static void heavy(uint64_t rounds)
{
	SPIN(rounds);
}

__attribute__((noinline)) static void light(uint64_t rounds)
{
	SPIN(rounds);
}

/* Rounds of SPIN a microsecond, measured on 20 ms of it. */
static double rounds_per_us(void)
{
	uint64_t n = 0;
	int64_t t0 = cpu_ns(), t;

	while ((t = cpu_ns()) - t0 < 20000000) {
		SPIN(10000);
		n += 10000;
	}
	return (double)n / ((double)(t - t0) / 1000);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "heap") == 0) {
		small();
		large();
		printf("mixed_bytes %llu\n", (unsigned long long)mixed());
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "cpu") == 0) {
		double rate = rounds_per_us();
		int64_t end = cpu_ns() + (int64_t)atoi(argv[2]) * 1000000, in_light = 0, t0 = cpu_ns(), t1;
		while (t0 < end) {
			uint64_t rounds = (uint64_t)(rate * (50 + next() % 100));
			bool l = next() % 10 < 3;
			if (l)
				light(rounds);
			else
				heavy(rounds);
			t1 = cpu_ns();
			in_light += l ? t1 - t0 : 0;
			t0 = t1;
		}
		printf("light_ns %lld\n", (long long)in_light);
		return 0;
	}
	fprintf(stderr, "usage: noisetruth heap | noisetruth cpu MS\n");
	return 2;
}
