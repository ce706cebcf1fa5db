/* report-header.c - the text reports' header: the program, the profile's
 * totals and how it was sampled, the processes and threads shown, what
 * the collector cost, the warnings about what is missing */
#include "report-text.h"
#include "present.h"
#include "error.h"
#include "escape.h"
#include "units.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 4096

/* " (user 1.06 s, system 3.95 s)": how the CPU time cpu_ns of the
 * samples divides, when the profile says how much of it was the kernel's
 * (pv_profile.system_cpu_ns, kept to the samples shown by the view). */
static void put_system_time(FILE *out, const struct pv_profile *p, int64_t cpu_ns)
{
	char user[32], sys[32];
	int64_t s = p->system_cpu_ns;

	if (s < 0 || cpu_ns <= 0)
		return;
	if (s > cpu_ns)
		s = cpu_ns;
	pv_format_duration(user, sizeof user, cpu_ns - s);
	pv_format_duration(sys, sizeof sys, s);
	fprintf(out, " (user %s, system %s)", user, sys);
}

/* The sampling period: a time (" (period 1 ms, 1000 Hz)") or, in a heap
 * profile, the bytes between samples on average. */
static void period_note(FILE *out, const struct pv_profile *p)
{
	const char *unit = pv_str(p, p->period_type.unit);

	if (p->period <= 0)
		return;
	if (strcmp(unit, "bytes") == 0) {
		if (p->period > 1)
			fprintf(out, " (a sample every %" PRId64 " bytes on average)", p->period);
		else
			fprintf(out, " (every allocation)");
	} else if (!unit[0] || strcmp(unit, "nanoseconds") == 0) {
		static const char *const by[] = {
			[PV_SAMPLER_POSIX] = ", POSIX CPU timers",
			[PV_SAMPLER_PERF] = ", perf events",
			[PV_SAMPLER_MIXED] = ", perf events and POSIX CPU timers",
		};
		const char *how = p->sampler > 0 && p->sampler <= PV_SAMPLER_MIXED ? by[p->sampler] : "";

		fprintf(out, " (period %.3g ms, %.0f Hz%s)", p->period / 1e6, 1e9 / (double)p->period, how);
	} else if (p->period > 1 && strcmp(unit, "count") == 0) {
		fprintf(out, " (one in %" PRId64 " sampled)", p->period);
	} else if (p->period > 1) {
		fprintf(out, " (period %" PRId64 " %s)", p->period, unit);
	}
}

/* The header's line of the input's problems: "warning: a, b". */
struct warn_line {
	FILE *out;
	const char *sep;
};

static void warn_item(void *arg, const char *phrase)
{
	struct warn_line *w = arg;

	fprintf(w->out, "%s%s", w->sep, phrase);
	w->sep = ", ";
}

/* ", first env, bash": what the program's process ran before it became
 * the program named, into buf; "" when nothing. */
static const char *header_before(const struct pv_profile *p, char *buf, size_t n)
{
	char was[NAME_MAX_LEN];

	buf[0] = '\0';
	for (size_t i = 0; i < p->nprocesses; i++)
		if (p->processes[i].pid == p->pid && pv_str(p, p->processes[i].before)[0]) {
			snprintf(buf, n, ", first %s", pv_escape(was, sizeof was,
								 pv_str(p, p->processes[i].before)));
			break;
		}
	return buf;
}

/* The threads the header counts: all the profile's, but for a comparison
 * the new side's that have samples, for a thread filter those kept with
 * samples, and for a process filter every thread of the processes kept
 * (those without samples too). */
static size_t shown_threads(const struct pv_profile *p, bool by_pid, bool by_tid)
{
	bool *seen, *proc;
	size_t n = 0;

	if (!p->diff && !by_pid && !by_tid)
		return p->nthreads;
	seen = calloc(p->nthreads + 1, sizeof *seen);
	proc = calloc(p->nprocesses + 1, sizeof *proc);
	for (size_t i = 0; seen && proc && i < p->nsamples; i++) {
		const struct pv_sample *s = &p->samples[i];
		if (s->flags & PV_SAMPLE_BASE || s->thread >= p->nthreads)
			continue;
		n += !seen[s->thread];
		seen[s->thread] = true;
		if (p->threads[s->thread].process < p->nprocesses)
			proc[p->threads[s->thread].process] = true;
	}
	if (by_pid && !by_tid && !p->diff && seen && proc) {
		/* one process (its threads name none): all of them, if kept */
		if (!p->nprocesses)
			n = n ? p->nthreads : 0;
		for (size_t t = 0; p->nprocesses && t < p->nthreads; t++)
			n += p->threads[t].process < p->nprocesses && proc[p->threads[t].process] &&
			     !seen[t];
	}
	free(seen);
	free(proc);
	return n;
}

/* "; 1 not profiled: ./child, static binary, 0.50 s CPU": the run's
 * processes that were not profiled, the first few named. */
