/* collect-gdb.c - sample a process's threads with gdb (or eu-stack)
 *
 * collect-gdb [options] -p PID
 * collect-gdb [options] [--] program [args...]
 *
 * Every interval, all threads' backtraces are dumped and appended to a text
 * trace (profview-gdb(5)): a header, then "# snapshot:" marks each followed
 * by gdb's own "thread apply all bt" text.  Three dumpers:
 *   persistent  one gdb/MI session stays attached; each snapshot interrupts
 *               the target, runs "thread apply all bt" and continues it
 *   batch       a new "gdb -batch -p PID" per snapshot
 *   eu-stack    elfutils' eu-stack per snapshot, its output rewritten in
 *               gdb's form
 * The collector parses nothing of the backtraces; it only keeps gdb's
 * chatter ("[New LWP ...]") out of the trace.
 *
 * Exit status: 0 when sampling ended normally (count, duration, SIGINT, or
 * the target exited) or, with a program to run, the program's own status;
 * 1 when collection failed (what was collected is kept); 2 for a usage
 * error; 126/127 when the program cannot be executed / is not found.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
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

#ifndef PROFVIEW_VERSION
#define PROFVIEW_VERSION "unknown"
#endif

#define CG_DEFAULT_INTERVAL_NS 100000000LL   /* 0.1 s */
#define CG_DEFAULT_TIMEOUT_NS 10000000000LL  /* 10 s per snapshot */
#define CG_EXIT_FAIL 1
#define CG_EXIT_USAGE 2
#define CG_EXIT_NOEXEC 126
#define CG_EXIT_NOTFOUND 127

enum cg_mode { MODE_PERSISTENT, MODE_BATCH, MODE_EUSTACK };
static const char *const mode_names[] = { "persistent", "batch", "eu-stack" };

/* Why sampling ended. */
enum cg_end { END_NONE, END_COUNT, END_DURATION, END_SIGNAL, END_EXITED, END_ERROR };
static const char *const end_names[] = { "", "count", "duration", "interrupted", "exited", "error" };

struct cg_opts {
	pid_t pid;
	char **argv;            /* program to start, or NULL */
	int64_t interval_ns, duration_ns, timeout_ns;
	long long count;        /* 0: no limit */
	const char *output;
	const char *gdb;        /* gdb command */
	enum cg_mode mode;
	bool readnever, quiet;
};

struct strbuf {
	char *s;
	size_t len, cap;
};

struct cg_state {
	struct cg_opts o;
	FILE *out;
	char outname[PATH_MAX];
	pid_t pid;
	bool child;             /* we started the target */
	int child_status;
	bool child_reaped;
	long long snapshots;
	int64_t *stops; size_t nstops, cap_stops; /* ns the target was stopped */
	unsigned max_threads;
	int64_t t_begin;
	enum cg_end end;
};

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void msg(const char *fmt, ...)
{
	va_list ap;

	fputs("collect-gdb: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int sb_add(struct strbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *q;
		while (cap < b->len + n + 1)
			cap *= 2;
		q = realloc(b->s, cap);
		if (!q)
			return -1;
		b->s = q;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

static void oom(void)
{
	msg("out of memory");
	exit(CG_EXIT_FAIL);
}

/* ---- options ---- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: collect-gdb [options] -p PID\n"
		"       collect-gdb [options] [--] program [args...]\n"
		"Sample all threads' backtraces of a process with gdb, for profview.\n"
		"\n"
		"  -p, --pid=PID         sample this running process\n"
		"  -i, --interval=SEC    time between snapshots (default 0.1)\n"
		"  -n, --count=N         stop after N snapshots\n"
		"  -d, --duration=SEC    stop after SEC seconds\n"
		"  -o, --output=FILE     write the trace to FILE ('-': standard output);\n"
		"                        default profview-PROGRAM-PID.gdb\n"
		"      --mode=MODE       persistent (default): one gdb stays attached;\n"
		"                        batch: a new gdb per snapshot; eu-stack: elfutils\n"
		"      --persistent      same as --mode=persistent\n"
		"      --batch           same as --mode=batch\n"
		"      --readnever       do not read debug info: function names only, no\n"
		"                        file:line, but a faster start (and faster eu-stack)\n"
		"      --timeout=SEC     give up on a snapshot after SEC seconds (default 10)\n"
		"      --gdb=PATH        the gdb to run (default: gdb from PATH)\n"
		"  -q, --quiet           print nothing but errors\n"
		"  -h, --help            show this help\n"
		"  -V, --version         show the version\n"
		"\n"
		"Exit status: 0 when sampling ended normally (or the program's own status\n"
		"when collect-gdb started it), 1 when collection failed, 2 for a usage error.\n"
		"See collect-gdb(1) and profview-gdb(5).\n");
}

static bool parse_seconds(const char *s, double min, int64_t *ns)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < min || v > 1e6)
		return false;
	*ns = (int64_t)llround(v * 1e9);
	return true;
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("collect-gdb: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'collect-gdb --help' for more information.\n", stderr);
	return CG_EXIT_USAGE;
}

/* -1 to go on, else an exit status. */
static int parse_opts(int argc, char **argv, struct cg_opts *o)
{
	enum { OPT_MODE = 256, OPT_PERSISTENT, OPT_BATCH, OPT_READNEVER, OPT_TIMEOUT, OPT_GDB };
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "persistent", no_argument, NULL, OPT_PERSISTENT },
		{ "batch", no_argument, NULL, OPT_BATCH },
		{ "readnever", no_argument, NULL, OPT_READNEVER },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "gdb", required_argument, NULL, OPT_GDB },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	long long v;
	int c;

	o->interval_ns = CG_DEFAULT_INTERVAL_NS;
	o->timeout_ns = CG_DEFAULT_TIMEOUT_NS;
	o->gdb = "gdb";
	o->mode = MODE_PERSISTENT;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:i:n:d:o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			errno = 0;
			v = strtoll(optarg, &end, 10);
			if (errno || end == optarg || *end || v <= 0 || v > INT_MAX)
				return usage_error("invalid pid '%s'", optarg);
			o->pid = (pid_t)v;
			break;
		case 'i':
			if (!parse_seconds(optarg, 0.001, &o->interval_ns))
				return usage_error("invalid interval '%s': expected seconds, at least 0.001",
						   optarg);
			break;
		case 'n':
			errno = 0;
			v = strtoll(optarg, &end, 10);
			if (errno || end == optarg || *end || v <= 0)
				return usage_error("invalid count '%s': expected a whole number > 0", optarg);
			o->count = v;
			break;
		case 'd':
			if (!parse_seconds(optarg, 0.001, &o->duration_ns))
				return usage_error("invalid duration '%s': expected seconds, at least 0.001",
						   optarg);
			break;
		case OPT_TIMEOUT:
			if (!parse_seconds(optarg, 0.01, &o->timeout_ns))
				return usage_error("invalid timeout '%s': expected seconds, at least 0.01",
						   optarg);
			break;
		case 'o':
			if (!optarg[0])
				return usage_error("empty output file name");
			o->output = optarg;
			break;
		case OPT_MODE:
			if (strcmp(optarg, "persistent") == 0)
				o->mode = MODE_PERSISTENT;
			else if (strcmp(optarg, "batch") == 0)
				o->mode = MODE_BATCH;
			else if (strcmp(optarg, "eu-stack") == 0)
				o->mode = MODE_EUSTACK;
			else
				return usage_error("invalid mode '%s': expected persistent, batch or eu-stack",
						   optarg);
			break;
		case OPT_PERSISTENT: o->mode = MODE_PERSISTENT; break;
		case OPT_BATCH: o->mode = MODE_BATCH; break;
		case OPT_READNEVER: o->readnever = true; break;
		case OPT_GDB:
			if (!optarg[0])
				return usage_error("empty gdb path");
			o->gdb = optarg;
			break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("collect-gdb (profview) %s\n", PROFVIEW_VERSION); return 0;
		case ':': return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			if (optopt)
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		o->argv = argv + optind;
	if (o->pid && o->argv)
		return usage_error("give either -p PID or a program to run, not both");
	if (!o->pid && !o->argv)
		return usage_error("no process to sample: give -p PID or a program to run");
	return -1;
}

