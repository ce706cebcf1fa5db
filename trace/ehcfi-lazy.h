/* ehcfi-lazy.h - an object's unwind rows made when a walk first needs them
 *
 * A process that starts (a compiler run by make, a program that execs
 * itself) would otherwise turn every loaded object's .eh_frame into rows
 * before its first sample, and most of those rows are never read: a
 * 30 MB compiler has 45,000 FDEs, and a short run's samples meet a few
 * dozen of them.  Here an object's FDEs, in the order of its
 * .eh_frame_hdr search table, are cut into chunks of EHCFI_LAZY_CHUNK;
 * a chunk's rows are made the first time a walk looks up an address in
 * it, in the walk itself (the collector's signal handler).
 *
 * Signal-safety: making a chunk allocates nothing from the heap: its
 * rows go to an arena of blocks from mmap (a system call), taken with an
 * atomic add, never freed while the process runs (the rows of a closed
 * object stay).  Each chunk has an atomic state: the walk
 * that moves it from "none" to "making" makes it; any other walk that
 * finds it "making" (another thread, or a signal that interrupted the
 * maker in the same thread) fails its walk rather than wait (the caller
 * takes its fallback, a stack copy), so nothing ever waits for a lock.
 *
 * What a chunk makes is what ehcfi_build makes for the same addresses,
 * save for an FDE that reaches past the start of the next chunk's first
 * FDE (overlapping FDEs, which linkers do not make): its rows past there
 * are not seen.
 */
#ifndef PROFVIEW_EHCFI_LAZY_H
#define PROFVIEW_EHCFI_LAZY_H

#include <stddef.h>
#include <stdint.h>

#include "ehcfi.h"

#define EHCFI_LAZY_CHUNK 4

/* The object img describes, ready for lazy rows: NULL when it has no
 * .eh_frame_hdr search table (the caller makes its rows with
 * ehcfi_build) or when out of memory.  Not signal-safe (malloc; a
 * large object's chunk states, 4 KB or more, are a mapping of their own,
 * whose pages are touched only as walks make chunks in them).  The
 * image's memory must stay mapped while walks may use it.  It may be the
 * object where it runs (the collector's own) or a copy elsewhere (a file
 * read by the injector): a range's rows are looked up by the address's
 * offset from the range's load bias. */
struct ehcfi_lazy *ehcfi_lazy_new(const struct ehcfi_image *img);

/* The same, but its search table is read by the first walk that looks an
 * address up in it, not here: nothing of the image is read (a start
 * faults in no page of the object's .eh_frame_hdr for a process that ends
 * before its first sample, nor of the objects its walks never reach).  An
 * object whose .eh_frame_hdr turns out to have no search table then has
 * no rows (its walks fail there, and take their fallback).  NULL only
 * when out of memory.  Not signal-safe (malloc); the first walk's read
 * and its chunks' states (a mapping, or the arena's) are. */
struct ehcfi_lazy *ehcfi_lazy_defer(const struct ehcfi_image *img);

/* Puts lz's object in the run's share of rows (ehcfi-share.h) under id
 * (ehcfi_share_id of its build ID; 0, the default: not shared): its
 * chunks made by another process of the run are taken from there, those
 * made here put there.  Before the first walk into it. */
void ehcfi_lazy_share_id(struct ehcfi_lazy *lz, uint64_t id);

/* Frees lz (its rows stay in the arena); no walk may be using it.  NULL:
 * no-op. */
void ehcfi_lazy_free(struct ehcfi_lazy *lz);

/* The row in force at pc in range r (r->lazy not NULL), making its chunk
 * when none is made yet (and reading the search table first, when
 * ehcfi_lazy_defer left it); NULL when there is none.  *pending is set
 * when the chunk, or the table, is being made or read by another walk
 * (the row is then NULL).
 * Signal-safe. */
const struct ehcfi_row *ehcfi_lazy_row(const struct ehcfi_range *r, uintptr_t pc, int *pending);

/* After fork, in the child: a chunk left "making" (or a search table left
 * "reading") by a thread that does not exist there is made again when
 * needed.  Reads the chunks' states
 * only when a walk was making one at the fork. */
void ehcfi_lazy_after_fork(struct ehcfi_lazy *lz);

/* What making rows cost in this process, over every object: chunks made
 * (not those taken from the run's share),
 * their rows, and the time the threads took to make them (by the
 * monotonic clock: CPU time but when a thread was preempted). */
struct ehcfi_lazy_stats {
	uint64_t chunks, rows, cpu_ns;
};
void ehcfi_lazy_stats(struct ehcfi_lazy_stats *st);

/* The rows of lz's chunks made so far, for cfi_table_size (a count kept
 * as chunks are made: no state is read).  Signal-safe. */
uint64_t ehcfi_lazy_rows(const struct ehcfi_lazy *lz);

#endif
