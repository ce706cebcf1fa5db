/* scopes.c - the DWARF scopes holding an address, from sorted indexes of
 * the children of the entries descended through (see scopes.h)
 *
 * What dwarf_getscopes finds (libdw 0.188, libdw_visit_scopes.c): it
 * visits an entry's children in order, flattening imported units (dwz's
 * partial units) into the list, and descends into a child only when the
 * child holds pc (dwarf_haspc: one of its ranges does) and is of a kind
 * that may hold scopes (a function, an inlined instance, a lexical
 * block...); the innermost entry is the first one found that way with no
 * child holding pc.  Here each entry descended through (the unit, a
 * function, a block...) gets, the first time, an index of its children
 * with code: their ranges sorted, in an implicit interval tree, each with
 * the child's place among its siblings.  The child taken at each step is
 * the first in that order whose range holds pc, as libdw's walk takes it;
 * a big function with many sampled addresses (an interpreter's loop) is
 * read once, not once per address.
 */
#include "scopes.h"
#include "error.h"
#include "util.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct range {
	uint64_t lo, hi;
	uint32_t order;        /* the entry's place among the unit's top level */
	uint32_t die;          /* index in dies */
};

struct node_index {
	const void *key;       /* the entry's DIE address */
	Dwarf_Die *dies;       /* its children with code (ranges) */
	size_t ndies, cap_dies;
	struct range *ranges;  /* by lo */
	uint64_t *treemax;     /* per node of the implicit tree over ranges */
	size_t nranges, cap_ranges;
};

/* Whether the entries of an abbreviation may have ranges, by the
 * abbreviation's address in libdw (the same for every entry of a unit
 * with that abbreviation code): direct-mapped, emptied when the file
 * changes. */
#define ABBREV_SLOTS 256
struct abbrev_cache {
	const Dwarf *dw;
	const void *key[ABBREV_SLOTS];
	bool code[ABBREV_SLOTS];
};

struct pv_scopes {
	struct abbrev_cache abbrevs;
	struct node_index *nodes;
	size_t n, cap;
	size_t *slots;         /* open addressing: node index + 1, 0 empty */
	size_t nslots;
	Dwarf_Die *path;
	size_t cap_path;
};

/* Kinds dwarf_getscopes descends into (libdw's may_have_scopes). */
static bool may_have_scopes(Dwarf_Die *die)
{
	switch (dwarf_tag(die)) {
	case DW_TAG_compile_unit:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_entry_point:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
		return true;
	default:
		return false;
	}
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static uint64_t build_tree(struct node_index *u, size_t lo, size_t hi)
{
	if (lo >= hi)
		return 0;
	size_t mid = lo + (hi - lo) / 2;
	uint64_t m = u->ranges[mid].hi;
	uint64_t l = build_tree(u, lo, mid), r = build_tree(u, mid + 1, hi);

	if (l > m)
		m = l;
	if (r > m)
		m = r;
	u->treemax[mid] = m;
	return m;
}

/* May die have ranges?  dwarf_ranges finds them only from these
 * attributes, the entry's own or through its origin or specification (its
 * low_pc goes with a high_pc); most entries (types, variables) have none
 * of them, and looking at the abbreviation is cheaper than at the values.
 * die's abbreviation is known (dwarf_tag was asked), and an answer is
 * kept by it: a unit has a few hundred, its top level thousands of
 * entries. */
static bool may_have_ranges(struct abbrev_cache *c, Dwarf_Die *die)
{
	const void *key = die->abbrev;
	const Dwarf *dw = dwarf_cu_getdwarf(die->cu);
	uintptr_t h = (uintptr_t)key;
	size_t k;
	bool code;

	h ^= h >> 17;
	h *= 0x9E3779B97F4A7C15ULL;
	k = (size_t)(h >> 40) & (ABBREV_SLOTS - 1);
	if (dw != c->dw) {
		memset(c->key, 0, sizeof c->key);
		c->dw = dw;
	}
	if (key && key != (void *)-1l && c->key[k] == key)
		return c->code[k];
	code = dwarf_hasattr(die, DW_AT_high_pc) || dwarf_hasattr(die, DW_AT_ranges) ||
	       dwarf_hasattr(die, DW_AT_abstract_origin) || dwarf_hasattr(die, DW_AT_specification);
	if (key && key != (void *)-1l) {
		c->key[k] = key;
		c->code[k] = code;
	}
	return code;
}

/* Add die, a child, with its ranges when it has code. */
static int add_entry(struct node_index *u, struct abbrev_cache *c, Dwarf_Die *die,
		     uint32_t order)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	bool added = false;

	if (!may_have_ranges(c, die))
		return 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		if (!added) {
			if (pv_grow(&u->dies, &u->cap_dies, u->ndies + 1, sizeof *u->dies) < 0)
				return -1;
			u->dies[u->ndies++] = *die;
			added = true;
		}
		if (pv_grow(&u->ranges, &u->cap_ranges, u->nranges + 1, sizeof *u->ranges) < 0)
			return -1;
		u->ranges[u->nranges++] = (struct range){ lo, hi, order, (uint32_t)(u->ndies - 1) };
	}
	return 0;
}

/* The children of parent in dwarf_getscopes' order, imported units'
 * children in place of the import (depth bounds a cycle of imports). */
