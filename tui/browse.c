/* browse.c - what the browser shows, without the screen (see browse.h) */
#include "browse.h"
#include "browse-tree.h"
#include "diff.h"

#include "error.h"
#include "outfile.h"
#include "present.h"
#include "report.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const act_names[] = { "zoom", "focus", "ignore", "hide", "callers", "time" };

/* ---- nodes and their paths --------------------------------------------- */

/* The function a node stands for ("" for the root and threads). */
static const char *node_function(const struct browse *b, uint32_t node)
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

/* Is node shown: not hidden by the filter of significant nodes? */
static bool shown(const struct browse *b, uint32_t node)
{
	return !b->significant || !b->sig || b->sig[node];
}

/* The first of node c and its next siblings that is shown, or PV_NONE. */
static uint32_t next_shown(const struct browse *b, uint32_t c)
{
	while (c != PV_NONE && !shown(b, c))
		c = b->links[c].next_sibling;
	return c;
}

/* ---- the view ---------------------------------------------------------- */

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

/* Reveal node: expand its ancestors under the view's root and put the
 * cursor on it. */
static int reveal(struct browse *b, uint32_t node)
{
	uint32_t path[4096];
	size_t k = 0;

	/* a node the filter hides: the nearest one above it that is shown */
	while (node != b->root && node != PV_NONE && !shown(b, node))
		node = b->t->nodes[node].parent;
	for (uint32_t n = node; n != PV_NONE && k < sizeof path / sizeof *path; n = b->t->nodes[n].parent) {
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
	return tree_widget_reveal(b->w, path, k);
}

static int expand_hot_path(struct browse *b)
{
	uint32_t n = b->root, c;

	while ((c = next_shown(b, b->t->nodes[n].first_child)) != PV_NONE)
		n = c;
	if (reveal(b, n) < 0)
		return -1;
	b->w->cursor = 0;
	return 0;
}

/* The rows' roots: the view's root, or the real root's children. */
static int set_roots(struct browse *b)
{
	const struct ct_node *r = &b->t->nodes[b->root];
	uint32_t *roots = malloc((r->nchildren + 2) * sizeof *roots);
	size_t n = 0;
	int ret;

	if (!roots)
		return pv_oom();
	if (r->kind == CT_ROOT) {
		for (uint32_t c = next_shown(b, r->first_child); c != PV_NONE;
		     c = next_shown(b, b->t->nodes[c].next_sibling))
			roots[n++] = c;
	} else {
		roots[n++] = b->root;
	}
	ret = tree_widget_set_roots(b->w, roots, n);
	free(roots);
	return ret < 0 ? pv_oom() : 0;
}

/* A comparison's cells of the tree (and what the filter shows) dropped:
 * the tree or its root changed. */
static void diff_clear(struct browse *b)
{
	free(b->cells);
	free(b->sig);
	b->cells = NULL;
	b->sig = NULL;
	b->nsig = 0;
}

/* A comparison's cells of the tree shown, the nodes under the root one
 * family (pv_diff_tree_at).  0, or -1 after an error (said). */
static int diff_cells(struct browse *b)
{
	const struct calltree *t = b->t;
	struct pv_diff_cell *cells = NULL;

	diff_clear(b);
	if (!b->dopt || !t->dn)
		return 0;
	if (!(cells = pv_diff_tree_at(t, b->root, b->dopt)))
		return -1;
	if (!(b->sig = calloc(t->nnodes + 1, 1))) {
		free(cells);
		return pv_oom();
	}
	/* children come after their parents */
	for (size_t i = t->nnodes; i-- > 1;) {
		if (cells[i].verdict != PV_VERDICT_NONE) {
			b->sig[i] = 1;
			b->nsig++;
		}
		if (b->sig[i])
			b->sig[t->nodes[i].parent] = 1;
	}
	b->cells = cells;
	return 0;
}

/* A fresh view of the tree from root: the hottest path expanded. */
static int set_view(struct browse *b)
{
	return diff_cells(b) < 0 || set_roots(b) < 0 ? -1 : expand_hot_path(b);
}

static void clear_search(struct browse *b)
{
	free(b->matches);
	free(b->frame_match);
	b->matches = NULL;
	b->order = NULL;
	b->frame_match = NULL;
	b->nmatches = 0;
	b->match_weight = 0;
}

static int compute_search(struct browse *b);

/* The steps of the view in force: the command line's, then an action
 * each; their expressions and labels in res and labels, their filter
 * groups in groups (all nacts long, freed by the caller). */
static int view_steps(struct browse *b, struct pv_step *steps, size_t *nsteps, struct pv_filters *groups,
		      char **res, char **labels)
{
	size_t n = b->base.nsteps;

	if (n)
		memcpy(steps, b->base.steps, n * sizeof *steps);
	for (size_t i = 0; i < b->nacts; i++) {
		const struct browse_action *a = &b->acts[i];
		const char *err;
		if (a->kind == BROWSE_ZOOM || a->kind == BROWSE_TIME)
			continue;
		if (!(res[i] = exact_re(a->name)) || asprintf(&labels[i], "%s=%s", act_names[a->kind], a->name) < 0) {
			labels[i] = NULL;
			return pv_oom();
		}
		if (a->kind == BROWSE_CALLERS) {
			steps[n++] = (struct pv_step){ .kind = PV_STEP_CALLERS, .re = res[i], .label = labels[i] };
			continue;
		}
		if (pv_filters_add(&groups[i], a->kind == BROWSE_FOCUS ? PV_FILTER_FOCUS
					       : a->kind == BROWSE_IGNORE ? PV_FILTER_IGNORE : PV_FILTER_HIDE,
				   res[i], &err) < 0)
			return err ? pv_error("invalid expression '%s': %s", res[i], err) : pv_oom();
		steps[n++] = (struct pv_step){ .kind = PV_STEP_FILTERS, .filters = &groups[i], .label = labels[i] };
	}
	*nsteps = n;
	return 0;
}

/* After a rebuild: the zooms, the expanded rows and the cursor that the
 * new tree still has; the hottest path when none of the rows is left. */
static int restore_view(struct browse *b, const struct browse_kept *k)
{
	size_t marked;
	uint32_t cursor;
	bool zooms = false;

	for (size_t i = 0; i < b->nacts; i++)
		zooms |= b->acts[i].kind == BROWSE_ZOOM;
	b->root = 0;
	if (!zooms && !k->nexpanded && !k->have_cursor)
		return set_view(b); /* nothing to find again */
	if (browse_tree_find(b, k, &marked, &cursor) < 0)
		return -1;
	for (size_t i = 0; i < b->nacts; i++) {
		if (b->acts[i].kind == BROWSE_TIME)
			continue; /* another span keeps the zoom */
		if (b->acts[i].kind != BROWSE_ZOOM)
			b->root = 0; /* a filter after the zoom */
		else if (b->acts[i].node != PV_NONE)
			b->root = b->acts[i].node;
	}
	/* the rows of what was marked open */
	if (diff_cells(b) < 0 || set_roots(b) < 0)
		return -1;
	if (!marked)
		return expand_hot_path(b);
	return cursor != PV_NONE ? reveal(b, cursor) : 0;
}

/* What the pipeline's result depends on besides the profile: the thread
 * shown, the granularity, the span, the filters (not the zooms).  A
 * string to compare, malloc'ed; NULL out of memory. */
static char *view_key(const struct browse *b)
{
	char *key = NULL;
	size_t len = 0, nspans;
	FILE *f = open_memstream(&key, &len);
	struct pv_span one;
	const struct pv_span *spans = browse_time_view(b, &one, &nspans);

	if (!f)
		return NULL;
	fprintf(f, "%d %d %d %" PRIu32 " %d %d\n", (int)b->copt.granularity, (int)b->copt.by_thread,
		(int)b->on_cmd_tids, b->tid, (int)b->base.hide_kernel, (int)b->copt.noinlines);
	for (size_t i = 0; i < nspans; i++)
		fprintf(f, "time %a %a %d %d %d %d\n", spans[i].from, spans[i].to, spans[i].from_pct,
			spans[i].to_pct, spans[i].has_from, spans[i].has_to);
	for (size_t i = 0; i < b->nacts; i++)
		if (b->acts[i].kind != BROWSE_ZOOM && b->acts[i].kind != BROWSE_TIME)
			fprintf(f, "%d %s\n", (int)b->acts[i].kind, b->acts[i].name);
	if (fclose(f) != 0) {
		free(key);
		return NULL;
	}
	return key;
}

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The pipeline run for the view in force into *r.  0, or -1 after
 * reporting an error. */
static int run_view(struct browse *b, struct pv_result *r)
{
	size_t n = b->base.nsteps + b->nacts + 1;
	struct pv_step *steps = calloc(n, sizeof *steps);
	struct pv_filters *groups = calloc(b->nacts + 1, sizeof *groups);
	char **res = calloc(b->nacts + 1, sizeof *res), **labels = calloc(b->nacts + 1, sizeof *labels);
	struct pv_view view = b->base;
	struct pv_span one;
	double t0 = now_ms();
	int ret = -1;

	if (!steps || !groups || !res || !labels) {
		pv_oom();
		goto out;
	}
	if (view_steps(b, steps, &view.nsteps, groups, res, labels) < 0)
		goto out;
	view.steps = steps;
	view.spans = browse_time_view(b, &one, &view.nspans);
	if (b->on_cmd_tids) {
		view.tids = b->cmd_tids;
		view.ntids = b->ncmd_tids;
	} else {
		view.tids = b->tid ? &b->tid : NULL;
		view.ntids = b->tid ? 1 : 0;
	}
	view.granularity = b->copt.granularity;
	view.by_thread = b->copt.by_thread;
	view.noinlines = b->copt.noinlines;
	view.sample_index = b->copt.sample_index;
	if (pv_view_run_copy(b->orig, &view, true, r) < 0)
		goto out;
	b->build_ms = now_ms() - t0;
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

int browse_rebuild(struct browse *b)
{
	char *key = view_key(b);
	struct pv_result r;
	struct browse_kept k = { 0 };
	int ret = -1;

	if (!key) {
		pv_oom();
		goto out;
	}
	if (browse_tree_keep(b, &k) < 0)
		goto out;
	if (b->key && strcmp(key, b->key) == 0) {
		/* the same view: the same tree */
	} else if (b->prev.key && strcmp(key, b->prev.key) == 0) {
		/* the one before (an undo, a toggle back) */
		browse_tree_swap(b);
	} else {
		struct browse_link *links;
		if (run_view(b, &r) < 0)
			goto out;
		if (!(links = browse_tree_links(r.t))) {
			pv_result_free(&r);
			goto out;
		}
		/* the view shown is kept for an undo */
		browse_tree_free(&b->prev);
		browse_tree_swap(b);
		b->res = r;
		b->key = key;
		b->links = links;
		b->fkeys = NULL;
		b->paths = NULL;
		b->pre = NULL;
		b->rows = NULL;
		b->nrows = 0;
		key = NULL;
	}
	b->t = b->res.t;
	diff_clear(b);
	free(b->fcells);
	b->fcells = NULL;
	b->fcursor = b->ftop = 0;
	if (tree_widget_reset(b->w, b->t->nnodes) < 0) {
		pv_oom();
		goto out;
	}
	if (restore_view(b, &k) < 0)
		goto out;
	clear_search(b);
	if (b->have_re && compute_search(b) < 0)
		goto out;
	if (b->flat && browse_set_flat(b, true, b->flat_by_cum) < 0)
		goto out;
	ret = 0;
out:
	free(key);
	browse_kept_free(&k);
	return ret;
}

static uint32_t cb_first_child(void *ctx, uint32_t item)
{
	const struct browse *b = ctx;
	return next_shown(b, b->links[item].first_child);
}

static uint32_t cb_next_sibling(void *ctx, uint32_t item)
{
	const struct browse *b = ctx;
	return next_shown(b, b->links[item].next_sibling);
}

struct browse *browse_new(const struct pv_profile *p, const struct pv_view *base, double floor,
			  void (*draw)(void *ctx, uint32_t item, int depth, bool expanded,
				       bool has_children, bool selected, int y, int width))
{
	struct tw_callbacks cb = { cb_first_child, cb_next_sibling, draw };
	struct browse *b = calloc(1, sizeof *b);

	if (!b) {
		pv_oom();
		return NULL;
	}
	b->orig = p;
	b->base = *base;
	b->floor = floor;
	b->copt.granularity = base->granularity;
	b->copt.by_thread = base->by_thread;
	b->copt.noinlines = base->noinlines;
	b->copt.sample_index = base->sample_index;
	if (base->ntids == 1) {
		b->tid = base->tids[0];
	} else if (base->ntids > 1) {
		b->cmd_tids = base->tids;
		b->ncmd_tids = base->ntids;
		b->on_cmd_tids = true;
	}
	b->w = tree_widget_new(&cb, b, 0);
	if (!b->w) {
		pv_oom();
		goto fail;
	}
	if (browse_rebuild(b) < 0)
		goto fail;
	return b;
fail:
	browse_free(b);
	return NULL;
}

void browse_free(struct browse *b)
{
	if (!b)
		return;
	tree_widget_free(b->w);
	pv_result_free(&b->res);
	free(b->key);
	free(b->links);
	free(b->fkeys);
	free(b->paths);
	browse_preorder_free(b->pre);
	browse_tree_free(&b->prev);
	for (size_t i = 0; i < b->nacts; i++)
		free(b->acts[i].name);
	free(b->acts);
	free(b->rows);
	free(b->threads);
	browse_time_free(b);
	diff_clear(b);
	free(b->fcells);
	clear_search(b);
	if (b->have_re)
		regfree(&b->re);
	free(b);
}

static int push_action(struct browse *b, enum browse_act kind, uint64_t path, const char *name)
{
	char *s = NULL;

	if (pv_grow(&b->acts, &b->cap_acts, b->nacts + 1, sizeof *b->acts) < 0)
		return -1;
	if (name && !(s = strdup(name)))
		return pv_oom();
	b->acts[b->nacts++] = (struct browse_action){ kind, path, PV_NONE, s };
	return 0;
}

void browse_drop_zooms(struct browse *b)
{
	size_t k = 0;

	for (size_t i = 0; i < b->nacts; i++)
		if (b->acts[i].kind != BROWSE_ZOOM)
			b->acts[k++] = b->acts[i];
	b->nacts = k;
}

/* ---- search ------------------------------------------------------------ */

/* Does a node of frame f match the search?  Each frame's name is matched
 * once and the answer kept in b->frame_match (0 not yet, 1 yes, 2 no). */
static bool frame_matches(struct browse *b, uint32_t f)
{
	uint8_t *m;

	if (f == PV_NONE)
		return false;
	m = &b->frame_match[f];
	if (!*m) {
		const struct ct_frame *fr = &b->t->frames[f];
		const char *name = fr->function == PV_NONE ? pv_str(b->t->p, fr->file)
							   : pv_str(b->t->p, b->t->p->functions[fr->function].name);
		/* the whole name or the one shown */
		const char *shown = fr->function == PV_NONE ? name : calltree_function_name(b->t, fr->function);
		*m = regexec(&b->re, name, 0, NULL, 0) == 0 || regexec(&b->re, shown, 0, NULL, 0) == 0 ? 1 : 2;
	}
	return *m == 1;
}

/* The matches under the view's root, in pre-order, and their weight
 * counted once (a match under a match is in its weight): the root's
 * subtree is a run of the tree's pre-order. */
static int compute_search(struct browse *b)
{
	const struct browse_preorder *pre;
	uint32_t end = 0;

	clear_search(b);
	if (!(pre = browse_tree_preorder(b)))
		return -1;
	b->order = pre->rank;
	b->matches = malloc((b->t->nnodes + 1) * sizeof *b->matches);
	b->frame_match = calloc(b->t->nframes + 1, 1);
	if (!b->matches || !b->frame_match)
		return pv_oom();
	for (uint32_t i = pre->rank[b->root]; i < pre->end[b->root]; i++) {
		if (!frame_matches(b, pre->frame[i]) || !shown(b, pre->node[i]))
			continue;
		uint32_t x = pre->node[i];
		b->matches[b->nmatches++] = x;
		if (i >= end) {
			/* not under a match */
			b->match_weight += ct_weight(b->t, &b->t->nodes[x]);
			end = pre->end[x];
		}
	}
	return 0;
}

void browse_next_match(struct browse *b, bool forward)
{
	uint32_t cur = tree_widget_current(b->w), rank, best;
	size_t lo = 0, hi, idx;

	if (!b->have_re) {
		snprintf(b->status, sizeof b->status, "no search: / to search");
		return;
	}
	b->flat = false;
	if (!b->nmatches) {
		snprintf(b->status, sizeof b->status, "no match for /%s/", b->pattern);
		return;
	}
	/* matches[] is in pre-order: the first match after the cursor's
	 * rank (or at it) is found by bisection */
	rank = cur != TW_NONE ? b->order[cur] : 0;
	hi = b->nmatches;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->order[b->matches[mid]] < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (forward) {
		if (cur != TW_NONE && lo < b->nmatches && b->order[b->matches[lo]] == rank)
			lo++; /* the cursor's own */
		idx = cur == TW_NONE ? 0 : lo < b->nmatches ? lo : 0;
	} else {
		idx = lo > 0 ? lo - 1 : b->nmatches - 1;
	}
	best = b->matches[idx];
	reveal(b, best);
	snprintf(b->status, sizeof b->status, "match %zu of %zu for /%s/ (%.1f%% in all)", idx + 1, b->nmatches,
		 b->pattern, pv_percent(b->match_weight, ct_weight(b->t, &b->t->nodes[0])));
}

int browse_search(struct browse *b, const char *pattern)
{
	regex_t r;

	if (regcomp(&r, pattern, REG_EXTENDED | REG_NOSUB) != 0) {
		snprintf(b->status, sizeof b->status, "invalid regular expression '%s'", pattern);
		return 0;
	}
	if (b->have_re)
		regfree(&b->re);
	b->re = r;
	b->have_re = true;
	snprintf(b->pattern, sizeof b->pattern, "%s", pattern);
	if (compute_search(b) < 0)
		return -1;
	browse_next_match(b, true);
	return 0;
}

/* ---- actions ----------------------------------------------------------- */

const char *browse_current_function(const struct browse *b)
{
	if (b->flat) {
		if (b->fcursor >= b->nflat)
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

int browse_filter(struct browse *b, enum browse_act kind)
{
	const char *fn = browse_current_function(b);

	if (!fn) {
		snprintf(b->status, sizeof b->status, "no function under the cursor");
		return 0;
	}
	if (push_action(b, kind, 0, fn) < 0)
		return -1;
	if (browse_rebuild(b) < 0) {
		/* take the action back, and leave the message on the status
		 * line */
		char said[sizeof b->status];
		snprintf(said, sizeof said, "%s", b->status);
		free(b->acts[--b->nacts].name);
		if (browse_rebuild(b) < 0)
			return -1;
		snprintf(b->status, sizeof b->status, "%s", said);
		return 0;
	}
	b->flat = false;
	snprintf(b->status, sizeof b->status, "%s=%s: %" PRId64 " samples", act_names[kind],
		 b->acts[b->nacts - 1].name, b->t->samples);
	return 0;
}

int browse_zoom(struct browse *b)
{
	uint32_t cur = tree_widget_current(b->w);

	if (b->flat || cur == TW_NONE || cur == b->root)
		return 0;
	if (push_action(b, BROWSE_ZOOM, browse_node_path(b->t, cur), NULL) < 0)
		return -1;
	b->acts[b->nacts - 1].node = cur;
	b->root = cur;
	if (set_view(b) < 0)
		return -1;
	return b->have_re ? compute_search(b) : 0;
}

int browse_undo(struct browse *b)
{
	if (!b->nacts) {
		snprintf(b->status, sizeof b->status, "nothing to undo");
		return 0;
	}
	b->nacts--;
	free(b->acts[b->nacts].name);
	if (b->acts[b->nacts].kind == BROWSE_ZOOM) {
		/* only the root changes: the tree is the same, and the
		 * zooms' nodes are its */
		b->root = 0;
		for (size_t i = 0; i < b->nacts; i++) {
			uint32_t n = b->acts[i].kind == BROWSE_ZOOM ? b->acts[i].node : 0;
			if (b->acts[i].kind != BROWSE_TIME)
				b->root = n != PV_NONE ? n : 0;
		}
		if (set_view(b) < 0)
			return -1;
		return b->have_re ? compute_search(b) : 0;
	}
	return browse_rebuild(b);
}

int browse_toggle_lines(struct browse *b)
{
	b->copt.granularity = b->copt.granularity == CT_LINES ? CT_FUNCTIONS : CT_LINES;
	browse_drop_zooms(b);
	return browse_rebuild(b);
}

int browse_toggle_kernel(struct browse *b)
{
	int r;

	b->base.hide_kernel = !b->base.hide_kernel;
	if ((r = browse_rebuild(b)) < 0) {
		b->base.hide_kernel = !b->base.hide_kernel;
		return r;
	}
	if (!b->t->kernel_frames && !b->base.hide_kernel)
		snprintf(b->status, sizeof b->status, "the profile has no kernel frames");
	else
		snprintf(b->status, sizeof b->status, b->base.hide_kernel ?
			 "kernel frames hidden: their time is the own of the function that entered the kernel" :
			 "kernel frames shown, marked [k]");
	return 0;
}

int browse_toggle_inlines(struct browse *b)
{
	b->copt.noinlines = !b->copt.noinlines;
	browse_drop_zooms(b);
	return browse_rebuild(b);
}

/* ---- threads ----------------------------------------------------------- */

bool browse_below_floor(const struct browse *b, uint32_t node)
{
	return ct_node_below_floor(b->t, node, b->floor);
}

/* ---- comparisons ------------------------------------------------------- */

static double fdr_of(const struct browse *b)
{
	double q = b->dopt ? b->dopt->fdr : 0;
	return q > 0 && q < 1 ? q : PV_DIFF_DEFAULT_FDR;
}

int browse_set_diff(struct browse *b, const struct pv_diff_options *o, bool significant)
{
	uint32_t cur = tree_widget_current(b->w);

	if (!o || !b->t->dn)
		return 0;
	b->dopt = o;
	b->significant = significant;
	if (diff_cells(b) < 0 || set_roots(b) < 0)
		return -1;
	if (significant || cur == TW_NONE)
		return expand_hot_path(b);
	return reveal(b, cur);
}

int browse_toggle_significant(struct browse *b)
{
	uint32_t cur = tree_widget_current(b->w);

	if (!b->cells) {
		snprintf(b->status, sizeof b->status, "not a comparison: give the base profile with --diff-base");
		return 0;
	}
	b->significant = !b->significant;
	if (set_roots(b) < 0)
		return -1;
	/* the cursor's node, or the nearest one above it shown */
	if (cur != TW_NONE && reveal(b, cur) < 0)
		return -1;
	if (b->have_re && compute_search(b) < 0)
		return -1;
	if (b->flat && browse_set_flat(b, true, b->flat_by_cum) < 0)
		return -1;
	if (b->significant && b->flat)
		snprintf(b->status, sizeof b->status, "significant only: %zu rows worse or better (q <= %g)",
			 b->nflat, fdr_of(b));
	else if (b->significant)
		snprintf(b->status, sizeof b->status,
			 "significant only: %zu nodes worse or better (q <= %g) and the nodes above them", b->nsig,
			 fdr_of(b));
	else
		snprintf(b->status, sizeof b->status, "all nodes shown");
	return 0;
}

/* Say which verdict the cursor is on: "alpha: worse, 2 of 5 with a
 * verdict (q <= 0.05): +50.6%, q 9.5e-06". */
static void say_verdict(struct browse *b, const char *name, const struct pv_diff_cell *c, size_t k, size_t n)
{
	char pct[32], q[32];

	pv_diff_pct_text(pct, sizeof pct, c->pct);
	pv_diff_q_text(q, sizeof q, c->q);
	snprintf(b->status, sizeof b->status, "%s: %s, %zu of %zu with a verdict (q <= %g): %s%s, q %s", name,
		 pv_verdict_name(c->verdict), k, n, fdr_of(b), pct, isinf(c->pct) ? "" : "%", q);
}

int browse_next_verdict(struct browse *b, bool forward)
{
	const struct browse_preorder *pre;
	uint32_t cur, lo, hi, rc, pick = PV_NONE;
	size_t n = 0, k = 0;
	char name[512];

	if (!b->cells) {
		snprintf(b->status, sizeof b->status, "not a comparison: give the base profile with --diff-base");
		return 0;
	}
	if (b->flat) {
		size_t first = SIZE_MAX, last = SIZE_MAX, at = SIZE_MAX;
		for (size_t i = 0; b->fcells && i < b->nflat; i++) {
			if (b->fcells[i].verdict == PV_VERDICT_NONE)
				continue;
			n++;
			if (first == SIZE_MAX)
				first = i;
			last = i;
			if (forward ? i > b->fcursor && at == SIZE_MAX : i < b->fcursor)
				at = i;
		}
		if (!n) {
			snprintf(b->status, sizeof b->status, "no row is worse or better (q <= %g)", fdr_of(b));
			return 0;
		}
		b->fcursor = at != SIZE_MAX ? at : forward ? first : last;
		for (size_t i = 0; i <= b->fcursor; i++)
			k += b->fcells[i].verdict != PV_VERDICT_NONE;
		say_verdict(b, calltree_frame_name(b->t, b->rows[b->fcursor].frame, name, sizeof name),
			    &b->fcells[b->fcursor], k, n);
		return 0;
	}
	if (!(pre = browse_tree_preorder(b)))
		return -1;
	cur = tree_widget_current(b->w);
	lo = pre->rank[b->root];
	hi = pre->end[b->root];
	rc = cur != TW_NONE ? pre->rank[cur] : lo;
	/* the first after the cursor (or the last before it), else round the
	 * end; the root of the whole tree is no row */
	for (uint32_t r = lo; r < hi; r++) {
		uint32_t x = pre->node[r];
		if (x == 0 || b->cells[x].verdict == PV_VERDICT_NONE)
			continue;
		n++;
		if (forward ? (r > rc && (pick == PV_NONE || pre->rank[pick] <= rc)) || pick == PV_NONE
			    : r < rc || pick == PV_NONE || pre->rank[pick] >= rc)
			pick = x;
	}
	if (pick == PV_NONE) {
		snprintf(b->status, sizeof b->status, "no node is worse or better (q <= %g)", fdr_of(b));
		return 0;
	}
	if (reveal(b, pick) < 0)
		return -1;
	for (uint32_t r = lo; r <= pre->rank[pick]; r++)
		k += pre->node[r] != 0 && b->cells[pre->node[r]].verdict != PV_VERDICT_NONE;
	say_verdict(b, calltree_node_name(b->t, pick, name, sizeof name), &b->cells[pick], k, n);
	return 0;
}

/* ---- export ------------------------------------------------------------ */

int browse_export(struct browse *b, bool flame)
{
	/* What is shown: the zoomed subtree, as if the profile held only its
	 * samples (its totals, its noise floors). */
	struct calltree *sub = calltree_subtree(b->t, b->root);
	const char *steps = b->res.steps[0] ? b->res.steps : NULL;
	enum pv_report_kind kind = flame ? PV_REPORT_FLAME : PV_REPORT_SVG;
	struct pv_report_options ro = PV_REPORT_OPTIONS_DEFAULT;
	struct pv_report_ctx c;
	char path[256], cwd[PATH_MAX], why[256];
	struct stat st;
	FILE *f = NULL;
	int fd, r, ret = -1;

	if (!sub)
		return -1;
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
	ro.noisefloor = b->floor;
	c = (struct pv_report_ctx){ .o = &ro, .t = sub, .diff = b->dopt, .filters = steps };
	r = pv_report_prepare(&c, kind) < 0 ? -1 : pv_report_write(f, kind, &c);
	pv_report_ctx_free(&c);
	if (fclose(f) != 0 || r < 0) {
		snprintf(b->status, sizeof b->status, "cannot write '%s'", path);
	} else {
		const char *what = flame ? "flame graph" : "call graph";
		if (path[0] != '/' && getcwd(cwd, sizeof cwd))
			snprintf(b->status, sizeof b->status, "wrote the %s to '%s/%s'", what, cwd, path);
		else
			snprintf(b->status, sizeof b->status, "wrote the %s to '%s'", what, path);
	}
	ret = 0;
out:
	calltree_free(sub);
	return ret;
}

/* ---- the status line --------------------------------------------------- */

/* Append one warning to the status line: "warning: a; b; c". */
__attribute__((format(printf, 2, 3))) static void status_add(struct browse *b, const char *fmt, ...)
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

static void status_item(void *arg, const char *phrase)
{
	status_add(arg, "%s", phrase);
}

void browse_startup_warnings(struct browse *b)
{
	const struct pv_profile *p = b->orig;
	char say[512];

	b->status[0] = '\0';
	if (!p->finished)
		status_add(b, p->live ? "the program is still running: the trace holds what came so far"
				      : "the trace was not finished");
	pv_input_problems(p, false, status_item, b);
	if (report_unsampled(p, say, sizeof say))
		status_add(b, "%s", say);
	/* (before the collector's cost: what the profile lacks first) */
	if (report_python_unread(p, say, sizeof say))
		status_add(b, "%s", say);
	if (report_collector_cpu(p, say, sizeof say))
		status_add(b, "collector: %s", say);
	if (report_collector(p, say, sizeof say))
		status_add(b, "%s", say);
}
