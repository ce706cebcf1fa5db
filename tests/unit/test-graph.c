/* test-graph.c - the call graph on a hand-built profile: flat and
 * cumulative totals with recursion, edges per call, pruning with residual
 * (dashed) edges, the edge fraction */
#include "calltree.h"
#include "check.h"
#include "error.h"
#include "graph.h"

enum { F_MAIN, F_A, F_B, F_C, NF };
static const char *fnames[NF] = { "main", "alpha", "beta", "gamma" };
static uint32_t loc_of[NF];

/* Add count samples of a stack given outermost first, each 1 ms. */
static void add(struct pv_profile *p, int count, int n, const int *frames)
{
	uint32_t locs[16];
	for (int i = 0; i < n; i++)
		locs[i] = loc_of[frames[n - 1 - i]]; /* leaf first */
	uint32_t off = pv_add_stack(p, locs, (uint32_t)n);
	for (int i = 0; i < count; i++) {
		struct pv_sample s = { off, (uint32_t)n, pv_get_thread(p, 1, PV_NONE), 0, { 1, 1000000 } };
		pv_add_sample(p, &s);
	}
}

static struct pv_profile *make_profile(void)
{
	struct pv_profile *p = pv_profile_new();
	uint32_t file = pv_intern_str(p, "prog.c");

	pv_add_value_type(p, "samples", "count");
	pv_add_value_type(p, "cpu", "nanoseconds");
	for (int i = 0; i < NF; i++) {
		uint32_t n = pv_intern_str(p, fnames[i]);
		uint32_t f = pv_get_function(p, n, n, file, 10 * i);
		struct pv_line l = { f, 10 * i + 1 };
		loc_of[i] = pv_get_location(p, 0x1000 + 0x100 * (uint64_t)i, PV_NONE);
		pv_set_lines(p, loc_of[i], &l, 1);
	}
	pv_get_thread(p, 1, pv_intern_str(p, "main"));
	add(p, 50, 2, (int[]){ F_MAIN, F_A });
	add(p, 6, 3, (int[]){ F_MAIN, F_A, F_A }); /* recursion */
	add(p, 20, 3, (int[]){ F_MAIN, F_B, F_C });
	add(p, 9, 2, (int[]){ F_MAIN, F_B });
	add(p, 4, 1, (int[]){ F_MAIN });
	add(p, 30, 3, (int[]){ F_MAIN, F_A, F_C });
	return p;
}

/* The kept node of function name, or -1. */
static int node(const struct graph *g, const char *name)
{
	char buf[256];

	for (size_t i = 0; i < g->nnodes; i++)
		if (strcmp(calltree_frame_name(g->t, g->nodes[i].frame, buf, sizeof buf), name) == 0)
			return (int)i;
	return -1;
}

/* The kept edge from -> to (function names), or NULL. */
static const struct graph_edge *edge(const struct graph *g, const char *from, const char *to)
{
	int f = node(g, from), t = node(g, to);

	for (size_t i = 0; f >= 0 && t >= 0 && i < g->nedges; i++)
		if (g->edges[i].from == (uint32_t)f && g->edges[i].to == (uint32_t)t)
			return &g->edges[i];
	return NULL;
}

static void test_whole(struct calltree *t)
{
	struct graph_options o = { 0, 0, 0 };
	struct graph *g = graph_build(t, &o);
	const struct graph_edge *e;

	CHECK(g != NULL);
	if (!g)
		return;
	CHECK_EQ(g->nnodes, 4);
	CHECK_EQ(g->total_nodes, 4);
	CHECK_EQ(g->dropped_nodes, 0);
	/* hottest first: main 119, alpha 86, gamma 50, beta 29 */
	CHECK_EQ(node(g, "main"), 0);
	CHECK_EQ(node(g, "alpha"), 1);
	CHECK_EQ(node(g, "gamma"), 2);
	CHECK_EQ(node(g, "beta"), 3);
	CHECK_EQ(g->nodes[0].cum_count, 119);
	CHECK_EQ(g->nodes[0].flat_count, 4);
	/* recursion is not counted twice in alpha's cumulative total */
	CHECK_EQ(g->nodes[1].cum_count, 86);
	CHECK_EQ(g->nodes[1].flat_count, 56);
	CHECK_EQ(g->nodes[1].cum_value, 86 * 1000000LL);
	CHECK_EQ(g->nodes[2].cum_count, 50);
	CHECK_EQ(g->nodes[2].flat_count, 50);
	CHECK_EQ(g->nodes[3].cum_count, 29);
	CHECK_EQ(g->nodes[3].flat_count, 9);
	CHECK_EQ(g->nedges, 5);
	CHECK((e = edge(g, "main", "alpha")) && e->count == 86 && !e->residual);
	CHECK((e = edge(g, "alpha", "alpha")) && e->count == 6);
	CHECK((e = edge(g, "alpha", "gamma")) && e->count == 30);
	CHECK((e = edge(g, "main", "beta")) && e->count == 29);
	CHECK((e = edge(g, "beta", "gamma")) && e->count == 20 && !e->residual);
	/* heaviest first */
	for (size_t i = 1; i < g->nedges; i++)
		CHECK(g->edges[i - 1].value >= g->edges[i].value);
	graph_free(g);
}

static void test_pruned(struct calltree *t)
{
	/* Three nodes: beta goes, and gamma's calls through it become a
	 * residual edge from main. */
	struct graph_options o = { 3, 0, 0 };
	struct graph *g = graph_build(t, &o);
	const struct graph_edge *e;

	CHECK(g != NULL);
	if (!g)
		return;
	CHECK_EQ(g->nnodes, 3);
	CHECK_EQ(g->dropped_nodes, 1);
	CHECK_EQ(node(g, "beta"), -1);
	CHECK((e = edge(g, "main", "gamma")) && e->count == 20 && e->residual);
	CHECK((e = edge(g, "alpha", "gamma")) && e->count == 30 && !e->residual);
	CHECK_EQ(g->kept_flat, (4 + 56 + 50) * 1000000LL);
	graph_free(g);

	/* A node fraction of 45%: only main (100%) and alpha (72%); gamma is 42%. */
	o = (struct graph_options){ 0, 0.45, 0 };
	g = graph_build(t, &o);
	CHECK(g != NULL);
	if (g) {
		CHECK_EQ(g->nnodes, 2);
		CHECK(node(g, "gamma") < 0 && node(g, "beta") < 0);
		graph_free(g);
	}

	/* An edge fraction of 10% (11.9 samples) drops the recursive edge. */
	o = (struct graph_options){ 0, 0, 0.1 };
	g = graph_build(t, &o);
	CHECK(g != NULL);
	if (g) {
		CHECK_EQ(g->nedges, 4);
		CHECK(edge(g, "alpha", "alpha") == NULL);
		CHECK_EQ(g->dropped_edges, 1);
		graph_free(g);
	}
}

int main(void)
{
	struct pv_profile *p = make_profile();
	struct calltree *t = calltree_build(p, NULL);

	CHECK(t != NULL);
	if (t) {
		test_whole(t);
		test_pruned(t);
		calltree_free(t);
	}
	pv_profile_free(p);
	return check_done("test-graph");
}
