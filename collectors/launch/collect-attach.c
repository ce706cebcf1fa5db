/* collect-attach.c - collect-timer -p PID: profiling a process that runs
 *
 * The trace file is made here (0600, no symlink followed; root gives it
 * to the process's user), the library loaded into the process and
 * started there (inject.c; attach.c on the library's side) with the
 * settings a launched run passes in the environment, one a line, and two
 * FIFOs it opens (attach_fifos): its lines come back on one and are said
 * here; when
 * we close the other (--duration, ^C, SIGINT, SIGTERM, SIGHUP, or our
 * end), it ends the trace and leaves the process as it was, then closes
 * its end of the first, and the trace is reported as a launched run's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "collect-attach.h"
#include "collect-env.h"
#include "collect-launch.h"
#include "collect-summary.h"
#include "collect.h"
#include "inject.h"
#include "outfile.h"
#include "raw.h"

#define ATTACH_END_WAIT_MS 10000

static volatile sig_atomic_t attach_stop;

static void attach_on_signal(int sig)
{
	(void)sig;
	attach_stop = 1;
}

static uint64_t attach_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The library's lines, as they come: said on our stderr.  Returns 0 at
 * the end of the pipe, else 1. */
static int attach_relay(int fd)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf));

	if (n == 0)
		return 0;
	if (n > 0 && write(STDERR_FILENO, buf, (size_t)n) < 0)
		return 1;
	return 1;
}

/* The name of the process's program (its comm), for the default output. */
static void attach_comm(pid_t pid, char *name, size_t cap)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	snprintf(name, cap, "process");
	f = fopen(path, "re");
	if (f != NULL) {
		if (fgets(name, (int)cap, f) != NULL)
			name[strcspn(name, "\n/")] = '\0';
		fclose(f);
	}
	if (name[0] == '\0' || name[0] == '.')
		snprintf(name, cap, "process");
}

/* Creates the trace file: -o, or profview-COMM-PID.raw, the process's
 * user's (owner: /proc/PID's stat).  0 with its name in shown and absolute
 * path in abs, or -1 said. */
static int attach_output(const struct collect_opts *o, pid_t pid, const struct stat *owner,
			 char *shown, char *abs, size_t cap)
{
	char comm[32], why[256], cwd[PATH_MAX];
	int fd;

	attach_comm(pid, comm, sizeof(comm));
	if (o->output != NULL)
		snprintf(shown, cap, "%s", o->output);
	else
		snprintf(shown, cap, "profview-%s-%d.raw", comm, (int)pid);
	fd = pv_outfile_open(shown, PV_OUTFILE_TRACE_MODE, PV_OUTFILE_NEW, why, sizeof(why));
	if (fd < 0) {
		cli_msg("cannot write '%s': %s", shown, why);
		return -1;
	}
	/* the process writes it: root gives it to the process's user */
	if (geteuid() == 0 && owner->st_uid != 0 && fchown(fd, owner->st_uid, owner->st_gid) != 0) {
		cli_msg("cannot give '%s' to user %d: %s", shown, (int)owner->st_uid, strerror(errno));
		close(fd);
		unlink(shown);
		return -1;
	}
	close(fd);
	if (shown[0] == '/')
		snprintf(abs, cap, "%s", shown);
	else if (getcwd(cwd, sizeof(cwd)) == NULL ||
		 snprintf(abs, cap, "%s/%s", cwd, shown) >= (int)cap) {
		cli_msg("cannot make '%s' an absolute path", shown);
		unlink(shown);
		return -1;
	}
	return 0;
}

static const char *attach_unwind(int unwind)
{
	switch (unwind) {
	case RAW_UNWIND_DWARF: return "dwarf";
	case RAW_UNWIND_FP: return "fp";
	case RAW_UNWIND_CHECK: return "check";
	default: return "cfi";
	}
}

