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
 *
 * This file: the options and main.  What every part shares (the state,
 * scheduling, small helpers) is in session.c, child processes in proc.c,
 * the trace file in trace.c, the batch and eu-stack dumpers in dumpers.c,
 * the persistent gdb/MI session in mi.c (session.h lists them).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dumpers.h"
#include "mi.h"
#include "proc.h"
#include "trace.h"

#ifndef PROFVIEW_VERSION
#define PROFVIEW_VERSION "unknown"
#endif

#define CG_DEFAULT_INTERVAL_NS 100000000LL   /* 0.1 s */
#define CG_DEFAULT_TIMEOUT_NS 10000000000LL  /* 10 s per snapshot */
#define CG_DEFAULT_ATTACH_TIMEOUT_NS 60000000000LL /* 60 s to attach */

static void on_signal(int sig)
{
	cg_stop_signal = sig;
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
		"      --attach-timeout=SEC\n"
		"                        give up attaching after SEC seconds (persistent mode:\n"
		"                        starting gdb, reading the debug info, stopping every\n"
		"                        thread; default 60, or --timeout if longer)\n"
		"      --gdb=PATH        the gdb to run (default: gdb from PATH)\n"
		"  -q, --quiet           print nothing but errors\n"
		"  -h, --help            show this help\n"
		"  -V, --version         show the version\n"
		"\n"
		"Exit status: 0 when sampling ended normally (or the program's own status\n"
		"when collect-gdb started it), 1 when collection failed, 2 for a usage error.\n"
		"See collect-gdb(1) and profview-gdb(5).\n");
}

/* Seconds from min to 1e6 as ns, or false. */
static bool parse_seconds(const char *s, double min, int64_t *ns)
{
	double v;

	if (!cli_parse_seconds(s, min, 1e6, &v))
		return false;
	*ns = (int64_t)llround(v * 1e9);
	return true;
}

/* -1 to go on, else an exit status. */
static int parse_opts(int argc, char **argv, struct cg_opts *o)
{
	enum { OPT_MODE = 256, OPT_PERSISTENT, OPT_BATCH, OPT_READNEVER, OPT_TIMEOUT, OPT_ATTACH_TIMEOUT,
	       OPT_GDB };
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
		{ "attach-timeout", required_argument, NULL, OPT_ATTACH_TIMEOUT },
		{ "gdb", required_argument, NULL, OPT_GDB },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
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
			if (!cli_parse_int(optarg, 1, INT_MAX, &v))
				return cli_invalid("pid", optarg, "a process id");
			o->pid = (pid_t)v;
			break;
		case 'i':
			if (!parse_seconds(optarg, 0.001, &o->interval_ns))
				return cli_invalid("interval", optarg, "seconds, at least 0.001");
			break;
		case 'n':
			if (!cli_parse_int(optarg, 1, LLONG_MAX, &v))
				return cli_invalid("count", optarg, "a whole number > 0");
			o->count = v;
			break;
		case 'd':
			if (!parse_seconds(optarg, 0.001, &o->duration_ns))
				return cli_invalid("duration", optarg, "seconds, at least 0.001");
			break;
		case OPT_TIMEOUT:
			if (!parse_seconds(optarg, 0.01, &o->timeout_ns))
				return cli_invalid("timeout", optarg, "seconds, at least 0.01");
			break;
		case OPT_ATTACH_TIMEOUT:
			if (!parse_seconds(optarg, 0.01, &o->attach_timeout_ns))
				return cli_invalid("attach timeout", optarg, "seconds, at least 0.01");
			break;
		case 'o':
			if (!optarg[0])
				return cli_usage_error("empty output file name");
			o->output = optarg;
			break;
		case OPT_MODE: {
			int m = cli_parse_choice(optarg, cg_mode_names);
			if (m < 0)
				return cli_invalid_choice("mode", optarg, cg_mode_names);
			o->mode = (enum cg_mode)m;
			break;
		}
		case OPT_PERSISTENT: o->mode = MODE_PERSISTENT; break;
		case OPT_BATCH: o->mode = MODE_BATCH; break;
		case OPT_READNEVER: o->readnever = true; break;
		case OPT_GDB:
			if (!optarg[0])
				return cli_usage_error("empty gdb path");
			o->gdb = optarg;
			break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("collect-gdb (profview) %s\n", PROFVIEW_VERSION); return 0;
		default: return cli_getopt_error(c, argv);
		}
	}
	if (!o->attach_timeout_ns)
		o->attach_timeout_ns = o->timeout_ns > CG_DEFAULT_ATTACH_TIMEOUT_NS ? o->timeout_ns
										 : CG_DEFAULT_ATTACH_TIMEOUT_NS;
	if (optind < argc)
		o->argv = argv + optind;
	if (o->pid && o->argv)
		return cli_usage_error("give either -p PID or a program to run, not both");
	if (!o->pid && !o->argv)
		return cli_usage_error("no process to sample: give -p PID or a program to run");
	return -1;
}

