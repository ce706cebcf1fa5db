/* test-browse.c - the browser's state without a screen: actions, undo,
 * rows kept across a rebuild, threads, search, the flat view, export, a
 * comparison's cells and its filter of significant nodes (the time strip:
 * test-browse-time.c) */
#include "browse-check.h"
#include "folded-read.h"
#include "merge.h"
#include "profbuild.h"

#include <unistd.h>

static void test_start(void)
{
	struct pv_profile *p = standard();
	struct browse *b = browse_new(p, &all_of, 1, NULL);
	char buf[256];

	CHECK(b != NULL);
	if (!b)
		return;
	CHECK_EQ(b->t->samples, 100);
	/* the hottest path is open: main > alpha > alpha */
	CHECK(row_of(b, "main") == 0);
	CHECK(row_of(b, "alpha") == 1);
	CHECK(row_of(b, "beta") >= 0);
	CHECK(tree_widget_is_expanded(b->w, b->w->rows[1].item));
	CHECK_STR(current(b, buf, sizeof buf), "main");
	CHECK_STR(b->res.steps, "");
	CHECK_STR(browse_threads_shown(b, buf, sizeof buf), "all threads");
	browse_free(b);
	pv_profile_free(p);
}

/* A filter keeps the rows that are still there open, and the cursor where
 * it was; undo gives the whole profile back. */
static void test_filters_keep_rows(void)
{
	struct pv_profile *p = standard();
	struct browse *b = browse_new(p, &all_of, 1, NULL);
	char buf[256];

	if (!b)
		return;
	/* open beta, put the cursor on gamma */
	go_to(b, "beta");
	CHECK_EQ(tree_widget_expand(b->w, tree_widget_current(b->w), true, false), 0);
	go_to(b, "gamma");
	/* ignore alpha: beta stays open, the cursor on gamma */
	go_to(b, "alpha");
	CHECK_EQ(browse_filter(b, BROWSE_IGNORE), 0);
	CHECK_EQ(b->t->samples, 34);
	CHECK_STR(b->res.steps, "ignore=alpha");
	CHECK(row_of(b, "alpha") < 0);
	CHECK(row_of(b, "gamma") >= 0);
	/* the cursor was on alpha, which is gone: where the view starts */
	go_to(b, "gamma");
	CHECK_EQ(browse_filter(b, BROWSE_HIDE), 0);
	CHECK_STR(b->res.steps, "ignore=alpha hide=gamma");
	CHECK(row_of(b, "gamma") < 0);
	CHECK_EQ(browse_undo(b), 0);
	/* gamma came back where it was: beta is still open */
	CHECK(row_of(b, "gamma") >= 0);
	/* the cursor stays on a node the new tree still has */
	go_to(b, "gamma");
	CHECK_EQ(browse_list_threads(b), 0);
	CHECK_EQ(b->threads[1].tid, 1);
	CHECK_EQ(browse_pick_thread(b, 1), 0);
	CHECK_EQ(b->t->samples, 33);
	CHECK_STR(current(b, buf, sizeof buf), "gamma");
	CHECK_EQ(browse_pick_thread(b, 0), 0);
	CHECK_STR(current(b, buf, sizeof buf), "gamma");
	CHECK_EQ(browse_undo(b), 0);
	CHECK_EQ(b->t->samples, 100);
	CHECK_STR(b->res.steps, "");
	CHECK(row_of(b, "gamma") >= 0);
	CHECK_EQ(browse_undo(b), 0);
	CHECK_STR(b->status, "nothing to undo");
	browse_free(b);
	pv_profile_free(p);
}

