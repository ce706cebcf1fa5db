/* test-aggregate.c - the call tree of a big random profile, checked node by
 * node against a plain reference: every sample added along its path, one
 * at a time, with a lookup per frame (the way the tree was first built)
 *
 * The profile has 200,000 samples in 8,000 stored stacks (some stored
 * twice with the same locations, some shared by samples that use only
 * part of them, some empty, recursion, inlined frames),
 * 6 threads and samples without one, and locations that share a function
 * or a line.  Every granularity, by thread or not, a --tid subset and both
 * weights are compared: counts, times, self counts, depth, children and
 * their order, and the flat rows.
 */
#include "calltree.h"
#include "check.h"

#include <stdint.h>

#define NFUNCS 300
#define NFILES 17
#define NLOCS 3000
#define NSTACKS 8000
#define NSAMPLES 200000
#define MAXDEPTH 40

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct pv_profile *make_big(void)
{
	struct pv_profile *p = pv_profile_new();
	uint32_t fns[NFUNCS], files[NFILES];
	char buf[64];

	pv_add_value_type(p, "samples", "count");
	pv_add_value_type(p, "cpu", "nanoseconds");
	for (int i = 0; i < NFILES; i++) {
		snprintf(buf, sizeof buf, "src/file%d.c", i);
		files[i] = pv_intern_str(p, buf);
	}
	for (int i = 0; i < NFUNCS; i++) {
		snprintf(buf, sizeof buf, "fn_%d", i);
		uint32_t n = pv_intern_str(p, buf);
		/* a few functions without a file */
		fns[i] = pv_get_function(p, n, n, i % 23 == 0 ? 0 : files[rnd() % NFILES], 10 + i);
	}
	for (int i = 0; i < NLOCS; i++) {
		uint32_t loc = pv_get_location(p, 0x400000 + 16 * (uint64_t)i, PV_NONE);
		struct pv_line lines[3];
		uint32_t n = rnd() % 6 == 0 ? 2 + (uint32_t)(rnd() % 2) : 1;
		for (uint32_t j = 0; j < n; j++)
			/* few distinct lines, so that locations share them */
			lines[j] = (struct pv_line){ fns[rnd() % NFUNCS], (int64_t)(rnd() % 4) };
		CHECK(pv_set_lines(p, loc, lines, n) == 0);
	}
	for (uint32_t tid = 1; tid <= 6; tid++)
		pv_get_thread(p, 100 + tid, PV_NONE);
	uint32_t *offs = malloc(NSTACKS * sizeof *offs), *lens = malloc(NSTACKS * sizeof *lens);
	for (int k = 0; k < NSTACKS; k++) {
		uint32_t locs[MAXDEPTH];
		uint32_t n = rnd() % 50 == 0 ? 0 : 1 + (uint32_t)(rnd() % MAXDEPTH);
		/* stacks share prefixes: a few roots, paths from a few choices */
		for (uint32_t j = 0; j < n; j++) {
			uint32_t at = n - 1 - j; /* outermost first into a leaf-first array */
			if (j > 0 && rnd() % 10 == 0)
				locs[at] = locs[at + 1]; /* recursion */
			else
				locs[at] = (uint32_t)((j * 7 + rnd() % (j < 3 ? 2 : 6)) % NLOCS);
		}
		offs[k] = pv_add_stack(p, locs, n);
		lens[k] = n;
	}
	for (int i = 0; i < NSAMPLES; i++) {
		int k = (int)(rnd() % NSTACKS);
		uint32_t th = rnd() % 13 == 0 ? PV_NONE : (uint32_t)(rnd() % 6);
		struct pv_sample s = { offs[k], lens[k], th, 0,
				       { 1 + (int64_t)(rnd() % 3), (int64_t)(rnd() % 5000000) } };
		if (rnd() % 11 == 0) /* the same stored stack, its outer half left out */
			s.nlocs /= 2;
		else if (rnd() % 7 == 0 && s.nlocs) { /* the same locations, stored again */
			uint32_t copy[MAXDEPTH];
			memcpy(copy, pv_sample_locs(p, &s), s.nlocs * sizeof *copy);
			s.loc_off = pv_add_stack(p, copy, s.nlocs);
		}
		CHECK(pv_add_sample(p, &s) == 0);
	}
	free(offs);
	free(lens);
	return p;
}

/* The reference: a frame is its key, a node is found by a scan of its
 * parent's children (kept in a hash of parent and key). */
struct rnode {
	struct ct_frame key;
	uint32_t kind, parent, depth;
	int64_t count, value, self_count, self_value;
	uint32_t nchildren;
};

struct ref {
	struct rnode *n;
	size_t nn, cap;
	uint32_t *slots;
	size_t nslots;
};

static uint64_t key_hash(uint32_t parent, uint32_t kind, const struct ct_frame *k)
{
	uint64_t h = parent * 0x9e3779b97f4a7c15ULL ^ kind;
	h = (h ^ k->function) * 0x100000001b3ULL;
	h = (h ^ k->file) * 0x100000001b3ULL;
	h = (h ^ (uint64_t)k->line) * 0x100000001b3ULL;
	h = (h ^ k->address) * 0x100000001b3ULL;
	return h ^ h >> 29;
}

