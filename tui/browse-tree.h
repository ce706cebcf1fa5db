/* browse-tree.h - what a browsing session keeps beside a call tree: the
 * links the widget walks, what each node stands for (its path, the same
 * in two trees of a profile), the pre-order the search scans; and the open
 * rows of one tree found again in the next (within tui/ only)
 *
 * A node's path is a hash of what the nodes from the root down to it stand
 * for: names, lines and addresses, not indices.  Each is computed once for
 * a tree, when first needed, and kept in its browse_tree (browse.h).
 */
#ifndef PROFVIEW_BROWSE_TREE_H
#define PROFVIEW_BROWSE_TREE_H

#include "browse.h"

/* The tree's links, NULL out of memory (said). */
struct browse_link *browse_tree_links(const struct calltree *t);
/* Frees what bt holds, and zeroes it. */
void browse_tree_free(struct browse_tree *bt);
void browse_preorder_free(struct browse_preorder *pre);
/* The tree shown and the one kept (b->prev) change places. */
void browse_tree_swap(struct browse *b);

/* The path of one node of t, from its ancestors. */
uint64_t browse_node_path(const struct calltree *t, uint32_t node);
/* The tree shown in pre-order, computed once for it (valid while it is
 * kept); NULL out of memory (said). */
const struct browse_preorder *browse_tree_preorder(struct browse *b);

/* A set of paths. */
struct pathset {
	uint64_t *slot;        /* open addressing, 0 the empty slot; at most half full */
	size_t mask, n;
};

/* What a tree showed, by path: its expanded rows, the cursor's; and in the
 * chains, with the expanded rows, the paths of those, the cursor's and the
 * zooms' ancestors: the nodes of the next tree to look under for them. */
struct browse_kept {
	struct pathset expanded, chains;
	size_t nexpanded;
	uint64_t cursor;
	bool have_cursor;
	bool lost_zoom;        /* a zoom the tree did not have */
};

/* What the tree shown shows (all zero before the first tree).  0, or -1
 * out of memory (said); browse_kept_free() in either case. */
int browse_tree_keep(struct browse *b, struct browse_kept *k);
/* In the tree shown now: expand the nodes of k's expanded paths
 * (tree_widget_mark, the rows not built again), set each zoom's node
 * (PV_NONE when it has none), and say how many were expanded and which
 * node is the cursor's (PV_NONE).  The tree is walked down from the root
 * through the nodes in the chains alone, unless a zoom was lost (then
 * every path is computed).  0, or -1 out of memory (said). */
int browse_tree_find(struct browse *b, const struct browse_kept *k, size_t *marked, uint32_t *cursor);
void browse_kept_free(struct browse_kept *k);

#endif