/* ---- processes ---- */

/* Is cmd runnable (a path, or found in PATH)?  full gets the path. */
static bool find_command(const char *cmd, char *full, size_t n)
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

/* 1 alive, 0 gone (or a zombie). */
static int target_alive(struct cg_state *st)
{
	char path[64], buf[512];
	FILE *f;
	char *rp;

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
	snprintf(path, sizeof path, "/proc/%d/stat", (int)st->pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof buf, f))
		buf[0] = '\0';
	fclose(f);
	rp = strrchr(buf, ')');
	if (rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'))
		return 0;
	return 1;
}

/* "TracerPid:" of a process, 0 if none or unknown. */
static long tracer_of(pid_t pid)
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

static void read_comm(pid_t pid, pid_t tid, char *buf, size_t n)
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

/* One line on why attaching was refused, with what to check. */
static void permission_error(struct cg_state *st)
{
	long tracer = tracer_of(st->pid);
	char scope[16] = "", comm[64];
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	struct stat sb;
	char path[64];

	if (f) {
		if (fgets(scope, sizeof scope, f))
			scope[strcspn(scope, "\n")] = '\0';
		fclose(f);
	}
	if (tracer) {
		read_comm((pid_t)tracer, 0, comm, sizeof comm);
		msg("cannot attach to process %d: it is already traced by process %ld ('%s'); only one tracer at a time",
		    (int)st->pid, tracer, comm);
		return;
	}
	snprintf(path, sizeof path, "/proc/%d", (int)st->pid);
	if (stat(path, &sb) == 0 && sb.st_uid != geteuid() && geteuid() != 0) {
		msg("cannot attach to process %d: permission denied (it belongs to uid %u, you are uid %u: run as that user or with CAP_SYS_PTRACE)",
		    (int)st->pid, (unsigned)sb.st_uid, (unsigned)geteuid());
		return;
	}
	msg("cannot attach to process %d: permission denied (check /proc/sys/kernel/yama/ptrace_scope%s%s%s, CAP_SYS_PTRACE, and that no other debugger is attached)",
	    (int)st->pid, scope[0] ? " = " : "", scope, scope[0] && strcmp(scope, "0") ? ": 0 lets a user trace its own processes" : "");
}

/* Start the program to sample.  Returns an exit status on failure, else -1. */
static int start_program(struct cg_state *st)
{
	int fds[2], err = 0;
	pid_t pid;
	ssize_t n;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		msg("cannot create a pipe: %s", strerror(errno));
		return CG_EXIT_FAIL;
	}
	pid = fork();
	if (pid < 0) {
		msg("cannot fork: %s", strerror(errno));
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
		msg("cannot run '%s': %s", st->o.argv[0], strerror(err));
		return err == ENOENT ? CG_EXIT_NOTFOUND : CG_EXIT_NOEXEC;
	}
	st->pid = pid;
	st->child = true;
	return -1;
}

/* A helper process with its stdout (and stderr) on pipes. */
struct proc {
	pid_t pid;
	int in, out, err;       /* -1 when not used */
	struct strbuf obuf, ebuf;
	size_t opos;            /* consumed part of obuf (line reader) */
	bool out_eof, err_eof;
};

