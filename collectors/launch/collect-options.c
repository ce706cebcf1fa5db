/* collect-options.c - the launcher's command line: options, their checks,
 * --help (see collect-options.h)
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "collect-env.h"
#include "collect-options.h"
#include "collect.h"
#include "raw.h"

#ifndef PROFVIEW_VERSION
#define PROFVIEW_VERSION "unknown"
#endif
#define COLLECT_SPLIT_MIN 0.1     /* shortest --split, seconds */

#ifdef COLLECT_HEAP
static void collect_usage(FILE *f)
{
	fprintf(f,
		"usage: collect-heap [options] [--] program [args...]\n"
		"Profile a program's heap: sample its allocations by bytes, with their stacks,\n"
		"and the frees of the blocks sampled.\n"
		"\n"
		"  -r, --rate=BYTES    mean bytes allocated between samples, k or M for KiB\n"
		"                      or MiB (default %d); 1 samples every allocation\n"
		"  -o, --output=FILE   write the trace to FILE (replaced if it exists);\n"
		"                      default profview-PROGRAM-PID.raw in the current directory\n"
		"      --no-inherit    profile the program's process only, not the processes\n"
		"                      it starts (by default each writes its own trace)\n"
		"      --delay=SECONDS  start sampling SECONDS after the program starts;\n"
		"                      --duration counts from then\n"
		"      --control-signal=SIG  the signal that pauses sampling and resumes it:\n"
		"                      a name or number (default USR2), or none; the frees\n"
		"                      of the blocks sampled are recorded while paused\n"
		"      --split=SECONDS  cut the trace, while the program runs, into traces of\n"
		"                      SECONDS each: FILE without .raw, then .seg0001.raw...;\n"
		"                      each says what was allocated in its time and not freed\n"
		"      --keep-segments=N  with --split, keep only the last N segments\n"
		"      --duration=SECONDS  sample the first SECONDS of the run, then let the\n"
		"                      program run on; the frees of the blocks sampled are\n"
		"                      still recorded\n"
		"  -q, --quiet         print nothing but errors\n"
		"  -v, --verbose       at the end, a line for every process of the run, those\n"
		"                      without samples too (by default: the processes with the\n"
		"                      most samples and the run's totals)\n"
		"  -h, --help          show this help\n"
		"  -V, --version       show the version\n",
		COLLECT_RATE_DEFAULT);
}
#else
static void collect_usage(FILE *f)
{
	fprintf(f,
		"usage: collect-timer [options] [--] program [args...]\n"
		"Profile the CPU time of a program's threads by sampling their stacks.\n"
		"\n"
		"  -F, --frequency=HZ  samples per second of CPU time per thread (default %d)\n"
		"  -o, --output=FILE   write the trace to FILE (replaced if it exists);\n"
		"                      default profview-PROGRAM-PID.raw in the current directory\n"
		"      --unwind=MODE   how stacks are recorded: cfi (default) unwinds in the\n"
		"                      program with tables made of the binaries' CFI (a\n"
		"                      stack copy where it cannot); dwarf copies the registers\n"
		"                      and the top of the stack, unwound later; fp walks frame\n"
		"                      pointers; check records cfi and dwarf side by side\n"
		"      --stack-size=BYTES  bytes of stack copied per sample in dwarf mode,\n"
		"                      %d to %d, a multiple of 8, k for KiB (default %d)\n"
		"      --engine=ENGINE what sends the sampling signals: perf events, a sample\n"
		"                      every period at any rate; posix CPU timers, at most\n"
		"                      one per scheduler tick; auto (default): perf where the\n"
		"                      kernel allows it, else posix\n"
		"      --clock=CLOCK   cpu (default) samples threads on CPU; wall samples\n"
		"                      threads off CPU too (blocked, sleeping)\n"
		"      --no-inherit    profile the program's process only, not the processes\n"
		"                      it starts (by default each writes its own trace)\n"
		"      --delay=SECONDS  start sampling SECONDS after the program starts;\n"
		"                      --duration counts from then\n"
		"      --control-signal=SIG  the signal that pauses sampling and resumes it:\n"
		"                      a name or number (default USR2), or none\n"
		"      --split=SECONDS  cut the trace, while the program runs, into traces of\n"
		"                      SECONDS each: FILE without .raw, then .seg0001.raw...\n"
		"      --keep-segments=N  with --split, keep only the last N segments\n"
		"      --duration=SECONDS  profile the first SECONDS of the run, then let\n"
		"                      the program run on unprofiled\n"
		"      --stats         at the end, print the handler's time per sample and how\n"
		"                      the samples were unwound\n"
		"  -q, --quiet         print nothing but errors\n"
		"  -v, --verbose       at the end, a line for every process of the run, those\n"
		"                      without samples too (by default: the processes with the\n"
		"                      most samples and the run's totals)\n"
		"  -h, --help          show this help\n"
		"  -V, --version       show the version\n",
		COLLECT_HZ_DEFAULT, COLLECT_STACK_MIN, COLLECT_STACK_MAX, COLLECT_STACK_DEFAULT);
}
#endif

