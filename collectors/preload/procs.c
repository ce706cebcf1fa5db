/* procs.c - the programs this image runs and the children it waits for
 * (see procs.h)
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host.h"
#include "preload.h"
#include "procs.h"
#include "raw.h"
#include "writer.h"

#define PROCS_EXPORT __attribute__((visibility("default")))

/* Has the ELF file at fd a program interpreter (PT_INTERP)?  1 yes, 0 no
 * (a static program), -1 not an ELF file of this machine or unreadable. */
static int procs_has_interp(int fd)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(ph) || eh.e_phnum > 4096)
		return -1;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			return -1;
		if (ph.p_type == PT_INTERP)
			return 1;
	}
	return 0;
}

/* What would keep the library out of the image of the program at path
 * (enum raw_why).  Signal-safe. */
static uint32_t procs_why_path(const char *path)
{
	struct stat sb;
	int fd, interp;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return RAW_WHY_UNKNOWN;
	if (fstat(fd, &sb) != 0) {
		close(fd);
		return RAW_WHY_UNKNOWN;
	}
	interp = procs_has_interp(fd);
	close(fd);
	if (interp == 0)
		return RAW_WHY_STATIC;
	/* the loader's secure mode: the ids change in the exec */
	if (interp == 1 && (((sb.st_mode & S_ISUID) && sb.st_uid != geteuid()) ||
			    ((sb.st_mode & S_ISGID) && sb.st_gid != getegid())))
		return RAW_WHY_SETID;
	return RAW_WHY_UNKNOWN;
}

int procs_env_preloads(char *const env[])
{
	for (size_t i = 0; env != NULL && env[i] != NULL; i++)
		if (strncmp(env[i], "LD_PRELOAD=", 11) == 0)
			return strstr(env[i], preload_host.library) != NULL;
	return 0;
}

/* The path execvp would run for file: file itself when it has a slash or
 * search is 0 (execve, posix_spawn), else the first executable of that
 * name in PATH, into buf.  Signal-safe (getenv reads the environment,
 * which exec must not be racing). */
static const char *procs_find(const char *file, int search, char *buf, size_t cap)
{
	const char *path = getenv("PATH"), *p, *e;
	size_t fl = strlen(file);

	if (!search || strchr(file, '/') != NULL || path == NULL)
		return file;
	for (p = path;; p = e + 1) {
		size_t dl;

		e = strchr(p, ':');
		dl = e != NULL ? (size_t)(e - p) : strlen(p);
		if (dl + fl + 2 <= cap) {
			memcpy(buf, dl ? p : ".", dl ? dl : 1);
			dl = dl ? dl : 1;
			buf[dl] = '/';
			memcpy(buf + dl + 1, file, fl + 1);
			if (access(buf, X_OK) == 0)
				return buf;
		}
		if (e == NULL)
			return file;
	}
}

/* The RAW_EXEC record of process pid running file. */
static void procs_note(pid_t pid, const char *file, int search, int preloads)
{
	char found[4096];
	const char *path;
	struct raw_exec *rec;
	uint32_t why, len, size;

	if (file == NULL)
		return;
	path = procs_find(file, search, found, sizeof(found));
	why = procs_why_path(path);
	if (why == RAW_WHY_UNKNOWN && !preloads)
		why = RAW_WHY_ENV;
	len = (uint32_t)strnlen(path, RAW_RUN_OTHER_NAME_MAX);
	size = raw_pad((uint32_t)sizeof(*rec) + len);
	rec = writer_reserve(size, WRITER_NOWAIT);
	if (rec == NULL)
		return;
	memset(rec, 0, size);
	rec->time_ns = preload_now();
	rec->pid = (uint32_t)pid;
	rec->why = why;
	rec->path_len = len;
	memcpy(rec + 1, path, len);
	writer_publish(rec, RAW_EXEC, size);
}

void procs_note_exec(const char *file, int search, int preloads)
{
	/* a vfork child runs on its parent's memory, trace included: the
	 * record says whose exec it is */
	procs_note(getpid(), file, search, preloads);
}

/* ---- the programs started inside the C library ---- */

typedef int (*procs_spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			      const posix_spawnattr_t *, char *const[], char *const[]);

/* posix_spawn or posix_spawnp (name), then the RAW_EXEC record of the
 * child, as its own exec would have written it: the exec happens inside
 * the C library, where the library's execve is not called. */
