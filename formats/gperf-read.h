/* gperf-read.h - reader of gperftools' CPU profiles (libprofiler.so's
 * CPUPROFILE output, the "legacy" binary format pprof also reads) */
#ifndef PROFVIEW_GPERF_READ_H
#define PROFVIEW_GPERF_READ_H

#include "profile.h"

#include <stdbool.h>
#include <stddef.h>

/* Does buf start with the words 0 and 3 (of 32 or 64 bits, in either byte
 * order), as a gperftools CPU profile's header does?  The rest of the
 * header is checked by gperf_read, so that a damaged one gets a precise
 * message. */
bool gperf_detect(const unsigned char *buf, size_t len);

/* Read a gperftools CPU profile from memory: the header (words 0, 3, 0,
 * period in microseconds, 0), the samples (count, depth, addresses), the
 * trailer (0, 1, 0) and the text of /proc/self/maps; words of 32 or 64
 * bits in either byte order, chosen by the header.  Two values per sample:
 * samples/count and cpu/nanoseconds (count x period), as pprof reads it,
 * with the same clean-up of the signal handler's frames.  Addresses are
 * not symbolized.  NULL after reporting an error. */
struct pv_profile *gperf_read(const unsigned char *buf, size_t len, const char *name);

#endif
