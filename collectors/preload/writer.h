/* writer.h - the trace file, written through a growing MAP_SHARED mapping
 * (writer.c)
 *
 * In the preload library, which libprofview-timer.so and
 * libprofview-heap.so link.  Each function says whether it is
 * signal-safe: whether it may run in a signal handler (the sampler's),
 * taking no lock, allocating nothing, never blocking.
 */
#ifndef PROFVIEW_PRELOAD_WRITER_H
#define PROFVIEW_PRELOAD_WRITER_H

#include <stdint.h>
#include <sys/types.h>

#include "raw.h"

/* How writer_reserve may get space: a signal handler's sample never waits
 * and never takes the tail kept for the end of the trace; WRITER_WAIT grows
 * the file as needed (not signal-safe); WRITER_FINAL may take the tail but
 * never grows the file or waits (signal-safe: the end of the trace written
 * from a signal handler). */
enum { WRITER_NOWAIT = 0, WRITER_WAIT = 1, WRITER_FINAL = 2 };

/* Opens (creates) this process image's trace.  path is absolute.  With
 * use_given, path itself when it is an empty regular file (the launcher
 * creates it); else, or when it is not empty, the first free name of
 * "<stem>.<pid>.raw", "<stem>.<pid>.1.raw", "<stem>.<pid>.2.raw"... created
 * with O_EXCL, where stem is path without a final ".raw".  Without
 * use_given, when PROFVIEW_SHORT names the run's file of short images,
 * creates nothing: the trace is staged in memory until its first sample
 * (writer_need_file).  Returns 0 or -1 (errno set).  The file stays open
 * until writer_init.  Not signal-safe. */
int writer_open(const char *path, int use_given);
/* The name writer_open chose; of a staged trace, the path it is to be
 * named after.  Valid until the next writer_open.  Signal-safe. */
const char *writer_path(void);
/* The process the trace is of (the pid of its header): a vfork child
 * shares the trace's mapping but is not it.  Signal-safe. */
pid_t writer_owner(void);
/* Reserves address space, maps the first chunk of the file and writes the
 * header, the architecture after it (a version 2 header) and the exe path,
 * then closes the file: later growth reopens it by path and checks it is
 * the same file.  tailed: collect-timer reads the launcher's file as it is
 * written and frees the page cache of what it has read (writer_release
 * then leaves that to it).  Returns 0 or -1 (errno set); on failure
 * nothing is left (a file writer_open created is removed).  Not
 * signal-safe. */
int writer_init(const struct raw_header *header, const struct raw_arch *arch, const char *exe,
		int tailed);
/* Reserves size bytes (a multiple of 8, at most 1 MiB) for records and
 * returns where to write them, or NULL when there is no space; wait is one
 * of WRITER_NOWAIT (signal-safe; may grow the file, but only when no other
 * thread is growing it), WRITER_WAIT and WRITER_FINAL (see above).  Every
 * byte reserved must be published, as one record or several: until then
 * the memory of the trace from there on cannot be released. */
void *writer_reserve(uint32_t size, int wait);
/* Makes a record written at rec valid: stores its type and size word last,
 * with release order.  The record is not touched again.  Signal-safe. */
void writer_publish(void *rec, uint32_t type, uint32_t size);
/* Drops the pages of the trace that are written (every record in them
 * published) from the mapping, so that the program's memory does not grow
 * with its trace, and (unless tailed) from the page cache once written
 * back; their place in the address space can then be used again.  Call it
 * every megabyte or so written (writer_unreleased), or a few times a
 * second.  Signal-safe: system calls only, no lock (a call that finds
 * another in progress, or the records below the cursor still being
 * written, as in a handler that interrupted a writer, does nothing);
 * never blocks for long. */
void writer_release(void);
/* The bytes claimed since the last release dropped them.  Signal-safe. */
uint64_t writer_unreleased(void);

/* Faults in the pages the next records will go to (as writer_release
 * does), more often than the release: the control thread calls it while
 * the trace grows.  Returns the bytes written since its last call or
 * writer_release's.  Not signal-safe. */
uint64_t writer_prefault_tick(void);
/* Truncates the file to the bytes used; a staged trace is appended to the
 * run's file of short images instead (or, failing that, given a file of
 * its own).  Call only when no other writer can run any more.
 * Signal-safe.  Returns 0 or -1. */
int writer_finish(void);
/* Drops the mapping without touching the file (fork child).  Not
 * signal-safe. */
void writer_forget(void);
/* A staged trace (see writer.c: no file yet) gets its file now: call
 * before writing a sample.  Returns 0, or -1 when it could not now (the
 * record then goes to the staged memory, and the next call tries again).
 * Signal-safe. */
int writer_need_file(void);
/* Is the trace still staged (no file of its own)?  Signal-safe. */
int writer_staged(void);
/* ending: this image execs or leaves by _exit (no destructor runs); else
 * it forks.  A staged trace is appended to the run's file of short images
 * as it is: at the end since the memory it is in goes, and once before the
 * first fork (or from a vfork child, its parent's) so that the children's
 * traces have their parent's.  Signal-safe. */
void writer_flush_staged(int ending);
/* Keeps the trace open from now on: the program is about to change its
 * user id, after which it may not open the file any more.  Not
 * signal-safe. */
void writer_keep(void);
/* The errno of the last failed attempt to grow the trace, 0 if none.
 * Signal-safe. */
int writer_error(void);

#endif
