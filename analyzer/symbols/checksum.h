/* checksum.h - zlib's CRC-32 and Adler-32, faster where the CPU allows
 *
 * The same values as zlib's crc32() and adler32() for the same arguments
 * (the cache's sums and the zlib streams' trailers are those), computed
 * with carry-less multiplication (PCLMULQDQ) and SSSE3 sums of bytes
 * when the processor has them, zlib's own functions otherwise.  Pure
 * functions of their arguments: safe from any thread.
 */
#ifndef PROFVIEW_CHECKSUM_H
#define PROFVIEW_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* The CRC-32 of buf[0..len) continuing crc (0 to start), as zlib's
 * crc32(crc, buf, len). */
uint32_t checksum_crc32(uint32_t crc, const unsigned char *buf, size_t len);

/* The CRC-32 of a then b, from the CRC-32 of each (crc_a, crc_b) and
 * b's length, as zlib's crc32_combine. */
uint32_t checksum_crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

/* The CRC-32 crc continued over len zero bytes, without reading any:
 * checksum_crc32(crc, zeros, len). */
uint32_t checksum_crc32_zeros(uint32_t crc, uint64_t len);

/* The Adler-32 of buf[0..len) continuing adler (1 to start), as zlib's
 * adler32(adler, buf, len). */
uint32_t checksum_adler32(uint32_t adler, const unsigned char *buf, size_t len);

#endif
