/* collect-summary.c - what the launcher says at the end (see
 * collect-summary.h)
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect-procs.h"
#include "collect-runseg.h"
#include "collect-summary.h"
#include "collect-traces.h"
#include "collect.h"
#include "escape.h"
#include "raw-cpu.h"
#include "raw-iter.h"
#include "raw.h"
#include "units.h"

#define COLLECT_SHOWN 3           /* processes of a run listed without -v */

/* What samples stand for, in buf: the time of clock ns ("1.2 s of CPU"),
 * or a heap trace's bytes ("about 12.3 MiB allocated"). */
static void collect_weight_say(char *buf, size_t n, uint32_t clock, uint64_t ns, double bytes)
{
	static const char *const unit[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	char w[32];
	int u = 0;

	if (clock == RAW_CLOCK_HEAP) {
		while (bytes >= 1024 && u < 4) {
			bytes /= 1024;
			u++;
		}
		snprintf(buf, n, "about %.*f %s allocated", u ? 1 : 0, bytes, unit[u]);
		return;
	}
	pv_format_duration(w, sizeof(w), (int64_t)ns);
	snprintf(buf, n, "%s of %s", w, clock == RAW_CLOCK_WALL ? "wall-clock time" : "CPU");
}

/* The summary line of a trace cut into segments (--split). */
static void collect_report_segments(const struct seg *seg, const char *who, int quiet, int exited)
{
	char weight[64], say[512], cause[512], first[PATH_MAX + 32], last[PATH_MAX + 32];
	char where[3 * PATH_MAX], failed[96] = "", from[32], to[32];
	struct seg_summary s;
	size_t k = 0;

	seg_summary(seg, &s);
	if (quiet && !s.bad && !s.failed)
		return;
	/* (a heap trace's weights are bytes) */
	collect_weight_say(weight, sizeof(weight), s.clock, s.weight_ns, (double)s.weight_ns);
	cause[0] = '\0';
	if (s.failed) {
		const char *why = raw_lost_cause((uint32_t)s.failed_error);

		pv_format_duration(from, sizeof(from), (int64_t)s.failed_from_ns);
		pv_format_duration(to, sizeof(to), (int64_t)s.failed_to_ns);
		if (s.failed_first == s.failed_last)
			k = (size_t)snprintf(cause, sizeof(cause), " (%" PRIu64 " in segment %" PRIu64,
					     s.failed_samples, s.failed_first);
		else
			k = (size_t)snprintf(cause, sizeof(cause), " (%" PRIu64 " in segments %" PRIu64
					     " to %" PRIu64, s.failed_samples, s.failed_first,
					     s.failed_last);
		k += (size_t)snprintf(cause + k, sizeof(cause) - k, ", %s to %s of the run, that could "
				      "not be written%s%s", from, to, why ? ": " : "", why ? why : "");
	}
	if (s.lost > s.failed_samples && raw_lost_cause(s.lost_error) && k < sizeof(cause))
		k += (size_t)snprintf(cause + k, sizeof(cause) - k, "%sthe trace could not grow: %s",
				      k ? "; " : " (", raw_lost_cause(s.lost_error));
	if (k && k < sizeof(cause) - 1)
		snprintf(cause + k, sizeof(cause) - k, ")");
	seg_name(seg, s.first, first, sizeof(first));
	seg_name(seg, s.last, last, sizeof(last));
	if (s.segments == 0)
		snprintf(where, sizeof(where), "no segment could be written");
	else if (s.segments == 1)
		snprintf(where, sizeof(where), "written to 1 segment, '%s'", last);
	else if (s.first == s.last)
		snprintf(where, sizeof(where), "written to %" PRIu64 " segments, the last kept: '%s'",
			 s.segments, last);
	else if (s.last - s.first + 1 < s.segments)
		snprintf(where, sizeof(where), "written to %" PRIu64 " segments, the last %" PRIu64
			 " kept: '%s' to '%s'", s.segments, s.last - s.first + 1, first, last);
	else
		snprintf(where, sizeof(where), "written to %" PRIu64 " segments, '%s' to '%s'",
			 s.segments, first, last);
	if (s.failed)
		snprintf(failed, sizeof(failed), "; %" PRIu64 " segment%s could not be written",
			 s.failed, s.failed == 1 ? "" : "s");
	collect_say("%s%" PRIu64 " sample%s (%s), %" PRIu64
		" thread%s, %" PRIu64 " lost%s, %s%s%s%s\n",
		who, s.samples, s.samples == 1 ? "" : "s", weight, s.threads,
		s.threads == 1 ? "" : "s", s.lost, cause, where, failed,
		s.finished || exited ? "" : "; the program ended without running its exit handlers, "
					    "the last segment stops at its last complete record",
		s.bad ? "; unreadable data after the last good record" : "");
	/* (counted by segment: a thread alive in ten segments is ten there) */
	if (s.clock == RAW_CLOCK_CPU &&
	    raw_cpu_unsampled_say(say, sizeof(say), s.unsampled_ns, s.cpu_ns,
				  s.unsampled_threads < s.threads ? s.unsampled_threads : s.threads,
				  s.threads, s.lost))
		collect_say("%s%s\n", who, say);
}

/* The summary line of one trace, as it was before runs were joined: its
 * samples, threads, losses and where it is; then the CPU time in no
 * sample when there is much.  where: "written to 'NAME'" or the like. */
/* The CPU time (user and system) of the launcher's children and their
 * descendants, all waited for by now: the whole run's; 0 if unknown. */
static uint64_t collect_children_cpu(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru) != 0)
		return 0;
	return (uint64_t)ru.ru_utime.tv_sec * 1000000000ull + (uint64_t)ru.ru_utime.tv_usec * 1000u +
	       (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + (uint64_t)ru.ru_stime.tv_usec * 1000u;
}

