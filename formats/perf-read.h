/* perf-read.h - reader of `perf script` output, Linux perf's text form of
 * a perf.data file (see profview-formats(5))
 *
 * A sample is a header line ("COMM PID/TID [CPU] TIME: PERIOD EVENT:", any
 * of its fields may be missing) followed by its call chain, one frame a
 * line ("\tADDR SYM+OFF (DSO)", leaf first) and a blank line; or, recorded
 * without -g, the header with the one frame at its end.  perf names the
 * frames itself: the locations the reader creates carry their functions,
 * so nothing is symbolized again; frames perf marks "(inlined)" are lines
 * of the next frame's location.  Kernel frames (the kernel's, its
 * modules') go in kernel mappings.  Every sample is kept and counts in
 * "samples"; each event of the capture is its own sample type named after
 * it ("cycles" of "cycles:u"), holding the samples' periods, the first
 * event's the profile's default type; with several events each also has
 * its count of samples ("cycles_samples").  A clock event (cpu-clock,
 * task-clock) is CPU time, in nanoseconds.
 */
#ifndef PROFVIEW_PERF_READ_H
#define PROFVIEW_PERF_READ_H

#include "profile.h"

#include <stdbool.h>
#include <stddef.h>

/* Events of one capture kept apart, each its own two sample types (with
 * "samples", PV_MAX_VALUES in all); samples of further events are left
 * out (with a warning). */
#define PERF_MAX_EVENTS 4

/* Is buf perf script text?  Its first line that is not empty, a '#'
 * comment or perf's side band must be a sample header (or a command
 * alone) followed by a call chain line; or a header with a time or an
 * event and an address after it; or one with an address but neither,
 * followed by another of the same fields; or a call chain line followed
 * by another or a blank line (fields without a header); or a frame alone
 * after spaces followed by another (-F ip,sym without -g).  A frame's
 * source line may come between. */
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
