/* pycodes.h - Python code objects written packed, several to a
 * RAW_PYCODES record (raw.h), their names and file names shared with the
 * code objects written before; and the lines of their instructions, which
 * the frame words then carry, kept once looked up
 *
 * All signal-safe: no allocation, no lock; the tables are fixed arrays of
 * the library, updated with atomic operations.
 */
#ifndef PROFVIEW_PYCODES_H
#define PROFVIEW_PYCODES_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

#define PYCODES_BUF 2048   /* bytes of entries a record holds at most */
#define PYCODES_LOCAL 128  /* strings and beginnings of one record */
#define PYCODES_TEXT_MAX 512 /* bytes of a name or a file name */

/* The code objects one walk found new, on the caller's stack: entries
 * gathered and written as one record when full or at pycodes_flush.
 * Start it with len, nlocal and last 0. */
struct pycodes_batch {
	uint32_t len, nlocal, last; /* last: the index of the entry before */
	uint64_t local[PYCODES_LOCAL]; /* strings of this batch, as in the table */
	unsigned char buf[PYCODES_BUF];
};

/* Forgets every string written and line kept: at the start of a trace (a
 * new interpreter, a forked child's trace).  Not signal-safe with a walk
 * running. */
void pycodes_reset(void);

/* Adds code index idx (first line first, qualified name name[0..nname),
 * file name file[0..nfile), each at most PYCODES_TEXT_MAX bytes) to b,
 * writing b's record first when the entry might not fit. */
void pycodes_add(struct pycodes_batch *b, uint32_t idx, int32_t first, const char *name,
		 uint32_t nname, const char *file, uint32_t nfile);

/* Writes b's record, if it holds any entry, and makes its strings known
 * to later records. */
void pycodes_flush(struct pycodes_batch *b);

/* The line of instruction instr of code idx kept by pycodes_line_keep:
 * 1 and *line, or 0 when not kept. */
int pycodes_line_get(uint32_t idx, uint32_t instr, uint32_t *line);
/* Keeps it (a line that does not fit the cache's word is not kept). */
void pycodes_line_keep(uint32_t idx, uint32_t instr, uint32_t line);

#pragma GCC visibility pop

#endif
