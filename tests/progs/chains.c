/* chains.c - hot leaves with known call chains, for the unwinding tests.
 *
 *   chains inline SECONDS   main > compute_block > mix_round > rotate_mix,
 *                           the last two inlined (always_inline, static inline)
 *   chains qsort SECONDS    main > sort_work > qsort (libc) > ... > cmp_values
 *   chains deep SECONDS     main > descend x 60 > deep_leaf
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile uint64_t sink;

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline uint64_t rotate_mix(uint64_t x, uint64_t k)
{
	for (int i = 0; i < 64; i++)
		x = ((x << 13) | (x >> 51)) * 0x9e3779b97f4a7c15ULL + k;
	return x;
}

static inline __attribute__((always_inline)) uint64_t mix_round(uint64_t x, uint64_t k)
{
	return rotate_mix(x ^ k, k + 1);
}

__attribute__((noinline)) uint64_t compute_block(uint64_t seed, int n)
{
	uint64_t x = seed;
	for (int i = 0; i < n; i++)
		x = mix_round(x, (uint64_t)i);
	return x;
}

/* Compares by a hash of the values, costly enough to be seen. */
__attribute__((noinline)) int cmp_values(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	for (int i = 0; i < 16; i++) {
		x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ULL;
		y = (y ^ (y >> 29)) * 0xbf58476d1ce4e5b9ULL;
	}
	return (x > y) - (x < y);
}

__attribute__((noinline)) void sort_work(uint64_t *v, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 7;
		seed ^= seed << 17;
		v[i] = seed;
	}
	qsort(v, n, sizeof *v, cmp_values);
	/* Not a tail call: sort_work stays on the stack under qsort. */
	__asm__ volatile("" ::: "memory");
	sink += v[0];
}

__attribute__((noinline)) uint64_t deep_leaf(uint64_t x)
{
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline)) uint64_t descend(int depth, uint64_t x)
{
	uint64_t r = depth ? descend(depth - 1, x + 1) : deep_leaf(x);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "inline";
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;
	static uint64_t v[4096];
	uint64_t seed = 88172645463325252ULL;

	while (cpu_seconds() < seconds) {
		if (strcmp(mode, "inline") == 0)
			sink += compute_block(seed++, 2000);
		else if (strcmp(mode, "qsort") == 0)
			sort_work(v, sizeof v / sizeof *v, seed++);
		else if (strcmp(mode, "deep") == 0)
			sink += descend(60, seed++);
		else
			return 2;
	}
	printf("%llu\n", (unsigned long long)(sink & 1));
	return 0;
}