/* --rate: a number of bytes, with k or M.  Returns 0 or -1. */
static int collect_rate(const char *arg, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno == 0 && end != arg && (*end == 'k' || *end == 'K') && v <= COLLECT_RATE_MAX) {
		v *= 1024;
		end++;
	} else if (errno == 0 && end != arg && *end == 'M' && v <= COLLECT_RATE_MAX) {
		v *= 1024 * 1024;
		end++;
	}
	if (errno != 0 || end == arg || *end != '\0' || !collect_env_rate_ok(v))
		return -1;
	*out = v;
	return 0;
}

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

/* --unwind's names and the modes they stand for. */
static const char *const collect_unwind_names[] = { "cfi", "dwarf", "fp", "check", NULL };
static const int collect_unwinds[] = { RAW_UNWIND_CFI, RAW_UNWIND_DWARF, RAW_UNWIND_FP,
				       RAW_UNWIND_CHECK };
static const char *const collect_engines[] = { "auto", "posix", "perf", NULL };
static const char *const collect_clocks[] = { "cpu", "wall", NULL };

/* One option's value into o.  Returns -1 to go on, else an exit status. */
static int collect_option(int c, const char *arg, struct collect_opts *o)
{
	long long n;
	size_t bytes;
	int i;

	switch (c) {
	case 'F':
		if (!cli_parse_frequency(arg, 1, COLLECT_HZ_MAX, &o->frequency) ||
		    !collect_env_frequency_ok(o->frequency))
			return cli_invalid("frequency", arg, "1 to %d Hz", COLLECT_HZ_MAX);
		break;
	case 'r':
		if (collect_rate(arg, &o->rate) != 0)
			return cli_invalid("rate", arg, "1 to %lld bytes (k, M for KiB, MiB)",
					   (long long)COLLECT_RATE_MAX);
		break;
	case 'o':
		if (arg[0] == '\0')
			return cli_usage_error("empty output file name");
		o->output = arg;
		break;
	case 'U':
		if ((i = cli_parse_choice(arg, collect_unwind_names)) < 0)
			return cli_invalid_choice("unwind mode", arg, collect_unwind_names);
		o->unwind = collect_unwinds[i];
		break;
	case 'S':
		if (!cli_parse_size(arg, COLLECT_STACK_MAX, &bytes) ||
		    !collect_env_stack_size_ok((long)bytes))
			return cli_invalid("stack size", arg, "%d to %d bytes (or 1k to %dk), a multiple of 8",
					   COLLECT_STACK_MIN, COLLECT_STACK_MAX, COLLECT_STACK_MAX / 1024);
		o->stack_size = (long)bytes;
		break;
	case 'E':
		if ((i = cli_parse_choice(arg, collect_engines)) < 0)
			return cli_invalid_choice("engine", arg, collect_engines);
		o->engine = collect_engines[i];
		break;
	case 'C':
		if ((i = cli_parse_choice(arg, collect_clocks)) < 0)
			return cli_invalid_choice("clock", arg, collect_clocks);
		o->clock = collect_clocks[i];
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
	case 'D':
		/* greater than 0: a nanosecond is the least the clocks tell */
		if (!cli_parse_seconds(arg, 1e-9, 1e7, &o->duration))
			return cli_invalid("duration", arg, "a number of seconds greater than 0");
		break;
	}
	return -1;
}

