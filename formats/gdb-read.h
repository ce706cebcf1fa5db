/* gdb-read.h - reader of gdb backtrace dumps (see profview-gdb(5))
 *
 * Reads the traces collect-gdb writes and plain "thread apply all bt"
 * output pasted from a gdb session.  Every thread of every snapshot is one
 * sample: wall-clock semantics, so idle threads count too.  A sample whose
 * leaf is a known blocking call gets an extra leaf frame "[blocked]".
 * Functions, files and lines come from the text: the locations the reader
 * creates already carry their lines, so nothing needs symbolizing.
 */
#ifndef PROFVIEW_GDB_READ_H
#define PROFVIEW_GDB_READ_H

#include "profile.h"

#include <stdbool.h>
#include <stddef.h>

/* The name of the synthetic leaf frame of a blocked thread. */
#define GDB_BLOCKED_FRAME "[blocked]"

/* Does buf look like a gdb trace or a gdb backtrace dump?  True for a
 * collect-gdb header, or for text holding a gdb frame line ("#0  ...")
 * near its start. */
bool gdb_detect(const unsigned char *buf, size_t len);

/* Read a gdb trace or dump from memory; name is used in messages.  A dump
 * cut off mid-line is read up to the cut, with a warning.  Returns a new
 * profile, or NULL after reporting an error (no backtrace in the input, out
 * of memory). */
struct pv_profile *gdb_read(const unsigned char *buf, size_t len, const char *name);

/* Is a function of this name a call that waits (futex, poll, sleep, read,
 * ...)?  Prefixes and suffixes glibc adds (__GI___, __libc_, _nocancel, 64)
 * are ignored. */
bool gdb_is_blocking_function(const char *name, size_t len);

#endif
