/* inlines.c - CPU time spent inside inlined code, for comparing symbolizers
 * (tests/e2e/symbolizers.sh): at -O2 mix_step and mix_round are inlined
 * into hash_block (always_inline and static inline), hash_block is a real
 * function called from main, and tail_sum is a plain noinline leaf. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline __attribute__((always_inline)) uint64_t mix_step(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ULL;
	h ^= h >> 29;
	return h;
}

static inline uint64_t mix_round(uint64_t h, const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = mix_step(h, v[i] + i);
	return h;
}

__attribute__((noinline)) uint64_t hash_block(const uint64_t *v, size_t n, int rounds)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (int r = 0; r < rounds; r++)
		h = mix_round(h, v, n);
	return h;
}

__attribute__((noinline)) uint64_t tail_sum(const uint64_t *v, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i] * (i | 1);
	return s;
}

/* Not inlined: libbfd would name it after main (see symbolizers.sh). */
__attribute__((noinline)) static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	uint64_t v[256], sum = 0;

	for (size_t i = 0; i < 256; i++)
		v[i] = i * 2654435761u;
	while (cpu_seconds() < seconds) {
		sum += hash_block(v, 256, 64);
		sum += tail_sum(v, 256);
		v[sum & 255] ^= sum;
	}
	printf("%llu\n", (unsigned long long)(sum & 1));
	return 0;
}