/* "collector: 41 ms of CPU (2.3%)", the library's own CPU time, when it
 * is above 1% of the run's CPU time (the children's, as the kernel
 * counted it; cpu_ns, what the traces say of their threads, when that is
 * unknown or more). */
static void collect_say_cost(const char *who, uint64_t collector_ns, uint64_t cpu_ns)
{
	uint64_t run = collect_children_cpu();
	char t[32];

	if (run > cpu_ns)
		cpu_ns = run;
	if (cpu_ns == 0 || (double)collector_ns * 100 <= (double)cpu_ns)
		return;
	pv_format_duration(t, sizeof(t), (int64_t)collector_ns);
	collect_say("%scollector: %s of CPU (%.1f%%) in its own start, unwind "
		"tables, threads and end\n", who, t, 100.0 * (double)collector_ns / (double)cpu_ns);
}

/* Threads that the timer's auto engine moved from their perf event to a
 * POSIX CPU timer (RAW_EXIT_MOVED), when there were some. */
static void collect_say_moved(const char *who, uint64_t moved)
{
	if (moved > 0)
		collect_say("%s%" PRIu64 " thread%s switched context often and moved from %s perf "
			"event to a POSIX CPU timer (--engine in collect-timer(1))\n", who, moved,
			moved == 1 ? "" : "s", moved == 1 ? "its" : "their");
}

/* A heap trace of an attach (RAW_HEAP_SINCE_ATTACH): what it counts. */
static void collect_say_since(const char *who)
{
	collect_say("%sonly the blocks allocated since the attach are counted, not those allocated "
		    "before\n", who);
}

/* "python 3.14: its frames are not read", of a process whose CPython is
 * of a version the collector does not know. */
static void collect_say_python(const char *who, int unread, uint32_t version)
{
	if (!unread)
		return;
	if (version == 0)
		collect_say("%spython of a version not known: its frames are not read\n", who);
	else
		collect_say("%spython %u.%u: its frames are not read (a version whose layout is not "
			    "known)\n", who, version >> 8, version & 0xff);
}

