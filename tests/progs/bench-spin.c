/* bench-spin.c - a CPU-bound multithreaded workload for profiling tests
 *
 * bench-spin [threads [work-units]]: every thread runs work-units units of
 * arithmetic of jittered length (so the work does not line up with the
 * scheduler tick) through a few levels of calls.  Prints a checksum so the
 * work is not optimised away.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static long units = 2000;

__attribute__((noinline)) static uint64_t spin_leaf(uint64_t x, long n)
{
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noinline)) static uint64_t spin_middle(uint64_t x, long n)
{
	x = spin_leaf(x, n);
	return x ^ (x >> 17);
}

__attribute__((noinline)) static uint64_t spin_top(uint64_t seed)
{
	uint64_t x = seed, r = seed | 1;

	for (long u = 0; u < units; u++) {
		r = r * 2862933555777941757ull + 3037000493ull;
		x = spin_middle(x, 20000 + (long)(r >> 50)); /* 20k..36k iterations */
	}
	return x;
}

static void *spin_thread(void *arg)
{
	uint64_t *out = arg;

	*out = spin_top(*out);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	uint64_t sum = 0, *res;
	pthread_t *t;

	if (argc > 2)
		units = atol(argv[2]);
	if (n < 1)
		n = 1;
	t = calloc((size_t)n, sizeof(*t));
	res = calloc((size_t)n, sizeof(*res));
	for (int i = 0; i < n; i++) {
		res[i] = (uint64_t)i + 1;
		if (i > 0 && pthread_create(&t[i], NULL, spin_thread, &res[i]) != 0)
			return 1;
	}
	spin_thread(&res[0]);
	for (int i = 1; i < n; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < n; i++)
		sum ^= res[i];
	printf("%llx\n", (unsigned long long)sum);
	free(t);
	free(res);
	return 0;
}
