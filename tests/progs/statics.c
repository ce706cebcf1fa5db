/* statics.c - a shared library whose work is in two functions with internal
 * linkage, half of it each: stripped of its symbols, their addresses are
 * all a profiler can name them by.  statics-host.c calls it. */
#include <stdint.h>

__attribute__((noinline)) static uint64_t statics_first(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	return x;
}

__attribute__((noinline)) static uint64_t statics_second(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 2862933555777941757ULL + 3037000493ULL;
	return x;
}

uint64_t statics_entry(uint64_t x)
{
	x = statics_first(x);
	x = statics_second(x);
	__asm__ volatile("" ::: "memory");
	return x + 1;
}
