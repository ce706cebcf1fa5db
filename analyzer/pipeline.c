/* pipeline.c - from a symbolized profile to what a report shows (see
 * pipeline.h) */
#include "pipeline.h"
#include "error.h"
#include "merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int64_t pv_count_samples(const struct pv_profile *p)
{
	uint32_t v = pv_find_value_type(p, "samples");
	int64_t n = 0;

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

/* The view on p, which r->p already is. */
static int run(struct pv_profile *p, const struct pv_view *v, bool tree, struct pv_result *r)
{
	bool reversed = false;
	char buf[512];

	if (v->ntids)
		pv_keep_threads(p, v->tids, v->ntids);
	r->before = pv_count_samples(p);
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
	r->after = pv_count_samples(p);
	if (tree) {
		struct ct_options co = { .granularity = v->granularity, .by_thread = v->by_thread,
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
	if (!v->ntids && !v->nsteps) {
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
