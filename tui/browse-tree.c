/* browse-tree.c - what a browsing session keeps beside a call tree, and
 * the open rows of one tree found again in the next (see browse-tree.h) */
#include "browse-tree.h"

#include "error.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* ---- the links --------------------------------------------------------- */

/* The tree's links, 12 bytes a node where a node is 56: a walk over many
 * nodes (everything expanded, a subtree, the search) stays within the
 * caches where the nodes do not.  NULL out of memory. */
struct browse_link *browse_tree_links(const struct calltree *t)
{
	struct browse_link *l = malloc((t->nnodes + 1) * sizeof *l);

	if (!l) {
		pv_oom();
		return NULL;
	}
	for (size_t i = 0; i < t->nnodes; i++) {
		const struct ct_node *nd = &t->nodes[i];
		l[i].first_child = nd->first_child == PV_NONE ? TW_NONE : nd->first_child;
		l[i].next_sibling = nd->next_sibling == PV_NONE ? TW_NONE : nd->next_sibling;
		l[i].frame = nd->kind == CT_FRAME ? nd->frame : PV_NONE;
	}
	return l;
}

void browse_preorder_free(struct browse_preorder *pre)
{
	if (!pre)
		return;
	free(pre->node);
	free(pre->frame);
	free(pre->rank);
	free(pre->end);
	free(pre);
}

void browse_tree_free(struct browse_tree *bt)
{
	pv_result_free(&bt->res);
	free(bt->key);
	free(bt->links);
	free(bt->fkeys);
	free(bt->paths);
	browse_preorder_free(bt->pre);
	free(bt->rows);
	memset(bt, 0, sizeof *bt);
}

/* The tree shown and the one kept change places. */
void browse_tree_swap(struct browse *b)
{
	struct browse_tree cur = { b->res, b->key, b->links, b->fkeys, b->paths, b->pre, b->rows, b->nrows };

	b->res = b->prev.res;
	b->key = b->prev.key;
	b->links = b->prev.links;
	b->fkeys = b->prev.fkeys;
	b->paths = b->prev.paths;
	b->pre = b->prev.pre;
	b->rows = b->prev.rows;
	b->nrows = b->prev.nrows;
	b->prev = cur;
}

/* ---- paths ------------------------------------------------------------- */

static uint64_t hash_str(uint64_t h, const char *s)
{
	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return pv_mix64(h ^ 0xff);
}

/* What a frame stands for, as a hash of its names, line and address (not
 * its index, which differs between two trees of a profile). */
static uint64_t frame_key(const struct calltree *t, uint32_t frame)
{
	const struct ct_frame *fr = &t->frames[frame];
	uint64_t k = 0xcbf29ce484222325ull;

	k = hash_str(k, fr->function != PV_NONE ? pv_str(t->p, t->p->functions[fr->function].name) : "");
	k = hash_str(k, pv_str(t->p, fr->file));
	return pv_mix64(k ^ (uint64_t)fr->line ^ fr->address << 1);
}

#define ROOT_PATH 0x9e3779b97f4a7c15ull

/* The path of node nd under a parent of path parent; fkeys the frames'
 * keys (frame_key), or NULL to hash the names here. */
static uint64_t node_key(const struct calltree *t, uint64_t parent, const struct ct_node *nd,
			 const uint64_t *fkeys)
{
	uint64_t k = parent * 31 + nd->kind;

	if (nd->kind == CT_THREAD)
		return pv_mix64(k ^ (nd->frame < t->p->nthreads ? t->p->threads[nd->frame].tid : 0));
	if (nd->kind == CT_PROCESS)
		return pv_mix64(k ^ (nd->frame < t->p->nprocesses ? t->p->processes[nd->frame].pid : 0));
	return pv_mix64(k ^ (fkeys ? fkeys[nd->frame] : frame_key(t, nd->frame)));
}

/* The keys of the frames of the tree shown (frame_key), computed once for
 * it; NULL out of memory. */
static const uint64_t *tree_fkeys(struct browse *b)
{
	if (!b->fkeys) {
		uint64_t *k = malloc((b->t->nframes + 1) * sizeof *k);
		if (!k) {
			pv_oom();
			return NULL;
		}
		for (size_t f = 0; f < b->t->nframes; f++)
			k[f] = frame_key(b->t, (uint32_t)f);
		b->fkeys = k;
	}
	return b->fkeys;
}

/* The path of every node of the tree shown, as a hash of what the nodes
 * from the root down stand for, computed once for it: the frames hashed
 * once each, the nodes mixed from their parents'.  NULL out of memory. */
static const uint64_t *tree_paths(struct browse *b)
{
	const uint64_t *fkeys = tree_fkeys(b);
	uint64_t *h;

	if (b->paths || !fkeys)
		return b->paths;
	if (!(h = malloc((b->t->nnodes + 1) * sizeof *h))) {
		pv_oom();
		return NULL;
	}
	h[0] = ROOT_PATH;
	/* a node comes after its parent */
	for (size_t i = 1; i < b->t->nnodes; i++)
		h[i] = node_key(b->t, h[b->t->nodes[i].parent], &b->t->nodes[i], fkeys);
	b->paths = h;
	return h;
}

