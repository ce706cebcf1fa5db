/* sortcmp.c - stacks that go through libc, for unwinders to be measured on.
 * Build it without frame pointers: cc -O2 -fomit-frame-pointer -g
 *
 *   sortcmp sort SECONDS   main > run_sorts > qsort (glibc) > ... > cmp_keys
 *   sortcmp deep SECONDS   main > run_deep > descend x 200 > deep_spin
 *
 * sort: sorts small arrays (64 to 120 keys of 8 bytes, refilled with
 * pseudo-random keys before every sort) over and over for SECONDS of CPU
 * time.  Glibc 2.36's qsort merge-sorts such arrays in msort_with_tmp(), a
 * recursive function in libc, which calls cmp_keys() for every comparison;
 * cmp_keys() hashes both keys with a few rounds of a mixing loop, so most
 * of the CPU time is spent in it, under frames of a libc that has no frame
 * pointers.  The arrays are small so that the distinct stacks are few and
 * soon all seen (their shape depends only on the array's length and where
 * the merge is), like those of a long-running program.
 *
 * deep: a 200-frame recursion whose innermost call spins, for SECONDS of
 * CPU time: every sample of deep_spin() should have all 200 descend()
 * frames, then run_deep and main.  Each descend() frame holds a small
 * buffer, so that the recursion uses about 12 KiB of stack (printed), more
 * than an 8 KiB stack copy holds.
 *
 * Both print one line at the end: what they did, and the CPU time. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define DEEP_FRAMES 200
#define MIX_ROUNDS 12

static volatile uint64_t sink;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The comparator: orders keys by a hash of them, computed with a few
 * rounds of multiply-xor-shift, so that a comparison costs some tens of
 * nanoseconds and qsort's own work is the smaller part. */
__attribute__((noinline)) int cmp_keys(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	for (int i = 0; i < MIX_ROUNDS; i++) {
		x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ULL;
		y = (y ^ (y >> 29)) * 0xbf58476d1ce4e5b9ULL;
		x ^= x >> 32;
		y ^= y >> 32;
	}
	return (x > y) - (x < y);
}

/* Sorts until the process has used SECONDS of CPU time; returns the
 * sorts done.  The check after qsort keeps this frame on the stack under
 * qsort (the call is not a tail call). */
__attribute__((noinline)) unsigned long run_sorts(double seconds)
{
	uint64_t keys[120];
	unsigned long sorts = 0;

	while (cpu_seconds() < seconds) {
		/* a batch between clock reads: ~1 ms, of varying length, so
		 * the sorts do not beat in time with the scheduler tick */
		for (int batch = 0; batch < 64; batch++) {
			size_t n = 64 + next_random() % 57;
			for (size_t i = 0; i < n; i++)
				keys[i] = next_random();
			qsort(keys, n, sizeof keys[0], cmp_keys);
			sink += keys[0] ^ keys[n - 1];
			sorts++;
		}
	}
	return sorts;
}

static uintptr_t deepest_sp;

__attribute__((noinline)) uint64_t deep_spin(double seconds)
{
	volatile uint64_t acc = 0;
	deepest_sp = (uintptr_t)&acc;
	while (cpu_seconds() < seconds) {
		unsigned n = 200000 + next_random() % 100000;
		for (unsigned i = 0; i < n; i++)
			acc += i * 2654435761u;
	}
	return acc;
}

/* One frame of the recursion.  The buffer gives the frame some size and
 * the use of the result after the call keeps it from being a tail call. */
__attribute__((noinline, noclone)) uint64_t descend(int depth, double seconds)
{
	volatile uint64_t pad[6];
	pad[0] = (uint64_t)depth;
	uint64_t r = depth > 1 ? descend(depth - 1, seconds) : deep_spin(seconds);
	return r + pad[0];
}

__attribute__((noinline)) uint64_t run_deep(double seconds)
{
	return descend(DEEP_FRAMES, seconds) + 1;
}

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "sort") != 0 && strcmp(argv[1], "deep") != 0)) {
		fprintf(stderr, "usage: sortcmp sort|deep SECONDS\n");
		return 2;
	}
	double seconds = atof(argv[2]);
	if (strcmp(argv[1], "sort") == 0) {
		unsigned long sorts = run_sorts(seconds);
		printf("sortcmp: %lu sorts, %.3f s CPU\n", sorts, cpu_seconds());
	} else {
		uintptr_t top = (uintptr_t)&seconds;
		sink += run_deep(seconds);
		printf("sortcmp: %d frames, %lu bytes of stack, %.3f s CPU\n", DEEP_FRAMES,
		       (unsigned long)(top - deepest_sp), cpu_seconds());
	}
	return 0;
}
