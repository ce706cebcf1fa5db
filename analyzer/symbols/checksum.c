/* checksum.c - zlib's CRC-32 and Adler-32, faster where the CPU allows
 * (see checksum.h)
 *
 * CRC-32: the input folded 64 bytes at a time into four 128-bit
 * remainders by carry-less multiplication with x^(512+64) and x^512
 * modulo the polynomial (bit-reflected, as the CRC is), the four folded
 * into one, 16 bytes at a time after that, then reduced to 32 bits with
 * a Barrett reduction: the constants are those of Intel's "Fast CRC
 * Computation for Generic Polynomials Using PCLMULQDQ Instruction"
 * (2009) for the polynomial 0x04C11DB7.  Adler-32: 32 bytes at a time,
 * the byte sums by PSADBW and the weighted sums (32 down to 1) by
 * PMADDUBSW, reduced modulo 65521 every 5,536 bytes, as zlib does every
 * 5,552.  What is left over (fewer than 64 or 32 bytes) goes to zlib.
 */
#include "checksum.h"

#include <zlib.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CHECKSUM_X86 1
#include <immintrin.h>
#endif

/* zlib's sum f (crc32, adler32) of buf[0..len) continuing v: its
 * lengths are uInt, big buffers go in pieces. */
static uint32_t zlib_sum(uLong (*f)(uLong, const Bytef *, uInt), uint32_t v,
			 const unsigned char *buf, size_t len)
{
	while (len) {
		uInt n = len > (1u << 30) ? 1u << 30 : (uInt)len;
		v = (uint32_t)f(v, buf, n);
		buf += n;
		len -= n;
	}
	return v;
}

uint32_t checksum_crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b)
{
	return (uint32_t)crc32_combine(crc_a, crc_b, (z_off_t)len_b);
}

uint32_t checksum_crc32_zeros(uint32_t crc, uint64_t len)
{
	static const unsigned char zero[64];
	uint32_t run = (uint32_t)crc32(0, zero, sizeof zero); /* of 64 zeros, then doubled */
	uint64_t run_len = sizeof zero;

	crc = (uint32_t)crc32(crc, zero, (uInt)(len % sizeof zero));
	len -= len % sizeof zero;
	/* len is a sum of powers of two times 64: each one's run */
	for (; len; run = checksum_crc32_combine(run, run, run_len), run_len *= 2) {
		if (len & run_len) {
			crc = checksum_crc32_combine(crc, run, run_len);
			len -= run_len;
		}
	}
	return crc;
}

#ifdef CHECKSUM_X86

/* Does this CPU have PCLMULQDQ and SSE4.1 (CRC), SSSE3 (Adler)? */
static int have_clmul(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

static int have_ssse3(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("ssse3");
}

#define CLMUL(a, b, imm) _mm_clmulepi64_si128((a), (b), (imm))

/* One 128-bit remainder r folded over the next 16 bytes d by k (its low
 * half times k's low, its high half times k's high). */
__attribute__((target("pclmul,sse4.1"))) static inline __m128i fold16(__m128i r, __m128i k,
								     __m128i d)
{
	return _mm_xor_si128(_mm_xor_si128(CLMUL(r, k, 0x00), CLMUL(r, k, 0x11)), d);
}

/* The CRC register (not inverted: zlib's value with its bits flipped)
 * after buf[0..len), len at least 64 and a multiple of 16. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc_clmul(uint32_t reg,
								     const unsigned char *buf,
								     size_t len)
{
	const __m128i k1k2 = _mm_set_epi64x(0x1c6e41596, 0x154442bd4);
	const __m128i k3k4 = _mm_set_epi64x(0x0ccaa009e, 0x1751997d0);
	const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124);
	const __m128i poly = _mm_set_epi64x(0x1f7011641, 0x1db710641); /* u', P' */
	const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i x1 = _mm_loadu_si128((const __m128i *)buf);
	__m128i x2 = _mm_loadu_si128((const __m128i *)(buf + 16));
	__m128i x3 = _mm_loadu_si128((const __m128i *)(buf + 32));
	__m128i x4 = _mm_loadu_si128((const __m128i *)(buf + 48));
	__m128i t;

	x1 = _mm_xor_si128(x1, _mm_cvtsi32_si128((int)reg));
	buf += 64;
	len -= 64;
	for (; len >= 64; buf += 64, len -= 64) {
		x1 = fold16(x1, k1k2, _mm_loadu_si128((const __m128i *)buf));
		x2 = fold16(x2, k1k2, _mm_loadu_si128((const __m128i *)(buf + 16)));
		x3 = fold16(x3, k1k2, _mm_loadu_si128((const __m128i *)(buf + 32)));
		x4 = fold16(x4, k1k2, _mm_loadu_si128((const __m128i *)(buf + 48)));
	}
	x1 = fold16(x1, k3k4, x2);
	x1 = fold16(x1, k3k4, x3);
	x1 = fold16(x1, k3k4, x4);
	for (; len >= 16; buf += 16, len -= 16)
		x1 = fold16(x1, k3k4, _mm_loadu_si128((const __m128i *)buf));
	/* 128 bits to 64 (32 zero bits appended), then to 32 */
	x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), CLMUL(k3k4, x1, 0x01));
	t = CLMUL(_mm_and_si128(x1, mask32), k5, 0x00);
	x1 = _mm_xor_si128(_mm_srli_si128(x1, 4), t);
	/* Barrett reduction */
	t = CLMUL(_mm_and_si128(x1, mask32), poly, 0x10);
	t = CLMUL(_mm_and_si128(t, mask32), poly, 0x00);
	x1 = _mm_xor_si128(x1, t);
	return (uint32_t)_mm_extract_epi32(x1, 1);
}

