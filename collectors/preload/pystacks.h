/* pystacks.h - the Python frames of a trace's stacks, each list written
 * once (pystacks.c): as a part (a RAW_PYPARTS record of one, packed) that
 * stack records name, its outer
 * frames shared with the parts written before; or, for the records that
 * hold the words themselves, as a RAW_PYSTACK word per C-level call
 *
 * The lists written are known by a 64-bit hash each, in a table of
 * PYSTACKS_SLOTS words (0: empty) the caller maps and empties (a new
 * trace); the slot of a list, from 1, is its record's index.  All
 * signal-safe: no lock, no allocation, a record written by whichever
 * thread claims its slot first.
 */
#ifndef PROFVIEW_PYSTACKS_H
#define PROFVIEW_PYSTACKS_H

#include <stdatomic.h>
#include <stdint.h>
#include "raw-py.h"

#pragma GCC visibility push(hidden)

#define PYSTACKS_SLOTS (1u << 16)

/* The index of the part (RAW_PYPARTS) of the Python frames w[0..n) (innermost
 * first, at most RAW_PY_MAX_STACK) whose C-level calls of the evaluation
 * loop [eval_lo, eval_hi) end at gend[0..ng) (rising, the last n),
 * writing it the first time; 0 when the table is full.  Signal-safe. */
uint32_t pystacks_part(_Atomic uint64_t *table, const uint64_t *w, uint32_t n,
		       const uint32_t *gend, uint32_t ng, uint64_t eval_lo, uint64_t eval_hi);
/* Each call's frames in w (gend[0..ng) their ends, as above) made one
 * RAW_PYSTACK word where they are more than one and the table has room,
 * in place, gend following: the new count of words.  Signal-safe. */
uint32_t pystacks_words(_Atomic uint64_t *table, uint64_t *w, uint32_t *gend, uint32_t ng);

#pragma GCC visibility pop

#endif