/* Run argv; with_stdin gives a pipe to its stdin, else /dev/null. */
static int proc_start(struct proc *pr, char *const argv[], bool with_stdin)
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
static int proc_pump(struct proc *pr, int64_t deadline)
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
			int64_t left = deadline - now_ns(CLOCK_MONOTONIC);
			wait_ms = left <= 0 ? 0 : (int)((left + 999999) / 1000000);
		}
		r = poll(pf, (nfds_t)n, wait_ms);
		if (r < 0 && errno == EINTR) {
			if (stop_signal)
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
				oom();
			got = true;
		}
		if (got)
			return 1;
	}
}

/* Wait for the helper to exit, up to grace ns; then SIGTERM, then SIGKILL,
 * each to its whole process group (a wrapper script and its gdb). */
static int proc_finish(struct proc *pr, int64_t grace)
{
	int status = -1, stage = 0;
	int64_t deadline = now_ns(CLOCK_MONOTONIC) + grace;

	if (pr->in >= 0) {
		close(pr->in);
		pr->in = -1;
	}
	for (;;) {
		pid_t r = waitpid(pr->pid, &status, WNOHANG);
		if (r == pr->pid || (r < 0 && errno != EINTR))
			break;
		if (now_ns(CLOCK_MONOTONIC) >= deadline) {
			int sig = stage == 0 ? SIGTERM : SIGKILL;
			if (stage >= 2) {
				waitpid(pr->pid, &status, 0);
				break;
			}
			if (kill(-pr->pid, sig) < 0)
				kill(pr->pid, sig);
			stage++;
			deadline = now_ns(CLOCK_MONOTONIC) + 1000000000LL;
		}
		proc_pump(pr, now_ns(CLOCK_MONOTONIC) + 10000000);
	}
	if (stage > 0) {
		/* Others of the group may outlive the first: give them a second
		 * to detach, then end them. */
		int64_t until = now_ns(CLOCK_MONOTONIC) + 1000000000LL;
		while (kill(-pr->pid, 0) == 0 && now_ns(CLOCK_MONOTONIC) < until)
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

static void proc_free(struct proc *pr)
{
	free(pr->obuf.s);
	free(pr->ebuf.s);
	pr->obuf = pr->ebuf = (struct strbuf){ 0 };
}

/* The first line of "CMD --version". */
static void tool_version(const char *cmd, char *buf, size_t n)
{
	char *argv[] = { (char *)cmd, (char *)"--version", NULL };
	struct proc pr;

	snprintf(buf, n, "unknown");
	if (proc_start(&pr, argv, false) < 0)
		return;
	while (proc_pump(&pr, now_ns(CLOCK_MONOTONIC) + 2000000000LL) > 0)
		;
	proc_finish(&pr, 1000000000LL);
	if (pr.obuf.len)
		snprintf(buf, n, "%.*s", (int)strcspn(pr.obuf.s, "\n"), pr.obuf.s);
	proc_free(&pr);
}

/* ---- the trace ---- */

static void write_time(FILE *f, int64_t ns)
{
	fprintf(f, "%" PRId64 ".%09" PRId64, ns / (int64_t)1000000000, ns % (int64_t)1000000000);
}

static bool is_bt_line(const char *s, size_t n)
{
	if (n == 0)
		return true;
	if (s[0] == '#')
		return n > 1 && isdigit((unsigned char)s[1]);
	return s[0] == ' ' || s[0] == '\t' ||
	       (n > 7 && memcmp(s, "Thread ", 7) == 0 && isdigit((unsigned char)s[7])) ||
	       (n > 17 && memcmp(s, "Backtrace stopped", 17) == 0) ||
	       (n > 25 && memcmp(s, "(More stack frames follow", 25) == 0);
}

/* Write one snapshot: the backtrace lines of text, nothing else.  Returns
 * how many thread headers it held. */
static unsigned write_snapshot(struct cg_state *st, const char *text, size_t len, int64_t t_real)
{
	unsigned threads = 0;
	bool started = false;

	st->snapshots++;
	fprintf(st->out, "# snapshot: %lld ", st->snapshots);
	write_time(st->out, t_real);
	fputc('\n', st->out);
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = (nl ? (size_t)(nl - text) : len) - off;
		const char *s = text + off;
		off += n + 1;
		if (n && s[n - 1] == '\r')
			n--;
		if (!is_bt_line(s, n) || (!started && n == 0))
			continue;
		if (n > 7 && memcmp(s, "Thread ", 7) == 0)
			threads++;
		started = true;
		fwrite(s, 1, n, st->out);
		fputc('\n', st->out);
	}
	fflush(st->out);
	if (threads > st->max_threads)
		st->max_threads = threads;
	return threads;
}

static void note_stop(struct cg_state *st, int64_t ns)
{
	if (st->nstops == st->cap_stops) {
		size_t cap = st->cap_stops ? st->cap_stops * 2 : 256;
		int64_t *q = realloc(st->stops, cap * sizeof *q);
		if (!q)
			oom();
		st->stops = q;
		st->cap_stops = cap;
	}
	st->stops[st->nstops++] = ns;
}

/* ---- scheduling ---- */

/* Should sampling stop now?  Sets st->end. */
static bool should_stop(struct cg_state *st)
{
	if (stop_signal) {
		st->end = END_SIGNAL;
		return true;
	}
	if (st->o.count && st->snapshots >= st->o.count) {
		st->end = END_COUNT;
		return true;
	}
	if (st->o.duration_ns && now_ns(CLOCK_MONOTONIC) - st->t_begin >= st->o.duration_ns) {
		st->end = END_DURATION;
		return true;
	}
	return false;
}

/* Sleep until t (monotonic), or less if the duration ends or a signal
 * comes. */
static void sleep_until(struct cg_state *st, int64_t t)
{
	if (st->o.duration_ns && t > st->t_begin + st->o.duration_ns)
		t = st->t_begin + st->o.duration_ns;
	while (!stop_signal) {
		int64_t left = t - now_ns(CLOCK_MONOTONIC);
		struct timespec ts;
		if (left <= 0)
			return;
		ts.tv_sec = left / 1000000000LL;
		ts.tv_nsec = left % 1000000000LL;
		nanosleep(&ts, NULL);
	}
}

/* Next snapshot time: on the interval grid, skipping missed slots. */
static int64_t next_slot(struct cg_state *st, int64_t prev)
{
	int64_t next = prev + st->o.interval_ns, t = now_ns(CLOCK_MONOTONIC);

	if (next < t)
		next = t;
	return next;
}

/* ---- dumpers that run once per snapshot (batch, eu-stack) ---- */

/* Run argv to completion or timeout.  0 ok; 1 timed out; -1 cannot run. */
static int run_dumper(struct cg_state *st, char *const argv[], struct proc *pr, int *status)
{
	int64_t deadline = now_ns(CLOCK_MONOTONIC) + st->o.timeout_ns;
	int r;

	if (proc_start(pr, argv, false) < 0) {
		msg("cannot run '%s': %s", argv[0], strerror(errno));
		return -1;
	}
	while ((r = proc_pump(pr, deadline)) > 0 || (r == 0 && stop_signal))
		if (r == 0 && stop_signal && now_ns(CLOCK_MONOTONIC) >= deadline)
			break;
	if (r == 0) {
		/* Timed out: gdb detaches on SIGTERM; make sure the target runs. */
		*status = proc_finish(pr, 0);
		kill(st->pid, SIGCONT);
		return 1;
	}
	*status = proc_finish(pr, 2000000000LL);
	return 0;
}

/* The last non-empty line of s, for messages. */
static void last_line(const struct strbuf *b, char *out, size_t n)
{
	size_t end = b->len, start;

	out[0] = '\0';
	while (end && isspace((unsigned char)b->s[end - 1]))
		end--;
	start = end;
	while (start && b->s[start - 1] != '\n')
		start--;
	snprintf(out, n, "%.*s", (int)(end - start), b->s + start);
}

/* Classify a dumper's failure; reports it unless the target just exited.
 * Returns END_EXITED or END_ERROR. */
static enum cg_end dumper_failed(struct cg_state *st, const char *tool, const struct strbuf *err)
{
	char line[512];

	if (!target_alive(st))
		return END_EXITED;
	if (strstr(err->s ? err->s : "", "Operation not permitted") ||
	    strstr(err->s ? err->s : "", "ermission denied")) {
		permission_error(st);
		return END_ERROR;
	}
	last_line(err, line, sizeof line);
	msg("%s could not dump process %d: %s", tool, (int)st->pid, line[0] ? line : "no output");
	return END_ERROR;
}

static void batch_loop(struct cg_state *st)
{
	char pidbuf[32];
	char *argv[16];
	int k = 0;
	int64_t next = now_ns(CLOCK_MONOTONIC);

	snprintf(pidbuf, sizeof pidbuf, "%d", (int)st->pid);
	argv[k++] = (char *)st->o.gdb;
	argv[k++] = (char *)"-batch";
	argv[k++] = (char *)"-nx";
	if (st->o.readnever)
		argv[k++] = (char *)"--readnever";
	argv[k++] = (char *)"-ex";
	argv[k++] = (char *)"set pagination off";
	argv[k++] = (char *)"-ex";
	argv[k++] = (char *)"set width 0";
	argv[k++] = (char *)"-ex";
	argv[k++] = (char *)"thread apply all bt";
	argv[k++] = (char *)"-p";
	argv[k++] = pidbuf;
	argv[k] = NULL;
	while (!should_stop(st)) {
		struct proc pr;
		int status = 0, r;
		int64_t t0, t_real;

		sleep_until(st, next);
		if (should_stop(st))
			break;
		if (!target_alive(st)) {
			st->end = END_EXITED;
			break;
		}
		t_real = now_ns(CLOCK_REALTIME);
		t0 = now_ns(CLOCK_MONOTONIC);
		r = run_dumper(st, argv, &pr, &status);
		if (r < 0) {
			st->end = END_ERROR;
			break;
		}
		if (r > 0) {
			if (!target_alive(st)) {
				st->end = END_EXITED;
			} else {
				msg("gdb did not finish snapshot %lld of process %d within %.3g s; stopped it (the process was left running)",
				    st->snapshots + 1, (int)st->pid, st->o.timeout_ns / 1e9);
				st->end = END_ERROR;
			}
			proc_free(&pr);
			break;
		}
		if (!pr.obuf.s || !strstr(pr.obuf.s, "\nThread ")) {
			st->end = dumper_failed(st, "gdb", &pr.ebuf);
			proc_free(&pr);
			break;
		}
		note_stop(st, now_ns(CLOCK_MONOTONIC) - t0);
		write_snapshot(st, pr.obuf.s, pr.obuf.len, t_real);
		proc_free(&pr);
		next = next_slot(st, next);
	}
}

/* eu-stack's "#N  0xPC FUNC - MODULE" (+ "    FILE:LINE:COL") in gdb's
 * form; threads named from /proc. */
static int eustack_to_gdb(struct cg_state *st, const char *text, size_t len, struct strbuf *out)
{
	unsigned thread_no = 0;
	char line[8192];

	for (size_t off = 0; off < len;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = (nl ? (size_t)(nl - text) : len) - off;
		const char *s = text + off;
		const char *next = nl ? nl + 1 : text + len;
		size_t next_n = 0;
		off += n + 1;

		if (nl && off < len) {
			const char *nl2 = memchr(next, '\n', len - off);
			next_n = (nl2 ? (size_t)(nl2 - next) : len - off);
		}
		if (n > 4 && memcmp(s, "TID ", 4) == 0) {
			long tid = strtol(s + 4, NULL, 10);
			char comm[64];
			read_comm(st->pid, (pid_t)tid, comm, sizeof comm);
			snprintf(line, sizeof line, "\nThread %u (LWP %ld \"%s\"):\n", ++thread_no, tid, comm);
		} else if (n > 1 && s[0] == '#' && isdigit((unsigned char)s[1])) {
			char frame[16] = "", func[4096] = "??", module[2048] = "", src[2048] = "";
			unsigned long long pc = 0;
			const char *q = s + 1, *e = s + n, *dash;
			int w;

			w = snprintf(frame, sizeof frame, "#%ld", strtol(q, (char **)&q, 10));
			(void)w;
			while (q < e && *q == ' ')
				q++;
			pc = strtoull(q, (char **)&q, 16);
			while (q < e && *q == ' ')
				q++;
			dash = NULL;
			for (const char *c = q; c + 2 < e; c++)
				if (c[0] == ' ' && c[1] == '-' && c[2] == ' ')
					dash = c;
			if (dash) {
				snprintf(module, sizeof module, "%.*s", (int)(e - dash - 3), dash + 3);
				e = dash;
			}
			if (e > q)
				snprintf(func, sizeof func, "%.*s", (int)(e - q), q);
			if (next_n > 4 && next[0] == ' ') {
				/* "    FILE:LINE:COL" -> FILE:LINE */
				const char *t = next, *te = next + next_n, *c1 = NULL, *c2 = NULL;
				while (t < te && *t == ' ')
					t++;
				for (const char *c = te; c-- > t;)
					if (*c == ':') {
						if (!c2)
							c2 = c;
						else {
							c1 = c;
							break;
						}
					}
				if (c2 && !c1)
					c1 = c2, c2 = te;
				if (c1)
					snprintf(src, sizeof src, "%.*s:%.*s", (int)(c1 - t), t,
						 (int)(c2 - c1 - 1), c1 + 1);
			}
			if (src[0])
				snprintf(line, sizeof line, "%s  0x%016llx in %s () at %s\n", frame, pc, func, src);
			else if (module[0])
				snprintf(line, sizeof line, "%s  0x%016llx in %s () from %s\n", frame, pc, func, module);
			else
				snprintf(line, sizeof line, "%s  0x%016llx in %s ()\n", frame, pc, func);
		} else {
			continue;
		}
		if (sb_add(out, line, strlen(line)) < 0)
			return -1;
	}
	return 0;
}

static void eustack_loop(struct cg_state *st, const char *eustack)
{
	char pidbuf[32];
	char *argv[12];
	int k = 0;
	int64_t next = now_ns(CLOCK_MONOTONIC);

	snprintf(pidbuf, sizeof pidbuf, "%d", (int)st->pid);
	argv[k++] = (char *)eustack;
	argv[k++] = (char *)"-m";
	if (!st->o.readnever) {
		argv[k++] = (char *)"-i";
		argv[k++] = (char *)"-s";
	}
	argv[k++] = (char *)"-p";
	argv[k++] = pidbuf;
	argv[k] = NULL;
	while (!should_stop(st)) {
		struct proc pr;
		struct strbuf conv = { 0 };
		int status = 0, r;
		int64_t t0, t_real;

		sleep_until(st, next);
		if (should_stop(st))
			break;
		if (!target_alive(st)) {
			st->end = END_EXITED;
			break;
		}
		t_real = now_ns(CLOCK_REALTIME);
		t0 = now_ns(CLOCK_MONOTONIC);
		r = run_dumper(st, argv, &pr, &status);
		if (r != 0) {
			if (r > 0 && target_alive(st))
				msg("eu-stack did not finish snapshot %lld of process %d within %.3g s; stopped it",
				    st->snapshots + 1, (int)st->pid, st->o.timeout_ns / 1e9);
			st->end = r > 0 && !target_alive(st) ? END_EXITED : END_ERROR;
			proc_free(&pr);
			break;
		}
		/* 0: all frames; 1: some frames missing; 2: nothing */
		if (!WIFEXITED(status) || WEXITSTATUS(status) > 1 || !pr.obuf.s ||
		    !strstr(pr.obuf.s, "TID ")) {
			st->end = dumper_failed(st, "eu-stack", &pr.ebuf);
			proc_free(&pr);
			break;
		}
		note_stop(st, now_ns(CLOCK_MONOTONIC) - t0);
		if (eustack_to_gdb(st, pr.obuf.s, pr.obuf.len, &conv) < 0)
			oom();
		write_snapshot(st, conv.s ? conv.s : "", conv.len, t_real);
		free(conv.s);
		proc_free(&pr);
		next = next_slot(st, next);
	}
}

/* ---- the persistent gdb/MI session ---- */

struct mi {
	struct proc pr;
	unsigned token;
	struct strbuf console;  /* ~"..." text since the last command */
	bool running, exited, stopped_seen;
	bool hung;              /* a command timed out: no more talking */
	char error[512];        /* of the last ^error */
};

/* Unescape an MI c-string starting after its opening quote. */
static void mi_cstring(const char *s, const char *e, struct strbuf *out)
{
	char buf[1024];
	size_t n = 0;

	while (s < e && *s != '"') {
		char c = *s++;
		if (c == '\\' && s < e) {
			c = *s++;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'e': c = 27; break;
			default:
				if (c >= '0' && c <= '7') {
					int v = c - '0';
					for (int i = 0; i < 2 && s < e && *s >= '0' && *s <= '7'; i++)
						v = v * 8 + (*s++ - '0');
					c = (char)v;
				}
			}
		}
		buf[n++] = c;
		if (n == sizeof buf) {
			if (sb_add(out, buf, n) < 0)
				oom();
			n = 0;
		}
	}
	if (n && sb_add(out, buf, n) < 0)
		oom();
}

