/* report-text.c - the text reports: call tree and flat profile */
#include "report-text.h"
#include "report-labels.h"
#include "present.h"
#include "error.h"
#include "escape.h"
#include "units.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Lines are put together in a buffer and written whole. */
#define LINE_MAX_LEN (2 * REPORT_NAME_MAX + 512)

static char *put_str(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

static char *put_cstr(char *p, const char *s)
{
	return put_str(p, s, strlen(s));
}

static char *put_spaces(char *p, int n)
{
	if (n <= 0)
		return p;
	memset(p, ' ', (size_t)n);
	return p + n;
}

/* v right-aligned in width columns, as "%*" PRId64. */
static char *put_int(char *p, int64_t v, int width)
{
	char d[24];
	int n = 0;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do {
		d[sizeof d - 1 - n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		d[sizeof d - 1 - n++] = '-';
	p = put_spaces(p, width - n);
	return put_str(p, d + sizeof d - n, (size_t)n);
}

/* x right-aligned in width columns with decimals (0 or 1) digits after the
 * point, exactly as printf's "%*.*f": where the product that rounds could
 * be a hair off a tie, or the number is not small and positive (-0.0
 * included), printf itself does it. */
static char *put_fixed(char *p, double x, int width, int decimals)
{
	double sc = decimals ? x * 10 : x;
	uint64_t r = sc >= 0 && sc < 4294967296.0 ? (uint64_t)sc : 0;
	double fr = sc - (double)r;

	if (!(sc >= 0 && sc < 4294967296.0) || signbit(sc) || fabs(fr - 0.5) < 1e-5) {
		char buf[64];
		int n = snprintf(buf, sizeof buf, "%*.*f", width, decimals, x);
		return put_str(p, buf, n > 0 ? (size_t)n : 0);
	}
	r += fr > 0.5;
	char d[32];
	int n = 0;
	if (decimals) {
		d[sizeof d - 1 - n++] = (char)('0' + r % 10);
		d[sizeof d - 1 - n++] = '.';
		r /= 10;
	}
	do {
		d[sizeof d - 1 - n++] = (char)('0' + r % 10);
		r /= 10;
	} while (r);
	p = put_spaces(p, width - n);
	return put_str(p, d + sizeof d - n, (size_t)n);
}

static void put_line(FILE *out, const char *line, char *end)
{
	fwrite_unlocked(line, 1, (size_t)(end - line), out);
}

/* Should node id be shown (its count, depth and its parent's noise)? */
static bool visible(const struct calltree *t, const struct pv_report_options *o, uint32_t id)
{
	const struct ct_node *nd = &t->nodes[id];

	if (o->mincount > 0 && nd->count < o->mincount)
		return false;
	if (o->maxdepth > 0 && nd->depth > (uint32_t)o->maxdepth)
		return false;
	if (ct_node_below_floor(t, id, o->noisefloor))
		return false;
	return true;
}

/* The indentation of a line at depth (1: the outermost frames) and, past
 * REPORT_INDENT_MAX, where it stops growing, the depth as a number. */
static char *tree_indent(char *p, uint32_t depth)
{
	if (depth <= REPORT_INDENT_MAX)
		return put_spaces(p, 2 * (int)(depth - 1));
	p = put_spaces(p, 2 * REPORT_INDENT_MAX);
	p = put_cstr(p, "[+");
	p = put_int(p, depth, 0);
	return put_cstr(p, "] ");
}

/* A heap profile's value v, in its unit, right-aligned in REPORT_HEAP_COL. */
static char *put_heap_value(char *p, const struct calltree *t, int64_t v)
{
	char b[32];

	return put_cstr(p, report_heap_cell(t, v, b, sizeof b));
}

/* The tree's columns before the name: samples, share, noise (one
 * standard error, in samples: ct_noise_samples) and, when the tree weighs
 * by a time, that time in milliseconds; by a heap profile's bytes or
 * objects, those in their unit. */
static char *tree_columns(char *p, const struct calltree *t, int64_t count, int64_t weight, int64_t value,
			  double noise, const char *dim, const char *off)
{
	p = put_int(p, count, 9);
	*p++ = ' ';
	p = put_fixed(p, pv_percent(weight, ct_weight(t, &t->nodes[0])), 6, 1);
	p = put_cstr(p, "% ");
	p = put_cstr(p, dim);
	p = put_fixed(p, noise, 6, 0);
	p = put_cstr(p, off);
	if (report_heap_value(t)) {
		*p++ = ' ';
		p = put_heap_value(p, t, value);
	} else if (t->v_value != PV_NONE) {
		*p++ = ' ';
		p = put_fixed(p, (double)value / ct_value_div(t), 9, 1);
	}
	return put_cstr(p, "  ");
}

static int tree_columns_width(const struct calltree *t)
{
	return report_heap_value(t) ? 27 + REPORT_HEAP_COL : t->v_value != PV_NONE ? 36 : 26;
}

/* The tree report is made in two steps: a plan, the list of its lines in
 * order (a node, the summary of a node's hidden children, a long chain
 * left out), made by one walk that also escapes every name shown; then the
 * lines themselves, put together from the plan, which needs no more
 * decisions: a big tree's lines are made by two threads, each a chunk of
 * lines at a time, and written in order. */

enum tree_item_kind { ITEM_NODE, ITEM_HIDDEN, ITEM_CHAIN };

struct tree_item {
	uint32_t kind;         /* enum tree_item_kind */
	uint32_t id;           /* the node; for ITEM_HIDDEN its parent */
	uint32_t skip, to;     /* ITEM_CHAIN: frames left out, the last one's depth */
};

struct tree_plan {
	struct tree_item *items;
	size_t n, cap;
};

static int plan_add(struct tree_plan *pl, uint32_t kind, uint32_t id, uint32_t skip, uint32_t to)
{
	if (pl->n == pl->cap && pv_grow(&pl->items, &pl->cap, pl->n + 1, sizeof *pl->items) < 0)
		return -1;
	pl->items[pl->n++] = (struct tree_item){ kind, id, skip, to };
	return 0;
}

/* A node's line in the plan, its name escaped now. */
static int plan_node(struct tree_plan *pl, struct report_labels *l, uint32_t id)
{
	const struct ct_node *nd = &l->t->nodes[id];
	const char *where;
	size_t nl, wl;

	if (nd->kind == CT_FRAME && !report_labels_frame(l, nd->frame, &nl, &where, &wl))
		return -1;
	return plan_add(pl, ITEM_NODE, id, 0, 0);
}

/* One line of the tree at p (room for LINE_MAX_LEN); returns its end. */
static char *tree_line(char *p, const struct report_labels *l, const struct tree_item *it,
		       const struct pv_report_options *o)
{
	const struct calltree *t = l->t;
	const struct ct_node *nodes = t->nodes;

	if (it->kind == ITEM_HIDDEN) {
		const struct ct_node *par = &nodes[it->id];
		int64_t hc = 0, hv = 0, hw = 0;
		double hs = 0;
		uint32_t hn = 0;
		for (uint32_t c = par->first_child; c != PV_NONE; c = nodes[c].next_sibling)
			if (!visible(t, o, c)) {
				hc += nodes[c].count;
				hv += nodes[c].value;
				hw += ct_weight(t, &nodes[c]);
				hs += nodes[c].sq;
				hn++;
			}
		p = put_cstr(p, dim_on(o));
		p = tree_columns(p, t, hc, hw, hv, ct_noise_samples(t, hc, hw, hs), "", "");
		p = tree_indent(p, par->depth + 1);
		p = put_cstr(p, "[");
		p = put_int(p, hn, 0);
		p = put_cstr(p, o->maxdepth > 0 && par->depth + 1 > (uint32_t)o->maxdepth ?
				" more below the depth limit]" : " more below the floor]");
		p = put_cstr(p, attr_off(o));
	} else if (it->kind == ITEM_CHAIN) {
		p = put_cstr(p, dim_on(o));
		p = put_spaces(p, tree_columns_width(t) + 2 * REPORT_INDENT_MAX);
		p = put_cstr(p, "[");
		p = put_int(p, it->skip, 0);
		p = put_cstr(p, " frames of one call chain not shown: depth ");
		p = put_int(p, nodes[it->id].depth + 1, 0);
		p = put_cstr(p, " to ");
		p = put_int(p, it->to, 0);
		p = put_cstr(p, "]");
		p = put_cstr(p, attr_off(o));
	} else {
		const struct ct_node *nd = &nodes[it->id];
		p = tree_columns(p, t, nd->count, ct_weight(t, nd), nd->value, ct_node_noise(t, nd), dim_on(o),
				 attr_off(o));
		p = tree_indent(p, nd->depth);
		if (ct_is_group(nd->kind)) {
			char raw[REPORT_NAME_MAX];
			pv_escape(p, REPORT_NAME_MAX, calltree_node_name(t, it->id, raw, sizeof raw));
			p += strlen(p);
		} else {
			/* made in the plan */
			uint32_t f = nd->frame;
			const char *name = l->text + l->off[f];
			p = put_str(p, name, l->name_len[f]);
			if (l->where_len[f]) {
				p = put_cstr(p, "  ");
				p = put_cstr(p, dim_on(o));
				p = put_str(p, name + l->name_len[f] + 1, l->where_len[f]);
				p = put_cstr(p, attr_off(o));
			}
		}
	}
	*p++ = '\n';
	return p;
}

/* How many nodes below id form one call chain: each the only child of
 * the one above it, and shown. */
static uint32_t chain_length(const struct calltree *t, const struct pv_report_options *o, uint32_t id)
{
	const struct ct_node *nodes = t->nodes;
	uint32_t n = 0;

	while (nodes[id].nchildren == 1 && visible(t, o, nodes[id].first_child)) {
		id = nodes[id].first_child;
		n++;
	}
	return n;
}

/* Below REPORT_INDENT_MAX, a chain longer than twice REPORT_CHAIN_ENDS
 * frames (deep recursion, a stack tens of thousands of frames deep) is
 * shown by its first and last REPORT_CHAIN_ENDS frames and one line for
 * the rest: what is printed grows with the branches of the tree, never
 * with the depth of a chain.  id is in the plan; *next gets the node
 * whose children come next, id itself when nothing was left out. */
static int tree_chain(struct tree_plan *pl, struct report_labels *l, uint32_t id, const struct pv_report_options *o,
		      uint32_t *next)
{
	const struct ct_node *nodes = l->t->nodes;
	uint32_t n, skip, from;

	*next = id;
	if (nodes[id].depth < REPORT_INDENT_MAX)
		return 0;
	n = chain_length(l->t, o, id);
	if (n <= 2 * REPORT_CHAIN_ENDS)
		return 0;
	for (uint32_t k = 0; k < REPORT_CHAIN_ENDS; k++) {
		id = nodes[id].first_child;
		if (plan_node(pl, l, id) < 0)
			return -1;
	}
	skip = n - 2 * REPORT_CHAIN_ENDS;
	from = id;
	for (uint32_t k = 0; k < skip; k++)
		id = nodes[id].first_child;
	*next = id;
	return plan_add(pl, ITEM_CHAIN, from, skip, nodes[id].depth);
}

/* The lines of plan items [lo, hi) into a buffer. */
struct tree_chunk {
	const struct report_labels *l;
	const struct tree_plan *pl;
	const struct pv_report_options *o;
	size_t lo, hi;
	char *buf;
	size_t n, cap;
	bool oom;
};

static void *make_chunk(void *arg)
{
	struct tree_chunk *c = arg;

	c->n = 0;
	c->oom = false;
	for (size_t i = c->lo; i < c->hi; i++) {
		if (c->cap - c->n < LINE_MAX_LEN && pv_grow(&c->buf, &c->cap, c->n + LINE_MAX_LEN, 1) < 0) {
			c->oom = true;
			break;
		}
		c->n = (size_t)(tree_line(c->buf + c->n, c->l, &c->pl->items[i], c->o) - c->buf);
	}
	return NULL;
}

/* Lines a chunk; a plan of fewer than two is made by one thread. */
#define TREE_CHUNK_LINES 32768

static int write_plan(FILE *out, const struct report_labels *l, const struct tree_plan *pl,
		      const struct pv_report_options *o)
{
	struct tree_chunk c[2] = { { .l = l, .pl = pl, .o = o }, { .l = l, .pl = pl, .o = o } };
	int ret = 0;

	for (size_t at = 0; at < pl->n && ret == 0;) {
		pthread_t th;
		bool two;

		c[0].lo = at;
		c[0].hi = at + TREE_CHUNK_LINES < pl->n ? at + TREE_CHUNK_LINES : pl->n;
		c[1].lo = c[0].hi;
		c[1].hi = c[1].lo + TREE_CHUNK_LINES < pl->n ? c[1].lo + TREE_CHUNK_LINES : pl->n;
		two = c[1].hi > c[1].lo && pthread_create(&th, NULL, make_chunk, &c[1]) == 0;
		make_chunk(&c[0]);
		if (!two)
			c[1].hi = c[1].lo; /* made next time round */
		else
			pthread_join(th, NULL);
		for (int k = 0; k < (two ? 2 : 1); k++) {
			if (c[k].oom) {
				ret = -1;
				break;
			}
			fwrite_unlocked(c[k].buf, 1, c[k].n, out);
		}
		at = two ? c[1].hi : c[0].hi;
	}
	free(c[0].buf);
	free(c[1].buf);
	return ret;
}

int report_tree(FILE *out, const struct pv_report_ctx *rc)
{
	const struct calltree *t = rc->t;
	const struct pv_report_options *o = rc->o;
	const struct ct_node *nodes = t->nodes;
	uint32_t *stack, *kids;
	size_t sp = 0;
	const char *vname = pv_value_type(t) ? pv_value_type(t) : "";
	struct report_labels l;
	struct tree_plan pl = { 0 };
	int ret = -1;

	if (nodes[0].count == 0) {
		fprintf(out, "no samples%s\n", o->tid_filter ? " in the selected threads" : "");
		return 0;
	}
	if (report_labels_init(&l, t, REPORT_LABEL_MARK) < 0)
		return -1;
	stack = malloc(t->nnodes * sizeof *stack);
	kids = malloc(t->nnodes * sizeof *kids);
	if (!stack || !kids) {
		pv_oom();
		goto out;
	}
	if (vname[0] && report_heap_value(t))
		fprintf(out, "%s  samples %6s%%      ± %*s  function  location%s\n", bold_on(o),
			vname, REPORT_HEAP_COL, report_heap_col(t), attr_off(o));
	else if (vname[0])
		fprintf(out, "%s  samples %6s%%      ± %6s %s  function  location%s\n", bold_on(o),
			vname, pv_value_label(vname), ct_value_col(t), attr_off(o));
	else
		fprintf(out, "%s  samples  share%%      ±  function  location%s\n", bold_on(o), attr_off(o));

	/* Pre-order with an explicit stack, children pushed in reverse so the
	 * hottest is printed first.  Hidden children of a node are summed in
	 * one line, so nothing disappears without a trace.  Entries >=
	 * 0x80000000 are "hidden summary" markers for a parent. */
	stack[sp++] = 0;
	while (sp) {
		uint32_t id = stack[--sp];
		if (id & 0x80000000u) {
			if (plan_add(&pl, ITEM_HIDDEN, id & 0x7fffffffu, 0, 0) < 0)
				goto out;
			continue;
		}
		if (id != 0 && (plan_node(&pl, &l, id) < 0 || tree_chain(&pl, &l, id, o, &id) < 0))
			goto out;
		const struct ct_node *nd = &nodes[id];
		size_t nk = 0;
		bool hidden = false;
		for (uint32_t c = nd->first_child; c != PV_NONE; c = nodes[c].next_sibling) {
			if (visible(t, o, c))
				kids[nk++] = c;
			else
				hidden = true;
		}
		if (hidden && !o->quiet_hidden)
			stack[sp++] = id | 0x80000000u;
		while (nk)
			stack[sp++] = kids[--nk];
	}
	free(stack);
	free(kids);
	stack = kids = NULL;
	ret = write_plan(out, &l, &pl, o);
out:
	free(stack);
	free(kids);
	free(pl.items);
	report_labels_free(&l);
	return ret;
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
	char nx[REPORT_NAME_MAX], ny[REPORT_NAME_MAX];
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

int report_flat(FILE *out, const struct pv_report_ctx *rc)
{
	struct calltree *t = rc->t;
	const struct pv_report_options *o = rc->o;
	size_t n;
	struct ct_flat_row *rows = calltree_flat(t, &n);
	int64_t total = ct_weight(t, &t->nodes[0]);
	struct report_labels l;
	int ret = 0;

	if (!rows)
		return -1;
	if (t->nodes[0].count == 0) {
		fprintf(out, "no samples%s\n", o->tid_filter ? " in the selected threads" : "");
		free(rows);
		return 0;
	}
	if (report_labels_init(&l, t, REPORT_LABEL_MARK) < 0) {
		free(rows);
		return -1;
	}
	struct flat_order order = { t, o->sort };
	qsort_r(rows, n, sizeof *rows, cmp_rows, &order);
	const char *vname = pv_value_type(t) ? pv_value_type(t) : "";
	bool heap = report_heap_value(t);
	char selfcol[32] = "", cumcol[32] = "";
	if (heap) {
		snprintf(selfcol, sizeof selfcol, "self %s", report_heap_col(t));
		snprintf(cumcol, sizeof cumcol, "cum %s", report_heap_col(t));
	}
	fprintf(out, "%s     self %5s%%      cum %5s%%      ±%*s%*s  function  location%s\n", bold_on(o),
		vname[0] ? vname : "self", vname[0] ? vname : "cum", heap ? REPORT_HEAP_COL + 3 : 0, selfcol,
		heap ? REPORT_HEAP_COL + 3 : 0, cumcol, attr_off(o));
	for (size_t i = 0; i < n; i++) {
		const struct ct_flat_row *r = &rows[i];
		char line[LINE_MAX_LEN], *q = line;
		const char *name, *where;
		size_t nl, wl;

		if (r->cum_count == 0)
			continue;
		if (o->mincount > 0 && r->cum_count < o->mincount)
			continue;
		if (!(name = report_labels_frame(&l, r->frame, &nl, &where, &wl))) {
			ret = -1;
			break;
		}
		q = put_int(q, r->self_count, 9);
		*q++ = ' ';
		q = put_fixed(q, pv_percent(ct_self_weight(t, r), total), 5, 1);
		q = put_cstr(q, "% ");
		q = put_int(q, r->cum_count, 8);
		*q++ = ' ';
		q = put_fixed(q, pv_percent(ct_cum_weight(t, r), total), 5, 1);
		q = put_cstr(q, "% ");
		q = put_cstr(q, dim_on(o));
		q = put_fixed(q, ct_noise_samples(t, r->self_count, ct_self_weight(t, r), r->self_sq), 6, 0);
		q = put_cstr(q, attr_off(o));
		if (heap) {
			q = put_spaces(q, 3);
			q = put_heap_value(q, t, r->self_value);
			q = put_spaces(q, 3);
			q = put_heap_value(q, t, r->cum_value);
		}
		q = put_cstr(q, "  ");
		/* with kernel frames about, the names start in one column */
		if (t->kernel_frames && !calltree_frame_is_kernel(t, r->frame))
			q = put_spaces(q, CT_KERNEL_MARK_LEN);
		q = put_str(q, name, nl);
		if (wl) {
			q = put_cstr(q, "  ");
			q = put_cstr(q, dim_on(o));
			q = put_str(q, where, wl);
			q = put_cstr(q, attr_off(o));
		}
		*q++ = '\n';
		put_line(out, line, q);
	}
	report_labels_free(&l);
	free(rows);
	return ret;
}