/* Focus narrows: two focuses keep the samples through both. */
static void test_focus_narrows(void)
{
	struct pv_profile *p = standard();
	struct browse *b = browse_new(p, &all_of, 1, NULL);

	if (!b)
		return;
	go_to(b, "beta");
	CHECK_EQ(browse_filter(b, BROWSE_FOCUS), 0);
	CHECK_EQ(b->t->samples, 30);
	/* main stays open as it was; beta was closed */
	CHECK(row_of(b, "beta") >= 0 && row_of(b, "gamma") < 0);
	CHECK_EQ(tree_widget_expand(b->w, b->w->rows[row_of(b, "beta")].item, true, false), 0);
	go_to(b, "gamma");
	CHECK_EQ(browse_filter(b, BROWSE_FOCUS), 0);
	CHECK_EQ(b->t->samples, 20);
	CHECK_STR(b->res.steps, "focus=beta focus=gamma");
	browse_free(b);
	pv_profile_free(p);
}

/* Callers: the stacks upside down, rooted at the function. */
static void test_callers(void)
{
	struct pv_profile *p = standard();
	struct browse *b = browse_new(p, &all_of, 1, NULL);

	if (!b)
		return;
	go_to(b, "alpha");
	CHECK_EQ(browse_filter(b, BROWSE_CALLERS), 0);
	CHECK_EQ(b->t->samples, 66);
	CHECK(row_of(b, "alpha") == 0);
	CHECK(row_of(b, "main") > 0);
	CHECK_STR(b->res.steps, "callers=alpha");
	browse_free(b);
	pv_profile_free(p);
}

/* Zoom re-roots the view; a rebuild (another granularity) drops it, an
 * undo gives the root back. */
static void test_zoom(void)
{
	struct pv_profile *p = standard();
	struct browse *b = browse_new(p, &all_of, 1, NULL);
	char buf[256];

	if (!b)
		return;
	go_to(b, "beta");
	CHECK_EQ(browse_zoom(b), 0);
	CHECK_STR(calltree_node_name(b->t, b->root, buf, sizeof buf), "beta");
	CHECK(row_of(b, "main") < 0 && row_of(b, "beta") == 0);
	/* a filter after a zoom: the whole tree again */
	go_to(b, "gamma");
	if (row_of(b, "gamma") >= 0) {
		CHECK_EQ(browse_filter(b, BROWSE_HIDE), 0);
		CHECK_EQ(b->root, 0);
		CHECK_EQ(browse_undo(b), 0);
	}
	/* undoing the filter gives the zoom back, by its path */
	CHECK_STR(calltree_node_name(b->t, b->root, buf, sizeof buf), "beta");
	CHECK_EQ(browse_undo(b), 0);
	CHECK_EQ(b->root, 0);
	browse_free(b);
	pv_profile_free(p);
}

static void test_threads(void)
{
	struct pv_profile *p = standard();
	uint32_t two[] = { 1, 2 };
	struct pv_view v = { .tids = two, .ntids = 2, .granularity = CT_FUNCTIONS };
	struct browse *b = browse_new(p, &v, 1, NULL);
	char buf[256];

	if (!b)
		return;
	CHECK(b->on_cmd_tids);
	CHECK_STR(browse_threads_shown(b, buf, sizeof buf), "threads 1,2");
	CHECK_EQ(b->t->samples, 100);
	CHECK_EQ(browse_list_threads(b), 0);
	/* all, the --tid ones, then each, heaviest first */
	CHECK_EQ(b->nthreads, 4);
	CHECK_EQ(b->threads[0].tid, BROWSE_ALL_THREADS);
	CHECK_EQ(b->threads[1].tid, BROWSE_CMD_THREADS);
	CHECK_EQ(b->threads[2].tid, 1);
	CHECK_EQ(b->threads[2].count, 93);
	CHECK_EQ(b->threads[3].tid, 2);
	CHECK_EQ(b->threads[3].count, 7);
	CHECK_EQ(b->tcursor, 1);
	CHECK_EQ(browse_pick_thread(b, 3), 0);
	CHECK_EQ(b->t->samples, 7);
	CHECK_STR(browse_threads_shown(b, buf, sizeof buf), "thread 2 \"worker\"");
	CHECK_EQ(browse_pick_thread(b, 0), 0);
	CHECK_EQ(b->t->samples, 100);
	CHECK_STR(browse_threads_shown(b, buf, sizeof buf), "all threads");
	browse_free(b);
	pv_profile_free(p);
}