uint64_t browse_node_path(const struct calltree *t, uint32_t node)
{
	if (node == 0 || node == PV_NONE)
		return ROOT_PATH;
	return node_key(t, browse_node_path(t, t->nodes[node].parent), &t->nodes[node], NULL);
}


static int pathset_init(struct pathset *s, size_t n)
{
	size_t cap = 64;

	while (cap < 2 * n)
		cap *= 2;
	s->slot = calloc(cap, sizeof *s->slot);
	s->mask = cap - 1;
	s->n = 0;
	return s->slot ? 0 : pv_oom();
}

static bool pathset_has(const struct pathset *s, uint64_t k);

/* 0, or -1 out of memory (said). */
static int pathset_add(struct pathset *s, uint64_t k)
{
	size_t i;

	k = k ? k : 1;
	if (2 * (s->n + 1) > s->mask + 1) {
		struct pathset big;
		if (pathset_init(&big, 2 * (s->n + 1)) < 0)
			return -1;
		for (i = 0; i <= s->mask; i++)
			if (s->slot[i])
				pathset_add(&big, s->slot[i]);
		free(s->slot);
		*s = big;
	}
	for (i = k & s->mask; s->slot[i] && s->slot[i] != k; i = (i + 1) & s->mask)
		;
	s->n += !s->slot[i];
	s->slot[i] = k;
	return 0;
}

static bool pathset_has(const struct pathset *s, uint64_t k)
{
	k = k ? k : 1;
	for (size_t i = k & s->mask; s->slot[i]; i = (i + 1) & s->mask)
		if (s->slot[i] == k)
			return true;
	return false;
}

/* The node of path k in the current tree, or PV_NONE. */
static uint32_t find_path(const struct browse *b, const uint64_t *h, uint64_t k)
{
	for (size_t i = 0; i < b->t->nnodes; i++)
		if (h[i] == k)
			return (uint32_t)i;
	return PV_NONE;
}

/* ---- the pre-order ----------------------------------------------------- */

/* The tree shown in pre-order, computed once for it: a walk over the
 * links with the path from the root on a stack, a node's subtree ending
 * where the walk leaves it.  NULL out of memory. */
const struct browse_preorder *browse_tree_preorder(struct browse *b)
{
	struct browse_preorder *pre;
	size_t n = b->t->nnodes, depth = 0, cap = 64;
	uint32_t *path = malloc(cap * sizeof *path), r = 0, x = 0;

	if (b->pre) {
		free(path);
		return b->pre;
	}
	pre = calloc(1, sizeof *pre);
	if (!path || !pre || !(pre->node = malloc((n + 1) * sizeof *pre->node)) ||
	    !(pre->frame = malloc((n + 1) * sizeof *pre->frame)) ||
	    !(pre->rank = malloc((n + 1) * sizeof *pre->rank)) || !(pre->end = malloc((n + 1) * sizeof *pre->end)))
		goto oom;
#define VISIT(x) (pre->node[r] = (x), pre->frame[r] = b->links[x].frame, pre->rank[x] = r++)
	VISIT(x);
	for (;;) {
		uint32_t c = b->links[x].first_child;
		if (c != TW_NONE) {
			if (depth == cap) {
				uint32_t *p = realloc(path, 2 * cap * sizeof *p);
				if (!p)
					goto oom;
				path = p;
				cap *= 2;
			}
			path[depth++] = x;
			x = c;
			VISIT(x);
			continue;
		}
		/* up to the next sibling of x or of an ancestor */
		for (;;) {
			pre->end[x] = r;
			uint32_t s = b->links[x].next_sibling;
			if (s != TW_NONE) {
				x = s;
				VISIT(x);
				break;
			}
			if (depth == 0)
				goto done;
			x = path[--depth];
		}
	}
#undef VISIT
done:
	free(path);
	b->pre = pre;
	return pre;
oom:
	free(path);
	browse_preorder_free(pre);
	pv_oom();
	return NULL;
}

/* ---- the rows kept across a rebuild ------------------------------------ */


/* The path of node x of the tree shown, into *path, and its ancestors'
 * into the chains.  h: the tree's paths, and the ancestors up to one
 * expanded (in the expanded set) or in the chains already; NULL: hashed up
 * from the root, every ancestor.  0, or -1 out of memory. */
static int add_chain(struct browse *b, const uint64_t *fkeys, const uint64_t *h, uint32_t x, struct browse_kept *k,
		     uint64_t *path)
{
	const struct ct_node *nd = &b->t->nodes[x];
	uint64_t parent;

	if (h) {
		*path = h[x];
		for (uint32_t a = x; a != PV_NONE; a = b->t->nodes[a].parent) {
			if ((a != x && tree_widget_is_expanded(b->w, a)) || pathset_has(&k->chains, h[a]))
				break;
			if (pathset_add(&k->chains, h[a]) < 0)
				return -1;
		}
		return 0;
	}
	if (x == 0 || nd->parent == PV_NONE) {
		*path = ROOT_PATH;
		return pathset_add(&k->chains, *path);
	}
	if (add_chain(b, fkeys, NULL, nd->parent, k, &parent) < 0)
		return -1;
	*path = node_key(b->t, parent, nd, fkeys);
	return pathset_add(&k->chains, *path);
}

