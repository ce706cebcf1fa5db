/* got.c - the allocator's calls redirected through the GOT (see got.h)
 */
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "got.h"

#define GOT_CAP 65536    /* entries kept at most */

/* What one pass over the link map does. */
struct got_walk {
	struct got_state *st;
	const struct got_hook *hooks;
	size_t nhooks;
	const void *skip;
	size_t first;         /* the entries of this call start here */
	int failed;           /* errno of the failure, 0 */
	/* got_bound: the name looked for (NULL: got_patch), the object
	 * being read, and the value found */
	const char *peek;
	const struct dl_phdr_info *info;
	void *found;
};

/* Is v inside one of the object's loaded segments? */
static int got_inside(const struct dl_phdr_info *info, uintptr_t v)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && v >= info->dlpi_addr + ph->p_vaddr &&
		    v < info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
			return 1;
	}
	return 0;
}

/* The RELRO part of an object [*lo, *hi) as the loader made it read-only:
 * its whole pages (the last, partial, one stays writable). */
static void got_relro(const ElfW(Phdr) *ph, uintptr_t base, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	*lo = (base + ph->p_vaddr) & ~(page - 1);
	*hi = (base + ph->p_vaddr + ph->p_memsz) & ~(page - 1);
}

/* An address of the dynamic section: absolute once the loader relocated
 * it (it does where the section is writable), else relative to base. */
static uintptr_t got_addr(uintptr_t v, uintptr_t base)
{
	return v < base ? v + base : v;
}

/* Writes val at where, the page made writable for it when it is in the
 * object's RELRO part [relro_lo, relro_hi).  0 or -1 (errno). */
static int got_write(void **where, void *val, uintptr_t relro_lo, uintptr_t relro_hi)
{
	uintptr_t a = (uintptr_t)where, page = (uintptr_t)sysconf(_SC_PAGESIZE);
	void *p = (void *)(a & ~(page - 1));
	int ro = a >= relro_lo && a < relro_hi;

	if (ro && mprotect(p, page, PROT_READ | PROT_WRITE) != 0)
		return -1;
	__atomic_store_n(where, val, __ATOMIC_SEQ_CST);
	if (ro)
		mprotect(p, page, PROT_READ);
	return 0;
}

/* The hook of an entry bound to name, or NULL. */
static const struct got_hook *got_hook_of(const struct got_walk *w, const char *name)
{
	for (size_t i = 0; i < w->nhooks; i++)
		if (strcmp(w->hooks[i].name, name) == 0)
			return &w->hooks[i];
	return NULL;
}

/* Is a value one of the hooks'? */
static int got_is_hook(const struct got_walk *w, const void *v)
{
	for (size_t i = 0; i < w->nhooks; i++)
		if (w->hooks[i].to == v)
			return 1;
	return 0;
}

/* The entries of one table of relocations (n bytes at rela). */
static void got_relocs(struct got_walk *w, uintptr_t base, const ElfW(Rela) *rela, size_t n,
		       const ElfW(Sym) *sym, const char *str, uintptr_t relro_lo, uintptr_t relro_hi)
{
	for (size_t k = 0; k < n / sizeof(*rela) && w->failed == 0; k++) {
		uint32_t type = (uint32_t)ELF64_R_TYPE(rela[k].r_info);
		size_t s = ELF64_R_SYM(rela[k].r_info);
		const struct got_hook *h;
		void **where;

		if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || s == 0)
			continue;
		if (w->peek != NULL) {
			/* bound already: not to the object's own PLT (lazy) */
			where = (void **)(base + rela[k].r_offset);
			if (strcmp(str + sym[s].st_name, w->peek) == 0 &&
			    !got_inside(w->info, (uintptr_t)*where)) {
				w->found = *where;
				return;
			}
			continue;
		}
		if ((h = got_hook_of(w, str + sym[s].st_name)) == NULL)
			continue;
		where = (void **)(base + rela[k].r_offset);
		if (got_is_hook(w, *where))
			continue;
		if (w->st->n == w->st->cap) {
			w->failed = ENOMEM;
			return;
		}
		w->st->v[w->st->n] = (struct got_entry){ where, *where, h->to };
		if (got_write(where, h->to, relro_lo, relro_hi) != 0) {
			w->failed = errno;
			return;
		}
		w->st->n++;
	}
}

