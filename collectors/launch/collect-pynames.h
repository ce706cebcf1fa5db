/* collect-pynames.h - the run's Python names, written once
 *
 * Each process of a Python program writes the qualified names and file
 * names of the code objects it ran (RAW_PYCODES records), and a run of
 * many short interpreters writes the same ones (site, importlib,
 * encodings...) once in each.  As the launcher joins the traces, the
 * strings of their RAW_PYCODES records are moved into one table of the
 * run, written once beside the parts (raw.h, RAW_RUN_PYNAMES_MAGIC), and
 * each trace names them by number (RAW_PYRUNCODES).  The parts of their
 * Python stacks (RAW_PYPARTS) become the run's parts, a tree of frames
 * that takes each stack the interpreters share once, and each trace's
 * stacks name them by the run's numbers (RAW_PYRUNPARTS says so).  The
 * tables are collect-pynames.c's, the rewriting of each trace
 * collect-pyjoin.c's (collect-pynames-int.h).  The process's handler is
 * not involved: it writes its records as a lone process does.
 * Launcher-side only, not signal-safe.
 */
#ifndef PROFVIEW_LAUNCH_COLLECT_PYNAMES_H
#define PROFVIEW_LAUNCH_COLLECT_PYNAMES_H

#include <stdint.h>

struct collect_pynames;

/* An empty table: NULL when out of memory (the traces are then joined as
 * they are).  The caller frees it with collect_pynames_free. */
struct collect_pynames *collect_pynames_new(void);
void collect_pynames_free(struct collect_pynames *t);

/* Copies bytes [at, at + len) of the trace at path into fd at offset off,
 * its RAW_PYCODES records' strings replaced by the run's, which t takes,
 * and its RAW_PYPARTS records by the run's parts when every part can be
 * one (its frames' codes the run's, one evaluation loop);
 * a trace without such records, or whose records do not decode (a
 * damaged trace), is copied as it is, and so are the bytes after its
 * last whole record.  Returns the bytes written, or -1 (errno set). */
int64_t collect_pynames_copy(struct collect_pynames *t, int fd, uint64_t off, const char *path,
			     uint64_t at, uint64_t len);

/* Writes t's records (its codes, then its parts) and their trailer
 * (raw_run_pynames) into fd at off, a multiple of 8, or, when that is
 * smaller, the records deflated and theirs (raw_run_pynamez).  Returns
 * the bytes written (0 when no trace had a name), or -1. */
int64_t collect_pynames_write(struct collect_pynames *t, int fd, uint64_t off);

#endif