static void test_search_and_flat(void)
{
	struct pv_profile *p = standard();
	struct browse *b = browse_new(p, &all_of, 1, NULL);
	char buf[256];

	if (!b)
		return;
	/* n before any search says so */
	browse_next_match(b, true);
	CHECK_STR(b->status, "no search: / to search");
	CHECK_EQ(browse_search(b, "^(alpha|gamma)$"), 0);
	/* alpha twice (once under itself, counted once) and gamma */
	CHECK_EQ(b->nmatches, 3);
	CHECK_EQ(b->match_weight, 86 * 1000000LL);
	CHECK_STR(current(b, buf, sizeof buf), "alpha");
	browse_next_match(b, true);
	browse_next_match(b, true);
	CHECK_STR(current(b, buf, sizeof buf), "gamma");
	CHECK(strstr(b->status, "match 3 of 3") != NULL);
	/* round the end and back */
	browse_next_match(b, true);
	CHECK(strstr(b->status, "match 1 of 3") != NULL);
	browse_next_match(b, false);
	CHECK(strstr(b->status, "match 3 of 3") != NULL);
	CHECK_STR(current(b, buf, sizeof buf), "gamma");
	browse_next_match(b, false);
	CHECK(strstr(b->status, "match 2 of 3") != NULL);
	CHECK_STR(current(b, buf, sizeof buf), "alpha");
	CHECK_EQ(browse_search(b, "("), 0);
	CHECK(strstr(b->status, "invalid regular expression") != NULL);
	CHECK_EQ(browse_set_flat(b, true, false), 0);
	CHECK(b->nrows >= 5);
	CHECK_STR(calltree_frame_name(b->t, b->rows[0].frame, buf, sizeof buf), "alpha");
	CHECK_STR(browse_current_function(b), "alpha");
	CHECK_EQ(browse_set_flat(b, true, true), 0);
	CHECK_STR(calltree_frame_name(b->t, b->rows[0].frame, buf, sizeof buf), "main");
	browse_free(b);
	pv_profile_free(p);
}

/* I: the inlined helper's sample becomes beta's own and back; a search
 * matches short names and whole ones. */
static void test_inlines(void)
{
	struct pv_profile *p = standard();
	struct browse *b = browse_new(p, &all_of, 1, NULL);
	char buf[256];

	if (!b)
		return;
	go_to(b, "beta");
	CHECK_EQ(browse_toggle_inlines(b), 0);
	CHECK(b->copt.noinlines);
	CHECK_STR(current(b, buf, sizeof buf), "beta");
	CHECK_EQ(b->t->nodes[tree_widget_current(b->w)].self_count, 10);
	CHECK_EQ(browse_search(b, "inlined_helper"), 0);
	CHECK_EQ(b->nmatches, 0);
	CHECK_EQ(browse_set_flat(b, true, false), 0);
	for (size_t i = 0; i < b->nrows; i++)
		CHECK(strcmp(calltree_frame_name(b->t, b->rows[i].frame, buf, sizeof buf), "inlined_helper") != 0);
	CHECK_EQ(browse_set_flat(b, false, false), 0);
	CHECK_EQ(browse_toggle_inlines(b), 0);
	CHECK(!b->copt.noinlines);
	CHECK_EQ(browse_search(b, "inlined_helper"), 0);
	CHECK_EQ(b->nmatches, 1);
	browse_free(b);
	pv_profile_free(p);

	static const char text[] = "main;std::vector<int, std::allocator<int> >::push_back(int const&) 2\n";
	p = folded_read((const unsigned char *)text, strlen(text), "t.folded");
	CHECK(p != NULL);
	if (!p || !(b = browse_new(p, &all_of, 1, NULL)))
		return;
	CHECK_EQ(browse_search(b, "^std::vector::push_back$"), 0);
	CHECK_EQ(b->nmatches, 1);
	CHECK_EQ(browse_search(b, "push_back\\(int const&\\)$"), 0);
	CHECK_EQ(b->nmatches, 1);
	CHECK_STR(current(b, buf, sizeof buf), "std::vector::push_back");
	browse_free(b);
	pv_profile_free(p);
}

