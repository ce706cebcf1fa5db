/* recursion.c - deep recursion for the flame graph and --fold-recursion.
 *
 *   recursion deep DEPTH SECONDS    direct recursion (deep calls deep) and a
 *                                   cycle (ping calls pong calls ping), each
 *                                   DEPTH frames deep, down to leafwork
 *   recursion branchy DEPTH SECONDS recursion through marka and markb chosen
 *                                   at random at each level: nearly every
 *                                   sample a stack of its own
 *
 * Each runs for about SECONDS of CPU time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;
static unsigned long long rng = 88172645463325252ull;

static unsigned next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)rng;
}

__attribute__((noinline)) void leafwork(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)i;
}

__attribute__((noinline)) void deep(int n)
{
	if (n > 0)
		deep(n - 1);
	else
		leafwork(20000);
	sink++;
}

__attribute__((noinline)) void ping(int n);

__attribute__((noinline)) void pong(int n)
{
	if (n > 0)
		ping(n - 1);
	else
		leafwork(20000);
	sink++;
}

__attribute__((noinline)) void ping(int n)
{
	if (n > 0)
		pong(n - 1);
	else
		leafwork(20000);
	sink++;
}

__attribute__((noinline)) void markb(int n);

__attribute__((noinline)) void marka(int n)
{
	if (n > 0) {
		if (next_random() & 1)
			marka(n - 1);
		else
			markb(n - 1);
	} else {
		leafwork(3000);
	}
	sink++;
}

__attribute__((noinline)) void markb(int n)
{
	leafwork(3000);
	if (n > 0) {
		if (next_random() & 1)
			marka(n - 1);
		else
			markb(n - 1);
	}
	sink++;
}

static double cpu_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: recursion deep|branchy DEPTH SECONDS\n");
		return 2;
	}
	int depth = atoi(argv[2]);
	double secs = atof(argv[3]);
	int branchy = strcmp(argv[1], "branchy") == 0;

	while (cpu_seconds() < secs) {
		if (branchy) {
			marka(depth);
		} else {
			deep(depth);
			ping(depth);
		}
	}
	return 0;
}
