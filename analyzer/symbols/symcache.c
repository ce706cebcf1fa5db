/* symcache.c - dwfl_module_addrinfo's answers from a sorted symbol table
 *
 * libdwfl (elfutils 0.188, dwfl_module_addrsym.c) answers by walking the
 * module's whole symbol table (the main one: .symtab, of a separate debug
 * file too, else .dynsym; and the minidebuginfo table) once per address,
 * keeping a candidate as it goes.  Its rules, for an address a, over the
 * "eligible" symbols (a name, defined, not a section, file or TLS symbol)
 * whose value is at most a:
 *
 *  - the globals (indices from dwfl_module_getsymtab_first_global on) are
 *    searched first, the locals only when no global with a size covers a
 *    and no sizeless global sits exactly at a;
 *  - among the symbols with a size that cover a, in table order, the
 *    candidate is replaced by one starting later or of a stronger binding
 *    (global, weak, local, other), or by one starting at the same address
 *    that is shorter and binds no weaker;
 *  - without such a symbol, a sizeless one ("label") is taken if it is in
 *    a's section and no symbol seen ends above it: the walk keeps, as
 *    min_label, the highest end (value + size) of the symbols seen, and a
 *    label at value v is taken when v >= min_label at its turn, and kept
 *    when v >= min_label at the end.
 *
 * The last rule looks order-dependent but is not: every end counted is at
 * most a (nothing covers a), the label's own value counts, so a label
 * kept at the end has v equal to M, the highest end of all the symbols
 * searched; every label at M is taken at its turn and a later one can only
 * be at M too.  The answer is the last label at M in the searched order
 * (globals in table order, then locals) that is in a's section, or none.
 * A label exactly at a is the same rule with M = a.
 *
 * So one table a module, built once: the eligible symbols sorted by value
 * with the running maximum of their ends (M by binary search), and those
 * with a size in an implicit interval tree (the symbols covering a in
 * O(log n + k); usually one, a few aliases).  The covering symbols are put
 * back in table order and the replacement rule run over them as libdwfl
 * does.  "a's section" is libdwfl's too: the allocated sections of the
 * main file sorted by (start, end, index), found by the same binary search
 * (a section's end counts as inside it unless the next one starts there;
 * an address in no section is in "no section", like another one).
 *
 * A symbol is taken as named by its name's offset (st_name not 0) rather
 * than by reading the name: reading every name of cc1plus's 31,000 made
 * the table's making a third slower.  A name that is empty all the same
 * (no linker writes one) is answered by libdwfl, when it is the answer.
 *
 * Not covered, answered by libdwfl itself: relocatable files (symbol
 * values relative to sections) and PowerPC64, whose function descriptors
 * make libdwfl try two values a symbol.
 */
#include "symcache.h"
#include "error.h"
#include "util.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct sym {
	uint64_t lo, hi;       /* value, value + size (hi == lo: sizeless) */
	const char *name;
	uint32_t idx;          /* in libdwfl's table: the order it walks */
	uint8_t bind;          /* libdwfl's ranking: 3 global, 2 weak, 1 local, 0 */
	bool global;           /* in the first search (index >= first global) */
	bool exact;            /* sizeless, section index reserved: only at lo */
	uint32_t sec;          /* sizeless: the section lo is in (find_section) */
};

struct section {
	uint64_t start, end;
	uint32_t ndx;
};

struct module_table {
	Dwfl_Module *mod;
	bool use_libdwfl;      /* not a file this table knows how to answer for */
	struct sym *all;       /* eligible symbols by (lo, idx) */
	uint64_t *maxend;      /* maxend[i]: the highest hi of all[0..i] */
	size_t nall;
	struct sym **sized;    /* those with a size, by (lo, idx) */
	uint64_t *treemax;     /* per node of the implicit tree over sized */
	size_t nsized;
	struct section *secs;
	size_t nsecs;
};

struct pv_symcache {
	struct module_table *mods;
	size_t n, cap;
	size_t last;
};

/* Sort t->all, made in table order, by (lo, idx): by lo, stably, a byte
 * at a time from the lowest (a radix sort), the bytes every value has
 * the same skipped (a module's addresses differ in their lowest three or
 * four).  A qsort of a libpython's or a libc's table was most of the
 * table's making.  0 or -1. */
static int sort_syms(struct module_table *t)
{
	size_t n = t->nall;
	struct sym *tmp = malloc(n * sizeof *tmp), *src = t->all, *dst = tmp;
	uint64_t differ = 0;

	if (!tmp)
		return pv_oom();
	for (size_t i = 1; i < n; i++)
		differ |= t->all[i].lo ^ t->all[0].lo;
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t count[256] = { 0 }, at = 0;
		if (!((differ >> shift) & 0xff))
			continue;
		for (size_t i = 0; i < n; i++)
			count[(src[i].lo >> shift) & 0xff]++;
		for (size_t b = 0; b < 256; b++) {
			size_t c = count[b];
			count[b] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].lo >> shift) & 0xff]++] = src[i];
		struct sym *swap = src;
		src = dst;
		dst = swap;
	}
	if (src != t->all)
		memcpy(t->all, src, n * sizeof *src);
	free(tmp);
	return 0;
}

