/* graph.h - the call graph of a profile, as pprof draws it
 *
 * A node per frame of the call tree (a function, or a line or file at the
 * tree's granularity) with its flat (self) and cumulative totals, and an
 * edge caller -> callee weighted by what the callee cost when called from
 * there.  Built from the aggregated call tree, not from the samples: every
 * root-to-node path of the tree is one stack prefix, so a frame's
 * cumulative total is the sum over the nodes that are its outermost
 * occurrence on their path, and likewise for an edge.
 *
 * Pruning keeps the --nodecount hottest nodes by cumulative weight that
 * are at least --nodefraction of the total; a kept node whose callers were
 * dropped gets an edge from its nearest kept ancestor that is marked
 * residual (drawn dashed), with the summed weight.  Edges under
 * --edgefraction of the total are then dropped, and past
 * GRAPH_EDGES_PER_NODE edges a node the lightest.  The graph holds no
 * drawing state.
 *
 * Of a tree of distinct stacks split by process (--processes), a frame is
 * a node in each process it ran in, under a node of the process: one call
 * graph per process, side by side.
 */
#ifndef PROFVIEW_GRAPH_H
#define PROFVIEW_GRAPH_H

#include "calltree.h"

struct graph_options {
	size_t nodecount;      /* keep at most this many nodes; 0: no limit */
	double nodefraction;   /* drop nodes with cum < this share of the total */
	double edgefraction;   /* drop edges with weight < this share of the total */
};

#define GRAPH_DEFAULT_NODECOUNT 80
#define GRAPH_DEFAULT_NODEFRACTION 0.005
#define GRAPH_DEFAULT_EDGEFRACTION 0.001
/* With a --nodecount, at most this many edges a node (and each node's
 * heaviest incoming one), the heaviest. */
#define GRAPH_EDGES_PER_NODE 2

struct graph_node {
	uint32_t frame;                /* frame index in the tree */
	/* A graph split by process (the tree's by_process): the node's
	 * process index (p->nprocesses: none), and whether it is the process
	 * itself, over its outermost frames, as the tree's process nodes;
	 * else PV_NONE and false. */
	uint32_t process;
	bool is_process;
	int64_t flat_count, flat_value; /* samples and time in the frame itself */
	int64_t cum_count, cum_value;  /* ... and in what it called */
	double flat_sq, cum_sq;        /* the variances of both weights (ct_node.sq) */
};

struct graph_edge {
	uint32_t from, to;             /* node indices in graph.nodes */
	int64_t count, value;
	double sq;                     /* the variance of its weight */
	bool residual;                 /* the call passes through dropped frames */
};

struct graph {
	const struct calltree *t;
	struct graph_node *nodes;      /* kept nodes, hottest (by cum) first */
	size_t nnodes;
	struct graph_edge *edges;      /* kept edges, heaviest first */
	size_t nedges;
	size_t total_nodes;            /* frames with samples before pruning */
	size_t dropped_nodes, dropped_edges;
	int64_t node_cutoff, edge_cutoff; /* weights under which nodes/edges were dropped */
	int64_t kept_flat;             /* flat weight of the kept nodes */
};

/* The measure shares and order use, as in the text reports (ct_weight). */
static inline int64_t graph_weight(const struct graph *g, int64_t count, int64_t value)
{
	return ct_pick(g->t, count, value);
}

/* Build and prune the call graph of t; NULL after an error (reported).  The
 * tree must stay alive while the graph is used. */
struct graph *graph_build(struct calltree *t, const struct graph_options *o);
void graph_free(struct graph *g);

/* The name of node i as calltree_frame_name() and _full_name() give a
 * frame's, or its process's (calltree_process_name); its location (""
 * for a process); is it a kernel frame? */
const char *graph_node_name(const struct graph *g, size_t i, char *buf, size_t n);
const char *graph_node_full_name(const struct graph *g, size_t i, char *buf, size_t n);
const char *graph_node_where(const struct graph *g, size_t i, char *buf, size_t n);
bool graph_node_is_kernel(const struct graph *g, size_t i);

#endif
