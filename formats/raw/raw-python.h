/* raw-python.h - the Python frames of a raw trace: its code objects
 * (RAW_PYCODE) and the tagged words of its stacks (raw-python.c);
 * internal to the formats library */
#ifndef PROFVIEW_RAW_PYTHON_H
#define PROFVIEW_RAW_PYTHON_H

#include "raw-reader.h"

/* Takes in a RAW_PYCODE record of size bytes (whole, as raw-iter.h
 * checked): its function, first line and line table.  A record whose
 * lengths pass its size, or whose index is 0 or was seen, is skipped with
 * a warning.  0, or -1 when out of memory. */
int rd_python_code(struct reader *rd, const unsigned char *r, uint32_t size, size_t off);
/* Takes in a RAW_PYCODES record of size bytes (whole, as raw-iter.h
 * checked): each entry's function and first line.  An entry that does not
 * decode ends the record with a warning (the entries before are kept); an
 * index 0, too big or seen before is skipped with a warning (the indices
 * after it count from it still), a string
 * that names one not read before is taken as empty with one.  0, or -1
 * when out of memory. */
int rd_python_codes(struct reader *rd, const unsigned char *r, uint32_t size, size_t off);
/* Takes in a RAW_PYRUNCODES record of size bytes (whole, as raw-iter.h
 * checked): each code of its ranges the run's code it names (the run's
 * names of the reader, rd->run_names).  A range that does not decode,
 * names a code the run does not have or an index seen before ends the
 * record with a warning (the codes before are kept).  0, or -1 when out
 * of memory. */
int rd_python_run_codes(struct reader *rd, const unsigned char *r, uint32_t size, size_t off);
/* Takes in a RAW_PYRUNPARTS record of size bytes (whole, as raw-iter.h
 * checked): each part of its ranges the run's part it names, of the
 * record's evaluation loop.  A range that does not decode, names a part
 * the run does not have or an index seen before or past RAW_PY_MAX_PARTS
 * ends the record with a warning (the parts before are kept).  0, or -1
 * when out of memory. */
int rd_python_run_parts(struct reader *rd, const unsigned char *r, uint32_t size, size_t off);
/* Takes in a RAW_PYSTACK record of size bytes (whole, as raw-iter.h
 * checked): a duplicate index, index 0 or a word that is not a Python
 * frame's is skipped with a warning.  0, or -1 when out of memory. */
int rd_python_stack(struct reader *rd, const unsigned char *r, size_t off);
/* Takes in a RAW_PYPART record (whole, as raw-iter.h checked): one
 * whose frames do not decode, or whose indices pass RAW_PY_MAX_PARTS or
 * hold its parent, is skipped with a warning; an index seen before keeps
 * its first part.  0, or -1 when out of memory. */
int rd_python_part(struct reader *rd, const unsigned char *r, size_t off);
/* Takes in a RAW_PYPARTS record of size bytes (whole, as raw-iter.h
 * checked): each of its parts as a RAW_PYPART's; a part that does not
 * decode, or that would be skipped as a RAW_PYPART is, ends the record
 * with a warning.  0, or -1 when out of memory. */
int rd_python_parts(struct reader *rd, const unsigned char *r, uint32_t size, size_t off);
/* Puts the Python frames of RAW_PYPART index into the native frames
 * frames[0..n) (cap words) as raw_py_merge does (a part without a record:
 * one frame that says so, at the root; a part of the run's, its frames
 * the process's codes that are the run's codes they name, else frames
 * whose code has no record); returns the new count. */
uint32_t rd_python_part_merge(struct reader *rd, uint32_t index, uint64_t *frames, uint32_t n,
			      uint32_t cap);
/* The locations of the Python stack word w (raw_pystack_is(w)) into
 * locs[0..cap): their count (a stack without a record: one location that
 * says so); UINT32_MAX when out of memory. */
uint32_t rd_python_stack_locations(struct reader *rd, uint64_t w, uint32_t *locs, uint32_t cap);
/* The location of the Python frame word w (raw_py_is(w)): its code's
 * function at the line its instruction is on; PV_NONE when out of
 * memory. */
uint32_t rd_python_location(struct reader *rd, uint64_t w);
/* The run's names, buf[0..len) (raw.h, RAW_RUN_PYNAMES_MAGIC; inflated
 * first when deflated, RAW_RUN_PYNAMEZ_MAGIC), read as a
 * trace's RAW_PYCODES and RAW_PYPARTS records are, for the run file name (who): NULL when
 * out of memory (said); records that do not hold together are skipped
 * with a warning.  Freed with rd_run_names_free. */
struct rd_run_names *rd_run_names_read(const unsigned char *buf, size_t len, const char *who);
void rd_run_names_free(struct rd_run_names *n);
/* Frees what rd_python_code kept. */
void rd_python_free(struct rd_python *py);

/* The line of instruction instr (in code units) in a CPython 3.11-3.13's
 * line table (co_linetable) of a code whose first line is first; 0 when
 * the table does not say.  Exported for the tests. */
int64_t pv_python_line(const unsigned char *table, size_t len, int64_t first, uint32_t instr);
/* The same in 3.10's co_linetable and in 3.9's co_lnotab. */
int64_t pv_python_line_310(const unsigned char *table, size_t len, int64_t first, uint32_t instr);
int64_t pv_python_line_39(const unsigned char *table, size_t len, int64_t first, uint32_t instr);
/* The same in a RAW_PYCODE_COMPACT table (see raw.h). */
int64_t pv_python_line_compact(const unsigned char *table, size_t len, int64_t first, uint32_t instr);

#endif
