/* gunzip.c - gzip input, decompressed in memory with zlib */
#include "gunzip.h"
#include "error.h"
#include "units.h"
#include "util.h"

#include <stdlib.h>
#include <zlib.h>

bool pv_gzip_detect(const unsigned char *buf, size_t len)
{
	return len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b;
}

int pv_gunzip(const unsigned char *buf, size_t len, const char *name, size_t limit, bool *more,
	      unsigned char **out, size_t *outlen)
{
	z_stream zs = { 0 };
	unsigned char *o = NULL;
	/* One byte past the limit tells whether there is more. */
	size_t room = limit < SIZE_MAX ? limit + 1 : SIZE_MAX;
	size_t cap = len < (1u << 20) ? (1u << 16) : len * 4, n = 0;
	int zr = Z_OK, ret = -1;

	/* A gzip member ends with its data's size modulo 2^32: room for that
	 * at once when it is plausible (one member, no more than zlib's best
	 * ratio); a wrong guess only costs growing as usual. */
	if (len >= 18 && buf[0] == 0x1f && buf[1] == 0x8b) {
		size_t isize = (size_t)buf[len - 4] | (size_t)buf[len - 3] << 8 |
			       (size_t)buf[len - 2] << 16 | (size_t)buf[len - 1] << 24;
		if (isize >= cap && isize / 1032 <= len)
			cap = isize + 1;
	}

	*out = NULL;
	*outlen = 0;
	if (more)
		*more = false;
	if (cap > room)
		cap = room;
	/* 15 + 32: a gzip (or zlib) header, detected by zlib. */
	if (inflateInit2(&zs, 15 + 32) != Z_OK)
		return pv_oom();
	o = malloc(cap);
	if (!o) {
		pv_oom();
		goto out;
	}
	zs.next_in = (unsigned char *)buf;
	for (;;) {
		/* zlib counts input in uInt: feed large inputs in pieces. */
		size_t done_in = (size_t)(zs.next_in - buf);
		if (zs.avail_in == 0 && done_in < len)
			zs.avail_in = (uInt)(len - done_in > (1u << 30) ? (1u << 30) : len - done_in);
		if (n == room) {
			char sz[32];
			n = limit;
			if (more) {
				*more = true;
				break;
			}
			pv_error("'%s': decompressed data is larger than %s", name, pv_size_str(sz, sizeof sz, limit));
			goto out;
		}
		if (n == cap) {
			size_t ncap = cap > room / 2 ? room : cap * 2;
			unsigned char *q = realloc(o, ncap);
			if (!q) {
				pv_oom();
				goto out;
			}
			o = q;
			cap = ncap;
		}
		zs.next_out = o + n;
		zs.avail_out = (uInt)(cap - n > (1u << 30) ? (1u << 30) : cap - n);
		size_t before = zs.avail_out;
		zr = inflate(&zs, Z_NO_FLUSH);
		n += before - zs.avail_out;
		if (zr == Z_STREAM_END) {
			/* Another member may follow (as gzip itself allows). */
			size_t at = (size_t)(zs.next_in - buf);
			if (at >= len)
				break;
			if (at < len && buf[at] == 0x1f && at + 1 < len && buf[at + 1] == 0x8b) {
				if (inflateReset(&zs) != Z_OK) {
					pv_oom();
					goto out;
				}
				continue;
			}
			/* Trailing bytes that are not gzip: zeros are padding. */
			for (size_t i = at; i < len; i++)
				if (buf[i]) {
					pv_error("'%s': data after the end of the gzip stream at byte %zu",
						 name, at);
					goto out;
				}
			break;
		}
		if (zr == Z_BUF_ERROR && zs.avail_in == 0 && (size_t)(zs.next_in - buf) >= len) {
			pv_error("'%s': gzip data ends early at byte %zu (the file is cut off)", name, len);
			goto out;
		}
		if (zr == Z_BUF_ERROR && n < cap) {
			pv_error("'%s': gzip data is damaged at byte %zu", name, (size_t)(zs.next_in - buf));
			goto out;
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			pv_error("'%s': gzip data is damaged at byte %zu: %s", name,
				 (size_t)(zs.next_in - buf), zs.msg ? zs.msg : "inflate failed");
			goto out;
		}
	}
	*out = o;
	*outlen = n;
	o = NULL;
	ret = 0;
out:
	inflateEnd(&zs);
	free(o);
	return ret;
}
