/* cxxname.c - the C++ name of a function from its DWARF alone (see
 * cxxname.h) */
#include "cxxname.h"
#include "util.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CXXNAME_DEPTH 16   /* nesting of types followed */

bool cxxname_is_cxx(Dwarf_Die *die)
{
	Dwarf_Die cu;

	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return false;
	switch (dwarf_srclang(&cu)) {
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
		return true;
	default:
		return false;
	}
}

/* gcc's names of the fundamental types, and the demangler's. */
static const char *const type_words[][2] = {
	{ "long long unsigned int", "unsigned long long" },
	{ "long long int", "long long" },
	{ "long unsigned int", "unsigned long" },
	{ "short unsigned int", "unsigned short" },
	{ "__int128 unsigned", "unsigned __int128" },
	{ "long int", "long" },
	{ "short int", "short" },
	{ "_Bool", "bool" },
};

/* A name as gcc writes it ("Acc<long unsigned int>"), its fundamental
 * types as the demangler does ("Acc<unsigned long>"). */
static void sb_add_name(struct pv_strbuf *b, const char *name)
{
	while (*name) {
		size_t i, k = sizeof type_words / sizeof type_words[0];

		for (i = 0; i < k; i++) {
			size_t len = strlen(type_words[i][0]);
			char next = name[len];
			if (strncmp(name, type_words[i][0], len) == 0 &&
			    !(next == '_' || (next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') ||
			      (next >= '0' && next <= '9'))) {
				pv_strbuf_puts(b, type_words[i][1]);
				name += len;
				break;
			}
		}
		if (i < k)
			continue;
		/* copy up to the next word */
		char one[2] = { *name++, 0 };
		pv_strbuf_puts(b, one);
		while (*name && ((one[0] >= 'a' && one[0] <= 'z') || (one[0] >= 'A' && one[0] <= 'Z') ||
				 (one[0] >= '0' && one[0] <= '9') || one[0] == '_') &&
		       ((*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') ||
			(*name >= '0' && *name <= '9') || *name == '_')) {
			one[0] = *name++;
			pv_strbuf_puts(b, one);
		}
	}
}

/* The entry a reference attribute points at, or NULL. */
static Dwarf_Die *ref(Dwarf_Die *die, int at, Dwarf_Die *mem)
{
	Dwarf_Attribute attr;

	return dwarf_attr(die, at, &attr) ? dwarf_formref_die(&attr, mem) : NULL;
}

/* The namespaces and classes around die, "ns::Klass::"; false for a scope
 * the demangler writes otherwise (a function's local class). */
static bool qualify(struct pv_strbuf *b, Dwarf_Die *die)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes_die(die, &scopes);
	bool ok = true;

	/* scopes[0] is die itself, then outward to the unit */
	for (int i = n - 1; i >= 1 && ok; i--) {
		const char *name = dwarf_diename(&scopes[i]);

		switch (dwarf_tag(&scopes[i])) {
		case DW_TAG_compile_unit:
		case DW_TAG_partial_unit:
			break;
		case DW_TAG_namespace:
			pv_strbuf_puts(b, name ? name : "(anonymous namespace)");
			pv_strbuf_puts(b, "::");
			break;
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			if (!name) {
				ok = false;
				break;
			}
			sb_add_name(b, name);
			pv_strbuf_puts(b, "::");
			break;
		default:
			ok = false;
		}
	}
	free(scopes);
	return ok;
}

static bool type_name(struct pv_strbuf *b, Dwarf_Die *type, int depth);

/* The parameter types of a function or function type, "int, char const*"
 * (no parentheses); *is_const when the object parameter is const. */
static bool param_list(struct pv_strbuf *b, Dwarf_Die *fn, int depth, bool *is_const)
{
	Dwarf_Die child, tmem;
	bool first = true;

	if (is_const)
		*is_const = false;
	if (dwarf_child(fn, &child) != 0)
		return true;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Attribute attr;
		bool artificial = false;

		if (tag == DW_TAG_unspecified_parameters) {
			pv_strbuf_puts(b, first ? "..." : ", ...");
			first = false;
			continue;
		}
		if (tag != DW_TAG_formal_parameter)
			continue;
		Dwarf_Die *t = dwarf_formref_die(dwarf_attr_integrate(&child, DW_AT_type, &attr), &tmem);
		dwarf_formflag(dwarf_attr_integrate(&child, DW_AT_artificial, &attr), &artificial);
		if (artificial) {
			/* "this": a pointer to a const object makes a const
			 * member function */
			Dwarf_Die pmem, *pointee = t ? ref(t, DW_AT_type, &pmem) : NULL;
			if (is_const && pointee && dwarf_tag(pointee) == DW_TAG_const_type)
				*is_const = true;
			continue;
		}
		if (!t)
			return false;
		/* a parameter's own const or volatile is not part of the
		 * function's type */
		for (int k = 0; k < 4 && t; k++) {
			int tt = dwarf_tag(t);
			if (tt != DW_TAG_const_type && tt != DW_TAG_volatile_type)
				break;
			t = ref(t, DW_AT_type, &tmem);
		}
		if (!first)
			pv_strbuf_puts(b, ", ");
		first = false;
		if (!t)
			pv_strbuf_puts(b, "void"); /* const void: not a parameter type */
		else if (!type_name(b, t, depth + 1))
			return false;
	} while (dwarf_siblingof(&child, &child) == 0);
	return true;
}

