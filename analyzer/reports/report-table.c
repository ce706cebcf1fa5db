/* report-table.c - the flat and tree reports as tables: a comparison's
 * columns (diff.h), and --field-separator's machine-readable form of
 * every flat and tree report
 *
 * A table is a header row of column names and one row per function (flat)
 * or per node shown (tree).  Aligned for people, the text reports' way;
 * with a separator, no padding, no header lines above the table, no
 * summary rows, and every occurrence of the separator inside a field
 * replaced by '.' (as perf report's -t does), so a row always splits into
 * the same number of fields.
 */
#include "report-text.h"
#include "present.h"
#include "diff.h"
#include "error.h"
#include "escape.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 4096

struct table {
	FILE *out;
	const struct pv_report_options *o;
	const struct calltree *t;
	const char *sep;       /* NULL: aligned */
	bool first;            /* no separator before the next field */
	struct pv_strbuf line;
};

static void put(struct table *tb, const char *s, size_t n)
{
	pv_strbuf_add(&tb->line, s, n);
}

static void put_blanks(struct table *tb, int n)
{
	static const char blanks[] = "                                ";

	while (n > 0) {
		int k = n < (int)sizeof blanks - 1 ? n : (int)sizeof blanks - 1;
		put(tb, blanks, (size_t)k);
		n -= k;
	}
}

/* A field: right-aligned to width when aligned (negative: left, no
 * padding after the last), separated when not; the separator inside it
 * becomes '.'. */
static void field(struct table *tb, int width, const char *s)
{
	size_t n = strlen(s);

	if (tb->sep) {
		size_t k = strlen(tb->sep);
		const char *hit;
		if (!tb->first)
			put(tb, tb->sep, k);
		tb->first = false;
		while ((hit = strstr(s, tb->sep))) {
			put(tb, s, (size_t)(hit - s));
			put(tb, ".", 1);
			s = hit + k;
		}
		put(tb, s, strlen(s));
		return;
	}
	if (!tb->first)
		put(tb, "  ", 2);
	tb->first = false;
	put_blanks(tb, width - (int)n);
	put(tb, s, n);
	put_blanks(tb, -width - (int)n);
}

static int end_row(struct table *tb)
{
	struct pv_strbuf *l = &tb->line;

	if (l->failed)
		return pv_oom();
	/* no trailing blanks from a padded last column */
	while (l->len && l->s[l->len - 1] == ' ')
		l->len--;
	put(tb, "\n", 1);
	if (l->failed)
		return pv_oom();
	fwrite(l->s, 1, l->len, tb->out);
	l->len = 0;
	tb->first = true;
	return 0;
}

static const char *integer(char *buf, int64_t v)
{
	return pv_fixed(buf, (double)v, 0, false);
}

static const char *color_of(const struct table *tb, enum pv_verdict v)
{
	if (!tb->o->color || tb->sep)
		return "";
	return v == PV_VERDICT_WORSE ? "\033[31m" : v == PV_VERDICT_BETTER ? "\033[34m" : "";
}

/* The comparison's columns of one cell. */
static void diff_fields(struct table *tb, const struct pv_diff_cell *c)
{
	char buf[64];
	const char *col = color_of(tb, c->verdict);

	field(tb, 10, pv_weight_text(tb->t, buf, c->base, false));
	field(tb, 10, pv_weight_text(tb->t, buf, c->new_, false));
	field(tb, 10, pv_weight_text(tb->t, buf, c->delta, !tb->sep));
	field(tb, 7, pv_diff_pct_text(buf, sizeof buf, c->pct));
	field(tb, 7, pv_diff_q_text(buf, sizeof buf, c->q));
	if (tb->sep) {
		field(tb, 0, pv_verdict_name(c->verdict));
	} else {
		char v[64];
		snprintf(v, sizeof v, "%s%s%s", col, pv_verdict_name(c->verdict), col[0] ? "\033[0m" : "");
		/* the escapes take no room on the screen */
		field(tb, -7 - (int)(strlen(v) - strlen(pv_verdict_name(c->verdict))), v);
	}
}

