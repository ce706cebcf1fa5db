/* report.c - the table of reports, and what their writers share */
#include "report.h"
#include "report-text.h"
#include "error.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The flat and tree reports: a table for a comparison or with
 * --field-separator, else text with its header. */
static int write_tree(FILE *out, const struct pv_report_ctx *c)
{
	if (c->o->field_sep || c->t->dn) {
		if (!c->o->field_sep)
			report_header(out, c);
		return report_table_tree(out, c);
	}
	report_header(out, c);
	return report_tree(out, c);
}

static int write_flat(FILE *out, const struct pv_report_ctx *c)
{
	if (c->o->field_sep || c->t->dn) {
		if (!c->o->field_sep)
			report_header(out, c);
		return report_table_flat(out, c);
	}
	report_header(out, c);
	return report_flat(out, c);
}

/* A heap profile's timeline is the heap in use along the run. */
static int write_timeline(FILE *out, const struct pv_report_ctx *c)
{
	if (pv_profile_has_lifetimes(c->t->p))
		return report_heapline(out, c);
	return report_timeline(out, c);
}

static const struct pv_report_kind_info kinds[PV_REPORT_NKINDS] = {
	[PV_REPORT_TREE] = { .name = "tree", .needs = PV_NEEDS_TREE, .tables = true,
			     .compares = PV_COMPARES_TREE, .write = write_tree },
	[PV_REPORT_FLAT] = { .name = "flat", .needs = PV_NEEDS_PATHS, .tables = true,
			     .compares = PV_COMPARES_FLAT, .write = write_flat },
	[PV_REPORT_FOLDED] = { .name = "folded", .needs = PV_NEEDS_TREE, .compares = PV_COMPARES_AS_IS,
			       .write = report_folded },
	[PV_REPORT_PPROF] = { .name = "pprof", .needs = PV_NEEDS_PROFILE, .compares = PV_COMPARES_AS_IS,
			      .write = report_pprof },
	[PV_REPORT_SVG] = { .name = "svg", .needs = PV_NEEDS_PATHS, .compares = PV_COMPARES_FLAT,
			    .write = report_svg },
	[PV_REPORT_FLAME] = { .name = "flame", .needs = PV_NEEDS_TREE, .compares = PV_COMPARES_TREE,
			      .write = report_flame },
	[PV_REPORT_TIMELINE] = { .name = "timeline", .needs = PV_NEEDS_PATHS, .time_order = true,
				 .compares = PV_COMPARES_NOT,
				 .one_profile = "--timeline shows one profile, not a comparison: leave out --diff-base",
				 .write = write_timeline },
	[PV_REPORT_SPEEDSCOPE] = { .name = "speedscope", .needs = PV_NEEDS_PATHS, .time_order = true,
				   .compares = PV_COMPARES_NOT,
				   .one_profile = "--speedscope shows the samples of one profile: it cannot compare (--diff-base)",
				   .write = report_speedscope },
};

const struct pv_report_kind_info *pv_report_kind(enum pv_report_kind k)
{
	return &kinds[k];
}

void pv_report_ctx_init(struct pv_report_ctx *c, const struct pv_report_options *o, const struct pv_result *r)
{
	*c = (struct pv_report_ctx){ .o = o, .p = r->p, .t = r->t };
	if (r->spans[0]) {
		c->time_spans = r->spans;
		c->time_samples = r->in_spans;
	}
	if (r->steps[0]) {
		c->filters = r->steps;
		c->filter_total = r->before;
		c->filter_kept = r->after;
	}
	c->span_from = r->span_from;
	c->span_to = r->span_to;
}

/* What the pictures' legends say is in force: the time spans and the
 * filters, or NULL for nothing. */
static const char *picture_label(struct pv_report_ctx *c)
{
	bool filters = c->filters && c->filters[0];

	if (!c->time_spans || !c->time_spans[0])
		return c->filters;
	snprintf(c->label_buf, sizeof c->label_buf, "time %s, %" PRId64 " samples%s%s", c->time_spans,
		 c->time_samples, filters ? "; " : "", filters ? c->filters : "");
	return c->label_buf;
}