/* The two FIFOs between us and the library: in a directory every
 * process reaches (/dev/shm, which a service's private /tmp does not
 * hide; else /tmp), new names, mode 0600, the process's user's.  ctl is
 * our end of in (read and write: the library's open never waits), whose
 * close ends the profiling; lines our end of out. */
struct attach_fifos {
	char in[PATH_MAX], out[PATH_MAX];
	int ctl, lines;
};

static int attach_fifos(const struct stat *owner, struct attach_fifos *f)
{
	const char *dir = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
	unsigned r = (unsigned)getpid() ^ (unsigned)attach_now();

	f->ctl = f->lines = -1;
	for (int tries = 0; tries < 100; tries++) {
		r = r * 1103515245u + 12345u;
		snprintf(f->in, sizeof(f->in), "%s/profview-attach-%d-%08x.in", dir, (int)getpid(), r);
		snprintf(f->out, sizeof(f->out), "%s/profview-attach-%d-%08x.out", dir, (int)getpid(), r);
		if (mkfifo(f->in, 0600) != 0)
			continue;
		if (mkfifo(f->out, 0600) == 0)
			break;
		unlink(f->in);
		f->in[0] = '\0';
	}
	if (f->in[0] == '\0' || access(f->out, F_OK) != 0)
		return -1;
	if ((f->ctl = open(f->in, O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (f->lines = open(f->out, O_RDWR | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    (geteuid() == 0 && owner->st_uid != 0 &&
	     (fchown(f->ctl, owner->st_uid, owner->st_gid) != 0 ||
	      fchown(f->lines, owner->st_uid, owner->st_gid) != 0))) {
		if (f->ctl >= 0)
			close(f->ctl);
		if (f->lines >= 0)
			close(f->lines);
		f->ctl = f->lines = -1;
		unlink(f->in);
		unlink(f->out);
		return -1;
	}
	return 0;
}

/* Once the library has its ends: ours of out only reads (so that its
 * close is the end of the pipe), and the names go. */
static void attach_fifos_opened(struct attach_fifos *f)
{
	int fd = open(f->out, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0) {
		close(f->lines);
		f->lines = fd;
	}
	unlink(f->in);
	unlink(f->out);
}

/* The settings, one a line (collect-env.h's names). */
static int attach_settings(const struct collect_opts *o, pid_t pid, const char *abs,
			   const struct attach_fifos *f, char *buf, size_t cap)
{
	const char *python;
	int n;

	/* the tool's own settings (--no-python), as a launched run has them
	 * in its environment */
	if (collect_tool->set_env != NULL && collect_tool->set_env(o) != 0)
		return -1;
	python = getenv(COLLECT_ENV_PYTHON);
	n = snprintf(buf, cap,
		     COLLECT_ENV_OUTPUT "=%s\n" COLLECT_ENV_PID "=%d\n" COLLECT_ENV_INHERIT "=0\n"
		     COLLECT_ENV_CONTROL "=0\n" COLLECT_ENV_FREQUENCY "=%ld\n"
		     COLLECT_ENV_UNWIND "=%s\n" COLLECT_ENV_STACK_SIZE "=%ld\n"
		     COLLECT_ENV_ENGINE "=%s\n" COLLECT_ENV_CLOCK "=%s\n" COLLECT_ENV_STATS "=%d\n"
		     COLLECT_ENV_PYTHON "=%s\n"
		     "PROFVIEW_ATTACH_IN=%s\nPROFVIEW_ATTACH_OUT=%s\n",
		     abs, (int)pid, o->frequency, attach_unwind(o->unwind), o->stack_size,
		     o->engine, o->clock, o->stats, python != NULL ? python : "1", f->in, f->out);

	return n > 0 && (size_t)n < cap ? 0 : -1;
}

/* What the library's attach function said, when not 0. */
static void attach_refused(pid_t pid, long ret)
{
	if (ret == 1)
		cli_msg("process %d is being profiled by another collect-timer -p: end that one "
			"first", (int)pid);
	else if (ret == 2)
		cli_msg("process %d could not open collect-timer's pipes in /dev/shm or /tmp: "
			"is it in another mount namespace (a container)? Run collect-timer there",
			(int)pid);
	else if (ret > 0)
		cli_msg("profiling could not start in process %d (the line above says why)",
			(int)pid);
}

/* Waits for the end (duration, a signal, the process's end), relaying the
 * library's lines; then ends the profiling and waits for the library. */
static void attach_wait(const struct collect_opts *o, pid_t pid, int lines, int *ctl)
{
	uint64_t start = attach_now(), end = o->duration > 0 ? start + (uint64_t)(o->duration * 1e9) : 0;
	struct pollfd p = { lines, POLLIN, 0 };
	int open = 1;

	while (open && !attach_stop && (end == 0 || attach_now() < end)) {
		int ms = 200;

		if (end != 0 && (end - attach_now()) / 1000000 < 200)
			ms = (int)((end - attach_now()) / 1000000) + 1;
		if (poll(&p, 1, ms) > 0)
			open = attach_relay(lines);
	}
	/* the library's end of the pipe closed by itself: the process ended */
	if (!open && !o->quiet)
		cli_msg("process %d ended after %.1f s of profiling", (int)pid,
			(attach_now() - start) / 1e9);
	close(*ctl);
	*ctl = -1;
	end = attach_now() + ATTACH_END_WAIT_MS * 1000000ull;
	while (open && attach_now() < end) {
		if (poll(&p, 1, ATTACH_END_WAIT_MS) > 0)
			open = attach_relay(lines);
	}
	if (open)
		cli_msg("the profiled process did not say it ended profiling in %d s; the trace "
			"may be incomplete", ATTACH_END_WAIT_MS / 1000);
}

int collect_attach(struct collect_opts *o, pid_t pid)
{
	char lib[PATH_MAX], shown[PATH_MAX], abs[PATH_MAX], settings[4 * PATH_MAX + 1024], path[64];
	struct attach_fifos f;
	int rc = COLLECT_EXIT_FAIL;
	struct sigaction sa;
	struct stat owner;
	uint64_t stopped = 0, t0;
	long ret = -1;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (inject_check(pid) != 0 || stat(path, &owner) != 0 ||
	    collect_find_preload(lib, sizeof(lib)) != 0 ||
	    attach_output(o, pid, &owner, shown, abs, sizeof(shown)) != 0)
		return COLLECT_EXIT_FAIL;
	if (attach_fifos(&owner, &f) != 0) {
		cli_msg("cannot make a FIFO in /dev/shm or /tmp: %s", strerror(errno));
		unlink(shown);
		return COLLECT_EXIT_FAIL;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = attach_on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	t0 = attach_now();
	if (attach_settings(o, pid, abs, &f, settings, sizeof(settings)) != 0) {
		cli_msg("the path '%s' is too long", abs);
		goto out;
	}
	if (inject_call(pid, lib, "profview_timer_attach", settings, &ret, &stopped) != 0)
		goto out;
	attach_fifos_opened(&f);
	if (ret != 0) {
		struct pollfd p = { f.lines, POLLIN, 0 };

		/* its lines, until it closes its end */
		while (poll(&p, 1, ATTACH_END_WAIT_MS) > 0 && attach_relay(f.lines))
			;
		attach_refused(pid, ret);
		goto out;
	}
	if (!o->quiet)
		cli_msg("attached to process %d (stopped one thread for %.3f ms); profiling %s",
			(int)pid, stopped / 1e6,
			o->duration > 0 ? "for --duration" : "until ^C");
	attach_wait(o, pid, f.lines, &f.ctl);
	collect_report(shown, pid, t0, 0, o->quiet, o->verbose, NULL, NULL);
	rc = 0;
out:
	if (f.ctl >= 0)
		close(f.ctl);
	close(f.lines);
	unlink(f.in);
	unlink(f.out);
	if (rc != 0)
		unlink(shown);
	return rc;
}