static void diff_header(struct table *tb)
{
	const char *vn = pv_value_type(tb->t);
	char b[64], n[64], d[64];

	if (tb->sep || !vn) {
		field(tb, 10, "base");
		field(tb, 10, "new");
		field(tb, 10, "delta");
	} else {
		/* the unit for people: "base ms" */
		snprintf(b, sizeof b, "base %s", ct_value_col(tb->t));
		snprintf(n, sizeof n, "new %s", ct_value_col(tb->t));
		snprintf(d, sizeof d, "delta %s", ct_value_col(tb->t));
		field(tb, 10, b);
		field(tb, 10, n);
		field(tb, 10, d);
	}
	field(tb, 7, tb->sep ? "delta_pct" : "delta%");
	field(tb, 7, "q");
	field(tb, -7, "verdict");
}

/* The name and location of a frame (or a node that is no frame), escaped;
 * a kernel frame's name after CT_KERNEL_MARK.  pad: the other names of an
 * aligned column that has kernel frames in it start where theirs do. */
static void name_fields(struct table *tb, uint32_t node, int64_t frame, bool pad)
{
	char raw[NAME_MAX_LEN], esc[NAME_MAX_LEN];
	bool kernel = frame >= 0 && calltree_frame_is_kernel(tb->t, (uint32_t)frame);
	size_t at = kernel || (pad && !tb->sep && tb->t->kernel_frames) ? CT_KERNEL_MARK_LEN : 0;

	if (frame >= 0)
		calltree_frame_name(tb->t, (uint32_t)frame, raw, sizeof raw);
	else
		calltree_node_name(tb->t, node, raw, sizeof raw);
	memcpy(esc, kernel ? CT_KERNEL_MARK : "    ", at);
	pv_escape(esc + at, sizeof esc - at, raw);
	field(tb, 0, esc);
	if (frame >= 0)
		calltree_frame_where(tb->t, (uint32_t)frame, raw, sizeof raw);
	else
		raw[0] = '\0';
	if (tb->sep || raw[0])
		field(tb, 0, pv_escape(esc, sizeof esc, raw));
}

/* The flat report. */

struct flat_sort {
	const struct calltree *t;
	const struct ct_flat_row *rows;
	const struct pv_diff_cell *cells; /* the comparison's tested cells, or NULL */
	enum report_sort sort;
};