/* Handle one MI output line.  Returns 1 when it is the result record of
 * token (class in *cls: 'd'one, 'r'unning, 'e'rror, 'c'onnected, 'x' exit). */
static int mi_line(struct mi *m, const char *s, size_t n, unsigned token, char *cls)
{
	char tok[16];
	size_t tl = 0;

	while (tl < n && tl < 15 && isdigit((unsigned char)s[tl]))
		tok[tl] = s[tl], tl++;
	tok[tl] = '\0';
	s += tl;
	n -= tl;
	if (n == 0)
		return 0;
	switch (s[0]) {
	case '~':
		if (n > 1 && s[1] == '"')
			mi_cstring(s + 2, s + n, &m->console);
		return 0;
	case '*':
		if (n >= 8 && memcmp(s, "*running", 8) == 0) {
			m->running = true;
		} else if (n >= 8 && memcmp(s, "*stopped", 8) == 0) {
			m->running = false;
			m->stopped_seen = true;
			if (memmem(s, n, "reason=\"exited", 14))
				m->exited = true;
		}
		return 0;
	case '=':
		if (n >= 20 && memcmp(s, "=thread-group-exited", 20) == 0)
			m->exited = true;
		return 0;
	case '^':
		if (tl == 0 || (unsigned)strtoul(tok, NULL, 10) != token)
			return 0;
		*cls = s[1] == 'd' ? 'd' : s[1] == 'r' ? 'r' : s[1] == 'c' ? 'c' : s[1] == 'e' && s[2] == 'r' ? 'e' : 'x';
		if (*cls == 'r')
			m->running = true;
		if (*cls == 'e') {
			const char *q = memmem(s, n, "msg=\"", 5);
			struct strbuf b = { 0 };
			if (q)
				mi_cstring(q + 5, s + n, &b);
			snprintf(m->error, sizeof m->error, "%s", b.s ? b.s : "unknown error");
			free(b.s);
		}
		return 1;
	}
	return 0;
}

