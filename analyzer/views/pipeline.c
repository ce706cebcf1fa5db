/* pipeline.c - from a symbolized profile to what a report shows (see
 * pipeline.h) */
#include "pipeline.h"
#include "error.h"
#include "merge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The type "PREFIX_samples" of p, or PV_NONE. */
static uint32_t samples_of(const struct pv_profile *p, const char *prefix, size_t len)
{
	char name[128];

	if (len + sizeof "_samples" > sizeof name)
		return PV_NONE;
	memcpy(name, prefix, len);
	strcpy(name + len, "_samples");
	return pv_find_value_type(p, name);
}

int64_t pv_count_samples(const struct pv_profile *p, const char *index)
{
	uint32_t v = PV_NONE;
	int64_t n = 0;

	if (index) {
		char *end;
		unsigned long i = strtoul(index, &end, 10);
		const char *name = *index && !*end && i < p->nvalues ? pv_str(p, p->sample_types[i].type) : index;
		const char *us = strchr(name, '_');

		v = samples_of(p, name, strlen(name));
		if (v == PV_NONE && us)
			v = samples_of(p, name, (size_t)(us - name));
	}
	if (v == PV_NONE)
		v = pv_find_value_type(p, "samples");

	if (v == PV_NONE && p->nvalues)
		v = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		n += v != PV_NONE ? p->samples[i].values[v] : 1;
	return n;
}

void pv_result_free(struct pv_result *r)
{
	if (!r)
		return;
	calltree_free(r->t);
	if (r->owned)
		pv_profile_free(r->p);
	memset(r, 0, sizeof *r);
}

/* Appends a step's label to the description. */
static void describe(struct pv_result *r, const char *label)
{
	size_t len = strlen(r->steps);

	if (label && label[0] && len < sizeof r->steps - 1)
		snprintf(r->steps + len, sizeof r->steps - len, "%s%s", len ? " " : "", label);
}

/* The callers of the functions matching re: the stacks upside down (once:
 * *reversed says whether they already are), then cut above the outermost
 * match, which becomes their root.  0 or -1. */
static int callers_of(struct pv_profile *p, const char *re, bool *reversed)
{
	struct pv_filters g = { 0 };
	const char *err;
	int r;

	if (!*reversed && pv_reverse_stacks(p) < 0)
		return -1;
	*reversed = true;
	if (pv_filters_add(&g, PV_FILTER_SHOW_FROM, re, &err) < 0)
		return err ? pv_error("invalid expression '%s': %s", re, err) : pv_oom();
	r = pv_filters_apply(p, &g, NULL);
	pv_filters_free(&g);
	return r;
}

static bool parse_end(const char *s, size_t n, double *v, bool *pct, bool *has)
{
	char buf[64], *end;

	*has = n > 0;
	*pct = false;
	*v = 0;
	if (!n)
		return true;
	if (n >= sizeof buf)
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (buf[n - 1] == '%') {
		*pct = true;
		buf[--n] = '\0';
	}
	if (!n)
		return false;
	errno = 0;
	*v = strtod(buf, &end);
	return !errno && *end == '\0' && *v >= 0 && *v < 1e9 && (!*pct || *v <= 100);
}

bool pv_span_parse(const char *s, struct pv_span *out, const char **why)
{
	const char *comma = strchr(s, ',');

	*why = "FROM,TO: seconds from the start (1.5,3) or shares of the run (10%,20%); either may be left out";
	if (!comma || strchr(comma + 1, ','))
		return false;
	if (!parse_end(s, (size_t)(comma - s), &out->from, &out->from_pct, &out->has_from) ||
	    !parse_end(comma + 1, strlen(comma + 1), &out->to, &out->to_pct, &out->has_to))
		return false;
	if (out->has_from && out->has_to && out->from_pct == out->to_pct && out->from >= out->to) {
		*why = "FROM must be before TO";
		return false;
	}
	return true;
}

