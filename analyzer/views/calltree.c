/* calltree.c - build the call tree and the flat profile from a profile */
#include "calltree.h"
#include "calltree-int.h"
#include "error.h"
#include "units.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frames, interned by their key at the tree's granularity. */

static uint64_t frame_hash(const struct ct_frame *f)
{
	return pv_mix64(((uint64_t)f->function << 32 | f->file) ^ pv_mix64((uint64_t)f->line) ^
		     pv_mix64(f->address + 0x9e3779b97f4a7c15ULL)) ^ (uint64_t)f->kernel;
}

static bool frame_eq(const struct ct_frame *a, const struct ct_frame *b)
{
	return a->function == b->function && a->file == b->file && a->line == b->line &&
	       a->address == b->address && a->kernel == b->kernel;
}

static int frame_rehash(struct calltree *t)
{
	size_t n = t->nframe_slots ? t->nframe_slots * 2 : 256;
	uint32_t *s;

	s = calloc(n, sizeof *s);
	if (!s)
		return pv_oom();
	for (size_t i = 0; i < t->nframes; i++) {
		size_t j = frame_hash(&t->frames[i]) & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(t->frame_slots);
	t->frame_slots = s;
	t->nframe_slots = n;
	return 0;
}

static uint32_t frame_get(struct calltree *t, const struct ct_frame *f)
{
	size_t mask, i;

	if ((t->nframes + 1) * 2 > t->nframe_slots && frame_rehash(t) < 0)
		return PV_NONE;
	mask = t->nframe_slots - 1;
	for (i = frame_hash(f) & mask; t->frame_slots[i]; i = (i + 1) & mask)
		if (frame_eq(&t->frames[t->frame_slots[i] - 1], f))
			return t->frame_slots[i] - 1;
	if (pv_grow(&t->frames, &t->cap_frames, t->nframes + 1, sizeof *t->frames) < 0)
		return PV_NONE;
	t->frames[t->nframes] = *f;
	t->frame_slots[i] = (uint32_t)t->nframes + 1;
	return (uint32_t)t->nframes++;
}

static struct ct_frame frame_key(const struct calltree *t, const struct pv_location *loc,
				 const struct pv_line *ln, bool kernel)
{
	const struct pv_profile *p = t->p;
	struct ct_frame f = { PV_NONE, 0, 0, 0, kernel };

	switch (t->granularity) {
	case CT_FUNCTIONS:
		f.function = ln->function;
		break;
	case CT_LINES:
		f.function = ln->function;
		f.file = p->functions[ln->function].filename;
		f.line = ln->line;
		break;
	case CT_FILES:
		f.file = p->functions[ln->function].filename;
		if (!f.file) /* no file known: keep the function apart */
			f.function = ln->function;
		break;
	case CT_ADDRESSES:
		f.function = ln->function;
		f.address = loc->address;
		break;
	}
	return f;
}

/* The frames of location li, outermost first (its lines reversed), from
 * the tree's cache: each location is expanded once.  NULL when out of
 * memory; *n gets how many. */
static const uint32_t *location_frames(struct calltree *t, uint32_t li, uint32_t *n)
{
	const struct pv_profile *p = t->p;
	const struct pv_location *loc = &p->locations[li];
	const struct pv_line *lines = pv_location_lines(p, loc);
	uint32_t off;

	/* Lines are innermost first, the function they are inlined into
	 * last (first in a reversed profile): without inlines, that one
	 * alone. */
	uint32_t nl = t->noinlines && loc->nlines > 1 ? 1 : loc->nlines;
	uint32_t from = t->reversed ? 0 : loc->nlines - nl;

	if (t->loc_frames[li] != PV_NONE) {
		*n = nl;
		return t->lf + t->loc_frames[li];
	}
	if (t->nlf + nl >= UINT32_MAX || pv_grow(&t->lf, &t->cap_lf, t->nlf + nl + 1, sizeof *t->lf) < 0)
		return NULL;
	off = (uint32_t)t->nlf;
	bool kernel = pv_location_is_kernel(p, li);
	t->kernel_frames |= kernel && loc->nlines;
	/* The outermost call comes first here. */
	for (uint32_t j = from + nl; j-- > from;) {
		struct ct_frame f = frame_key(t, loc, &lines[j], kernel);
		uint32_t fi = frame_get(t, &f);
		if (fi == PV_NONE)
			return NULL;
		t->lf[t->nlf++] = fi;
	}
	t->loc_frames[li] = off;
	*n = nl;
	return t->lf + off;
}

/* Fold the recursion of the stack at scratch[at..end) in place (see
 * ct_options.fold_recursion); returns its new end, or -1. */
static ssize_t fold_recursion(struct calltree *t, size_t at, size_t end)
{
	uint32_t *fr = t->scratch + at;
	size_t m = 0;

	if (t->cap_fold_at < t->nframes) {
		size_t old = t->cap_fold_at;
		if (pv_grow(&t->fold_at, &t->cap_fold_at, t->nframes, sizeof *t->fold_at) < 0)
			return -1;
		for (size_t i = old; i < t->cap_fold_at; i++)
			t->fold_at[i] = PV_NONE;
	}
	for (size_t i = 0; i < end - at; i++) {
		uint32_t f = fr[i], was = t->fold_at[f];

		if (was == PV_NONE) {
			t->fold_at[f] = (uint32_t)m;
			fr[m++] = f;
			continue;
		}
		/* back to where f was first: the cycle goes */
		while (m > was + 1)
			t->fold_at[fr[--m]] = PV_NONE;
	}
	for (size_t i = 0; i < m; i++)
		t->fold_at[fr[i]] = PV_NONE;
	return (ssize_t)(at + m);
}

/* The frames of a stack of locations (leaf first), outermost first, into
 * t->scratch from position at; returns the new end, or -1. */
static ssize_t expand_into(struct calltree *t, const uint32_t *locs, uint32_t nlocs, size_t at)
{
	size_t n = at;

	/* Never left NULL, even for a stack without frames: the paths point
	 * into it by offset. */
	if (pv_grow(&t->scratch, &t->cap_scratch, n + 1, sizeof *t->scratch) < 0)
		return -1;
	for (uint32_t i = nlocs; i-- > 0;) {
		uint32_t nf;
		const uint32_t *fr = location_frames(t, locs[i], &nf);
		if (!fr)
			return -1;
		if (pv_grow(&t->scratch, &t->cap_scratch, n + nf + 1, sizeof *t->scratch) < 0)
			return -1;
		for (uint32_t j = 0; j < nf; j++) {
			/* At file granularity consecutive frames of one file merge. */
			if (t->granularity == CT_FILES && n > at && t->scratch[n - 1] == fr[j])
				continue;
			t->scratch[n++] = fr[j];
		}
	}
	return t->fold_recursion ? fold_recursion(t, at, n) : (ssize_t)n;
}

int calltree_expand(struct calltree *t, const struct pv_sample *s, const uint32_t **out)
{
	ssize_t n = expand_into(t, pv_sample_locs(t->p, s), s->nlocs, 0);

	if (n < 0)
		return -1;
	*out = t->scratch;
	return (int)n;
}

bool calltree_thread_selected(const struct pv_profile *p, const struct ct_options *opt, uint32_t th)
{
	if (!opt || !opt->tids)
		return true;
	if (th == PV_NONE)
		return false;
	for (size_t i = 0; i < opt->ntids; i++)
		if (opt->tids[i] == p->threads[th].tid)
			return true;
	return false;
}

static int cmp_nodes(const void *a, const void *b, void *ctx)
{
	const struct calltree *t = ctx;
	const struct ct_node *x = &t->nodes[*(const uint32_t *)a];
	const struct ct_node *y = &t->nodes[*(const uint32_t *)b];

	int64_t wx = ct_weight(t, x), wy = ct_weight(t, y);

	if (t->dn) {
		/* a comparison: by the larger side, so what went away is seen */
		int64_t bx = ct_base_weight(t, *(const uint32_t *)a);
		int64_t by = ct_base_weight(t, *(const uint32_t *)b);
		wx = bx > wx ? bx : wx;
		wy = by > wy ? by : wy;
	}

	if (wx != wy)
		return wx > wy ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* Link every node's children in order of weight, hottest first: the
 * nodes grouped by parent (a counting sort), each group sorted on its own. */
static int link_children(struct calltree *t)
{
	size_t n = t->nnodes;
	uint32_t *start = calloc(n + 1, sizeof *start);
	uint32_t *order = malloc((n ? n : 1) * sizeof *order);

	if (!start || !order) {
		free(start);
		free(order);
		return pv_oom();
	}
	for (size_t i = 1; i < n; i++)
		start[t->nodes[i].parent + 1]++;
	for (size_t i = 0; i < n; i++)
		start[i + 1] += start[i];
	for (size_t i = 1; i < n; i++)
		order[start[t->nodes[i].parent]++] = (uint32_t)i;
	/* start[p] is now the end of p's group, start[p - 1] its beginning */
	for (size_t par = 0; par < n; par++) {
		uint32_t from = par ? start[par - 1] : 0, to = start[par];
		struct ct_node *pn = &t->nodes[par];
		if (to - from > 1)
			qsort_r(order + from, to - from, sizeof *order, cmp_nodes, t);
		pn->nchildren = to - from;
		pn->first_child = to > from ? order[from] : PV_NONE;
		for (uint32_t k = from; k < to; k++)
			t->nodes[order[k]].next_sibling = k + 1 < to ? order[k + 1] : PV_NONE;
	}
	free(start);
	free(order);
	return 0;
}

/* Building the tree.  Samples are counted once per stored stack (and
 * thread, when the tree is by thread): a group.  Each group's stack is
 * expanded to frames once, from a cache of each location's frames; the
 * paths are sorted, and one sweep over them in order makes the nodes, a
 * path sharing its prefix with the one before it: the tree comes out in
 * pre-order, every node after its parent, with no lookups.  Each path's
 * end gets its samples as self; the cumulative counts are summed from the
 * last node to the first. */

struct build {
	struct calltree *t;
	struct ct_path *groups; size_t ngroups, cap_groups;
	uint32_t *slots; size_t nslots;
	bool by_thread, by_process;
};

/* The process index of thread th, p->nprocesses when it has none. */
static uint32_t process_of(const struct pv_profile *p, uint32_t th)
{
	uint32_t pr = th < p->nthreads ? p->threads[th].process : PV_NONE;
	return pr < p->nprocesses ? pr : (uint32_t)p->nprocesses;
}

/* The group of a path under the root: its thread, its process, or 0. */
static uint32_t group_key(const struct build *b, uint32_t thread)
{
	if (b->by_thread)
		return thread;
	return b->by_process ? process_of(b->t->p, thread) : 0;
}

static uint64_t group_hash(uint32_t loc_off, uint32_t nlocs, uint32_t thread, bool base)
{
	return pv_mix64((uint64_t)loc_off << 32 ^ (uint64_t)nlocs << 20 ^ thread ^ (uint64_t)base << 63);
}

static int group_rehash(struct build *b)
{
	size_t n = b->nslots ? b->nslots * 2 : 1024;
	uint32_t *s = calloc(n, sizeof *s);

	if (!s)
		return pv_oom();
	for (size_t i = 0; i < b->ngroups; i++) {
		const struct ct_path *g = &b->groups[i];
		size_t j = group_hash(g->loc_off, g->nlocs, g->thread, g->base) & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(b->slots);
	b->slots = s;
	b->nslots = n;
	return 0;
}

/* The group of sample s, made (and its path expanded) when new; NULL when
 * out of memory. */
static struct ct_path *group_of(struct build *b, const struct pv_sample *s)
{
	struct calltree *t = b->t;
	uint32_t thread = group_key(b, s->thread);
	bool base = (s->flags & PV_SAMPLE_BASE) && t->dn;
	struct ct_path *g;
	size_t mask, i;
	ssize_t end;

	if ((b->ngroups + 1) * 2 > b->nslots && group_rehash(b) < 0)
		return NULL;
	mask = b->nslots - 1;
	for (i = group_hash(s->loc_off, s->nlocs, thread, base) & mask; b->slots[i]; i = (i + 1) & mask) {
		g = &b->groups[b->slots[i] - 1];
		if (g->loc_off == s->loc_off && g->nlocs == s->nlocs && g->thread == thread &&
		    g->base == base)
			return g;
	}
	if (b->ngroups >= UINT32_MAX - 1 ||
	    pv_grow(&b->groups, &b->cap_groups, b->ngroups + 1, sizeof *b->groups) < 0)
		return NULL;
	end = expand_into(t, pv_sample_locs(t->p, s), s->nlocs, t->nscratch);
	if (end < 0)
		return NULL;
	if ((size_t)end - t->nscratch >= UINT32_MAX) {
		pv_oom();
		return NULL;
	}
	g = &b->groups[b->ngroups];
	*g = (struct ct_path){ .loc_off = s->loc_off, .nlocs = s->nlocs, .thread = thread,
			       .base = base, .off = t->nscratch, .len = (uint32_t)((size_t)end - t->nscratch) };
	t->nscratch = (size_t)end;
	b->slots[i] = (uint32_t)b->ngroups + 1;
	b->ngroups++;
	return g;
}

static int cmp_paths(const void *a, const void *b, void *ctx)
{
	const struct build *bd = ctx;
	const struct ct_path *x = &bd->groups[*(const uint32_t *)a];
	const struct ct_path *y = &bd->groups[*(const uint32_t *)b];
	const uint32_t *px = bd->t->scratch + x->off, *py = bd->t->scratch + y->off;
	uint32_t n = x->len < y->len ? x->len : y->len;

	if (bd->by_process && bd->by_thread && x->thread != y->thread) {
		uint32_t qx = process_of(bd->t->p, x->thread), qy = process_of(bd->t->p, y->thread);
		if (qx != qy)
			return qx < qy ? -1 : 1;
	}
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	for (uint32_t i = 0; i < n; i++)
		if (px[i] != py[i])
			return px[i] < py[i] ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return (int)x->base - (int)y->base;
}

static uint32_t new_node(struct calltree *t, uint32_t parent, uint32_t kind, uint32_t frame)
{
	struct ct_node *c;

	if (t->nnodes >= UINT32_MAX - 1 ||
	    pv_grow(&t->nodes, &t->cap_nodes, t->nnodes + 1, sizeof *t->nodes) < 0)
		return PV_NONE;
	c = &t->nodes[t->nnodes];
	*c = (struct ct_node){ .kind = kind, .frame = frame, .parent = parent,
			       .first_child = PV_NONE, .next_sibling = PV_NONE,
			       .depth = t->nodes[parent].depth + 1 };
	return (uint32_t)t->nnodes++;
}

/* The groups, then the nodes from their sorted paths.  0 or -1. */
/* The samples the options select, grouped by stack (and thread): each
 * group's counts, values and squared weights. */
static int group_samples(struct calltree *t, struct build *b, const struct ct_options *opt)
{
	const struct pv_profile *p = t->p;

	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pv_sample *s = &p->samples[i];
		struct ct_path *g;

		if (!calltree_thread_selected(p, opt, s->thread))
			continue;
		int64_t c = ct_sample_count(t, s);
		int64_t v = t->v_value != PV_NONE ? s->values[t->v_value] : 0;
		/* weighs nothing here (a heap block freed before the end, by
		 * inuse_space): no node, as pprof */
		if (c == 0 && v == 0)
			continue;
		if (!(g = group_of(b, s)))
			return -1;
		g->count += c;
		g->value += v;
		g->sq += pv_sample_var(s, t->v_value != PV_NONE ? t->v_value : t->v_count, t->v_count);
	}
	return 0;
}

/* A tree of paths only: the stacks as they are, and the root's totals. */
static void keep_paths(struct calltree *t, struct build *b)
{
	for (size_t i = 0; i < b->ngroups; i++) {
		const struct ct_path *g = &b->groups[i];
		if (g->base) {
			t->dn[0].count += g->count;
			t->dn[0].value += g->value;
			t->dn[0].base_sq += g->sq;
			if (!g->len) {
				t->dn[0].self_count += g->count;
				t->dn[0].self_value += g->value;
				t->dn[0].base_self_sq += g->sq;
			}
			continue;
		}
		t->nodes[0].count += g->count;
		t->nodes[0].value += g->value;
		t->nodes[0].sq += g->sq;
		if (!g->len) {
			t->nodes[0].self_count += g->count;
			t->nodes[0].self_value += g->value;
			t->nodes[0].self_sq += g->sq;
		}
	}
	t->samples = t->nodes[0].count;
	t->paths = b->groups;
	t->npaths = b->ngroups;
	t->path_frames = t->scratch;
	b->groups = NULL;
	t->scratch = NULL;
	t->cap_scratch = 0;
}

/* How many nodes the sweep makes, in the paths' order: each path's frames
 * past the prefix it shares with the one before (into lcps), and a node
 * per thread.  Room for them at once, mapped in at once. */
static int reserve_nodes(struct calltree *t, const struct build *b, const uint32_t *order,
			 uint32_t *lcps)
{
	size_t need = 1;

	for (size_t k = 0; k < b->ngroups; k++) {
		const struct ct_path *g = &b->groups[order[k]], *pg = k ? &b->groups[order[k - 1]] : NULL;
		uint32_t lcp = 0;
		if (pg && pg->thread == g->thread) {
			const uint32_t *pp = t->scratch + pg->off, *path = t->scratch + g->off;
			uint32_t n = pg->len < g->len ? pg->len : g->len;
			while (lcp < n && pp[lcp] == path[lcp])
				lcp++;
		} else if (b->by_thread || b->by_process) {
			need += 2;
		}
		lcps[k] = lcp;
		need += g->len - lcp;
	}
	if (need >= UINT32_MAX) {
		pv_oom();
		return -1;
	}
	/* the tree's memory, all of it here: charged */
	if (need > t->cap_nodes &&
	    pv_budget_charge((need - t->cap_nodes) * (sizeof *t->nodes + (t->dn ? sizeof *t->dn : 0))) < 0)
		return -1;
	if (need > t->cap_nodes) {
		struct ct_node *nn = realloc(t->nodes, need * sizeof *nn);
		if (!nn) {
			pv_oom();
			return -1;
		}
		t->nodes = nn;
		t->cap_nodes = need;
	}
	pv_prefault(t->nodes + t->nnodes, (need - t->nnodes) * sizeof *t->nodes);
	if (t->dn) {
		struct ct_diff_node *d = realloc(t->dn, need * sizeof *d);
		if (!d) {
			pv_oom();
			return -1;
		}
		memset(d, 0, need * sizeof *d);
		t->dn = d;
	}
	return 0;
}

/* The nodes of the sorted paths, each path's past the prefix it shares
 * with the one before; its samples to its last node. */
static int sweep_paths(struct calltree *t, const struct build *b, const uint32_t *order,
		       const uint32_t *lcps)
{
	const struct pv_profile *p = t->p;
	const struct ct_path *prev = NULL;
	uint32_t thread_node = 0, process_node = 0, *path_nodes = NULL;
	size_t cap_path_nodes = 0;
	int ret = -1;

	for (size_t k = 0; k < b->ngroups; k++) {
		const struct ct_path *g = &b->groups[order[k]];
		const uint32_t *path = t->scratch ? t->scratch + g->off : NULL; /* none when no stack has a frame */
		uint32_t lcp = 0, node;

		if (b->by_process && (!prev || prev->thread != g->thread)) {
			uint32_t pr = b->by_thread ? process_of(p, g->thread) : g->thread;
			if (thread_node == 0 || t->nodes[process_node].frame != pr) {
				process_node = new_node(t, 0, CT_PROCESS, pr);
				if (process_node == PV_NONE)
					goto out;
			}
			thread_node = process_node;
		}
		if (b->by_thread && (!prev || prev->thread != g->thread)) {
			thread_node = new_node(t, b->by_process ? process_node : 0, CT_THREAD, g->thread);
			/* (t->dn has room for every node: reserve_nodes counted them) */
			if (thread_node == PV_NONE)
				goto out;
			prev = NULL;
		}
		if (prev)
			lcp = lcps[k];
		if (pv_grow(&path_nodes, &cap_path_nodes, (size_t)g->len + 1, sizeof *path_nodes) < 0)
			goto out;
		node = lcp ? path_nodes[lcp - 1] : thread_node;
		for (uint32_t j = lcp; j < g->len; j++) {
			node = new_node(t, node, CT_FRAME, path[j]);
			if (node == PV_NONE)
				goto out;
			path_nodes[j] = node;
		}
		if (g->base) {
			t->dn[node].self_count += g->count;
			t->dn[node].self_value += g->value;
			t->dn[node].base_self_sq += g->sq;
		} else {
			t->nodes[node].self_count += g->count;
			t->nodes[node].self_value += g->value;
			t->nodes[node].self_sq += g->sq;
		}
		prev = g;
	}
	ret = 0;
out:
	free(path_nodes);
	return ret;
}

/* Cumulative counts: every node comes after its parent. */
static void sum_nodes(struct calltree *t)
{
	for (size_t i = 0; i < t->nnodes; i++) {
		t->nodes[i].count = t->nodes[i].self_count;
		t->nodes[i].value = t->nodes[i].self_value;
		t->nodes[i].sq = t->nodes[i].self_sq;
	}
	for (size_t i = t->nnodes; i-- > 1;) {
		struct ct_node *par = &t->nodes[t->nodes[i].parent];
		par->count += t->nodes[i].count;
		par->value += t->nodes[i].value;
		par->sq += t->nodes[i].sq;
	}
	if (t->dn) {
		for (size_t i = 0; i < t->nnodes; i++) {
			struct ct_diff_node *d = &t->dn[i];
			d->count = d->self_count;
			d->value = d->self_value;
			d->base_sq = d->base_self_sq;
		}
		for (size_t i = t->nnodes; i-- > 1;) {
			struct ct_diff_node *d = &t->dn[i], *par = &t->dn[t->nodes[i].parent];
			par->count += d->count;
			par->value += d->value;
			par->base_sq += d->base_sq;
		}
	}
	t->samples = t->nodes[0].count;
}

static int build_tree(struct calltree *t, const struct ct_options *opt)
{
	struct build b = { .t = t, .by_thread = opt->by_thread, .by_process = opt->by_process };
	uint32_t *order = NULL, *lcps = NULL;
	int ret = -1;

	if (group_samples(t, &b, opt) < 0)
		goto out;
	if (t->paths_only) {
		keep_paths(t, &b);
		ret = 0;
		goto out;
	}
	order = malloc((b.ngroups ? b.ngroups : 1) * sizeof *order);
	lcps = malloc((b.ngroups ? b.ngroups : 1) * sizeof *lcps);
	if (!order || !lcps) {
		pv_oom();
		goto out;
	}
	for (size_t i = 0; i < b.ngroups; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, b.ngroups, sizeof *order, cmp_paths, &b);
	if (reserve_nodes(t, &b, order, lcps) < 0 || sweep_paths(t, &b, order, lcps) < 0)
		goto out;
	sum_nodes(t);
	ret = 0;
out:
	free(order);
	free(lcps);
	free(b.groups);
	free(b.slots);
	t->nscratch = 0; /* the paths are not needed any more */
	return ret;
}

struct calltree *calltree_build(const struct pv_profile *p, const struct ct_options *opt)
{
	struct calltree *t = calloc(1, sizeof *t);
	static const struct ct_options defaults = { 0 };

	if (!opt)
		opt = &defaults;
	if (!t) {
		pv_oom();
		return NULL;
	}
	t->p = p;
	t->granularity = opt->granularity;
	t->noinlines = opt->noinlines;
	t->reversed = opt->reversed;
	t->fold_recursion = opt->fold_recursion;
	t->by_process = opt->by_process;
	t->by_thread = opt->by_thread;
	if (!opt->full_names && !(t->names = names_new(p)))
		goto fail;
	t->v_count = pv_find_value_type(p, "samples");
	if (t->v_count == PV_NONE && p->nvalues)
		t->v_count = 0;
	t->v_value = PV_NONE;
	if (!opt->sample_index)
		ct_default_value(t);
	else if (ct_choose_value(t, opt->sample_index) < 0)
		goto fail;
	if (p->cpu_exact && !p->diff && p->threads_cpu_ns > 0 && t->v_value != PV_NONE &&
	    strcmp(pv_str(p, p->sample_types[t->v_value].type), "cpu") == 0)
		t->exact_total = p->threads_cpu_ns;
	t->loc_frames = pv_budget_calloc(p->nlocations ? p->nlocations : 1, sizeof *t->loc_frames);
	if (!t->loc_frames || pv_grow(&t->nodes, &t->cap_nodes, 1, sizeof *t->nodes) < 0)
		goto fail;
	if (p->diff && !(t->dn = calloc(1, sizeof *t->dn))) {
		pv_oom();
		goto fail;
	}
	memset(t->loc_frames, 0xff, p->nlocations * sizeof *t->loc_frames);
	t->nodes[0] = (struct ct_node){ .kind = CT_ROOT, .parent = PV_NONE,
					.first_child = PV_NONE, .next_sibling = PV_NONE };
	t->nnodes = 1;

	t->paths_only = opt->paths_only;
	if (build_tree(t, opt) < 0)
		goto fail;
	if (!t->paths_only && link_children(t) < 0)
		goto fail;
	return t;
fail:
	calltree_free(t);
	return NULL;
}

void calltree_free(struct calltree *t)
{
	if (!t)
		return;
	free(t->frames);
	free(t->nodes);
	free(t->frame_slots);
	free(t->scratch);
	free(t->fold_at);
	free(t->loc_frames);
	free(t->lf);
	free(t->paths);
	free(t->path_frames);
	free(t->dn);
	names_free(t->names);
	free(t);
}

const char *calltree_function_name(const struct calltree *t, uint32_t function)
{
	if (function >= t->p->nfunctions)
		return "";
	return names_get(t->names, t->p, function);
}

/* Frame frame's name, its function named fn. */
static const char *frame_name(const struct calltree *t, uint32_t frame, const char *fn, char *buf,
			      size_t n)
{
	const struct pv_profile *p = t->p;
	const struct ct_frame *f = &t->frames[frame];

	switch (t->granularity) {
	case CT_FILES:
		snprintf(buf, n, "%s", f->file ? pv_str(p, f->file) : fn);
		break;
	case CT_LINES:
		if (f->line > 0)
			snprintf(buf, n, "%s:%" PRId64, fn, f->line);
		else
			snprintf(buf, n, "%s", fn);
		break;
	case CT_ADDRESSES:
		snprintf(buf, n, "%s @0x%" PRIx64, fn, f->address);
		break;
	default:
		snprintf(buf, n, "%s", fn);
	}
	return buf;
}

const char *calltree_frame_name(const struct calltree *t, uint32_t frame, char *buf, size_t n)
{
	return frame_name(t, frame, calltree_function_name(t, t->frames[frame].function), buf, n);
}

const char *calltree_frame_full_name(const struct calltree *t, uint32_t frame, char *buf, size_t n)
{
	uint32_t fn = t->frames[frame].function;

	return frame_name(t, frame, fn < t->p->nfunctions ? pv_str(t->p, t->p->functions[fn].name) : "",
			  buf, n);
}

const char *calltree_frame_file(const struct calltree *t, uint32_t frame, int64_t *line)
{
	const struct pv_profile *p = t->p;
	const struct ct_frame *f = &t->frames[frame];
	uint32_t file = f->file;

	*line = 0;
	if (t->granularity == CT_FILES)
		return "";
	*line = f->line;
	if (f->function != PV_NONE && !file) {
		/* A function stands at the line where it starts. */
		file = p->functions[f->function].filename;
		*line = p->functions[f->function].start_line;
	}
	if (!file)
		*line = 0;
	if (*line < 0)
		*line = 0;
	return pv_str(p, file);
}

const char *calltree_frame_where(const struct calltree *t, uint32_t frame, char *buf, size_t n)
{
	int64_t line;
	const char *file = calltree_frame_file(t, frame, &line);

	if (!file[0])
		buf[0] = '\0';
	else if (line > 0)
		snprintf(buf, n, "%s:%" PRId64, file, line);
	else
		snprintf(buf, n, "%s", file);
	return buf;
}

struct calltree *calltree_subtree(const struct calltree *t, uint32_t node)
{
	struct calltree *sub;
	uint32_t *map;
	size_t n = 1;

	if (node >= t->nnodes || t->paths_only)
		return NULL;
	sub = calloc(1, sizeof *sub);
	map = malloc(t->nnodes * sizeof *map);
	if (!sub || !map)
		goto fail;
	sub->p = t->p;
	sub->granularity = t->granularity;
	sub->noinlines = t->noinlines;
	sub->reversed = t->reversed;
	if (t->names && !(sub->names = names_copy(t->names)))
		goto fail;
	sub->v_count = t->v_count;
	sub->v_value = t->v_value;
	sub->exact_total = t->exact_total;
	sub->frames = pv_budget_calloc(t->nframes ? t->nframes : 1, sizeof *sub->frames);
	sub->nodes = pv_budget_calloc(t->nnodes + 1, sizeof *sub->nodes);
	if (!sub->frames || !sub->nodes)
		goto fail;
	if (t->dn && !(sub->dn = pv_budget_calloc(t->nnodes + 1, sizeof *sub->dn)))
		goto fail;
	if (t->nframes)
		memcpy(sub->frames, t->frames, t->nframes * sizeof *t->frames);
	sub->nframes = sub->cap_frames = t->nframes;
	sub->kernel_frames = t->kernel_frames;
	sub->cap_nodes = t->nnodes + 1;
	/* The root: the node's totals, nothing of its own. */
	sub->nodes[0] = (struct ct_node){ .kind = CT_ROOT, .parent = PV_NONE, .first_child = 1,
					  .next_sibling = PV_NONE, .nchildren = 1,
					  .count = t->nodes[node].count, .value = t->nodes[node].value,
					  .sq = t->nodes[node].sq };
	if (sub->dn) {
		sub->dn[0] = t->dn[node];
		sub->dn[0].self_count = sub->dn[0].self_value = 0;
		sub->dn[0].base_self_sq = 0;
	}
	if (node == 0) {
		/* the whole tree */
		memcpy(sub->nodes, t->nodes, t->nnodes * sizeof *t->nodes);
		if (sub->dn)
			memcpy(sub->dn, t->dn, t->nnodes * sizeof *t->dn);
		n = t->nnodes;
		goto done;
	}
	for (size_t i = 0; i < t->nnodes; i++)
		map[i] = PV_NONE;
	/* Nodes come after their parent: one pass in node order copies the
	 * subtree, parents first. */
	for (size_t i = node; i < t->nnodes; i++) {
		const struct ct_node *nd = &t->nodes[i];
		if (i != node && (nd->parent == PV_NONE || map[nd->parent] == PV_NONE))
			continue;
		map[i] = (uint32_t)n;
		sub->nodes[n] = *nd;
		if (sub->dn)
			sub->dn[n] = t->dn[i];
		sub->nodes[n].parent = i == node ? 0 : map[nd->parent];
		sub->nodes[n].depth = i == node ? 1 : sub->nodes[map[nd->parent]].depth + 1;
		n++;
	}
	for (size_t i = 1; i < n; i++) {
		struct ct_node *nd = &sub->nodes[i];
		nd->first_child = nd->first_child != PV_NONE ? map[nd->first_child] : PV_NONE;
		nd->next_sibling = i == 1 || nd->next_sibling == PV_NONE ? PV_NONE : map[nd->next_sibling];
	}
done:
	sub->nnodes = n;
	sub->samples = sub->nodes[0].count;
	free(map);
	return sub;
fail:
	free(map);
	calltree_free(sub);
	pv_oom();
	return NULL;
}

bool ct_below_floor(int64_t w, double parent_sq, double k)
{
	return k > 0 && (double)w <= k * sqrt(parent_sq > 0 ? parent_sq : 0);
}

bool ct_node_below_floor(const struct calltree *t, uint32_t i, double k)
{
	uint32_t par = t->nodes[i].parent;
	int64_t w = ct_weight(t, &t->nodes[i]);
	double sq;

	if (k <= 0 || par == PV_NONE)
		return false;
	sq = t->nodes[par].sq;
	if (t->dn) {
		if (ct_base_weight(t, i) > w)
			w = ct_base_weight(t, i);
		if (t->dn[par].base_sq > sq)
			sq = t->dn[par].base_sq;
	}
	return ct_below_floor(w, sq, k);
}

double ct_var(const struct calltree *t, int64_t w, double sq)
{
	if (t->exact_total > 0 && w >= 0 && w <= t->exact_total)
		sq *= 1 - (double)w / (double)t->exact_total;
	return sq > 0 ? sq : 0;
}

double ct_noise_samples(const struct calltree *t, int64_t n, int64_t w, double sq)
{
	double se = sqrt(ct_var(t, w, sq));

	if (t->v_value == PV_NONE)
		return se;
	return w > 0 ? se / (double)w * (double)n : 0;
}

const char *calltree_process_name(const struct calltree *t, uint32_t process, char *buf, size_t n)
{
	const struct pv_process *proc;

	if (process >= t->p->nprocesses) {
		snprintf(buf, n, "[unknown process]");
		return buf;
	}
	proc = &t->p->processes[process];
	if (pv_str(t->p, proc->before)[0])
		snprintf(buf, n, "[process %" PRIu32 " \"%s\", first %s]", proc->pid,
			 pv_str(t->p, proc->name), pv_str(t->p, proc->before));
	else
		snprintf(buf, n, "[process %" PRIu32 " \"%s\"]", proc->pid, pv_str(t->p, proc->name));
	return buf;
}

const char *calltree_node_name(const struct calltree *t, uint32_t node, char *buf, size_t n)
{
	const struct ct_node *nd = &t->nodes[node];
	const struct pv_thread *th;

	switch (nd->kind) {
	case CT_ROOT:
		snprintf(buf, n, "[all]");
		return buf;
	case CT_THREAD:
		/* samples with no thread (folded stacks, gperftools) */
		if (nd->frame >= t->p->nthreads) {
			snprintf(buf, n, "[unknown thread]");
			return buf;
		}
		th = &t->p->threads[nd->frame];
		if (pv_str(t->p, th->name)[0])
			snprintf(buf, n, "[thread %" PRIu32 " \"%s\"", th->tid, pv_str(t->p, th->name));
		else
			snprintf(buf, n, "[thread %" PRIu32, th->tid);
		/* which process, unless under its node */
		if (th->process < t->p->nprocesses &&
		    (nd->parent == PV_NONE || t->nodes[nd->parent].kind != CT_PROCESS)) {
			char pr[256];
			size_t at = strlen(buf);
			snprintf(buf + at, n - at, " in %s",
				 pv_thread_process_name(t->p, nd->frame, pr, sizeof pr));
		}
		snprintf(buf + strlen(buf), n - strlen(buf), "]");
		return buf;
	case CT_PROCESS:
		return calltree_process_name(t, nd->frame, buf, n);
	default:
		return calltree_frame_name(t, nd->frame, buf, n);
	}
}