/* Process the lines gdb wrote so far.  Returns 1 if the result record of
 * token came. */
static int mi_scan(struct mi *m, unsigned token, char *cls)
{
	struct proc *pr = &m->pr;
	int found = 0;

	while (!found && pr->opos < pr->obuf.len) {
		char *s = pr->obuf.s + pr->opos;
		char *nl = memchr(s, '\n', pr->obuf.len - pr->opos);
		size_t n;
		if (!nl)
			break;
		n = (size_t)(nl - s);
		pr->opos += n + 1;
		if (n && s[n - 1] == '\r')
			n--;
		found = mi_line(m, s, n, token, cls);
	}
	if (pr->opos == pr->obuf.len) {
		pr->obuf.len = pr->opos = 0;
	} else if (pr->opos > (1u << 20)) {
		memmove(pr->obuf.s, pr->obuf.s + pr->opos, pr->obuf.len - pr->opos);
		pr->obuf.len -= pr->opos;
		pr->opos = 0;
	}
	/* stderr: not MI; keep only the tail for messages */
	if (pr->ebuf.len > 65536) {
		memmove(pr->ebuf.s, pr->ebuf.s + pr->ebuf.len - 4096, 4096);
		pr->ebuf.len = 4096;
		pr->ebuf.s[4096] = '\0';
	}
	return found;
}

