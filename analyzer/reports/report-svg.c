/* report-svg.c - the call graph laid out by dot and written as SVG */
#include "report.h"
#include "report-svg.h"
#include "present.h"
#include "error.h"
#include "units.h"
#include "escape.h"
#include "util.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

#include <inttypes.h>
#include <pthread.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define NAME_BUF 4096
#define LABEL_NAME_MAX 40 /* longer names are shortened in labels */

/* Where a string goes: graphviz unescapes a label's backslashes once and
 * a tooltip's twice. */
enum gv_field { GV_LABEL, GV_TOOLTIP };

/* A name from the profile for a graphviz escString.  It is escaped first
 * (pv_escape: no control character, valid UTF-8), then kept from meaning
 * anything to graphviz: a backslash is doubled for a label and doubled
 * twice for a tooltip, or "\N", "\l" and the like would be read as
 * escapes; '&' goes in as "&amp;", since graphviz decodes character
 * references ("&#27;" would become ESC) before it writes the SVG, where
 * it escapes '&', '<', '>' and quotes itself. */
static void sb_text(struct pv_strbuf *b, const char *s, enum gv_field f)
{
	char shown[NAME_BUF];

	for (const char *c = pv_escape(shown, sizeof shown, s); *c; c++) {
		if (*c == '\\')
			pv_strbuf_printf(b, "%s", f == GV_TOOLTIP ? "\\\\\\\\" : "\\\\");
		else if (*c == '&')
			pv_strbuf_printf(b, "&amp;");
		else
			pv_strbuf_printf(b, "%c", *c);
	}
}

/* Is s[i] the '<' or '>' of an operator name ("operator<<", "operator->")? */
static bool operator_char(const char *s, size_t i)
{
	size_t k = i;

	while (k > 0 && (s[k - 1] == '<' || s[k - 1] == '>' || s[k - 1] == '-' || s[k - 1] == '='))
		k--;
	return k >= 8 && strncmp(s + k - 8, "operator", 8) == 0;
}

/* A name short enough for a label: template arguments become "<…>", a
 * trailing parameter list "()", and what is still too long keeps its end
 * (the function's own name) after "…".  The whole name goes in the
 * tooltip. */
static void shorten_name(const char *name, char *out, size_t n)
{
	char tmp[NAME_BUF];
	size_t len = strlen(name), j = 0;
	int depth = 0;

	if (len <= LABEL_NAME_MAX) {
		snprintf(out, n, "%s", name);
		return;
	}
	for (size_t i = 0; name[i] && j + 8 < sizeof tmp; i++) {
		char c = name[i];
		if ((c == '<' || c == '>') && operator_char(name, i)) {
			if (depth == 0)
				tmp[j++] = c;
			continue;
		}
		if (c == '<') {
			if (depth++ == 0) {
				memcpy(tmp + j, "<\xe2\x80\xa6", 4);
				j += 4;
			}
			continue;
		}
		if (c == '>' && depth > 0) {
			if (--depth == 0)
				tmp[j++] = '>';
			continue;
		}
		if (depth == 0)
			tmp[j++] = c;
	}
	tmp[j] = '\0';
	/* The parameter list at the end (after a " const" maybe). */
	char *end = tmp + j;
	if (j > 6 && strcmp(end - 6, " const") == 0)
		end -= 6;
	if (end > tmp && end[-1] == ')') {
		int d = 0;
		for (char *q = end - 1; q >= tmp; q--) {
			if (*q == ')')
				d++;
			else if (*q == '(' && --d == 0) {
				if (q > tmp) /* not a name that is all parentheses */
					strcpy(q, "()");
				break;
			}
		}
	}
	len = strlen(tmp);
	if (len <= LABEL_NAME_MAX) {
		snprintf(out, n, "%s", tmp);
		return;
	}
	/* Keep the tail, starting at a character boundary. */
	const char *tail = tmp + len - LABEL_NAME_MAX;
	while (((unsigned char)*tail & 0xc0) == 0x80)
		tail++;
	snprintf(out, n, "\xe2\x80\xa6%s", tail);
}


