/* test-neglog.c - collect-heap's -ln(u) against libm's, over (0, 1] */
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "neglog.h"

int main(void)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;
	double worst = 0;

	/* the draws' own u: 53 random bits, (0, 1] */
	for (int i = 0; i < 10000000; i++) {
		double u, want, got, err;

		x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
		u = (double)(((x * 0x2545f4914f6cdd1dull) >> 11) + 1) * 0x1p-53;
		want = -log(u);
		got = heap_neglog(u);
		err = want == 0 ? fabs(got) : fabs(got - want) / want;
		if (err > worst)
			worst = err;
	}
	/* and the ends, and each side of the range's split */
	CHECK(heap_neglog(1.0) == 0.0);
	CHECK(fabs(heap_neglog(0x1p-53) - 53 * log(2.0)) < 1e-12);
	CHECK(fabs(heap_neglog(0.7071067811865475) - 0.34657359027997264) < 1e-10);
	CHECK(fabs(heap_neglog(0.7071067811865476) - 0.34657359027997264) < 1e-10);
	CHECK(fabs(heap_neglog(0.5) - log(2.0)) < 1e-15);
	printf("neglog: worst relative error %.3g over 10^7 draws\n", worst);
	CHECK(worst < 1e-10);
	return check_done("neglog");
}
