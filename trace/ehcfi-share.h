/* ehcfi-share.h - unwind rows made once for every process of a run
 *
 * The processes of a build run the same few programs again and again (a
 * compiler per file), and each made the same unwind rows for the same
 * functions: over a make -j2 of 50 small files, the compilers' walks made
 * rows for 4,300 functions, 1,230 of them different.  Here the rows a
 * process makes for a chunk of an object (ehcfi-lazy.h) are copied into
 * memory every process of the run maps (the launcher's, beside the control
 * word: collect-env.h), under the object's key (its GNU build ID, so the
 * same bytes, with the size of its search table), and the next process
 * that needs that chunk takes them from there rather than making them.
 *
 * The share is zero when made, and zero is its empty state: no one sets
 * it up.  It holds a directory of objects (a key and where the object's
 * chunk states are), then the states and rows, taken from the front by an
 * atomic add and never given back.  Each chunk state is a 64-bit word:
 * none, making (a process claimed it with a compare-and-swap), or made
 * (the rows' place and count).  A chunk some other process is making, or
 * whose maker died, is made by the walk for its own process alone, as
 * without a share; so is everything once the share is full.
 *
 * Signal-safe throughout: atomics and memcpy, no allocation, no lock.
 * The rows read from the share are checked to lie inside it.
 */
#ifndef PROFVIEW_EHCFI_SHARE_H
#define PROFVIEW_EHCFI_SHARE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ehcfi.h"

/* Objects the share can hold. */
#define EHCFI_SHARE_SLOTS 1024

/* Uses the share at base, len bytes, from now on (NULL: none).  Called
 * before the first walk, or not at all. */
void ehcfi_share_use(void *base, size_t len);

/* The name of an object in the share: a hash of its build ID's bytes
 * (id, len); 0 (not shared) when it has none. */
uint64_t ehcfi_share_id(const void *id, size_t len);

/* The states of the nchunks chunks of the object named id whose search
 * table has count entries, found in the share or entered into it; NULL
 * when there is no share, it is full, the object is being entered by
 * another process, or the one there has another number of chunks.
 * Signal-safe. */
_Atomic uint64_t *ehcfi_share_states(uint64_t id, uint32_t count, uint32_t nchunks);

/* A chunk's state: made, with its rows (*rows, *n), 1; else 0.
 * Signal-safe. */
int ehcfi_share_made(uint64_t state, const struct ehcfi_row **rows, uint32_t *n);

/* Claims the chunk whose state is st for the caller to make: 1 when it
 * was none and is now the caller's (making), else 0 (0 too once the
 * share had no room for this process's rows).  Signal-safe. */
int ehcfi_share_claim(_Atomic uint64_t *st);

/* Gives back a chunk claimed and not made (out of memory). */
void ehcfi_share_unclaim(_Atomic uint64_t *st);

/* Copies the n rows of the chunk claimed at st into the share and
 * publishes them: 1.  When the share is full, the chunk is none again,
 * and this process claims no more: 0.  Signal-safe. */
int ehcfi_share_publish(_Atomic uint64_t *st, const struct ehcfi_row *rows, uint32_t n);

#endif
