/* demangle.c - C++ symbol names made readable
 *
 * The demangler is libiberty's, reached through libbfd's bfd_demangle():
 * - it is C, so profview does not link libstdc++ for __cxa_demangle;
 * - libbfd is linked anyway for the second symbolizer (symbolize-bfd.c), and
 *   Debian ships libiberty only as a static archive (libiberty-dev) while
 *   libbfd's shared library carries the demangler;
 * - it is the demangler binutils use (addr2line -C, nm -C, objdump -C) and the
 *   one gdb and perf use, so names compare equal across these tools;
 * - bfd_demangle also copes with versioned symbols ("name@@VERSION"): it
 *   demangles the name and puts the version back.
 * Built without libbfd (-Dbfd=disabled), the C++ runtime's __cxa_demangle
 * is looked up when first needed (in libstdc++, loaded if not there yet):
 * the same Itanium names, printed the same way; other schemes (Rust "_R",
 * D) stay mangled, and without a C++ runtime every name does.
 */
#include "demangle.h"

#include <stddef.h>

#if PROFVIEW_HAVE_BFD
#include <bfd.h>

/* Options of libiberty's demangler (include/demangle.h, which binutils-dev
 * does not install): print parameter lists, and const/volatile and other
 * ANSI C++ qualifiers. */
enum {
	DEMANGLE_PARAMS = 1 << 0, /* DMGL_PARAMS */
	DEMANGLE_ANSI = 1 << 1,   /* DMGL_ANSI */
};

char *demangle_symbol(const char *sym)
{
	/* Every mangling scheme the demangler knows (Itanium "_Z", Rust "_R",
	 * D "_D", gcc's "_GLOBAL__sub_I_...") starts with an underscore; a
	 * plain C name is left alone without asking. */
	if (!sym || sym[0] != '_')
		return NULL;
	/* No bfd: no leading character to strip (none on ELF x86-64). */
	return bfd_demangle(NULL, sym, DEMANGLE_PARAMS | DEMANGLE_ANSI);
}

#else
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef char *cxa_demangle_fn(const char *, char *, size_t *, int *);
static cxa_demangle_fn *cxa_demangle;
static pthread_once_t cxa_once = PTHREAD_ONCE_INIT;

static void find_cxa_demangle(void)
{
	void *h = dlsym(RTLD_DEFAULT, "__cxa_demangle");

	if (!h) {
		void *lib = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		h = lib ? dlsym(lib, "__cxa_demangle") : NULL;
	}
	*(void **)&cxa_demangle = h;
}

char *demangle_symbol(const char *sym)
{
	char *name, *out;
	const char *at;
	int status = -1;

	/* Itanium names only: "_Z" (and a symbol version after '@') */
	if (!sym || sym[0] != '_' || sym[1] != 'Z')
		return NULL;
	pthread_once(&cxa_once, find_cxa_demangle);
	if (!cxa_demangle)
		return NULL;
	at = strchr(sym, '@');
	if (!(name = strndup(sym, at ? (size_t)(at - sym) : strlen(sym))))
		return NULL;
	out = cxa_demangle(name, NULL, NULL, &status);
	free(name);
	if (status != 0 || !out) {
		free(out);
		return NULL;
	}
	if (at) {
		char *v = NULL;
		if (asprintf(&v, "%s%s", out, at) < 0)
			v = NULL;
		free(out);
		out = v;
	}
	return out;
}
#endif
