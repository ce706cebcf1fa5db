/* report-text.h - text reports over a call tree */
#ifndef PROFVIEW_REPORT_TEXT_H
#define PROFVIEW_REPORT_TEXT_H

#include "calltree.h"
#include "diff.h"

#include <stdio.h>

enum report_sort { SORT_COUNT, SORT_CUM, SORT_NAME };

/* The tree's indentation grows down to this depth; a deeper line is
 * indented one step more and starts with its depth ("[+70] name").  Past
 * it, a call chain without branches is shown by its first and last
 * REPORT_CHAIN_ENDS frames and one line for the frames between: a stack
 * tens of thousands of frames deep prints a few dozen lines, not a number
 * of bytes that grows with the square of its depth. */
#define REPORT_INDENT_MAX 64
#define REPORT_CHAIN_ENDS 16

struct report_options {
	double noisefloor;     /* hide nodes with n <= K * sqrt(parent n); 0 off */
	int64_t mincount;      /* hide nodes with fewer samples; 0 off */
	int maxdepth;          /* hide nodes deeper than this; 0 off */
	enum report_sort sort; /* flat view order */
	bool color;            /* ANSI attributes */
	bool quiet_hidden;     /* no "[N more below ...]" lines */
	const char *tid_filter; /* the --tid text, for the header */
	const char *pid_filter; /* the --pid text, for the header */
	const char *filters;   /* the filters in force ("focus=a hide=b"), or NULL */
	int64_t filter_total, filter_kept; /* samples before and after them */
	/* A table with this field separator and no padding (report_table_*),
	 * or NULL. */
	const char *field_sep;
	/* --time: the spans shown, resolved, and the samples in them */
	const char *time_spans;
	int64_t time_samples;
	/* A comparison's options (the tree has a base: t->dn); show only the
	 * significant rows (and, in the tree, the nodes above them). */
	const struct pv_diff_options *diff;
	bool significant;
};

/* Is more than a hundredth of the CPU time the threads used (by the
 * collector's own count) in no sample?  Then the sentence that says so,
 * the same for every front end, into buf. */
bool report_unsampled(const struct pv_profile *p, char *buf, size_t n);
/* One line on the collector's own work left out of the profile
 * (pv_profile.collector_samples) into buf; false when there was none. */
bool report_collector(const struct pv_profile *p, char *buf, size_t n);

void report_header(FILE *out, const struct calltree *t, const struct report_options *o);
int report_tree(FILE *out, const struct calltree *t, const struct report_options *o);
int report_flat(FILE *out, struct calltree *t, const struct report_options *o);
/* The flat and tree reports as tables (report-table.c): what a comparison
 * and --field-separator show. */
int report_table_flat(FILE *out, struct calltree *t, const struct report_options *o);
int report_table_tree(FILE *out, const struct calltree *t, const struct report_options *o);
int report_folded(FILE *out, const struct calltree *t, const struct report_options *o);

#endif