/* "1.23s (12.3%), n=308" or "308 (12.3%)" without a time value. */
static void fmt_amount(const struct graph *g, char *buf, size_t n, int64_t count, int64_t value,
		       int64_t total)
{
	int64_t w = graph_weight(g, count, value);
	double share = total ? 100.0 * (double)w / (double)total : 0.0;

	if (g->t->v_value != PV_NONE) {
		char tm[32];
		calltree_value_compact(g->t, value, tm, sizeof tm);
		snprintf(buf, n, "%s (%.1f%%), n=%" PRId64, tm, share, count);
	} else {
		snprintf(buf, n, "%" PRId64 " (%.1f%%)", count, share);
	}
}

/* Colour for a share in [0, 1]: from grey to dark red, as the share grows;
 * fill: a pale version. */
static void share_color(char *buf, size_t n, double share, bool fill)
{
	double t = sqrt(share < 0 ? 0 : share > 1 ? 1 : share);
	int r, gr, b;

	if (fill) {
		r = (int)(0xf6 + (0xff - 0xf6) * t);
		gr = (int)(0xf6 + (0xc8 - 0xf6) * t);
		b = (int)(0xf6 + (0xb8 - 0xf6) * t);
	} else {
		r = (int)(0x9a + (0xb2 - 0x9a) * t);
		gr = (int)(0x9a + (0x10 - 0x9a) * t);
		b = (int)(0x9a + (0x10 - 0x9a) * t);
	}
	snprintf(buf, n, "#%02x%02x%02x", r, gr, b);
}

/* A kernel frame's colour by its share: the blues of the kernel, from pale
 * to deep, where the others go from pale to red. */
static void kernel_color(char *buf, size_t n, double share, bool fill)
{
	double t = sqrt(share < 0 ? 0 : share > 1 ? 1 : share);
	int r, gr, b;

	if (fill) {
		r = (int)(0xee + (0xa8 - 0xee) * t);
		gr = (int)(0xf4 + (0xd8 - 0xf4) * t);
		b = (int)(0xf8 + (0xf0 - 0xf8) * t);
	} else {
		r = (int)(0x7a + (0x10 - 0x7a) * t);
		gr = (int)(0x9a + (0x60 - 0x9a) * t);
		b = (int)(0xaa + (0xa0 - 0xaa) * t);
	}
	snprintf(buf, n, "#%02x%02x%02x", r, gr, b);
}

/* A comparison: each graph node's frame's test of its cumulative value. */
struct diff_marks {
	const struct pv_diff_cell *cum; /* per flat row */
	uint32_t *row_of;              /* per frame: its row, PV_NONE if none */
	double fdr;
};

