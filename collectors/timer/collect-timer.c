/* collect-timer.c - collect-timer: the launcher (collectors/launch) run
 * for libprofview-timer.so, with the options of its own (the sampling
 * frequency, the unwinding, the engine, the clock, --stats, --no-python) and its --help
 *
 * collect-timer [options] [--] program [args...]
 *
 * See collect-main.c for what the launcher does, collect-timer(1) for the
 * options.
 */
#include <getopt.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "collect-env.h"
#include "collect-options.h"
#include "collect.h"
#include "raw.h"

static void collect_timer_usage(FILE *f)
{
	fprintf(f,
		"usage: collect-timer [options] [--] program [args...]\n"
		"       collect-timer [options] -p PID[,PID...] | --all-matching=NAME\n"
		"Profile the CPU time of a program's threads by sampling their stacks.\n"
		"\n"
		"  -p, --pid=PID[,PID...]  profile the running process PID instead (or each\n"
		"                      of several, into one run file), until --duration\n"
		"                      or ^C; each then runs on as before\n"
		"      --all-matching=NAME  -p with every process named NAME (its program's\n"
		"                      file name or its comm, as pgrep -x), of this user\n"
		"                      (every user's as root), but collect-timer itself\n"
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
		"      --no-python     do not read the Python frames of a CPython 3.9-3.13\n"
		"                      program's threads (by default they are in its stacks)\n"
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

/* --unwind's names and the modes they stand for. */
static const char *const collect_timer_unwind_names[] = { "cfi", "dwarf", "fp", "check", NULL };
static const int collect_timer_unwinds[] = { RAW_UNWIND_CFI, RAW_UNWIND_DWARF, RAW_UNWIND_FP,
				       RAW_UNWIND_CHECK };
static const char *const collect_timer_engines[] = { "auto", "posix", "perf", NULL };
static const char *const collect_timer_clocks[] = { "cpu", "wall", NULL };

static int collect_timer_no_python; /* --no-python */

/* One of collect-timer's own options.  Returns -1 to go on, else an exit
 * status. */
static int collect_timer_option(int c, const char *arg, struct collect_opts *o)
{
	size_t bytes;
	int i;

	switch (c) {
	case 'F':
		if (!cli_parse_frequency(arg, 1, COLLECT_HZ_MAX, &o->frequency) ||
		    !collect_env_frequency_ok(o->frequency))
			return cli_invalid("frequency", arg, "1 to %d Hz", COLLECT_HZ_MAX);
		break;
	case 'U':
		if ((i = cli_parse_choice(arg, collect_timer_unwind_names)) < 0)
			return cli_invalid_choice("unwind mode", arg, collect_timer_unwind_names);
		o->unwind = collect_timer_unwinds[i];
		break;
	case 'S':
		if (!cli_parse_size(arg, COLLECT_STACK_MAX, &bytes) ||
		    !collect_env_stack_size_ok((long)bytes))
			return cli_invalid("stack size", arg, "%d to %d bytes (or 1k to %dk), a multiple of 8",
					   COLLECT_STACK_MIN, COLLECT_STACK_MAX, COLLECT_STACK_MAX / 1024);
		o->stack_size = (long)bytes;
		break;
	case 'E':
		if ((i = cli_parse_choice(arg, collect_timer_engines)) < 0)
			return cli_invalid_choice("engine", arg, collect_timer_engines);
		o->engine = collect_timer_engines[i];
		break;
	case 'C':
		if ((i = cli_parse_choice(arg, collect_timer_clocks)) < 0)
			return cli_invalid_choice("clock", arg, collect_timer_clocks);
		o->clock = collect_timer_clocks[i];
		break;
	case 'T':
		o->stats = 1;
		break;
	case 'y':
		collect_timer_no_python = 1;
		break;
	}
	return -1;
}

/* --no-python, for the library. */
static int collect_timer_set_env(const struct collect_opts *o)
{
	(void)o;
	return collect_timer_no_python ? setenv(COLLECT_ENV_PYTHON, "0", 1) : unsetenv(COLLECT_ENV_PYTHON);
}

/* Will the program's samples come from POSIX timers?  With auto, when
 * this process may not open a task-clock perf event on itself (the
 * library then uses POSIX timers, engine.c). */
static int collect_timer_engine_is_posix(const char *engine)
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


/* A frequency the CPU timers cannot keep up with is said. */
static void collect_timer_parsed(const struct collect_opts *o)
{
	struct timespec res;

	if (o->quiet || !collect_timer_engine_is_posix(o->engine))
		return;
	/* the coarse clocks advance once a tick */
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0 && res.tv_sec == 0 &&
	    res.tv_nsec > 0 && o->frequency > 1000000000L / res.tv_nsec)
		cli_msg("-F %ld is above the scheduler tick (%ld Hz): CPU timers deliver at "
			"most %ld samples a second per thread, each weighing the time since "
			"the last; --engine=perf takes %ld", o->frequency,
			1000000000L / res.tv_nsec, 1000000000L / res.tv_nsec, o->frequency);
}

static const struct option collect_timer_opts[] = {
	{ "frequency", required_argument, NULL, 'F' },
	{ "unwind", required_argument, NULL, 'U' },
	{ "stack-size", required_argument, NULL, 'S' },
	{ "engine", required_argument, NULL, 'E' },
	{ "clock", required_argument, NULL, 'C' },
	{ "stats", no_argument, NULL, 'T' },
	{ "no-python", no_argument, NULL, 'y' },
	{ NULL, 0, NULL, 0 },
};

static const char *collect_timer_unwind_name(int unwind)
{
	switch (unwind) {
	case RAW_UNWIND_DWARF: return "dwarf";
	case RAW_UNWIND_FP: return "fp";
	case RAW_UNWIND_CHECK: return "check";
	default: return "cfi";
	}
}

/* -p: collect-timer's settings for the library in the process, as a
 * launched run has them in its environment. */
static int collect_timer_attach_settings(const struct collect_opts *o, char *buf, size_t cap)
{
	int n = snprintf(buf, cap,
			 COLLECT_ENV_FREQUENCY "=%ld\n" COLLECT_ENV_UNWIND "=%s\n"
			 COLLECT_ENV_STACK_SIZE "=%ld\n" COLLECT_ENV_ENGINE "=%s\n"
			 COLLECT_ENV_CLOCK "=%s\n" COLLECT_ENV_STATS "=%d\n" COLLECT_ENV_PYTHON "=%d\n",
			 o->frequency, collect_timer_unwind_name(o->unwind), o->stack_size, o->engine,
			 o->clock, o->stats, !collect_timer_no_python);

	return n > 0 && (size_t)n < cap ? n : -1;
}

static const struct collect_attach_desc collect_timer_attach = {
	.entry = "profview_timer_attach",
	.settings = collect_timer_attach_settings,
};

static const struct collect_tool collect_timer = {
	.name = "collect-timer",
	.library = "libprofview-timer.so",
	.short_opts = "F:",
	.long_opts = collect_timer_opts,
	.usage = collect_timer_usage,
	.option = collect_timer_option,
	.parsed = collect_timer_parsed,
	.set_env = collect_timer_set_env,
	.misses_own_malloc = 0,
	.attach = &collect_timer_attach,
};

int main(int argc, char **argv)
{
	return collect_main(argc, argv, &collect_timer);
}