#define ADLER_MOD 65521u
#define ADLER_RUN 5536u /* a multiple of 32 at most zlib's NMAX (5552) */

/* The Adler-32 after buf[0..len), len a multiple of 32. */
__attribute__((target("ssse3"))) static uint32_t adler_ssse3(uint32_t adler,
							      const unsigned char *buf, size_t len)
{
	const __m128i w_first = _mm_setr_epi8(32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20,
					      19, 18, 17);
	const __m128i w_second = _mm_setr_epi8(16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2,
					       1);
	const __m128i ones = _mm_set1_epi16(1), zero = _mm_setzero_si128();
	uint64_t s1 = adler & 0xffff, s2 = adler >> 16;

	while (len) {
		size_t n = len < ADLER_RUN ? len : ADLER_RUN;
		__m128i v1 = zero, vprev = zero, v2 = zero;
		uint32_t l1[4], l2[4];

		s2 += s1 * n;
		len -= n;
		for (; n; n -= 32, buf += 32) {
			__m128i a = _mm_loadu_si128((const __m128i *)buf);
			__m128i b = _mm_loadu_si128((const __m128i *)(buf + 16));
			vprev = _mm_add_epi32(vprev, v1);
			v1 = _mm_add_epi32(v1, _mm_add_epi32(_mm_sad_epu8(a, zero),
							     _mm_sad_epu8(b, zero)));
			v2 = _mm_add_epi32(v2, _mm_madd_epi16(_mm_maddubs_epi16(a, w_first), ones));
			v2 = _mm_add_epi32(v2, _mm_madd_epi16(_mm_maddubs_epi16(b, w_second), ones));
		}
		v2 = _mm_add_epi32(v2, _mm_slli_epi32(vprev, 5));
		_mm_storeu_si128((__m128i *)l1, v1);
		_mm_storeu_si128((__m128i *)l2, v2);
		for (int i = 0; i < 4; i++) {
			s1 += l1[i];
			s2 += l2[i];
		}
		s1 %= ADLER_MOD;
		s2 %= ADLER_MOD;
	}
	return (uint32_t)(s1 | s2 << 16);
}

uint32_t checksum_crc32(uint32_t crc, const unsigned char *buf, size_t len)
{
	if (len >= 64 && have_clmul()) {
		size_t n = len & ~(size_t)15;
		crc = ~crc_clmul(~crc, buf, n);
		buf += n;
		len -= n;
	}
	return zlib_sum(crc32, crc, buf, len);
}

uint32_t checksum_adler32(uint32_t adler, const unsigned char *buf, size_t len)
{
	if (len >= 32 && have_ssse3()) {
		size_t n = len & ~(size_t)31;
		adler = adler_ssse3(adler, buf, n);
		buf += n;
		len -= n;
	}
	return zlib_sum(adler32, adler, buf, len);
}

#else

uint32_t checksum_crc32(uint32_t crc, const unsigned char *buf, size_t len)
{
	return zlib_sum(crc32, crc, buf, len);
}

uint32_t checksum_adler32(uint32_t adler, const unsigned char *buf, size_t len)
{
	return zlib_sum(adler32, adler, buf, len);
}

#endif
