/* pylines.h - a CPython code object's line table as the compact runs of
 * a RAW_PYCODE_COMPACT record (raw.h): what the raw reader needs to give
 * an instruction its line, without the columns
 *
 * All signal-safe: no allocation, no lock, reads through the caller's
 * function only.
 */
#ifndef PROFVIEW_PYLINES_H
#define PROFVIEW_PYLINES_H

#include <stddef.h>
#include <stdint.h>
#include "raw-py.h"

#pragma GCC visibility push(hidden)

/* Reads len bytes at addr into dst, all or nothing: 0, or -1. */
typedef int pylines_read_fn(void *dst, uintptr_t addr, size_t len);

/* The table being written: the caller sets out and cap (out is its
 * buffer); over is set when the runs do not fit (len then means
 * nothing).  The rest is the converter's. */
struct pylines {
	unsigned char *out;
	uint32_t len, cap;
	int over;
	uint64_t units;        /* the run being grown */
	int64_t line, written; /* its line; the line of the last run written */
	int none;
	/* pylines_find's: the instruction looked for, the runs' end so
	 * far, and once found (done), its line (0: none) */
	int find, done;
	uint64_t target, at;
	int64_t found;
};

/* Converts the line table of tlen bytes at table, in the format of the
 * interpreter's version (major << 8 | minor: 3.9's co_lnotab, 3.10's
 * co_linetable, 3.11 on's location table), of a code whose first line is
 * first, into t.  A table that cannot be read ends where it could. */
void pylines_convert(struct pylines *t, pylines_read_fn *read, uint32_t version, uintptr_t table,
		     uint64_t tlen, int64_t first);

/* The line instruction instr (in code units from the code's first) is on
 * in the same table, as the reader would find it in the table
 * pylines_convert makes: 0 when none, or when the table does not say.
 * The walk ends at the run that holds instr. */
int64_t pylines_find(pylines_read_fn *read, uint32_t version, uintptr_t table, uint64_t tlen,
		     int64_t first, uint64_t instr);
/* The same with the table's first nhave bytes already in have (its
 * caller's copy, read with the table's length): read reads the rest. */
int64_t pylines_find_from(pylines_read_fn *read, uint32_t version, uintptr_t table, uint64_t tlen,
			  int64_t first, uint64_t instr, const unsigned char *have, uint32_t nhave);

#pragma GCC visibility pop

#endif
