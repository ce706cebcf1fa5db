/* test-checksum.c - checksum.h's CRC-32 and Adler-32 are zlib's
 *
 * Against zlib's crc32() and adler32() on the same bytes: every length
 * from 0 to 600 at every start from 0 to 16 (the vector paths' edges: 16,
 * 32, 64 bytes and what is left over), continuing a running value; 64 MiB
 * at once, in uneven pieces continued, of random bytes and of 0xff
 * (Adler-32's sums at their largest between reductions); then the same
 * with the vector paths' sizes of run (5,536 bytes) around each edge.
 * Runs of zeros appended to a CRC-32 without reading them, and two
 * CRC-32s joined, against zlib's CRC-32 of the bytes.
 * With CHECKSUM_SPEED set, both speeds are printed.
 */
#include "check.h"
#include "checksum.h"

#include <stdint.h>
#include <time.h>
#include <zlib.h>

#define BIG ((size_t)64 << 20)

static uint64_t rnd = 88172645463325252ull;

static unsigned char next_byte(void)
{
	rnd ^= rnd << 13;
	rnd ^= rnd >> 7;
	rnd ^= rnd << 17;
	return (unsigned char)(rnd >> 32);
}

static void small_lengths(const unsigned char *b)
{
	int bad = 0;

	for (size_t len = 0; len <= 600; len++)
		for (size_t off = 0; off <= 16; off++) {
			uint32_t start = (uint32_t)(len * 2654435761u);
			uint32_t a0 = (start % 65521) | (start >> 16) % 65521 << 16;
			if (checksum_crc32(start, b + off, len) != crc32(start, b + off, (uInt)len) ||
			    checksum_adler32(a0, b + off, len) != adler32(a0, b + off, (uInt)len)) {
				if (bad++ < 5)
					fprintf(stderr, "differs: length %zu at %zu\n", len, off);
			}
		}
	CHECK_EQ(bad, 0);
}

/* The whole buffer at once and in uneven pieces, against zlib's. */
static void whole(const unsigned char *b, size_t size, const char *what)
{
	uint32_t zc = (uint32_t)crc32(0, b, (uInt)size), za = (uint32_t)adler32(1, b, (uInt)size);
	uint32_t c = 0, a = 1;

	CHECK_EQ(checksum_crc32(0, b, size), zc);
	CHECK_EQ(checksum_adler32(1, b, size), za);
	for (size_t at = 0, step = 1; at < size; at += step, step = step * 3 + 7) {
		size_t n = size - at < step ? size - at : step;
		c = checksum_crc32(c, b + at, n);
		a = checksum_adler32(a, b + at, n);
	}
	CHECK_EQ(c, zc);
	CHECK_EQ(a, za);
	fprintf(stderr, "  %s: crc %08x adler %08x\n", what, zc, za);
}

/* Runs around the Adler-32 path's reduction interval. */
static void runs(const unsigned char *b)
{
	static const size_t sizes[] = { 5535, 5536, 5537, 5552, 5553, 11072, 11073, 11104 };

	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		CHECK_EQ(checksum_adler32(1, b, sizes[i]), adler32(1, b, (uInt)sizes[i]));
		CHECK_EQ(checksum_adler32(0xfff0fff0, b, sizes[i]),
			 adler32(0xfff0fff0, b, (uInt)sizes[i]));
		CHECK_EQ(checksum_crc32(0xffffffff, b, sizes[i]), crc32(0xffffffff, b, (uInt)sizes[i]));
	}
}

/* Zeros appended by checksum_crc32_zeros and pieces joined by
 * checksum_crc32_combine, against zlib's CRC-32 of the bytes themselves. */
static void zeros_and_joins(const unsigned char *b)
{
	static const size_t lens[] = { 0, 1, 63, 64, 65, 127, 128, 1000, 4096, 65536 + 17, 3000001 };
	unsigned char *z = calloc(1, 3000001);
	int bad = 0;

	CHECK(z != NULL);
	if (!z)
		return;
	for (size_t i = 0; i < sizeof lens / sizeof *lens; i++)
		for (size_t k = 0; k < 3; k++) {
			uint32_t start = (uint32_t)crc32(0, b, (uInt)(k * 1000));
			if (checksum_crc32_zeros(start, lens[i]) != crc32(start, z, (uInt)lens[i]) && bad++ < 5)
				fprintf(stderr, "zeros differ: %zu after %zu bytes\n", lens[i], k * 1000);
		}
	for (size_t a = 0; a < 5000; a += 777) {
		uint32_t left = (uint32_t)crc32(0, b, (uInt)a), right = (uint32_t)crc32(0, b + a, 3001);
		if (checksum_crc32_combine(left, right, 3001) != crc32(0, b, (uInt)(a + 3001)) &&
		    bad++ < 5)
			fprintf(stderr, "joined differs at %zu\n", a);
	}
	CHECK_EQ(bad, 0);
	free(z);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void speed(const unsigned char *b)
{
	double t0 = now();
	uint32_t c = checksum_crc32(0, b, BIG);
	double t1 = now();
	uint32_t z = (uint32_t)crc32(0, b, (uInt)BIG);
	double t2 = now();
	uint32_t a = checksum_adler32(1, b, BIG);
	double t3 = now();
	uint32_t za = (uint32_t)adler32(1, b, (uInt)BIG);
	double t4 = now();

	fprintf(stderr, "  crc32 %.2f GB/s (zlib %.2f), adler32 %.2f GB/s (zlib %.2f)%s\n",
		BIG / (t1 - t0) / 1e9, BIG / (t2 - t1) / 1e9, BIG / (t3 - t2) / 1e9,
		BIG / (t4 - t3) / 1e9, c == z && a == za ? "" : " DIFFER");
}

int main(void)
{
	unsigned char *b = malloc(BIG);

	CHECK(b != NULL);
	if (!b)
		return 1;
	for (size_t i = 0; i < BIG; i++)
		b[i] = next_byte();
	small_lengths(b);
	runs(b);
	zeros_and_joins(b);
	whole(b, BIG, "random");
	if (getenv("CHECKSUM_SPEED"))
		speed(b);
	memset(b, 0xff, BIG);
	small_lengths(b);
	runs(b);
	whole(b, BIG, "0xff");
	free(b);
	fprintf(stderr, "%d checks, %d failed\n", check_count, check_failures);
	return check_failures ? 1 : 0;
}
