/* browser.c - the call tree browsed on a terminal */
#include "browser.h"
#include "tree-widget.h"

#include "error.h"
#include "filter.h"
#include "merge.h"
#include "outfile.h"
#include "pipeline.h"
#include "report-flame.h"
#include "report-svg.h"
#include "report-text.h"

#include <errno.h>
#include <inttypes.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <ncurses.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One entry of the stack Backspace unwinds. */
enum action_kind { ACT_ZOOM, ACT_FOCUS, ACT_IGNORE, ACT_HIDE, ACT_CALLERS };

struct action {
	enum action_kind kind;
	uint32_t node;         /* ACT_ZOOM: the new root, a node of the tree of its time */
	char *name;            /* the filters: a function name */
};

enum { HEADER_LINES = 4 };

struct browser {
	const struct pv_profile *orig; /* as read, before any view */
	struct pv_view base;           /* the command line's view (pipeline.h) */
	struct pv_result res;          /* the view shown: its profile and tree */
	struct calltree *t;            /* res.t */
	struct ct_options copt;        /* granularity and value in force */
	uint32_t tid;                  /* T: the one thread shown, 0 all */
	/* --tid with several threads: the browser starts on them, and T
	 * offers them again (THREADS_CMD in the picker) */
	const uint32_t *cmd_tids; size_t ncmd_tids;
	bool on_cmd_tids;
	double floor;
	bool color;
	const char *ellipsis;

	struct tree_widget *w;
	uint32_t root;                 /* the view's root node */
	struct action *acts; size_t nacts, cap_acts;

	/* The flat view. */
	bool flat;
	bool flat_by_cum;
	struct ct_flat_row *rows; size_t nrows, fcursor, ftop;

	/* Search. */
	bool have_re;
	regex_t re;
	char pattern[256];
	uint32_t *order;               /* pre-order rank of each node */
	uint32_t *matches; size_t nmatches;
	int64_t match_weight;

	char status[10000];
	char last_error[512];          /* the last error said while browsing */
	int exports;
	bool help;

	/* T: the thread picker, a row per thread and one for all. */
	bool picking;
	struct thread_row *trows; size_t ntrows, tcursor, ttop;
};

/* The picker's row for the command line's threads (--tid=A,B). */
#define THREADS_CMD UINT32_MAX

struct thread_row {
	uint32_t tid;          /* 0: all threads; THREADS_CMD: those of --tid */
	uint32_t name;         /* string index of the thread's name */
	int64_t count, value;  /* its samples and their weight (as the tree's) */
	int64_t cpu_ns;        /* the CPU time the collector measured, -1 unknown */
};

/* The browser whose status line the messages go to while the screen is
 * its (one at a time). */
static struct browser *sink_browser;

static void status_sink(enum pv_level level, const char *msg)
{
	struct browser *b = sink_browser;

	if (!b || level == PV_LEVEL_NOTE)
		return;
	snprintf(b->status, sizeof b->status, "%s%s", level == PV_LEVEL_ERROR ? "" : "warning: ", msg);
	if (level == PV_LEVEL_ERROR)
		snprintf(b->last_error, sizeof b->last_error, "%s", msg);
}

