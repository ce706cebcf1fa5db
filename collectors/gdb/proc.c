/* proc.c - collect-gdb's child processes
 *
 * The program collect-gdb starts (it lets gdb attach under Yama's
 * ptrace_scope=1), and the helpers it runs: gdb and eu-stack, each with its
 * stdout and stderr read through pipes, in a process group of its own so
 * that a ^C stays collect-gdb's, ended with SIGTERM then SIGKILL when it
 * does not finish.  Also what /proc says about the target: whether it is
 * alive, who traces it, its threads' names, and why attaching was refused.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "proc.h"

/* Is cmd runnable (a path, or found in PATH)?  full gets the path. */
bool proc_find_command(const char *cmd, char *full, size_t n)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/')) {
		snprintf(full, n, "%s", cmd);
		return access(cmd, X_OK) == 0;
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t len = colon ? (size_t)(colon - path) : strlen(path);
		snprintf(full, n, "%.*s/%s", (int)len, len ? path : ".", cmd);
		if (access(full, X_OK) == 0)
			return true;
		path += len + (colon != NULL);
	}
	return false;
}

/* The state letter of /proc/PID/stat, or 0 when there is no such process. */
char proc_state(pid_t pid)
{
	char path[64], buf[512];
	size_t n;
	FILE *f;
	char *rp;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	/* "PID (COMM) S ...": the name may hold spaces, parentheses, even a
	 * newline */
	rp = strrchr(buf, ')');
	return rp && rp[1] == ' ' && rp[2] ? rp[2] : '?';
}

/* 1 alive, 0 gone (or a zombie). */
int proc_target_alive(struct cg_state *st)
{
	char state;

	if (st->child) {
		if (!st->child_reaped) {
			pid_t r = waitpid(st->pid, &st->child_status, WNOHANG);
			if (r == st->pid)
				st->child_reaped = true;
		}
		return !st->child_reaped;
	}
	if (kill(st->pid, 0) < 0 && errno == ESRCH)
		return 0;
	state = proc_state(st->pid);
	return state != 0 && state != 'Z' && state != 'X';
}

/* How many threads the process has (entries of /proc/PID/task), 0 if
 * unknown. */
unsigned proc_count_threads(pid_t pid)
{
	char path[64];
	struct dirent *d;
	unsigned n = 0;
	DIR *dir;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir)) != NULL)
		if (d->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

/* A SIGCONT sent to a traced process waits in its pending sets (a tracer
 * sees every signal) and has already ended the job-control stop. */
bool proc_sigcont_pending(pid_t pid)
{
	char path[64], line[256];
	unsigned long long mask, bit = 1ULL << (SIGCONT - 1);
	bool pending = false;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof line, f))
		if ((sscanf(line, "SigPnd: %llx", &mask) == 1 || sscanf(line, "ShdPnd: %llx", &mask) == 1) &&
		    (mask & bit))
			pending = true;
	fclose(f);
	return pending;
}

/* After the dumper has let go of the target, or was ended: a target that
 * was stopped before is stopped again (the kernel restores a job-control
 * stop when the tracer detaches or dies; this makes sure of it), any other
 * gets a SIGCONT in case a stop meant for the dumper was left pending. */
void proc_leave_target(struct cg_state *st, bool clean)
{
	if (!proc_target_alive(st))
		return;
	if (st->was_stopped)
		kill(st->pid, SIGSTOP);
	else if (!clean)
		kill(st->pid, SIGCONT);
}

/* How the target is left, for messages. */
const char *proc_left_as(const struct cg_state *st)
{
	return st->was_stopped ? "the process was left stopped, as it was" : "the process was left running";
}

/* "TracerPid:" of a process, 0 if none or unknown. */
long proc_tracer_of(pid_t pid)
{
	char path[64], line[256];
	long tracer = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "TracerPid: %ld", &tracer) == 1)
			break;
	fclose(f);
	return tracer;
}

