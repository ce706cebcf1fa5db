/* Functions built without frame pointers: the CFA follows every push,
 * pop and stack adjustment; one realigns its stack. */
#include "targets.h"

__attribute__((noinline)) long cfi_nofp_inner(long *a, int n)
{
	long s = 0;

	for (int i = 0; i < n; i++)
		s += a[i] ^ (s >> 3);
	return s;
}

/* Keeps several callee-saved registers live across calls: pushes and pops
 * around a frame of locals. */
__attribute__((noinline)) long cfi_nofp_target(int n)
{
	long a[64], x = n, y = n * 3, z = n * 5, w = n * 7;

	for (int i = 0; i < 64; i++)
		a[i] = i * x;
	x += cfi_nofp_inner(a, n);
	y ^= cfi_nofp_inner(a, n / 2);
	z += cfi_nofp_inner(a, n / 3);
	w ^= cfi_nofp_inner(a, n / 4);
	return x + y + z + w;
}

/* A 32-byte aligned local: gcc realigns the stack through rbp. */
__attribute__((noinline)) long cfi_nofp_aligned(int n)
{
	long v[8] __attribute__((aligned(32)));

	for (int i = 0; i < 8; i++)
		v[i] = n + i;
	return cfi_nofp_inner(v, 8);
}

/* A variable-length array and an aligned local: gcc realigns the stack
 * with a pointer to the incoming one in r10, then saved on the stack: the
 * CFA is found through it (DW_CFA_def_cfa_expression) and rbp's rule is an
 * expression too. */
__attribute__((noinline)) long cfi_nofp_drap(int n)
{
	long v[n];
	long w[8] __attribute__((aligned(64)));

	for (int i = 0; i < n; i++)
		v[i] = i;
	for (int i = 0; i < 8; i++)
		w[i] = n + i;
	return cfi_nofp_inner(v, n) + cfi_nofp_inner(w, 8);
}
