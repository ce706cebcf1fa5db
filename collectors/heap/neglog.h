/* neglog.h - -ln(u) for the sampler's exponential draws, without libm
 *
 * The draw of the bytes to the next sample takes -ln(u) of a uniform u in
 * (0, 1]; libm's log costs a call and a table the cache has lost since the
 * last sample.  Here: u = m * 2^e with m in [sqrt(1/2), sqrt(2)), and
 * ln(m) = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...) with s = (m-1)/(m+1),
 * |s| < 0.172, to s^11: relative error below 1e-10, far below what the
 * sampling's statistics can see.  Header-only, so that a test can check it
 * against libm.
 */
#ifndef PROFVIEW_HEAP_NEGLOG_H
#define PROFVIEW_HEAP_NEGLOG_H

#include <stdint.h>
#include <string.h>

/* -ln(u), u in (0, 1] a normal double. */
static inline double heap_neglog(double u)
{
	uint64_t bits;
	int e;
	double m, s, s2, p;

	memcpy(&bits, &u, sizeof(bits));
	e = (int)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & ((1ull << 52) - 1)) | (1023ull << 52);
	memcpy(&m, &bits, sizeof(m)); /* [1, 2) */
	if (m >= 1.4142135623730951) {
		m *= 0.5;
		e++;
	}
	s = (m - 1) / (m + 1);
	s2 = s * s;
	p = 1 + s2 * (1.0 / 3 + s2 * (1.0 / 5 + s2 * (1.0 / 7 + s2 * (1.0 / 9 + s2 * (1.0 / 11)))));
	return -((double)e * 0.6931471805599453 + 2 * s * p);
}

#endif