/* Parses the command line.  Returns -1 to go on, else an exit status. */
/* Will the program's samples come from POSIX timers?  With auto, when
 * this process may not open a task-clock perf event on itself (the
 * library then uses POSIX timers, engine.c). */
static int collect_engine_is_posix(const char *engine)
{
	struct perf_event_attr attr;
	int fd;

	if (strcmp(engine, "auto") != 0)
		return strcmp(engine, "posix") == 0;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0UL);
	if (fd < 0)
		return 1;
	close(fd);
	return 0;
}

int collect_parse(int argc, char **argv, struct collect_opts *o)
{
	static const struct option longopts[] = {
		/* the tool's own, then those both take */
#ifdef COLLECT_HEAP
		{ "rate", required_argument, NULL, 'r' },
#else
		{ "frequency", required_argument, NULL, 'F' },
		{ "unwind", required_argument, NULL, 'U' },
		{ "stack-size", required_argument, NULL, 'S' },
		{ "engine", required_argument, NULL, 'E' },
		{ "clock", required_argument, NULL, 'C' },
		{ "stats", no_argument, NULL, 'T' },
#endif
		{ "output", required_argument, NULL, 'o' },
		{ "no-inherit", no_argument, NULL, 'I' },
		{ "delay", required_argument, NULL, 'Y' },
		{ "control-signal", required_argument, NULL, 'K' },
		{ "split", required_argument, NULL, 'P' },
		{ "keep-segments", required_argument, NULL, 'N' },
		{ "duration", required_argument, NULL, 'D' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c, ret;

	cli_set_progname(COLLECT_NAME);
	o->frequency = COLLECT_HZ_DEFAULT;
	o->unwind = RAW_UNWIND_CFI;
	o->stack_size = COLLECT_STACK_DEFAULT;
	o->engine = "auto";
	o->clock = "cpu";
	o->control = COLLECT_CONTROL_DEFAULT;
	o->rate = COLLECT_RATE_DEFAULT;
#ifdef COLLECT_HEAP
#define COLLECT_SHORT "+:r:o:qvhV"
#else
#define COLLECT_SHORT "+:F:o:qvhV"
#endif
	opterr = 0;
	while ((c = getopt_long(argc, argv, COLLECT_SHORT, longopts, NULL)) != -1) {
		switch (c) {
		case 'I': o->no_inherit = 1; break;
		case 'T': o->stats = 1; break;
		case 'q': o->quiet = 1; break;
		case 'v': o->verbose = 1; break;
		case 'h':
			collect_usage(stdout);
			return 0;
		case 'V':
			printf(COLLECT_NAME " (profview) %s\n", PROFVIEW_VERSION);
			return 0;
		case ':':
		case '?':
			return cli_getopt_error(c, argv);
		default:
			if ((ret = collect_option(c, optarg, o)) >= 0)
				return ret;
		}
	}
	if (!o->quiet && collect_engine_is_posix(o->engine) && strcmp(COLLECT_NAME, "collect-timer") == 0) {
		struct timespec res;

		/* the coarse clocks advance once a tick */
		if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0 && res.tv_sec == 0 &&
		    res.tv_nsec > 0 && o->frequency > 1000000000L / res.tv_nsec)
			cli_msg("-F %ld is above the scheduler tick (%ld Hz): CPU timers deliver at "
				"most %ld samples a second per thread, each weighing the time since "
				"the last; --engine=perf takes %ld", o->frequency,
				1000000000L / res.tv_nsec, 1000000000L / res.tv_nsec, o->frequency);
	}
	if (o->keep != 0 && o->split == 0)
		return cli_usage_error("--keep-segments needs --split");
	if (optind >= argc)
		return cli_usage_error("no program to run");
	o->argv = argv + optind;
	return -1;
}