/* ---- main ---- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	struct cg_state st = { 0 };
	struct sigaction sa = { 0 };
	char tool[PATH_MAX], version[256];
	int ret;

	cli_set_progname("collect-gdb");
	ret = parse_opts(argc, argv, &st.o);
	if (ret >= 0)
		return ret;
	signal(SIGPIPE, SIG_IGN);

	/* The dumper must exist before anything starts. */
	if (st.o.mode == MODE_EUSTACK ? !proc_find_command("eu-stack", tool, sizeof tool)
				      : !proc_find_command(st.o.gdb, tool, sizeof tool)) {
		if (st.o.mode == MODE_EUSTACK)
			cli_msg("eu-stack is not installed (Debian package 'elfutils'): cannot sample");
		else if (strchr(st.o.gdb, '/'))
			cli_msg("cannot run gdb '%s': %s", st.o.gdb, strerror(errno ? errno : ENOENT));
		else
			cli_msg("gdb is not installed (no '%s' in PATH; Debian package 'gdb'): cannot sample",
			       st.o.gdb);
		return CG_EXIT_FAIL;
	}
	if (st.o.mode != MODE_EUSTACK)
		st.o.gdb = tool;

	if (st.o.pid) {
		st.pid = st.o.pid;
		if (st.pid == getpid()) {
			cli_msg("cannot sample collect-gdb itself (pid %d)", (int)st.pid);
			return CG_EXIT_FAIL;
		}
		if (!proc_target_alive(&st)) {
			cli_msg("no process with pid %d", (int)st.pid);
			return CG_EXIT_FAIL;
		}
		if (proc_tracer_of(st.pid)) {
			proc_permission_error(&st);
			return CG_EXIT_FAIL;
		}
		/* Stopped by SIGSTOP or ^Z: it is left stopped. */
		st.was_stopped = proc_state(st.pid) == 'T';
	}

	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	proc_tool_version(tool, version, sizeof version);
	if (st.o.argv) {
		ret = proc_start_program(&st);
		if (ret >= 0)
			return ret;
	}
	if (cg_open_trace(&st) < 0) {
		if (st.child) {
			kill(st.pid, SIGTERM);
			waitpid(st.pid, NULL, 0);
		}
		return CG_EXIT_FAIL;
	}
	fprintf(st.out, "# dumper: %s\n", version);
	st.t_begin = cg_now_ns(CLOCK_MONOTONIC);
	switch (st.o.mode) {
	case MODE_PERSISTENT: mi_persistent_loop(&st); break;
	case MODE_BATCH: dumpers_batch_loop(&st); break;
	case MODE_EUSTACK: dumpers_eustack_loop(&st, tool); break;
	}
	if (st.end == END_NONE)
		st.end = cg_stop_signal ? END_SIGNAL : END_EXITED;
	cg_close_trace(&st);

	if (!st.o.quiet && st.snapshots == 0) {
		cli_msg("no snapshot taken; %s '%s'",
			st.out == stdout ? "nothing but the header written to" : "the header written to",
			st.outname);
	} else if (!st.o.quiet) {
		double secs = (cg_now_ns(CLOCK_MONOTONIC) - st.t_begin) / 1e9;
		double med = 0;
		if (st.nstops) {
			qsort(st.stops, st.nstops, sizeof *st.stops, cmp_i64);
			med = st.stops[st.nstops / 2] / 1e6;
		}
		char stopped[96];
		if (st.was_stopped)
			snprintf(stopped, sizeof stopped, "the target was stopped before and is left stopped");
		else
			snprintf(stopped, sizeof stopped, "the target stopped %.1f ms per snapshot (median)", med);
		cli_msg("%lld snapshots (%s mode) of up to %u threads in %.2f s, %.1f/s, %s; %s; written to '%s'",
			st.snapshots, cg_mode_names[st.o.mode], st.max_threads, secs,
			secs > 0 ? st.snapshots / secs : 0.0, stopped,
			st.end == END_EXITED ? "the process exited" :
			st.end == END_SIGNAL ? "interrupted" :
			st.end == END_ERROR ? "stopped by an error" : "done",
			st.outname);
	}
	free(st.stops);
	for (size_t i = 0; i < st.nmaps; i++)
		free(st.maps[i]);
	free(st.maps);

	if (st.child) {
		/* The program goes on to its end; a ^C during sampling was eaten
		 * by gdb, so it is passed on. */
		if (st.end == END_ERROR && st.snapshots == 0 && proc_target_alive(&st))
			kill(st.pid, SIGTERM);
		else if (st.end == END_SIGNAL && proc_target_alive(&st)) {
			usleep(100000);
			if (proc_target_alive(&st))
				kill(st.pid, cg_stop_signal);
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
