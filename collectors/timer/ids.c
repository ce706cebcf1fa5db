/* ids.c - setuid and its kin, and chroot, interposed to keep the trace
 * writable
 *
 * The trace belongs to the user who started collect-timer and is private
 * (0600).  A program that starts as root and drops to another user (a
 * server binding a low port) could no longer open it to make it grow, and
 * every sample after the space already mapped would be lost.  So before
 * the program changes its user id the trace is opened once and the
 * descriptor kept (writer_keep, writer.c).  A program that calls the
 * system call directly, not through libc, is not seen: its samples after
 * the mapped space are lost, and the trace says why (EACCES).  The same
 * for chroot: the trace's absolute path would name nothing, or another
 * file, in the new root.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <sys/types.h>
#include <unistd.h>

#include "preload-state.h"
#include "writer.h"

/* Keeps the trace open if it is being written; then finds the real
 * function, or NULL with errno set. */
static void *ids_prepare(const char *name)
{
	void *fn;

	if (atomic_load(&preload.state) == PRELOAD_RUNNING)
		writer_keep();
	fn = dlsym(RTLD_NEXT, name);
	if (fn == NULL)
		errno = ENOSYS;
	return fn;
}

PRELOAD_EXPORT int setuid(uid_t uid)
{
	int (*real)(uid_t) = (int (*)(uid_t))ids_prepare("setuid");

	return real != NULL ? real(uid) : -1;
}

PRELOAD_EXPORT int seteuid(uid_t uid)
{
	int (*real)(uid_t) = (int (*)(uid_t))ids_prepare("seteuid");

	return real != NULL ? real(uid) : -1;
}

PRELOAD_EXPORT int setreuid(uid_t ruid, uid_t euid)
{
	int (*real)(uid_t, uid_t) = (int (*)(uid_t, uid_t))ids_prepare("setreuid");

	return real != NULL ? real(ruid, euid) : -1;
}

PRELOAD_EXPORT int setresuid(uid_t ruid, uid_t euid, uid_t suid)
{
	int (*real)(uid_t, uid_t, uid_t) = (int (*)(uid_t, uid_t, uid_t))ids_prepare("setresuid");

	return real != NULL ? real(ruid, euid, suid) : -1;
}

/* chroot: the trace's path may not be reachable from the new root (nor the
 * same file), so it is kept open as for a change of user. */
PRELOAD_EXPORT int chroot(const char *path)
{
	int (*real)(const char *) = (int (*)(const char *))ids_prepare("chroot");

	return real != NULL ? real(path) : -1;
}