/* An export of a zoomed view holds the subtree, with its totals. */
static void test_export(void)
{
	struct pv_profile *p = standard();
	struct browse *b = browse_new(p, &all_of, 1, NULL);
	char dir[] = "/tmp/profview-test-browse.XXXXXX", old[4096], *svg = NULL;
	size_t len = 0;
	FILE *f;

	if (!b || !mkdtemp(dir) || !getcwd(old, sizeof old) || chdir(dir) != 0) {
		CHECK(0);
		return;
	}
	go_to(b, "beta");
	CHECK_EQ(browse_zoom(b), 0);
	CHECK_EQ(browse_export(b, false), 0);
	CHECK(strstr(b->status, "wrote the call graph to") != NULL);
	char name[256];
	/* "wrote the call graph to '/dir/profview-PID-1.svg'" */
	snprintf(name, sizeof name, "%s", strrchr(b->status, '/') + 1);
	if (strchr(name, '\''))
		*strchr(name, '\'') = '\0';
	f = fopen(name, "r");
	CHECK(f != NULL);
	if (f) {
		svg = malloc(1 << 20);
		len = fread(svg, 1, (1 << 20) - 1, f);
		svg[len] = 0;
		fclose(f);
		CHECK(strstr(svg, "in 30 samples") != NULL);
		CHECK(strstr(svg, "alpha") == NULL);
		free(svg);
	}
	CHECK(system("rm -f profview-*.svg") == 0);
	CHECK(chdir(old) == 0);
	CHECK(rmdir(dir) == 0);
	browse_free(b);
	pv_profile_free(p);
}

/* An unknown value, before anything is shown: the session is refused
 * with the reason. */
static void test_errors(void)
{
	struct pv_profile *p = standard();
	struct pv_view v = { .granularity = CT_FUNCTIONS, .sample_index = "alloc_space" };
	struct browse *b = browse_new(p, &v, 1, NULL);

	CHECK(b == NULL);
	CHECK(strstr(last_error, "no sample type 'alloc_space'") != NULL);
	pv_profile_free(p);
}

/* A comparison: alpha doubles from the base's 100 samples to 200, beta
 * (50 of its own) and gamma under it (50) stay. */
static struct pv_profile *compared(void)
{
	struct pv_profile *p = make_profile();
	size_t nb;

	add(p, 1, 100, 2, (int[]){ F_MAIN, F_A });
	add(p, 1, 50, 2, (int[]){ F_MAIN, F_B });
	add(p, 1, 50, 3, (int[]){ F_MAIN, F_B, F_C });
	nb = p->nsamples;
	for (size_t i = 0; i < nb; i++)
		p->samples[i].flags |= PV_SAMPLE_BASE;
	add(p, 1, 200, 2, (int[]){ F_MAIN, F_A });
	add(p, 1, 50, 2, (int[]){ F_MAIN, F_B });
	add(p, 1, 50, 3, (int[]){ F_MAIN, F_B, F_C });
	p->diff = true;
	p->diff_base_runs = p->diff_new_runs = 1;
	return p;
}

/* The node of the tree shown named name (the first), or PV_NONE. */
static uint32_t node_named(const struct browse *b, const char *name)
{
	char buf[256];

	for (uint32_t i = 1; i < b->t->nnodes; i++)
		if (strcmp(calltree_node_name(b->t, i, buf, sizeof buf), name) == 0)
			return i;
	return PV_NONE;
}

static enum pv_verdict verdict_of(const struct browse *b, const char *name)
{
	uint32_t n = node_named(b, name);
	return n != PV_NONE && b->cells ? b->cells[n].verdict : (enum pv_verdict)-1;
}

static bool cell_eq(const struct pv_diff_cell *x, const struct pv_diff_cell *y)
{
	return x->base == y->base && x->new_ == y->new_ && x->delta == y->delta && x->p == y->p && x->q == y->q &&
	       x->verdict == y->verdict;
}

