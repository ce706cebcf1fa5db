/* pyslots.h - where the library's open-addressed tables of Python
 * objects (the code objects, the lists of frames written) look for a key
 *
 * A process that runs briefly finds a few hundred keys; spread over a
 * table of 2^16 words, each would fault in a page of its own (a few
 * hundred page faults, each a page cleared, in the handler).  So a key
 * is looked for first among the table's first PYSLOTS_NEAR slots (a few
 * pages, which most keys of a short run then share), then, when those
 * PYSLOTS_NEAR_PROBES are all taken, along the whole table as before.
 * Keys are never taken out but all at once, so the first free slot of
 * that sequence ends a search.  Signal-safe.
 */
#ifndef PROFVIEW_PYSLOTS_H
#define PROFVIEW_PYSLOTS_H

#include <stdint.h>

#define PYSLOTS_NEAR 4096u      /* slots looked at first, of 2^16 */
#define PYSLOTS_NEAR_PROBES 8u  /* of them, for one key */

/* The i-th slot to look at for a key whose hash is h in a table of size
 * slots whose first near are looked at first (both powers of 2, near the
 * smaller), then probes more along the whole table: i <
 * PYSLOTS_NEAR_PROBES + probes. */
static inline uint32_t pyslots_at(uint64_t h, uint32_t i, uint32_t near, uint32_t slots)
{
	if (i < PYSLOTS_NEAR_PROBES)
		return (uint32_t)(h + i) & (near - 1);
	return (uint32_t)((h >> 16) + i - PYSLOTS_NEAR_PROBES) & (slots - 1);
}

#endif
