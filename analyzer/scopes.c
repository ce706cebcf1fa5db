/* scopes.c - the DWARF scopes holding an address, from a sorted index of
 * each unit's top-level entries (see scopes.h)
 *
 * What dwarf_getscopes finds (libdw 0.188, libdw_visit_scopes.c): it
 * visits the unit's children in order, flattening imported units (dwz's
 * partial units) into the list, and descends into a child only when the
 * child holds pc (dwarf_haspc: one of its ranges does) and is of a kind
 * that may hold scopes (a function, an inlined instance, a lexical
 * block...); the innermost entry is the first one found that way with no
 * child holding pc.  The index gives the first top-level entry holding pc
 * (the lowest in the unit's order among those whose ranges hold it, from
 * an implicit interval tree over their ranges), the descent below it is
 * dwarf_getscopes' own: a function's children are few.
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

struct unit_index {
	const void *cu;        /* the unit's DIE address: the key */
	Dwarf_Die *dies;       /* top-level entries with code */
	size_t ndies, cap_dies;
	struct range *ranges;  /* by lo */
	uint64_t *treemax;     /* per node of the implicit tree over ranges */
	size_t nranges, cap_ranges;
};

struct pv_scopes {
	struct unit_index *units;
	size_t n, cap;
	size_t *slots;         /* open addressing: unit index + 1, 0 empty */
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

static uint64_t build_tree(struct unit_index *u, size_t lo, size_t hi)
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

/* Add die, a top-level entry, with its ranges when it has code. */
static int add_entry(struct unit_index *u, Dwarf_Die *die, uint32_t order)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	bool added = false;

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
static int add_children(struct unit_index *u, Dwarf_Die *parent, uint32_t *order, int depth)
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
			    add_children(u, &unit, order, depth + 1) < 0)
				return -1;
			continue;
		}
		if (add_entry(u, &child, (*order)++) < 0)
			return -1;
	} while (dwarf_siblingof(&child, &child) == 0);
	return 0;
}

static int unit_make(struct unit_index *u, Dwarf_Die *cu)
{
	uint32_t order = 0;

	memset(u, 0, sizeof *u);
	u->cu = cu->addr;
	if (add_children(u, cu, &order, 0) < 0)
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

static void unit_free(struct unit_index *u)
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
		unit_free(&s->units[i]);
	free(s->units);
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

/* Room for one more unit in the hash table (load at most a half). */
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
		size_t k = slot_of(s, s->units[i].cu);
		while (s->slots[k])
			k = (k + 1) & (n - 1);
		s->slots[k] = i + 1;
	}
	return 0;
}

/* The index of unit cu, made when first asked; NULL when out of memory. */
static struct unit_index *unit_of(struct pv_scopes *s, Dwarf_Die *cu)
{
	size_t k;

	if (s->nslots) {
		for (k = slot_of(s, cu->addr); s->slots[k]; k = (k + 1) & (s->nslots - 1))
			if (s->units[s->slots[k] - 1].cu == cu->addr)
				return &s->units[s->slots[k] - 1];
	}
	if (rehash(s) < 0 || pv_grow(&s->units, &s->cap, s->n + 1, sizeof *s->units) < 0)
		return NULL;
	struct unit_index *u = &s->units[s->n];
	if (unit_make(u, cu) < 0) {
		unit_free(u);
		return NULL;
	}
	for (k = slot_of(s, cu->addr); s->slots[k]; k = (k + 1) & (s->nslots - 1))
		;
	s->slots[k] = ++s->n;
	return u;
}

/* The first top-level entry (lowest order) of u with a range holding pc
 * among ranges[lo..hi); *best is the order to beat. */
static void stab(const struct unit_index *u, size_t lo, size_t hi, uint64_t pc,
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
	struct unit_index *u = unit_of(s, cu);
	const struct range *top = NULL;
	size_t n = 0;

	if (!u)
		return -1;
	stab(u, 0, u->nranges, pc, &top);
	if (!top)
		return 0;
	if (push(s, n++, &u->dies[top->die]) < 0)
		return -1;
	/* Down: the first child holding pc, while there is one. */
	for (;;) {
		Dwarf_Die child, *cur = &s->path[n - 1];
		bool found = false;
		if (!may_have_scopes(cur) || dwarf_child(cur, &child) != 0)
			break;
		do {
			if (dwarf_haspc(&child, pc) > 0) {
				found = true;
				break;
			}
		} while (dwarf_siblingof(&child, &child) == 0);
		if (!found)
			break;
		if (push(s, n++, &child) < 0)
			return -1;
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