static double pct(int64_t part, int64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *node_function(const struct browser *b, uint32_t node)
{
	const struct ct_node *nd = &b->t->nodes[node];
	const struct ct_frame *fr;

	if (nd->kind != CT_FRAME)
		return "";
	fr = &b->t->frames[nd->frame];
	if (fr->function == PV_NONE)
		return pv_str(b->t->p, fr->file);
	return pv_str(b->t->p, b->t->p->functions[fr->function].name);
}

static const char *node_name(const struct browser *b, uint32_t node, char *buf, size_t n)
{
	const struct ct_node *nd = &b->t->nodes[node];

	if (nd->kind == CT_ROOT)
		return "[all]";
	if (nd->kind == CT_THREAD) {
		const struct pv_thread *th;
		/* samples with no thread (folded stacks, gperftools) */
		if (nd->frame >= b->t->p->nthreads)
			return "[unknown thread]";
		th = &b->t->p->threads[nd->frame];
		snprintf(buf, n, "[thread %" PRIu32 " \"%s\"]", th->tid, pv_str(b->t->p, th->name));
		return buf;
	}
	return calltree_frame_name(b->t, nd->frame, buf, n);
}

/* ---- the model side: copies, filters, inversion ------------------------ */


/* "^name$" with the name's special characters escaped. */
static char *exact_re(const char *name)
{
	size_t n = strlen(name);
	char *re = malloc(2 * n + 3), *o = re;

	if (!re)
		return NULL;
	*o++ = '^';
	for (const char *c = name; *c; c++) {
		if (strchr("\\^$.|?*+()[]{}", *c))
			*o++ = '\\';
		*o++ = *c;
	}
	*o++ = '$';
	*o = 0;
	return re;
}

static void expand_hot_path(struct browser *b)
{
	uint32_t n = b->root;
	uint32_t path[4096];
	size_t k = 0;

	for (;;) {
		if (k < sizeof path / sizeof *path)
			path[k++] = n;
		uint32_t c = b->t->nodes[n].first_child;
		if (c == PV_NONE)
			break;
		n = c;
	}
	/* The real root is not a row: its children are. */
	if (b->t->nodes[b->root].kind == CT_ROOT && k > 1)
		tree_widget_reveal(b->w, path + 1, k - 1);
	else
		tree_widget_reveal(b->w, path, k);
	b->w->cursor = 0;
}

static int set_view(struct browser *b)
{
	uint32_t roots_buf[1];
	const struct ct_node *r = &b->t->nodes[b->root];

	if (r->kind == CT_ROOT) {
		size_t n = 0;
		uint32_t *roots = malloc((r->nchildren + 1) * sizeof *roots);
		if (!roots)
			return -1;
		for (uint32_t c = r->first_child; c != PV_NONE; c = b->t->nodes[c].next_sibling)
			roots[n++] = c;
		int ret = tree_widget_set_roots(b->w, roots, n);
		free(roots);
		if (ret < 0)
			return -1;
	} else {
		roots_buf[0] = b->root;
		if (tree_widget_set_roots(b->w, roots_buf, 1) < 0)
			return -1;
	}
	expand_hot_path(b);
	return 0;
}

static void clear_search(struct browser *b)
{
	free(b->matches);
	free(b->order);
	b->matches = NULL;
	b->order = NULL;
	b->nmatches = 0;
	b->match_weight = 0;
}

static int compute_search(struct browser *b);

/* Build the tree again: the command line's view with the thread, the
 * granularity and value in force, and the browser's actions after its
 * steps, in order (pipeline.h: F turns the stacks upside down once and
 * re-roots them at its function, a later F at a caller, f then g giving
 * the callers of g on the paths to f); zoom entries above the last filter
 * re-root the view. */
static int rebuild(struct browser *b)
{
	size_t n = b->base.nsteps;
	struct pv_step *steps = calloc(n + b->nacts + 1, sizeof *steps);
	struct pv_filters *groups = calloc(b->nacts + 1, sizeof *groups);
	char **res = calloc(b->nacts + 1, sizeof *res), **labels = calloc(b->nacts + 1, sizeof *labels);
	struct pv_view view = b->base;
	struct pv_result r;
	int ret = -1;

	if (!steps || !groups || !res || !labels)
		goto out;
	memcpy(steps, b->base.steps, n * sizeof *steps);
	for (size_t i = 0; i < b->nacts; i++) {
		static const char *const kn[] = { "zoom", "focus", "ignore", "hide", "callers" };
		const struct action *a = &b->acts[i];
		const char *err;
		if (a->kind == ACT_ZOOM)
			continue;
		if (!(res[i] = exact_re(a->name)) || asprintf(&labels[i], "%s=%s", kn[a->kind], a->name) < 0) {
			labels[i] = NULL;
			goto out;
		}
		if (a->kind == ACT_CALLERS) {
			steps[n++] = (struct pv_step){ .kind = PV_STEP_CALLERS, .re = res[i], .label = labels[i] };
			continue;
		}
		if (pv_filters_add(&groups[i], a->kind == ACT_FOCUS ? PV_FILTER_FOCUS
					       : a->kind == ACT_IGNORE ? PV_FILTER_IGNORE : PV_FILTER_HIDE,
				   res[i], &err) < 0)
			goto out;
		steps[n++] = (struct pv_step){ .kind = PV_STEP_FILTERS, .filters = &groups[i], .label = labels[i] };
	}
	view.steps = steps;
	view.nsteps = n;
	if (b->on_cmd_tids) {
		view.tids = b->cmd_tids;
		view.ntids = b->ncmd_tids;
	} else {
		view.tids = b->tid ? &b->tid : NULL;
		view.ntids = b->tid ? 1 : 0;
	}
	view.granularity = b->copt.granularity;
	view.by_thread = b->copt.by_thread;
	view.sample_index = b->copt.sample_index;
	if (pv_view_run_copy(b->orig, &view, true, &r) < 0)
		goto out;
	pv_result_free(&b->res);
	b->res = r;
	b->t = r.t;
	b->root = 0;
	for (size_t i = 0; i < b->nacts; i++)
		if (b->acts[i].kind == ACT_ZOOM && b->acts[i].node < b->t->nnodes)
			b->root = b->acts[i].node;
		else if (b->acts[i].kind != ACT_ZOOM)
			b->root = 0;
	free(b->rows);
	b->rows = NULL;
	b->nrows = b->fcursor = b->ftop = 0;
	if (tree_widget_reset(b->w, b->t->nnodes) < 0 || set_view(b) < 0)
		goto out;
	clear_search(b);
	if (b->have_re && compute_search(b) < 0)
		goto out;
	ret = 0;
out:
	for (size_t i = 0; res && labels && groups && i < b->nacts; i++) {
		free(res[i]);
		free(labels[i]);
		pv_filters_free(&groups[i]);
	}
	free(res);
	free(labels);
	free(groups);
	free(steps);
	return ret;
}

static int push_action(struct browser *b, enum action_kind kind, uint32_t node, const char *name)
{
	if (b->nacts == b->cap_acts) {
		size_t cap = b->cap_acts ? 2 * b->cap_acts : 16;
		struct action *a = realloc(b->acts, cap * sizeof *a);
		if (!a)
			return -1;
		b->acts = a;
		b->cap_acts = cap;
	}
	char *s = name ? strdup(name) : NULL;
	if (name && !s)
		return -1;
	b->acts[b->nacts++] = (struct action){ kind, node, s };
	return 0;
}

/* Drop the zoom entries (after the tree's nodes changed meaning). */
static void drop_zooms(struct browser *b)
{
	size_t k = 0;

	for (size_t i = 0; i < b->nacts; i++)
		if (b->acts[i].kind != ACT_ZOOM)
			b->acts[k++] = b->acts[i];
	b->nacts = k;
}

/* ---- search ------------------------------------------------------------ */

/* Pre-order walk of the view's subtree calling fn on each node. */
static int walk(struct browser *b, int (*fn)(struct browser *, uint32_t, uint32_t), uint32_t *count)
{
	size_t cap = 256, n = 0;
	uint32_t *stack = malloc(cap * sizeof *stack);
	uint32_t rank = 0;

	if (!stack)
		return -1;
	stack[n++] = b->root;
	while (n) {
		uint32_t x = stack[--n];
		if (fn(b, x, rank++) < 0) {
			free(stack);
			return -1;
		}
		/* Push children in reverse so the first is visited first. */
		size_t base = n;
		for (uint32_t c = b->t->nodes[x].first_child; c != PV_NONE; c = b->t->nodes[c].next_sibling) {
			if (n == cap) {
				uint32_t *s = realloc(stack, 2 * cap * sizeof *s);
				if (!s) {
					free(stack);
					return -1;
				}
				stack = s;
				cap *= 2;
			}
			stack[n++] = c;
		}
		for (size_t i = base, j = n; i + 1 < j; i++, j--) {
			uint32_t tmp = stack[i];
			stack[i] = stack[j - 1];
			stack[j - 1] = tmp;
		}
	}
	free(stack);
	if (count)
		*count = rank;
	return 0;
}

static int search_visit(struct browser *b, uint32_t node, uint32_t rank)
{
	b->order[node] = rank;
	if (b->t->nodes[node].kind != CT_FRAME || regexec(&b->re, node_function(b, node), 0, NULL, 0) != 0)
		return 0;
	b->matches[b->nmatches++] = node;
	/* Count the weight once: not under a matching ancestor. */
	for (uint32_t a = b->t->nodes[node].parent; a != PV_NONE && a != b->t->nodes[b->root].parent;
	     a = b->t->nodes[a].parent)
		if (b->t->nodes[a].kind == CT_FRAME && regexec(&b->re, node_function(b, a), 0, NULL, 0) == 0)
			return 0;
	b->match_weight += ct_weight(b->t, &b->t->nodes[node]);
	return 0;
}

static int compute_search(struct browser *b)
{
	clear_search(b);
	b->order = malloc((b->t->nnodes + 1) * sizeof *b->order);
	b->matches = malloc((b->t->nnodes + 1) * sizeof *b->matches);
	if (!b->order || !b->matches)
		return -1;
	for (size_t i = 0; i < b->t->nnodes; i++)
		b->order[i] = UINT32_MAX;
	return walk(b, search_visit, NULL);
}

static void goto_match(struct browser *b, bool forward)
{
	uint32_t cur = tree_widget_current(b->w);
	uint32_t rank = cur != TW_NONE ? b->order[cur] : 0;
	uint32_t best = TW_NONE;
	uint32_t path[4096];
	size_t k = 0;

	if (!b->nmatches) {
		snprintf(b->status, sizeof b->status, "no match for /%s/", b->pattern);
		return;
	}
	/* matches[] is in pre-order. */
	if (forward) {
		for (size_t i = 0; i < b->nmatches && best == TW_NONE; i++)
			if (b->order[b->matches[i]] > rank || cur == TW_NONE)
				best = b->matches[i];
		if (best == TW_NONE)
			best = b->matches[0];
	} else {
		for (size_t i = b->nmatches; i-- > 0 && best == TW_NONE;)
			if (b->order[b->matches[i]] < rank)
				best = b->matches[i];
		if (best == TW_NONE)
			best = b->matches[b->nmatches - 1];
	}
	for (uint32_t n = best; n != PV_NONE && k < sizeof path / sizeof *path; n = b->t->nodes[n].parent) {
		if (b->t->nodes[n].kind == CT_ROOT)
			break;
		path[k++] = n;
		if (n == b->root)
			break;
	}
	for (size_t i = 0; i < k / 2; i++) {
		uint32_t tmp = path[i];
		path[i] = path[k - 1 - i];
		path[k - 1 - i] = tmp;
	}
	tree_widget_reveal(b->w, path, k);
	size_t idx = 0;
	for (size_t i = 0; i < b->nmatches; i++)
		if (b->matches[i] == best)
			idx = i + 1;
	snprintf(b->status, sizeof b->status, "match %zu of %zu for /%s/ (%.1f%% in all)", idx, b->nmatches,
		 b->pattern, pct(b->match_weight, ct_weight(b->t, &b->t->nodes[0])));
}

/* ---- drawing ----------------------------------------------------------- */

/* Print s in at most width columns, cut with an ellipsis. */
static void put_cut(struct browser *b, const char *s, int width)
{
	int len = (int)strlen(s);

	if (width <= 0)
		return;
	if (len <= width) {
		addstr(s);
		return;
	}
	int el = (int)strlen(b->ellipsis) > 1 ? 1 : 3;
	if (width <= el) {
		addnstr(s, width);
		return;
	}
	addnstr(s, width - el);
	addstr(b->ellipsis);
}

static bool below_floor(const struct browser *b, uint32_t node)
{
	const struct ct_node *nd = &b->t->nodes[node];
	int64_t pn;

	if (b->floor <= 0 || nd->parent == PV_NONE)
		return false;
	pn = b->t->nodes[nd->parent].count;
	return (double)nd->count <= b->floor * sqrt((double)pn);
}

static uint32_t cb_first_child(void *ctx, uint32_t item)
{
	struct browser *b = ctx;
	uint32_t c = b->t->nodes[item].first_child;
	return c == PV_NONE ? TW_NONE : c;
}

static uint32_t cb_next_sibling(void *ctx, uint32_t item)
{
	struct browser *b = ctx;
	uint32_t c = b->t->nodes[item].next_sibling;
	return c == PV_NONE ? TW_NONE : c;
}

static void cb_draw(void *ctx, uint32_t item, int depth, bool expanded, bool kids, bool selected, int y,
		    int width)
{
	struct browser *b = ctx;
	const struct ct_node *nd = &b->t->nodes[item];
	int64_t total = ct_weight(b->t, &b->t->nodes[0]);
	int64_t selfw = b->t->v_value != PV_NONE ? nd->self_value : nd->self_count;
	char line[128], nbuf[512], wbuf[512], text[1200];
	attr_t attr = 0;

	if (below_floor(b, item))
		attr |= A_DIM;
	if (selected)
		attr |= A_REVERSE;
	attrset(attr);
	if (selected) {
		move(y, 0);
		for (int i = 0; i < width; i++)
			addch(' ');
	}
	snprintf(line, sizeof line, "%6.1f%% %6.1f%% %8" PRId64 " ±%-5.0f ", pct(ct_weight(b->t, nd), total),
		 pct(selfw, total), nd->count, sqrt((double)nd->count));
	mvaddnstr(y, 0, line, width);
	int x = (int)strlen(line) - 1; /* ± is two bytes, one column */
	const char *name = node_name(b, item, nbuf, sizeof nbuf);
	const char *where = nd->kind == CT_FRAME ? calltree_frame_where(b->t, nd->frame, wbuf, sizeof wbuf) : "";
	int indent = 2 * depth;
	if (indent > width / 2)
		indent = width / 2;
	snprintf(text, sizeof text, "%*s%s %s%s%s", indent, "", kids ? (expanded ? "-" : "+") : " ", name,
		 *where ? "  " : "", where);
	move(y, x);
	put_cut(b, text, width - x);
	attrset(A_NORMAL);
}

/* ---- flat lists: the flat view and the thread picker ---------------- */

/* Scroll *top so that row cursor is among the height rows shown. */
static void list_scroll(size_t cursor, size_t *top, int height)
{
	if (cursor < *top)
		*top = cursor;
	if (height > 0 && cursor >= *top + (size_t)height)
		*top = cursor - (size_t)height + 1;
}

/* Draw one row of a list at line y, across the width when selected. */
static void list_row(struct browser *b, int y, const char *line, int width, bool selected)
{
	if (selected) {
		attrset(A_REVERSE);
		for (int i = 0; i < width; i++)
			addch(' ');
		move(y, 0);
	}
	put_cut(b, line, width + 1);
	attrset(A_NORMAL);
}

/* The cursor of a list of n rows after a movement key (unchanged for any
 * other key). */
static size_t list_move(size_t cursor, size_t n, int ch, int page)
{
	long d = 0, c;

	switch (ch) {
	case KEY_UP: case 'k': d = -1; break;
	case KEY_DOWN: case 'j': d = 1; break;
	case KEY_PPAGE: d = -page; break;
	case KEY_NPAGE: d = page; break;
	case KEY_HOME: d = -(long)n; break;
	case KEY_END: d = (long)n; break;
	}
	c = (long)cursor + d;
	if (c >= (long)n)
		c = (long)n - 1;
	return c < 0 ? 0 : (size_t)c;
}

static void draw_flat(struct browser *b, int y0, int height, int width)
{
	int64_t total = ct_weight(b->t, &b->t->nodes[0]);

	list_scroll(b->fcursor, &b->ftop, height);
	for (int y = 0; y < height; y++) {
		size_t r = b->ftop + (size_t)y;
		move(y0 + y, 0);
		clrtoeol();
		if (r >= b->nrows)
			continue;
		const struct ct_flat_row *row = &b->rows[r];
		char line[1400], nbuf[512], wbuf[512];
		snprintf(line, sizeof line, "%6.1f%% %6.1f%% %8" PRId64 " ±%-5.0f %s  %s",
			 pct(ct_self_weight(b->t, row), total), pct(ct_cum_weight(b->t, row), total),
			 row->self_count, sqrt((double)row->self_count),
			 calltree_frame_name(b->t, row->frame, nbuf, sizeof nbuf),
			 calltree_frame_where(b->t, row->frame, wbuf, sizeof wbuf));
		list_row(b, y0 + y, line, width, r == b->fcursor);
	}
}

static const struct browser *sort_ctx;

static int cmp_rows(const void *x, const void *y)
{
	const struct ct_flat_row *a = x, *c = y;
	int64_t wa, wc;

	if (sort_ctx->flat_by_cum) {
		wa = ct_cum_weight(sort_ctx->t, a);
		wc = ct_cum_weight(sort_ctx->t, c);
	} else {
		wa = ct_self_weight(sort_ctx->t, a);
		wc = ct_self_weight(sort_ctx->t, c);
	}
	if (wa != wc)
		return wa > wc ? -1 : 1;
	return a->frame < c->frame ? -1 : a->frame > c->frame;
}

static int make_flat(struct browser *b)
{
	if (!b->rows && !(b->rows = calltree_flat(b->t, &b->nrows)))
		return -1;
	sort_ctx = b;
	qsort(b->rows, b->nrows, sizeof *b->rows, cmp_rows);
	return 0;
}

static const char *const help_lines[] = {
	"profview: keys",
	"",
	"  Up, Down, j, k      move the cursor           PgUp, PgDn, Home, End   by pages, to the ends",
	"  Enter, Space        expand or collapse the node under the cursor",
	"  Right, Left         expand; collapse (or go to the parent)",
	"  *                   expand the whole subtree  + / -   expand / collapse everything",
	"  z                   zoom: the node becomes the root",
	"  f                   focus on the function: only the samples through it",
	"  F                   callers of the function: the inverted tree rooted at it",
	"  i                   ignore the function: drop the samples through it",
	"  h                   hide the function: remove its frames from the stacks",
	"  Backspace, u        undo the last zoom or filter",
	"  /                   search function names (extended regular expression)",
	"  n, N                next, previous match",
	"  < >                 lower, raise the noise floor (dimmed: n <= K*sqrt(parent n))",
	"  t                   toggle the flat view      s   sort it by self or cumulative",
	"  T                   pick a thread (or all)    g   functions or source lines",
	"  e, E                export the view as a flame graph, as a call graph (SVG)",
	"  ?                   this help                 q   quit",
	"  mouse wheel         scroll",
	"",
	"press any key to go back",
};

static void draw_picker(struct browser *b, int y0, int height, int width);

static void draw(struct browser *b)
{
	int width = COLS, height = LINES;
	char buf[2048], nbuf[512];
	size_t off = 0;
	int64_t total;

	erase();
	if (b->help) {
		for (size_t i = 0; i < sizeof help_lines / sizeof *help_lines && (int)i < height; i++) {
			move((int)i, 0);
			put_cut(b, help_lines[i], width);
		}
		refresh();
		return;
	}
	total = ct_weight(b->t, &b->t->nodes[0]);
	/* Line 0: what is shown. */
	char thread[600] = "all threads";
	if (b->on_cmd_tids) {
		size_t len = (size_t)snprintf(thread, sizeof thread, "threads ");
		for (size_t i = 0; i < b->ncmd_tids && len < sizeof thread - 16; i++)
			len += (size_t)snprintf(thread + len, sizeof thread - len, "%s%" PRIu32, i ? "," : "",
						b->cmd_tids[i]);
	} else if (b->tid) {
		const char *tname = "";
		for (size_t i = 0; i < b->orig->nthreads; i++)
			if (b->orig->threads[i].tid == b->tid)
				tname = pv_str(b->orig, b->orig->threads[i].name);
		snprintf(thread, sizeof thread, *tname ? "thread %" PRIu32 " \"%s\"" : "thread %" PRIu32 "%s",
			 b->tid, tname);
	}
	snprintf(buf, sizeof buf, "profview: %s  %" PRId64 " samples  %s view, %s, %s  floor K=%g  (? for help)",
		 *pv_str(b->orig, b->orig->program) ? pv_str(b->orig, b->orig->program) : "profile",
		 b->t->samples, b->flat ? "flat" : "tree",
		 b->copt.granularity == CT_LINES ? "lines" : b->copt.granularity == CT_FUNCTIONS ? "functions" :
		 b->copt.granularity == CT_FILES ? "files" : "addresses",
		 thread, b->floor);
	attrset(A_BOLD);
	move(0, 0);
	put_cut(b, buf, width);
	attrset(A_NORMAL);
	/* Line 1: the zoom breadcrumb. */
	off = (size_t)snprintf(buf, sizeof buf, "zoom: ");
	{
		uint32_t path[64];
		size_t k = 0;
		for (uint32_t n = b->root; n != PV_NONE && b->t->nodes[n].kind != CT_ROOT && k < 64;
		     n = b->t->nodes[n].parent)
			path[k++] = n;
		if (k == 0)
			off += (size_t)snprintf(buf + off, sizeof buf - off, "[all]");
		while (k-- > 0 && off < sizeof buf)
			off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", node_name(b, path[k], nbuf, sizeof nbuf),
						k ? " > " : "");
	}
	move(1, 0);
	put_cut(b, buf, width);
	/* Line 2: filters in force. */
	off = (size_t)snprintf(buf, sizeof buf, "in force: %s", b->res.steps[0] ? b->res.steps : "no filters");
	if (b->have_re && off < sizeof buf)
		snprintf(buf + off, sizeof buf - off, "   search /%s/: %zu matches, %.1f%%", b->pattern, b->nmatches,
			 pct(b->match_weight, total));
	move(2, 0);
	put_cut(b, buf, width);
	/* Line 3: columns. */
	attrset(A_UNDERLINE);
	move(3, 0);
	if (b->flat)
		put_cut(b, b->flat_by_cum ? "  self%    cum% samples  ±√n   function  location   (sorted by cum)"
					  : "  self%    cum% samples  ±√n   function  location   (sorted by self)", width);
	else
		put_cut(b, "   cum%   self%  samples  ±√n   function  location", width);
	attrset(A_NORMAL);

	int body = height - HEADER_LINES - 1;
	const char *full = "";
	char where[512];
	if (b->picking) {
		attrset(A_UNDERLINE);
		move(3, 0);
		clrtoeol();
		put_cut(b, "  share  samples    CPU time  tid       thread", width);
		attrset(A_NORMAL);
		draw_picker(b, HEADER_LINES, body, width);
		move(height - 1, 0);
		clrtoeol();
		attrset(A_BOLD);
		put_cut(b, b->status[0] ? b->status : "pick a thread: Enter shows it, Esc goes back", width);
		attrset(A_NORMAL);
		refresh();
		return;
	}
	if (b->flat) {
		draw_flat(b, HEADER_LINES, body, width);
		if (b->fcursor < b->nrows) {
			full = calltree_frame_name(b->t, b->rows[b->fcursor].frame, nbuf, sizeof nbuf);
			calltree_frame_where(b->t, b->rows[b->fcursor].frame, where, sizeof where);
		}
	} else {
		tree_widget_draw(b->w, HEADER_LINES, body, width);
		uint32_t cur = tree_widget_current(b->w);
		where[0] = 0;
		if (cur != TW_NONE) {
			full = node_name(b, cur, nbuf, sizeof nbuf);
			if (b->t->nodes[cur].kind == CT_FRAME)
				calltree_frame_where(b->t, b->t->nodes[cur].frame, where, sizeof where);
		}
	}
	/* The status line: a message, else the whole name under the cursor. */
	move(height - 1, 0);
	clrtoeol();
	attrset(A_BOLD);
	if (b->status[0]) {
		put_cut(b, b->status, width);
	} else {
		snprintf(buf, sizeof buf, "%s%s%s", full, *where ? "  " : "", where);
		put_cut(b, buf, width);
	}
	attrset(A_NORMAL);
	refresh();
}