static void collect_say_trace(const struct collect_trace *t, const char *who, const char *where)
{
	const struct collect_stats *st = &t->st;
	char weight[64], say[512], cause[160], ended[160];

	collect_weight_say(weight, sizeof(weight), st->clock,
			   st->clock == RAW_CLOCK_WALL ? st->wall_weight_ns : st->cpu.weight_ns, st->heap_bytes);
	if (st->lost && raw_lost_cause(st->lost_error))
		snprintf(cause, sizeof(cause), " (the trace could not grow: %s)",
			 raw_lost_cause(st->lost_error));
	else
		cause[0] = '\0';
	/* an end by exit or _exit is a normal one: its trace is whole */
	collect_end_say(ended, sizeof(ended), t);
	collect_say("%s%" PRIu64 " sample%s (%s), %" PRIu64
		" thread%s, %" PRIu64 " lost%s, %s%s%s\n",
		who, st->samples, st->samples == 1 ? "" : "s", weight,
		st->threads, st->threads == 1 ? "" : "s", st->lost, cause, where,
		st->ended ? "" : t->execd ? "; then the process ran another program"
			   : t->end != 0 ? ended
			   : "; the program ended without running its exit handlers, "
			     "the trace stops at its last complete record",
		st->bad ? "; unreadable data after the last good record" : "");
	if (st->clock == RAW_CLOCK_CPU &&
	    raw_cpu_unsampled_say(say, sizeof(say), st->cpu.unsampled_cpu_ns, st->cpu.cpu_ns,
				  st->cpu.unsampled_threads, st->cpu.threads, st->lost))
		collect_say("%s%s\n", who, say);
	if (st->clock == RAW_CLOCK_CPU) {
		collect_say_moved(who, st->moved);
		collect_say_cost(who, st->collector_ns, st->cpu.cpu_ns);
	}
	if (st->heap_flags & RAW_HEAP_SINCE_ATTACH)
		collect_say_since(who);
	collect_say_python(who, st->python_unread, st->python_version);
}

/* What the summary lists of one process: its images (before and after
 * an exec) together. */
struct collect_proc {
	uint32_t pid;
	const char *exe, *first;  /* the last image's program, the first's */
	uint32_t clock;
	uint64_t samples, weight_ns, threads;
	double bytes;
	int killed;
	uint32_t killed_by;   /* the signal, 0 when not known */
};

static uint64_t collect_weight_of(const struct collect_stats *st)
{
	return st->clock == RAW_CLOCK_WALL ? st->wall_weight_ns : st->cpu.weight_ns;
}

static int collect_weight_cmp(const void *a, const void *b)
{
	const struct collect_proc *x = a, *y = b;

	if (x->weight_ns != y->weight_ns)
		return x->weight_ns < y->weight_ns ? 1 : -1;
	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : 0;
}

/* Did the image end by a kill (or, when its end is not known, without
 * its end record)? */
static int collect_killed(const struct collect_trace *t)
{
	if (t->st.ended || t->execd)
		return 0;
	return t->end == 0 || t->end == RAW_RUN_KILLED;
}

/* The kept images of v[0..n) as processes into out (n entries room), by
 * time, most first; returns how many. */
