/* graph.c - the call graph: nodes by frame, edges by call, pruned */
#include "graph.h"
#include "error.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* Edges found through one hash of (from, to). */
struct edge_map {
	struct graph_edge *edges;
	size_t nedges, cap;
	uint32_t *slots;       /* edge index + 1, 0 empty */
	size_t nslots;
};

static uint64_t edge_hash(uint32_t from, uint32_t to)
{
	return pv_mix64((uint64_t)from << 32 | to);
}

static int edge_rehash(struct edge_map *m)
{
	size_t n = m->nslots ? m->nslots * 2 : 256;
	uint32_t *s = calloc(n, sizeof *s);

	if (!s)
		return pv_oom();
	for (size_t i = 0; i < m->nedges; i++) {
		size_t j = edge_hash(m->edges[i].from, m->edges[i].to) & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(m->slots);
	m->slots = s;
	m->nslots = n;
	return 0;
}

static uint32_t edge_get(struct edge_map *m, uint32_t from, uint32_t to)
{
	size_t mask, i;

	if ((m->nedges + 1) * 2 > m->nslots && edge_rehash(m) < 0)
		return PV_NONE;
	mask = m->nslots - 1;
	for (i = edge_hash(from, to) & mask; m->slots[i]; i = (i + 1) & mask) {
		struct graph_edge *e = &m->edges[m->slots[i] - 1];
		if (e->from == from && e->to == to)
			return m->slots[i] - 1;
	}
	if (pv_grow(&m->edges, &m->cap, m->nedges + 1, sizeof *m->edges) < 0)
		return PV_NONE;
	m->edges[m->nedges] = (struct graph_edge){ .from = from, .to = to };
	m->slots[i] = (uint32_t)m->nedges + 1;
	return (uint32_t)m->nedges++;
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	const struct calltree *sort_t = ctx;
	const struct ct_flat_row *x = a, *y = b;
	int64_t cx = ct_cum_weight(sort_t, x), cy = ct_cum_weight(sort_t, y);
	int64_t fx = ct_self_weight(sort_t, x), fy = ct_self_weight(sort_t, y);

	if (cx != cy)
		return cx > cy ? -1 : 1;
	if (fx != fy)
		return fx > fy ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

static int cmp_edges(const void *a, const void *b, void *ctx)
{
	const struct calltree *sort_t = ctx;
	const struct graph_edge *x = a, *y = b;
	int64_t wx = ct_pick(sort_t, x->count, x->value);
	int64_t wy = ct_pick(sort_t, y->count, y->value);

	if (wx != wy)
		return wx > wy ? -1 : 1;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/* Choose the nodes: rows sorted hottest first, the kept ones copied into
 * g->nodes and node_of[frame] set to their index (PV_NONE: dropped). */
static int select_nodes(struct graph *g, struct ct_flat_row *rows, size_t nrows,
			const struct graph_options *o, uint32_t *node_of)
{
	const struct calltree *t = g->t;
	int64_t total = ct_weight(t, &t->nodes[0]);
	size_t used = 0;

	g->node_cutoff = (int64_t)((double)total * o->nodefraction);
	qsort_r(rows, nrows, sizeof *rows, cmp_rows, (void *)t);
	g->nodes = pv_budget_calloc(nrows ? nrows : 1, sizeof *g->nodes);
	if (!g->nodes)
		return pv_oom();
	for (size_t i = 0; i < nrows; i++) {
		const struct ct_flat_row *r = &rows[i];
		int64_t cum = ct_cum_weight(t, r);

		node_of[r->frame] = PV_NONE;
		if (r->cum_count == 0 && r->cum_value == 0)
			continue; /* a frame of a thread --tid left out */
		used++;
		if (cum < g->node_cutoff || cum <= 0 || (o->nodecount && g->nnodes >= o->nodecount))
			continue;
		node_of[r->frame] = (uint32_t)g->nnodes;
		g->nodes[g->nnodes++] = (struct graph_node){
			.frame = r->frame,
			.flat_count = r->self_count, .flat_value = r->self_value,
			.cum_count = r->cum_count, .cum_value = r->cum_value,
			.flat_sq = r->self_sq, .cum_sq = r->cum_sq,
		};
		g->kept_flat += ct_self_weight(t, r);
	}
	g->total_nodes = used;
	g->dropped_nodes = used - g->nnodes;
	return 0;
}

/* Edges between kept nodes: walk the tree depth first, each node knowing
 * its nearest kept ancestor and whether dropped frames lie between. */
static int edges_of_tree(struct graph *g, const uint32_t *node_of, struct edge_map *m)
{
	const struct calltree *t = g->t;
	size_t nn = t->nnodes;
	uint32_t *anc = malloc(nn * sizeof *anc);      /* graph node of the nearest kept ancestor-or-self */
	uint32_t *edge_of = pv_budget_calloc(nn, sizeof *edge_of);
	bool *skipped = malloc(nn * sizeof *skipped);  /* dropped frames since anc */
	uint32_t *stack = malloc(nn * sizeof *stack);
	uint32_t *onpath = NULL;                        /* per edge: occurrences on the path */
	size_t cap_onpath = 0, nonpath = 0, sp = 0;
	int ret = -1;

	if (!anc || !edge_of || !skipped || !stack) {
		pv_oom();
		goto out;
	}
	uint32_t node = t->nodes[0].first_child;
	anc[0] = PV_NONE;
	skipped[0] = false;
	while (node != PV_NONE) {
		const struct ct_node *nd = &t->nodes[node];
		uint32_t up = nd->parent;

		edge_of[node] = PV_NONE;
		if (nd->kind != CT_FRAME) {
			anc[node] = PV_NONE;
			skipped[node] = false;
		} else if (node_of[nd->frame] == PV_NONE) {
			anc[node] = anc[up];
			skipped[node] = true;
		} else {
			uint32_t to = node_of[nd->frame];
			anc[node] = to;
			skipped[node] = false;
			if (anc[up] != PV_NONE) {
				uint32_t e = edge_get(m, anc[up], to);
				if (e == PV_NONE)
					goto out;
				if (pv_grow(&onpath, &cap_onpath, m->nedges, sizeof *onpath) < 0)
					goto out;
				while (nonpath < m->nedges)
					onpath[nonpath++] = 0;
				if (onpath[e]++ == 0) {
					m->edges[e].count += nd->count;
					m->edges[e].value += nd->value;
					m->edges[e].sq += nd->sq;
				}
				if (skipped[up])
					m->edges[e].residual = true;
				edge_of[node] = e;
			}
		}
		stack[sp++] = node;
		if (nd->first_child != PV_NONE) {
			node = nd->first_child;
			continue;
		}
		node = PV_NONE;
		while (sp) {
			uint32_t u = stack[--sp];
			if (edge_of[u] != PV_NONE)
				onpath[edge_of[u]]--;
			if (t->nodes[u].next_sibling != PV_NONE) {
				node = t->nodes[u].next_sibling;
				break;
			}
		}
	}
	ret = 0;
out:
	free(anc);
	free(edge_of);
	free(skipped);
	free(stack);
	free(onpath);
	return ret;
}

/* A graph split by process: a key per (process, frame), the process's own
 * node a key of frame SPLIT_PROCESS; the paths' frames as keys. */
#define SPLIT_PROCESS UINT32_MAX
struct split {
	struct { uint32_t process, frame; } *keys;
	size_t nkeys, cap_keys;
	uint32_t *slots; size_t nslots; /* key index + 1, 0 empty */
	uint32_t *vf;                   /* per path frame (as path_frames): its key */
	uint32_t *start;                /* per path: its process's key */
};

static uint64_t split_hash(uint32_t process, uint32_t frame)
{
	return pv_mix64((uint64_t)process << 32 | frame);
}

static int split_rehash(struct split *sp)
{
	size_t n = sp->nslots ? sp->nslots * 2 : 1024;
	uint32_t *s = calloc(n, sizeof *s);

	if (!s)
		return pv_oom();
	for (size_t i = 0; i < sp->nkeys; i++) {
		size_t j = split_hash(sp->keys[i].process, sp->keys[i].frame) & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(sp->slots);
	sp->slots = s;
	sp->nslots = n;
	return 0;
}

/* The key of (process, frame), made when new; PV_NONE when out of memory. */
static uint32_t split_key(struct split *sp, uint32_t process, uint32_t frame)
{
	size_t mask, i;

	if ((sp->nkeys + 1) * 2 > sp->nslots && split_rehash(sp) < 0)
		return PV_NONE;
	mask = sp->nslots - 1;
	for (i = split_hash(process, frame) & mask; sp->slots[i]; i = (i + 1) & mask) {
		uint32_t k = sp->slots[i] - 1;
		if (sp->keys[k].process == process && sp->keys[k].frame == frame)
			return k;
	}
	if (sp->nkeys >= UINT32_MAX - 1 || pv_grow(&sp->keys, &sp->cap_keys, sp->nkeys + 1, sizeof *sp->keys) < 0)
		return PV_NONE;
	sp->keys[sp->nkeys].process = process;
	sp->keys[sp->nkeys].frame = frame;
	sp->slots[i] = (uint32_t)sp->nkeys + 1;
	return (uint32_t)sp->nkeys++;
}

/* The process index of path pa (p->nprocesses: none). */
static uint32_t path_process(const struct calltree *t, const struct ct_path *pa)
{
	const struct pv_profile *p = t->p;
	uint32_t pr = pa->thread;

	if (t->by_thread)
		pr = pa->thread < p->nthreads ? p->threads[pa->thread].process : PV_NONE;
	return pr < p->nprocesses ? pr : (uint32_t)p->nprocesses;
}

/* The keys of every path's frames, and a row (ct_flat_row, its frame the
 * key) of each key's own and cumulative totals, each counted once a path,
 * into *rows; returns how many, or -1. */
static ssize_t split_rows(const struct calltree *t, struct split *sp, struct ct_flat_row **rows)
{
	uint32_t *stamp = NULL;
	size_t total = 0;
	struct ct_flat_row *r = NULL;

	for (size_t k = 0; k < t->npaths; k++)
		total = t->paths[k].off + t->paths[k].len > total ? t->paths[k].off + t->paths[k].len : total;
	sp->vf = pv_budget_calloc(total + 1, sizeof *sp->vf);
	sp->start = pv_budget_calloc(t->npaths + 1, sizeof *sp->start);
	if (!sp->vf || !sp->start)
		return pv_oom();
	for (size_t k = 0; k < t->npaths; k++) {
		const struct ct_path *pa = &t->paths[k];
		uint32_t pr = path_process(t, pa);

		if ((sp->start[k] = split_key(sp, pr, SPLIT_PROCESS)) == PV_NONE)
			return -1;
		for (uint32_t j = 0; j < pa->len; j++)
			if ((sp->vf[pa->off + j] = split_key(sp, pr, t->path_frames[pa->off + j])) == PV_NONE)
				return -1;
	}
	r = calloc(sp->nkeys + 1, sizeof *r);
	stamp = malloc((sp->nkeys + 1) * sizeof *stamp);
	if (!r || !stamp) {
		free(r);
		free(stamp);
		return pv_oom();
	}
	for (size_t i = 0; i < sp->nkeys; i++) {
		r[i].frame = (uint32_t)i;
		stamp[i] = PV_NONE;
	}
	for (size_t k = 0; k < t->npaths; k++) {
		const struct ct_path *pa = &t->paths[k];
		uint32_t leaf = pa->len ? sp->vf[pa->off + pa->len - 1] : sp->start[k];

		if (pa->base)
			continue; /* a comparison's base: the graph is the new side's */
		for (uint32_t j = 0; j <= pa->len; j++) {
			uint32_t key = j == 0 ? sp->start[k] : sp->vf[pa->off + j - 1];
			if (stamp[key] == (uint32_t)k)
				continue;
			stamp[key] = (uint32_t)k;
			r[key].cum_count += pa->count;
			r[key].cum_value += pa->value;
			r[key].cum_sq += pa->sq;
		}
		r[leaf].self_count += pa->count;
		r[leaf].self_value += pa->value;
		r[leaf].self_sq += pa->sq;
	}
	free(stamp);
	*rows = r;
	return (ssize_t)sp->nkeys;
}

/* The same from a tree of distinct stacks only (calltree.h's paths_only):
 * each stack adds its samples once to every edge on it, which is what the
 * tree walk adds at each edge's outermost node. */
static int edges_of_paths(struct graph *g, const uint32_t *node_of, const struct split *sp,
			  struct edge_map *m)
{
	const struct calltree *t = g->t;
	uint32_t *stamp = NULL;                         /* per edge: the last stack it was on */
	size_t cap_stamp = 0, nstamp = 0;

	for (size_t k = 0; k < t->npaths; k++) {
		const struct ct_path *pa = &t->paths[k];
		/* split: the frames' keys, from the process's node */
		const uint32_t *f = (sp ? sp->vf : t->path_frames) + pa->off;
		uint32_t anc = sp ? node_of[sp->start[k]] : PV_NONE;
		bool skipped = false;

		if (pa->base)
			continue; /* a comparison's base: the edges are the new side's */
		for (uint32_t j = 0; j < pa->len; j++) {
			uint32_t to = node_of[f[j]];
			if (to == PV_NONE) {
				skipped = true;
				continue;
			}
			if (anc != PV_NONE) {
				uint32_t e = edge_get(m, anc, to);
				if (e == PV_NONE || pv_grow(&stamp, &cap_stamp, m->nedges, sizeof *stamp) < 0) {
					free(stamp);
					return -1;
				}
				while (nstamp < m->nedges)
					stamp[nstamp++] = PV_NONE;
				if (stamp[e] != (uint32_t)k) {
					stamp[e] = (uint32_t)k;
					m->edges[e].count += pa->count;
					m->edges[e].value += pa->value;
					m->edges[e].sq += pa->sq;
				}
				if (skipped)
					m->edges[e].residual = true;
			}
			anc = to;
			skipped = false;
		}
	}
	free(stamp);
	return 0;
}

/* The edges, then the light ones dropped. */
static int build_edges(struct graph *g, const struct graph_options *o, const uint32_t *node_of,
		       const struct split *sp)
{
	const struct calltree *t = g->t;
	struct edge_map m = { 0 };
	int64_t total = ct_weight(t, &t->nodes[0]);
	int ret = -1;

	if ((t->paths_only ? edges_of_paths(g, node_of, sp, &m) : edges_of_tree(g, node_of, &m)) < 0)
		goto out;

	/* Light edges go. */
	g->edge_cutoff = (int64_t)((double)total * o->edgefraction);
	size_t kept = 0;
	for (size_t i = 0; i < m.nedges; i++) {
		struct graph_edge *e = &m.edges[i];
		int64_t w = graph_weight(g, e->count, e->value);
		if (w < g->edge_cutoff || w <= 0)
			continue;
		m.edges[kept++] = *e;
	}
	if (kept > 1) /* none: no array at all */
		qsort_r(m.edges, kept, sizeof *m.edges, cmp_edges, (void *)t);
	/* dot's layout time grows fast with the edges: past GRAPH_EDGES_PER_NODE
	 * per node only the heaviest edges stay, and each node's heaviest
	 * incoming edge, so no node loses all its callers. */
	if (o->nodecount && kept > GRAPH_EDGES_PER_NODE * g->nnodes) {
		bool *has_in = pv_budget_calloc(g->nnodes ? g->nnodes : 1, sizeof *has_in);
		size_t k2 = 0;
		if (!has_in) {
			pv_oom();
			goto out;
		}
		for (size_t i = 0; i < kept; i++) {
			struct graph_edge *e = &m.edges[i];
			if (k2 < GRAPH_EDGES_PER_NODE * g->nnodes || !has_in[e->to]) {
				has_in[e->to] = true;
				m.edges[k2++] = *e;
			}
		}
		free(has_in);
		kept = k2;
	}
	g->dropped_edges = m.nedges - kept;
	g->edges = m.edges;
	g->nedges = kept;
	m.edges = NULL;
	ret = 0;
out:
	free(m.edges);
	free(m.slots);
	return ret;
}

static void split_free(struct split *sp)
{
	free(sp->keys);
	free(sp->slots);
	free(sp->vf);
	free(sp->start);
}

struct graph *graph_build(struct calltree *t, const struct graph_options *o)
{
	struct graph *g = calloc(1, sizeof *g);
	struct ct_flat_row *rows = NULL;
	uint32_t *node_of = NULL;
	struct split split = { 0 }, *sp = NULL;
	size_t nrows;

	if (!g) {
		pv_oom();
		return NULL;
	}
	g->t = t;
	if (t->paths_only && t->by_process && t->p->nprocesses > 0) {
		ssize_t n = split_rows(t, &split, &rows);
		if (n < 0)
			goto fail;
		nrows = (size_t)n;
		sp = &split;
	} else if (!(rows = calltree_flat(t, &nrows))) {
		goto fail;
	}
	node_of = pv_budget_calloc(sp ? split.nkeys + 1 : t->nframes ? t->nframes : 1, sizeof *node_of);
	if (!node_of) {
		pv_oom();
		goto fail;
	}
	if (select_nodes(g, rows, nrows, o, node_of) < 0 || build_edges(g, o, node_of, sp) < 0)
		goto fail;
	for (size_t i = 0; i < g->nnodes; i++) {
		struct graph_node *nd = &g->nodes[i];
		if (!sp) {
			nd->process = PV_NONE;
			continue;
		}
		nd->process = split.keys[nd->frame].process;
		nd->is_process = split.keys[nd->frame].frame == SPLIT_PROCESS;
		nd->frame = nd->is_process ? 0 : split.keys[nd->frame].frame;
	}
	split_free(&split);
	free(rows);
	free(node_of);
	return g;
fail:
	split_free(&split);
	free(rows);
	free(node_of);
	graph_free(g);
	return NULL;
}

const char *graph_node_name(const struct graph *g, size_t i, char *buf, size_t n)
{
	const struct graph_node *nd = &g->nodes[i];

	if (nd->is_process)
		return calltree_process_name(g->t, nd->process, buf, n);
	return calltree_frame_name(g->t, nd->frame, buf, n);
}

const char *graph_node_full_name(const struct graph *g, size_t i, char *buf, size_t n)
{
	const struct graph_node *nd = &g->nodes[i];

	if (nd->is_process)
		return calltree_process_name(g->t, nd->process, buf, n);
	return calltree_frame_full_name(g->t, nd->frame, buf, n);
}

const char *graph_node_where(const struct graph *g, size_t i, char *buf, size_t n)
{
	const struct graph_node *nd = &g->nodes[i];

	if (nd->is_process) {
		buf[0] = '\0';
		return buf;
	}
	return calltree_frame_where(g->t, nd->frame, buf, n);
}

bool graph_node_is_kernel(const struct graph *g, size_t i)
{
	return !g->nodes[i].is_process && calltree_frame_is_kernel(g->t, g->nodes[i].frame);
}

void graph_free(struct graph *g)
{
	if (!g)
		return;
	free(g->nodes);
	free(g->edges);
	free(g);
}