/* ---- actions ----------------------------------------------------------- */

/* The function under the cursor (tree or flat), or NULL. */
static const char *current_function(struct browser *b)
{
	if (b->flat) {
		if (b->fcursor >= b->nrows)
			return NULL;
		const struct ct_frame *fr = &b->t->frames[b->rows[b->fcursor].frame];
		return fr->function == PV_NONE ? NULL : pv_str(b->t->p, b->t->p->functions[fr->function].name);
	}
	uint32_t cur = tree_widget_current(b->w);
	if (cur == TW_NONE || b->t->nodes[cur].kind != CT_FRAME)
		return NULL;
	const char *f = node_function(b, cur);
	return *f ? f : NULL;
}

static int filter_action(struct browser *b, enum action_kind kind)
{
	const char *fn = current_function(b);
	static const char *const kn[] = { "zoom", "focus", "ignore", "hide", "callers" };

	if (!fn) {
		snprintf(b->status, sizeof b->status, "no function under the cursor");
		return 0;
	}
	if (push_action(b, kind, 0, fn) < 0)
		return -1;
	if (rebuild(b) < 0) {
		/* take the action back, and leave the message on the status
		 * line */
		char said[sizeof b->status];
		snprintf(said, sizeof said, "%s", b->status);
		free(b->acts[--b->nacts].name);
		if (rebuild(b) < 0)
			return -1;
		snprintf(b->status, sizeof b->status, "%s", said);
		return 0;
	}
	b->flat = false;
	snprintf(b->status, sizeof b->status, "%s=%s: %" PRId64 " samples", kn[kind], b->acts[b->nacts - 1].name,
		 b->t->samples);
	return 0;
}

