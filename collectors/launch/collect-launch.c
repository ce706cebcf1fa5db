/* collect-launch.c - starting the program under the preload library (see
 * collect-launch.h)
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "collect-env.h"
#include "cli.h"
#include "collect-launch.h"
#include "collect.h"
#include "elfsym.h"
#include "outfile.h"
#include "raw.h"

#ifndef PROFVIEW_PKGLIBDIR
#define PROFVIEW_PKGLIBDIR "/usr/local/lib/profview"
#endif
#ifndef PROFVIEW_PKGLIBDIR_FROM_BIN
#define PROFVIEW_PKGLIBDIR_FROM_BIN ""
#endif

/* Finds the program the way a shell would.  Returns 0, 126 or 127. */
int collect_resolve(const char *name, char *out, size_t cap)
{
	const char *path = getenv("PATH"), *p, *colon;
	struct stat st;
	int denied = 0;
	char defpath[256];

	if (strchr(name, '/') != NULL) {
		if (stat(name, &st) != 0) {
			cli_msg("cannot run '%s': %s", name, strerror(errno));
			return errno == ENOENT ? COLLECT_EXIT_NOTFOUND : COLLECT_EXIT_NOEXEC;
		}
		if (S_ISDIR(st.st_mode) || access(name, X_OK) != 0) {
			cli_msg("cannot run '%s': %s", name,
				    S_ISDIR(st.st_mode) ? "is a directory" : strerror(errno));
			return COLLECT_EXIT_NOEXEC;
		}
		snprintf(out, cap, "%s", name);
		return 0;
	}
	if (path == NULL) {
		confstr(_CS_PATH, defpath, sizeof(defpath));
		path = defpath;
	}
	for (p = path;; p = colon + 1) {
		size_t len;

		colon = strchr(p, ':');
		len = colon != NULL ? (size_t)(colon - p) : strlen(p);
		if (len == 0)
			snprintf(out, cap, "%s", name);
		else
			snprintf(out, cap, "%.*s/%s", (int)len, p, name);
		if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(out, X_OK) == 0)
				return 0;
			denied = 1;
		}
		if (colon == NULL)
			break;
	}
	if (denied) {
		cli_msg("cannot run '%s': permission denied", name);
		return COLLECT_EXIT_NOEXEC;
	}
	cli_msg("'%s': command not found", name);
	return COLLECT_EXIT_NOTFOUND;
}

/* Refuses programs for which the dynamic loader would ignore LD_PRELOAD or
 * could not load a 64-bit library.  Returns 0 or -1 (message printed). */
