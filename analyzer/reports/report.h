/* report.h - every report behind one interface
 *
 * A report is a kind in one table (what it is called, what it needs of
 * the view, whether it can show a comparison) and a writer that formats
 * what it is given.  The front ends (the command, the browser's exports)
 * fill one set of options, run the view (pipeline.h), make a context of
 * its result, let pv_report_prepare do the analysis the kind's writer
 * needs once (a comparison's tests, the labels of what is in force), and
 * call pv_report_write.  The writers count nothing again.
 */
#ifndef PROFVIEW_REPORT_H
#define PROFVIEW_REPORT_H

#include "calltree.h"
#include "diff.h"
#include "graph.h"
#include "pipeline.h"
#include "pprof-write.h"

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>

enum pv_report_kind {
	PV_REPORT_TREE,
	PV_REPORT_FLAT,
	PV_REPORT_FOLDED,
	PV_REPORT_PPROF,
	PV_REPORT_SVG,
	PV_REPORT_FLAME,
	PV_REPORT_TIMELINE,
	PV_REPORT_SPEEDSCOPE,
	PV_REPORT_NKINDS
};

/* What a kind needs of the view. */
enum pv_report_needs {
	PV_NEEDS_TREE,         /* the whole call tree, nodes and all */
	PV_NEEDS_PATHS,        /* the tree's distinct stacks alone (ct_options.paths_only) */
	PV_NEEDS_PROFILE,      /* the view's profile, no tree */
};

/* What of a comparison a kind shows, tested once before it writes. */
enum pv_report_compares {
	PV_COMPARES_NOT,       /* one profile only */
	PV_COMPARES_AS_IS,     /* writes both sides, tests nothing */
	PV_COMPARES_TREE,      /* every node's cumulative value (pv_diff_tree) */
	PV_COMPARES_FLAT,      /* every flat row's, self and cumulative (pv_diff_flat) */
};

enum report_sort { SORT_COUNT, SORT_CUM, SORT_NAME };

/* What is asked of a report, the same for every kind: each writer reads
 * what concerns it. */
struct pv_report_options {
	double noisefloor;     /* hide nodes within K times the noise of their parent's samples; 0 off */
	int64_t mincount;      /* hide nodes with fewer samples; 0 off */
	int maxdepth;          /* hide nodes deeper than this; 0 off */
	enum report_sort sort; /* flat view order */
	bool quiet_hidden;     /* text tree: no "[N more below ...]" lines */
	bool color;            /* text: ANSI attributes */
	/* Flat and tree as a table with this field separator and no padding,
	 * or NULL. */
	const char *field_sep;
	/* A comparison: show only the significant rows (and, in the tree, the
	 * nodes above them). */
	bool significant;
	bool icicle;           /* the flame graph with its root on top */
	struct graph_options graph; /* the call graph's pruning */
	/* The timeline: colour only the samples with a frame whose name (as
	 * shown) matches, grey the others; NULL: colour all.  highlight_text
	 * is the expression as given, for the subtitle. */
	const regex_t *highlight;
	const char *highlight_text;
	const char *tid_filter; /* the --tid and --pid texts, for the header */
	const char *pid_filter;
};

/* The defaults: no pruning but the call graph's (graph.h). */
#define PV_REPORT_OPTIONS_DEFAULT                                                                   \
	{ .graph = { GRAPH_DEFAULT_NODECOUNT, GRAPH_DEFAULT_NODEFRACTION, GRAPH_DEFAULT_EDGEFRACTION } }

/* What every writer receives. */
struct pv_report_ctx {
	const struct pv_report_options *o;
	/* The view asked for (threads, granularity, --sample-index as given);
	 * NULL: the defaults. */
	const struct pv_view *view;
	struct pv_profile *p;  /* the view's profile */
	struct calltree *t;    /* the view's tree; NULL for PV_NEEDS_PROFILE */
	/* A comparison's test (p->diff); NULL: one profile, or the defaults
	 * of a tree that has a base. */
	const struct pv_diff_options *diff;
	const char *output;    /* the file written, NULL: standard output */
	const char *input;     /* the first profile's name, for a title */
	/* What chose the samples: the steps in force ("focus=a hide=b") and
	 * the samples before and after them; the --time spans, resolved, the
	 * samples in them and their extent in ns from the start (to <= from:
	 * the whole run).  NULL: none. */
	const char *filters;
	int64_t filter_total, filter_kept;
	const char *time_spans;
	int64_t time_samples;
	int64_t span_from, span_to;

	/* Made by pv_report_prepare. */
	/* Of a kind that shows the samples in time order: the run's length
	 * in ns (pv_run_length). */
	int64_t run_length;
	/* --pprof: the comparison's scales, the default sample type. */
	struct pprof_write_options pprof;
	/* A comparison of kind PV_COMPARES_TREE: every node's cell. */
	struct pv_diff_cell *cells;
	/* PV_COMPARES_FLAT: the flat rows and each row's cells, self and
	 * cumulative (a family each). */
	struct ct_flat_row *rows;
	size_t nrows;
	struct pv_diff_cell *self, *cum;
	/* The pictures' legend: the spans and the filters ("time 1.000-2.000
	 * s of 6.700 s, 412 samples; focus=f"), or NULL for nothing. */
	const char *label;
	char label_buf[1536];
	/* The title of a file that names its program (speedscope): the
	 * program's name, else the first profile's, and what chose the
	 * samples. */
	char title[1024];
};

struct pv_report_kind_info {
	const char *name;      /* as the option that asks for it: "tree" */
	enum pv_report_needs needs;
	bool time_order;       /* shows the samples in the order they were taken */
	bool tables;           /* takes --field-separator and --significant */
	enum pv_report_compares compares;
	/* With a comparison when compares is PV_COMPARES_NOT: the usage error
	 * that says so. */
	const char *one_profile;
	/* Write the report of c to out (stdio-buffered: the caller checks
	 * ferror).  0, or -1 after reporting the error. */
	int (*write)(FILE *out, const struct pv_report_ctx *c);
};

const struct pv_report_kind_info *pv_report_kind(enum pv_report_kind k);

/* c for the view's result r (borrowed: it outlives c) with options o,
 * everything else empty. */
void pv_report_ctx_init(struct pv_report_ctx *c, const struct pv_report_options *o, const struct pv_result *r);
/* Do what kind's writer shares, once: the labels, a comparison's tests
 * (of c->t, when it has a base).  0, or -1 after reporting the error. */
int pv_report_prepare(struct pv_report_ctx *c, enum pv_report_kind kind);
int pv_report_write(FILE *out, enum pv_report_kind kind, const struct pv_report_ctx *c);
void pv_report_ctx_free(struct pv_report_ctx *c);

/* The writers, each in a file of its own. */
int report_folded(FILE *out, const struct pv_report_ctx *c);
int report_pprof(FILE *out, const struct pv_report_ctx *c);
int report_svg(FILE *out, const struct pv_report_ctx *c);
int report_flame(FILE *out, const struct pv_report_ctx *c);
int report_timeline(FILE *out, const struct pv_report_ctx *c);
/* The timeline of a heap profile (pv_profile_has_lifetimes). */
int report_heapline(FILE *out, const struct pv_report_ctx *c);
int report_speedscope(FILE *out, const struct pv_report_ctx *c);

#endif
