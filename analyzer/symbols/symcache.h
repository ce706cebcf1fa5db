/* symcache.h - dwfl_module_addrinfo's answers, found quickly
 *
 * libdwfl finds an address's symbol by a walk over the whole symbol table:
 * a thousand addresses in libc take a tenth of a second.  This cache gives
 * the same answers, most of them without that walk (see symcache.c).
 */
#ifndef PROFVIEW_SYMCACHE_H
#define PROFVIEW_SYMCACHE_H

#include <elfutils/libdwfl.h>

struct pv_symcache;

/* NULL when out of memory (reported). */
struct pv_symcache *pv_symcache_new(void);
void pv_symcache_free(struct pv_symcache *sc);

/* The name dwfl_module_addrinfo(mod, a, ...) returns.  The modules must
 * outlive the cache. */
const char *pv_symcache_lookup(struct pv_symcache *sc, Dwfl_Module *mod, GElf_Addr a);

#endif
