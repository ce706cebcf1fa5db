/* collect-options.c - the launcher's command line: the options every
 * collector takes and their checks, with the tool's own (collect.h) added
 * (see collect-options.h)
 */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "collect-env.h"
#include "collect-options.h"
#include "collect.h"
#include "raw.h"

const struct collect_tool *collect_tool;

void collect_say(const char *fmt, ...)
{
	char buf[1024], *line = buf;
	int head = snprintf(buf, sizeof(buf), "%s: ", collect_tool->name), n;
	va_list ap;

	va_start(ap, fmt);
	n = vsnprintf(buf + head, sizeof(buf) - (size_t)head, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	/* a long line (a path) in one piece too */
	if ((size_t)n >= sizeof(buf) - (size_t)head && (line = malloc((size_t)head + (size_t)n + 1)) != NULL) {
		memcpy(line, buf, (size_t)head);
		va_start(ap, fmt);
		vsnprintf(line + head, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	if (line == NULL) {
		line = buf;
		n = (int)sizeof(buf) - 1 - head;
	}
	fwrite(line, 1, (size_t)head + (size_t)n, stderr);
	if (line != buf)
		free(line);
}

#ifndef PROFVIEW_VERSION
#define PROFVIEW_VERSION "unknown"
#endif
#define COLLECT_SPLIT_MIN 0.1     /* shortest --split, seconds */

/* The control signal: "none", a number, or a name with or without SIG
 * ("USR2", "sigusr2").  Returns 0, or a usage error's exit status having
 * said what is wrong. */
static int collect_signal(const char *arg, int *out)
{
	const char *name = arg;
	long long n;

	if (strcmp(arg, "none") == 0) {
		*out = 0;
		return 0;
	}
	if (!cli_parse_int(arg, INT_MIN, INT_MAX, &n)) {
		n = 0;
		if (strncasecmp(name, "SIG", 3) == 0)
			name += 3;
		for (int sig = 1; sig < NSIG && n == 0; sig++)
			if (sigabbrev_np(sig) != NULL && strcasecmp(sigabbrev_np(sig), name) == 0)
				n = sig;
		if (n == 0)
			return cli_invalid("control signal", arg,
					   "a signal name such as USR2, a number, or 'none'");
	}
	if (!collect_env_control_ok((int)n))
		return cli_usage_error("signal '%s' cannot be the control signal: it cannot be caught, "
				       "is the profiler's, or reports a fault; try USR1 or USR2", arg);
	*out = (int)n;
	return 0;
}

/* -p PID,PID,...: each a process id, none twice, at most
 * COLLECT_ATTACH_MAX of them.  Returns -1 to go on, else a usage error's
 * exit status having said what is wrong. */
static int collect_pids(const char *arg, struct collect_opts *o)
{
	char one[32];
	long long pid;

	for (const char *p = arg;; p++) {
		size_t len = strcspn(p, ",");

		snprintf(one, sizeof(one), "%.*s", (int)(len < sizeof(one) ? len : sizeof(one) - 1), p);
		if (len >= sizeof(one) || !cli_parse_int(one, 1, INT32_MAX, &pid))
			return cli_invalid("pid", arg, "a process id, or several separated by commas");
		for (int i = 0; i < o->nattach; i++)
			if (o->attach_pids[i] == (int)pid)
				return cli_usage_error("-p: process %lld is given twice", pid);
		if (o->nattach == COLLECT_ATTACH_MAX)
			return cli_usage_error("-p: more than %d processes", COLLECT_ATTACH_MAX);
		o->attach_pids[o->nattach++] = (int)pid;
		p += len;
		if (*p == '\0')
			return -1;
	}
}

/* One value of an option every collector takes into o, or of one of the
 * tool's own.  Returns -1 to go on, else an exit status. */
static int collect_option(int c, const char *arg, struct collect_opts *o)
{
	long long n;

	switch (c) {
	case 'o':
		if (arg[0] == '\0')
			return cli_usage_error("empty output file name");
		o->output = arg;
		break;
	case 'Y':
		if (!cli_parse_seconds(arg, 0, 1e7, &o->delay))
			return cli_invalid("delay", arg, "a number of seconds");
		break;
	case 'K':
		return collect_signal(arg, &o->control) == 0 ? -1 : COLLECT_EXIT_USAGE;
	case 'P':
		if (!cli_parse_seconds(arg, COLLECT_SPLIT_MIN, 1e7, &o->split))
			return cli_invalid("split", arg, "a number of seconds, at least %g",
					   COLLECT_SPLIT_MIN);
		break;
	case 'N':
		if (!cli_parse_int(arg, 1, 1000000, &n))
			return cli_invalid("number of segments", arg, "1 or more");
		o->keep = (long)n;
		break;
	case 'p':
	case 'A':
		if (collect_tool->attach == NULL)
			return cli_usage_error("%s cannot attach to a running process",
					       collect_tool->name);
		if (c == 'p')
			return collect_pids(arg, o);
		if (arg[0] == '\0' || strchr(arg, '/') != NULL)
			return cli_invalid("process name", arg, "a program's name, without '/'");
		o->attach_name = arg;
		break;
	case 'D':
		/* greater than 0: a nanosecond is the least the clocks tell */
		if (!cli_parse_seconds(arg, 1e-9, 1e7, &o->duration))
			return cli_invalid("duration", arg, "a number of seconds greater than 0");
		break;
	default:
		return collect_tool->option(c, arg, o);
	}
	return -1;
}

/* The options every collector takes. */
static const struct option collect_common_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "no-inherit", no_argument, NULL, 'I' },
	{ "delay", required_argument, NULL, 'Y' },
	{ "control-signal", required_argument, NULL, 'K' },
	{ "split", required_argument, NULL, 'P' },
	{ "keep-segments", required_argument, NULL, 'N' },
	{ "duration", required_argument, NULL, 'D' },
	{ "pid", required_argument, NULL, 'p' },
	{ "all-matching", required_argument, NULL, 'A' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
};

#define COLLECT_NCOMMON (sizeof(collect_common_opts) / sizeof(collect_common_opts[0]))
#define COLLECT_OWN_MAX 16 /* long options of a tool's own */

/* The tool's long options, then those every collector takes, into all
 * (COLLECT_OWN_MAX + COLLECT_NCOMMON + 1 entries). */
static void collect_longopts(struct option *all)
{
	size_t n = 0;

	for (const struct option *t = collect_tool->long_opts; t->name != NULL && n < COLLECT_OWN_MAX; t++)
		all[n++] = *t;
	for (size_t i = 0; i < COLLECT_NCOMMON; i++)
		all[n++] = collect_common_opts[i];
	memset(&all[n], 0, sizeof(all[n]));
}

int collect_parse(int argc, char **argv, struct collect_opts *o)
{
	struct option longopts[COLLECT_OWN_MAX + COLLECT_NCOMMON + 1];
	char shortopts[64];
	int c, ret;

	collect_longopts(longopts);
	snprintf(shortopts, sizeof(shortopts), "+:%so:p:qvhV", collect_tool->short_opts);
	cli_set_progname(collect_tool->name);
	o->frequency = COLLECT_HZ_DEFAULT;
	o->unwind = RAW_UNWIND_CFI;
	o->stack_size = COLLECT_STACK_DEFAULT;
	o->engine = "auto";
	o->clock = "cpu";
	o->control = COLLECT_CONTROL_DEFAULT;
	o->rate = COLLECT_RATE_DEFAULT;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'I': o->no_inherit = 1; break;
		case 'q': o->quiet = 1; break;
		case 'v': o->verbose = 1; break;
		case 'h':
			collect_tool->usage(stdout);
			return 0;
		case 'V':
			printf("%s (profview) %s\n", collect_tool->name, PROFVIEW_VERSION);
			return 0;
		case ':':
		case '?':
			return cli_getopt_error(c, argv);
		default:
			if ((ret = collect_option(c, optarg, o)) >= 0)
				return ret;
		}
	}
	if (collect_tool->parsed != NULL)
		collect_tool->parsed(o);
	if (o->keep != 0 && o->split == 0)
		return cli_usage_error("--keep-segments needs --split");
	if (o->nattach > 0 && o->attach_name != NULL)
		return cli_usage_error("-p and --all-matching: give one or the other");
	if (o->nattach > 0 || o->attach_name != NULL) {
		if (optind < argc)
			return cli_usage_error("-p and a program to run: give one or the other");
		if (o->split > 0 || o->delay > 0 || o->no_inherit)
			return cli_usage_error("-p takes no --split, --delay or --no-inherit (it "
					       "profiles the processes alone, from now)");
		return -1;
	}
	if (optind >= argc)
		return cli_usage_error("no program to run");
	o->argv = argv + optind;
	return -1;
}
