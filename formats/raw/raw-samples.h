/* raw-samples.h - each sample of a raw trace added to the profile
 * (raw-samples.c); internal to the formats library */
#ifndef PROFVIEW_RAW_SAMPLES_H
#define PROFVIEW_RAW_SAMPLES_H

#include "raw-reader.h"

/* Adds the profile sample ps of thread tid, weighing weight_ns, at time_ns;
 * k: its kernel record, or NULL.  0 or -1. */
int rd_add_sample(struct reader *rd, struct pv_sample *ps, uint32_t tid, uint32_t raw_flags,
		  uint64_t weight_ns, uint64_t time_ns, const struct raw_sample_kernel *k);
/* The profile's thread of thread id tid (made on first sight), or PV_NONE. */
uint32_t rd_thread_index(struct reader *rd, uint32_t tid);
/* At the end of the samples: the kernel mapping covers the kernel
 * addresses seen, from the lowest (its offset: an address in it is its
 * own offset). */
void rd_kernel_range(struct reader *rd);
/* The kernel split of profile sample i, or NULL when the trace has no
 * kernel records. */
const struct split *rd_sample_split(const struct reader *rd, size_t i);
/* Frees the samples' kernel splits and the threads' owed time. */
void rd_samples_free(struct rd_samples *s);

#endif