/* A comparison's colours (present.h): fill, the box's, else its border's. */
static void diff_color(char *buf, size_t n, const struct pv_diff_cell *c, bool fill)
{
	static const struct pv_ramp ramps[2] = {
		{ .none = { 0x9a, 0x9a, 0x9a },
		  .worse = { { 205, 150, 145 }, { 190, 20, 20 } },
		  .better = { { 150, 165, 205 }, { 20, 60, 190 } } },
		{ .none = { 0xec, 0xec, 0xec },
		  .worse = { { 252, 232, 228 }, { 240, 130, 120 } },
		  .better = { { 228, 236, 252 }, { 130, 160, 240 } } },
	};
	int rgb[3];

	pv_ramp_rgb(&ramps[fill], c, rgb);
	snprintf(buf, n, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

/* Each frame's row among the flat rows that pv_report_prepare tested as
 * the flat table does (their cumulative value); 0 or -1. */
static int diff_marks_of(const struct pv_report_ctx *rc, struct diff_marks *m)
{
	const struct calltree *t = rc->t;
	struct pv_diff_scale sc;

	m->cum = rc->cum;
	if (!(m->row_of = pv_budget_calloc(t->nframes ? t->nframes : 1, sizeof *m->row_of)))
		return pv_oom();
	for (size_t i = 0; i < t->nframes; i++)
		m->row_of[i] = PV_NONE;
	for (size_t i = 0; i < rc->nrows; i++)
		if (rc->rows[i].frame < t->nframes)
			m->row_of[rc->rows[i].frame] = (uint32_t)i;
	pv_diff_scale_of(t, rc->diff, &sc);
	m->fdr = sc.fdr;
	return 0;
}

/* The cell of a graph node's frame, or NULL. */
static const struct pv_diff_cell *diff_mark(const struct diff_marks *m, uint32_t frame)
{
	if (!m || !m->cum || !m->row_of || m->row_of[frame] == PV_NONE)
		return NULL;
	return &m->cum[m->row_of[frame]];
}

/* Declared attributes, set with agxset. */
struct attrs {
	Agsym_t *n_label, *n_tooltip, *n_fontsize, *n_color, *n_fillcolor, *n_fontcolor, *n_style,
		*n_shape, *n_id, *n_class;
	Agsym_t *e_label, *e_tooltip, *e_penwidth, *e_weight, *e_color, *e_style, *e_arrowsize;
};

static Agsym_t *decl(Agraph_t *gr, int kind, const char *name, const char *def)
{
	return agattr(gr, kind, (char *)name, (char *)def);
}

static int set(void *obj, Agsym_t *sym, const char *v)
{
	return agxset(obj, sym, (char *)v);
}

static void declare_attrs(Agraph_t *gr, struct attrs *a)
{
	decl(gr, AGRAPH, "nodesep", "0.3");
	decl(gr, AGRAPH, "ranksep", "0.4");
	decl(gr, AGRAPH, "fontname", "Helvetica");
	decl(gr, AGNODE, "fontname", "Helvetica");
	decl(gr, AGEDGE, "fontname", "Helvetica");
	decl(gr, AGNODE, "margin", "0.08,0.04");
	decl(gr, AGEDGE, "fontsize", "10");
	a->n_label = decl(gr, AGNODE, "label", "\\N");
	a->n_tooltip = decl(gr, AGNODE, "tooltip", "");
	a->n_fontsize = decl(gr, AGNODE, "fontsize", "10");
	a->n_color = decl(gr, AGNODE, "color", "black");
	a->n_fillcolor = decl(gr, AGNODE, "fillcolor", "white");
	a->n_fontcolor = decl(gr, AGNODE, "fontcolor", "black");
	a->n_style = decl(gr, AGNODE, "style", "filled");
	a->n_shape = decl(gr, AGNODE, "shape", "box");
	a->n_id = decl(gr, AGNODE, "id", "");
	a->e_label = decl(gr, AGEDGE, "label", "");
	a->e_tooltip = decl(gr, AGEDGE, "tooltip", "");
	a->e_penwidth = decl(gr, AGEDGE, "penwidth", "1");
	a->e_weight = decl(gr, AGEDGE, "weight", "1");
	a->e_color = decl(gr, AGEDGE, "color", "black");
	a->e_style = decl(gr, AGEDGE, "style", "solid");
	a->e_arrowsize = decl(gr, AGEDGE, "arrowsize", "1");
}

/* The legend's type: "CPU time", another sample type, or "samples". */
static const char *legend_type(const struct calltree *t)
{
	const char *v = pv_value_type(t);

	return !v ? "samples" : strcmp(v, "cpu") == 0 ? "CPU time" : v;
}

/* The legend: a box of left-justified lines. */
static int add_legend(Agraph_t *gr, const struct attrs *a, const struct graph *g,
		      const struct pv_report_ctx *rc, const struct diff_marks *dm, bool any_residual,
		      bool any_noise, bool any_kernel)
{
	const struct calltree *t = g->t;
	const struct pv_profile *p = t->p;
	const char *prog = pv_str(p, p->program);
	int64_t total = ct_weight(t, &t->nodes[0]);
	char buf[128], cut[64];
	struct pv_strbuf l = { 0 }, tip = { 0 };
	Agnode_t *n;

	pv_strbuf_printf(&l, "File: ");
	sb_text(&l, prog[0] ? pv_base_name(prog) : "(unknown)", GV_LABEL);
	pv_strbuf_printf(&l, "\\lType: %s%s\\l", legend_type(t), t->v_value != PV_NONE ? " (n: samples)" : "");
	if (t->v_value != PV_NONE) {
		calltree_value_compact(t, total, buf, sizeof buf);
		pv_strbuf_printf(&l, "Total: %s of %s in %" PRId64 " samples\\l", buf,
				 pv_value_label(pv_value_type(t)), t->samples);
	} else {
		pv_strbuf_printf(&l, "Total: %" PRId64 " samples\\l", t->samples);
	}
	if (rc->label && rc->label[0]) {
		pv_strbuf_printf(&l, "Filters: ");
		sb_text(&l, rc->label, GV_LABEL);
		pv_strbuf_printf(&l, "\\l");
	}
	if (t->v_value != PV_NONE) {
		calltree_value_compact(t, g->kept_flat, buf, sizeof buf);
		pv_strbuf_printf(&l, "Showing nodes accounting for %s, %.2f%% of the total\\l", buf,
		       total ? 100.0 * (double)g->kept_flat / (double)total : 0.0);
	} else {
		pv_strbuf_printf(&l, "Showing nodes accounting for %" PRId64 " samples, %.2f%% of the total\\l",
		       g->kept_flat, total ? 100.0 * (double)g->kept_flat / (double)total : 0.0);
	}
	if (t->v_value != PV_NONE)
		calltree_value_compact(t, g->node_cutoff, cut, sizeof cut);
	else
		snprintf(cut, sizeof cut, "%" PRId64, g->node_cutoff);
	if (g->dropped_nodes)
		pv_strbuf_printf(&l, "Dropped %zu node%s (cum < %s or past the top %zu)\\l", g->dropped_nodes,
		       g->dropped_nodes == 1 ? "" : "s", cut, rc->o->graph.nodecount);
	if (t->v_value != PV_NONE)
		calltree_value_compact(t, g->edge_cutoff, cut, sizeof cut);
	else
		snprintf(cut, sizeof cut, "%" PRId64, g->edge_cutoff);
	if (g->dropped_edges)
		pv_strbuf_printf(&l, "Dropped %zu edge%s (weight < %s)\\l", g->dropped_edges,
		       g->dropped_edges == 1 ? "" : "s", cut);
	pv_strbuf_printf(&l, "Showing %zu of %zu nodes, %zu edges\\l", g->nnodes, g->total_nodes, g->nedges);
	if (any_residual)
		pv_strbuf_printf(&l, "Dashed: calls through dropped frames\\l");
	if (any_kernel)
		pv_strbuf_printf(&l, dm ? "[k], rounded: kernel frames\\l" : "[k], rounded, blue: kernel frames\\l");
	if (any_noise)
		pv_strbuf_printf(&l, "Grey: at or below the noise floor, cum <= %g standard errors of the total\\l",
		       rc->o->noisefloor);
	if (dm) {
		pv_strbuf_printf(&l, "Comparison with the base: boxes, edges and shares are the new profile's\\l");
		pv_strbuf_printf(&l, "Colours: the change of cum, red worse, blue better, stronger for larger changes\\l");
		pv_strbuf_printf(&l, "Grey: no significant change (false discovery rate %g)\\l", dm->fdr);
	}
	sb_text(&tip, prog[0] ? prog : "(unknown)", GV_TOOLTIP);
	if (l.failed || tip.failed) {
		free(l.s);
		free(tip.s);
		return pv_oom();
	}
	n = agnode(gr, "legend", 1);
	if (a->n_class)
		set(n, a->n_class, "legend");
	set(n, a->n_label, l.s);
	set(n, a->n_tooltip, tip.s);
	set(n, a->n_fontsize, "16");
	set(n, a->n_style, "solid");
	set(n, a->n_shape, "box");
	set(n, a->n_id, "legend");
	free(l.s);
	free(tip.s);
	return 0;
}

static int add_nodes(Agraph_t *gr, const struct attrs *a, const struct graph *g,
		     const struct pv_report_ctx *rc, const struct diff_marks *dm, Agnode_t **gn,
		     bool *any_noise, bool *any_kernel)
{
	const struct calltree *t = g->t;
	int64_t total = ct_weight(t, &t->nodes[0]);
	int64_t max_flat = 1;
	char name[NAME_BUF], full[NAME_BUF], where[NAME_BUF], shortn[NAME_BUF], amt[128], buf[64];

	for (size_t i = 0; i < g->nnodes; i++) {
		int64_t f = graph_weight(g, g->nodes[i].flat_count, g->nodes[i].flat_value);
		if (f > max_flat)
			max_flat = f;
	}
	for (size_t i = 0; i < g->nnodes; i++) {
		const struct graph_node *nd = &g->nodes[i];
		int64_t flat = graph_weight(g, nd->flat_count, nd->flat_value);
		int64_t cum = graph_weight(g, nd->cum_count, nd->cum_value);
		/* the noise floor against all samples: the graph has no parents */
		bool noise = ct_below_floor(cum, t->nodes[0].sq, rc->o->noisefloor);
		const struct pv_diff_cell *dc = nd->is_process ? NULL : diff_mark(dm, nd->frame);
		struct pv_strbuf l = { 0 }, tip = { 0 };
		char id[32];

		bool kernel = graph_node_is_kernel(g, i);
		size_t at = kernel ? CT_KERNEL_MARK_LEN : 0;

		memcpy(name, CT_KERNEL_MARK, at);
		graph_node_name(g, i, name + at, sizeof name - at);
		if (!name[at])
			snprintf(name + at, sizeof name - at, "??");
		memcpy(full, CT_KERNEL_MARK, at);
		graph_node_full_name(g, i, full + at, sizeof full - at);
		if (!full[at])
			snprintf(full + at, sizeof full - at, "??");
		graph_node_where(g, i, where, sizeof where);
		memcpy(shortn, CT_KERNEL_MARK, at);
		shorten_name(name + at, shortn + at, sizeof shortn - at);
		sb_text(&l, shortn, GV_LABEL);
		*any_kernel |= kernel;
		if (flat == 0 && nd->flat_count == 0) {
			fmt_amount(g, amt, sizeof amt, nd->cum_count, nd->cum_value, total);
			pv_strbuf_printf(&l, "\\n0 of %s", amt);
		} else {
			fmt_amount(g, amt, sizeof amt, nd->flat_count, nd->flat_value, total);
			pv_strbuf_printf(&l, "\\n%s", amt);
			if (cum != flat) {
				fmt_amount(g, amt, sizeof amt, nd->cum_count, nd->cum_value, total);
				pv_strbuf_printf(&l, "\\nof %s", amt);
			}
		}
		sb_text(&tip, full, GV_TOOLTIP);
		if (where[0]) {
			pv_strbuf_printf(&tip, " (");
			sb_text(&tip, where, GV_TOOLTIP);
			pv_strbuf_printf(&tip, ")");
		}
		fmt_amount(g, amt, sizeof amt, nd->flat_count, nd->flat_value, total);
		pv_strbuf_printf(&tip, " flat %s,", amt);
		fmt_amount(g, amt, sizeof amt, nd->cum_count, nd->cum_value, total);
		pv_strbuf_printf(&tip, " cum %s (\u00b1%.1f%%: one standard error)", amt,
				 total > 0 ? 100.0 * sqrt(ct_var(t, cum, nd->cum_sq)) / (double)total : 0.0);
		if (noise)
			pv_strbuf_printf(&tip, ", within the noise floor");
		if (dc) {
			char b[64], nw[64], d[64], pct[32], q[32], line[512];
			pv_amount_text(t, b, sizeof b, dc->base, PV_AMOUNT_COMPACT);
			pv_amount_text(t, nw, sizeof nw, dc->new_, PV_AMOUNT_COMPACT);
			pv_amount_text(t, d, sizeof d, dc->delta, PV_AMOUNT_COMPACT | PV_AMOUNT_SIGN);
			pv_change_text(pct, sizeof pct, dc);
			pv_diff_q_text(q, sizeof q, dc->q);
			snprintf(line, sizeof line, "%s (q %s)%s%s", pct, q,
				 dc->verdict != PV_VERDICT_NONE ? " " : "", pv_verdict_name(dc->verdict));
			pv_strbuf_printf(&l, "\\n");
			sb_text(&l, line, GV_LABEL);
			snprintf(line, sizeof line, "; cum base %s, new %s, delta %s (%s), q %s, %s", b, nw, d,
				 pct, q,
				 dc->verdict != PV_VERDICT_NONE ? pv_verdict_name(dc->verdict) : "not significant");
			sb_text(&tip, line, GV_TOOLTIP);
		}
		if (l.failed || tip.failed) {
			free(l.s);
			free(tip.s);
			return pv_oom();
		}
		snprintf(id, sizeof id, "N%zu", i + 1);
		gn[i] = agnode(gr, id, 1);
		if (dc && a->n_class)
			set(gn[i], a->n_class, noise ? (kernel ? "noise kernel" : "noise") :
			    dc->verdict == PV_VERDICT_WORSE ? (kernel ? "worse kernel" : "worse") :
			    dc->verdict == PV_VERDICT_BETTER ? (kernel ? "better kernel" : "better") :
			    kernel ? "insignificant kernel" : "insignificant");
		else if (kernel && a->n_class)
			set(gn[i], a->n_class, "kernel");
		if (kernel)
			set(gn[i], a->n_style, "filled,rounded");
		set(gn[i], a->n_label, l.s);
		set(gn[i], a->n_tooltip, tip.s);
		set(gn[i], a->n_id, id);
		free(l.s);
		free(tip.s);
		snprintf(buf, sizeof buf, "%.1f", 10.0 + 30.0 * sqrt((double)flat / (double)max_flat));
		set(gn[i], a->n_fontsize, buf);
		if (noise) {
			*any_noise = true;
			set(gn[i], a->n_color, "#c8c8c8");
			set(gn[i], a->n_fillcolor, "#f0f0f0");
			set(gn[i], a->n_fontcolor, "#a0a0a0");
			set(gn[i], a->n_style, kernel ? "filled,rounded,dashed" : "filled,dashed");
		} else if (dc) {
			diff_color(buf, sizeof buf, dc, false);
			set(gn[i], a->n_color, buf);
			diff_color(buf, sizeof buf, dc, true);
			set(gn[i], a->n_fillcolor, buf);
		} else {
			double share = total ? (double)cum / (double)total : 0;
			(kernel ? kernel_color : share_color)(buf, sizeof buf, share, false);
			set(gn[i], a->n_color, buf);
			(kernel ? kernel_color : share_color)(buf, sizeof buf, share, true);
			set(gn[i], a->n_fillcolor, buf);
		}
	}
	return 0;
}

static int add_edges(Agraph_t *gr, const struct attrs *a, const struct graph *g, Agnode_t **gn,
		     bool *any_residual)
{
	const struct calltree *t = g->t;
	int64_t total = ct_weight(t, &t->nodes[0]);
	char from[NAME_BUF], to[NAME_BUF], buf[64], amt[128];

	for (size_t i = 0; i < g->nedges; i++) {
		const struct graph_edge *e = &g->edges[i];
		int64_t w = graph_weight(g, e->count, e->value);
		double share = total ? (double)w / (double)total : 0;
		struct pv_strbuf tip = { 0 };
		Agedge_t *ge = agedge(gr, gn[e->from], gn[e->to], NULL, 1);

		if (!ge)
			return pv_error("cannot add an edge to the call graph");
		if (t->v_value != PV_NONE)
			calltree_value_compact(t, e->value, buf, sizeof buf);
		else
			snprintf(buf, sizeof buf, "%" PRId64, e->count);
		set(ge, a->e_label, buf);
		graph_node_name(g, e->from, from, sizeof from);
		graph_node_name(g, e->to, to, sizeof to);
		fmt_amount(g, amt, sizeof amt, e->count, e->value, total);
		sb_text(&tip, from, GV_TOOLTIP);
		pv_strbuf_printf(&tip, " -> ");
		sb_text(&tip, to, GV_TOOLTIP);
		pv_strbuf_printf(&tip, "%s (%s)", e->residual ? " (through dropped frames)" : "", amt);
		if (tip.failed)
			return pv_oom();
		set(ge, a->e_tooltip, tip.s);
		free(tip.s);
		snprintf(buf, sizeof buf, "%.2f", 1.0 + 5.0 * share);
		set(ge, a->e_penwidth, buf);
		snprintf(buf, sizeof buf, "%.2f", 0.6 + 0.6 * sqrt(share));
		set(ge, a->e_arrowsize, buf);
		snprintf(buf, sizeof buf, "%d", 1 + (int)(100.0 * share));
		set(ge, a->e_weight, buf);
		share_color(buf, sizeof buf, share, false);
		set(ge, a->e_color, buf);
		if (e->residual) {
			set(ge, a->e_style, "dashed");
			*any_residual = true;
		}
	}
	return 0;
}

/* graphviz's start (its plugins loaded, its fonts found by the first
 * label measured) is a fixed cost of every call graph; report_svg_ready
 * pays it in a thread of its own while the profile is read.  graphviz is
 * used by one thread at a time: report_svg joins that one first. */
static struct {
	pthread_t thread;
	bool started;
	GVC_t *gvc;
} ready;

static void *get_ready(void *arg)
{
	GVC_t *gvc = gvContext();
	Agraph_t *gr = gvc ? agopen("ready", Agdirected, NULL) : NULL;

	(void)arg;
	if (gr) {
		Agnode_t *n = agnode(gr, "ready", 1);
		agattr(gr, AGNODE, "fontname", "Helvetica");
		agattr(gr, AGNODE, "shape", "box");
		if (n && gvLayout(gvc, gr, "dot") == 0)
			gvFreeLayout(gvc, gr);
		agclose(gr);
	}
	ready.gvc = gvc;
	return NULL;
}

void report_svg_ready(void)
{
	if (!ready.started)
		ready.started = pthread_create(&ready.thread, NULL, get_ready, NULL) == 0;
}

void report_svg_unready(void)
{
	if (ready.started)
		pthread_join(ready.thread, NULL);
	ready.started = false;
	if (ready.gvc)
		gvFreeContext(ready.gvc);
	ready.gvc = NULL;
}

/* One graphviz context for the whole process, freed by
 * report_svg_unready: graphviz 2.42's pango plugin keeps the name of the
 * last font it measured, which a context owns, so that a second context's
 * first label would compare against freed memory. */
static GVC_t *take_gvc(void)
{
	if (ready.started) {
		pthread_join(ready.thread, NULL);
		ready.started = false;
	}
	if (!ready.gvc)
		ready.gvc = gvContext();
	return ready.gvc;
}

int report_svg(FILE *out, const struct pv_report_ctx *rc)
{
	struct calltree *t = rc->t;
	struct graph *g = graph_build(t, &rc->o->graph);
	GVC_t *gvc = NULL;
	Agraph_t *gr = NULL;
	Agnode_t **gn = NULL;
	struct attrs a;
	struct diff_marks marks = { 0 }, *dm = NULL;
	bool any_residual = false, any_noise = false, any_kernel = false, laid_out = false;
	int ret = -1;

	if (!g)
		return -1;
	gn = calloc(g->nnodes ? g->nnodes : 1, sizeof *gn);
	if (!gn) {
		pv_oom();
		goto out;
	}
	if (t->dn && rc->cum) {
		if (diff_marks_of(rc, &marks) < 0)
			goto out;
		dm = &marks;
	}
	gvc = take_gvc();
	gr = gvc ? agopen("callgraph", Agdirected, NULL) : NULL;
	if (!gr) {
		pv_error("cannot start graphviz");
		goto out;
	}
	declare_attrs(gr, &a);
	/* (declared for a comparison and kernel frames alone: other graphs
	 * stay as they were) */
	a.n_class = dm || t->kernel_frames ? decl(gr, AGNODE, "class", "") : NULL;
	if (add_nodes(gr, &a, g, rc, dm, gn, &any_noise, &any_kernel) < 0 ||
	    add_edges(gr, &a, g, gn, &any_residual) < 0 ||
	    add_legend(gr, &a, g, rc, dm, any_residual, any_noise, any_kernel) < 0)
		goto out;
	if (gvLayout(gvc, gr, "dot") != 0) {
		pv_error("graphviz cannot lay out the call graph with 'dot': is its dot layout plugin installed?");
		goto out;
	}
	laid_out = true;
	if (gvRender(gvc, gr, "svg", out) != 0) {
		pv_error("graphviz cannot write SVG: is its core plugin installed?");
		goto out;
	}
	ret = 0;
out:
	if (laid_out)
		gvFreeLayout(gvc, gr);
	if (gr)
		agclose(gr);
	free(gn);
	free(marks.row_of);
	graph_free(g);
	return ret;
}