static void test_comparison(void)
{
	struct pv_profile *p = compared();
	struct pv_diff_options o = { .fdr = 0.05 };
	struct browse *b = browse_new(p, &all_of, 1, NULL);
	struct pv_diff_cell *whole;
	struct calltree *sub;
	uint32_t beta;
	char buf[256];

	if (!b)
		return;
	CHECK(b->cells == NULL);
	CHECK_EQ(browse_set_diff(b, &o, false), 0);
	CHECK(b->cells != NULL);
	if (!b->cells) {
		browse_free(b);
		pv_profile_free(p);
		return;
	}
	/* the cells are the text reports' (pv_diff_tree of the tree shown) */
	whole = pv_diff_tree(b->t, &o);
	for (size_t i = 0; whole && i < b->t->nnodes; i++)
		CHECK(cell_eq(&whole[i], &b->cells[i]));
	free(whole);
	CHECK_EQ(verdict_of(b, "alpha"), PV_VERDICT_WORSE);
	CHECK_EQ(verdict_of(b, "main"), PV_VERDICT_WORSE);
	CHECK_EQ(verdict_of(b, "beta"), PV_VERDICT_NONE);
	CHECK_EQ(verdict_of(b, "gamma"), PV_VERDICT_NONE);
	CHECK_EQ(b->nsig, 2);
	CHECK(row_of(b, "beta") >= 0);
	/* the filter: main and alpha alone, and back */
	CHECK_EQ(browse_toggle_significant(b), 0);
	CHECK(b->significant);
	CHECK(strstr(b->status, "significant only: 2 nodes") != NULL);
	CHECK(row_of(b, "main") == 0 && row_of(b, "alpha") == 1);
	CHECK(row_of(b, "beta") < 0 && row_of(b, "gamma") < 0);
	CHECK_EQ(b->w->nrows, 2);
	CHECK_EQ(browse_toggle_significant(b), 0);
	CHECK(!b->significant);
	CHECK(row_of(b, "beta") >= 0);
	/* the next and previous verdicts, round the end */
	CHECK_EQ(browse_next_verdict(b, true), 0);
	CHECK_STR(current(b, buf, sizeof buf), "alpha");
	CHECK(strstr(b->status, "alpha: worse, 2 of 2") != NULL);
	CHECK_EQ(browse_next_verdict(b, true), 0);
	CHECK_STR(current(b, buf, sizeof buf), "main");
	CHECK_EQ(browse_next_verdict(b, false), 0);
	CHECK_STR(current(b, buf, sizeof buf), "alpha");
	/* a zoom tests the subtree's nodes as one family: beta's cells are
	 * those of calltree_subtree's tree, at the nodes' own indices */
	go_to(b, "beta");
	beta = tree_widget_current(b->w);
	CHECK_EQ(browse_zoom(b), 0);
	sub = calltree_subtree(b->t, beta);
	whole = sub ? pv_diff_tree(sub, &o) : NULL;
	CHECK(whole != NULL);
	if (whole && sub) {
		CHECK(cell_eq(&whole[1], &b->cells[beta]));
		CHECK(cell_eq(&whole[2], &b->cells[node_named(b, "gamma")]));
		CHECK(b->cells[node_named(b, "alpha")].base == 0);
	}
	free(whole);
	calltree_free(sub);
	/* the zoom undone from the flat view: its rows keep their cells */
	CHECK_EQ(browse_set_flat(b, true, false), 0);
	CHECK_EQ(browse_undo(b), 0);
	CHECK(b->fcells != NULL);
	CHECK_EQ(browse_next_verdict(b, true), 0);
	CHECK(strstr(b->status, "alpha: worse, 1 of 1") != NULL);
	CHECK_EQ(browse_set_flat(b, false, false), 0);
	CHECK_EQ(verdict_of(b, "alpha"), PV_VERDICT_WORSE);
	/* the filter stays on through a rebuild, the cells the new tree's */
	CHECK_EQ(browse_toggle_significant(b), 0);
	CHECK_EQ(browse_toggle_lines(b), 0);
	CHECK(b->cells != NULL && b->significant);
	CHECK_EQ(b->w->nrows, 2);
	CHECK_EQ(browse_toggle_lines(b), 0);
	CHECK_EQ(b->w->nrows, 2);
	/* the flat view: the rows with a verdict alone, the largest change
	 * first; all of them again without the filter */
	CHECK_EQ(browse_set_flat(b, true, false), 0);
	CHECK_EQ(b->nflat, 1);
	CHECK_STR(calltree_frame_name(b->t, b->rows[0].frame, buf, sizeof buf), "alpha");
	CHECK(b->fcells && b->fcells[0].verdict == PV_VERDICT_WORSE);
	CHECK_EQ(browse_toggle_significant(b), 0);
	CHECK_EQ(b->nflat, b->nrows);
	CHECK_EQ(browse_set_flat(b, false, false), 0);
	browse_free(b);
	pv_profile_free(p);

	/* not a comparison: nothing changes, d and v say so */
	p = standard();
	b = browse_new(p, &all_of, 1, NULL);
	if (!b)
		return;
	CHECK_EQ(browse_set_diff(b, &o, true), 0);
	CHECK(b->cells == NULL);
	CHECK_EQ(browse_toggle_significant(b), 0);
	CHECK(strstr(b->status, "not a comparison") != NULL);
	CHECK(!b->significant);
	CHECK_EQ(browse_next_verdict(b, true), 0);
	CHECK(strstr(b->status, "not a comparison") != NULL);
	browse_free(b);
	pv_profile_free(p);
}