/* Send a command and wait for its result.  Returns the class letter, 't'
 * on timeout, or 'x' when gdb went away. */
static char mi_cmd(struct mi *m, const char *cmd, int64_t timeout)
{
	char line[512];
	int64_t deadline = now_ns(CLOCK_MONOTONIC) + timeout;
	char cls = 0;
	int len;

	m->token++;
	m->console.len = 0;
	if (m->console.s)
		m->console.s[0] = '\0';
	m->error[0] = '\0';
	len = snprintf(line, sizeof line, "%u%s\n", m->token, cmd);
	if (write(m->pr.in, line, (size_t)len) != len)
		return 'x';
	for (;;) {
		int r;
		if (mi_scan(m, m->token, &cls))
			return cls;
		r = proc_pump(&m->pr, deadline);
		if (r < 0)
			return 'x';
		if (r == 0 && now_ns(CLOCK_MONOTONIC) >= deadline)
			return 't';
	}
}

/* Wait until gdb reports the target stopped (or exited). */
static bool mi_wait_stopped(struct mi *m, int64_t deadline)
{
	char cls;

	for (;;) {
		int r;
		mi_scan(m, 0, &cls);
		if (!m->running || m->exited)
			return true;
		r = proc_pump(&m->pr, deadline);
		if (r < 0)
			return m->exited;
		if (r == 0 && now_ns(CLOCK_MONOTONIC) >= deadline)
			return false;
	}
}

static void mi_timeout(struct cg_state *st, struct mi *m, const char *what)
{
	if (!target_alive(st)) {
		st->end = END_EXITED;
		return;
	}
	msg("gdb did not answer within %.3g s while %s process %d; stopped it (the process was left running)",
	    st->o.timeout_ns / 1e9, what, (int)st->pid);
	st->end = END_ERROR;
	m->hung = true;
}

