/* A shared library the test dlopens after the tables were made. */
#include "targets.h"

__attribute__((noinline)) static int cfi_plugin_inner(int n)
{
	volatile int s = n;

	for (int i = 0; i < n; i++)
		s ^= i;
	return s;
}

int cfi_plugin_work(int n)
{
	return cfi_plugin_inner(n) + cfi_plugin_inner(n / 2);
}