/* A comparison started with the filter on (--significant). */
static void test_comparison_start_filtered(void)
{
	struct pv_profile *p = compared();
	struct pv_diff_options o = { 0 };
	struct browse *b = browse_new(p, &all_of, 1, NULL);
	char buf[256];

	if (!b)
		return;
	CHECK_EQ(browse_set_diff(b, &o, true), 0);
	CHECK(b->significant);
	CHECK(row_of(b, "main") == 0 && row_of(b, "alpha") == 1 && row_of(b, "beta") < 0);
	CHECK_STR(current(b, buf, sizeof buf), "main");
	/* a search finds what is shown */
	CHECK_EQ(browse_search(b, "^(alpha|beta)$"), 0);
	CHECK_EQ(b->nmatches, 1);
	browse_free(b);
	pv_profile_free(p);
}

/* A tree built again for the same view keeps every open row and the
 * cursor: a few rows open (their paths hashed one by one) and many (the
 * whole tree's at once); a zoom lost to a filter comes back with its
 * undo. */
static void test_rows_kept(void)
{
	struct pv_profile *p = make_profile();
	unsigned seed = 7;
	struct browse *b;
	uint8_t *before;
	char buf[256];

	/* 600 random stacks up to 12 deep: a tree of some thousands of nodes */
	for (int i = 0; i < 600; i++) {
		int frames[12], n = 1 + rand_r(&seed) % 12;
		frames[0] = F_MAIN;
		for (int j = 1; j < n; j++)
			frames[j] = F_A + rand_r(&seed) % 3;
		add(p, 1 + rand_r(&seed) % 2, 1 + rand_r(&seed) % 5, n, frames);
	}
	b = browse_new(p, &all_of, 1, NULL);
	CHECK(b != NULL);
	if (!b)
		return;
	CHECK(b->t->nnodes > 64 * 8);
	before = malloc(b->t->nnodes);
	for (int round = 0; round < 2; round++) {
		if (round == 0) {
			/* a few: the rows on screen opened one by one */
			for (int i = 0; i < 6 && i < (int)b->w->nrows; i++) {
				b->w->cursor = (size_t)rand_r(&seed) % b->w->nrows;
				tree_widget_expand(b->w, tree_widget_current(b->w), true, false);
			}
		} else {
			tree_widget_expand_all(b->w, true);
		}
		b->w->cursor = b->w->nrows / 2;
		uint32_t cur = tree_widget_current(b->w);
		size_t n = b->t->nnodes, nrows = b->w->nrows;
		memcpy(before, b->w->expanded, n);
		CHECK_EQ(browse_rebuild(b), 0);
		CHECK_EQ(b->t->nnodes, n);
		CHECK(memcmp(before, b->w->expanded, n) == 0);
		CHECK_EQ(b->w->nrows, nrows);
		CHECK_EQ(tree_widget_current(b->w), cur);
	}
	free(before);
	/* zoom on beta, ignore beta (the zoom has no node), undo: the zoom
	 * is back */
	tree_widget_expand_all(b->w, false);
	CHECK_EQ(browse_search(b, "^beta$"), 0);
	CHECK_STR(current(b, buf, sizeof buf), "beta");
	CHECK_EQ(browse_zoom(b), 0);
	CHECK_STR(calltree_node_name(b->t, b->root, buf, sizeof buf), "beta");
	CHECK_EQ(browse_filter(b, BROWSE_IGNORE), 0);
	CHECK_EQ(b->root, 0);
	CHECK(row_of(b, "beta") < 0);
	CHECK_EQ(browse_undo(b), 0);
	CHECK_STR(calltree_node_name(b->t, b->root, buf, sizeof buf), "beta");
	browse_free(b);
	pv_profile_free(p);
}

