/* report-text.c - the text reports: header, call tree and flat profile */
#include "report-text.h"
#include "error.h"
#include "escape.h"
#include "raw-cpu.h"
#include "units.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 4096

static const char *dim_on(const struct report_options *o)
{
	return o->color ? "\033[2m" : "";
}

static const char *bold_on(const struct report_options *o)
{
	return o->color ? "\033[1m" : "";
}

static const char *attr_off(const struct report_options *o)
{
	return o->color ? "\033[0m" : "";
}

static double pct(int64_t part, int64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

bool report_unsampled(const struct pv_profile *p, char *buf, size_t n)
{
	return p->threads_cpu_ns > 0 && p->unsampled_cpu_ns > 0 &&
	       raw_cpu_unsampled_say(buf, n, (uint64_t)p->unsampled_cpu_ns, (uint64_t)p->threads_cpu_ns,
				     p->unsampled_threads, p->nthreads, p->lost);
}

void report_header(FILE *out, const struct calltree *t, const struct report_options *o)
{
	const struct pv_profile *p = t->p;
	char dur[32], cpu[32], text[NAME_MAX_LEN];
	const char *vname = t->v_value != PV_NONE ? pv_str(p, p->sample_types[t->v_value].type) : NULL;
	int64_t total_value = t->nodes[0].value;

	fprintf(out, "%sprogram:%s %s", bold_on(o), attr_off(o),
		pv_str(p, p->program)[0] ? pv_escape(text, sizeof text, pv_str(p, p->program)) : "(unknown)");
	if (p->pid)
		fprintf(out, " (pid %u)", p->pid);
	fprintf(out, ", %s%s\n", pv_escape(text, sizeof text, pv_str(p, p->source_format)),
		p->finished ? "" : p->live ? ", still running" : ", not finished");
	pv_format_duration(dur, sizeof dur, p->duration_ns);
	fprintf(out, "%sprofile:%s %s", bold_on(o), attr_off(o), dur);
	if (vname) {
		pv_format_duration(cpu, sizeof cpu, total_value);
		fprintf(out, ", %s %s", strcmp(vname, "cpu") == 0 ? "CPU" : vname, cpu);
	}
	fprintf(out, " in %" PRId64 " samples", t->samples);
	if (p->period > 0)
		fprintf(out, " (period %.3g ms, %.0f Hz)", p->period / 1e6, 1e9 / (double)p->period);
	fprintf(out, ", %zu thread%s", p->nthreads, p->nthreads == 1 ? "" : "s");
	if (o->tid_filter)
		fprintf(out, " (%s)", pv_escape(text, sizeof text, o->tid_filter));
	fprintf(out, "\n");
	if (o->filters && o->filters[0])
		fprintf(out, "%sfilters:%s %s; kept %" PRId64 " of %" PRId64 " samples (%.1f%%)\n",
			bold_on(o), attr_off(o), pv_escape(text, sizeof text, o->filters), o->filter_kept,
			o->filter_total,
			pct(o->filter_kept, o->filter_total));
	if (p->lost || p->truncated || p->dropped_bytes) {
		fprintf(out, "%swarning:%s", bold_on(o), attr_off(o));
		const char *sep = " ";
		if (p->lost) {
			fprintf(out, "%s%" PRIu64 " samples lost (%.1f%%)", sep, p->lost,
				pct((int64_t)p->lost, (int64_t)(p->lost + p->nsamples)));
			if (pv_str(p, p->lost_cause)[0])
				fprintf(out, ": the trace could not grow: %s", pv_str(p, p->lost_cause));
			sep = ", ";
		}
		if (p->truncated) {
			fprintf(out, "%s%" PRIu64 " samples (%.1f%%) with incomplete stacks", sep,
				p->truncated, pct((int64_t)p->truncated, (int64_t)p->nsamples));
			sep = ", ";
		}
		if (p->dropped_bytes)
			fprintf(out, "%s%" PRIu64 " bytes of damaged input dropped", sep, p->dropped_bytes);
		fprintf(out, "\n");
	}
	{
		char say[512];
		if (report_unsampled(p, say, sizeof say))
			fprintf(out, "%swarning:%s %s\n", bold_on(o), attr_off(o), say);
	}
	fprintf(out, "\n");
}

/* Names come from the input: every one is written through pv_escape. */
static void frame_label(const struct calltree *t, uint32_t frame, char *name, size_t nn, char *where,
			size_t nw)
{
	char raw[NAME_MAX_LEN];

	pv_escape(name, nn, calltree_frame_name(t, frame, raw, sizeof raw));
	pv_escape(where, nw, calltree_frame_where(t, frame, raw, sizeof raw));
}

static void node_label(const struct calltree *t, const struct ct_node *nd, char *name, size_t nn,
		       char *where, size_t nw)
{
	char raw[NAME_MAX_LEN];

	where[0] = '\0';
	if (nd->kind == CT_THREAD)
		pv_escape(name, nn, calltree_node_name(t, (uint32_t)(nd - t->nodes), raw, sizeof raw));
	else
		frame_label(t, nd->frame, name, nn, where, nw);
}

/* Should child (with count n) of a parent with count parent_n be shown? */
static bool visible(const struct report_options *o, const struct ct_node *nd, int64_t parent_n)
{
	if (o->mincount > 0 && nd->count < o->mincount)
		return false;
	if (o->maxdepth > 0 && nd->depth > (uint32_t)o->maxdepth)
		return false;
	if (ct_below_floor(nd->count, parent_n, o->noisefloor))
		return false;
	return true;
}

/* The indentation of a line at depth (1: the outermost frames) and, past
 * REPORT_INDENT_MAX, where it stops growing, the depth as a number. */
static void tree_indent(FILE *out, uint32_t depth)
{
	if (depth <= REPORT_INDENT_MAX)
		fprintf(out, "%*s", 2 * (int)(depth - 1), "");
	else
		fprintf(out, "%*s[+%" PRIu32 "] ", 2 * REPORT_INDENT_MAX, "", depth);
}

/* The tree's columns before the name: samples, share, noise and, when
 * the tree weighs by a time, that time in milliseconds. */
static void tree_columns(FILE *out, const struct calltree *t, int64_t count, int64_t weight,
			 int64_t value, const char *dim, const char *off)
{
	fprintf(out, "%9" PRId64 " %6.1f%% %s%6.0f%s", count, pct(weight, ct_weight(t, &t->nodes[0])),
		dim, sqrt((double)count), off);
	if (t->v_value != PV_NONE)
		fprintf(out, " %9.1f", value / 1e6);
	fputs("  ", out);
}

static int tree_columns_width(const struct calltree *t)
{
	return t->v_value != PV_NONE ? 36 : 26;
}

static void tree_line(FILE *out, const struct calltree *t, const struct ct_node *nd,
		      const struct report_options *o)
{
	char name[NAME_MAX_LEN], where[NAME_MAX_LEN];

	node_label(t, nd, name, sizeof name, where, sizeof where);
	tree_columns(out, t, nd->count, ct_weight(t, nd), nd->value, dim_on(o), attr_off(o));
	tree_indent(out, nd->depth);
	fputs(name, out);
	if (where[0])
		fprintf(out, "  %s%s%s", dim_on(o), where, attr_off(o));
	fputc('\n', out);
}

/* How many nodes below id form one call chain: each the only child of
 * the one above it, and shown. */
static uint32_t chain_length(const struct calltree *t, const struct report_options *o, uint32_t id)
{
	const struct ct_node *nodes = t->nodes;
	uint32_t n = 0;

	while (nodes[id].nchildren == 1 && visible(o, &nodes[nodes[id].first_child], nodes[id].count)) {
		id = nodes[id].first_child;
		n++;
	}
	return n;
}

/* Below REPORT_INDENT_MAX, a chain longer than twice REPORT_CHAIN_ENDS
 * frames (deep recursion, a stack tens of thousands of frames deep) is
 * shown by its first and last REPORT_CHAIN_ENDS frames and one line for
 * the rest: what is printed grows with the branches of the tree, never
 * with the depth of a chain.  id was printed; returns the node whose
 * children come next, id itself when nothing was left out. */
static uint32_t tree_chain(FILE *out, const struct calltree *t, uint32_t id, const struct report_options *o)
{
	const struct ct_node *nodes = t->nodes;
	uint32_t n, skip, from;

	if (nodes[id].depth < REPORT_INDENT_MAX)
		return id;
	n = chain_length(t, o, id);
	if (n <= 2 * REPORT_CHAIN_ENDS)
		return id;
	for (uint32_t k = 0; k < REPORT_CHAIN_ENDS; k++) {
		id = nodes[id].first_child;
		tree_line(out, t, &nodes[id], o);
	}
	skip = n - 2 * REPORT_CHAIN_ENDS;
	from = nodes[id].depth + 1;
	for (uint32_t k = 0; k < skip; k++)
		id = nodes[id].first_child;
	fprintf(out, "%s%*s%*s[%" PRIu32 " frames of one call chain not shown: depth %" PRIu32 " to %" PRIu32
		"]%s\n", dim_on(o), tree_columns_width(t), "", 2 * REPORT_INDENT_MAX, "", skip, from,
		nodes[id].depth, attr_off(o));
	return id;
}

int report_tree(FILE *out, const struct calltree *t, const struct report_options *o)
{
	const struct ct_node *nodes = t->nodes;
	uint32_t *stack;
	size_t sp = 0;
	const char *vname = t->v_value != PV_NONE ? pv_str(t->p, t->p->sample_types[t->v_value].type) : "";

	if (nodes[0].count == 0) {
		fprintf(out, "no samples%s\n", o->tid_filter ? " in the selected threads" : "");
		return 0;
	}
	stack = malloc(t->nnodes * sizeof *stack);
	if (!stack)
		return pv_oom();
	if (vname[0])
		fprintf(out, "%s  samples %6s%%    ±√n %6s ms  function  location%s\n", bold_on(o),
			vname, strcmp(vname, "cpu") == 0 ? "CPU" : vname, attr_off(o));
	else
		fprintf(out, "%s  samples  share%%    ±√n  function  location%s\n", bold_on(o), attr_off(o));

	/* Pre-order with an explicit stack, children pushed in reverse so the
	 * hottest is printed first.  Hidden children of a node are summed in
	 * one line, so nothing disappears without a trace. */
	{
		uint32_t *kids = malloc(t->nnodes * sizeof *kids);
		if (!kids) {
			free(stack);
			return pv_oom();
		}
		/* Entries >= 0x80000000 are "hidden summary" markers for a parent. */
		stack[sp++] = 0;
		while (sp) {
			uint32_t id = stack[--sp];
			if (id & 0x80000000u) {
				const struct ct_node *par = &nodes[id & 0x7fffffffu];
				int64_t hc = 0, hv = 0, hw = 0;
				uint32_t hn = 0;
				for (uint32_t c = par->first_child; c != PV_NONE; c = nodes[c].next_sibling)
					if (!visible(o, &nodes[c], par->count)) {
						hc += nodes[c].count;
						hv += nodes[c].value;
						hw += ct_weight(t, &nodes[c]);
						hn++;
					}
				fputs(dim_on(o), out);
				tree_columns(out, t, hc, hw, hv, "", "");
				tree_indent(out, par->depth + 1);
				fprintf(out, "[%u more below the %s]%s\n", hn,
					o->maxdepth > 0 && par->depth + 1 > (uint32_t)o->maxdepth ? "depth limit" :
					"floor", attr_off(o));
				continue;
			}
			if (id != 0) {
				tree_line(out, t, &nodes[id], o);
				id = tree_chain(out, t, id, o);
			}
			const struct ct_node *nd = &nodes[id];
			size_t nk = 0;
			bool hidden = false;
			for (uint32_t c = nd->first_child; c != PV_NONE; c = nodes[c].next_sibling) {
				if (visible(o, &nodes[c], nd->count))
					kids[nk++] = c;
				else
					hidden = true;
			}
			if (hidden && !o->quiet_hidden)
				stack[sp++] = id | 0x80000000u;
			while (nk)
				stack[sp++] = kids[--nk];
		}
		free(kids);
	}
	free(stack);
	return 0;
}

struct flat_order {
	const struct calltree *t;
	enum report_sort sort;
};

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	const struct calltree *flat_tree = ((const struct flat_order *)ctx)->t;
	enum report_sort flat_sort = ((const struct flat_order *)ctx)->sort;
	const struct ct_flat_row *x = a, *y = b;
	char nx[NAME_MAX_LEN], ny[NAME_MAX_LEN];
	int c;

	int64_t sx = ct_self_weight(flat_tree, x), sy = ct_self_weight(flat_tree, y);
	int64_t cx = ct_cum_weight(flat_tree, x), cy = ct_cum_weight(flat_tree, y);

	switch (flat_sort) {
	case SORT_CUM:
		if (cx != cy)
			return cx > cy ? -1 : 1;
		break;
	case SORT_NAME:
		calltree_frame_where(flat_tree, x->frame, nx, sizeof nx);
		calltree_frame_where(flat_tree, y->frame, ny, sizeof ny);
		c = strcmp(nx, ny);
		if (c)
			return c;
		calltree_frame_name(flat_tree, x->frame, nx, sizeof nx);
		calltree_frame_name(flat_tree, y->frame, ny, sizeof ny);
		c = strcmp(nx, ny);
		if (c)
			return c;
		break;
	default:
		if (sx != sy)
			return sx > sy ? -1 : 1;
		if (cx != cy)
			return cx > cy ? -1 : 1;
		break;
	}
	calltree_frame_name(flat_tree, x->frame, nx, sizeof nx);
	calltree_frame_name(flat_tree, y->frame, ny, sizeof ny);
	return strcmp(nx, ny);
}

