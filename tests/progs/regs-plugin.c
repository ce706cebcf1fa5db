/* regs-plugin.c - a library for regs-stress dlopen: spins in plugin_spin
 * for the given seconds of CPU time. */
#include <stdint.h>
#include <time.h>

__attribute__((noinline)) static uint64_t plugin_step(uint64_t x, long n)
{
	for (long i = 0; i < n; i++)
		x = x * 2862933555777941757ull + 3037000493ull;
	return x;
}

uint64_t plugin_spin(double s)
{
	struct timespec ts;
	double end;
	uint64_t x = 7;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	end = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 + s;
	do {
		x = plugin_step(x, 10000);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	} while ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9 < end);
	return x;
}