/* The view's subtree as a tree of its own (a synthetic root above the
 * zoomed node), for the exports. */
static int export_view(struct browser *b, bool flame)
{
	/* What is shown: the zoomed subtree, as if the profile held only its
	 * samples (its totals, its noise floors). */
	struct calltree *sub = calltree_subtree(b->t, b->root);
	char path[256], cwd[PATH_MAX], why[256];
	struct stat st;
	FILE *f = NULL;
	int fd, ret = -1;

	if (!sub)
		goto out;
	/* A name not taken: whatever is there, a dangling link too, is skipped. */
	do
		snprintf(path, sizeof path, "profview-%ld-%d.%s", (long)getpid(), ++b->exports,
			 flame ? "flame.svg" : "svg");
	while (lstat(path, &st) == 0);
	fd = pv_outfile_open(path, PV_OUTFILE_REPORT_MODE, 0, why, sizeof why);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		snprintf(b->status, sizeof b->status, "cannot write '%s': %s", path,
			 fd < 0 ? why : strerror(errno));
		if (fd >= 0)
			close(fd);
		ret = 0;
		goto out;
	}
	const char *desc = b->res.steps[0] ? b->res.steps : NULL;
	int r;
	if (flame) {
		struct flame_options fo = { .noisefloor = b->floor, .filters = desc };
		r = report_flame(f, sub, &fo);
	} else {
		struct svg_options so = { .graph = { GRAPH_DEFAULT_NODECOUNT, GRAPH_DEFAULT_NODEFRACTION,
						     GRAPH_DEFAULT_EDGEFRACTION },
					  .noisefloor = b->floor, .filters = desc };
		r = report_svg(f, sub, &so);
	}
	if (fclose(f) != 0 || r < 0) {
		snprintf(b->status, sizeof b->status, "cannot write '%s'", path);
	} else {
		if (path[0] != '/' && getcwd(cwd, sizeof cwd)) {
			char full[PATH_MAX + 300];
			snprintf(full, sizeof full, "%s/%s", cwd, path);
			snprintf(b->status, sizeof b->status, "wrote the %s to '%s'",
				 flame ? "flame graph" : "call graph", full);
		} else {
			snprintf(b->status, sizeof b->status, "wrote '%s'", path);
		}
	}
	ret = 0;