static bool key_eq(const struct ct_frame *a, const struct ct_frame *b)
{
	return a->function == b->function && a->file == b->file && a->line == b->line &&
	       a->address == b->address;
}

static uint32_t ref_child(struct ref *r, uint32_t parent, uint32_t kind, const struct ct_frame *k)
{
	if ((r->nn + 1) * 2 > r->nslots) {
		size_t ns = r->nslots ? r->nslots * 2 : 4096;
		uint32_t *s = calloc(ns, sizeof *s);
		for (size_t i = 1; i < r->nn; i++) {
			size_t j = key_hash(r->n[i].parent, r->n[i].kind, &r->n[i].key) & (ns - 1);
			while (s[j])
				j = (j + 1) & (ns - 1);
			s[j] = (uint32_t)i + 1;
		}
		free(r->slots);
		r->slots = s;
		r->nslots = ns;
	}
	size_t j = key_hash(parent, kind, k) & (r->nslots - 1);
	for (; r->slots[j]; j = (j + 1) & (r->nslots - 1)) {
		struct rnode *c = &r->n[r->slots[j] - 1];
		if (c->parent == parent && c->kind == kind && key_eq(&c->key, k))
			return r->slots[j] - 1;
	}
	if (r->nn == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 4096;
		r->n = realloc(r->n, r->cap * sizeof *r->n);
	}
	r->n[r->nn] = (struct rnode){ .key = *k, .kind = kind, .parent = parent,
				      .depth = r->n[parent].depth + 1 };
	r->n[parent].nchildren++;
	r->slots[j] = (uint32_t)r->nn + 1;
	return (uint32_t)r->nn++;
}

/* The frame keys of a sample, outermost first, as the granularity makes
 * them. */
static size_t ref_frames(const struct pv_profile *p, const struct pv_sample *s, enum ct_granularity g,
			 struct ct_frame *out)
{
	const uint32_t *locs = pv_sample_locs(p, s);
	size_t n = 0;

	for (uint32_t i = s->nlocs; i-- > 0;) {
		const struct pv_location *loc = &p->locations[locs[i]];
		const struct pv_line *lines = pv_location_lines(p, loc);
		for (uint32_t j = loc->nlines; j-- > 0;) {
			const struct pv_function *f = &p->functions[lines[j].function];
			struct ct_frame k = { PV_NONE, 0, 0, 0 };
			switch (g) {
			case CT_FUNCTIONS: k.function = lines[j].function; break;
			case CT_LINES:
				k.function = lines[j].function;
				k.file = f->filename;
				k.line = lines[j].line;
				break;
			case CT_FILES:
				k.file = f->filename;
				if (!k.file)
					k.function = lines[j].function;
				break;
			case CT_ADDRESSES:
				k.function = lines[j].function;
				k.address = loc->address;
				break;
			}
			if (g == CT_FILES && n && key_eq(&out[n - 1], &k))
				continue;
			out[n++] = k;
		}
	}
	return n;
}

static void ref_build(struct ref *r, const struct pv_profile *p, const struct ct_options *o,
		      bool by_count)
{
	struct ct_frame *fr = malloc(MAXDEPTH * 3 * sizeof *fr);

	memset(r, 0, sizeof *r);
	r->cap = 4096;
	r->n = calloc(r->cap, sizeof *r->n);
	r->n[0].kind = CT_ROOT;
	r->n[0].parent = PV_NONE;
	r->nn = 1;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pv_sample *s = &p->samples[i];
		int64_t c = s->values[0], v = by_count ? 0 : s->values[1];
		uint32_t node = 0;

		if (!calltree_thread_selected(p, o, s->thread))
			continue;
		size_t n = ref_frames(p, s, o->granularity, fr);
		r->n[0].count += c;
		r->n[0].value += v;
		if (o->by_thread) {
			struct ct_frame k = { s->thread, 0, 0, 0 };
			node = ref_child(r, node, CT_THREAD, &k);
			r->n[node].count += c;
			r->n[node].value += v;
		}
		for (size_t j = 0; j < n; j++) {
			node = ref_child(r, node, CT_FRAME, &fr[j]);
			r->n[node].count += c;
			r->n[node].value += v;
		}
		r->n[node].self_count += c;
		r->n[node].self_value += v;
	}
	free(fr);
}

static void ref_free(struct ref *r)
{
	free(r->n);
	free(r->slots);
}

