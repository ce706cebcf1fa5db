/* mappings.h - RAW_MAPPING records and the table of executable ranges
 * (mappings.c)
 *
 * In the preload library, which libprofview-timer.so and
 * libprofview-heap.so link.
 */
#ifndef PROFVIEW_PRELOAD_MAPPINGS_H
#define PROFVIEW_PRELOAD_MAPPINGS_H

#include <stdint.h>

/* Writes a RAW_MAPPING record for the executable mappings in
 * /proc/self/maps, with build ids: all of them, or with only_new those not
 * written by an earlier call (a line that went away and came back counts as
 * new).  Also rebuilds the table mappings_is_code reads.  Not signal-safe;
 * serialized by its own lock.  Returns the number of records written or
 * -1. */
int mappings_write(int only_new);
/* The records of a trace's start: the executable segments of the objects
 * the dynamic loader has loaded (the program, its libraries, the vDSO),
 * without reading /proc/self/maps (read instead when an object is not
 * named by an absolute path); in a fork child (after mappings_atfork(2))
 * the records its parent's start or last read of every line wrote (the
 * same address space, copied), unless the loader has loaded or unloaded
 * an object since.  A later mappings_write writes the lines of the maps
 * the start did not, not those again.  Also sets the initial thread's
 * stack for mappings_initial_stack.  exe: the program's path, as
 * readlink of /proc/self/exe gives it (the caller has read it for the
 * trace's header), or NULL to read it here.  Not signal-safe.  Returns the
 * number of records written or -1. */
int mappings_write_start(const char *exe);
/* The records of an attached process's start: every executable line of
 * /proc/self/maps, the mappings of no object (a JIT's) among them, which
 * mappings_write_start, made for a process that has only begun, leaves to
 * the end.  Not signal-safe.  Returns the number of records written or
 * -1. */
int mappings_write_maps(void);
/* Around fork: phase 0 (prepare) takes the lock, 1 (parent) releases it,
 * 2 (child) makes a fresh one, so a fork while another thread writes
 * mappings cannot leave the child's lock held forever.  Not signal-safe. */
void mappings_atfork(int phase);
/* Calls mappings_write(1) if the dynamic loader has loaded an object since
 * the last mappings_write.  The collector's own work (preload_own_begin):
 * its samples are not the program's.  Not signal-safe. */
void mappings_refresh(void);
/* Around the real dlclose: walks take the stack copy while the object may
 * be unmapped, and the unwind tables drop it at the end (cfi_close_begin,
 * cfi_close_end).  Not signal-safe. */
void mappings_close_begin(void);
void mappings_close_end(void);
/* From now on every mappings_write also brings the unwind tables (cfi.h)
 * up to date, under the same lock.  Not signal-safe. */
void mappings_use_cfi(void);
/* Does v point into an executable mapping, as of the last mappings_write?
 * Lock-free; signal-safe. */
int mappings_is_code(uintptr_t v);
/* The samples' addresses against the code table: mappings_note_frames
 * notes when one of pc[0..n) (zeros skipped) is in no executable range
 * written so far (a JIT's anonymous code, a file mapped by hand),
 * mappings_note_unknown that a sample's addresses are not known here (a
 * copy of the stack, unwound later).  mappings_unknown says whether either
 * happened in this process (or its parent before a fork), so that the
 * end reads the maps for the lines the records lack only then.
 * Lock-free; signal-safe. */
void mappings_note_frames(const uint64_t *pc, uint32_t n);
void mappings_note_unknown(void);
int mappings_unknown(void);
/* Stores the [start, end) of up to cap mappings of /proc/self/maps in
 * ranges, in address order: the executable ones when executable is set,
 * else the writable private ones.  Returns how many.  Not signal-safe. */
int mappings_ranges(uintptr_t (*ranges)[2], int cap, int executable);

/* The stack of the initial thread, [*lo, *hi), as pthread_getattr_np says
 * it, from the maps the last mappings_write read (pthread_getattr_np reads
 * them once more for that thread).  sp: an address on the calling
 * thread's stack; -1 when it is not the initial thread's stack (another
 * thread's, or the child of a fork made by one) or the maps were not read.
 * Not signal-safe. */
int mappings_initial_stack(uintptr_t sp, uintptr_t *lo, uintptr_t *hi);

/* The executable segment of the library itself (the one this file is
 * compiled into): its code's address range, [*lo, *hi), from its own
 * program headers (no walk of the loader's list).  0, or -1 when not
 * found.  Signal-safe. */
int mappings_own_code(uintptr_t *lo, uintptr_t *hi);

#endif
