/* fuzz-pipeline.c - libFuzzer target for the whole way from bytes to
 * reports: any input is read as profview reads a file (its format told by
 * its bytes, gzip decompressed, within a memory budget), then every report
 * is written of it into memory (tree, flat, tables, folded, flame graph,
 * timeline, speedscope, pprof; of the call graph its nodes and edges, not
 * graphviz's layout), as one profile and, when it is a comparison, as one.
 * A crash, a leak or undefined behaviour between the readers and the
 * reports ends the run. */
#include "calltree.h"
#include "diff.h"
#include "error.h"
#include "graph.h"
#include "merge.h"
#include "pipeline.h"
#include "pprof-write.h"
#include "read.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>

static void quiet(enum pv_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

/* One report of the view's result r, through the reports' table. */
static void report(FILE *out, enum pv_report_kind k, const struct pv_report_options *o, const struct pv_result *r,
		   const struct pv_diff_options *diff)
{
	struct pv_report_ctx c;

	pv_report_ctx_init(&c, o, r);
	c.diff = diff;
	if (pv_report_prepare(&c, k) == 0)
		pv_report_write(out, k, &c);
	pv_report_ctx_free(&c);
}

/* The reports of the whole tree. */
static void tree_reports(FILE *out, const struct pv_result *r, const struct pv_diff_options *diff)
{
	struct pv_report_options ro = PV_REPORT_OPTIONS_DEFAULT, table = PV_REPORT_OPTIONS_DEFAULT;
	struct pv_report_options fo = PV_REPORT_OPTIONS_DEFAULT;

	ro.noisefloor = 1;
	table.field_sep = ";";
	report(out, PV_REPORT_TREE, &ro, r, diff);
	report(out, PV_REPORT_TREE, &table, r, diff);
	if (!r->t->dn)
		report(out, PV_REPORT_FOLDED, &ro, r, diff);
	report(out, PV_REPORT_FLAME, &fo, r, diff);
	fo.icicle = true;
	fo.maxdepth = 3;
	report(out, PV_REPORT_FLAME, &fo, r, diff);
}

/* The reports of the distinct stacks (paths_only). */
static void path_reports(FILE *out, const struct pv_result *r, const struct pv_diff_options *diff)
{
	struct pv_report_options ro = PV_REPORT_OPTIONS_DEFAULT, table = PV_REPORT_OPTIONS_DEFAULT;
	struct calltree *t = r->t;

	table.field_sep = ",";
	report(out, PV_REPORT_FLAT, &ro, r, diff);
	report(out, PV_REPORT_FLAT, &table, r, diff);
	/* The call graph without graphviz: its pango plugin reads a font
	 * name of an earlier graph after that graph is freed (a fault of
	 * graphviz 2.42's, in every process that lays out two graphs). */
	graph_free(graph_build(t, &ro.graph));
	if (t->p->timed && !t->dn)
		report(out, PV_REPORT_TIMELINE, &ro, r, diff);
	if (!t->dn)
		report(out, PV_REPORT_SPEEDSCOPE, &ro, r, diff);
}

static void reports(const struct pv_profile *p)
{
	struct pv_diff_options dopt = { .fdr = PV_DIFF_DEFAULT_FDR, .normalize = true };
	const struct pv_diff_options *diff = p->diff ? &dopt : NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out)
		return;
	for (int paths = 0; paths < 2; paths++) {
		struct pv_view v = { .paths_only = paths, .granularity = CT_FUNCTIONS };
		struct pv_result r;
		if (pv_view_run_copy(p, &v, true, &r) < 0)
			continue;
		if (paths)
			path_reports(out, &r, diff);
		else
			tree_reports(out, &r, diff);
		pv_result_free(&r);
	}
	/* pprof_write may add strings: a copy */
	struct pv_profile *c = pv_profile_copy(p);
	if (c) {
		pprof_write(out, "fuzz", c, NULL);
		pv_profile_free(c);
	}
	fclose(out);
	free(buf);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct pv_read_options ro = { .max_input = 16 << 20 };
	struct pv_profile *p;

	pv_error_set_sink(quiet);
	p = pv_read_buffer(data, size, "fuzz", &ro);
	if (!p)
		return 0;
	if (pv_profile_validate(p, "fuzz") != 0)
		abort();
	/* as profview gives the report a budget: the reading's again */
	pv_budget_set("the report", "making it", pv_read_budget(size, ro.max_input));
	reports(p);
	pv_budget_set(NULL, NULL, 0);
	pv_profile_free(p);
	return 0;
}
