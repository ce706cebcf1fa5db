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
 */
#include "demangle.h"

#include <bfd.h>
#include <stddef.h>

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
