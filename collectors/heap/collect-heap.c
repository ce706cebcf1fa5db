/* collect-heap.c - collect-heap: the launcher (collectors/launch) run for
 * libprofview-heap.so, with its options of its own (--rate, --no-python,
 * --python-allocator), their settings in the environment and its --help
 *
 * collect-heap [options] [--] program [args...]
 * collect-heap [options] -p PID[,PID...] | --all-matching=NAME
 *
 * See collect-main.c for what the launcher does, collect-heap(1) for the
 * options.
 */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "collect-env.h"
#include "collect-options.h"
#include "collect.h"

static void collect_heap_usage(FILE *f)
{
	fprintf(f,
		"usage: collect-heap [options] [--] program [args...]\n"
		"       collect-heap [options] -p PID[,PID...] | --all-matching=NAME\n"
		"Profile a program's heap: sample its allocations by bytes, with their stacks,\n"
		"and the frees of the blocks sampled.\n"
		"\n"
		"  -p, --pid=PID[,PID...]  profile running processes instead, until --duration\n"
		"                      or ^C, then leave them as they were; only the blocks\n"
		"                      allocated while attached are seen\n"
		"      --all-matching=NAME  -p with every process named NAME (its program's\n"
		"                      file name or its comm)\n"
		"  -r, --rate=BYTES    mean bytes allocated between samples, k or M for KiB\n"
		"                      or MiB (default %d); 1 samples every allocation\n"
		"  -o, --output=FILE   write the trace to FILE (replaced if it exists);\n"
		"                      default profview-PROGRAM-PID.raw in the current directory\n"
		"      --no-python     do not read the Python frames of a CPython 3.9-3.13\n"
		"                      program (its stacks end at the interpreter's loop)\n"
		"      --python-allocator=malloc|pymalloc  where a CPython program's objects\n"
		"                      of 512 bytes or less come from: malloc (the default,\n"
		"                      unless PYTHONMALLOC is set) runs it with\n"
		"                      PYTHONMALLOC=malloc, each object a block charged to\n"
		"                      the code that made it;\n"
		"                      pymalloc keeps CPython's own allocator, whose arenas\n"
		"                      come from mmap and are not seen\n"
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

/* --rate: a number of bytes, with k or M.  Returns 0 or -1. */
static int collect_heap_rate(const char *arg, long long *out)
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

static const char *const collect_heap_allocators[] = { "malloc", "pymalloc", NULL };

static int collect_heap_no_python;      /* --no-python */
static const char *collect_heap_pymalloc; /* --python-allocator, or NULL */

/* collect-heap's own options.  Returns -1 to go on, else an exit status. */
static int collect_heap_option(int c, const char *arg, struct collect_opts *o)
{
	int i;

	if (c == 'r' && collect_heap_rate(arg, &o->rate) != 0)
		return cli_invalid("rate", arg, "1 to %lld bytes (k, M for KiB, MiB)",
				   (long long)COLLECT_RATE_MAX);
	if (c == 'y')
		collect_heap_no_python = 1;
	if (c == 'M') {
		if ((i = cli_parse_choice(arg, collect_heap_allocators)) < 0)
			return cli_invalid_choice("python allocator", arg, collect_heap_allocators);
		collect_heap_pymalloc = collect_heap_allocators[i];
	}
	return -1;
}

/* The mean bytes between samples and whether Python frames are read, for
 * the library; and CPython's own setting of its object allocator, which
 * the program's processes inherit: malloc unless told otherwise, by the
 * option or by a PYTHONMALLOC already in the environment.  (Other programs
 * do not read it.) */
static int collect_heap_set_env(const struct collect_opts *o)
{
	char num[32];
	int rc;

	snprintf(num, sizeof(num), "%lld", o->rate);
	rc = setenv(COLLECT_ENV_HEAP_RATE, num, 1);
	rc |= collect_heap_no_python ? setenv(COLLECT_ENV_PYTHON, "0", 1) : unsetenv(COLLECT_ENV_PYTHON);
	if (collect_heap_pymalloc != NULL)
		rc |= setenv("PYTHONMALLOC", collect_heap_pymalloc, 1);
	else
		rc |= setenv("PYTHONMALLOC", "malloc", 0);
	return rc;
}

/* -p: the mean bytes between samples, and whether Python frames are
 * read, for the library in the process.  (--python-allocator has no
 * meaning there: a running interpreter's allocator is chosen.) */
static int collect_heap_attach_settings(const struct collect_opts *o, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, COLLECT_ENV_HEAP_RATE "=%lld\n" COLLECT_ENV_PYTHON "=%d\n", o->rate,
			 !collect_heap_no_python);

	return n > 0 && (size_t)n < cap ? n : -1;
}

static const struct collect_attach_desc collect_heap_attach = {
	.entry = "profview_heap_attach",
	.settings = collect_heap_attach_settings,
};

static const struct option collect_heap_opts[] = {
	{ "rate", required_argument, NULL, 'r' },
	{ "no-python", no_argument, NULL, 'y' },
	{ "python-allocator", required_argument, NULL, 'M' },
	{ NULL, 0, NULL, 0 },
};

static const struct collect_tool collect_heap = {
	.name = "collect-heap",
	.library = "libprofview-heap.so",
	.short_opts = "r:",
	.long_opts = collect_heap_opts,
	.usage = collect_heap_usage,
	.option = collect_heap_option,
	.parsed = NULL,
	.set_env = collect_heap_set_env,
	/* its allocations go to the program's malloc, not to the library */
	.misses_own_malloc = 1,
	.attach = &collect_heap_attach,
};

int main(int argc, char **argv)
{
	return collect_main(argc, argv, &collect_heap);
}
