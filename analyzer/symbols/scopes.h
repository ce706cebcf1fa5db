/* scopes.h - the DWARF scopes holding an address, without a walk of its
 * compilation unit each time
 *
 * dwarf_getscopes visits every top-level entry of the unit (its types,
 * variables, functions) for each address, and dwarf_getscopes_die, to find
 * what an inlined instance sits in, walks the unit again from its start:
 * both are linear in the unit per address, most of the time of a profile of
 * a big program with debug info.  This keeps, per entry descended through
 * (the unit, a function, a block), its children with code sorted by
 * address, made once in one pass over them, and descends as
 * dwarf_getscopes does: into the first child holding the address, while
 * there is one.
 */
#ifndef PROFVIEW_SCOPES_H
#define PROFVIEW_SCOPES_H

#include <elfutils/libdw.h>

struct pv_scopes;

/* NULL when out of memory (reported). */
struct pv_scopes *pv_scopes_new(void);
void pv_scopes_free(struct pv_scopes *s);

/* The entries holding address pc (in the unit's terms, no bias) of unit
 * cu, innermost first, each the parent of the one before, up to a
 * top-level one (the unit itself is not in the list): dwarf_getscopes'
 * list as far as its first inlined instance, then that instance's
 * parents where dwarf_getscopes would go on with its abstract origin's.
 * *path is valid until the next call; the count, 0 when no entry holds pc,
 * or -1 when out of memory (reported). */
int pv_scopes_at(struct pv_scopes *s, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die **path);

#endif
