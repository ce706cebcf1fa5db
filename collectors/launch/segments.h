/* segments.h - collect-timer --split: the program's trace cut into
 * self-contained segments while it is written
 *
 * collect-timer waits for the program anyway; with --split it also reads
 * the trace the program writes (its -o file) as it grows (raw-tail.h), and
 * copies its records into one segment per SECONDS of the run,
 * "<stem>.seg0001.raw", "<stem>.seg0002.raw"..., where stem is the trace's
 * name without ".raw".  Segment n holds the records written between
 * t0 + (n - 1) * SECONDS and t0 + n * SECONDS, t0 being the trace's start
 * (a record written late, with an earlier time, lands in the next one).
 * Each is a trace of its own that profview reads alone:
 *
 * - the trace's header, its start times those of the segment;
 * - every mapping seen so far (each once), so every address resolves;
 * - a thread record for every thread then alive, with the CPU time its
 *   samples before the segment stand for (its CPU clock at its last sample
 *   before, or when it was last started), then the records of the window:
 *   samples, and the stack records the frame-pointer samples refer to
 *   (each once in a segment, before the first sample that needs it);
 * - an exit record for every thread still alive at the end, with its
 *   CPU clock at its last sample in the segment, then an end record with
 *   the segment's end time, samples and samples lost.
 *
 * So the CPU time between a thread's last sample in a segment and its
 * first in the next is charged to the next one, whose first sample weighs
 * it; each segment's samples keep their recorded weights (raw-cpu.h shares
 * out a thread's time in a segment exactly as its samples weigh), the time
 * a thread used after its last sample before it ended or sampling was
 * paused goes to the segment where that happened, and the segments'
 * CPU times add up to the whole run's.  A segment is written as
 * "<name>.part" and renamed when it is complete, so a reader never sees
 * half of one.
 *
 * Disk and memory stay bounded: the part of the trace already copied is
 * given back to the file system (fallocate PUNCH_HOLE), which also takes
 * its pages out of the program's page cache; the library leaves that to
 * collect-timer (PROFVIEW_SPLIT).  collect-timer keeps the mappings, the
 * stack records (as many as the library's stack table holds at most) and
 * the threads alive, and reads the trace through a buffer of a megabyte.
 * The traces of the processes the program starts are cut too, each by a
 * seg of its own numbered after the program's start (seg_align), and
 * collect-timer joins the segments of a window into one run (raw.h), so
 * that a segment holds every process's samples of its window; those
 * traces stay whole (they are also joined into the -o file at the end).
 */
#ifndef PROFVIEW_LAUNCH_SEGMENTS_H
#define PROFVIEW_LAUNCH_SEGMENTS_H

#include <stddef.h>
#include <stdint.h>

struct seg;

/* What collect-timer says of the run at its end. */
struct seg_summary {
	int started;               /* the trace had a header */
	int ended;                 /* no more records will come */
	int finished;              /* the trace's own end record was read */
	uint32_t clock;            /* the header's (enum raw_clock) */
	uint64_t segments;         /* written */
	uint64_t failed;           /* that could not be written */
	/* Of those: the samples they held (counted in lost, not in samples),
	 * the first and last of them, the time from the run's start to the
	 * start of the first and the end of the last, and the error of the
	 * last (a Linux errno). */
	uint64_t failed_samples, failed_first, failed_last;
	uint64_t failed_from_ns, failed_to_ns;
	int failed_error;
	uint64_t first, last;      /* the numbers of the first and last on disk */
	uint64_t samples, lost;
	uint32_t lost_error;       /* why samples were lost (raw_lost_cause) */
	uint64_t threads;          /* distinct thread ids */
	uint64_t cpu_ns;           /* the threads' CPU time while sampled */
	uint64_t weight_ns;        /* what the samples stand for */
	uint64_t unsampled_ns, unsampled_threads, stretches;
	int bad;                   /* unreadable data in the trace */
	/* the process's CPython, its frames not read (a RAW_PYTHON record
	 * said so), and its version (major << 8 | minor, 0 not known) */
	int python_unread;
	uint32_t python_version;
};

/* Starts cutting the trace at path live (collect-timer's -o file, which
 * the program fills) into segments of split_ns of the run, keeping only
 * the last keep on disk (0: all).  say prints one line of collect-timer's.
 * NULL when out of memory. */
struct seg *seg_new(const char *live, uint64_t split_ns, unsigned keep,
		    void (*say)(const char *fmt, ...));
/* Reads what the program wrote since the last call, writes the segments
 * that are over (now: CLOCK_MONOTONIC) and frees the disk space of what was
 * copied.  Returns 1 once the trace has ended, else 0. */
int seg_poll(struct seg *s, uint64_t now);
/* The program ended: reads the rest and writes the last segment (ended
 * by collect-timer at the last record if the trace was not finished). */
void seg_finish(struct seg *s);
void seg_summary(const struct seg *s, struct seg_summary *out);
/* Removes the segments of an earlier run by the same name (regular files
 * of the user's own), so that they are not taken for this run's. */
void seg_clear_old(const struct seg *s);
/* Numbers the segments after the run's start t0 (CLOCK_MONOTONIC), the
 * program's, rather than the trace's own, from min_n at least (the windows
 * before are joined already); punch 0 leaves the trace whole.  Before the
 * first seg_poll. */
void seg_align(struct seg *s, uint64_t t0, uint64_t min_n, int punch);
/* Once the trace has a header: 1, the start segments are numbered after
 * in *t0 and the segment being written in *n (those before are on disk,
 * or lost); else 0. */
int seg_where(const struct seg *s, uint64_t *t0, uint64_t *n);
/* The program's path, as the trace's header says ("" before it has
 * one).  Valid until seg_free. */
const char *seg_program(const struct seg *s);
/* The trace's RAW_EXEC and RAW_CHILD records read so far, one after the
 * other as in the trace (each its raw_rec first), *len bytes: what the
 * trace says of the run's other processes once its own records are gone
 * into segments.  NULL with *len 0 when none. */
const unsigned char *seg_procs(const struct seg *s, size_t *len);
/* The name of segment n, into buf. */
const char *seg_name(const struct seg *s, uint64_t n, char *buf, size_t len);
void seg_free(struct seg *s);

#endif
