/* modules.h - the ELF files a profile maps, opened once with libdwfl
 *
 * A runtime address becomes a file offset through the recorded mapping,
 * and the file offset an address in the module (the ELF's virtual address
 * plus the module's bias) through the file's PT_LOAD headers, so PIE, ASLR
 * and libraries mapped anywhere are all the same case.  Separate debug
 * info is found the standard way (build-id under /usr/lib/debug/.build-id/,
 * .gnu_debuglink).
 */
#ifndef PROFVIEW_MODULES_H
#define PROFVIEW_MODULES_H

#include "profile.h"

#include <elfutils/libdwfl.h>

struct pv_modules;

/* Callbacks for a Dwfl of ELF files on disk, with separate debug info
 * found the standard way; for every Dwfl the analyzer makes. */
extern const Dwfl_Callbacks modules_offline_callbacks;

/* Open path read-only if it is a regular file (a trace may name anything:
 * a FIFO would block, a device be endless); the descriptor, or -1 with
 * errno set (EINVAL for what is not a regular file). */
int modules_open_file(const char *path);

/* A cache over the mappings of p (which must outlive it).  quiet: no
 * warnings about files that cannot be read.  NULL when out of memory. */
struct pv_modules *modules_new(struct pv_profile *p, bool quiet);
void modules_free(struct pv_modules *m);

/* The module holding runtime address addr of mapping mi, and the address
 * in the module's terms in *maddr; NULL when the mapping is not a file or
 * the file cannot be read (warned about once).  Valid until modules_free. */
Dwfl_Module *modules_find(struct pv_modules *m, uint32_t mi, uint64_t addr, GElf_Addr *maddr);

/* The path of the file mapping mi maps and the ELF virtual address (as in
 * its program and section headers, no load bias) of runtime address addr;
 * false when the mapping is not a readable ELF file or addr is in no
 * PT_LOAD segment.  *path is valid until modules_free. */
bool modules_file_vaddr(struct pv_modules *m, uint32_t mi, uint64_t addr, const char **path,
			uint64_t *vaddr);

#endif