void pv_span_resolve(const struct pv_span *s, int64_t len, int64_t *from, int64_t *to)
{
	double a = !s->has_from ? 0 : s->from_pct ? s->from / 100 * (double)len : s->from * 1e9;
	double b = !s->has_to ? (double)INT64_MAX : s->to_pct ? s->to / 100 * (double)len : s->to * 1e9;

	*from = (int64_t)a;
	*to = b >= (double)INT64_MAX ? INT64_MAX : (int64_t)b;
}

int64_t pv_run_length(const struct pv_profile *p)
{
	int64_t end = p->duration_ns > 0 ? p->duration_ns : 0;

	for (size_t i = 0; i < p->nsamples; i++)
		if (p->samples[i].time_ns > end)
			end = p->samples[i].time_ns;
	return end;
}

int64_t pv_block_end(const struct pv_profile *p, const struct pv_sample *s, int64_t len)
{
	uint32_t pr;

	if (s->end_ns != 0 || p->nprocesses < 2 || s->thread == PV_NONE || s->thread >= p->nthreads)
		return s->end_ns;
	pr = p->threads[s->thread].process;
	if (pr == PV_NONE || pr >= p->nprocesses || p->processes[pr].end_ns <= s->time_ns ||
	    p->processes[pr].end_ns >= len)
		return 0;
	return p->processes[pr].end_ns;
}

/* Is sample s in one of the spans ends[0 .. n)?  Taken in it; a heap
 * block (lifetimes), allocated in it and not freed before its end. */
static bool in_spans(const struct pv_profile *p, const struct pv_sample *s, int64_t (*ends)[2],
		     size_t n, int64_t len, bool lifetimes)
{
	int64_t t = s->time_ns, end = lifetimes ? pv_block_end(p, s, len) : 0;

	for (size_t k = 0; k < n; k++) {
		/* a span up to the end takes the last sample at the end too */
		bool in = (t >= ends[k][0] && t < ends[k][1]) || (t == ends[k][1] && ends[k][1] >= len);
		if (in && (end == 0 || end >= ends[k][1]))
			return true;
	}
	return false;
}

/* The heap blocks kept by spans are those in use at a span's end: what
 * the values of "in use" count is that (not the end of the run). */
static void in_use_at_end(struct pv_profile *p)
{
	static const char *const pairs[][2] = {
		{ "samples", "alloc_samples" }, { "inuse_objects", "alloc_objects" },
		{ "inuse_space", "alloc_space" },
	};

	for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
		uint32_t to = pv_find_value_type(p, pairs[k][0]), from = pv_find_value_type(p, pairs[k][1]);
		if (to == PV_NONE || from == PV_NONE)
			continue;
		for (size_t i = 0; i < p->nsamples; i++) {
			p->samples[i].values[to] = p->samples[i].values[from];
			p->samples[i].var[to] = p->samples[i].var[from];
		}
	}
}

/* Keep the samples taken in any of the spans (heap blocks: allocated in
 * one and still in use at its end); 0, or -1 with an error. */