int browse_tree_keep(struct browse *b, struct browse_kept *k)
{
	const uint64_t *h = NULL, *fkeys;
	const uint8_t *e = b->w->expanded;
	size_t n;
	uint64_t path;

	memset(k, 0, sizeof *k);
	if (!b->t)
		return 0;
	n = b->t->nnodes < b->w->nitems ? b->t->nnodes : b->w->nitems;
	for (size_t i = 0; i < n; i++)
		k->nexpanded += e[i] != 0;
	/* Few rows open: their paths hashed up from the root, each; many:
	 * every node's at once. */
	if (!(fkeys = tree_fkeys(b)) || ((b->paths || k->nexpanded > n / 64) && !(h = tree_paths(b))))
		return -1;
	if (pathset_init(&k->expanded, k->nexpanded) < 0 || pathset_init(&k->chains, 64) < 0)
		return -1;
	if (h) {
		/* the expanded set first: the chains stop at it */
		for (size_t i = 0; i < n; i++)
			if (e[i] && pathset_add(&k->expanded, h[i]) < 0)
				return -1;
		for (size_t i = 0; i < n; i++) {
			uint32_t a = b->t->nodes[i].parent;
			if (e[i] && a != PV_NONE && !e[a] && add_chain(b, fkeys, h, a, k, &path) < 0)
				return -1;
		}
	} else {
		for (size_t i = 0; i < n; i++)
			if (e[i] && (add_chain(b, fkeys, NULL, (uint32_t)i, k, &path) < 0 ||
				     pathset_add(&k->expanded, path) < 0))
				return -1;
	}
	if (!b->flat && tree_widget_current(b->w) != TW_NONE) {
		if (add_chain(b, fkeys, h, tree_widget_current(b->w), k, &k->cursor) < 0)
			return -1;
		k->have_cursor = true;
	}
	for (size_t i = 0; i < b->nacts; i++) {
		if (b->acts[i].kind != BROWSE_ZOOM)
			continue;
		if (b->acts[i].node == PV_NONE)
			k->lost_zoom = true;
		else if (add_chain(b, fkeys, h, b->acts[i].node, k, &path) < 0)
			return -1;
	}
	return 0;
}

int browse_tree_find(struct browse *b, const struct browse_kept *k, size_t *marked, uint32_t *cursor)
{
	const uint64_t *fkeys, *h = NULL;
	size_t n = 0, cap = 64;
	uint32_t *stack = malloc(cap * sizeof *stack);
	uint64_t *paths = malloc(cap * sizeof *paths);
	int ret = -1;

	*marked = 0;
	*cursor = PV_NONE;
	for (size_t i = 0; i < b->nacts; i++)
		if (b->acts[i].kind == BROWSE_ZOOM)
			b->acts[i].node = PV_NONE;
	if (!stack || !paths) {
		pv_oom();
		goto out;
	}
	if (!(fkeys = tree_fkeys(b)) || (k->lost_zoom && !(h = tree_paths(b))))
		goto out;
	stack[n] = 0;
	paths[n++] = ROOT_PATH;
	while (n) {
		uint32_t x = stack[--n];
		uint64_t p = paths[n];
		if (pathset_has(&k->expanded, p)) {
			tree_widget_mark(b->w, x, true);
			++*marked;
		}
		if (k->have_cursor && p == k->cursor)
			*cursor = x;
		for (size_t i = 0; i < b->nacts; i++)
			if (b->acts[i].kind == BROWSE_ZOOM && b->acts[i].path == p)
				b->acts[i].node = x;
		for (uint32_t c = b->links[x].first_child; c != TW_NONE; c = b->links[c].next_sibling) {
			uint64_t pc = node_key(b->t, p, &b->t->nodes[c], fkeys);
			if (!pathset_has(&k->expanded, pc) && !pathset_has(&k->chains, pc))
				continue;
			if (n == cap) {
				uint32_t *s2 = realloc(stack, 2 * cap * sizeof *s2);
				uint64_t *p2 = s2 ? realloc(paths, 2 * cap * sizeof *p2) : NULL;
				if (s2)
					stack = s2;
				if (!p2) {
					pv_oom();
					goto out;
				}
				paths = p2;
				cap *= 2;
			}
			stack[n] = c;
			paths[n++] = pc;
		}
	}
	/* a zoom the old tree had lost may be anywhere */
	for (size_t i = 0; h && i < b->nacts; i++)
		if (b->acts[i].kind == BROWSE_ZOOM && b->acts[i].node == PV_NONE)
			b->acts[i].node = find_path(b, h, b->acts[i].path);
	ret = 0;
out:
	free(stack);
	free(paths);
	return ret;
}

void browse_kept_free(struct browse_kept *k)
{
	free(k->expanded.slot);
	free(k->chains.slot);
	memset(k, 0, sizeof *k);
}
