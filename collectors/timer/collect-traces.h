/* collect-traces.h - the traces of a run, read back and joined
 *
 * Every process of the run writes a trace of its own: the program's is
 * the one the launcher created, the others' are named after it
 * ("<stem>.<pid>.raw", "<stem>.<pid>.<n>.raw" for an exec in a pid that
 * has one).  Here they are found (by name, start time and parent pid),
 * read back a piece at a time to count what they hold and to cut a trace
 * its process could not finish at its last record, and joined into one
 * run file (raw.h's run layout).
 */
#ifndef PROFVIEW_TIMER_COLLECT_TRACES_H
#define PROFVIEW_TIMER_COLLECT_TRACES_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "raw-cpu.h"

/* What collect_scan found in a trace. */
struct collect_stats {
	/* samples: of the program's work, as profiles count them (not those
	 * of the collector's own, RAW_SAMPLE_COLLECTOR) */
	uint64_t samples, lost, lost_records, threads;
	uint32_t lost_error;   /* why samples were lost (raw_lost_cause) */
	/* what the samples stand for and the threads used (raw-cpu.h) */
	struct raw_cpu_summary cpu;
	uint64_t wall_weight_ns; /* a wall-clock trace: the samples' weights */
	double heap_bytes;    /* a heap trace: the bytes its samples stand for */
	int ended;            /* RAW_END seen */
	int cut;              /* trailing zeros were cut */
	int bad;              /* unreadable data after the last record */
	int empty;            /* no header at all */
	int foreign;          /* a trace of another architecture: */
	uint32_t machine;     /* its ELF machine */
	int tail_cut;         /* zeros after the end record were cut */
	uint32_t pid;         /* of the header */
	uint32_t clock;       /* of the header */
	uint64_t collector_ns; /* the library's own CPU time (RAW_COLLECTOR) */
};

/* One trace of the run, as found by collect_find_traces, and what
 * collect_report makes of it. */
struct collect_trace {
	char name[PATH_MAX];
	char exe[64];         /* base name of the program */
	uint32_t pid, ppid;
	uint64_t start_mono;
	struct collect_stats st;
	int scanned;          /* st holds what collect_scan found */
	int execd;            /* the image ran another program */
	int keep;             /* a part of the run file */
	uint64_t size;        /* bytes of the trace, once scanned */
};

/* Reads the trace at path, a piece at a time (so that memory stays flat
 * whatever its size): counts, and cuts the zeros after the last record of
 * an unfinished trace.  Returns 0, or -1 if it cannot be read. */
int collect_scan(const char *path, struct collect_stats *st);

/* Reads the header of a trace into t (exe, pid, ppid, start_mono).
 * Returns 0 or -1 (not a trace). */
int collect_header(const char *path, struct collect_trace *t);

/* Appends to the array *v of *n (capacity *cap) the traces next to shown
 * of the processes of the run, started after t0 (CLOCK_MONOTONIC), that
 * are not in it yet, by start time: those of the program (pid) or of a
 * process whose trace is in v. */
void collect_find_more(const char *shown, pid_t pid, uint64_t t0, struct collect_trace **v,
		       size_t *n, size_t *cap);

/* Finds the traces of the run: shown itself, then, unless !inherit, those
 * next to it of the program's descendants, by start time.  Returns how
 * many in *out (malloc'd), 0 when out of memory. */
size_t collect_find_traces(const char *shown, pid_t pid, uint64_t t0, int inherit,
			   struct collect_trace **out);

/* Copies the len bytes of the file at path into fd at offset off.
 * Returns 0 or -1. */
int collect_copy(int fd, uint64_t off, const char *path, uint64_t len);

/* The processes of the run v[0..n) (v[0] the program's trace): the
 * process ids of the traces read, v[0]'s always; the images of one
 * process (an exec) count once.  The run file and the summary both say it. */
size_t collect_count_processes(const struct collect_trace *v, size_t n);

/* Joins the kept traces of v[0..n) into one run file at shown.  Returns
 * 0, or -1 with a message (the traces are then left as they are). */
int collect_join(const char *shown, const struct collect_trace *v, size_t n);

#endif