out:
	calltree_free(sub);
	return ret;
}

static void prompt(const char *what, char *buf, size_t n)
{
	move(LINES - 1, 0);
	clrtoeol();
	addstr(what);
	echo();
	curs_set(1);
	getnstr(buf, (int)n - 1);
	noecho();
	curs_set(0);
}

static int cmp_thread_rows(const void *x, const void *y)
{
	const struct thread_row *a = x, *c = y;

	if (a->tid == 0 || c->tid == 0)
		return a->tid == 0 ? -1 : c->tid == 0;
	if (a->tid == THREADS_CMD || c->tid == THREADS_CMD)
		return a->tid == THREADS_CMD ? -1 : c->tid == THREADS_CMD;
	if (a->value != c->value)
		return a->value > c->value ? -1 : 1;
	if (a->count != c->count)
		return a->count > c->count ? -1 : 1;
	return a->tid < c->tid ? -1 : a->tid > c->tid;
}

/* Open the thread picker: every thread of the profile (before the
 * browser's filters) with its samples, heaviest first, after a row for all
 * of them; the cursor on the thread shown. */
static int open_picker(struct browser *b)
{
	const struct pv_profile *p = b->orig;
	struct thread_row *rows = calloc(p->nthreads + 2, sizeof *rows);
	int64_t *count_of, *value_of;

	if (!rows)
		return -1;
	count_of = calloc(2 * (p->nthreads + 1), sizeof *count_of);
	if (!count_of) {
		free(rows);
		return -1;
	}
	value_of = count_of + p->nthreads + 1;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pv_sample *sm = &p->samples[i];
		size_t k = sm->thread < p->nthreads ? sm->thread : p->nthreads;
		int64_t c = b->t->v_count != PV_NONE ? sm->values[b->t->v_count] : 1;
		count_of[k] += c;
		value_of[k] += b->t->v_value != PV_NONE ? sm->values[b->t->v_value] : c;
	}
	rows[0] = (struct thread_row){ .tid = 0, .cpu_ns = -1 };
	for (size_t k = 0; k <= p->nthreads; k++) {
		rows[0].count += count_of[k];
		rows[0].value += value_of[k];
	}
	size_t n = 1;
	if (b->ncmd_tids > 1) {
		rows[n] = (struct thread_row){ .tid = THREADS_CMD, .cpu_ns = -1 };
		for (size_t k = 0; k < p->nthreads; k++)
			for (size_t j = 0; j < b->ncmd_tids; j++)
				if (p->threads[k].tid == b->cmd_tids[j]) {
					rows[n].count += count_of[k];
					rows[n].value += value_of[k];
				}
		n++;
	}
	for (size_t k = 0; k < p->nthreads; k++) {
		if (p->threads[k].tid == 0)
			continue; /* no id to select it by */
		rows[n++] = (struct thread_row){ p->threads[k].tid, p->threads[k].name, count_of[k], value_of[k],
						 p->threads[k].cpu_ns };
	}
	free(count_of);
	qsort(rows, n, sizeof *rows, cmp_thread_rows);
	free(b->trows);
	b->trows = rows;
	b->ntrows = n;
	b->tcursor = b->ttop = 0;
	for (size_t i = 0; i < n; i++)
		if (b->on_cmd_tids ? rows[i].tid == THREADS_CMD : rows[i].tid == b->tid)
			b->tcursor = i;
	b->picking = true;
	return 0;
}

