/* writer-name.c - the trace file's name and its creation, for writer.c
 *
 * A process image's trace is "<stem>.<pid>.raw", or, when that is taken
 * (the earlier images of a chain of execs left it), the first free one of
 * "<stem>.<pid>.1.raw", "<stem>.<pid>.2.raw"...  It is created with
 * O_EXCL, never through a link, readable by its owner alone: it holds
 * stack bytes.  The launcher's own file is opened only if it is an empty
 * regular file of ours.  Every open is the system call itself, so that an
 * open() the program interposes is not involved.
 *
 * Signal-safe throughout (a staged trace is named from the signal handler
 * of its first sample): no allocation, no lock, stdio neither.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "writer-name.h"

/* Names of the traces of one pid tried at most */
#define WRITER_NAMES 10000

int writer_sys_open(const char *path, int flags)
{
	return (int)syscall(SYS_openat, AT_FDCWD, path, flags | O_CLOEXEC, 0600);
}

void writer_sys_close(int fd)
{
	syscall(SYS_close, fd);
}

int writer_open_given(const char *path)
{
	struct stat st;
	int fd = writer_sys_open(path, O_RDWR | O_CREAT | O_NOFOLLOW);

	if (fd < 0)
		return errno == ELOOP ? (errno = EEXIST, -1) : -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 && st.st_uid == geteuid())
		return fd;
	writer_sys_close(fd);
	errno = EEXIST;
	return -1;
}

/* Writes "." and v in decimal at p, before end; returns the end of it, or
 * NULL when it does not fit (or p is NULL). */
static char *writer_put_num(char *p, char *end, unsigned v)
{
	char digits[12];
	int n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	if (p == NULL || end - p < n + 1)
		return NULL;
	*p++ = '.';
	while (n > 0)
		*p++ = digits[--n];
	return p;
}

/* Names the n-th trace of this pid in name (of cap bytes): the stem bytes
 * of path, ".<pid>", ".<n>" unless n is 0, ".raw".  Returns 0, or -1 when
 * it is too long.  By hand rather than snprintf: a signal handler may
 * name the trace. */
static int writer_name(const char *path, int stem, int n, char *name, size_t cap)
{
	char *p = name, *end = name + cap;

	if ((size_t)stem + 1 >= cap)
		return -1;
	memcpy(p, path, (size_t)stem);
	p += stem;
	p = writer_put_num(p, end, (unsigned)getpid());
	if (n != 0)
		p = writer_put_num(p, end, (unsigned)n);
	if (p == NULL || end - p < 5)
		return -1;
	memcpy(p, ".raw", 5);
	return 0;
}

/* Is the n-th name taken (anything there, a link too)? */
static int writer_taken(const char *path, int stem, int n, char *name, size_t cap)
{
	struct stat st;

	return writer_name(path, stem, n, name, cap) != 0 || lstat(name, &st) == 0 || errno != ENOENT;
}

/* The first free name of this pid, as the images of one process (a
 * chain of execs) leave them: every one below it taken.  A search, not a
 * walk from 0, so that the thousandth exec of a chain does not try a
 * thousand names. */
static int writer_first_free(const char *path, int stem, char *name, size_t cap)
{
	int lo = 0, hi = 1;

	if (!writer_taken(path, stem, 0, name, cap))
		return 0;
	while (hi < WRITER_NAMES && writer_taken(path, stem, hi, name, cap)) {
		lo = hi;
		hi *= 2;
	}
	/* lo taken, hi free (or the end): the first free one after lo */
	while (hi - lo > 1) {
		int mid = lo + (hi - lo) / 2;

		if (writer_taken(path, stem, mid, name, cap))
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

/* Creates the n-th name of this pid, if nothing is there: the fd, or -1
 * (errno EEXIST when the name is taken). */
static int writer_create(const char *path, int stem, int n, char *name, size_t cap)
{
	if (writer_name(path, stem, n, name, cap) != 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return writer_sys_open(name, O_RDWR | O_CREAT | O_EXCL);
}

int writer_name_create(const char *path, char *name, size_t cap)
{
	size_t len = strlen(path);
	int stem = len > 4 && memcmp(path + len - 4, ".raw", 4) == 0 ? (int)len - 4 : (int)len;
	int fd;

	/* The first name is created at once, without a look at it: the
	 * usual case, and its creation says whether it is taken.  Then the
	 * first free one (a chain of execs); another process may take a name
	 * between the search and the creation: then the next ones, in turn. */
	if ((fd = writer_create(path, stem, 0, name, cap)) >= 0 || errno != EEXIST)
		return fd;
	for (int n = writer_first_free(path, stem, name, cap), tries = 0; tries < WRITER_NAMES;
	     n++, tries++) {
		fd = writer_create(path, stem, n, name, cap);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}
