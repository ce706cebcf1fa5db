/* cxxname.h - the C++ name of a function from its DWARF alone
 *
 * A C++ function's DWARF entry usually carries its linkage (mangled) name,
 * which the demangler turns into the name every tool shows:
 * "ns::Klass<int>::method(int)".  A function with internal linkage (static,
 * or in an anonymous namespace) has none: gcc gives only its bare name
 * ("helper").  Shown as that, it would be another function than the
 * libbfd symbolizer's and addr2line's "helper(int)", which come from the
 * symbol table, and its inlined copies would be named apart from its
 * out-of-line one.  This writes the name the demangler would give its
 * symbol, from the entry's scopes, name and parameter types: namespaces
 * and classes qualify it ("(anonymous namespace)::helper"), parameters
 * are listed in the demangler's style ("char const*", "unsigned long",
 * typedefs resolved, top-level const dropped), "()" when there are none,
 * " const" after a const member function's list.
 */
#ifndef PROFVIEW_CXXNAME_H
#define PROFVIEW_CXXNAME_H

#include <elfutils/libdw.h>
#include <stdbool.h>

/* Is die in a C++ compilation unit? */
bool cxxname_is_cxx(Dwarf_Die *die);

/* The name of function die (a subprogram or an inlined instance, whose
 * abstract origin is followed), or NULL when a type cannot be written or
 * memory ran out.  The caller frees it. */
char *cxxname_of(Dwarf_Die *die);

/* Names already written, by function entry: finding an entry's scopes
 * walks its whole compilation unit. */
struct cxxname_cache;
/* NULL when out of memory. */
struct cxxname_cache *cxxname_cache_new(void);
void cxxname_cache_free(struct cxxname_cache *c);
/* cxxname_of(die), remembered; borrowed, valid until the cache is freed
 * (and the DWARF it was read from is still open).  NULL as cxxname_of. */
const char *cxxname_cached(struct cxxname_cache *c, Dwarf_Die *die);

#endif
