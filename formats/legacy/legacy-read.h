/* legacy-read.h - readers of the text profiles pprof calls "legacy":
 * heap profiles (jemalloc's heap_v2 dumps, gperftools' and tcmalloc's
 * "heap profile:" ones, growth and fragmentation profiles), contention
 * profiles, thread dumps, Go's count profiles and Java's heapz and
 * contentionz profiles */
#ifndef PROFVIEW_LEGACY_READ_H
#define PROFVIEW_LEGACY_READ_H

#include "profile.h"

#include <stdbool.h>
#include <stddef.h>

/* Does buf start (after blank and '#' lines) with the first line of one
 * of these formats? */
bool legacy_detect(const unsigned char *buf, size_t len);

/* Read one of them from memory, symbolized later from the memory map it
 * ends with (MAPPED_LIBRARIES: or --- Memory map: ---), as the gperftools
 * reader's.  A sampled heap profile is unsampled as jeprof and pprof do:
 * each stack's counts scaled by 1/(1-exp(-mean size/rate)).  Its sample
 * types: "samples" (the blocks in use that were sampled, as the dump
 * counts them), "alloc_samples" (of all the blocks allocated, when the
 * dump counts them), alloc_objects, alloc_space (when it has them),
 * inuse_objects and inuse_space, the estimates.  NULL after reporting an
 * error. */
struct pv_profile *legacy_read(const unsigned char *buf, size_t len, const char *name);

#endif
