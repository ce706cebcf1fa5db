/* pltcall.c - a loop calling a tiny libc function through its PLT stub
 *
 * labs() is four instructions, so a good share of the loop's time is spent
 * on the stub's one jump: samples land in the PLT, which no symbol covers.
 * Build with -fno-builtin so the call is not inlined.
 * Usage: pltcall [SECONDS]   (CPU seconds, default 1)
 */
#include <stdlib.h>
#include <time.h>

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	double end = cpu_seconds() + secs;
	volatile long sum = 0;

	do {
		for (long i = 0; i < 100000; i++)
			sum += labs(i - 50000);
	} while (cpu_seconds() < end);
	return sum == 42;
}
