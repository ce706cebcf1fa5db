/* collect-attach.c - collect-timer -p PID, collect-heap -p PID: profiling
 * a process that runs
 *
 * What tells the tools apart is their struct collect_attach_desc
 * (collect.h): the library's attach function and the tool's settings.
 * The trace file is made here (0600, no symlink followed; root gives it
 * to the process's user), the library loaded into the process and
 * started there (inject.c; attach.c on the library's side) with the
 * settings a launched run passes in the environment, one a line, and two
 * FIFOs it opens (attach_fifos): its lines come back on one and are said
 * here; when
 * we close the other (--duration, ^C, SIGINT, SIGTERM, SIGHUP, or our
 * end), it ends the trace and leaves the process as it was, then closes
 * its end of the first, and the trace is reported as a launched run's.
 * Several processes (-p PID,PID..., --all-matching=NAME) are each
 * attached to on their own, one failing said and the others kept on,
 * their traces named and joined as a launched run's processes' are.
 */
#include <dirent.h>
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
#define ATTACH_THREADS_WAIT_MS 2000

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

/* Creates the trace file shown, the process's user's (owner: /proc/PID's
 * stat).  0 with its absolute path in abs, or -1 said. */
static int attach_output(const char *shown, const struct stat *owner, char *abs, size_t cap)
{
	char why[256], cwd[PATH_MAX];
	int fd;

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

/* The settings, one a line (collect-env.h's names): the launcher's (the
 * trace, the process, the pipes), then the tool's (collect.h). */
static int attach_settings(const struct collect_opts *o, pid_t pid, const char *abs,
			   const struct attach_fifos *f, char *buf, size_t cap)
{
	int n = snprintf(buf, cap,
			 COLLECT_ENV_OUTPUT "=%s\n" COLLECT_ENV_PID "=%d\n" COLLECT_ENV_INHERIT "=0\n"
			 COLLECT_ENV_CONTROL "=0\n"
			 "PROFVIEW_ATTACH_IN=%s\nPROFVIEW_ATTACH_OUT=%s\n",
			 abs, (int)pid, f->in, f->out);

	if (n <= 0 || (size_t)n >= cap)
		return -1;
	return collect_tool->attach->settings(o, buf + n, cap - (size_t)n) < 0 ? -1 : 0;
}

/* What the library's attach function said, when not 0. */
static void attach_refused(pid_t pid, long ret)
{
	if (ret == 1)
		cli_msg("process %d is being profiled by another %s -p: end that one first", (int)pid,
			collect_tool->name);
	else if (ret == 2)
		cli_msg("process %d could not open %s's pipes in /dev/shm or /tmp: is it in "
			"another mount namespace (a container)? Run %s there", (int)pid,
			collect_tool->name, collect_tool->name);
	else if (ret > 0)
		cli_msg("profiling could not start in process %d (the line above says why)",
			(int)pid);
}

/* One process attached to: its trace, its FIFOs, and whether the
 * library's end of its lines is still open. */
struct attach_target {
	pid_t pid;
	char shown[PATH_MAX], abs[PATH_MAX];
	struct attach_fifos f;
	int made;             /* its trace file exists */
	int on;               /* attached, its lines not ended yet */
	uint64_t ended;       /* when they ended by themselves, 0: not */
};

static int attach_pid_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return x < y ? -1 : x > y;
}

/* Is a process whose program's file name is base (" (deleted)" after it
 * when the file was replaced) and whose comm is comm named name? */
static int attach_named(const char *base, const char *comm, const char *name)
{
	size_t len = strlen(name);

	if (strncmp(base, name, len) == 0 && (base[len] == '\0' || strcmp(base + len, " (deleted)") == 0))
		return 1;
	/* (the kernel keeps 15 bytes of a comm) */
	return strlen(comm) == (len < 15 ? len : 15) && strncmp(comm, name, 15) == 0;
}

/* The processes named name (--all-matching): those whose program's file
 * name or comm (as the kernel cuts it, 15 bytes) is name, with a program
 * (no kernel thread, no zombie), this user's unless we are root, not
 * ourselves; into o->attach_pids by pid.  Returns 0, or -1 said. */