static int cmp_section(const void *a, const void *b)
{
	const struct section *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}

static int bind_rank(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

/* The section index libdwfl gives an address (SHN_UNDEF: in none). */
static uint32_t section_of(const struct module_table *t, uint64_t a)
{
	size_t l = 0, u = t->nsecs;

	while (l < u) {
		size_t i = (l + u) / 2;
		if (a < t->secs[i].start) {
			u = i;
		} else if (a > t->secs[i].end) {
			l = i + 1;
		} else {
			if (a == t->secs[i].end && i + 1 < t->nsecs && a == t->secs[i + 1].start)
				i++;
			return t->secs[i].ndx;
		}
	}
	return SHN_UNDEF;
}

static int read_sections(struct module_table *t, Elf *elf, GElf_Addr bias)
{
	size_t cap = 0;
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		if (!sh)
			return 1; /* libdwfl gives up on such a file: so do we */
		if (!(sh->sh_flags & SHF_ALLOC))
			continue;
		if (pv_grow(&t->secs, &cap, t->nsecs + 1, sizeof *t->secs) < 0)
			return -1;
		t->secs[t->nsecs++] = (struct section){ sh->sh_addr + bias,
							sh->sh_addr + bias + sh->sh_size,
							(uint32_t)elf_ndxscn(scn) };
	}
	if (t->nsecs)
		qsort(t->secs, t->nsecs, sizeof *t->secs, cmp_section);
	return 0;
}

/* treemax of the subtree of sized[lo..hi) rooted at its middle. */
static uint64_t build_tree(struct module_table *t, size_t lo, size_t hi)
{
	if (lo >= hi)
		return 0;
	size_t mid = lo + (hi - lo) / 2;
	uint64_t m = t->sized[mid]->hi;
	uint64_t l = build_tree(t, lo, mid), r = build_tree(t, mid + 1, hi);

	if (l > m)
		m = l;
	if (r > m)
		m = r;
	t->treemax[mid] = m;
	return m;
}

/* Is this module one the table answers for (the caller asks libdwfl
 * when not)? */
static bool table_applies(Dwfl_Module *mod, Elf **elf, GElf_Addr *bias)
{
	GElf_Ehdr eh;

	*elf = dwfl_module_getelf(mod, bias);
	return *elf && gelf_getehdr(*elf, &eh) && eh.e_type != ET_REL && eh.e_machine != EM_PPC64;
}

static int table_make(struct module_table *t, Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod);
	int first_global = dwfl_module_getsymtab_first_global(mod);
	Elf *elf;
	GElf_Addr bias;
	size_t cap = 0;
	int r;

	memset(t, 0, sizeof *t);
	t->mod = mod;
	if (n <= 0 || first_global < 0)
		return 0; /* no symbols: libdwfl finds none either */
	if (!table_applies(mod, &elf, &bias) || (r = read_sections(t, elf, bias)) > 0) {
		t->use_libdwfl = true;
		return 0;
	}
	if (r < 0)
		return -1;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || !sym.st_name || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		if (pv_grow(&t->all, &cap, t->nall + 1, sizeof *t->all) < 0)
			return -1;
		struct sym *s = &t->all[t->nall++];
		s->lo = value;
		s->hi = value + sym.st_size;
		s->name = name;
		s->idx = (uint32_t)i;
		s->bind = (uint8_t)bind_rank(sym.st_info);
		s->global = i >= first_global;
		s->exact = shndx >= SHN_LORESERVE;
		s->sec = sym.st_size || s->exact ? SHN_UNDEF : section_of(t, value);
		if (sym.st_size)
			t->nsized++;
	}
	if (!t->nall)
		return 0;
	if (sort_syms(t) < 0)
		return -1;
	t->maxend = malloc(t->nall * sizeof *t->maxend);
	t->sized = malloc((t->nsized ? t->nsized : 1) * sizeof *t->sized);
	t->treemax = malloc((t->nsized ? t->nsized : 1) * sizeof *t->treemax);
	if (!t->maxend || !t->sized || !t->treemax)
		return pv_oom();
	uint64_t m = 0;
	size_t k = 0;
	for (size_t i = 0; i < t->nall; i++) {
		if (t->all[i].hi > m)
			m = t->all[i].hi;
		t->maxend[i] = m;
		if (t->all[i].hi != t->all[i].lo)
			t->sized[k++] = &t->all[i];
	}
	build_tree(t, 0, t->nsized);
	return 0;
}

static void table_free(struct module_table *t)
{
	free(t->all);
	free(t->maxend);
	free(t->sized);
	free(t->treemax);
	free(t->secs);
}

struct pv_symcache *pv_symcache_new(void)
{
	struct pv_symcache *sc = calloc(1, sizeof *sc);

	if (!sc)
		pv_oom();
	return sc;
}

void pv_symcache_free(struct pv_symcache *sc)
{
	if (!sc)
		return;
	for (size_t i = 0; i < sc->n; i++)
		table_free(&sc->mods[i]);
	free(sc->mods);
	free(sc);
}

/* The symbols with a size covering a among sized[lo..hi), appended to
 * out (at most max; *n counts them all). */
