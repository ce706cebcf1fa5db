/* raw-heap.h - the heap trace of collect-heap (RAW_CLOCK_HEAP, raw.h) read
 * into the profile model
 *
 * raw-read.c walks the records and resolves each sampled block's stack;
 * this keeps the blocks, matches their frees by address, and gives every
 * block a profile sample with the values pprof's heap profiles have,
 * unsampled (1/(1-exp(-size/rate)) blocks of its size a sample), and the
 * sampled counts beside them for the noise (±√n): "samples" (the sampled
 * blocks still allocated at the end), "alloc_samples" (all of them),
 * "peak_samples" (those allocated when the sampled heap was largest, in
 * estimated bytes), then alloc_objects, alloc_space, inuse_objects,
 * inuse_space (at the end of the trace), peak_objects and peak_space.
 * A block's sample has its allocation's time (time_ns) and its free's
 * (end_ns, 0 when it was never freed).
 */
#ifndef PROFVIEW_RAW_HEAP_H
#define PROFVIEW_RAW_HEAP_H

#include "profile.h"

#include <stdint.h>

struct raw_heap;
struct reader;
struct raw_record;

/* A record of a heap trace (raw-reader.h's reader): a sampled block, its
 * stack resolved as a sample's, or the free of one.  0, or -1. */
int rd_heap_record(struct reader *rd, const struct raw_record *rec);

/* Adds the value types to p (which has none yet), the period (rate bytes
 * of "space").  NULL after reporting an error. */
struct raw_heap *raw_heap_new(struct pv_profile *p, uint64_t rate);
/* A sampled block of size bytes at address: ps has its stack, thread,
 * time and flags; the values are set here.  0 or -1 (out of memory). */
int raw_heap_alloc(struct raw_heap *h, struct pv_sample *ps, uint64_t size, uint64_t address);
/* The free of the block at address at time_ns (ns from the start; none
 * known: nothing).  0 or -1. */
int raw_heap_free(struct raw_heap *h, uint64_t address, int64_t time_ns);
/* At the end of the records: the values in use at the end and at the
 * peak; the peak's time in *peak_ns and its estimated bytes in *peak_bytes. */
void raw_heap_finish(struct raw_heap *h, int64_t *peak_ns, int64_t *peak_bytes);
void raw_heap_delete(struct raw_heap *h);

#endif