static int attach_match(struct collect_opts *o, const char *name)
{
	char path[64], exe[PATH_MAX], comm[32];
	DIR *d = opendir("/proc");
	struct dirent *e;
	int more = 0;

	if (d == NULL) {
		cli_msg("cannot read /proc: %s", strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		const char *base;
		struct stat sb;
		ssize_t len;
		FILE *f;

		if (*end != '\0' || pid <= 0 || pid == (long)getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%ld", pid);
		if (stat(path, &sb) != 0 || (geteuid() != 0 && sb.st_uid != getuid()))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
		if ((len = readlink(path, exe, sizeof(exe) - 1)) <= 0)
			continue;
		exe[len] = '\0';
		/* (" (deleted)" after a replaced program's name) */
		base = strrchr(exe, '/') != NULL ? strrchr(exe, '/') + 1 : exe;
		comm[0] = '\0';
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		if ((f = fopen(path, "re")) != NULL) {
			if (fgets(comm, sizeof(comm), f) == NULL)
				comm[0] = '\0';
			comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
		}
		if (!attach_named(base, comm, name))
			continue;
		if (o->nattach == COLLECT_ATTACH_MAX) {
			more++;
			continue;
		}
		o->attach_pids[o->nattach++] = (int)pid;
	}
	closedir(d);
	if (o->nattach == 0) {
		cli_msg("no process named '%s'%s: 'ps -e' lists them", name,
			geteuid() == 0 ? "" : " of yours");
		return -1;
	}
	if (more > 0) {
		cli_msg("%d processes are named '%s', more than the %d %s attaches to at once: "
			"give some with -p", o->nattach + more, name, COLLECT_ATTACH_MAX,
			collect_tool->name);
		return -1;
	}
	qsort(o->attach_pids, (size_t)o->nattach, sizeof(o->attach_pids[0]), attach_pid_cmp);
	return 0;
}

/* The traces' names: -o, or profview-COMM-PID.raw of the first process;
 * with several, the others' "<that without .raw>.PID.raw" next to it, as
 * a launched run's other processes' (the run file is the first name). */
static int attach_names(const struct collect_opts *o, struct attach_target *t, int n)
{
	char comm[32], stem[PATH_MAX];
	size_t len;

	attach_comm(t[0].pid, comm, sizeof(comm));
	if (o->output != NULL)
		snprintf(t[0].shown, sizeof(t[0].shown), "%s", o->output);
	else
		snprintf(t[0].shown, sizeof(t[0].shown), "profview-%s-%d.raw", comm, (int)t[0].pid);
	snprintf(stem, sizeof(stem), "%s", t[0].shown);
	len = strlen(stem);
	if (len > 4 && strcmp(stem + len - 4, ".raw") == 0)
		stem[len - 4] = '\0';
	for (int k = 1; k < n; k++)
		if (snprintf(t[k].shown, sizeof(t[k].shown), "%s.%d.raw", stem, (int)t[k].pid) >=
		    (int)sizeof(t[k].shown)) {
			cli_msg("the path '%s' is too long", t[0].shown);
			return -1;
		}
	return 0;
}

/* Makes t's trace and FIFOs and starts the library in its process.
 * Returns 0 (t->on), or -1 said, with nothing of it left. */
static int attach_start(const struct collect_opts *o, const char *lib, struct attach_target *t)
{
	char settings[4 * PATH_MAX + 1024], path[64];
	struct stat owner;
	uint64_t stopped = 0;
	long ret = -1;

	snprintf(path, sizeof(path), "/proc/%d", (int)t->pid);
	t->f.ctl = t->f.lines = -1;
	if (inject_check(t->pid) != 0 || stat(path, &owner) != 0 ||
	    attach_output(t->shown, &owner, t->abs, sizeof(t->abs)) != 0)
		return -1;
	t->made = 1;
	if (attach_fifos(&owner, &t->f) != 0) {
		cli_msg("cannot make a FIFO in /dev/shm or /tmp: %s", strerror(errno));
		goto fail;
	}
	if (attach_settings(o, t->pid, t->abs, &t->f, settings, sizeof(settings)) != 0) {
		cli_msg("the path '%s' is too long", t->abs);
		goto fail;
	}
	if (inject_call(t->pid, lib, collect_tool->attach->entry, settings, &ret, &stopped) != 0)
		goto fail;
	attach_fifos_opened(&t->f);
	if (ret != 0) {
		struct pollfd p = { t->f.lines, POLLIN, 0 };

		/* its lines, until it closes its end */
		while (poll(&p, 1, ATTACH_END_WAIT_MS) > 0 && attach_relay(t->f.lines))
			;
		attach_refused(t->pid, ret);
		goto fail;
	}
	if (!o->quiet)
		cli_msg("attached to process %d (stopped one thread for %.3f ms); profiling %s",
			(int)t->pid, stopped / 1e6,
			o->duration > 0 ? "for --duration" : "until ^C");
	/* (collect-heap: its calls to its own malloc go through no GOT) */
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->pid);
	if (collect_own_allocator(path))
		cli_msg("process %d's program defines its own malloc: its own calls to it are not "
			"seen, only the libraries' through their GOT", (int)t->pid);
	t->on = 1;
	return 0;
fail:
	if (t->f.ctl >= 0)
		close(t->f.ctl);
	if (t->f.lines >= 0)
		close(t->f.lines);
	t->f.ctl = t->f.lines = -1;
	if (t->f.in[0] != '\0')
		unlink(t->f.in);
	if (t->f.out[0] != '\0')
		unlink(t->f.out);
	unlink(t->shown);
	t->made = 0;
	return -1;
}

/* Relays the lines of the targets on until none is (on is how many) or
 * end (0: none) or a signal; a target whose lines end is off. */
static void attach_poll(struct attach_target *t, int n, int on, uint64_t end, int stop)
{
	struct pollfd p[COLLECT_ATTACH_MAX];
	int map[COLLECT_ATTACH_MAX];

	while (on > 0 && (!stop || !attach_stop) && (end == 0 || attach_now() < end)) {
		int ms = 200, m = 0;

		if (end != 0 && (end - attach_now()) / 1000000 < 200)
			ms = (int)((end - attach_now()) / 1000000) + 1;
		for (int k = 0; k < n; k++)
			if (t[k].on) {
				p[m] = (struct pollfd){ t[k].f.lines, POLLIN, 0 };
				map[m++] = k;
			}
		if (poll(p, (nfds_t)m, ms) <= 0)
			continue;
		for (int i = 0; i < m; i++)
			if (p[i].revents != 0 && !attach_relay(p[i].fd)) {
				t[map[i]].on = 0;
				t[map[i]].ended = attach_now();
				on--;
			}
	}
}

/* Does the process still run a thread of the library's (each names
 * itself "profview-...")? */
static int attach_library_threads(pid_t pid)
{
	char path[64], comm[32];
	struct dirent *de;
	DIR *d;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if ((d = opendir(path)) == NULL)
		return 0;
	while (!found && (de = readdir(d)) != NULL) {
		ssize_t len;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/comm", (int)pid, de->d_name);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		len = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		found = len > 9 && memcmp(comm, "profview-", 9) == 0;
	}
	closedir(d);
	return found;
}

/* The library's thread that ran the end closes the channel just before
 * it returns: wait (a while at most) until every thread of the library
 * has left the processes, so that each is as it was when we end. */
static void attach_let_go(const struct attach_target *t, int n)
{
	uint64_t until = attach_now() + ATTACH_THREADS_WAIT_MS * 1000000ull;
	struct timespec step = { 0, 1000000 };

	for (int k = 0; k < n; k++)
		while (t[k].made && !t[k].on && attach_library_threads(t[k].pid) && attach_now() < until)
			nanosleep(&step, NULL);
}

/* Waits for the end (duration, a signal, the processes' ends), relaying
 * the library's lines; then ends the profiling and waits for the
 * libraries. */
static void attach_wait(const struct collect_opts *o, struct attach_target *t, int n)
{
	uint64_t start = attach_now(), end = o->duration > 0 ? start + (uint64_t)(o->duration * 1e9) : 0;
	int on = 0;

	for (int k = 0; k < n; k++)
		on += t[k].on;
	attach_poll(t, n, on, end, 1);
	/* the library's end of the pipe closed by itself: the process ended */
	on = 0;
	for (int k = 0; k < n; k++) {
		if (t[k].ended != 0 && !o->quiet)
			cli_msg("process %d ended after %.1f s of profiling", (int)t[k].pid,
				(t[k].ended - start) / 1e9);
		if (t[k].f.ctl >= 0)
			close(t[k].f.ctl);
		t[k].f.ctl = -1;
		on += t[k].on;
	}
	attach_poll(t, n, on, attach_now() + ATTACH_END_WAIT_MS * 1000000ull, 0);
	for (int k = 0; k < n; k++)
		if (t[k].on)
			cli_msg("process %d did not say it ended profiling in %d s; its trace "
				"may be incomplete", (int)t[k].pid, ATTACH_END_WAIT_MS / 1000);
	attach_let_go(t, n);
}

/* The run's report: one process's trace as a launched one's; several in
 * one run file named as the first (the first attached to, moved there
 * when the first given could not be).  Returns 0 or -1. */
static int attach_report(const struct collect_opts *o, struct attach_target *t, int n, uint64_t t0)
{
	char (*names)[PATH_MAX] = calloc((size_t)n, sizeof(*names));
	size_t m = 0;
	int first = -1;

	if (names == NULL) {
		cli_msg("out of memory: the traces are left as they are");
		return -1;
	}
	for (int k = 0; k < n; k++)
		if (t[k].made) {
			if (first < 0)
				first = k;
			snprintf(names[m++], PATH_MAX, "%s", t[k].shown);
		}
	if (first > 0 && rename(t[first].shown, t[0].shown) != 0) {
		cli_msg("cannot rename '%s' to '%s': %s", t[first].shown, t[0].shown, strerror(errno));
		free(names);
		return -1;
	}
	if (n == 1)
		collect_report(t[0].shown, t[0].pid, t0, 0, o->quiet, o->verbose, NULL, NULL);
	else if (m > 0)
		collect_report_list(t[0].shown, names, m, o->quiet, o->verbose);
	free(names);
	return 0;
}

int collect_attach(struct collect_opts *o)
{
	char lib[PATH_MAX];
	struct attach_target *t;
	struct sigaction sa;
	int n, failed = 0, on = 0;
	uint64_t t0;

	if (o->attach_name != NULL && attach_match(o, o->attach_name) != 0)
		return COLLECT_EXIT_FAIL;
	n = o->nattach;
	if (collect_find_preload(lib, sizeof(lib)) != 0)
		return COLLECT_EXIT_FAIL;
	if ((t = calloc((size_t)n, sizeof(*t))) == NULL) {
		cli_msg("out of memory");
		return COLLECT_EXIT_FAIL;
	}
	for (int k = 0; k < n; k++)
		t[k].pid = (pid_t)o->attach_pids[k];
	if (attach_names(o, t, n) != 0) {
		free(t);
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
	/* each on its own: one that cannot be is said, the others go on */
	for (int k = 0; k < n && !attach_stop; k++) {
		if (attach_start(o, lib, &t[k]) != 0)
			failed++;
		on += t[k].on;
	}
	if (on > 0) {
		attach_wait(o, t, n);
		if (attach_report(o, t, n, t0) != 0)
			failed++;
	}
	if (n > 1 && failed > 0)
		cli_msg("%d of the %d processes could not be profiled (said above)", failed, n);
	for (int k = 0; k < n; k++)
		if (t[k].f.lines >= 0)
			close(t[k].f.lines);
	free(t);
	return failed > 0 || on == 0 ? COLLECT_EXIT_FAIL : 0;
}
