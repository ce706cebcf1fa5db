/* attachfp.c - a thread whose computation lives in vector registers: a
 * round of 2,000,000 steps of a recurrence in doubles, kept in xmm
 * registers throughout, gives the same sum every time; one that does not
 * (a register changed under it) prints "mismatch" and ends the program
 * with status 3.  Prints "ready" after the first round.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static double fp_round(double seed)
{
	double a = seed, b = 0.25, c = 0.125, d = 1.0;

	for (int i = 0; i < 2000000; i++) {
		a = a * 0.999999 + b;
		b = b * 0.999998 + c;
		c = c * 0.999997 + d * 1e-7;
		d = d * 0.999996 + a * 1e-9;
	}
	return a + b + c + d;
}

int main(void)
{
	volatile double seed = 1.0;
	double want = fp_round(seed);

	printf("ready\n");
	fflush(stdout);
	for (;;) {
		double got = fp_round(seed);

		if (got != want) {
			printf("mismatch %.17g %.17g\n", got, want);
			fflush(stdout);
			exit(3);
		}
	}
}
