/* flat.c - the flat profile of a call tree: each frame's self and
 * cumulative counts, from the tree's nodes or from its distinct stacks */
#include "calltree.h"
#include "error.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The flat rows from the distinct stacks: self to the last frame of each,
 * cumulative once to each frame on it. */
static struct ct_flat_row *flat_of_paths(struct calltree *t, size_t *nrows)
{
	struct ct_flat_row *rows = calloc(t->nframes ? t->nframes : 1, sizeof *rows);
	uint32_t *stamp = malloc((t->nframes ? t->nframes : 1) * sizeof *stamp);

	if (!rows || !stamp) {
		free(rows);
		free(stamp);
		pv_oom();
		return NULL;
	}
	memset(stamp, 0xff, (t->nframes ? t->nframes : 1) * sizeof *stamp);
	for (size_t i = 0; i < t->nframes; i++)
		rows[i].frame = (uint32_t)i;
	for (size_t k = 0; k < t->npaths; k++) {
		const struct ct_path *g = &t->paths[k];
		const uint32_t *f = t->path_frames + g->off;
		for (uint32_t j = 0; j < g->len; j++) {
			struct ct_flat_row *r = &rows[f[j]];
			if (stamp[f[j]] != (uint32_t)k) {
				stamp[f[j]] = (uint32_t)k;
				if (g->base) {
					r->base_cum_count += g->count;
					r->base_cum_value += g->value;
					r->base_cum_sq += g->sq;
				} else {
					r->cum_count += g->count;
					r->cum_value += g->value;
					r->cum_sq += g->sq;
				}
			}
		}
		if (g->len) {
			struct ct_flat_row *r = &rows[f[g->len - 1]];
			if (g->base) {
				r->base_self_count += g->count;
				r->base_self_value += g->value;
				r->base_self_sq += g->sq;
			} else {
				r->self_count += g->count;
				r->self_value += g->value;
				r->self_sq += g->sq;
			}
		}
	}
	free(stamp);
	*nrows = t->nframes;
	return rows;
}

struct ct_flat_row *calltree_flat(struct calltree *t, size_t *nrows)
{
	struct ct_flat_row *rows = NULL;
	uint64_t *seen = NULL;  /* per frame: how many nodes of the current path are it */
	size_t cap_seen = 0;

	*nrows = 0;
	if (t->paths_only)
		return flat_of_paths(t, nrows);
	/* Walk the tree instead of the samples: every root-to-node path is one
	 * stack prefix, so a frame's cumulative share is the sum over nodes
	 * that are its outermost occurrence on their path. */
	rows = calloc(t->nframes ? t->nframes : 1, sizeof *rows);
	if (!rows) {
		pv_oom();
		return NULL;
	}
	for (size_t i = 0; i < t->nframes; i++)
		rows[i].frame = (uint32_t)i;
	if (pv_grow(&seen, &cap_seen, t->nframes ? t->nframes : 1, sizeof *seen) < 0) {
		free(rows);
		return NULL;
	}
	memset(seen, 0, cap_seen * sizeof *seen);
	/* Depth-first with an explicit stack; seen[frame] counts how many
	 * ancestors on the current path are that frame. */
	uint32_t *stack = malloc((t->nnodes ? t->nnodes : 1) * sizeof *stack);
	if (!stack) {
		free(rows);
		free(seen);
		pv_oom();
		return NULL;
	}
	size_t sp = 0;
	uint32_t node = t->nodes[0].first_child;
	/* Iterative pre/post order walk using parent links. */
	while (node != PV_NONE) {
		struct ct_node *nd = &t->nodes[node];
		if (nd->kind == CT_FRAME) {
			struct ct_flat_row *r = &rows[nd->frame];
			const struct ct_diff_node *d = t->dn ? &t->dn[node] : NULL;
			if (seen[nd->frame]++ == 0) {
				r->cum_count += nd->count;
				r->cum_value += nd->value;
				if (d) {
					r->base_cum_count += d->count;
					r->base_cum_value += d->value;
					r->base_cum_sq += d->base_sq;
				}
				r->cum_sq += nd->sq;
			}
			r->self_count += nd->self_count;
			r->self_value += nd->self_value;
			if (d) {
				r->base_self_count += d->self_count;
				r->base_self_value += d->self_value;
				r->base_self_sq += d->base_self_sq;
			}
			r->self_sq += nd->self_sq;
		}
		stack[sp++] = node;
		if (nd->first_child != PV_NONE) {
			node = nd->first_child;
			continue;
		}
		/* Leave nodes until one has a next sibling. */
		while (sp) {
			uint32_t up = stack[--sp];
			struct ct_node *u = &t->nodes[up];
			if (u->kind == CT_FRAME)
				seen[u->frame]--;
			if (u->next_sibling != PV_NONE) {
				node = u->next_sibling;
				break;
			}
			node = PV_NONE;
		}
	}
	free(stack);
	free(seen);
	*nrows = t->nframes;
	return rows;
}
