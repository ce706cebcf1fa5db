/* demangle.h - C++ (and other mangled) symbol names made readable */
#ifndef PROFVIEW_DEMANGLE_H
#define PROFVIEW_DEMANGLE_H

/* The demangled form of sym, with parameter lists and template arguments
 * ("ns::Klass<int>::method(int)"); a clone suffix stays as
 * " [clone .constprop.0]" and a symbol version ("@@GLIBCXX_3.4") is kept.
 * NULL when sym is not a mangled name, cannot be demangled, or memory ran
 * out.  The caller frees the result with free(). */
char *demangle_symbol(const char *sym);

#endif
