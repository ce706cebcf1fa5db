/* Functions built with frame pointers: the CFA moves from rsp to rbp in
 * the prologue and back in the epilogue. */
#include "targets.h"

__attribute__((noinline)) int cfi_fp_inner(volatile int *v, int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += v[i & 3] * i;
	return s;
}

__attribute__((noinline)) int cfi_fp_target(int n)
{
	volatile int v[4] = { 1, 2, 3, n };
	int s = cfi_fp_inner(v, n);

	return s + cfi_fp_inner(v, n / 2);
}