static int cmp_flat(const void *a, const void *b, void *ctx)
{
	const struct flat_sort *fs = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct ct_flat_row *x = &fs->rows[i], *y = &fs->rows[j];
	char nx[NAME_MAX_LEN], ny[NAME_MAX_LEN];
	int c;

	if (fs->sort != SORT_NAME) {
		if (fs->cells) {
			double dx = fabs(fs->cells[i].delta), dy = fabs(fs->cells[j].delta);
			if (dx != dy)
				return dx > dy ? -1 : 1;
			if (fs->cells[i].delta != fs->cells[j].delta)
				return fs->cells[i].delta > fs->cells[j].delta ? -1 : 1;
		} else {
			int64_t sx = ct_self_weight(fs->t, x), sy = ct_self_weight(fs->t, y);
			int64_t cx = ct_cum_weight(fs->t, x), cy = ct_cum_weight(fs->t, y);
			if (fs->sort == SORT_COUNT && sx != sy)
				return sx > sy ? -1 : 1;
			if (cx != cy)
				return cx > cy ? -1 : 1;
		}
	} else {
		calltree_frame_where(fs->t, x->frame, nx, sizeof nx);
		calltree_frame_where(fs->t, y->frame, ny, sizeof ny);
		if ((c = strcmp(nx, ny)))
			return c;
	}
	calltree_frame_name(fs->t, x->frame, nx, sizeof nx);
	calltree_frame_name(fs->t, y->frame, ny, sizeof ny);
	if ((c = strcmp(nx, ny)))
		return c;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

int report_table_flat(FILE *out, const struct pv_report_ctx *rc)
{
	struct calltree *t = rc->t;
	const struct pv_report_options *o = rc->o;
	struct table tb = { .out = out, .o = o, .t = t, .sep = o->field_sep, .first = true };
	/* a comparison's rows and cells: made and tested once, by
	 * pv_report_prepare */
	size_t n = rc->nrows;
	struct ct_flat_row *rows = rc->rows, *own = NULL;
	const struct pv_diff_cell *cells = NULL;
	uint32_t *order = NULL;
	const char *vn = pv_value_type(t);
	int64_t total = ct_weight(t, &t->nodes[0]);
	int ret = -1;
	char buf[64];

	if (t->dn && rc->self && rc->cum) {
		/* the flat view tests what it is sorted by: self, or cum */
		cells = o->sort == SORT_CUM ? rc->cum : rc->self;
	} else if (!(rows = own = calltree_flat(t, &n))) {
		return -1;
	}
	if (!(order = pv_budget_calloc(n ? n : 1, sizeof *order))) {
		pv_oom();
		goto out;
	}
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const struct ct_flat_row *r = &rows[i];
		int64_t c = r->cum_count > r->base_cum_count ? r->cum_count : r->base_cum_count;
		if (c == 0 || (o->mincount > 0 && c < o->mincount))
			continue;
		if (o->significant && cells && cells[i].verdict == PV_VERDICT_NONE)
			continue;
		order[m++] = (uint32_t)i;
	}
	struct flat_sort fs = { t, rows, cells, o->sort };
	qsort_r(order, m, sizeof *order, cmp_flat, &fs);

	if (cells) {
		diff_header(&tb);
	} else {
		char a[64], c[64];
		field(&tb, 9, tb.sep ? "self_samples" : "self");
		field(&tb, 6, tb.sep ? "self_pct" : "self%");
		field(&tb, 8, tb.sep ? "cum_samples" : "cum");
		field(&tb, 6, tb.sep ? "cum_pct" : "cum%");
		field(&tb, 6, tb.sep ? "noise" : "±");
		if (vn) {
			snprintf(a, sizeof a, tb.sep ? "self_%s_%s" : "self %.0s%s", vn, ct_value_col(t));
			snprintf(c, sizeof c, tb.sep ? "cum_%s_%s" : "cum %.0s%s", vn, ct_value_col(t));
			field(&tb, 10, a);
			field(&tb, 10, c);
		}
	}
	field(&tb, 0, "function");
	field(&tb, 0, "location");
	if (end_row(&tb) < 0)
		goto out;
	for (size_t k = 0; k < m; k++) {
		const struct ct_flat_row *r = &rows[order[k]];
		if (cells) {
			diff_fields(&tb, &cells[order[k]]);
		} else {
			integer(buf, r->self_count);
			field(&tb, 9, buf);
			pv_fixed(buf, pv_percent(ct_self_weight(t, r), total), 1, false);
			field(&tb, 6, buf);
			integer(buf, r->cum_count);
			field(&tb, 8, buf);
			pv_fixed(buf, pv_percent(ct_cum_weight(t, r), total), 1, false);
			field(&tb, 6, buf);
			pv_fixed(buf, ct_noise_samples(t, r->self_count, ct_self_weight(t, r), r->self_sq),
				 tb.sep ? 2 : 0, false);
			field(&tb, 6, buf);
			if (vn) {
				pv_fixed(buf, (double)r->self_value / ct_value_div(t), 3, false);
				field(&tb, 10, buf);
				pv_fixed(buf, (double)r->cum_value / ct_value_div(t), 3, false);
				field(&tb, 10, buf);
			}
		}
		name_fields(&tb, 0, r->frame, true);
		if (end_row(&tb) < 0)
			goto out;
	}
	ret = 0;
out:
	free(tb.line.s);
	free(order);
	free(own);
	return ret;
}

/* The tree report: pre-order, the pruning of the text tree (a node shown
 * when its count, the larger side's in a comparison, passes --mincount,
 * --maxdepth and the noise floor against its parent's), no summary rows. */

static bool shown(const struct calltree *t, const struct pv_report_options *o, uint32_t i)
{
	int64_t n = ct_node_n(t, i);

	if (o->mincount > 0 && n < o->mincount)
		return false;
	if (o->maxdepth > 0 && t->nodes[i].depth > (uint32_t)o->maxdepth)
		return false;
	return !ct_node_below_floor(t, i, o->noisefloor);
}

