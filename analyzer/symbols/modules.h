/* modules.h - the ELF files a profile maps, each opened once, in one Dwfl
 *
 * One table for a run of the analyzer, made before the profile is read and
 * shared by the unwinder (which unwinds DWARF-mode samples while a trace
 * is read) and the symbolizers (after): one libdwfl session holding every
 * mapped file as one module, placed where its process had it, so that a
 * file, its separate debug info and its call frame information are read
 * once, and both see the file at the same place.
 *
 * Where a mapping puts its file: the mapping's file offset lies in one
 * PT_LOAD segment (counting from the page the segment starts in), and the
 * process mapped that at the mapping's start, so the file's load bias is
 * start - offset + p_offset - p_vaddr (an ET_EXEC file sits at its own
 * addresses).  Where an address is in it: a runtime address of a mapping
 * is at file offset address - start + offset, which the PT_LOAD segment
 * holding that byte of the file gives an ELF virtual address, and adding
 * the module's bias gives the address in the module.  PIE, ASLR and
 * libraries mapped anywhere are all the same case; for the mapping that
 * placed the file, the address in the module is the runtime address.
 *
 * Separate debug info is found the standard way (build-id under
 * /usr/lib/debug/.build-id/, .gnu_debuglink); libdwfl's search is not
 * asked when none of its places holds a file and no debuginfod server is
 * named (DEBUGINFOD_URLS), which spares loading libdebuginfod.
 */
#ifndef PROFVIEW_MODULES_H
#define PROFVIEW_MODULES_H

#include "profile.h"

#include <elfutils/libdwfl.h>

struct pv_modules;

/* Open path read-only if it is a regular file (a trace may name anything:
 * a FIFO would block, a device be endless); the descriptor, or -1 with
 * errno set (EINVAL for what is not a regular file). */
int modules_open_file(const char *path);

/* An empty table.  quiet: no warnings about files that cannot be read.
 * NULL after an error was reported (out of memory, libdwfl cannot
 * start). */
struct pv_modules *modules_new(bool quiet);
/* Ends the Dwfl and frees every module: nothing the table gave out is
 * valid after it. */
void modules_free(struct pv_modules *ms);

/* Place the files p's process mapped, to unwind its samples with
 * modules_dwfl(): each file where its newest mapping (the last of p's
 * mappings naming it) put it, or nowhere when that mapping's offset is in
 * none of its PT_LOAD segments.  One process at a time: a file an earlier
 * call placed that p maps elsewhere, or not at all, leaves the Dwfl (and
 * is opened again if a symbolizer asks for it).  Files that cannot be read
 * are left out without a word (modules_find warns); one libdwfl refuses is
 * warned about as stopping the stacks.  p need not outlive the call.
 * Returns how many files p has in the Dwfl, or -1 after an error was
 * reported (out of memory). */
int modules_place(struct pv_modules *ms, const struct pv_profile *p);

/* The Dwfl of the table, valid until modules_free; its modules until the
 * next modules_place.  Its callbacks find separate debug info the
 * standard way.  A Dwfl is attached to a process (dwfl_attach_state) once,
 * and stays so while files come and go: one unwinder per table. */
Dwfl *modules_dwfl(struct pv_modules *ms);

/* From now on the mapping indices given to modules_find and
 * modules_file_vaddr are those of p, which must outlive that use (until
 * modules_free or the next call).  0, or -1 after an error was reported
 * (out of memory). */
int modules_use_profile(struct pv_modules *ms, struct pv_profile *p);

/* The module holding runtime address addr of mapping mi, and the address
 * in the module's terms in *maddr; NULL when the mapping is not a file,
 * the file cannot be read (warned about once) or addr is in none of its
 * PT_LOAD segments.  A file not in the Dwfl yet is opened now and placed
 * where mapping mi put it.  Valid until modules_free or the next
 * modules_place. */
Dwfl_Module *modules_find(struct pv_modules *ms, uint32_t mi, uint64_t addr, GElf_Addr *maddr);

/* The path of the file mapping mi maps and the ELF virtual address (as in
 * its program and section headers, no load bias) of runtime address addr;
 * false when the mapping is not a readable ELF file or addr is in no
 * PT_LOAD segment.  *path is valid until modules_free. */
bool modules_file_vaddr(struct pv_modules *ms, uint32_t mi, uint64_t addr, const char **path,
			uint64_t *vaddr);

#endif