void proc_read_comm(pid_t pid, pid_t tid, char *buf, size_t n)
{
	char path[96];
	FILE *f;

	if (tid)
		snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	else
		snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	buf[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)n, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* The real uid of a process from /proc/PID/status; -1 if unknown.  (The
 * files of /proc/PID belong to root when the process is not dumpable.) */
static long proc_uid_of(pid_t pid)
{
	char path[64], line[256];
	long uid = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Uid: %ld", &uid) == 1)
			break;
	fclose(f);
	return uid;
}

/* One line on why attaching was refused, with what to do. */
void proc_permission_error(struct cg_state *st)
{
	long tracer = proc_tracer_of(st->pid), uid = proc_uid_of(st->pid);
	char scope[16] = "", comm[64], path[64];
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	uid_t me = geteuid();
	int pid = (int)st->pid;
	struct stat sb;

	if (f) {
		if (fgets(scope, sizeof scope, f))
			scope[strcspn(scope, "\n")] = '\0';
		fclose(f);
	}
	/* a process that has ended (a zombie: our own child, not yet
	 * reaped) refuses a tracer too: that is no permission problem */
	if (proc_state(st->pid) == 'Z' || proc_state(st->pid) == 0) {
		cli_msg("cannot attach to process %d: it ended before gdb could attach%s", pid,
		       st->child ? " (a program shorter than gdb's start: give it more to do, or sample it with collect-timer)" : "");
		return;
	}
	if (tracer) {
		proc_read_comm((pid_t)tracer, 0, comm, sizeof comm);
		cli_msg("cannot attach to process %d: it is already traced by process %ld ('%s'); only one tracer at a time",
		       pid, tracer, comm);
		return;
	}
	if (strcmp(scope, "3") == 0) {
		cli_msg("cannot attach to process %d: ptrace is disabled until the next boot (/proc/sys/kernel/yama/ptrace_scope is 3)",
		       pid);
		return;
	}
	if (me != 0 && uid >= 0 && (uid_t)uid != me) {
		cli_msg("cannot attach to process %d: permission denied (it belongs to uid %ld, you are uid %u): run as that user or as root",
		       pid, uid, (unsigned)me);
		return;
	}
	if (strcmp(scope, "2") == 0) {
		cli_msg("cannot attach to process %d: only root may attach (/proc/sys/kernel/yama/ptrace_scope is 2): run as root",
		       pid);
		return;
	}
	/* the files of /proc/PID (not the directory) belong to root then */
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	if (me != 0 && stat(path, &sb) == 0 && sb.st_uid == 0 && uid != 0) {
		cli_msg("cannot attach to process %d: permission denied (it is not dumpable: a setuid or file-capability program, or it called prctl(PR_SET_DUMPABLE, 0)): run as root",
		       pid);
		return;
	}
	if (strcmp(scope, "1") == 0) {
		cli_msg("cannot attach to process %d: permission denied (/proc/sys/kernel/yama/ptrace_scope is 1: only a parent may trace): run as root, let collect-gdb start the program (collect-gdb -- PROGRAM), or allow it with 'echo 0 > /proc/sys/kernel/yama/ptrace_scope' as root",
		       pid);
		return;
	}
	cli_msg("cannot attach to process %d: permission denied: run as the same user or as root (in a container, ptrace may need CAP_SYS_PTRACE and a seccomp profile that allows it)",
	       pid);
}

/* Start the program to sample.  Returns an exit status on failure, else -1. */
int proc_start_program(struct cg_state *st)
{
	int fds[2], err = 0;
	pid_t pid;
	ssize_t n;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		cli_msg("cannot create a pipe: %s", strerror(errno));
		return CG_EXIT_FAIL;
	}
	pid = fork();
	if (pid < 0) {
		cli_msg("cannot fork: %s", strerror(errno));
		return CG_EXIT_FAIL;
	}
	if (pid == 0) {
		close(fds[0]);
		/* Let gdb, our other child, attach under Yama's ptrace_scope=1. */
		prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
		signal(SIGPIPE, SIG_DFL);
		execvp(st->o.argv[0], st->o.argv);
		err = errno;
		if (write(fds[1], &err, sizeof err) < 0)
			_exit(127);
		_exit(127);
	}
	close(fds[1]);
	do
		n = read(fds[0], &err, sizeof err);
	while (n < 0 && errno == EINTR);
	close(fds[0]);
	if (n == (ssize_t)sizeof err) {
		waitpid(pid, NULL, 0);
		cli_msg("cannot run '%s': %s", st->o.argv[0], strerror(err));
		return err == ENOENT ? CG_EXIT_NOTFOUND : CG_EXIT_NOEXEC;
	}
	st->pid = pid;
	st->child = true;
	return -1;
}