/* ---- the tree widget's rows, changed in place --------------------------- */

/* A random tree of items 0..n-1 in child-sibling links: the roots 0 and
 * 1, every other item a child of one before it. */
enum { W_ITEMS = 400 };
static uint32_t w_kid[W_ITEMS], w_sib[W_ITEMS], w_parent[W_ITEMS];

static uint32_t w_first_child(void *ctx, uint32_t item)
{
	(void)ctx;
	return w_kid[item];
}

static uint32_t w_next_sibling(void *ctx, uint32_t item)
{
	(void)ctx;
	return w_sib[item];
}

/* Are item and everything below it expanded? */
static bool all_expanded(const struct tree_widget *w, uint32_t item)
{
	if (w_kid[item] == TW_NONE)
		return true;
	if (!tree_widget_is_expanded(w, item))
		return false;
	for (uint32_t c = w_kid[item]; c != TW_NONE; c = w_sib[c])
		if (!all_expanded(w, c))
			return false;
	return true;
}

/* After each change, the rows are the ones built from nothing and the
 * cursor is on the same item. */
static bool rows_as_rebuilt(struct tree_widget *w)
{
	size_t n = w->nrows;
	struct tw_row *rows = malloc((n + 1) * sizeof *rows);
	uint32_t cur = tree_widget_current(w);
	bool same;

	memcpy(rows, w->rows, n * sizeof *rows);
	tree_widget_update(w);
	same = w->nrows == n && memcmp(rows, w->rows, n * sizeof *rows) == 0 &&
	       tree_widget_current(w) == cur;
	free(rows);
	return same;
}