static size_t collect_group(const struct collect_trace *v, size_t n, struct collect_proc *out)
{
	size_t m = 0;

	for (size_t k = 0; k < n; k++) {
		const struct collect_stats *st = &v[k].st;
		struct collect_proc *pr = NULL;

		if (!v[k].keep || !v[k].scanned || st->empty || st->foreign || st->samples == 0)
			continue;
		for (size_t j = 0; j < m && pr == NULL; j++)
			if (out[j].pid == v[k].pid)
				pr = &out[j];
		if (pr == NULL) {
			pr = &out[m++];
			memset(pr, 0, sizeof(*pr));
			pr->pid = v[k].pid;
			pr->clock = st->clock;
		}
		pr->samples += st->samples;
		pr->weight_ns += collect_weight_of(st);
		pr->bytes += st->heap_bytes;
		/* (the threads of an image go on in the next one) */
		if (st->threads > pr->threads)
			pr->threads = st->threads;
		pr->killed = collect_killed(&v[k]);
		pr->killed_by = v[k].end == RAW_RUN_KILLED ? v[k].end_code : 0;
	}
	/* named by its first image and its last, with samples or not */
	for (size_t k = 0; k < n; k++)
		for (size_t j = 0; j < m; j++)
			if (out[j].pid == v[k].pid && v[k].scanned && !v[k].st.empty) {
				if (out[j].first == NULL)
					out[j].first = v[k].exe;
				out[j].exe = v[k].exe;
			}
	qsort(out, m, sizeof(*out), collect_weight_cmp);
	return m;
}

/* Has an image of process pid in v[0..n) a sample? */
static int collect_pid_sampled(const struct collect_trace *v, size_t n, uint32_t pid)
{
	for (size_t k = 0; k < n; k++)
		if (v[k].pid == pid && v[k].scanned && !v[k].st.empty && !v[k].st.foreign &&
		    v[k].st.samples > 0)
			return 1;
	return 0;
}

/* One process's line of the summary. */
static void collect_say_proc(const struct collect_proc *pr)
{
	char w[64], was[96] = "", killed[96] = "; killed: its trace stops at its last complete record";

	if (pr->clock == RAW_CLOCK_HEAP)
		collect_weight_say(w, sizeof(w), pr->clock, 0, pr->bytes);
	else
		pv_format_duration(w, sizeof(w), (int64_t)pr->weight_ns);
	if (strcmp(pr->first, pr->exe) != 0)
		snprintf(was, sizeof(was), ", first %s", pr->first);
	if (pr->killed_by != 0)
		snprintf(killed, sizeof(killed), "; killed by signal %u (%s): its trace stops at its "
			 "last complete record", pr->killed_by, strsignal((int)pr->killed_by));
	collect_say("pid %u (%s%s): %" PRIu64 " sample%s (%s), %" PRIu64
		" thread%s%s\n", pr->pid, pr->exe, was, pr->samples, pr->samples == 1 ? "" : "s", w,
		pr->threads, pr->threads == 1 ? "" : "s",
		pr->killed ? killed : "");
}

/* The summary of a run of several processes: the processes with samples,
 * each one line (the COLLECT_SHOWN with the most time when there are more;
 * none with verbose, which said each image already), then the totals,
 * what was lost and why, and the CPU time in no sample. */
