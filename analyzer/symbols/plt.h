/* plt.h - names for the stubs of the procedure linkage table
 *
 * A call into another shared object goes through a PLT stub, a few
 * instructions no symbol covers.  Samples land there often enough in tight
 * loops calling small library functions; they are named as objdump and
 * perf name them, "strlen@plt", after the dynamic symbol whose GOT slot the
 * stub jumps through.
 */
#ifndef PROFVIEW_PLT_H
#define PROFVIEW_PLT_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>

/* The name of the PLT stub at ELF virtual address vaddr of elf (the file's
 * own addresses, no load bias) into buf: "sym@plt", or "*ABS*+0xaddr@plt"
 * for an IRELATIVE slot.  false when vaddr is in no PLT section, in the PLT
 * header, or the stub cannot be decoded (x86-64 only). */
bool plt_name(Elf *elf, GElf_Addr vaddr, char *buf, size_t size);

#endif