static void header_unprofiled(FILE *out, const struct pv_profile *p)
{
	char name[NAME_MAX_LEN], cpu[32];
	size_t shown = p->nunprofiled <= 4 ? p->nunprofiled : 3;

	if (p->nunprofiled == 0)
		return;
	fprintf(out, "; %zu not profiled: ", p->nunprofiled);
	for (size_t i = 0; i < shown; i++) {
		const struct pv_unprofiled *u = &p->unprofiled[i];

		if (pv_str(p, u->program)[0])
			pv_escape(name, sizeof name, pv_str(p, u->program));
		else
			snprintf(name, sizeof name, "pid %" PRIu32, u->pid);
		fprintf(out, "%s%s, %s", i ? "; " : "", name, pv_str(p, u->why));
		if (u->cpu_ns >= 0)
			fprintf(out, ", %s CPU", pv_format_duration(cpu, sizeof cpu, u->cpu_ns));
		if (u->killed_by > 0)
			fprintf(out, ", killed by signal %d", u->killed_by);
	}
	if (shown < p->nunprofiled)
		fprintf(out, "; %zu more", p->nunprofiled - shown);
}

/* ", segments 3 to 5 of a run (1 to 2 not read)": which segments of a
 * run cut by time (collect-timer --split) the profile holds, when they
 * are of one run. */
static void header_segments(FILE *out, const struct pv_profile *p)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	if (p->nsegments == 0)
		return;
	for (size_t i = 0; i < p->nsegments; i++) {
		const struct pv_segment *g = &p->segments[i];

		if (g->run_key != p->segments[0].run_key || g->split_ns != p->segments[0].split_ns)
			return;
		lo = g->number < lo ? g->number : lo;
		hi = g->number > hi ? g->number : hi;
	}
	if (lo == hi)
		fprintf(out, ", segment %" PRIu64 " of a run", lo);
	else
		fprintf(out, ", segments %" PRIu64 " to %" PRIu64 " of a run", lo, hi);
	if (lo == 2)
		fprintf(out, " (1 not read)");
	else if (lo > 2)
		fprintf(out, " (1 to %" PRIu64 " not read)", lo - 1);
}

