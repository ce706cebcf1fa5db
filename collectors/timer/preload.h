/* preload.h - internals shared by the files of libprofview-timer.so
 *
 * Nothing here is exported from the library: it is built with
 * -fvisibility=hidden and only the interposed libc functions in preload.c
 * are visible.  Functions marked "signal-safe" may be called from the SIGPROF
 * handler: they take no locks, allocate nothing and never block.
 */
#ifndef PROFVIEW_TIMER_PRELOAD_H
#define PROFVIEW_TIMER_PRELOAD_H

#include <stddef.h>
#include <stdint.h>

#include "raw.h"

#define PRELOAD_PREFIX "collect-timer: "

/* preload.c */

/* Monotonic time in nanoseconds.  Signal-safe. */
uint64_t preload_now(void);
/* Writes one line to stderr, prefixed with PRELOAD_PREFIX.  Not signal-safe
 * (uses vsnprintf); used only outside the handler. */
void preload_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* writer.c - the trace file, written through a growing MAP_SHARED mapping */

/* Opens the trace at path: the file when it is empty (the launcher creates
 * it), else the first free "<path>.<n>" created with O_EXCL.  Returns the fd
 * or -1 with errno set. */
int writer_open(const char *path);
/* Reserves address space, maps the first chunk of fd and writes the header
 * and exe path.  Returns 0 or -1 (errno set); on failure nothing is left. */
int writer_init(int fd, const struct raw_header *header, const char *exe);
/* Reserves size bytes (a multiple of 8) for one record and returns where to
 * write it, or NULL when there is no space.  With wait = 0 it never blocks
 * and is signal-safe (it may grow the file, but only when no other thread is
 * growing it); with wait != 0 it grows the file itself as needed. */
void *writer_reserve(uint32_t size, int wait);
/* Makes a record written at rec valid: stores its type and size word last,
 * with release order.  Signal-safe. */
void writer_publish(void *rec, uint32_t type, uint32_t size);
/* Truncates the file to the bytes used.  Call only when no other writer can
 * run any more.  Returns 0 or -1. */
int writer_finish(void);
/* Drops the mapping and the fd without touching the file (fork child). */
void writer_forget(void);

/* stacktab.c - stack deduplication */

/* Allocates the hash table and the frame arena.  Returns 0 or -1. */
int stacktab_init(void);
/* Returns the id of the stack frames[0..n), writing a RAW_STACK record the
 * first time it is seen, or 0 when the stack cannot be stored (table or
 * arena full, slot being filled by another thread, no trace space): the
 * caller then writes the frames inline.  Signal-safe. */
uint32_t stacktab_intern(const uint64_t *frames, uint32_t n);

/* preload.c, for the other files */

/* Is no SIGPROF handler of ours running right now?  A handler that starts
 * after this returned 1 sees every pointer published (seq_cst) before the
 * call.  Signal-safe. */
int preload_handlers_idle(void);
/* Is this process being profiled right now? */
int preload_running(void);

/* mappings.c - RAW_MAPPING records and the table of executable ranges */

/* Writes a RAW_MAPPING record for the executable mappings in
 * /proc/self/maps, with build ids: all of them, or with only_new those not
 * written by an earlier call (a line that went away and came back counts as
 * new).  Also rebuilds the table mappings_is_code reads.  Not signal-safe;
 * serialized by its own lock.  Returns the number of records written or
 * -1. */
int mappings_write(int only_new);
/* Calls mappings_write(1) if the dynamic loader has loaded an object since
 * the last mappings_write.  Not signal-safe. */
void mappings_refresh(void);
/* Does v point into an executable mapping, as of the last mappings_write?
 * Lock-free; signal-safe. */
int mappings_is_code(uintptr_t v);
/* Stores the [start, end) of up to cap mappings of /proc/self/maps in
 * ranges, in address order: the executable ones when executable is set,
 * else the writable private ones.  Returns how many. */
int mappings_ranges(uintptr_t (*ranges)[2], int cap, int executable);

#endif
