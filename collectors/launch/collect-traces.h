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
#ifndef PROFVIEW_LAUNCH_COLLECT_TRACES_H
#define PROFVIEW_LAUNCH_COLLECT_TRACES_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "raw-cpu.h"

/* A process's end as its parent's wait saw it: the launcher's own, or a
 * RAW_CHILD record of a traced parent. */
struct collect_end {
	uint32_t pid;
	uint32_t status;      /* the wait status */
	uint64_t cpu_ns;      /* RAW_UNKNOWN when not known */
};

/* A growing list of them. */
struct collect_ends {
	struct collect_end *v;
	size_t n, cap;
};

/* Adds one; out of memory, it is not added (its process then reads as
 * before: ended by what its trace says).  */
void collect_ends_add(struct collect_ends *e, uint32_t pid, uint32_t status, uint64_t cpu_ns);

/* A program run by exec, as the RAW_EXEC record of the image (or of its
 * vfork parent's) said. */
struct collect_exec {
	uint32_t pid;
	uint32_t why;         /* enum raw_why */
	uint64_t time_ns;
	char path[256];       /* (cut to fit) */
};

/* What the traces say of the run's other processes: the ends their
 * parents waited for (RAW_CHILD) and the programs run (RAW_EXEC). */
struct collect_seen {
	struct collect_ends ends;
	struct collect_exec *execs;
	size_t nexecs, cap_execs;
};

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
	uint32_t heap_flags;  /* of a heap trace's header (enum raw_heap_flags) */
	uint64_t collector_ns; /* the library's own CPU time (RAW_COLLECTOR) */
	/* threads whose perf event became a POSIX timer (RAW_EXIT_MOVED) */
	uint64_t moved;
	/* a CPython whose frames were not read (RAW_PYTHON): its version,
	 * major << 8 | minor, 0 when not known */
	int python_unread;
	uint32_t python_version;
	/* the process's own last exec (RAW_EXEC of its pid), exec_seen 0 for
	 * none; the others and the children it waited for (RAW_CHILD) are
	 * added to the collect_seen the caller gave collect_scan */
	int exec_seen;
	struct collect_exec exec;
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
	/* the last image of its process: how the process ended (RAW_RUN_EXITED,
	 * RAW_RUN_KILLED, 0 not known) and the status or signal */
	uint32_t end, end_code;
	uint64_t size;        /* bytes of the trace, once scanned */
	/* a trace in the run's file of short images (name), at chunk_off */
	int chunk;
	uint64_t chunk_off;
};

/* Reads the trace at path, a piece at a time (so that memory stays flat
 * whatever its size): counts, and cuts the zeros after the last record of
 * an unfinished trace; what it says of other processes is added to seen
 * (may be NULL).  Returns 0, or -1 if it cannot be read. */
int collect_scan(const char *path, struct collect_stats *st, struct collect_seen *seen);
/* The same of the trace read from fd (closed here; -1: it could not be
 * opened), and of a trace in the run's file of short images (a copy in
 * memory is read). */
int collect_scan_fd(int fd, struct collect_stats *st, struct collect_seen *seen);
int collect_scan_chunk(const struct collect_trace *t, struct collect_stats *st,
		       struct collect_seen *seen);

/* What the RAW_EXEC and RAW_CHILD records of buf (len bytes of them, one
 * after the other, as seg_procs gives them) of the trace of process pid
 * say, as collect_scan would: into st (its own exec) and seen. */
void collect_scan_records(const unsigned char *buf, size_t len, uint32_t pid,
			  struct collect_stats *st, struct collect_seen *seen);

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
/* The same of the len bytes at offset at of the file at path. */
int collect_copy_from(int fd, uint64_t off, const char *path, uint64_t at, uint64_t len);

/* The processes of the run v[0..n) (v[0] the program's trace): the
 * process ids of the traces read, v[0]'s always; the images of one
 * process (an exec) count once.  The run file and the summary both say it. */
size_t collect_count_processes(const struct collect_trace *v, size_t n);

/* Joins the kept traces of v[0..n) into one run file at shown, with the
 * table of the processes not profiled (collect-procs.h) when others has
 * any.  Returns
 * 0, or -1 with a message (the traces are then left as they are). */
struct collect_others;
int collect_join(const char *shown, const struct collect_trace *v, size_t n,
		 const struct collect_others *others);

#endif
