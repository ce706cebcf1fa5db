/* plugin.c - a shared object that plugin-host loads with dlopen after it
 * has started: plugin_entry > plugin_hot. */
#include <stdint.h>

__attribute__((noinline)) uint64_t plugin_hot(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 2862933555777941757ULL + 3037000493ULL;
	return x;
}

uint64_t plugin_entry(uint64_t x)
{
	uint64_t r = plugin_hot(x);
	__asm__ volatile("" ::: "memory");
	return r + 1;
}