int report_flat(FILE *out, struct calltree *t, const struct report_options *o)
{
	size_t n;
	struct ct_flat_row *rows = calltree_flat(t, &n);
	int64_t total = ct_weight(t, &t->nodes[0]);

	if (!rows)
		return -1;
	if (t->nodes[0].count == 0) {
		fprintf(out, "no samples%s\n", o->tid_filter ? " in the selected threads" : "");
		free(rows);
		return 0;
	}
	struct flat_order order = { t, o->sort };
	qsort_r(rows, n, sizeof *rows, cmp_rows, &order);
	const char *vname = t->v_value != PV_NONE ? pv_str(t->p, t->p->sample_types[t->v_value].type) : "";
	fprintf(out, "%s     self %5s%%      cum %5s%%    ±√n  function  location%s\n", bold_on(o),
		vname[0] ? vname : "self", vname[0] ? vname : "cum", attr_off(o));
	for (size_t i = 0; i < n; i++) {
		const struct ct_flat_row *r = &rows[i];
		char name[NAME_MAX_LEN], where[NAME_MAX_LEN];

		if (r->cum_count == 0)
			continue;
		if (o->mincount > 0 && r->cum_count < o->mincount)
			continue;
		frame_label(t, r->frame, name, sizeof name, where, sizeof where);
		fprintf(out, "%9" PRId64 " %5.1f%% %8" PRId64 " %5.1f%% %s%6.0f%s  %s", r->self_count,
			pct(ct_self_weight(t, r), total), r->cum_count, pct(ct_cum_weight(t, r), total), dim_on(o),
			sqrt((double)r->self_count), attr_off(o), name);
		if (where[0])
			fprintf(out, "  %s%s%s", dim_on(o), where, attr_off(o));
		fputc('\n', out);
	}
	free(rows);
	return 0;
}