static void draw_picker(struct browser *b, int y0, int height, int width)
{
	int64_t total = b->ntrows ? b->trows[0].value : 0;

	list_scroll(b->tcursor, &b->ttop, height);
	for (int y = 0; y < height; y++) {
		size_t r = b->ttop + (size_t)y;
		char line[1200], cpu[32] = "";
		move(y0 + y, 0);
		clrtoeol();
		if (r >= b->ntrows)
			continue;
		const struct thread_row *tr = &b->trows[r];
		if (tr->cpu_ns >= 0)
			snprintf(cpu, sizeof cpu, "%.3f s", (double)tr->cpu_ns / 1e9);
		if (tr->tid == 0)
			snprintf(line, sizeof line, "%6.1f%% %8" PRId64 "  %10s  %-8s  [all threads]", 100.0, tr->count,
				 cpu, "");
		else if (tr->tid == THREADS_CMD)
			snprintf(line, sizeof line, "%6.1f%% %8" PRId64 "  %10s  %-8s  [the threads of --tid]",
				 pct(tr->value, total), tr->count, cpu, "");
		else
			snprintf(line, sizeof line, "%6.1f%% %8" PRId64 "  %10s  %-8" PRIu32 "  %s",
				 pct(tr->value, total), tr->count, cpu, tr->tid, pv_str(b->orig, tr->name));
		list_row(b, y0 + y, line, width, r == b->tcursor);
	}
}

