/* outfile.h - opening a report or a trace for writing, never through a link
 *
 * Output paths are often in shared directories such as /tmp, where another
 * user can plant a symbolic link, a FIFO or a file of their own under the
 * name about to be written.  pv_outfile_open() creates the file, or writes
 * only over a regular file of the user's own.
 *
 * Libc only, with no message of its own: it is compiled into the formats
 * library and into the collectors, which link nothing else of profview's.
 */
#ifndef PROFVIEW_OUTFILE_H
#define PROFVIEW_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Modes of new files (less the umask): reports as any file, traces, which
 * hold stack bytes and string arguments, readable by their owner only. */
#define PV_OUTFILE_REPORT_MODE 0666
#define PV_OUTFILE_TRACE_MODE 0600

/* Flags.  PV_OUTFILE_NEW: an existing file is removed and a new one created
 * in its place, instead of being truncated, so that the file always has
 * mode and no one else holds it open (traces). */
#define PV_OUTFILE_NEW 1

/* Opens path for writing.  A file that does not exist is created with mode,
 * exclusively.  An existing one is written over (truncated to nothing, its
 * mode kept), or replaced with PV_OUTFILE_NEW, only if it is a regular file
 * of the effective user with no other hard link; a character device
 * (/dev/null) is written to as it is, except with PV_OUTFILE_NEW.  A
 * symbolic link (as the last component), a FIFO, a block device, a socket
 * or another user's file is refused, and the checks are made on the descriptor opened, without
 * following a link, blocking on a FIFO or taking a terminal.
 *
 * Returns the descriptor (close-on-exec, blocking), or -1 with why holding
 * what was wrong as a phrase to follow "cannot write 'PATH': ", such as
 * "it is a symbolic link; not following it" or strerror's text. */
int pv_outfile_open(const char *path, mode_t mode, int flags, char *why, size_t whylen);

/* len bytes of fd at offset off into buf, or of buf to fd there, however
 * many reads or writes it takes (EINTR retried); false when they cannot
 * all be. */
bool pv_pread_all(int fd, void *buf, size_t len, uint64_t off);
bool pv_pwrite_all(int fd, const void *buf, size_t len, uint64_t off);

#endif
