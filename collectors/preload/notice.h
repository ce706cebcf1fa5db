/* notice.h - the lines the preload libraries write on standard error
 * (notice.c, in the preload library that libprofview-timer.so and
 * libprofview-heap.so link)
 *
 * Every line names the collector (its host's, host.h) and the process it
 * is about:
 *
 *   collect-timer: pid 1234 (gzip): the program installed its own handler...
 *
 * A run of many processes (a server's workers, a build's compilers) writes
 * many such lines, and each says which process wrote it, with the base
 * name of the program the process runs (/proc/self/exe, as the trace's
 * header has it and collect-timer's summary says it).  The name is data:
 * control characters are written in caret notation ("^[") and bytes
 * outside ASCII as "\xHH", so that it cannot act on a terminal; it is cut
 * at 64 bytes.
 */
#ifndef PROFVIEW_PRELOAD_NOTICE_H
#define PROFVIEW_PRELOAD_NOTICE_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

/* Writes "COLLECTOR: pid PID (NAME): " into buf (cap bytes), always
 * terminated; returns its length.  Reads the pid and the program now, so
 * that a forked child says its own.  Signal-safe. */
size_t notice_prefix(char *buf, size_t cap);

/* Writes the prefix, text and a newline to stderr in one write (a line
 * of up to 512 bytes in all; a longer text is cut).  Signal-safe. */
void notice_line(const char *text);

/* Where the lines go: standard error, or, attached (collect-timer -p),
 * the pipe to the collector, so that nothing is written on the program's
 * own standard error. */
extern _Atomic int notice_fd;

/* notice_line of a printf format.  Not signal-safe (vsnprintf). */
void notice_vsay(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#pragma GCC visibility pop

#endif