/* Walk the tree, finding each node's twin in the reference. */
static void compare(const struct calltree *t, struct ref *r, const char *what)
{
	uint32_t *stack = malloc(t->nnodes * sizeof *stack), *twin = malloc(t->nnodes * sizeof *twin);
	size_t sp = 0, seen = 0;
	int bad = 0;

	CHECK_EQ(t->nnodes, r->nn);
	stack[sp++] = 0;
	twin[0] = 0;
	while (sp && bad < 5) {
		uint32_t id = stack[--sp];
		const struct ct_node *nd = &t->nodes[id];
		const struct rnode *rn = &r->n[twin[id]];
		uint32_t prev = PV_NONE;
		seen++;
		if (nd->count != rn->count || nd->value != rn->value || nd->self_count != rn->self_count ||
		    nd->self_value != rn->self_value || nd->depth != rn->depth ||
		    nd->nchildren != rn->nchildren) {
			fprintf(stderr, "%s: node %u differs from the reference: count %" PRId64 "/%" PRId64
				" value %" PRId64 "/%" PRId64 " self %" PRId64 "/%" PRId64 " children %u/%u\n",
				what, id, nd->count, rn->count, nd->value, rn->value, nd->self_count,
				rn->self_count, nd->nchildren, rn->nchildren);
			bad++;
		}
		for (uint32_t c = nd->first_child; c != PV_NONE; c = t->nodes[c].next_sibling) {
			const struct ct_node *cn = &t->nodes[c];
			struct ct_frame k = cn->kind == CT_THREAD ? (struct ct_frame){ cn->frame, 0, 0, 0 } :
								     t->frames[cn->frame];
			size_t before = r->nn;
			uint32_t rc = ref_child(r, twin[id], cn->kind, &k);
			if (r->nn != before) {
				fprintf(stderr, "%s: node %u is not in the reference\n", what, c);
				bad++;
				r->nn = before; /* (the slot stays: the next check fails anyway) */
				continue;
			}
			CHECK_EQ(cn->parent, id);
			/* hottest first; ties by count, then frame index */
			if (prev != PV_NONE) {
				const struct ct_node *pn = &t->nodes[prev];
				int64_t wp = ct_weight(t, pn), wc = ct_weight(t, cn);
				bool ok = wp > wc || (wp == wc && (pn->count > cn->count ||
								   (pn->count == cn->count && pn->frame < cn->frame)));
				if (!ok) {
					fprintf(stderr, "%s: children of node %u out of order\n", what, id);
					bad++;
				}
			}
			prev = c;
			twin[c] = rc;
			stack[sp++] = c;
		}
	}
	CHECK(bad == 0);
	CHECK_EQ(seen, t->nnodes);
	free(stack);
	free(twin);
}

/* Flat rows against the reference's: self from the ends of paths,
 * cumulative once per frame on a path. */
static void compare_flat(struct calltree *t, const struct ref *r, const char *what)
{
	size_t n;
	struct ct_flat_row *rows = calltree_flat(t, &n);
	int64_t *self = calloc(t->nframes + 1, sizeof *self), *cum = calloc(t->nframes + 1, sizeof *cum);
	int bad = 0;

	CHECK(rows != NULL);
	/* from the tree's nodes, which compare() matched with the reference */
	for (size_t i = 1; i < t->nnodes; i++) {
		const struct ct_node *nd = &t->nodes[i];
		if (nd->kind != CT_FRAME)
			continue;
		self[nd->frame] += nd->self_count;
		/* outermost occurrence on its path */
		bool outer = true;
		for (uint32_t a = nd->parent; a != PV_NONE && a != 0; a = t->nodes[a].parent)
			if (t->nodes[a].kind == CT_FRAME && t->nodes[a].frame == nd->frame)
				outer = false;
		if (outer)
			cum[nd->frame] += nd->count;
	}
	for (size_t i = 0; i < n && bad < 5; i++)
		if (rows[i].self_count != self[rows[i].frame] || rows[i].cum_count != cum[rows[i].frame]) {
			fprintf(stderr, "%s: flat row of frame %u differs\n", what, rows[i].frame);
			bad++;
		}
	CHECK(bad == 0);
	(void)r;
	free(rows);
	free(self);
	free(cum);
}

int main(void)
{
	struct pv_profile *p = make_big();
	static const uint32_t some[] = { 102, 104, 105 };
	static const char *const gname[] = { "functions", "lines", "files", "addresses" };

	for (int g = CT_FUNCTIONS; g <= CT_ADDRESSES; g++)
		for (int by_thread = 0; by_thread < 2; by_thread++)
			for (int sel = 0; sel < 2; sel++) {
				bool by_count = (g + by_thread + sel) % 2;
				struct ct_options o = { .granularity = (enum ct_granularity)g,
							.by_thread = by_thread,
							.tids = sel ? some : NULL, .ntids = sel ? 3 : 0,
							.sample_index = by_count ? "samples" : NULL };
				char what[128];
				struct ref r;
				struct calltree *t = calltree_build(p, &o);

				snprintf(what, sizeof what, "%s%s%s%s", gname[g], by_thread ? ", by thread" : "",
					 sel ? ", three threads" : "", by_count ? ", by count" : "");
				CHECK(t != NULL);
				if (!t)
					continue;
				ref_build(&r, p, &o, by_count);
				compare(t, &r, what);
				compare_flat(t, &r, what);
				fprintf(stderr, "%s: %zu nodes, %zu frames, %" PRId64 " samples\n", what,
					t->nnodes, t->nframes, t->samples);
				ref_free(&r);
				calltree_free(t);
			}
	pv_profile_free(p);
	printf("%d checks, %d failed\n", check_count, check_failures);
	return check_failures != 0;
}