static int keep_spans(struct pv_profile *p, const struct pv_view *v, struct pv_result *r)
{
	int64_t len = pv_run_length(p), (*ends)[2];
	size_t kept = 0, used = 0;
	bool lifetimes = pv_profile_has_lifetimes(p);

	if (!p->timed)
		return pv_error("--time: this profile does not say when its samples were taken (only collect-timer, collect-heap and collect-gdb traces do)");
	if (!(ends = calloc(v->nspans, sizeof *ends)))
		return pv_oom();
	for (size_t k = 0; k < v->nspans; k++) {
		pv_span_resolve(&v->spans[k], len, &ends[k][0], &ends[k][1]);
		if (ends[k][0] >= ends[k][1]) {
			double a = (double)ends[k][0] / 1e9, b = (double)ends[k][1] / 1e9;
			free(ends);
			return pv_error("--time: the span %.3f-%.3f s of this %.3f s run is empty: FROM must be before TO",
					a, b, (double)len / 1e9);
		}
		/* A span wholly after the end is as empty as one that ends
		 * before it starts. */
		if (ends[k][0] > len) {
			double a = (double)ends[k][0] / 1e9, b = (double)ends[k][1] / 1e9;
			free(ends);
			if (!v->spans[k].has_to || b >= (double)INT64_MAX / 1e9)
				return pv_error("--time: the span from %.3f s starts after this %.3f s run ends",
						a, (double)len / 1e9);
			return pv_error("--time: the span %.3f-%.3f s starts after this %.3f s run ends",
					a, b, (double)len / 1e9);
		}
		if (k == 0 || ends[k][0] < r->span_from)
			r->span_from = ends[k][0];
		if (k == 0 || (ends[k][1] < len ? ends[k][1] : len) > r->span_to)
			r->span_to = ends[k][1] < len ? ends[k][1] : len;
		if (used < sizeof r->spans - 1)
			used += (size_t)snprintf(r->spans + used, sizeof r->spans - used, "%s%.3f-%.3f s",
						 k ? ", " : "", (double)ends[k][0] / 1e9,
						 (double)(ends[k][1] < len ? ends[k][1] : len) / 1e9);
	}
	if (used < sizeof r->spans - 1)
		snprintf(r->spans + used, sizeof r->spans - used, " of %.3f s", (double)len / 1e9);
	for (size_t i = 0; i < p->nsamples; i++)
		if (in_spans(p, &p->samples[i], ends, v->nspans, len, lifetimes))
			p->samples[kept++] = p->samples[i];
	p->nsamples = kept;
	free(ends);
	if (lifetimes)
		in_use_at_end(p);
	return 0;
}

/* The CPU time of the samples of p (not a comparison's base), all and of
 * those in the kernel (PV_SAMPLE_KERNEL), in its "cpu" value (else its
 * first in nanoseconds, else in samples). */
static void cpu_weights(const struct pv_profile *p, double *all, double *kernel)
{
	uint32_t v = pv_find_value_type(p, "cpu");

	for (uint32_t i = 0; i < p->nvalues && v == PV_NONE; i++)
		if (strcmp(pv_str(p, p->sample_types[i].unit), "nanoseconds") == 0)
			v = i;
	if (v == PV_NONE)
		v = pv_find_value_type(p, "samples");
	*all = *kernel = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pv_sample *s = &p->samples[i];
		double w = v != PV_NONE ? (double)s->values[v] : 1;
		if (s->flags & PV_SAMPLE_BASE)
			continue;
		*all += w;
		if (s->flags & PV_SAMPLE_KERNEL)
			*kernel += w;
	}
}

/* The system time of the samples kept, from the CPU time of all and of
 * the kernel's before (all0, kernel0) and after. */
static void keep_system_time(struct pv_profile *p, double all0, double kernel0)
{
	double all, kernel, f;

	if (p->system_cpu_ns <= 0)
		return;
	cpu_weights(p, &all, &kernel);
	if (all == all0 && kernel == kernel0)
		return;
	f = kernel0 > 0 ? kernel / kernel0 : all0 > 0 ? all / all0 : 0;
	p->system_cpu_ns = (int64_t)((double)p->system_cpu_ns * (f < 1 ? f : 1) + 0.5);
}

static uint64_t count_flagged_truncated(const struct pv_profile *p)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->nsamples; i++)
		n += (p->samples[i].flags & PV_SAMPLE_TRUNCATED) != 0;
	return n;
}

/* The warnings of the samples shown, after a time span, threads or
 * processes kept some (flagged0: the incomplete stacks flagged before):
 * the incomplete stacks are those still here (as filters count them),
 * and the lost samples, which belong to no time nor thread, are said to
 * be the whole trace's. */