/* Has node i, or a node below it, a verdict? (--significant) */
static bool *significant_below(const struct calltree *t, const struct pv_diff_cell *cells)
{
	bool *s = calloc(t->nnodes ? t->nnodes : 1, sizeof *s);

	if (!s) {
		pv_oom();
		return NULL;
	}
	/* children come after their parents */
	for (size_t i = t->nnodes; i-- > 0;) {
		if (cells[i].verdict != PV_VERDICT_NONE)
			s[i] = true;
		if (s[i] && i > 0)
			s[t->nodes[i].parent] = true;
	}
	return s;
}

int report_table_tree(FILE *out, const struct pv_report_ctx *rc)
{
	const struct calltree *t = rc->t;
	const struct pv_report_options *o = rc->o;
	struct table tb = { .out = out, .o = o, .t = t, .sep = o->field_sep, .first = true };
	const struct pv_diff_cell *cells = t->dn ? rc->cells : NULL; /* tested once, by pv_report_prepare */
	bool *keep = NULL;
	uint32_t *stack = NULL, *kids = NULL;
	size_t sp = 0;
	const char *vn = pv_value_type(t);
	int64_t total = ct_weight(t, &t->nodes[0]);
	int ret = -1;
	char buf[64];

	if (cells && o->significant && !(keep = significant_below(t, cells)))
		goto out;
	stack = malloc((t->nnodes + 1) * sizeof *stack);
	kids = malloc((t->nnodes + 1) * sizeof *kids);
	if (!stack || !kids) {
		pv_oom();
		goto out;
	}
	if (tb.sep) {
		field(&tb, 0, "id");
		field(&tb, 0, "parent");
		field(&tb, 0, "depth");
	}
	if (cells) {
		diff_header(&tb);
	} else {
		field(&tb, 9, "samples");
		field(&tb, 6, tb.sep ? "pct" : "share%");
		field(&tb, 6, tb.sep ? "noise" : "±");
		if (vn) {
			char a[64];
			snprintf(a, sizeof a, tb.sep ? "%s_%s" : "%s %s", vn, ct_value_col(t));
			field(&tb, 10, a);
		}
	}
	field(&tb, 0, "function");
	field(&tb, 0, "location");
	if (end_row(&tb) < 0)
		goto out;

	stack[sp++] = 0;
	while (sp) {
		uint32_t id = stack[--sp];
		const struct ct_node *nd = &t->nodes[id];
		size_t nk = 0;

		if (id != 0) {
			if (tb.sep) {
				integer(buf, id);
				field(&tb, 0, buf);
				integer(buf, nd->parent);
				field(&tb, 0, buf);
				integer(buf, nd->depth);
				field(&tb, 0, buf);
			}
			if (cells) {
				diff_fields(&tb, &cells[id]);
			} else {
				integer(buf, nd->count);
				field(&tb, 9, buf);
				pv_fixed(buf, pv_percent(ct_weight(t, nd), total), 1, false);
				field(&tb, 6, buf);
				pv_fixed(buf, ct_node_noise(t, nd), tb.sep ? 2 : 0, false);
				field(&tb, 6, buf);
				if (vn) {
					pv_fixed(buf, (double)nd->value / ct_value_div(t), tb.sep ? 3 : 1, false);
					field(&tb, 10, buf);
				}
			}
			if (!tb.sep) {
				/* the name indented by depth */
				uint32_t d = nd->depth > REPORT_INDENT_MAX ? REPORT_INDENT_MAX : nd->depth;
				put_blanks(&tb, 2 * (int)d);
				tb.first = true;
			}
			name_fields(&tb, id, nd->kind == CT_FRAME ? (int64_t)nd->frame : -1, false);
			if (end_row(&tb) < 0)
				goto out;
		}
		for (uint32_t c = nd->first_child; c != PV_NONE; c = t->nodes[c].next_sibling)
			if (shown(t, o, c) && (!keep || keep[c]))
				kids[nk++] = c;
		while (nk)
			stack[sp++] = kids[--nk];
	}
	ret = 0;
out:
	free(tb.line.s);
	free(stack);
	free(kids);
	free(keep);
	return ret;
}
