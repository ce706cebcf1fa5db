/* pprof-read.h - reader of pprof's profile.proto (see profile.proto) */
#ifndef PROFVIEW_PPROF_READ_H
#define PROFVIEW_PPROF_READ_H

#include "profile.h"

#include <stdbool.h>
#include <stddef.h>

/* Could buf be an uncompressed profile.proto: its first byte the tag of a
 * Profile field with the right wire type, and not all printable text? */
bool pprof_detect(const unsigned char *buf, size_t len);

/* Read an uncompressed profile.proto from memory; name is used in
 * messages, whose byte offsets are in these bytes (gunzipped says they are
 * the decompressed data of a gzip file).  Locations that come with lines
 * keep them (the symbolizer leaves them alone); those without are
 * symbolized later through their mapping.  Threads come from the
 * "thread" (id) and "thread_name" labels.  NULL after reporting an error. */
struct pv_profile *pprof_read(const unsigned char *buf, size_t len, const char *name,
			      bool gunzipped);

#endif