/* The program's name (else the first profile's) and the spans and
 * filters that chose the samples. */
static void title(struct pv_report_ctx *c)
{
	const char *prog = c->p ? pv_str(c->p, c->p->program) : "";
	const char *name = prog[0] ? prog : c->input ? c->input : "";
	size_t n = sizeof c->title;
	int len = snprintf(c->title, n, "%s", pv_base_name(name));

	if ((c->time_spans || c->filters) && len >= 0 && (size_t)len < n)
		snprintf(c->title + len, n - (size_t)len, " (%s%s%s%s)", c->time_spans ? "time " : "",
			 c->time_spans ? c->time_spans : "", c->time_spans && c->filters ? ", " : "",
			 c->filters ? c->filters : "");
}

/* --pprof's settings: the scales every report shows a comparison with,
 * and pprof's default sample type (what the reports weigh by, with
 * --sample-index or without), checked as the reports check it.  0,
 * or -1 after reporting the error. */
static int pprof_settings(struct pv_report_ctx *c)
{
	struct pv_profile *p = c->p;
	const char *sample_index = c->view ? c->view->sample_index : NULL;

	if (p->diff && c->diff) {
		struct ct_options co = { .sample_index = sample_index, .paths_only = true };
		struct calltree *t = calltree_build(p, &co);
		struct pv_diff_scale sc;
		if (!t)
			return -1;
		pv_diff_scale_of(t, c->diff, &sc);
		c->pprof.base_scale = sc.base;
		c->pprof.new_scale = sc.new_;
		calltree_free(t);
	}
	/* what profview weighs by, told or not (a heap trace's inuse_space,
	 * a CPU profile's time), so that pprof opens on what profview shows */
	struct ct_options co = { .sample_index = sample_index, .paths_only = true };
	struct calltree *t = calltree_build(p, &co);
	if (!t)
		return -1;
	c->pprof.default_sample_type = calltree_weight_name(t);
	if (pv_find_value_type(p, c->pprof.default_sample_type) == PV_NONE)
		c->pprof.default_sample_type = NULL;
	calltree_free(t);
	return 0;
}

/* --pprof: the whole profile, gzipped (never to a terminal). */
int report_pprof(FILE *out, const struct pv_report_ctx *c)
{
	if (!c->output && isatty(fileno(out)))
		return pv_error("not writing a binary profile to a terminal: give -o FILE or redirect the output");
	return pprof_write(out, c->output ? c->output : "standard output", c->p, &c->pprof);
}

int pv_report_prepare(struct pv_report_ctx *c, enum pv_report_kind kind)
{
	const struct pv_report_kind_info *k = &kinds[kind];

	c->label = picture_label(c);
	title(c);
	if (k->time_order && c->t)
		c->run_length = pv_run_length(c->t->p);
	if (kind == PV_REPORT_PPROF)
		return pprof_settings(c);
	if (!c->t || !c->t->dn)
		return 0;
	if (k->compares == PV_COMPARES_TREE)
		return (c->cells = pv_diff_tree(c->t, c->diff)) ? 0 : -1;
	if (k->compares == PV_COMPARES_FLAT) {
		if (!(c->rows = calltree_flat(c->t, &c->nrows)))
			return -1;
		return pv_diff_flat(c->t, c->rows, c->nrows, c->diff, &c->self, &c->cum);
	}
	return 0;
}

int pv_report_write(FILE *out, enum pv_report_kind kind, const struct pv_report_ctx *c)
{
	return kinds[kind].write(out, c);
}

void pv_report_ctx_free(struct pv_report_ctx *c)
{
	free(c->cells);
	free(c->rows);
	free(c->self);
	free(c->cum);
	c->cells = c->self = c->cum = NULL;
	c->rows = NULL;
}