static void collect_say_run(const char *shown, struct collect_trace *v, size_t n, int joined,
			    int verbose, const struct collect_others *others)
{
	char othersay[768] = "(", *os = othersay + 1;

	struct collect_proc *kept = calloc(n, sizeof(*kept));
	uint64_t samples = 0, lost = 0, weight = 0, cpu = 0, unsampled = 0, threads = 0, moved = 0;
	double bytes = 0;
	uint64_t unsampled_threads = 0, killed = 0, silent = 0, silent_cpu = 0, sthreads = 0;
	uint64_t silent_images = 0;
	uint64_t own = 0;
	size_t nkept = 0, nproc = 0, shown_n;
	const char *cause = NULL;
	char w[64], u[32], c[32], more[96] = "", lostsay[192] = "", killsay[160] = "";
	int wall = 0, heap = 0, since = 0;

	if (kept == NULL)
		return;
	for (size_t k = 0; k < n; k++) {
		const struct collect_stats *st = &v[k].st;

		if (!v[k].scanned || st->empty || st->foreign)
			continue;
		wall |= st->clock == RAW_CLOCK_WALL;
		heap |= st->clock == RAW_CLOCK_HEAP;
		since |= (st->heap_flags & RAW_HEAP_SINCE_ATTACH) != 0;
		bytes += st->heap_bytes;
		samples += st->samples;
		lost += st->lost;
		if (st->lost && raw_lost_cause(st->lost_error) && cause == NULL)
			cause = raw_lost_cause(st->lost_error);
		weight += st->clock == RAW_CLOCK_WALL ? st->wall_weight_ns : st->cpu.weight_ns;
		cpu += st->cpu.cpu_ns;
		own += st->collector_ns;
		moved += st->moved;
		threads += st->cpu.threads;
		if (st->samples == 0) {
			/* a process: its last image, none of its images with a
			 * sample (one that ran another program did not end);
			 * else an image of a process counted apart */
			int whole = !v[k].execd && !collect_pid_sampled(v, n, v[k].pid);

			silent += whole;
			silent_images += !whole && st->cpu.cpu_ns > 0;
			silent_cpu += st->cpu.cpu_ns;
			continue;
		}
		unsampled += st->cpu.unsampled_cpu_ns;
		unsampled_threads += st->cpu.unsampled_threads;
		sthreads += st->cpu.threads;
		killed += collect_killed(&v[k]) != 0;
	}
	nproc = collect_count_processes(v, n);
	/* the processes that left no trace at all */
	nproc += collect_others_apart(v, n, others);
	collect_others_say(os, sizeof(othersay) - 3, others);
	if (*os != '\0')
		strcat(othersay, ")");
	else
		othersay[0] = '\0';
	nkept = collect_group(v, n, kept);
	shown_n = verbose ? nkept : nkept <= COLLECT_SHOWN + 1 ? nkept : COLLECT_SHOWN;
	for (size_t i = 0; i < shown_n && !verbose; i++)
		collect_say_proc(&kept[i]);
	for (size_t k = 0; k < n && !verbose; k++) {
		char who[128];

		if (!v[k].scanned || !v[k].st.python_unread)
			continue;
		snprintf(who, sizeof(who), "pid %u (%s): ", v[k].pid, v[k].exe);
		collect_say_python(who, v[k].st.python_unread, v[k].st.python_version);
	}
	if (shown_n < nkept)
		snprintf(more, sizeof(more), " (%zu more not listed; -v lists every one)",
			 nkept - shown_n);
	if (lost)
		snprintf(lostsay, sizeof(lostsay), ", %" PRIu64 " lost%s%s%s", lost,
			 cause ? " (a trace could not grow: " : "", cause ? cause : "", cause ? ")" : "");
	if (killed > 1 || (killed == 1 && shown_n < nkept))
		snprintf(killsay, sizeof(killsay), "; %" PRIu64 " %s killed before their end",
			 killed, killed == 1 ? "was" : "were");
	collect_weight_say(w, sizeof(w), heap ? RAW_CLOCK_HEAP : wall ? RAW_CLOCK_WALL : RAW_CLOCK_CPU,
			   weight, bytes);
	collect_say("%zu process%s%s%s, %zu with samples%s: %" PRIu64 " sample%s "
		"(%s)%s, %s '%s'%s\n", nproc, nproc == 1 ? "" : "es", othersay[0] ? " " : "", othersay, nkept,
		more, samples,
		samples == 1 ? "" : "s", w, lostsay,
		joined ? "written to" : "the first in", shown, killsay);
	unsampled += silent_cpu;
	if (!wall && !heap && cpu > 0 && unsampled * 100 > cpu) {
		pv_format_duration(u, sizeof(u), (int64_t)unsampled);
		pv_format_duration(c, sizeof(c), (int64_t)cpu);
		char said[480] = "";
		size_t at = 0;

		if (silent > 0)
			at += (size_t)snprintf(said, sizeof(said), ": that of %" PRIu64 " process%s that "
					       "ended before %s first sample", silent,
					       silent == 1 ? "" : "es", silent == 1 ? "its" : "their");
		if (silent_images > 0)
			at += (size_t)snprintf(said + at, sizeof(said) - at, "%s%" PRIu64 " program%s "
					       "that ran another (exec) or ended before %s first sample",
					       at ? ", of " : ": that of ", silent_images,
					       silent_images == 1 ? "" : "s",
					       silent_images == 1 ? "its" : "their");
		if (unsampled_threads > 0)
			snprintf(said + at, sizeof(said) - at, "%s%" PRIu64 " of the %" PRIu64
				 " threads of the others, never sampled", at ? ", and of " : ": that of ",
				 unsampled_threads, sthreads);
		pv_format_duration(u, sizeof(u), (int64_t)unsampled);
		pv_format_duration(c, sizeof(c), (int64_t)cpu);
		collect_say("%s of the %s of CPU time the processes used (%.1f%%) "
			"is in no sample%s (see ACCURACY in collect-timer(1))\n", u, c,
			100.0 * (double)unsampled / (double)cpu, said);
	}
	if (!wall && !heap) {
		collect_say_moved("", moved);
		collect_say_cost("", own, cpu);
	}
	if (since)
		collect_say_since("");
	free(kept);
}