static void persistent_loop(struct cg_state *st)
{
	struct mi m = { 0 };
	char *argv[8], cmd[64], cls;
	int k = 0;
	int64_t next, t0;
	bool attached = false;

	argv[k++] = (char *)st->o.gdb;
	argv[k++] = (char *)"--interpreter=mi3";
	argv[k++] = (char *)"-nx";
	argv[k++] = (char *)"-q";
	if (st->o.readnever)
		argv[k++] = (char *)"--readnever";
	argv[k] = NULL;
	if (proc_start(&m.pr, argv, true) < 0) {
		msg("cannot run '%s': %s", st->o.gdb, strerror(errno));
		st->end = END_ERROR;
		return;
	}
	static const char *const setup[] = {
		"-gdb-set mi-async on",
		"-gdb-set pagination off",
		"-gdb-set width 0",
		"-gdb-set confirm off",
		"-gdb-set print thread-events off",
		/* the program's own signals go straight through */
		"-interpreter-exec console \"handle all nostop noprint pass\"",
	};
	for (size_t i = 0; i < sizeof setup / sizeof setup[0]; i++) {
		cls = mi_cmd(&m, setup[i], st->o.timeout_ns);
		if (cls == 'x' || cls == 't') {
			struct strbuf *e = &m.pr.ebuf;
			char line[512];
			last_line(e, line, sizeof line);
			msg("gdb ('%s') %s: %s", st->o.gdb, cls == 't' ? "does not answer" : "exited at start",
			    line[0] ? line : "no message");
			st->end = END_ERROR;
			goto out;
		}
	}
	snprintf(cmd, sizeof cmd, "-target-attach %d", (int)st->pid);
	cls = mi_cmd(&m, cmd, st->o.timeout_ns);
	if (cls == 't') {
		mi_timeout(st, &m, "attaching to");
		goto out;
	}
	if (cls != 'd') {
		if (!target_alive(st)) {
			msg("no process with pid %d", (int)st->pid);
			st->end = END_ERROR;
		} else if (strstr(m.error, "not permitted") || strstr(m.error, "ermission")) {
			permission_error(st);
			st->end = END_ERROR;
		} else {
			msg("gdb cannot attach to process %d: %s", (int)st->pid,
			    m.error[0] ? m.error : "gdb exited");
			st->end = END_ERROR;
		}
		goto out;
	}
	attached = true;
	/* Attaching stops the target: this is the first snapshot's moment. */
	if (!mi_wait_stopped(&m, now_ns(CLOCK_MONOTONIC) + st->o.timeout_ns)) {
		mi_timeout(st, &m, "attaching to");
		goto out;
	}
	next = now_ns(CLOCK_MONOTONIC);
	t0 = next;
	for (;;) {
		int64_t t_real = now_ns(CLOCK_REALTIME);

		if (m.exited) {
			st->end = END_EXITED;
			break;
		}
		cls = mi_cmd(&m, "-interpreter-exec console \"thread apply all bt\"", st->o.timeout_ns);
		if (cls == 't') {
			mi_timeout(st, &m, "dumping");
			break;
		}
		if (cls != 'd') {
			if (m.exited || !target_alive(st)) {
				st->end = END_EXITED;
			} else {
				msg("gdb failed to dump process %d: %s", (int)st->pid,
				    m.error[0] ? m.error : "gdb exited");
				st->end = END_ERROR;
			}
			break;
		}
		write_snapshot(st, m.console.s ? m.console.s : "", m.console.len, t_real);
		if (should_stop(st))
			break;
		cls = mi_cmd(&m, "-exec-continue", st->o.timeout_ns);
		if (cls != 'r') {
			if (m.exited || !target_alive(st))
				st->end = END_EXITED;
			else if (cls == 't')
				mi_timeout(st, &m, "resuming");
			else {
				msg("gdb cannot resume process %d: %s", (int)st->pid, m.error);
				st->end = END_ERROR;
			}
			break;
		}
		note_stop(st, now_ns(CLOCK_MONOTONIC) - t0);
		next = next_slot(st, next);
		/* Wait, watching for the target's exit. */
		while (!stop_signal && !m.exited) {
			int64_t t = next;
			if (st->o.duration_ns && t > st->t_begin + st->o.duration_ns)
				t = st->t_begin + st->o.duration_ns;
			if (now_ns(CLOCK_MONOTONIC) >= t)
				break;
			if (proc_pump(&m.pr, t) < 0)
				break;
			mi_scan(&m, 0, &cls);
		}
		if (m.exited) {
			st->end = END_EXITED;
			break;
		}
		if (should_stop(st))
			break;
		t0 = now_ns(CLOCK_MONOTONIC);
		if (m.running) {
			cls = mi_cmd(&m, "-exec-interrupt", st->o.timeout_ns);
			if (cls == 't') {
				mi_timeout(st, &m, "interrupting");
				break;
			}
			if (!mi_wait_stopped(&m, t0 + st->o.timeout_ns)) {
				mi_timeout(st, &m, "interrupting");
				break;
			}
		}
	}
	if (attached && !m.exited && st->end != END_ERROR) {
		if (m.running) {
			cls = mi_cmd(&m, "-exec-interrupt", st->o.timeout_ns);
			mi_wait_stopped(&m, now_ns(CLOCK_MONOTONIC) + st->o.timeout_ns);
		}
		if (!m.exited)
			mi_cmd(&m, "-target-detach", st->o.timeout_ns);
	}
	if (!m.exited && !m.hung)
		mi_cmd(&m, "-gdb-exit", 1000000000LL);
out:
	/* gdb detaches on SIGTERM; after a SIGKILL a pending SIGSTOP could
	 * leave the target stopped, so it gets a SIGCONT. */
	proc_finish(&m.pr, m.hung ? 0 : 2000000000LL);
	if (attached && target_alive(st))
		kill(st->pid, SIGCONT);
	proc_free(&m.pr);
	free(m.console.s);
}