/* A key while the picker is open. */
static int picker_key(struct browser *b, int ch)
{
	int page = LINES - HEADER_LINES - 1;

	switch (ch) {
	case 27: case 'q': case 'T':
		b->picking = false;
		return 0;
	case '\n': case '\r': case KEY_ENTER: case ' ':
		b->picking = false;
		if (b->tcursor >= b->ntrows)
			return 0;
		if (b->trows[b->tcursor].tid == THREADS_CMD) {
			if (b->on_cmd_tids)
				return 0;
			b->on_cmd_tids = true;
			b->tid = 0;
		} else {
			if (!b->on_cmd_tids && b->trows[b->tcursor].tid == b->tid)
				return 0;
			b->on_cmd_tids = false;
			b->tid = b->trows[b->tcursor].tid;
		}
		drop_zooms(b);
		if (rebuild(b) < 0)
			return -1;
		return b->flat ? make_flat(b) : 0;
	}
	b->tcursor = list_move(b->tcursor, b->ntrows, ch, page > 1 ? page : 1);
	return 0;
}

static int handle_key(struct browser *b, int ch, bool *quit)
{
	int page = LINES - HEADER_LINES - 1;
	uint32_t cur = tree_widget_current(b->w);

	if (page < 1)
		page = 1;
	b->status[0] = 0;
	if (b->help) {
		b->help = false;
		return 0;
	}
	if (b->picking && ch != KEY_RESIZE && ch != KEY_MOUSE)
		return picker_key(b, ch);
	switch (ch) {
	case 'q': *quit = true; return 0;
	case '?': b->help = true; return 0;
	case KEY_RESIZE: return 0;
	case KEY_MOUSE: {
		MEVENT ev;
		if (getmouse(&ev) == OK) {
			if (ev.bstate & BUTTON4_PRESSED)
				ch = KEY_UP;
			else if (ev.bstate & BUTTON5_PRESSED)
				ch = KEY_DOWN;
			else
				return 0;
			for (int i = 0; i < 3; i++)
				handle_key(b, ch, quit);
		}
		return 0;
	}
	case '<': b->floor = b->floor > 0.5 ? b->floor - 0.5 : 0; return 0;
	case '>': b->floor += 0.5; return 0;
	case 'e': case 'E': return export_view(b, ch == 'e');
	case 't':
		b->flat = !b->flat;
		return b->flat ? make_flat(b) : 0;
	case 's':
		b->flat_by_cum = !b->flat_by_cum;
		return b->flat ? make_flat(b) : 0;
	case 'T':
		return open_picker(b);
	case 'g':
		b->copt.granularity = b->copt.granularity == CT_LINES ? CT_FUNCTIONS : CT_LINES;
		drop_zooms(b);
		if (rebuild(b) < 0)
			return -1;
		return b->flat ? make_flat(b) : 0;
	case 'f': return filter_action(b, ACT_FOCUS);
	case 'F': return filter_action(b, ACT_CALLERS);
	case 'i': return filter_action(b, ACT_IGNORE);
	case 'h': return filter_action(b, ACT_HIDE);
	case KEY_BACKSPACE: case 127: case 8: case 'u':
		if (!b->nacts) {
			snprintf(b->status, sizeof b->status, "nothing to undo");
			return 0;
		}
		b->nacts--;
		if (b->acts[b->nacts].kind == ACT_ZOOM) {
			b->root = 0;
			for (size_t i = 0; i < b->nacts; i++)
				b->root = b->acts[i].kind == ACT_ZOOM ? b->acts[i].node : 0;
			free(b->acts[b->nacts].name);
			return set_view(b) < 0 ? -1 : b->have_re ? compute_search(b) : 0;
		}
		free(b->acts[b->nacts].name);
		return rebuild(b);
	case '/': {
		char re[256];
		prompt("/", re, sizeof re);
		if (!re[0])
			return 0;
		regex_t r;
		if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB) != 0) {
			snprintf(b->status, sizeof b->status, "invalid regular expression '%s'", re);
			return 0;
		}
		if (b->have_re)
			regfree(&b->re);
		b->re = r;
		b->have_re = true;
		snprintf(b->pattern, sizeof b->pattern, "%s", re);
		if (compute_search(b) < 0)
			return -1;
		b->flat = false;
		goto_match(b, true);
		return 0;
	}
	case 'n': case 'N':
		if (!b->have_re) {
			snprintf(b->status, sizeof b->status, "no search: / to search");
			return 0;
		}
		b->flat = false;
		goto_match(b, ch == 'n');
		return 0;
	}
	if (b->flat) {
		b->fcursor = list_move(b->fcursor, b->nrows, ch, page);
		return 0;
	}
	switch (ch) {
	case KEY_UP: case 'k': tree_widget_move(b->w, -1); break;
	case KEY_DOWN: case 'j': tree_widget_move(b->w, 1); break;
	case KEY_PPAGE: tree_widget_move(b->w, -page); break;
	case KEY_NPAGE: tree_widget_move(b->w, page); break;
	case KEY_HOME: tree_widget_move(b->w, -(long)b->w->nrows); break;
	case KEY_END: tree_widget_move(b->w, (long)b->w->nrows); break;
	case '\n': case '\r': case KEY_ENTER: case ' ':
		if (cur != TW_NONE)
			return tree_widget_expand(b->w, cur, !tree_widget_is_expanded(b->w, cur), false);
		break;
	case KEY_RIGHT: case 'l':
		if (cur != TW_NONE)
			return tree_widget_expand(b->w, cur, true, false);
		break;
	case KEY_LEFT:
		if (cur != TW_NONE && tree_widget_is_expanded(b->w, cur))
			return tree_widget_expand(b->w, cur, false, false);
		tree_widget_to_parent(b->w);
		break;
	case '*':
		if (cur != TW_NONE)
			return tree_widget_expand(b->w, cur, true, true);
		break;
	case '+': return tree_widget_expand_all(b->w, true);
	case '-': return tree_widget_expand_all(b->w, false);
	case 'z':
		if (cur == TW_NONE || cur == b->root)
			break;
		if (push_action(b, ACT_ZOOM, cur, NULL) < 0)
			return -1;
		b->root = cur;
		if (set_view(b) < 0)
			return -1;
		return b->have_re ? compute_search(b) : 0;
	}
	return 0;
}