/* An image that ran another program with no sample and no trace kept:
 * nothing to say of it apart from the process's later image. */
static int collect_image_silent(const struct collect_trace *t)
{
	return t->execd && !t->keep && !t->st.empty && t->st.samples == 0 && !t->st.bad;
}

/* The programs the process of v[k] ran before it in the images with
 * nothing to say (collect_image_silent), in order, comma-separated, into
 * buf ("" when none). */
static void collect_images_before(const struct collect_trace *v, size_t n, size_t k, char *buf,
				  size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t j = 0; j < n && len + 1 < size; j++)
		if (j != k && v[j].pid == v[k].pid && v[j].scanned && v[j].start_mono < v[k].start_mono &&
		    collect_image_silent(&v[j])) {
			int w = snprintf(buf + len, size - len, "%s%s", len ? ", " : "", v[j].exe);

			len = w < 0 ? len : len + (size_t)w < size ? len + (size_t)w : size - 1;
		}
}

/* The run of one trace: its line, and the processes it ran that were not
 * profiled. */
static void collect_say_alone(const char *shown, const struct collect_trace *v, int quiet,
			      const struct collect_others *others)
{
	char say[768];
	size_t nproc = 1;

	if (v[0].scanned && v[0].st.empty) {
		if (unlink(shown) == 0 && !quiet)
			cli_msg("no profile was recorded; removed the empty '%s'", shown);
	} else if (v[0].scanned && !v[0].st.foreign && (!quiet || v[0].st.bad)) {
		char where[PATH_MAX + 16], who[128];

		snprintf(where, sizeof(where), "written to '%s'", shown);
		snprintf(who, sizeof(who), "pid %u (%s): ", v[0].pid, v[0].exe);
		collect_say_trace(&v[0], who, where);
	}
	collect_others_say(say, sizeof(say), others);
	/* (a process is counted once, by its pid, whatever it ran) */
	nproc += collect_others_apart(v, 1, others);
	if (say[0] != '\0' && !quiet)
		cli_msg("%zu process%s (%s)", nproc, nproc == 1 ? "" : "es", say);
}

/* The summary of a run whose program's trace was cut into segments: the
 * program's line, and the processes not profiled, whose table goes into
 * the last segment (so that the segments account for every process).
 */
