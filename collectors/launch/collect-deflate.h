/* collect-deflate.h - bytes the launcher writes deflated (zlib), when
 * that makes them smaller: the run's Python names (raw.h,
 * RAW_RUN_PYNAMEZ_MAGIC).  Launcher-side only, not signal-safe: zlib is
 * the launcher's, never the preload libraries'.
 */
#ifndef PROFVIEW_LAUNCH_COLLECT_DEFLATE_H
#define PROFVIEW_LAUNCH_COLLECT_DEFLATE_H

#include <stddef.h>

/* The pieces in[0..n) (lens[i] bytes each), one after the other, as one
 * zlib stream (RFC 1950) into *out (malloc'd, freed by the caller),
 * *outlen bytes: 1 when it is shorter than below bytes, 0 when it is not
 * (*out NULL: deflating stops once it has made that many), -1 when out of
 * memory. */
int collect_deflate(const void *const *in, const size_t *lens, int n, size_t below, unsigned char **out,
		    size_t *outlen);

#endif
