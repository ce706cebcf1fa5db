/* report-text.h - text reports over a call tree */
#ifndef PROFVIEW_REPORT_TEXT_H
#define PROFVIEW_REPORT_TEXT_H

#include "report.h"

#include <stdio.h>

/* The tree's indentation grows down to this depth; a deeper line is
 * indented one step more and starts with its depth ("[+70] name").  Past
 * it, a call chain without branches is shown by its first and last
 * REPORT_CHAIN_ENDS frames and one line for the frames between: a stack
 * tens of thousands of frames deep prints a few dozen lines, not a number
 * of bytes that grows with the square of its depth. */
#define REPORT_INDENT_MAX 64
#define REPORT_CHAIN_ENDS 16

/* The attributes of a text report's emphasis, "" without colour. */
static inline const char *dim_on(const struct pv_report_options *o)
{
	return o->color ? "\033[2m" : "";
}

static inline const char *bold_on(const struct pv_report_options *o)
{
	return o->color ? "\033[1m" : "";
}

static inline const char *attr_off(const struct pv_report_options *o)
{
	return o->color ? "\033[0m" : "";
}

/* The header of the text reports: the profile, its totals, what is in
 * force (report-header.c). */
void report_header(FILE *out, const struct pv_report_ctx *c);
int report_tree(FILE *out, const struct pv_report_ctx *c);
int report_flat(FILE *out, const struct pv_report_ctx *c);
/* The flat and tree reports as tables (report-table.c): what a comparison
 * and --field-separator show. */
int report_table_flat(FILE *out, const struct pv_report_ctx *c);
int report_table_tree(FILE *out, const struct pv_report_ctx *c);

#endif