static void collect_report_split(const struct seg *seg, pid_t pid, int quiet,
				const struct collect_ends *reaped, const struct collect_others *others,
				size_t nprocesses)
{
	const char *exe = strrchr(seg_program(seg), '/');
	char who[128], name[64], last[PATH_MAX + 32], say[512];
	struct seg_summary s;
	int exited = 0;

	pv_escape(name, sizeof(name), exe != NULL ? exe + 1 : seg_program(seg));
	snprintf(who, sizeof(who), "pid %u (%s): ", (unsigned)pid, name);
	/* an exit or _exit the launcher saw is a normal end, even where the
	 * trace has no end record */
	for (size_t i = 0; reaped != NULL && i < reaped->n; i++)
		if (reaped->v[i].pid == (uint32_t)pid)
			exited = WIFEXITED((int)reaped->v[i].status);
	collect_report_segments(seg, who, quiet, exited);
	seg_summary(seg, &s);
	if (!quiet)
		collect_say_python(who, s.python_unread, s.python_version);
	if (others->n == 0 || s.segments == 0)
		return;
	/* the run's last: the processes the program started may have
	 * outlived it into windows of their own */
	for (uint64_t m = s.last;; m++) {
		struct stat sb;

		seg_name(seg, m + 1, last, sizeof(last));
		if (stat(last, &sb) != 0) {
			seg_name(seg, m, last, sizeof(last));
			break;
		}
	}
	collect_others_say(say, sizeof(say), others);
	if (collect_seg_others(last, others, nprocesses) != 0)
		cli_msg("cannot name the processes not profiled in '%s': %s; %s", last,
			    strerror(errno), say);
	else if (!quiet)
		cli_msg("%s; named in '%s'", say, last);
}

static int collect_report_v(const char *shown, pid_t pid, struct collect_trace *v, size_t n,
			    int inherit, int quiet, int verbose, const struct seg *seg,
			    const struct collect_ends *reaped);

/* Reports the run (see collect_find_traces) and makes one file of it:
 * the traces with samples joined into shown (collect_join), the others
 * removed.  One trace alone is said as it is; a run of several in one
 * summary (collect_say_run), each trace as it is with verbose.  seg: the
 * program's trace was cut into segments (--split), which seg says; the
 * other processes' traces are joined into shown then.  Returns 1 when
 * shown holds them, else 0. */
int collect_report(const char *shown, pid_t pid, uint64_t t0, int inherit, int quiet,
			  int verbose, const struct seg *seg, const struct collect_ends *reaped)
{
	struct collect_trace *v;
	size_t n = collect_find_traces(shown, pid, t0, inherit, &v);

	if (n == 0) {
		cli_msg("cannot list the traces of the run: out of memory; the trace is '%s'",
			    shown);
		free(v);
		return 0;
	}
	return collect_report_v(shown, pid, v, n, inherit, quiet, verbose, seg, reaped);
}

int collect_report_list(const char *shown, char (*const names)[PATH_MAX], size_t n, int quiet,
			int verbose)
{
	struct collect_trace *v = calloc(n, sizeof(*v));

	if (v == NULL || n == 0) {
		cli_msg("cannot list the traces of the run: out of memory; the first is '%s'",
			    shown);
		free(v);
		return 0;
	}
	for (size_t k = 0; k < n; k++) {
		snprintf(v[k].name, sizeof(v[k].name), "%s", k == 0 ? shown : names[k]);
		/* (unreadable: said by the scan) */
		collect_header(v[k].name, &v[k]);
	}
	return collect_report_v(shown, (pid_t)v[0].pid, v, n, 0, quiet, verbose, NULL, NULL);
}

