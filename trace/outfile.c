/* outfile.c - opening a report or a trace for writing, never through a link */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

__attribute__((format(printf, 3, 4)))
static int outfile_fail(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Why opening path without following a link failed with err. */
static int outfile_open_failed(const char *path, int err, char *why, size_t whylen)
{
	struct stat st;

	if (err == ELOOP && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		return outfile_fail(why, whylen, "it is a symbolic link; not following it");
	if (err == ENXIO)	/* a FIFO with no reader, a socket */
		return outfile_fail(why, whylen, "it is not a regular file");
	return outfile_fail(why, whylen, "%s", strerror(err));
}

int pv_outfile_open(const char *path, mode_t mode, int flags, char *why, size_t whylen)
{
	struct stat st;
	int fd;

	/* Another process may remove or create the file between the calls:
	 * start again a few times before giving up. */
	for (int tries = 0;; tries++) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST || tries == 3)
			return outfile_fail(why, whylen, "%s", strerror(errno));
		/* It exists (or is a link, even a dangling one): open it as it
		 * is, to look at what was opened. */
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT)
			continue;
		if (fd < 0)
			return outfile_open_failed(path, errno, why, whylen);
		if (fstat(fd, &st) != 0)
			goto fail_errno;
		/* A character device (/dev/null, a terminal) is written to as
		 * it is: only root makes one, so none was planted, and open()
		 * already checked the permission.  A trace is never written
		 * to one (it would be removed). */
		if (S_ISCHR(st.st_mode) && !(flags & PV_OUTFILE_NEW)) {
			int fl = fcntl(fd, F_GETFL);
			if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
				goto fail_errno;
			return fd;
		}
		if (!S_ISREG(st.st_mode)) {
			close(fd);
			return outfile_fail(why, whylen, "it is not a regular file");
		}
		if (st.st_uid != geteuid()) {
			close(fd);
			return outfile_fail(why, whylen, "it belongs to another user (uid %ju); not overwriting it",
					    (uintmax_t)st.st_uid);
		}
		if (st.st_nlink > 1) {
			close(fd);
			return outfile_fail(why, whylen, "it has other hard links; not overwriting it");
		}
		if (flags & PV_OUTFILE_NEW) {
			close(fd);
			if (unlink(path) != 0 && errno != ENOENT)
				return outfile_fail(why, whylen, "cannot remove the old file: %s", strerror(errno));
			continue;
		}
		int fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0 || ftruncate(fd, 0) != 0)
			goto fail_errno;
		return fd;
	}

fail_errno:
	outfile_fail(why, whylen, "%s", strerror(errno));
	close(fd);
	return -1;
}

bool pv_pread_all(int fd, void *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t r = pread(fd, buf, len, (off_t)off);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return false;
		}
		buf = (char *)buf + r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return true;
}

bool pv_pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	while (len) {
		ssize_t r = pwrite(fd, buf, len, (off_t)off);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return false;
		}
		buf = (const char *)buf + r;
		len -= (size_t)r;
		off += (uint64_t)r;
	}
	return true;
}