void report_header(FILE *out, const struct pv_report_ctx *rc)
{
	const struct calltree *t = rc->t;
	const struct pv_report_options *o = rc->o;
	const struct pv_profile *p = t->p;
	char dur[32], cpu[32], text[NAME_MAX_LEN];
	const char *vname = pv_value_type(t);
	int64_t total_value = t->nodes[0].value;

	fprintf(out, "%sprogram:%s %s", bold_on(o), attr_off(o),
		pv_str(p, p->program)[0] ? pv_escape(text, sizeof text, pv_str(p, p->program)) : "(unknown)");
	if (p->pid)
		fprintf(out, " (pid %u%s)", p->pid, header_before(p, text, sizeof text));
	fprintf(out, ", %s%s", pv_escape(text, sizeof text, pv_str(p, p->source_format)),
		p->finished ? "" : p->live ? ", still running" : ", not finished");
	header_segments(out, p);
	fputc('\n', out);
	/* What the source does not say (a gperftools or heap profile has no
	 * duration, a heap profile no threads) is left out. */
	const char *psep = " ";
	fprintf(out, "%sprofile:%s", bold_on(o), attr_off(o));
	if (p->duration_ns > 0 || p->timed) {
		pv_format_duration(dur, sizeof dur, p->duration_ns);
		fprintf(out, " %s", dur);
		psep = ", ";
	}
	if (vname) {
		calltree_value_str(t, total_value, cpu, sizeof cpu);
		fprintf(out, "%s%s %s", psep, pv_value_label(vname), cpu);
		if (pv_value_is_cpu(vname))
			put_system_time(out, p, total_value);
	}
	fprintf(out, "%s%" PRId64 " samples", vname ? " in " : psep, t->samples);
	period_note(out, p);
	size_t nthreads = shown_threads(p, o->pid_filter != NULL, o->tid_filter != NULL);
	if (p->nprocesses > 1) {
		/* the processes of the threads counted */
		bool *seen = calloc(p->nprocesses, sizeof *seen);
		size_t nproc = 0;
		for (size_t i = 0; seen && i < p->nsamples; i++) {
			const struct pv_sample *s = &p->samples[i];
			uint32_t pr = s->thread < p->nthreads ? p->threads[s->thread].process : PV_NONE;
			if ((!p->diff || !(s->flags & PV_SAMPLE_BASE)) && pr < p->nprocesses && !seen[pr]) {
				seen[pr] = true;
				nproc++;
			}
		}
		free(seen);
		/* the run's own count, the processes without samples too,
		 * when the view is the whole run */
		if (p->run_processes >= nproc && !o->pid_filter && !o->tid_filter && !p->diff) {
			fprintf(out, ", %" PRIu32 " processes (%zu with samples", p->run_processes, nproc);
			header_unprofiled(out, p);
			fputc(')', out);
		} else {
			fprintf(out, ", %zu process%s", nproc, nproc == 1 ? "" : "es");
		}
	} else if ((p->run_processes > 1 || p->nunprofiled) && !o->pid_filter && !o->tid_filter &&
		   !p->diff) {
		fprintf(out, ", %" PRIu32 " process%s (%d with samples", p->run_processes,
			p->run_processes == 1 ? "" : "es", t->samples > 0);
		header_unprofiled(out, p);
		fputc(')', out);
	}
	if (nthreads || o->tid_filter || o->pid_filter)
		fprintf(out, ", %zu thread%s", nthreads, nthreads == 1 ? "" : "s");
	if (o->pid_filter)
		fprintf(out, " (pid %s)", pv_escape(text, sizeof text, o->pid_filter));
	if (o->tid_filter)
		fprintf(out, " (%s)", pv_escape(text, sizeof text, o->tid_filter));
	fprintf(out, "\n");
	if (t->dn && rc->diff) {
		struct pv_diff_scale sc;
		char b[32];
		pv_diff_scale_of(t, rc->diff, &sc);
		unsigned rb = p->diff_base_runs ? p->diff_base_runs : 1;
		unsigned rn = p->diff_new_runs ? p->diff_new_runs : 1;
		const char *sep = "";
		fprintf(out, "%sbase:%s ", bold_on(o), attr_off(o));
		if (p->diff_base_duration_ns > 0) {
			pv_format_duration(dur, sizeof dur, p->diff_base_duration_ns);
			fprintf(out, "%s", dur);
			sep = ", ";
		}
		if (vname) {
			calltree_value_str(t, t->dn[0].value, b, sizeof b);
			fprintf(out, "%s%s %s", sep, pv_value_label(vname), b);
		}
		fprintf(out, "%sin %" PRId64 " samples", sep[0] || vname ? " " : "", t->dn[0].count);
		if (rb > 1 || rn > 1)
			fprintf(out, ", %u profile%s against %u new", rb, rb == 1 ? "" : "s", rn);
		fprintf(out, "\n");
		fprintf(out, "%sdiff:%s values per run", bold_on(o), attr_off(o));
		if (rc->diff->normalize && !sc.one_sided)
			fprintf(out, ", the base scaled by %.4g to the new total", sc.base * p->diff_base_runs);
		if (sc.one_sided)
			fprintf(out, "; the %s side has no samples: no change can be judged\n",
				t->dn[0].count > 0 ? "new" : "base");
		else
			fprintf(out, "; worse/better: q <= %g (false discovery rate, Poisson sampling noise)\n",
				sc.fdr);
	}
	if (rc->time_spans && rc->time_spans[0])
		fprintf(out, "%stime:%s %s; %" PRId64 " samples in %s\n", bold_on(o), attr_off(o),
			rc->time_spans, rc->time_samples, strchr(rc->time_spans, ',') ? "them" : "it");
	if (rc->filters && rc->filters[0])
		fprintf(out, "%sfilters:%s %s; kept %" PRId64 " of %" PRId64 " samples (%.1f%%)\n",
			bold_on(o), attr_off(o), pv_escape(text, sizeof text, rc->filters), rc->filter_kept,
			rc->filter_total,
			pv_percent(rc->filter_kept, rc->filter_total));
	if (p->lost || p->truncated || p->dropped_bytes) {
		struct warn_line w = { out, " " };
		fprintf(out, "%swarning:%s", bold_on(o), attr_off(o));
		pv_input_problems(p, true, warn_item, &w);
		fprintf(out, "\n");
	}
	{
		char say[1024];
		if (report_own_allocator(p, say, sizeof say))
			fprintf(out, "%swarning:%s %s\n", bold_on(o), attr_off(o), say);
		if (report_since_attach(p, say, sizeof say))
			fprintf(out, "%snote:%s %s\n", bold_on(o), attr_off(o), say);
		if (report_unsampled(p, say, sizeof say))
			fprintf(out, "%swarning:%s %s\n", bold_on(o), attr_off(o), say);
		if (report_collector_cpu(p, say, sizeof say))
			fprintf(out, "%scollector:%s %s\n", bold_on(o), attr_off(o), say);
		if (report_collector(p, say, sizeof say))
			fprintf(out, "%scollector:%s %s\n", bold_on(o), attr_off(o), say);
		if (report_python_read(p, say, sizeof say))
			fprintf(out, "%snote:%s %s\n", bold_on(o), attr_off(o), say);
		if (report_python_unread(p, say, sizeof say))
			fprintf(out, "%swarning:%s %s\n", bold_on(o), attr_off(o), say);
	}
	fprintf(out, "\n");
}
