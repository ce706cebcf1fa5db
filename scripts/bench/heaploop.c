/* heaploop.c - a malloc-bound loop for scripts/bench/heap: N allocations
 * of 16 to 1024 bytes (a fixed pseudo-random sequence), each freeing the
 * block allocated 64 allocations before it, and nothing else. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	void *window[64] = { 0 };
	unsigned x = 1;

	for (long i = 0; i < n; i++) {
		int k = (int)(i & 63);

		x = x * 1103515245u + 12345u;
		free(window[k]);
		window[k] = malloc(16 + (x >> 16) % 1009);
		if (!window[k])
			return 1;
		*(volatile char *)window[k] = 1;
	}
	for (int k = 0; k < 64; k++)
		free(window[k]);
	return 0;
}
