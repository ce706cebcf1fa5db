/* unwind-cfi.h - fast offline unwinding of DWARF-mode samples with tables
 *
 * The modules of a Dwfl (every file a trace's process mapped, placed where
 * it was: modules.h) each give a table of rows made of their .eh_frame
 * (trace/ehcfi.h), in the address ranges libdwfl has them at.  A sample
 * is then walked over its stack copy with lookups and reads alone, giving
 * what libdwfl would give, frame for frame, or nothing when the walk meets
 * what only libdwfl can do (a frame no table covers, a rule not expressed,
 * a read libdwfl would make that the walk does not): the caller then asks
 * libdwfl for that sample.
 */
#ifndef PROFVIEW_UNWIND_CFI_H
#define PROFVIEW_UNWIND_CFI_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stdint.h>

struct unwind_cfi;

/* Tables of the modules dwfl has now.  Their bytes are read through the
 * modules' ELF handles, once: the tables hold their own copy of what they
 * need and stay valid when the modules go.  NULL after an error was
 * reported (out of memory). */
struct unwind_cfi *unwind_cfi_new(Dwfl *dwfl);
void unwind_cfi_free(struct unwind_cfi *t);

/* Walks one sample: registers regs[0..nregs) (raw.h's numbering), the
 * stack copy stack[0..stack_len) taken at the stack pointer.  Stores up to
 * cap frames as libdwfl's unwinder does (unwind-dwarf.c) and sets
 * *complete; returns how many, or 0 when libdwfl must unwind it.  Pure:
 * any number of threads may walk at once. */
int unwind_cfi_walk(const struct unwind_cfi *t, const uint64_t *regs, uint32_t nregs,
		    const unsigned char *stack, uint32_t stack_len, uint64_t *frames, uint32_t cap,
		    bool *complete);

#endif