/* ---- main ---- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int open_output(struct cg_state *st)
{
	char exe[PATH_MAX], link[64];
	ssize_t n;

	snprintf(link, sizeof link, "/proc/%d/exe", (int)st->pid);
	n = readlink(link, exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (st->o.output && strcmp(st->o.output, "-") == 0) {
		st->out = stdout;
		snprintf(st->outname, sizeof st->outname, "standard output");
	} else {
		if (st->o.output) {
			snprintf(st->outname, sizeof st->outname, "%s", st->o.output);
		} else {
			char comm[64];
			read_comm(st->pid, 0, comm, sizeof comm);
			for (char *c = comm; *c; c++)
				if (*c == '/' || isspace((unsigned char)*c))
					*c = '_';
			snprintf(st->outname, sizeof st->outname, "profview-%s-%d.gdb",
				 comm[0] ? comm : "process", (int)st->pid);
		}
		st->out = fopen(st->outname, "w");
		if (!st->out) {
			msg("cannot write '%s': %s", st->outname, strerror(errno));
			return -1;
		}
	}
	fprintf(st->out, "# profview-gdb 1\n");
	fprintf(st->out, "# pid: %d\n", (int)st->pid);
	fprintf(st->out, "# program: %s\n", exe);
	fprintf(st->out, "# mode: %s%s\n", mode_names[st->o.mode], st->o.readnever ? " readnever" : "");
	fprintf(st->out, "# interval-ns: %" PRId64 "\n", st->o.interval_ns);
	fprintf(st->out, "# start: ");
	write_time(st->out, now_ns(CLOCK_REALTIME));
	fputc('\n', st->out);
	fflush(st->out);
	return 0;
}

int main(int argc, char **argv)
{
	struct cg_state st = { 0 };
	struct sigaction sa = { 0 };
	char tool[PATH_MAX], version[256];
	int ret;

	ret = parse_opts(argc, argv, &st.o);
	if (ret >= 0)
		return ret;
	signal(SIGPIPE, SIG_IGN);

	/* The dumper must exist before anything starts. */
	if (st.o.mode == MODE_EUSTACK ? !find_command("eu-stack", tool, sizeof tool)
				      : !find_command(st.o.gdb, tool, sizeof tool)) {
		if (st.o.mode == MODE_EUSTACK)
			msg("eu-stack is not installed (Debian package 'elfutils'): cannot sample");
		else if (strchr(st.o.gdb, '/'))
			msg("cannot run gdb '%s': %s", st.o.gdb, strerror(errno ? errno : ENOENT));
		else
			msg("gdb is not installed (no '%s' in PATH; Debian package 'gdb'): cannot sample",
			    st.o.gdb);
		return CG_EXIT_FAIL;
	}
	if (st.o.mode != MODE_EUSTACK)
		st.o.gdb = tool;

	if (st.o.pid) {
		st.pid = st.o.pid;
		if (st.pid == getpid()) {
			msg("cannot sample collect-gdb itself (pid %d)", (int)st.pid);
			return CG_EXIT_FAIL;
		}
		if (!target_alive(&st)) {
			msg("no process with pid %d", (int)st.pid);
			return CG_EXIT_FAIL;
		}
		if (tracer_of(st.pid)) {
			permission_error(&st);
			return CG_EXIT_FAIL;
		}
	}

	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	tool_version(tool, version, sizeof version);
	if (st.o.argv) {
		ret = start_program(&st);
		if (ret >= 0)
			return ret;
	}
	if (open_output(&st) < 0) {
		if (st.child) {
			kill(st.pid, SIGTERM);
			waitpid(st.pid, NULL, 0);
		}
		return CG_EXIT_FAIL;
	}
	fprintf(st.out, "# dumper: %s\n", version);
	st.t_begin = now_ns(CLOCK_MONOTONIC);
	switch (st.o.mode) {
	case MODE_PERSISTENT: persistent_loop(&st); break;
	case MODE_BATCH: batch_loop(&st); break;
	case MODE_EUSTACK: eustack_loop(&st, tool); break;
	}
	if (st.end == END_NONE)
		st.end = stop_signal ? END_SIGNAL : END_EXITED;
	fprintf(st.out, "# end: ");
	write_time(st.out, now_ns(CLOCK_REALTIME));
	fprintf(st.out, " %s\n", end_names[st.end]);
	if (fflush(st.out) != 0 || ferror(st.out) || (st.out != stdout && fclose(st.out) != 0)) {
		msg("cannot write '%s': %s", st.outname, strerror(errno));
		st.end = END_ERROR;
	}

	if (!st.o.quiet && st.snapshots == 0) {
		fprintf(stderr, "collect-gdb: no snapshot taken; %s '%s'\n",
			st.out == stdout ? "nothing but the header written to" : "the header written to",
			st.outname);
	} else if (!st.o.quiet) {
		double secs = (now_ns(CLOCK_MONOTONIC) - st.t_begin) / 1e9;
		double med = 0;
		if (st.nstops) {
			qsort(st.stops, st.nstops, sizeof *st.stops, cmp_i64);
			med = st.stops[st.nstops / 2] / 1e6;
		}
		fprintf(stderr,
			"collect-gdb: %lld snapshots (%s mode) of up to %u threads in %.2f s, %.1f/s, the target stopped %.1f ms per snapshot (median); %s; written to '%s'\n",
			st.snapshots, mode_names[st.o.mode], st.max_threads, secs,
			secs > 0 ? st.snapshots / secs : 0.0, med,
			st.end == END_EXITED ? "the process exited" :
			st.end == END_SIGNAL ? "interrupted" :
			st.end == END_ERROR ? "stopped by an error" : "done",
			st.outname);
	}
	free(st.stops);

	if (st.child) {
		/* The program goes on to its end; a ^C during sampling was eaten
		 * by gdb, so it is passed on. */
		if (st.end == END_ERROR && st.snapshots == 0 && target_alive(&st))
			kill(st.pid, SIGTERM);
		else if (st.end == END_SIGNAL && target_alive(&st)) {
			usleep(100000);
			if (target_alive(&st))
				kill(st.pid, stop_signal);
		}
		while (!st.child_reaped) {
			pid_t r = waitpid(st.pid, &st.child_status, 0);
			if (r == st.pid || (r < 0 && errno != EINTR))
				st.child_reaped = true;
		}
		if (st.end == END_ERROR)
			return CG_EXIT_FAIL;
		if (WIFEXITED(st.child_status))
			return WEXITSTATUS(st.child_status);
		if (WIFSIGNALED(st.child_status))
			return 128 + WTERMSIG(st.child_status);
		return 0;
	}
	return st.end == END_ERROR ? CG_EXIT_FAIL : 0;
}
