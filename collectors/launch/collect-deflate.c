/* collect-deflate.c - bytes deflated when that makes them smaller (see
 * collect-deflate.h)
 */
#include <limits.h>
#include <stdlib.h>
#include <zlib.h>

#include "collect-deflate.h"

/* zlib's level: on a run's names of tens of kilobytes 6 makes what 9
 * makes (1 makes 4% more), in 0.6 ms, most of it zlib's set-up; 9 would
 * only search longer on larger ones. */
#define COLLECT_DEFLATE_LEVEL 6

int collect_deflate(const void *const *in, const size_t *lens, int n, size_t below, unsigned char **out,
		    size_t *outlen)
{
	z_stream zs = { 0 };
	unsigned char *o;
	int zr = Z_OK;

	*out = NULL;
	*outlen = 0;
	if (below == 0)
		return 0;
	if (below > UINT_MAX)
		below = UINT_MAX;
	if ((o = malloc(below)) == NULL)
		return -1;
	if (deflateInit2(&zs, COLLECT_DEFLATE_LEVEL, Z_DEFLATED, 15, 9, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(o);
		return -1;
	}
	zs.next_out = o;
	zs.avail_out = (uInt)below;
	for (int i = 0; i < n && zr == Z_OK; i++) {
		const unsigned char *p = in[i];
		size_t left = lens[i];
		int last = i + 1 == n;

		/* (zlib counts in uInt: a long piece in pieces) */
		while (zr == Z_OK && (left > 0 || last)) {
			uInt take = left > UINT_MAX / 2 ? UINT_MAX / 2 : (uInt)left;

			zs.next_in = (unsigned char *)p;
			zs.avail_in = take;
			zr = deflate(&zs, last && take == left ? Z_FINISH : Z_NO_FLUSH);
			p += take - zs.avail_in;
			left -= take - zs.avail_in;
			/* (the output full: not smaller) */
			if (zr != Z_STREAM_END && zs.avail_out == 0)
				zr = Z_BUF_ERROR;
		}
	}
	deflateEnd(&zs);
	if (zr == Z_STREAM_END && zs.total_out < below) {
		*out = o;
		*outlen = zs.total_out;
		return 1;
	}
	free(o);
	return zr == Z_MEM_ERROR ? -1 : 0;
}