/* Run argv; with_stdin gives a pipe to its stdin, else /dev/null. */
int proc_start(struct proc *pr, char *const argv[], bool with_stdin)
{
	int in[2] = { -1, -1 }, out[2], err[2];

	memset(pr, 0, sizeof *pr);
	pr->in = pr->out = pr->err = -1;
	if ((with_stdin && pipe2(in, O_CLOEXEC) < 0) || pipe2(out, O_CLOEXEC) < 0 ||
	    pipe2(err, O_CLOEXEC) < 0)
		return -1;
	pr->pid = fork();
	if (pr->pid < 0)
		return -1;
	if (pr->pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		/* Out of the terminal's process group: a ^C is collect-gdb's. */
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		dup2(with_stdin ? in[0] : null, 0);
		dup2(out[1], 1);
		dup2(err[1], 2);
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (with_stdin) {
		close(in[0]);
		pr->in = in[1];
	}
	close(out[1]);
	close(err[1]);
	pr->out = out[0];
	pr->err = err[0];
	return 0;
}

/* Read what is available until deadline (monotonic ns; 0 = just what is
 * there).  Returns 1 if something came, 0 on timeout, -1 when both pipes
 * are at EOF. */
int proc_pump(struct proc *pr, int64_t deadline)
{
	for (;;) {
		struct pollfd pf[2];
		int n = 0, r, wait_ms = 0;
		bool got = false;
		char buf[65536];

		if (!pr->out_eof)
			pf[n++] = (struct pollfd){ pr->out, POLLIN, 0 };
		if (!pr->err_eof)
			pf[n++] = (struct pollfd){ pr->err, POLLIN, 0 };
		if (n == 0)
			return -1;
		if (deadline) {
			int64_t left = deadline - cg_now_ns(CLOCK_MONOTONIC);
			wait_ms = left <= 0 ? 0 : (int)((left + 999999) / 1000000);
		}
		r = poll(pf, (nfds_t)n, wait_ms);
		if (r < 0 && errno == EINTR) {
			if (cg_stop_signal)
				return 0;
			continue;
		}
		if (r <= 0)
			return 0;
		for (int i = 0; i < n; i++) {
			bool is_out = pf[i].fd == pr->out;
			ssize_t k;
			if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			k = read(pf[i].fd, buf, sizeof buf);
			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				*(is_out ? &pr->out_eof : &pr->err_eof) = true;
				continue;
			}
			if (sb_add(is_out ? &pr->obuf : &pr->ebuf, buf, (size_t)k) < 0)
				cg_oom();
			got = true;
		}
		if (got)
			return 1;
	}
}

/* Wait for the helper to exit, up to grace ns; then SIGTERM, then SIGKILL,
 * each to its whole process group (a wrapper script and its gdb). */
int proc_finish(struct proc *pr, int64_t grace)
{
	int status = -1, stage = 0;
	int64_t deadline = cg_now_ns(CLOCK_MONOTONIC) + grace;

	if (pr->in >= 0) {
		close(pr->in);
		pr->in = -1;
	}
	for (;;) {
		pid_t r = waitpid(pr->pid, &status, WNOHANG);
		if (r == pr->pid || (r < 0 && errno != EINTR))
			break;
		if (cg_now_ns(CLOCK_MONOTONIC) >= deadline) {
			int sig = stage == 0 ? SIGTERM : SIGKILL;
			if (stage >= 2) {
				waitpid(pr->pid, &status, 0);
				break;
			}
			if (kill(-pr->pid, sig) < 0)
				kill(pr->pid, sig);
			stage++;
			deadline = cg_now_ns(CLOCK_MONOTONIC) + 1000000000LL;
		}
		proc_pump(pr, cg_now_ns(CLOCK_MONOTONIC) + 10000000);
	}
	if (stage > 0) {
		/* Others of the group may outlive the first: give them a second
		 * to detach, then end them. */
		int64_t until = cg_now_ns(CLOCK_MONOTONIC) + 1000000000LL;
		while (kill(-pr->pid, 0) == 0 && cg_now_ns(CLOCK_MONOTONIC) < until)
			usleep(10000);
		kill(-pr->pid, SIGKILL);
	}
	if (pr->out >= 0)
		close(pr->out);
	if (pr->err >= 0)
		close(pr->err);
	pr->out = pr->err = -1;
	return status;
}

void proc_free(struct proc *pr)
{
	free(pr->obuf.s);
	free(pr->ebuf.s);
	pr->obuf = pr->ebuf = (struct strbuf){ 0 };
}

/* The first line of "CMD --version". */
void proc_tool_version(const char *cmd, char *buf, size_t n)
{
	char *argv[] = { (char *)cmd, (char *)"--version", NULL };
	struct proc pr;

	snprintf(buf, n, "unknown");
	if (proc_start(&pr, argv, false) < 0)
		return;
	while (proc_pump(&pr, cg_now_ns(CLOCK_MONOTONIC) + 2000000000LL) > 0)
		;
	proc_finish(&pr, 1000000000LL);
	if (pr.obuf.len)
		snprintf(buf, n, "%.*s", (int)strcspn(pr.obuf.s, "\n"), pr.obuf.s);
	proc_free(&pr);
}
