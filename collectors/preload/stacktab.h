/* stacktab.h - stack deduplication: each stack once in the trace, as a
 * RAW_STACK record the samples refer to by id (stacktab.c)
 *
 * In the preload library, which libprofview-timer.so and
 * libprofview-heap.so link.
 */
#ifndef PROFVIEW_PRELOAD_STACKTAB_H
#define PROFVIEW_PRELOAD_STACKTAB_H

#include <stdatomic.h>
#include <stdint.h>

/* Allocates the hash table and the frame arena.  Returns 0 or -1.  Not
 * signal-safe. */
int stacktab_init(void);
/* Returns the id of the stack frames[0..n), writing a RAW_STACK record the
 * first time it is seen, or 0 when the stack cannot be stored (table or
 * arena full, slot being filled by another thread, no trace space): the
 * caller then writes the frames inline.  Signal-safe. */
uint32_t stacktab_intern(const uint64_t *frames, uint32_t n);
/* A last frame stacktab_py_word(index) (n >= 1) stands for the Python
 * frames of part index (RAW_PYPARTS): the stack is stored as a RAW_STACK_PY of
 * frames[0..n - 1) naming it, deduplicated with the part as one of its
 * frames, or as a RAW_STACK_PYREF naming the part and an earlier
 * RAW_STACK_PY of the same native frames.  (Not an address: no user-space
 * address has its top bits.) */
#define STACKTAB_PY_TAG 0x7077ull
static inline uint64_t stacktab_py_word(uint32_t index)
{
	return STACKTAB_PY_TAG << 48 | index;
}
/* Faults the hash table in, from a thread of the collector's own, so that
 * the samples do not; stops early when *stop is set.  Not signal-safe. */
void stacktab_populate(const _Atomic int *stop);
/* The id stacktab_intern gave the frames of the walk cfi_unwind_memo
 * numbered serial, as stacktab_know said, and its word into *word; 0 when
 * not known.  Signal-safe. */
uint32_t stacktab_known(uint64_t serial, uint32_t *word);
void stacktab_know(uint64_t serial, uint32_t id, uint32_t word);

/* Forgets every stack (a fork child starts a new trace).  Call only when no
 * handler can run.  Not signal-safe. */
void stacktab_reset(void);
/* Forgets every stack and gives the table's memory back (a detach); the
 * next stacktab_init makes it again.  Call only when no handler can run.
 * Not signal-safe. */
void stacktab_release(void);

#endif
