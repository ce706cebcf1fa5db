/* symcache.c - dwfl_module_addrinfo's answers, found quickly
 *
 * libdwfl's answer for an address depends on which symbols start at or below the
 * address, which of them end above it, and which section it is in; so it
 * is the same for every address strictly between two consecutive of the
 * module's "breakpoints" (every symbol's start and end, every section's
 * start and end).  The first address asked in such an interval is looked
 * up by libdwfl and the answer kept for the others; an address that is a
 * breakpoint itself is always looked up.  The breakpoints may be more than
 * needed (each symbol's value both as resolved and as adjusted st_value):
 * more intervals only mean more lookups.
 */
#include "symcache.h"
#include "error.h"
#include "util.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct module_cache {
	Dwfl_Module *mod;
	uint64_t *bps;         /* sorted, distinct */
	size_t nbps;
	const char **name;     /* per interval (after bps[i]), once asked */
	bool *known;
};

struct pv_symcache {
	struct module_cache *mods;
	size_t n, cap;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int add_bp(uint64_t **bps, size_t *n, size_t *cap, uint64_t v)
{
	if (pv_grow(bps, cap, *n + 1, sizeof **bps) < 0)
		return -1;
	(*bps)[(*n)++] = v;
	return 0;
}

static int add_sections(uint64_t **bps, size_t *n, size_t *cap, Elf *elf, GElf_Addr bias)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		if (sh && (add_bp(bps, n, cap, sh->sh_addr + bias) < 0 ||
			   add_bp(bps, n, cap, sh->sh_addr + sh->sh_size + bias) < 0))
			return -1;
	}
	return 0;
}

/* The breakpoints of mod; a cache with none (every address looked up)
 * when it has no symbol table. */
static int module_cache_make(struct module_cache *c, Dwfl_Module *mod)
{
	size_t cap = 0;
	int n = dwfl_module_getsymtab(mod);
	Elf *seen[4] = { NULL };
	size_t nseen = 0;
	GElf_Addr bias;
	Elf *main_elf = dwfl_module_getelf(mod, &bias);

	memset(c, 0, sizeof *c);
	c->mod = mod;
	if (n <= 0)
		return 0;
	if (main_elf && add_sections(&c->bps, &c->nbps, &cap, main_elf, bias) < 0)
		goto fail;
	if (main_elf)
		seen[nseen++] = main_elf;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf = NULL;
		Dwarf_Addr sbias = 0;
		if (!dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, &sbias))
			continue;
		if (add_bp(&c->bps, &c->nbps, &cap, addr) < 0 ||
		    add_bp(&c->bps, &c->nbps, &cap, addr + sym.st_size) < 0 ||
		    add_bp(&c->bps, &c->nbps, &cap, sym.st_value + sbias) < 0 ||
		    add_bp(&c->bps, &c->nbps, &cap, sym.st_value + sbias + sym.st_size) < 0)
			goto fail;
		bool known = false;
		for (size_t k = 0; k < nseen; k++)
			known |= seen[k] == elf;
		if (!known && elf) {
			if (nseen == sizeof seen / sizeof *seen) {
				/* more symbol files than expected: no cache */
				free(c->bps);
				memset(c, 0, sizeof *c);
				c->mod = mod;
				return 0;
			}
			seen[nseen++] = elf;
			if (add_sections(&c->bps, &c->nbps, &cap, elf, sbias) < 0)
				goto fail;
		}
	}
	qsort(c->bps, c->nbps, sizeof *c->bps, cmp_u64);
	size_t m = 0;
	for (size_t i = 0; i < c->nbps; i++)
		if (!m || c->bps[i] != c->bps[m - 1])
			c->bps[m++] = c->bps[i];
	c->nbps = m;
	c->name = calloc(m + 1, sizeof *c->name);
	c->known = calloc(m + 1, sizeof *c->known);
	if (!c->name || !c->known) {
		pv_oom();
		goto fail;
	}
	return 0;
fail:
	free(c->bps);
	free(c->name);
	free(c->known);
	return -1;
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
	for (size_t i = 0; i < sc->n; i++) {
		free(sc->mods[i].bps);
		free(sc->mods[i].name);
		free(sc->mods[i].known);
	}
	free(sc->mods);
	free(sc);
}

const char *pv_symcache_lookup(struct pv_symcache *sc, Dwfl_Module *mod, GElf_Addr a)
{
	struct module_cache *c = NULL;
	GElf_Off off;
	GElf_Sym sym;

	for (size_t i = 0; i < sc->n; i++)
		if (sc->mods[i].mod == mod)
			c = &sc->mods[i];
	if (!c && pv_grow(&sc->mods, &sc->cap, sc->n + 1, sizeof *sc->mods) == 0 &&
	    module_cache_make(&sc->mods[sc->n], mod) == 0)
		c = &sc->mods[sc->n++];
	if (!c || !c->nbps)
		return dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
	/* the interval: the number of breakpoints below a */
	size_t lo = 0, hi = c->nbps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->bps[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->nbps && c->bps[lo] == a)
		return dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
	if (!c->known[lo]) {
		c->name[lo] = dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
		c->known[lo] = true;
	}
	return c->name[lo];
}

