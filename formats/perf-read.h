/* perf-read.h - reader of `perf script` output, Linux perf's text form of
 * a perf.data file (see profview-formats(5))
 *
 * A sample is a header line ("COMM PID/TID [CPU] TIME: PERIOD EVENT:", any
 * of its fields may be missing) followed by its call chain, one frame a
 * line ("\tADDR SYM+OFF (DSO)", leaf first) and a blank line; or, recorded
 * without -g, the header with the one frame at its end.  perf names the
 * frames itself: the locations the reader creates carry their functions,
 * so nothing is symbolized again.  Kernel frames go in one mapping named
 * PV_KERNEL_MAPPING_NAME.  Each event of the capture is its own sample
 * type, holding the samples' periods; the first event's samples are also
 * the "samples" count.  A clock event (cpu-clock, task-clock) is CPU time:
 * its type is "cpu", in nanoseconds.
 */
#ifndef PROFVIEW_PERF_READ_H
#define PROFVIEW_PERF_READ_H

#include "profile.h"

#include <stdbool.h>
#include <stddef.h>

/* Events of one capture kept apart, each its own sample type; samples of
 * further events are left out (with a warning). */
#define PERF_MAX_EVENTS 4

/* Is buf perf script text?  Its first line that is not empty or a '#'
 * comment must be a sample header followed by a call chain line; or a
 * header with a time or an event and an address after it; or one with an
 * address but neither, followed by another of the same fields; or a call
 * chain line followed by another or a blank line (fields without a
 * header). */
bool perf_detect(const unsigned char *buf, size_t len);

/* Read perf script output; name is used in messages.  Input cut off
 * inside a sample is read up to its last whole sample, with a warning of
 * what was left out.  A new profile, or NULL after reporting an error
 * (no sample in the input, a NUL byte, out of memory). */
struct pv_profile *perf_read(const unsigned char *buf, size_t len, const char *name);

/* Does buf start as a perf.data file ("PERFILE2"), which perf script turns
 * into text? */
bool perf_data_detect(const unsigned char *buf, size_t len);

#endif
