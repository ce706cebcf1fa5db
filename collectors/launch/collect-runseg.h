/* collect-runseg.h - --split for every process of the run
 *
 * The traces of the program's descendants are found as they appear (as
 * collect_find_more finds them at the end), each cut by a seg of its own
 * numbered after the program's start (segments.h), and once every
 * process is past a window, the window's segments are joined into one run
 * (raw.h) in place of the program's segment: a segment then holds every
 * process's samples of its window while the processes run.
 */
#ifndef PROFVIEW_LAUNCH_COLLECT_RUNSEG_H
#define PROFVIEW_LAUNCH_COLLECT_RUNSEG_H

#include <stdint.h>
#include <sys/types.h>

#include "segments.h"

struct collect_runseg;

/* For the run of the program pid, whose trace shown root cuts, started
 * after t0 (CLOCK_MONOTONIC): windows of split seconds, keep of them kept
 * (0: all).  shown must outlive it.  NULL when out of memory. */
struct collect_runseg *collect_runseg_new(struct seg *root, const char *shown, pid_t pid,
					  uint64_t t0, double split, long keep);

/* Finds the new traces, reads every trace on, and joins the windows every
 * process is past; now: CLOCK_MONOTONIC ns. */
void collect_runseg_poll(struct collect_runseg *rs, uint64_t now);

/* Every process has ended: the rest of every trace, and every window. */
void collect_runseg_finish(struct collect_runseg *rs);

void collect_runseg_free(struct collect_runseg *rs);

struct collect_others;
/* Adds the table of the processes not profiled o (raw_run_others) and the
 * count of the run's processes to the segment at path (the last: the
 * other segments count none, so that read together they count the run's):
 * a run of the window's processes, or the program's trace alone, made a
 * run of one part.  Written aside and renamed over it.  Returns 0, or -1
 * (errno; the segment is left as it was). */
int collect_seg_others(const char *path, const struct collect_others *o, size_t nprocesses);

#endif
