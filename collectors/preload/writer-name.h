/* writer-name.h - the trace file's name and creation (writer-name.c)
 *
 * In the preload library, for writer.c.  Every function here is
 * signal-safe: system calls only, into the caller's buffers.
 */
#ifndef PROFVIEW_PRELOAD_WRITER_NAME_H
#define PROFVIEW_PRELOAD_WRITER_NAME_H

#include <stddef.h>

/* open(2) of path with flags, O_CLOEXEC and mode 0600 when it creates,
 * as the system call itself.  Returns the fd or -1 (errno set). */
int writer_sys_open(const char *path, int flags);
/* close(2) as the system call itself. */
void writer_sys_close(int fd);
/* Opens path itself (the launcher's file) if it is an empty regular file
 * of this user, not a link, creating it if it is missing.  Returns the fd,
 * -1 with errno EEXIST when it is there but not such a file, or -1. */
int writer_open_given(const char *path);
/* Creates this pid's trace named after path (absolute; stem: path without
 * a final ".raw"): "<stem>.<pid>.raw", else the first free of
 * "<stem>.<pid>.<n>.raw", with O_EXCL; its name into name (cap bytes).
 * Returns the fd, or -1: errno EEXIST when 10,000 names are taken,
 * ENAMETOOLONG when the name does not fit, else the open's. */
int writer_name_create(const char *path, char *name, size_t cap);

#endif