static void test_widget_splices(void)
{
	struct tw_callbacks cb = { w_first_child, w_next_sibling, NULL };
	struct tree_widget *w = tree_widget_new(&cb, NULL, W_ITEMS);
	uint32_t roots[] = { 0, 1 }, last[W_ITEMS];
	unsigned seed = 12345;
	int bad = 0;

	CHECK(w != NULL);
	if (!w)
		return;
	for (uint32_t i = 0; i < W_ITEMS; i++) {
		w_kid[i] = w_sib[i] = last[i] = TW_NONE;
		w_parent[i] = TW_NONE;
	}
	for (uint32_t i = 2; i < W_ITEMS; i++) {
		/* mostly a recent item, so that the tree is deep */
		uint32_t p = (uint32_t)(rand_r(&seed) % 3 ? i - 1 - rand_r(&seed) % (i < 8 ? i : 8) : rand_r(&seed) % i);
		w_parent[i] = p;
		if (last[p] == TW_NONE)
			w_kid[p] = i;
		else
			w_sib[last[p]] = i;
		last[p] = i;
	}
	CHECK(tree_widget_set_roots(w, roots, 2) == 0);
	for (int step = 0; step < 3000 && bad < 5; step++) {
		int op = rand_r(&seed) % 10;
		if (w->nrows)
			w->cursor = (size_t)rand_r(&seed) % w->nrows;
		uint32_t cur = tree_widget_current(w);
		if (op < 4) {
			tree_widget_expand(w, cur, !tree_widget_is_expanded(w, cur), false);
		} else if (op < 5) {
			bool on = rand_r(&seed) % 2;
			tree_widget_expand(w, cur, on, true);
			if (on && !all_expanded(w, cur)) {
				fprintf(stderr, "step %d: item %u's subtree is not all expanded\n", step, cur);
				bad++;
			}
		} else if (op < 6) {
			/* an item maybe not shown, expanded or not */
			tree_widget_expand(w, (uint32_t)rand_r(&seed) % W_ITEMS, rand_r(&seed) % 2, rand_r(&seed) % 2);
		} else if (op < 8) {
			uint32_t path[W_ITEMS], k = 0;
			for (uint32_t x = (uint32_t)rand_r(&seed) % W_ITEMS; x != TW_NONE; x = w_parent[x])
				path[k++] = x;
			for (uint32_t i = 0; i < k / 2; i++) {
				uint32_t t = path[i];
				path[i] = path[k - 1 - i];
				path[k - 1 - i] = t;
			}
			tree_widget_reveal(w, path, k);
			if (tree_widget_current(w) != path[k - 1]) {
				fprintf(stderr, "step %d: reveal did not put the cursor on item %u\n", step, path[k - 1]);
				bad++;
			}
		} else if (op < 9) {
			tree_widget_expand_all(w, rand_r(&seed) % 4 == 0);
		} else {
			tree_widget_to_parent(w);
		}
		if (!rows_as_rebuilt(w)) {
			fprintf(stderr, "step %d (op %d): the rows differ from the rows built again\n", step, op);
			bad++;
		}
	}
	CHECK_EQ(bad, 0);
	tree_widget_free(w);
}

/* K: the kernel frames hidden, their time alpha's own; the rows open
 * stay open; K again shows them. */
static void test_kernel_toggle(void)
{
	struct pv_profile *p = standard();
	uint32_t n = pv_intern_str(p, "sys_read");
	struct pv_line l = { pv_get_function(p, n, n, 0, 0), 0 };
	uint32_t kl = pv_get_location(p, 0xffffffff81000000ull, pv_kernel_mapping(p));
	char buf[256];

	pv_set_lines(p, kl, &l, 1);
	uint32_t locs[3] = { kl, loc_of[F_A], loc_of[F_MAIN] };
	struct pv_sample smp = { pv_add_stack(p, locs, 3), 3, pv_get_thread(p, 1, PV_NONE), PV_SAMPLE_KERNEL,
				 { 10, 10000000 } };
	pv_add_sample(p, &smp);
	struct browse *b = browse_new(p, &all_of, 1, NULL);
	CHECK(b != NULL);
	if (!b)
		return;
	CHECK(b->t->kernel_frames);
	go_to(b, "alpha");
	CHECK_EQ(browse_toggle_kernel(b), 0);
	CHECK(!b->t->kernel_frames);
	CHECK_STR(b->res.steps, "hide-kernel");
	CHECK_CONTAINS(b->status, "kernel frames hidden");
	CHECK_STR(current(b, buf, sizeof buf), "alpha");
	long r = row_of(b, "alpha");
	CHECK(r >= 0);
	if (r >= 0)
		CHECK_EQ(b->t->nodes[b->w->rows[r].item].self_count, 70);
	CHECK_EQ(row_of(b, "sys_read"), -1);
	CHECK_EQ(browse_toggle_kernel(b), 0);
	CHECK(b->t->kernel_frames);
	CHECK_STR(b->res.steps, "");
	browse_free(b);
	pv_profile_free(p);
}

int main(void)
{
	pv_error_set_sink(sink);
	test_start();
	test_kernel_toggle();
	test_filters_keep_rows();
	test_focus_narrows();
	test_callers();
	test_zoom();
	test_threads();
	test_search_and_flat();
	test_inlines();
	test_export();
	test_errors();
	test_rows_kept();
	test_comparison();
	test_comparison_start_filtered();
	test_widget_splices();
	return check_done("test-browse");
}
