/* allocframes.c - the allocator's own frames, trimmed from heap stacks */
#include "allocframes.h"
#include "error.h"

#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The allocator's functions, as fnmatch(3) patterns of a name without its
 * arguments: what pprof trims from heap profiles (the POSIX entry points,
 * tcmalloc's), with what it leaves out that allocates for its caller
 * (reallocarray, aligned_alloc, strdup), jemalloc's (the je_ prefix of
 * its internals, the *allocx extensions), glibc's internals beneath the
 * entry points, and C++'s operator new in every form and the standard
 * allocators' allocate().  A program's own wrappers (xmalloc) are its
 * code and stay: --hide takes them out. */
static const char *const alloc_patterns[] = {
	/* C and POSIX */
	"malloc", "calloc", "realloc", "reallocarray", "free", "cfree",
	"memalign", "posix_memalign", "aligned_alloc", "valloc", "pvalloc",
	"strdup", "strndup", "wcsdup", "__strdup", "__strndup", "__posix_memalign",
	"__GI___strdup", "__GI___strndup", "__GI___libc_malloc", "__GI___libc_free",
	/* glibc's names for them and what is beneath */
	"__libc_malloc", "__libc_calloc", "__libc_realloc", "__libc_reallocarray",
	"__libc_memalign", "__libc_valloc", "__libc_pvalloc", "__libc_free",
	"_int_*", "_mid_memalign", "sysmalloc", "tcache_init", "ptmalloc_init",
	"malloc_hook_ini", "realloc_hook_ini", "memalign_hook_ini",
	/* jemalloc */
	"je_*", "mallocx", "rallocx", "xallocx", "dallocx", "sdallocx", "nallocx",
	/* tcmalloc (gperftools) */
	"tc_*", "tcmalloc::*", "do_malloc*", "do_memalign", "(anonymous namespace)::do_malloc*",
	/* C++ */
	"operator new", "operator new\\[\\]", "operator delete", "operator delete\\[\\]",
	"__builtin_new", "__builtin_vec_new",
	"std::allocator<*>::allocate", "std::__new_allocator<*>::allocate",
	"__gnu_cxx::new_allocator<*>::allocate", "std::allocator_traits<*>::allocate",
	"std::_Vector_base<*>::_M_allocate",
};

/* name without its argument list (from the first '(' that is not part of
 * "(anonymous namespace)" or "operator()") in buf; NULL when too long. */
static const char *alloc_simple_name(const char *name, char *buf, size_t n)
{
	const char *cut = NULL, *s = name;
	size_t len;

	while ((s = strchr(s, '(')) != NULL) {
		if (strncmp(s, "(anonymous namespace)", 21) == 0) {
			s += 21;
		} else if (s - name >= 8 && strncmp(s - 8, "operator()", 10) == 0) {
			s += 2;
		} else {
			cut = s;
			break;
		}
	}
	len = cut ? (size_t)(cut - name) : strlen(name);
	if (len >= n)
		return NULL;
	memcpy(buf, name, len);
	buf[len] = '\0';
	return buf;
}

bool pv_is_alloc_function(const char *name, const char *system_name)
{
	char buf[1024];
	const char *s;

	/* operator new and new[], every form (nothrow, aligned, 32-bit sizes):
	 * _Znw and _Zna are theirs alone in the Itanium C++ ABI */
	if (system_name && (strncmp(system_name, "_Znw", 4) == 0 || strncmp(system_name, "_Zna", 4) == 0))
		return true;
	if (!name || !name[0] || !(s = alloc_simple_name(name, buf, sizeof buf)))
		return false;
	if (s[0] == '.')
		s++;
	for (size_t i = 0; i < sizeof alloc_patterns / sizeof alloc_patterns[0]; i++)
		if (fnmatch(alloc_patterns[i], s, 0) == 0)
			return true;
	return false;
}

bool pv_is_heap_profile(const struct pv_profile *p)
{
	for (uint32_t i = 0; i < p->nvalues; i++) {
		const char *type = pv_str(p, p->sample_types[i].type);
		size_t len = strlen(type);

		if (strcmp(pv_str(p, p->sample_types[i].unit), "bytes") == 0 && len >= 5 &&
		    strcmp(type + len - 5, "space") == 0)
			return true;
	}
	return false;
}

enum { ALLOC_KEEP, ALLOC_CUT, ALLOC_BENEATH };

/* What trimming does to location l: nothing, cut it whole (its outermost
 * line is the allocator's), or cut the lines inside its outermost line
 * of the allocator's (the others stay, it becomes the leaf). */
static int alloc_location_kind(const struct pv_profile *p, const struct pv_location *l, uint32_t *keep)
{
	for (uint32_t k = l->nlines; k-- > 0;) {
		const struct pv_function *f;
		uint32_t fi = p->lines[l->line_off + k].function;

		if (fi >= p->nfunctions)
			continue;
		f = &p->functions[fi];
		if (!pv_is_alloc_function(pv_str(p, f->name), pv_str(p, f->system_name)))
			continue;
		if (k == l->nlines - 1)
			return ALLOC_CUT;
		*keep = l->nlines - k - 1;
		return ALLOC_BENEATH;
	}
	return ALLOC_KEEP;
}

long pv_trim_alloc_frames(struct pv_profile *p)
{
	uint8_t *kind = calloc(p->nlocations ? p->nlocations : 1, 1);
	long trimmed = 0;

	if (!kind)
		return pv_error("out of memory trimming the allocator's frames");
	for (size_t i = 0; i < p->nlocations; i++) {
		struct pv_location *l = &p->locations[i];
		uint32_t keep = 0;

		kind[i] = (uint8_t)alloc_location_kind(p, l, &keep);
		if (kind[i] == ALLOC_BENEATH) {
			l->line_off += l->nlines - keep;
			l->nlines = keep;
		}
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		struct pv_sample *s = &p->samples[i];
		bool user = false;

		for (uint32_t j = s->nlocs; j-- > 0;) {
			uint32_t li = p->stack_locs[s->loc_off + j];
			uint8_t k = li < p->nlocations ? kind[li] : ALLOC_KEEP;

			if (k == ALLOC_KEEP) {
				user = true;
				continue;
			}
			if (!user)
				continue;
			/* the frames inside it go; a cut location goes with them */
			j += k == ALLOC_CUT;
			s->loc_off += j;
			s->nlocs -= j;
			trimmed++;
			break;
		}
	}
	free(kind);
	return trimmed;
}
