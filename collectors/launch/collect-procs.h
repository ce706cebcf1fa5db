/* collect-procs.h - every process of a run accounted for
 *
 * A process of the run is profiled when the preload library started in
 * it and wrote a trace.  The others are known by what the processes that
 * were profiled recorded: the image that ran another program wrote a
 * RAW_EXEC record (the program, and what would keep the library out of
 * it: a static binary, a set-user-ID program, an environment without the
 * library), and when no trace of that process's new image appears, the
 * record stands for it.  How each process ended, and the CPU time of the
 * ones not profiled, come from the wait status and resource usage of its
 * reaping: a traced parent's RAW_CHILD record, or the launcher's own wait
 * (the program, and, as a child subreaper, every descendant whose parent
 * ended first).  A process whose end is known to be exit or _exit is a
 * normal end even without the trace's end record (its exit handlers did
 * not run, or it called exit_group itself): only a kill is said.
 */
#ifndef PROFVIEW_LAUNCH_COLLECT_PROCS_H
#define PROFVIEW_LAUNCH_COLLECT_PROCS_H

#include <stddef.h>
#include <stdint.h>

#include "collect-traces.h"

/* A process of the run that was not profiled. */
struct collect_other {
	uint32_t pid;
	uint32_t why;          /* enum raw_why */
	uint32_t end, end_code; /* RAW_RUN_EXITED or _KILLED and the code, 0 not known */
	uint64_t cpu_ns;       /* RAW_UNKNOWN when not known */
	char name[256];        /* the program as exec was given it, "" not known */
};

struct collect_others {
	struct collect_other *v;
	size_t n;
};

/* Settles the processes of the run v[0..n) (collect_find_traces, each
 * scanned): the end of each process's last image from seen's ends (every
 * wait status the run's records and the launcher saw), the images that
 * ran a program whose own image has no trace (marked execd: they did not
 * end there), and those processes, the vfork children seen's exec
 * records name that have no trace, and the ones reaped that have no
 * trace at all, into out (malloc'd; free with collect_others_free).  Returns 0, or
 * -1 when out of memory (out then empty). */
int collect_account(struct collect_trace *v, size_t n, const struct collect_seen *seen,
		    struct collect_others *out);

void collect_others_free(struct collect_others *o);

/* The processes of o that have no trace in v[0..n) (the others ran a
 * program after an image that is traced): how many to add to the count
 * of the traces' processes. */
size_t collect_others_apart(const struct collect_trace *v, size_t n, const struct collect_others *o);

/* Does the run need a run file even for one trace: processes not
 * profiled to record, or a program's end its trace does not say? */
int collect_run_needed(const struct collect_trace *v, const struct collect_others *o);

/* Writes the table of o (raw.h, raw_run_others) to fd at off.  Returns the
 * bytes written (a multiple of 8), or -1. */
int64_t collect_others_write(int fd, uint64_t off, const struct collect_others *o);

/* "1 not profiled: ./static-child, static binary, 0.50 s CPU" into buf
 * (the first few named, names escaped), "" when none. */
void collect_others_say(char *buf, size_t cap, const struct collect_others *o);

/* One line on stderr for each process of o (-v): its pid, program, why
 * it was not profiled, its CPU time and its end. */
void collect_others_list(const struct collect_others *o);

/* "; killed by signal 9 (Killed)" or "" for how a trace's process
 * ended (t->end), into buf. */
void collect_end_say(char *buf, size_t cap, const struct collect_trace *t);

#endif