static int got_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct got_walk *w = data;
	uintptr_t base = info->dlpi_addr, relro_lo = 0, relro_hi = 0, skip = (uintptr_t)w->skip;
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *sym = NULL;
	const char *str = NULL;
	const ElfW(Rela) *rela = NULL, *jmprel = NULL;
	size_t relasz = 0, pltsz = 0;
	long pltrel = DT_RELA;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(base + ph->p_vaddr);
		else if (ph->p_type == PT_GNU_RELRO)
			got_relro(ph, base, &relro_lo, &relro_hi);
		else if (ph->p_type == PT_LOAD && skip != 0 && skip >= base + ph->p_vaddr &&
			   skip < base + ph->p_vaddr + ph->p_memsz)
			return 0;
	}
	/* (the vDSO: its dynamic section is not relocated, and it has no
	 * entries of ours) */
	if (dyn == NULL || info->dlpi_name == NULL || strncmp(info->dlpi_name, "linux-vdso", 10) == 0)
		return 0;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB: sym = (const ElfW(Sym) *)got_addr(dyn->d_un.d_ptr, base); break;
		case DT_STRTAB: str = (const char *)got_addr(dyn->d_un.d_ptr, base); break;
		case DT_RELA: rela = (const ElfW(Rela) *)got_addr(dyn->d_un.d_ptr, base); break;
		case DT_RELASZ: relasz = dyn->d_un.d_val; break;
		case DT_JMPREL: jmprel = (const ElfW(Rela) *)got_addr(dyn->d_un.d_ptr, base); break;
		case DT_PLTRELSZ: pltsz = dyn->d_un.d_val; break;
		case DT_PLTREL: pltrel = (long)dyn->d_un.d_val; break;
		}
	}
	if (sym == NULL || str == NULL)
		return 0;
	w->info = info;
	if (rela != NULL)
		got_relocs(w, base, rela, relasz, sym, str, relro_lo, relro_hi);
	if (jmprel != NULL && pltrel == DT_RELA && w->found == NULL)
		got_relocs(w, base, jmprel, pltsz, sym, str, relro_lo, relro_hi);
	return w->failed != 0 || w->found != NULL;
}

/* The state's table, mapped once. */
static int got_room(struct got_state *st)
{
	void *p;

	if (st->v != NULL)
		return 0;
	p = mmap(NULL, GOT_CAP * sizeof(*st->v), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		return -1;
	st->v = p;
	st->cap = GOT_CAP;
	st->n = 0;
	return 0;
}

/* What restoring an entry needs: the RELRO part of the object that holds
 * it now, and whether one does. */
struct got_find {
	uintptr_t addr, relro_lo, relro_hi;
	int found;
};

static int got_holder(struct dl_phdr_info *info, size_t size, void *data)
{
	struct got_find *f = data;
	uintptr_t base = info->dlpi_addr, lo = 0, hi = 0;
	int in = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && f->addr >= base + ph->p_vaddr &&
		    f->addr + sizeof(void *) <= base + ph->p_vaddr + ph->p_memsz)
			in = 1;
		else if (ph->p_type == PT_GNU_RELRO)
			got_relro(ph, base, &lo, &hi);
	}
	if (!in)
		return 0;
	f->found = 1;
	f->relro_lo = lo;
	f->relro_hi = hi;
	return 1;
}

int got_patch(struct got_state *st, const struct got_hook *hooks, size_t nhooks, const void *skip)
{
	struct got_walk w = { st, hooks, nhooks, skip, 0, 0, NULL, NULL, NULL };

	if (got_room(st) != 0)
		return -1;
	w.first = st->n;
	dl_iterate_phdr(got_object, &w);
	if (w.failed != 0) {
		/* this call's entries back as they were */
		while (st->n > w.first) {
			struct got_entry *e = &st->v[--st->n];
			struct got_find f = { (uintptr_t)e->where, 0, 0, 0 };

			dl_iterate_phdr(got_holder, &f);
			got_write(e->where, e->was, f.relro_lo, f.relro_hi);
		}
		errno = w.failed;
		return -1;
	}
	return (int)(st->n - w.first);
}

void *got_bound(const char *name, const void *skip)
{
	struct got_walk w = { NULL, NULL, 0, skip, 0, 0, name, NULL, NULL };

	dl_iterate_phdr(got_object, &w);
	return w.found;
}

size_t got_restore(struct got_state *st)
{
	size_t bad = 0;

	for (size_t k = st->n; k-- > 0;) {
		struct got_entry *e = &st->v[k];
		struct got_find f = { (uintptr_t)e->where, 0, 0, 0 };

		/* (its object unloaded: nothing to put back) */
		dl_iterate_phdr(got_holder, &f);
		if (!f.found)
			continue;
		if (__atomic_load_n(e->where, __ATOMIC_SEQ_CST) != e->to ||
		    got_write(e->where, e->was, f.relro_lo, f.relro_hi) != 0 ||
		    __atomic_load_n(e->where, __ATOMIC_SEQ_CST) != e->was)
			bad++;
	}
	if (st->v != NULL)
		munmap(st->v, st->cap * sizeof(*st->v));
	st->v = NULL;
	st->n = st->cap = 0;
	return bad;
}