/* Append one warning to the status line: "warning: a; b; c". */
__attribute__((format(printf, 2, 3))) static void status_add(struct browser *b, const char *fmt, ...)
{
	size_t off = strlen(b->status), n = sizeof b->status;
	va_list ap;

	if (off + 1 >= n)
		return;
	off += (size_t)snprintf(b->status + off, n - off, "%s", off ? "; " : "warning: ");
	if (off + 1 >= n)
		return;
	va_start(ap, fmt);
	vsnprintf(b->status + off, n - off, fmt, ap);
	va_end(ap);
}

/* What the text reports' header warns about, for the status line at start
 * (the messages on stderr are hidden by the screen). */
static void startup_warnings(struct browser *b)
{
	const struct pv_profile *p = b->orig;

	b->status[0] = '\0';
	if (!p->finished)
		status_add(b, p->live ? "the program is still running: the trace holds what came so far"
				      : "the trace was not finished");
	if (p->lost)
		status_add(b, "%" PRIu64 " samples lost%s%s", p->lost,
			   pv_str(p, p->lost_cause)[0] ? ": the trace could not grow: " : "",
			   pv_str(p, p->lost_cause));
	if (p->truncated)
		status_add(b, "%" PRIu64 " samples with incomplete stacks", p->truncated);
	if (p->dropped_bytes)
		status_add(b, "%" PRIu64 " bytes of damaged input dropped", p->dropped_bytes);
	{
		char say[512];
		if (report_unsampled(p, say, sizeof say))
			status_add(b, "%s", say);
	}
}

int browser_run(const struct pv_profile *p, const struct browser_options *o)
{
	static const struct tw_callbacks cb = { cb_first_child, cb_next_sibling, cb_draw };
	struct browser b = { .orig = p, .base = o->view, .floor = o->noisefloor };
	bool quit = false, ncurses_on = false;
	int ret = -1;

	b.copt.granularity = o->view.granularity;
	b.copt.by_thread = o->view.by_thread;
	b.copt.sample_index = o->view.sample_index;
	if (o->view.ntids == 1)
		b.tid = o->view.tids[0];
	else if (o->view.ntids > 1) {
		b.cmd_tids = o->view.tids;
		b.ncmd_tids = o->view.ntids;
		b.on_cmd_tids = true;
	}
	setlocale(LC_ALL, "");
	b.ellipsis = strcmp(nl_langinfo(CODESET), "UTF-8") == 0 ? "\xe2\x80\xa6" : "...";
	b.w = tree_widget_new(&cb, &b, 0);
	if (!b.w) {
		pv_oom();
		goto out;
	}
	if (rebuild(&b) < 0)
		goto out; /* said why */
	if (!initscr()) {
		pv_error("cannot open the terminal: set TERM");
		goto out;
	}
	ncurses_on = true;
	/* While the screen is ours, messages go to the status line. */
	sink_browser = &b;
	pv_error_set_sink(status_sink);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	mousemask(BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	b.color = o->color && has_colors() && !(getenv("NO_COLOR") && getenv("NO_COLOR")[0]);
	if (b.color) {
		start_color();
		use_default_colors();
	}
	startup_warnings(&b);
	while (!quit) {
		draw(&b);
		int ch = getch();
		if (ch == ERR)
			continue;
		if (handle_key(&b, ch, &quit) < 0) {
			endwin();
			ncurses_on = false;
			pv_error_set_sink(NULL);
			sink_browser = NULL;
			/* what went wrong, said on the status line, once more
			 * where it stays */
			pv_error("%s", b.last_error[0] ? b.last_error : "out of memory");
			goto out;
		}
	}
	ret = 0;
out:
	if (ncurses_on)
		endwin();
	pv_error_set_sink(NULL);
	sink_browser = NULL;
	tree_widget_free(b.w);
	pv_result_free(&b.res);
	for (size_t i = 0; i < b.nacts; i++)
		free(b.acts[i].name);
	free(b.acts);
	free(b.rows);
	free(b.trows);
	clear_search(&b);
	if (b.have_re)
		regfree(&b.re);
	return ret;
}