/* Folded stacks: "outer;...;leaf WEIGHT", one line per distinct stack (a
 * node with samples of its own), outermost frame first, as FlameGraph's
 * flamegraph.pl reads them.  With the tree split by thread the thread is
 * the first frame.  The weight is what every report weighs by: the time
 * value in whole microseconds (rounded so that the lines add up to the
 * total), or the sample count. */
int report_folded(FILE *out, const struct calltree *t, const struct report_options *o)
{
	const struct ct_node *nodes = t->nodes;
	uint32_t *path = malloc((t->nnodes ? t->nnodes : 1) * sizeof *path);
	char name[NAME_MAX_LEN], where[NAME_MAX_LEN];
	int64_t sum_ns = 0, written_us = 0;

	(void)o;
	if (!path)
		return pv_oom();
	for (size_t i = 1; i < t->nnodes; i++) {
		const struct ct_node *nd = &nodes[i];
		size_t n = 0;

		int64_t weight = nd->self_count;

		if (nd->self_count <= 0)
			continue;
		if (t->v_value != PV_NONE) {
			int64_t upto;
			if (nd->self_value <= 0 ||
			    __builtin_add_overflow(sum_ns, nd->self_value, &sum_ns))
				continue;
			upto = sum_ns / 1000 + (sum_ns % 1000 >= 500);
			weight = upto - written_us;
			if (weight <= 0)
				continue; /* under half a microsecond so far */
			written_us = upto;
		}
		for (uint32_t k = (uint32_t)i; k != 0 && k != PV_NONE; k = nodes[k].parent)
			path[n++] = k;
		while (n--) {
			node_label(t, &nodes[path[n]], name, sizeof name, where, sizeof where);
			/* ';' separates frames, as in FlameGraph's own
			 * stackcollapse scripts: one in a name becomes ':'.  A
			 * newline was escaped (^J) and cannot end the line; the
			 * count is after the last space, so spaces may stay. */
			for (char *c = name; *c; c++)
				if (*c == ';')
					*c = ':';
			fputs(name, out);
			if (n)
				fputc(';', out);
		}
		fprintf(out, " %" PRId64 "\n", weight);
	}
	free(path);
	return 0;
}