int collect_check_binary(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	struct stat st;
	int fd, interp = 0, rc = -1;

	if (stat(path, &st) != 0)
		return 0;
	if (st.st_mode & (S_ISUID | S_ISGID)) {
		cli_msg("'%s' is set-user-ID or set-group-ID: the dynamic loader ignores "
			    "LD_PRELOAD for it; profile a copy without that bit", path);
		return -1;
	}
	if (geteuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0) {
		cli_msg("'%s' has file capabilities: the dynamic loader ignores LD_PRELOAD "
			    "for it; profile a copy without them", path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0; /* exec will say why */
	if (pread(fd, &eh, sizeof(eh), 0) < 4 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
		rc = 0; /* a script: its interpreter is what runs */
		goto out;
	}
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) {
		cli_msg("'%s' is not an x86-64 program: %s cannot be loaded into it",
			    path, collect_tool->library);
		goto out;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP)
			interp = 1;
	}
	if (!interp) {
		cli_msg("'%s' is statically linked: LD_PRELOAD cannot work there; "
			    "link it dynamically (without -static) to profile it", path);
		goto out;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

int collect_own_allocator(const char *path)
{
	return collect_tool->misses_own_malloc && pv_elf_defines(path, "malloc") == 1;
}

/* Finds the preload library: $PROFVIEW_PRELOAD, next to this executable (a
 * build tree), where the install puts it relative to this executable (an
 * installed tree, moved or not), or the install directory.  Returns 0 or -1
 * (message printed). */
int collect_find_preload(char *out, size_t cap)
{
	const char *env = getenv("PROFVIEW_PRELOAD");
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (env != NULL && env[0] != '\0') {
		if (env[0] != '/' || access(env, R_OK) != 0) {
			cli_msg("PROFVIEW_PRELOAD='%s' is not a readable absolute path", env);
			return -1;
		}
		snprintf(out, cap, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash != NULL) {
			*slash = '\0';
			if (snprintf(out, cap, "%s/%s", self, collect_tool->library) < (int)cap &&
			    access(out, R_OK) == 0)
				return 0;
			if (PROFVIEW_PKGLIBDIR_FROM_BIN[0] &&
			    snprintf(out, cap, "%s/%s/%s", self, PROFVIEW_PKGLIBDIR_FROM_BIN,
				     collect_tool->library) <
				    (int)cap &&
			    access(out, R_OK) == 0)
				return 0;
		}
	}
	snprintf(out, cap, "%s/%s", PROFVIEW_PKGLIBDIR, collect_tool->library);
	if (access(out, R_OK) == 0)
		return 0;
	cli_msg("cannot find %s next to %s or in %s; set PROFVIEW_PRELOAD",
		    collect_tool->library, collect_tool->name, PROFVIEW_PKGLIBDIR);
	return -1;
}

/* Makes path absolute (relative to the current directory). */
static int collect_absolute(const char *path, char *out, size_t cap)
{
	char cwd[PATH_MAX];

	if (path[0] == '/')
		return snprintf(out, cap, "%s", path) < (int)cap ? 0 : -1;
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return -1;
	return snprintf(out, cap, "%s/%s", cwd, path) < (int)cap ? 0 : -1;
}

/* Is path the file st names (by any name)? */
static int collect_same_file(const char *path, const struct stat *st)
{
	struct stat p;

	return path != NULL && path[0] != '\0' && stat(path, &p) == 0 && p.st_dev == st->st_dev &&
	       p.st_ino == st->st_ino;
}

/* The interpreter a script names on its "#!" line, into out; "" if none. */
static void collect_interpreter(const char *prog, char *out, size_t cap)
{
	char line[256];
	ssize_t got;
	int fd = open(prog, O_RDONLY | O_CLOEXEC);

	out[0] = '\0';
	if (fd < 0)
		return;
	got = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (got < 3 || line[0] != '#' || line[1] != '!')
		return;
	line[got] = '\0';
	char *p = line + 2 + strspn(line + 2, " \t");
	size_t len = strcspn(p, " \t\n");

	if (len > 0 && len < cap)
		snprintf(out, cap, "%.*s", (int)len, p);
}

int collect_check_output(const struct collect_opts *o, const char *prog)
{
	char interp[PATH_MAX];
	struct stat st;

	/* a new file, or one that is no file the run reads */
	if (o->output == NULL || stat(o->output, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	if (collect_same_file(prog, &st)) {
		cli_msg("cannot write the trace to '%s': it is the program to run; choose "
			    "another -o", o->output);
		return -1;
	}
	collect_interpreter(prog, interp, sizeof(interp));
	if (collect_same_file(interp, &st)) {
		cli_msg("cannot write the trace to '%s': it is the interpreter of the program "
			    "to run; choose another -o", o->output);
		return -1;
	}
	for (char *const *a = o->argv + 1; *a != NULL; a++) {
		const char *eq = strchr(*a, '=');

		/* an argument, or the value of one such as --input=FILE */
		if (collect_same_file(*a, &st) || (eq != NULL && collect_same_file(eq + 1, &st))) {
			cli_msg("cannot write the trace to '%s': the command line names it ('%s'); "
				    "choose another -o", o->output, *a);
			return -1;
		}
	}
	return 0;
}

int collect_claim_output(struct collect_opts *o)
{
	struct flock lk;
	struct stat st;
	char why[256];
	int fd;

	if (o->output == NULL)
		return 0;
	/* Another run's: it holds a lock on it while it runs.  (Opened to
	 * look only: without following a link, blocking on a FIFO or
	 * needing write access.) */
	if (lstat(o->output, &st) == 0 && S_ISREG(st.st_mode) &&
	    (fd = open(o->output, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) >= 0) {
		memset(&lk, 0, sizeof(lk));
		lk.l_type = F_WRLCK;
		lk.l_whence = SEEK_SET;
		if (fcntl(fd, F_OFD_GETLK, &lk) == 0 && lk.l_type != F_UNLCK) {
			close(fd);
			cli_msg("cannot write the trace to '%s': another run is writing it; "
				    "choose another -o", o->output);
			return -1;
		}
		close(fd);
	}
	/* A new file, even in place of an old trace, that only its owner
	 * reads; held, locked, until we end. */
	fd = pv_outfile_open(o->output, PV_OUTFILE_TRACE_MODE, PV_OUTFILE_NEW, why, sizeof(why));
	if (fd < 0) {
		cli_msg("cannot write '%s': %s", o->output, why);
		return -1;
	}
	memset(&lk, 0, sizeof(lk));
	lk.l_type = F_WRLCK;
	lk.l_whence = SEEK_SET;
	fcntl(fd, F_OFD_SETLK, &lk); /* a file system without locks: unguarded */
	o->output_held = 1;
	return 0;
}

/* In the child: creates the empty trace file the library will fill (or,
 * with -o, checks that main's is still there).  Returns 0 with the display name in shown and the absolute one in abs. */
static int collect_create_output(const struct collect_opts *o, char *shown, char *abs,
				 size_t cap)
{
	const char *base = strrchr(o->argv[0], '/');
	char why[256];
	int fd = -1;

	base = base != NULL ? base + 1 : o->argv[0];
	if (o->output != NULL) {
		/* made by main, or a new file here */
		snprintf(shown, cap, "%s", o->output);
		fd = o->output_held ? open(o->output, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
				    : pv_outfile_open(o->output, PV_OUTFILE_TRACE_MODE, PV_OUTFILE_NEW,
						      why, sizeof(why));
		if (fd < 0) {
			cli_msg("cannot write '%s': %s", shown,
				    o->output_held ? strerror(errno) : why);
			return -1;
		}
	} else {
		for (int n = 0; n < 1000; n++) {
			if (n == 0)
				snprintf(shown, cap, "profview-%s-%d.raw", base, (int)getpid());
			else
				snprintf(shown, cap, "profview-%s-%d-%d.raw", base, (int)getpid(), n);
			fd = open(shown, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, PV_OUTFILE_TRACE_MODE);
			if (fd >= 0 || errno != EEXIST)
				break;
		}
		if (fd < 0) {
			cli_msg("cannot create '%s': %s", shown, strerror(errno));
			return -1;
		}
	}
	close(fd);
	if (collect_absolute(shown, abs, cap) != 0) {
		cli_msg("cannot make '%s' an absolute path", shown);
		unlink(shown);
		return -1;
	}
	return 0;
}

/* The PROFVIEW_UNWIND name of a mode. */
static const char *collect_unwind_name(int unwind)
{
	switch (unwind) {
	case RAW_UNWIND_FP: return "fp";
	case RAW_UNWIND_DWARF: return "dwarf";
	case RAW_UNWIND_CHECK: return "check";
	default: return "cfi";
	}
}

/* The run's file of short process images (raw.h, struct raw_short), made
 * empty next to the trace and named to the library: the processes that
 * end without a sample append their traces to it instead of creating
 * files.  None with --split (the traces are read as they are written) or
 * --no-inherit; without it each process makes a file, as it would.
 * Returns 0 or -1 (the environment). */
static int collect_short_env(const struct collect_opts *o, const char *abs)
{
	char path[PATH_MAX];
	int fd;

	unsetenv(COLLECT_ENV_SHORT);
	if (o->split > 0 || o->no_inherit || collect_env_short_path(abs, path, sizeof(path)) != 0)
		return 0;
	/* a stale one (a run killed before its end) goes */
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, PV_OUTFILE_TRACE_MODE);
	if (fd < 0)
		return 0;
	close(fd);
	return setenv(COLLECT_ENV_SHORT, path, 1);
}

/* PROFVIEW_BOOT_ID: the boot's id, read here once rather than by each
 * process image of the run (the library checks its form, and reads the
 * file itself without it).  Returns 0 or -1. */
static int collect_setenv_boot(void)
{
	char id[64] = "";
	ssize_t n = -1;
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, id, sizeof(id) - 1);
		close(fd);
	}
	id[n > 0 ? n : 0] = '\0';
	id[strcspn(id, "\n")] = '\0';
	if (id[0] == '\0') {
		unsetenv(COLLECT_ENV_BOOT_ID);
		return 0;
	}
	return setenv(COLLECT_ENV_BOOT_ID, id, 1);
}

/* Sets the environment of the program.  Returns 0 or -1. */
static int collect_setenv(const struct collect_opts *o, const char *lib, const char *abs)
{
	const char *old = getenv("LD_PRELOAD");
	unsigned long long now;
	struct timespec ts;
	char num[32], *preload;
	size_t len = strlen(lib) + (old != NULL ? strlen(old) + 2 : 1);
	int rc;

	preload = malloc(len);
	if (preload == NULL)
		return -1;
	if (old != NULL && old[0] != '\0')
		snprintf(preload, len, "%s:%s", lib, old);
	else
		snprintf(preload, len, "%s", lib);
	rc = setenv("LD_PRELOAD", preload, 1);
	free(preload);
	snprintf(num, sizeof(num), "%ld", o->frequency);
	rc |= setenv(COLLECT_ENV_FREQUENCY, num, 1);
	if (collect_tool->set_env != NULL)
		rc |= collect_tool->set_env(o);
	rc |= setenv(COLLECT_ENV_OUTPUT, abs, 1);
	rc |= setenv(COLLECT_ENV_UNWIND, collect_unwind_name(o->unwind), 1);
	if (o->stats)
		rc |= setenv(COLLECT_ENV_STATS, "1", 1);
	else
		unsetenv(COLLECT_ENV_STATS);
	snprintf(num, sizeof(num), "%ld", o->stack_size);
	rc |= setenv(COLLECT_ENV_STACK_SIZE, num, 1);
	rc |= setenv(COLLECT_ENV_ENGINE, o->engine, 1);
	rc |= setenv(COLLECT_ENV_CLOCK, o->clock, 1);
	snprintf(num, sizeof(num), "%d", (int)getpid());
	rc |= setenv(COLLECT_ENV_PID, num, 1);
	rc |= setenv(COLLECT_ENV_INHERIT, o->no_inherit ? "0" : "1", 1);
	rc |= collect_setenv_boot();
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
	/* --duration counts from the end of --delay */
	if (o->duration > 0) {
		snprintf(num, sizeof(num), "%llu",
			 now + (unsigned long long)((o->delay + o->duration) * 1e9));
		rc |= setenv(COLLECT_ENV_STOP_NS, num, 1);
	} else {
		unsetenv(COLLECT_ENV_STOP_NS);
	}
	if (o->delay > 0) {
		snprintf(num, sizeof(num), "%llu", now + (unsigned long long)(o->delay * 1e9));
		rc |= setenv(COLLECT_ENV_START_NS, num, 1);
	} else {
		unsetenv(COLLECT_ENV_START_NS);
	}
	snprintf(num, sizeof(num), "%d", o->control);
	rc |= setenv(COLLECT_ENV_CONTROL, num, 1);
	if (o->word[0] != '\0')
		rc |= setenv(COLLECT_ENV_CONTROL_WORD, o->word, 1);
	else
		unsetenv(COLLECT_ENV_CONTROL_WORD);
	if (o->held)
		rc |= setenv(COLLECT_ENV_HELD, "1", 1);
	else
		unsetenv(COLLECT_ENV_HELD);
	if (o->split > 0)
		rc |= setenv(COLLECT_ENV_SPLIT, "1", 1);
	else
		unsetenv(COLLECT_ENV_SPLIT);
	rc |= collect_short_env(o, abs);
	return rc;
}

/* Child side: create the output, set the environment, tell the parent the
 * file name through the pipe, exec.  Never returns. */
void collect_child(const struct collect_opts *o, const char *prog, const char *lib,
			  int pipefd)
{
	char shown[PATH_MAX], abs[PATH_MAX];
	int err;

	if (collect_create_output(o, shown, abs, sizeof(shown)) != 0)
		_exit(COLLECT_EXIT_FAIL);
	if (collect_setenv(o, lib, abs) != 0) {
		cli_msg("cannot set the environment: %s", strerror(errno));
		unlink(shown);
		_exit(COLLECT_EXIT_FAIL);
	}
	if (write(pipefd, shown, strlen(shown) + 1) < 0)
		_exit(COLLECT_EXIT_FAIL);
	execv(prog, o->argv);
	err = errno;
	cli_msg("cannot run '%s': %s", prog, strerror(err));
	if (write(pipefd, "X", 1) < 0)
		_exit(COLLECT_EXIT_FAIL);
	_exit(err == ENOENT ? COLLECT_EXIT_NOTFOUND : COLLECT_EXIT_NOEXEC);
}
