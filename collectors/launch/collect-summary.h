/* collect-summary.h - what the launcher says at the end
 *
 * collect_report finds the run's traces (collect-traces.h), reads them
 * back, joins those with samples into the run file and removes the
 * others, and says what was recorded: one line for a trace alone, the
 * segments' line with --split, or a run of several processes in one
 * summary (each process as it was with -v); then the CPU time in no
 * sample when there is much.
 */
#ifndef PROFVIEW_LAUNCH_COLLECT_SUMMARY_H
#define PROFVIEW_LAUNCH_COLLECT_SUMMARY_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "segments.h"

/* Reports the run of the program pid, whose trace is shown, started after
 * t0 (CLOCK_MONOTONIC), and makes one file of it.  seg: the program's
 * trace was cut into segments (--split), which seg says; the other
 * processes' traces are joined into shown then.  reaped: the processes
 * the launcher waited for, with their wait status and CPU time
 * (collect-procs.h).  Returns 1 when shown holds them, else 0. */
struct collect_ends;
int collect_report(const char *shown, pid_t pid, uint64_t t0, int inherit, int quiet,
		   int verbose, const struct seg *seg, const struct collect_ends *reaped);

/* The same of a run of unrelated processes (collect-timer -p with
 * several), whose traces are named: shown (names[0]'s place) and
 * names[1..n).  Returns 1 when shown holds them, else 0. */
int collect_report_list(const char *shown, char (*const names)[PATH_MAX], size_t n, int quiet,
			int verbose);

#endif
