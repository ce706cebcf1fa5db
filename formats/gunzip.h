/* gunzip.h - decompress a gzip-compressed input in memory */
#ifndef PROFVIEW_GUNZIP_H
#define PROFVIEW_GUNZIP_H

#include <stdbool.h>
#include <stddef.h>

/* Does buf start with the gzip magic (1f 8b)? */
bool pv_gzip_detect(const unsigned char *buf, size_t len);

/* Decompress all gzip members of buf into a new buffer (*out, freed by the
 * caller, *outlen bytes).  A stream that ends early or is damaged is an
 * error naming the compressed byte offset where it stopped; name is used
 * in messages.  At most limit bytes are produced, and decompression stops
 * as soon as there would be more (a gzip bomb costs no more than limit):
 * with more NULL that is an error; otherwise the first limit bytes are
 * returned and *more is set (to look at the start of the data, or for the
 * caller to report).  0, or -1 after reporting an error. */
int pv_gunzip(const unsigned char *buf, size_t len, const char *name, size_t limit, bool *more,
	      unsigned char **out, size_t *outlen);

#endif
