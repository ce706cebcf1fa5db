/* A shared library the test links: its functions are reached through the
 * program's PLT. */
#include "targets.h"

__attribute__((noinline)) int cfi_lib_work(int n)
{
	volatile int s = 0;

	for (int i = 0; i < n; i++)
		s += i;
	return s;
}