static void stab(const struct module_table *t, size_t lo, size_t hi, uint64_t a,
		 const struct sym **out, size_t max, size_t *n)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->treemax[mid] <= a)
			return; /* everything under this node ends at or below a */
		stab(t, lo, mid, a, out, max, n);
		if (t->sized[mid]->lo > a)
			return;
		if (t->sized[mid]->hi > a) {
			if (*n < max)
				out[*n] = t->sized[mid];
			(*n)++;
		}
		lo = mid + 1;
	}
}

static int cmp_idx(const void *a, const void *b)
{
	const struct sym *x = *(const struct sym *const *)a, *y = *(const struct sym *const *)b;

	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* libdwfl's choice among the covering symbols of one search, walked in
 * table order. */
static const struct sym *choose_sized(const struct sym **cov, size_t n, bool global)
{
	const struct sym *c = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct sym *s = cov[i];
		if (s->global != global)
			continue;
		if (!c || c->lo < s->lo || c->bind < s->bind)
			c = s;
		else if (c->lo == s->lo && c->hi - c->lo > s->hi - s->lo && c->bind <= s->bind)
			c = s;
	}
	return c;
}

/* The index in all of the first symbol with lo >= v (nall when none). */
static size_t first_at(const struct module_table *t, uint64_t v)
{
	size_t lo = 0, hi = t->nall;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->all[mid].lo < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The label libdwfl takes at value v for address a: the last in its
 * search order (globals, then locals when locals) of the sizeless symbols
 * at v in a's section. */
static const struct sym *label_at(const struct module_table *t, uint64_t v, uint64_t a,
				  bool locals)
{
	const struct sym *best = NULL;
	uint32_t asec = SHN_UNDEF;
	bool asec_known = false;

	for (size_t i = first_at(t, v); i < t->nall && t->all[i].lo == v; i++) {
		const struct sym *s = &t->all[i];
		if (s->hi != s->lo || (!s->global && !locals))
			continue;
		if (s->exact) {
			if (s->lo != a)
				continue;
		} else if (s->lo != a) {
			if (!asec_known) {
				asec = section_of(t, a);
				asec_known = true;
			}
			if (s->sec != asec)
				continue;
		}
		/* all is by (lo, idx): a later one is later in its search */
		if (!best || (best->global && !s->global) || best->global == s->global)
			best = s;
	}
	return best;
}

/* s's name, s the table's answer for a: libdwfl's own when the name is
 * empty (the table took the symbol as named, by its offset). */
static const char *named(const struct module_table *t, const struct sym *s, uint64_t a)
{
	GElf_Off off;
	GElf_Sym sym;

	return s->name[0] ? s->name : dwfl_module_addrinfo(t->mod, a, &off, &sym, NULL, NULL, NULL);
}

static const char *table_lookup(const struct module_table *t, uint64_t a)
{
	const struct sym *few[16], **cov = few;
	size_t n = 0;
	const struct sym *s;

	if (!t->nall)
		return NULL;
	stab(t, 0, t->nsized, a, cov, 16, &n);
	if (n > 16) {
		cov = malloc(n * sizeof *cov);
		if (!cov) {
			GElf_Off off;
			GElf_Sym sym;
			return dwfl_module_addrinfo(t->mod, a, &off, &sym, NULL, NULL, NULL);
		}
		size_t m = 0;
		stab(t, 0, t->nsized, a, cov, n, &m);
	}
	if (n > 1)
		qsort(cov, n, sizeof *cov, cmp_idx);
	s = choose_sized(cov, n, true);
	if (!s)
		s = label_at(t, a, a, false);
	if (!s)
		s = choose_sized(cov, n, false);
	if (cov != few)
		free(cov);
	if (!s) {
		/* No symbol covers a: the label at the highest end below a. */
		size_t i = first_at(t, a + 1);
		if (a == UINT64_MAX)
			i = t->nall;
		if (i == 0)
			return NULL;
		s = label_at(t, t->maxend[i - 1], a, true);
	}
	return s ? named(t, s, a) : NULL;
}

const char *pv_symcache_lookup(struct pv_symcache *sc, Dwfl_Module *mod, GElf_Addr a)
{
	struct module_table *t = NULL;
	GElf_Off off;
	GElf_Sym sym;

	if (sc->last < sc->n && sc->mods[sc->last].mod == mod)
		t = &sc->mods[sc->last];
	for (size_t i = 0; !t && i < sc->n; i++)
		if (sc->mods[i].mod == mod) {
			t = &sc->mods[i];
			sc->last = i;
		}
	if (!t) {
		if (pv_grow(&sc->mods, &sc->cap, sc->n + 1, sizeof *sc->mods) < 0)
			return NULL;
		t = &sc->mods[sc->n];
		if (table_make(t, mod) < 0) {
			/* out of memory (reported): libdwfl's walk still works */
			table_free(t);
			memset(t, 0, sizeof *t);
			t->mod = mod;
			t->use_libdwfl = true;
		}
		sc->last = sc->n++;
	}
	if (t->use_libdwfl)
		return dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
	return table_lookup(t, a);
}
