/* names.h - the names reports give functions: C++ names made short
 *
 * A demangled C++ name carries its parameter list, its template arguments
 * and, for a function template, its return type:
 *   "void std::vector<int, std::allocator<int> >::_M_realloc_insert<int
 *    const&>(__gnu_cxx::__normal_iterator<int*, ...>, int const&)"
 * Reports show it as pprof's default demangling and perf do, shorter:
 * "std::vector::_M_realloc_insert".  What is dropped: parameter lists (the
 * function's own and those of the functions it is local to), the
 * qualifiers after them (" const", " &&", " noexcept"), template
 * arguments, return types, ABI tags ("[abi:cxx11]") and symbol versions
 * ("@@GLIBCXX_3.4").  What is kept: scopes, "(anonymous namespace)",
 * operators ("operator()", "operator<", "operator new[]", a conversion
 * operator's type), lambdas and other unnamed entities with their
 * signature ("{lambda(int)#1}", template arguments dropped inside), thunks
 * ("non-virtual thunk to "), clone suffixes (" [clone .cold]") and PLT
 * stubs ("@plt").
 *
 * Functions that the short name would merge stay apart: when two
 * different names of a profile have the same short name, each of that
 * group is shown with its parameter list ("churn(double, int)") or with
 * its template arguments ("Acc<int>::spin"), whichever tells the whole
 * group apart in fewer characters, and else by its whole name.
 *
 * Only names that look like demangled C++ are shortened: those with "::"
 * or ending in a parameter list ("f(int)", not "f (file.py:3)"); and
 * Java's methods as JIT perf maps name them (javaname.h:
 * "Lio/netty/Foo$4;.run()V" is "io.netty.Foo$4.run").  Go's
 * "main.(*T).M", Python's and mangled names are left alone.
 */
#ifndef PROFVIEW_NAMES_H
#define PROFVIEW_NAMES_H

#include "profile.h"

#include <stdbool.h>
#include <stdint.h>

enum names_form {
	NAMES_SHORT,           /* "ns::Klass::method" */
	NAMES_PARAMS,          /* with its own parameter list: "ns::Klass::method(int) const" */
	NAMES_TEMPLATES,       /* with template arguments: "ns::Klass<int>::method" */
};

/* Names longer than this many bytes are shown cut there (at a character)
 * with "..." after, not shortened: what reports write and the time
 * shortening takes stay bounded whatever a profile's names.  Below the
 * reports' 4 KiB buffers, so that the "..." and what a report adds
 * (" [inlined]") are seen.  The profile keeps the whole name. */
#define NAMES_MAX_SHOWN 4000

/* name in one form, malloc'ed (the caller frees it); a copy of name when
 * it does not look like C++ or cannot be read as such; cut when longer
 * than NAMES_MAX_SHOWN.  NULL when out of memory. */
char *names_shorten(const char *name, enum names_form form);

/* The names of a profile's functions as reports show them. */
struct names;

/* The names of p's functions, each group that would merge told apart
 * (above); NULL when out of memory (reported). */
struct names *names_new(const struct pv_profile *p);
/* A copy; NULL when out of memory (reported). */
struct names *names_copy(const struct names *n);
void names_free(struct names *n);
/* Function fn's name as shown: borrowed, valid until names_free() (or the
 * profile's, when it is shown whole). */
const char *names_get(const struct names *n, const struct pv_profile *p, uint32_t fn);

#endif