static int procs_spawn(const char *name, int search, pid_t *pid, const char *file,
		       const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *attr,
		       char *const argv[], char *const envp[])
{
	procs_spawn_fn real = (procs_spawn_fn)dlsym(RTLD_NEXT, name);
	pid_t child = 0;
	int rc;

	if (real == NULL)
		return ENOSYS;
	rc = real(&child, file, fa, attr, argv, envp);
	if (rc == 0) {
		int saved_errno = errno;

		procs_note(child, file, search, procs_env_preloads(envp));
		errno = saved_errno;
		if (pid != NULL)
			*pid = child;
	}
	return rc;
}

PROCS_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			     const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return procs_spawn("posix_spawn", 0, pid, path, fa, attr, argv, envp);
}

PROCS_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			      const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return procs_spawn("posix_spawnp", 1, pid, file, fa, attr, argv, envp);
}

/* ---- the children waited for ---- */

static void procs_note_child(pid_t pid, int status, const struct rusage *ru)
{
	struct raw_child *rec;

	if (pid <= 0 || !(WIFEXITED(status) || WIFSIGNALED(status)) || writer_owner() != getpid())
		return;
	rec = writer_reserve(sizeof(*rec), WRITER_NOWAIT);
	if (rec == NULL)
		return;
	rec->pid = (uint32_t)pid;
	rec->status = (uint32_t)status;
	rec->time_ns = preload_now();
	rec->cpu_ns = ru != NULL ? (uint64_t)ru->ru_utime.tv_sec * 1000000000ull +
					   (uint64_t)ru->ru_utime.tv_usec * 1000u +
					   (uint64_t)ru->ru_stime.tv_sec * 1000000000ull +
					   (uint64_t)ru->ru_stime.tv_usec * 1000u
				 : RAW_UNKNOWN;
	writer_publish(rec, RAW_CHILD, sizeof(*rec));
}

typedef pid_t (*procs_wait4_fn)(pid_t, int *, int, struct rusage *);

/* libc's wait4.  Signal-safe once looked up: the first look-up is made by
 * the library's start (procs_init_wait below), not in a handler. */
static procs_wait4_fn procs_real_wait4(void)
{
	static procs_wait4_fn real;

	if (real == NULL)
		real = (procs_wait4_fn)dlsym(RTLD_NEXT, "wait4");
	return real;
}

__attribute__((constructor)) static void procs_init_wait(void)
{
	procs_real_wait4();
}

PROCS_EXPORT pid_t wait4(pid_t pid, int *wstatus, int options, struct rusage *ru)
{
	procs_wait4_fn real = procs_real_wait4();
	struct rusage own;
	int status = 0;
	pid_t got;

	if (real == NULL) {
		errno = ENOSYS;
		return -1;
	}
	got = real(pid, &status, options, ru != NULL ? ru : &own);
	if (got > 0) {
		int saved_errno = errno;

		procs_note_child(got, status, ru != NULL ? ru : &own);
		errno = saved_errno;
		if (wstatus != NULL)
			*wstatus = status;
	}
	return got;
}

PROCS_EXPORT pid_t wait3(int *wstatus, int options, struct rusage *ru)
{
	return wait4(-1, wstatus, options, ru);
}

PROCS_EXPORT pid_t waitpid(pid_t pid, int *wstatus, int options)
{
	return wait4(pid, wstatus, options, NULL);
}

PROCS_EXPORT pid_t wait(int *wstatus)
{
	return wait4(-1, wstatus, 0, NULL);
}

/* _exit and _Exit end the image without its destructors: the host writes
 * the end of the trace (its threads' CPU time and the end record, as the
 * destructor would), and a staged trace (writer.c), in memory, is appended
 * to the run's file of short images, or the process would leave nothing.
 * (exit ends through the destructors, and its own _exit is libc's, not
 * this one.)  The end is the system call libc's makes: nothing to look
 * up, in a vfork child too. */
__attribute__((noreturn)) static void procs_leave(int status)
{
	if (preload_host.quick_end != NULL && getpid() == writer_owner())
		preload_host.quick_end();
	writer_flush_staged(1);
	for (;;)
		syscall(SYS_exit_group, status);
}

PROCS_EXPORT void _exit(int status)
{
	procs_leave(status);
}

PROCS_EXPORT void _Exit(int status)
{
	procs_leave(status);
}