/* collect_report of the traces v[0..n) (malloc'd, freed here). */
static int collect_report_v(const char *shown, pid_t pid, struct collect_trace *v, size_t n,
			    int inherit, int quiet, int verbose, const struct seg *seg,
			    const struct collect_ends *reaped)
{
	struct collect_others others = { 0 };
	struct collect_seen seen = { 0 };
	size_t nkeep = 0;
	int joined;

	for (size_t i = 0; reaped != NULL && i < reaped->n; i++)
		collect_ends_add(&seen.ends, reaped->v[i].pid, reaped->v[i].status, reaped->v[i].cpu_ns);
	for (size_t k = 0; k < n; k++) {
		struct collect_trace *t = &v[k];
		struct stat sb;

		for (size_t j = 0; j < n; j++)
			t->execd |= j != k && v[j].pid == t->pid && v[j].start_mono > t->start_mono;
		if (k == 0 && seg != NULL) {
			/* its records are in the segments now: what it said
			 * of the others, seg kept */
			size_t len;
			const unsigned char *procs = seg_procs(seg, &len);

			collect_scan_records(procs, len, t->pid, &t->st, &seen);
			continue;
		}
		if ((t->chunk ? collect_scan_chunk(t, &t->st, &seen)
			      : collect_scan(t->name, &t->st, &seen)) != 0) {
			if (k == 0)
				cli_msg("cannot read '%s': %s", t->name, strerror(errno));
			continue;
		}
		t->scanned = 1;
		if (t->st.foreign) {
			char say[256];

			cli_msg("'%s': %s", t->name, raw_iter_machine_say(say, sizeof(say),
									     t->st.machine));
			continue;
		}
		if (!t->chunk)
			t->size = stat(t->name, &sb) == 0 ? (uint64_t)sb.st_size : 0;
		/* the launched program's images even without samples: they
		 * name the run */
		t->keep = !t->st.empty && t->size > 0 && (t->st.samples > 0 || t->pid == v[0].pid);
		nkeep += t->keep != 0;
	}
	/* the run's entry: the program's trace, even without a sample */
	if (nkeep == 0 && seg == NULL && v[0].scanned && !v[0].st.empty && !v[0].st.foreign)
		v[0].keep = 1;
	collect_account(v, n, &seen, &others);
	/* (--no-inherit: the other processes are not the run's) */
	if (!inherit)
		collect_others_free(&others);
	free(seen.ends.v);
	free(seen.execs);
	if (n == 1 && seg == NULL) {
		/* the program's end or the programs it ran without the
		 * library are said in a run file */
		if (v[0].keep && collect_run_needed(v, &others))
			collect_join(shown, v, 1, &others);
		collect_say_alone(shown, v, quiet, &others);
		collect_others_free(&others);
		free(v);
		return 0;
	}
	if (seg != NULL)
		collect_report_split(seg, pid, quiet, reaped, &others,
				     collect_count_processes(v, n) + collect_others_apart(v, n, &others));
	if (seg != NULL && (n == 1 || nkeep == 0)) {
		/* the program's alone, or others that left nothing to keep */
		for (size_t k = 1; k < n; k++)
			if (v[k].scanned && !v[k].st.foreign && !v[k].keep && !v[k].chunk)
				unlink(v[k].name);
		collect_others_free(&others);
		free(v);
		return 0;
	}
	joined = collect_join(shown, v, n, &others) == 0;
	for (size_t k = 0; k < n && verbose; k++) {
		char who[256], where[PATH_MAX + 64], before[160];

		if (!v[k].scanned || v[k].st.foreign || (k == 0 && seg != NULL))
			continue;
		/* an image with nothing to say before the program it ran is
		 * said with that program's, once per process */
		if (collect_image_silent(&v[k]))
			continue;
		collect_images_before(v, n, k, before, sizeof(before));
		snprintf(who, sizeof(who), "pid %u (%s%s%s): ", v[k].pid, v[k].exe, before[0] ? ", after " : "",
			 before);
		if (v[k].keep && joined)
			snprintf(where, sizeof(where), "in '%s'", shown);
		else if (v[k].keep)
			snprintf(where, sizeof(where), "written to '%s'", v[k].name);
		else
			snprintf(where, sizeof(where), "not kept");
		collect_say_trace(&v[k], who, where);
	}
	if (verbose)
		collect_others_list(&others);
	/* what is joined, or holds nothing, goes */
	for (size_t k = 1; k < n; k++)
		if (v[k].scanned && !v[k].st.foreign && (joined || !v[k].keep) && !v[k].chunk)
			unlink(v[k].name);
	if (!quiet)
		collect_say_run(shown, v, n, joined, verbose, &others);
	collect_others_free(&others);
	joined = joined && nkeep > 0;
	free(v);
	return joined;
}