static void keep_warnings(struct pv_profile *p, uint64_t flagged0)
{
	uint64_t flagged = count_flagged_truncated(p);

	if (p->truncated == flagged0)
		p->truncated = flagged;
	else if (p->truncated > p->nsamples)
		p->truncated = p->nsamples;
	p->lost_whole = p->lost > 0;
}

/* The view on p, which r->p already is. */
static int run(struct pv_profile *p, const struct pv_view *v, bool tree, struct pv_result *r)
{
	bool reversed = false;
	char buf[512];
	double all0, kernel0;

	uint64_t flagged0 = count_flagged_truncated(p);

	cpu_weights(p, &all0, &kernel0);
	if (v->nspans && keep_spans(p, v, r) < 0)
		goto fail;
	if (v->ntids)
		pv_keep_threads(p, v->tids, v->ntids);
	if (v->npids)
		pv_keep_processes(p, v->pids, v->npids);
	if (v->nspans || v->ntids || v->npids)
		keep_warnings(p, flagged0);
	r->before = pv_count_samples(p, v->sample_index);
	r->in_spans = v->nspans ? r->before : 0;
	for (size_t i = 0; i < v->nsteps; i++) {
		const struct pv_step *s = &v->steps[i];
		const char *label = s->label;

		switch (s->kind) {
		case PV_STEP_FILTERS: {
			struct pv_filter_stats st;
			if (!s->filters || !pv_filters_any(s->filters))
				break;
			if (pv_filters_apply(p, s->filters, &st) < 0)
				goto fail;
			if (s->warn)
				pv_filters_warn(s->filters, &st);
			if (!label)
				label = pv_filters_describe(s->filters, buf, sizeof buf);
			break;
		}
		case PV_STEP_CALLERS:
			if (callers_of(p, s->re, &reversed) < 0)
				goto fail;
			if (!label) {
				snprintf(buf, sizeof buf, "callers=%s", s->re);
				label = buf;
			}
			break;
		case PV_STEP_REVERSE:
			if (pv_reverse_stacks(p) < 0)
				goto fail;
			reversed = !reversed;
			if (!label)
				label = "reverse";
			break;
		}
		describe(r, label);
	}
	keep_system_time(p, all0, kernel0);
	if (v->hide_kernel) {
		if (pv_hide_kernel(p) < 0)
			goto fail;
		describe(r, "hide-kernel");
	}
	if (v->fold_recursion && tree)
		describe(r, "fold-recursion");
	r->after = pv_count_samples(p, v->sample_index);
	/* Without inlines: the profile itself when it is what is shown
	 * (--pprof), else the tree. */
	if (v->noinlines && !tree)
		pv_drop_inlines(p, reversed);
	if (tree) {
		struct ct_options co = { .granularity = v->granularity, .by_thread = v->by_thread,
					 .by_process = v->by_process, .noinlines = v->noinlines, .reversed = reversed,
					 .full_names = v->full_names, .fold_recursion = v->fold_recursion,
					 .sample_index = v->sample_index, .paths_only = v->paths_only };
		r->t = calltree_build(p, &co);
		if (!r->t)
			goto fail;
	}
	return 0;
fail:
	pv_result_free(r);
	return -1;
}

int pv_view_run(struct pv_profile *p, const struct pv_view *v, bool tree, struct pv_result *r)
{
	memset(r, 0, sizeof *r);
	r->p = p;
	return run(p, v, tree, r);
}

int pv_view_run_copy(const struct pv_profile *source, const struct pv_view *v, bool tree,
		     struct pv_result *r)
{
	memset(r, 0, sizeof *r);
	if (!v->ntids && !v->npids && !v->nsteps && !v->nspans && !v->hide_kernel && (tree || !v->noinlines)) {
		/* nothing changes it: the source itself, read only */
		r->p = (struct pv_profile *)source;
		return run(r->p, v, tree, r);
	}
	r->p = pv_profile_copy(source);
	if (!r->p) {
		pv_oom();
		return -1;
	}
	r->owned = true;
	return run(r->p, v, tree, r);
}
