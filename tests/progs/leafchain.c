/* leafchain.c - main -> outer_call -> middle_call -> leaf_spin, where
 * leaf_spin uses no stack, so gcc at -O2 gives it no frame even with
 * -fno-omit-frame-pointer: a plain frame-pointer walk from it skips
 * middle_call.  Also a leaf that does set up a frame (framed_leaf) under
 * the same callers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) uint64_t leaf_spin(uint64_t n)
{
	uint64_t acc = 1;
	for (uint64_t i = 0; i < n; i++)
		acc = acc * 6364136223846793005ULL + i;
	return acc;
}

__attribute__((noinline)) uint64_t framed_leaf(uint64_t n)
{
	volatile uint64_t acc = 1;
	for (uint64_t i = 0; i < n; i++)
		acc = acc * 6364136223846793005ULL + i;
	return acc;
}

__attribute__((noinline)) uint64_t middle_call(uint64_t n)
{
	uint64_t r = leaf_spin(n);
	__asm__ volatile("" ::: "memory");
	return r + framed_leaf(n / 4);
}

__attribute__((noinline)) uint64_t outer_call(uint64_t n)
{
	uint64_t r = middle_call(n);
	__asm__ volatile("" ::: "memory");
	return r + 1;
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
	uint64_t sum = 0, rng = 12345;

	while (cpu_seconds() < seconds) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		sum += outer_call(200000 + rng % 50000);
	}
	printf("%llu\n", (unsigned long long)(sum & 1));
	return 0;
}