static bool type_name(struct pv_strbuf *b, Dwarf_Die *type, int depth)
{
	Dwarf_Die mem, *inner;
	const char *name;

	if (depth > CXXNAME_DEPTH)
		return false;
	inner = ref(type, DW_AT_type, &mem);
	name = dwarf_diename(type);
	switch (dwarf_tag(type)) {
	case DW_TAG_base_type:
	case DW_TAG_unspecified_type:
		if (!name)
			return false;
		sb_add_name(b, name);
		return true;
	case DW_TAG_typedef:
		/* mangled names know no typedefs */
		if (!inner) {
			pv_strbuf_puts(b, "void");
			return true;
		}
		return type_name(b, inner, depth + 1);
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type:
		if (inner) {
			if (!type_name(b, inner, depth + 1))
				return false;
		} else {
			pv_strbuf_puts(b, "void");
		}
		pv_strbuf_puts(b, dwarf_tag(type) == DW_TAG_const_type ? " const"
			  : dwarf_tag(type) == DW_TAG_volatile_type ? " volatile" : " __restrict");
		return true;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type: {
		const char *mark = dwarf_tag(type) == DW_TAG_pointer_type ? "*"
				   : dwarf_tag(type) == DW_TAG_reference_type ? "&" : "&&";
		if (inner && dwarf_tag(inner) == DW_TAG_subroutine_type) {
			/* "void (*)(int)" */
			Dwarf_Die rmem, *ret = ref(inner, DW_AT_type, &rmem);
			if (ret) {
				if (!type_name(b, ret, depth + 1))
					return false;
			} else {
				pv_strbuf_puts(b, "void");
			}
			pv_strbuf_puts(b, " (");
			pv_strbuf_puts(b, mark);
			pv_strbuf_puts(b, ")(");
			if (!param_list(b, inner, depth, NULL))
				return false;
			pv_strbuf_puts(b, ")");
			return true;
		}
		if (inner) {
			if (!type_name(b, inner, depth + 1))
				return false;
		} else {
			pv_strbuf_puts(b, "void");
		}
		pv_strbuf_puts(b, mark);
		return true;
	}
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
	case DW_TAG_enumeration_type:
		if (!name || !qualify(b, type))
			return false;
		sb_add_name(b, name);
		return true;
	default:
		/* arrays, pointers to members, ...: left to the bare name */
		return false;
	}
}

/* An inlined or out-of-line instance's abstract origin, which has the
 * name and all the parameters with their types (die itself otherwise). */
static Dwarf_Die origin_of(Dwarf_Die *die)
{
	Dwarf_Die fn = *die, omem;

	for (int i = 0; i < 4; i++) {
		Dwarf_Die *o = ref(&fn, DW_AT_abstract_origin, &omem);
		if (!o)
			break;
		fn = *o;
	}
	return fn;
}

char *cxxname_of(Dwarf_Die *die)
{
	Dwarf_Die omem, smem = origin_of(die), *fn = &smem, *spec;
	struct pv_strbuf b = { 0 };
	const char *name;
	bool is_const = false;

	/* A member defined outside its class: the declaration in the class
	 * has the scope. */
	spec = ref(fn, DW_AT_specification, &omem);
	name = dwarf_diename(fn);
	if (!name && spec)
		name = dwarf_diename(spec);
	if (!name || !qualify(&b, spec ? spec : fn))
		goto fail;
	sb_add_name(&b, name);
	pv_strbuf_puts(&b, "(");
	if (!param_list(&b, fn, 0, &is_const))
		goto fail;
	pv_strbuf_puts(&b, is_const ? ") const" : ")");
	if (b.failed)
		goto fail;
	return b.s;
fail:
	free(b.s);
	return NULL;
}

struct cxxname_entry {
	const void *key;       /* the origin entry's address in the DWARF */
	char *name;            /* NULL: it has none */
};

struct cxxname_cache {
	struct cxxname_entry *slots;
	size_t nslots, used;
};

struct cxxname_cache *cxxname_cache_new(void)
{
	return calloc(1, sizeof(struct cxxname_cache));
}

void cxxname_cache_free(struct cxxname_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nslots; i++)
		free(c->slots[i].name);
	free(c->slots);
	free(c);
}

static size_t slot_of(const struct cxxname_cache *c, const void *key)
{
	size_t mask = c->nslots - 1;
	size_t i = (size_t)(((uintptr_t)key >> 3) * 0x9e3779b97f4a7c15ull) & mask;

	while (c->slots[i].key && c->slots[i].key != key)
		i = (i + 1) & mask;
	return i;
}

const char *cxxname_cached(struct cxxname_cache *c, Dwarf_Die *die)
{
	Dwarf_Die o = origin_of(die);
	size_t i;

	if (!o.addr)
		return NULL;
	if ((c->used + 1) * 2 > c->nslots) {
		struct cxxname_entry *old = c->slots;
		size_t oldn = c->nslots, n = oldn ? oldn * 2 : 64;

		c->slots = calloc(n, sizeof *c->slots);
		if (!c->slots) {
			c->slots = old;
			return NULL;
		}
		c->nslots = n;
		for (size_t k = 0; k < oldn; k++)
			if (old[k].key)
				c->slots[slot_of(c, old[k].key)] = old[k];
		free(old);
	}
	i = slot_of(c, o.addr);
	if (!c->slots[i].key) {
		c->slots[i].key = o.addr;
		c->slots[i].name = cxxname_of(&o);
		c->used++;
	}
	return c->slots[i].name;
}