static int add_children(struct node_index *u, struct abbrev_cache *c, Dwarf_Die *parent,
			uint32_t *order, int depth)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child) != 0)
		return 0;
	do {
		if (dwarf_tag(&child) == DW_TAG_imported_unit) {
			Dwarf_Attribute attr;
			Dwarf_Die unit;
			if (depth < 8 && dwarf_formref_die(dwarf_attr(&child, DW_AT_import, &attr), &unit) &&
			    dwarf_tag(&unit) != DW_TAG_compile_unit &&
			    add_children(u, c, &unit, order, depth + 1) < 0)
				return -1;
			continue;
		}
		if (add_entry(u, c, &child, (*order)++) < 0)
			return -1;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static int node_make(struct node_index *u, struct abbrev_cache *c, Dwarf_Die *die)
{
	uint32_t order = 0;

	memset(u, 0, sizeof *u);
	u->key = die->addr;
	if (add_children(u, c, die, &order, 0) < 0)
		return -1;
	if (!u->nranges)
		return 0;
	qsort(u->ranges, u->nranges, sizeof *u->ranges, cmp_range);
	u->treemax = malloc(u->nranges * sizeof *u->treemax);
	if (!u->treemax)
		return pv_oom();
	build_tree(u, 0, u->nranges);
	return 0;
}

static void node_free(struct node_index *u)
{
	free(u->dies);
	free(u->ranges);
	free(u->treemax);
}

struct pv_scopes *pv_scopes_new(void)
{
	struct pv_scopes *s = calloc(1, sizeof *s);

	if (!s)
		pv_oom();
	return s;
}

void pv_scopes_free(struct pv_scopes *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		node_free(&s->nodes[i]);
	free(s->nodes);
	free(s->slots);
	free(s->path);
	free(s);
}

static size_t slot_of(const struct pv_scopes *s, const void *key)
{
	uintptr_t h = (uintptr_t)key;

	h ^= h >> 29;
	h *= 0x9E3779B97F4A7C15ULL;
	return (size_t)(h >> 17) & (s->nslots - 1);
}

/* Room for one more node in the hash table (load at most a half). */
static int rehash(struct pv_scopes *s)
{
	if (2 * (s->n + 1) <= s->nslots)
		return 0;
	size_t n = s->nslots ? 2 * s->nslots : 64;
	size_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return pv_oom();
	free(s->slots);
	s->slots = slots;
	s->nslots = n;
	for (size_t i = 0; i < s->n; i++) {
		size_t k = slot_of(s, s->nodes[i].key);
		while (s->slots[k])
			k = (k + 1) & (n - 1);
		s->slots[k] = i + 1;
	}
	return 0;
}

/* The index of die's children, made when first asked; valid until the
 * next call.  NULL when out of memory (reported). */
static struct node_index *node_of(struct pv_scopes *s, Dwarf_Die *die)
{
	size_t k;

	if (s->nslots) {
		for (k = slot_of(s, die->addr); s->slots[k]; k = (k + 1) & (s->nslots - 1))
			if (s->nodes[s->slots[k] - 1].key == die->addr)
				return &s->nodes[s->slots[k] - 1];
	}
	if (rehash(s) < 0 || pv_grow(&s->nodes, &s->cap, s->n + 1, sizeof *s->nodes) < 0)
		return NULL;
	struct node_index *u = &s->nodes[s->n];
	if (node_make(u, &s->abbrevs, die) < 0) {
		node_free(u);
		return NULL;
	}
	for (k = slot_of(s, die->addr); s->slots[k]; k = (k + 1) & (s->nslots - 1))
		;
	s->slots[k] = ++s->n;
	return u;
}

/* The first child (lowest order) of u with a range holding pc among
 * ranges[lo..hi); *best is the one to beat. */
static void stab(const struct node_index *u, size_t lo, size_t hi, uint64_t pc,
		 const struct range **best)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u->treemax[mid] <= pc)
			return;
		stab(u, lo, mid, pc, best);
		const struct range *r = &u->ranges[mid];
		if (r->lo > pc)
			return;
		if (r->hi > pc && (!*best || r->order < (*best)->order))
			*best = r;
		lo = mid + 1;
	}
}

static int push(struct pv_scopes *s, size_t n, Dwarf_Die *die)
{
	if (pv_grow(&s->path, &s->cap_path, n + 1, sizeof *s->path) < 0)
		return -1;
	s->path[n] = *die;
	return 0;
}

int pv_scopes_at(struct pv_scopes *s, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **path)
{
	Dwarf_Die cur = *cu;
	size_t n = 0;

	/* Down from the unit: the first child holding pc, while there is
	 * one and it may hold scopes. */
	for (;;) {
		struct node_index *u = node_of(s, &cur);
		const struct range *r = NULL;
		if (!u)
			return -1;
		stab(u, 0, u->nranges, pc, &r);
		if (!r)
			break;
		cur = u->dies[r->die];
		if (push(s, n++, &cur) < 0)
			return -1;
		if (!may_have_scopes(&cur))
			break;
	}
	/* innermost first */
	for (size_t i = 0; i < n / 2; i++) {
		Dwarf_Die t = s->path[i];
		s->path[i] = s->path[n - 1 - i];
		s->path[n - 1 - i] = t;
	}
	*path = s->path;
	return (int)n;
}
