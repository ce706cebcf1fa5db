/* collect-timer.c - run a program under libprofview-timer.so
 *
 * collect-timer [options] [--] program [args...]
 *
 * Checks that LD_PRELOAD can work for the program, creates the trace file,
 * runs the program with the preload library and its settings in the
 * environment, waits for it, then reads the trace back to print a summary
 * and to cut a trace the program could not finish (exit without exit
 * handlers, crash, kill) at its last record.
 *
 * The processes the program starts write traces of their own next to the
 * first, "<stem>.<pid>.raw" (and "<stem>.<pid>.<n>.raw" for an exec in a
 * pid that has one).  Unless --no-inherit, collect-timer is a child
 * subreaper: descendants whose parent is gone become its children, and it
 * waits until every descendant has ended.  Then it finds their traces by
 * scanning the directory: a trace started after collect-timer did (by
 * CLOCK_MONOTONIC) whose pid or parent pid is the program's or that of a
 * trace already found.  SIGTERM and SIGHUP sent to collect-timer by a
 * process are passed on to the program (to its descendants once it has
 * ended); SIGINT and SIGQUIT are ignored, since the terminal sends them to
 * the program itself.
 *
 * Exit status: the program's own, or 128 + the signal that killed it; 2 for
 * a usage error; 1 when collect-timer itself fails before running the
 * program; 126 when the program cannot be executed; 127 when it is not
 * found.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cli.h"
#include "collect-env.h"
#include "outfile.h"
#include "raw-cpu.h"
#include "raw-iter.h"
#include "raw-tail.h"
#include "raw.h"
#include "segments.h"
#include "units.h"

#ifndef PROFVIEW_VERSION
#define PROFVIEW_VERSION "unknown"
#endif
#ifndef PROFVIEW_PKGLIBDIR
#define PROFVIEW_PKGLIBDIR "/usr/local/lib/profview"
#endif

#ifndef PROFVIEW_PKGLIBDIR_FROM_BIN
#define PROFVIEW_PKGLIBDIR_FROM_BIN ""
#endif
/* The same launcher runs collect-heap (built with COLLECT_HEAP): another
 * library, its own options, and summaries in bytes. */
#ifdef COLLECT_HEAP
#define COLLECT_NAME "collect-heap"
#define COLLECT_LIB "libprofview-heap.so"
#else
#define COLLECT_NAME "collect-timer"
#define COLLECT_LIB "libprofview-timer.so"
#endif
#define COLLECT_SHOWN 3           /* processes of a run listed without -v */
#define COLLECT_SPLIT_MIN 0.1     /* shortest --split, seconds */
#define COLLECT_POLL_NS 100000000 /* how often the trace is read, with --split */

enum {
	COLLECT_EXIT_USAGE = 2,
	COLLECT_EXIT_FAIL = 1,
	COLLECT_EXIT_NOEXEC = 126,
	COLLECT_EXIT_NOTFOUND = 127,
};

struct collect_opts {
	long frequency;
	const char *output;   /* as given, or NULL */
	int quiet;
	int verbose;          /* -v: every process of a run, each as it was */
	int unwind;           /* enum raw_unwind */
	long stack_size;      /* bytes of stack copied per sample, dwarf */
	const char *engine;   /* "posix" or "perf" */
	const char *clock;    /* "cpu" or "wall" */
	int no_inherit;       /* profile the program's process only */
	double delay;         /* seconds before sampling starts, 0: at once */
	double split;         /* seconds of the run per segment, 0: one trace */
	long keep;            /* segments kept on disk, 0: all */
	int control;          /* the signal that pauses and resumes, 0: none */
	int held;             /* it is blocked until the library takes it */
	char word[64];        /* the path of the run's control word, or "" */
	double duration;      /* seconds to profile, 0: all of the run */
	int stats;            /* --stats */
	long long rate;       /* collect-heap: mean bytes between samples */
	char **argv;          /* the program and its arguments */
};

struct collect_stats {
	uint64_t samples, lost, lost_records, threads;
	uint32_t lost_error;   /* why samples were lost (raw_lost_cause) */
	/* what the samples stand for and the threads used (raw-cpu.h) */
	struct raw_cpu_summary cpu;
	uint64_t wall_weight_ns; /* a wall-clock trace: the samples' weights */
	double heap_bytes;    /* a heap trace: the bytes its samples stand for */
	int ended;            /* RAW_END seen */
	int cut;              /* trailing zeros were cut */
	int bad;              /* unreadable data after the last record */
	int empty;            /* no header at all */
	int foreign;          /* a trace of another architecture: */
	uint32_t machine;     /* its ELF machine */
	int tail_cut;         /* zeros after the end record were cut */
	uint32_t pid;         /* of the header */
	uint32_t clock;       /* of the header */
};

static void collect_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "collect-timer: <message>" on stderr. */
static void collect_msg(const char *fmt, ...)
{
	va_list ap;

	fputs(COLLECT_NAME ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

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
		"      --split=SECONDS  cut the trace, while the program runs, into traces of\n"
		"                      SECONDS each: FILE without .raw, then .seg0001.raw...;\n"
		"                      each says what was allocated in its time and not freed\n"
		"      --keep-segments=N  with --split, keep only the last N segments\n"
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
		"      --engine=ENGINE what sends the sampling signals: posix (default) CPU\n"
		"                      timers, at most one per scheduler tick; perf events,\n"
		"                      any rate (POSIX timers if perf events are not allowed)\n"
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
static const char *const collect_engines[] = { "posix", "perf", NULL };
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
static int collect_parse(int argc, char **argv, struct collect_opts *o)
{
	static const struct option longopts[] = {
#ifdef COLLECT_HEAP
		{ "rate", required_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "no-inherit", no_argument, NULL, 'I' },
		{ "split", required_argument, NULL, 'P' },
		{ "keep-segments", required_argument, NULL, 'N' },
#else
		{ "frequency", required_argument, NULL, 'F' },
		{ "output", required_argument, NULL, 'o' },
		{ "unwind", required_argument, NULL, 'U' },
		{ "stack-size", required_argument, NULL, 'S' },
		{ "engine", required_argument, NULL, 'E' },
		{ "clock", required_argument, NULL, 'C' },
		{ "no-inherit", no_argument, NULL, 'I' },
		{ "delay", required_argument, NULL, 'Y' },
		{ "control-signal", required_argument, NULL, 'K' },
		{ "split", required_argument, NULL, 'P' },
		{ "keep-segments", required_argument, NULL, 'N' },
		{ "duration", required_argument, NULL, 'D' },
		{ "stats", no_argument, NULL, 'T' },
#endif
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
	o->engine = "posix";
	o->clock = "cpu";
	o->control = COLLECT_CONTROL_DEFAULT;
	o->rate = COLLECT_RATE_DEFAULT;
#ifdef COLLECT_HEAP
	/* no control signal: the heap library does not pause */
	o->control = 0;
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
	if (!o->quiet && strcmp(o->engine, "posix") == 0 && strcmp(COLLECT_NAME, "collect-timer") == 0) {
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

/* Finds the program the way a shell would.  Returns 0, 126 or 127. */
static int collect_resolve(const char *name, char *out, size_t cap)
{
	const char *path = getenv("PATH"), *p, *colon;
	struct stat st;
	int denied = 0;
	char defpath[256];

	if (strchr(name, '/') != NULL) {
		if (stat(name, &st) != 0) {
			collect_msg("cannot run '%s': %s", name, strerror(errno));
			return errno == ENOENT ? COLLECT_EXIT_NOTFOUND : COLLECT_EXIT_NOEXEC;
		}
		if (S_ISDIR(st.st_mode) || access(name, X_OK) != 0) {
			collect_msg("cannot run '%s': %s", name,
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
		collect_msg("cannot run '%s': permission denied", name);
		return COLLECT_EXIT_NOEXEC;
	}
	collect_msg("'%s': command not found", name);
	return COLLECT_EXIT_NOTFOUND;
}

/* Refuses programs for which the dynamic loader would ignore LD_PRELOAD or
 * could not load a 64-bit library.  Returns 0 or -1 (message printed). */
static int collect_check_binary(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	struct stat st;
	int fd, interp = 0, rc = -1;

	if (stat(path, &st) != 0)
		return 0;
	if (st.st_mode & (S_ISUID | S_ISGID)) {
		collect_msg("'%s' is set-user-ID or set-group-ID: the dynamic loader ignores "
			    "LD_PRELOAD for it; profile a copy without that bit", path);
		return -1;
	}
	if (geteuid() != 0 && getxattr(path, "security.capability", NULL, 0) > 0) {
		collect_msg("'%s' has file capabilities: the dynamic loader ignores LD_PRELOAD "
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
		collect_msg("'%s' is not an x86-64 program: %s cannot be loaded into it",
			    path, COLLECT_LIB);
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
		collect_msg("'%s' is statically linked: LD_PRELOAD cannot work there; "
			    "link it dynamically (without -static) to profile it", path);
		goto out;
	}
	rc = 0;
out:
	close(fd);
	return rc;
}

/* Finds the preload library: $PROFVIEW_PRELOAD, next to this executable (a
 * build tree), where the install puts it relative to this executable (an
 * installed tree, moved or not), or the install directory.  Returns 0 or -1
 * (message printed). */
static int collect_find_preload(char *out, size_t cap)
{
	const char *env = getenv("PROFVIEW_PRELOAD");
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (env != NULL && env[0] != '\0') {
		if (env[0] != '/' || access(env, R_OK) != 0) {
			collect_msg("PROFVIEW_PRELOAD='%s' is not a readable absolute path", env);
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
			if (snprintf(out, cap, "%s/%s", self, COLLECT_LIB) < (int)cap &&
			    access(out, R_OK) == 0)
				return 0;
			if (PROFVIEW_PKGLIBDIR_FROM_BIN[0] &&
			    snprintf(out, cap, "%s/%s/%s", self, PROFVIEW_PKGLIBDIR_FROM_BIN, COLLECT_LIB) <
				    (int)cap &&
			    access(out, R_OK) == 0)
				return 0;
		}
	}
	snprintf(out, cap, "%s/%s", PROFVIEW_PKGLIBDIR, COLLECT_LIB);
	if (access(out, R_OK) == 0)
		return 0;
	collect_msg("cannot find %s next to " COLLECT_NAME " or in %s; set PROFVIEW_PRELOAD",
		    COLLECT_LIB, PROFVIEW_PKGLIBDIR);
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

/* In the child: creates the empty trace file the library will fill.
 * Returns 0 with the display name in shown and the absolute one in abs. */
static int collect_create_output(const struct collect_opts *o, char *shown, char *abs,
				 size_t cap)
{
	const char *base = strrchr(o->argv[0], '/');
	char why[256];
	int fd = -1;

	base = base != NULL ? base + 1 : o->argv[0];
	if (o->output != NULL) {
		/* A new file, even in place of an old trace, that only its
		 * owner reads. */
		snprintf(shown, cap, "%s", o->output);
		fd = pv_outfile_open(o->output, PV_OUTFILE_TRACE_MODE, PV_OUTFILE_NEW, why, sizeof(why));
		if (fd < 0) {
			collect_msg("cannot write '%s': %s", shown, why);
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
			collect_msg("cannot create '%s': %s", shown, strerror(errno));
			return -1;
		}
	}
	close(fd);
	if (collect_absolute(shown, abs, cap) != 0) {
		collect_msg("cannot make '%s' an absolute path", shown);
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
#ifdef COLLECT_HEAP
	snprintf(num, sizeof(num), "%lld", o->rate);
	rc |= setenv(COLLECT_ENV_HEAP_RATE, num, 1);
#endif
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
	return rc;
}

/* Child side: create the output, set the environment, tell the parent the
 * file name through the pipe, exec.  Never returns. */
static void collect_child(const struct collect_opts *o, const char *prog, const char *lib,
			  int pipefd)
{
	char shown[PATH_MAX], abs[PATH_MAX];
	int err;

	if (collect_create_output(o, shown, abs, sizeof(shown)) != 0)
		_exit(COLLECT_EXIT_FAIL);
	if (collect_setenv(o, lib, abs) != 0) {
		collect_msg("cannot set the environment: %s", strerror(errno));
		unlink(shown);
		_exit(COLLECT_EXIT_FAIL);
	}
	if (write(pipefd, shown, strlen(shown) + 1) < 0)
		_exit(COLLECT_EXIT_FAIL);
	execv(prog, o->argv);
	err = errno;
	collect_msg("cannot run '%s': %s", prog, strerror(err));
	if (write(pipefd, "X", 1) < 0)
		_exit(COLLECT_EXIT_FAIL);
	_exit(err == ENOENT ? COLLECT_EXIT_NOTFOUND : COLLECT_EXIT_NOEXEC);
}

/* ---- reading the trace back ---- */

/* Are bytes [from, to) of fd all zero?  -1 when they cannot be read. */
static int collect_zeros(int fd, uint64_t from, uint64_t to)
{
	unsigned char buf[65536];

	while (from < to) {
		size_t n = to - from < sizeof(buf) ? (size_t)(to - from) : sizeof(buf);
		ssize_t got = pread(fd, buf, n, (off_t)from);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		for (ssize_t i = 0; i < got; i++)
			if (buf[i] != 0)
				return 0;
		from += (uint64_t)got;
	}
	return 1;
}

/* Reads the trace at path, a piece at a time (raw-tail.h, so that memory
 * stays flat whatever its size): counts, and cuts the zeros after the last
 * record of an unfinished trace.  Returns 0, or -1 if it cannot be read. */
static int collect_scan(const char *path, struct collect_stats *st)
{
	unsigned char head_buf[16384];
	struct raw_cpu *acct = NULL;
	int oom = 0, next;
	const struct raw_header *h;
	struct raw_head head;
	enum raw_head_status hs;
	struct raw_tail tail;
	struct raw_record rec;
	struct stat sb;
	uint64_t off, size;
	ssize_t got;
	/* by name again: never through a link planted since */
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);

	memset(st, 0, sizeof(*st));
	if (fd < 0 || fstat(fd, &sb) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	size = (uint64_t)sb.st_size;
	got = pread(fd, head_buf, sizeof(head_buf), 0);
	if (got < (ssize_t)sizeof(*h)) {
		st->empty = 1;
		close(fd);
		return 0;
	}
	h = &head.h;
	hs = raw_iter_head(head_buf, (size_t)got, &head);
	if (hs == RAW_HEAD_MACHINE) {
		/* not ours to count or cut, nor to remove */
		st->foreign = 1;
		st->machine = head.arch.machine;
		close(fd);
		return 0;
	}
	if (hs != RAW_HEAD_OK) {
		st->empty = 1;
		close(fd);
		return 0;
	}
	st->pid = h->pid;
	st->clock = h->clock;
	if (raw_tail_init(&tail, fd, h->header_size, head.arch.nregs, 0) != 0) {
		close(fd);
		return -1;
	}
	acct = raw_cpu_new(h->short_thread_us);
	oom = acct == NULL;
	while ((next = raw_tail_next(&tail, &rec)) == RAW_NEXT_RECORD) {
		/* whole records, each as long as its type needs (raw-iter.h) */
		if (rec.type == RAW_SAMPLE) {
			struct raw_sample s;

			raw_sample_get(rec.data, rec.size, &s);
			st->samples++;
			st->wall_weight_ns += s.weight_ns;
			oom |= acct != NULL && raw_cpu_sample(acct, s.tid, s.weight_ns) < 0;
		} else if (rec.type == RAW_SAMPLE_REGS) {
			struct raw_sample_regs s;

			memcpy(&s, rec.data, sizeof(s));
			st->samples++;
			st->wall_weight_ns += s.weight_ns;
			oom |= acct != NULL && raw_cpu_sample(acct, s.tid, s.weight_ns) < 0;
		} else if (rec.type == RAW_HEAP_ALLOC) {
			struct raw_heap_alloc a;
			double rate = h->period_ns > 1 ? (double)h->period_ns : 1;

			memcpy(&a, rec.data, sizeof(a));
			st->samples++;
			st->heap_bytes += rate > 1 && a.size > 0 ? (double)a.size / -expm1(-(double)a.size / rate)
								  : (double)a.size;
		} else if (rec.type == RAW_THREAD) {
			struct raw_thread t = { 0 };

			memcpy(&t, rec.data, rec.size < sizeof(t) ? rec.size : sizeof(t));
			oom |= acct != NULL &&
			       raw_cpu_thread(acct, t.tid, rec.size >= sizeof(t), t.cpu_ns) < 0;
		} else if (rec.type == RAW_THREAD_EXIT) {
			struct raw_thread_exit t = { 0 };

			memcpy(&t, rec.data, rec.size < sizeof(t) ? rec.size : sizeof(t));
			oom |= acct != NULL && raw_cpu_exit(acct, t.tid, t.cpu_ns) < 0;
		} else if (rec.type == RAW_LOST) {
			struct raw_lost l = { 0 };

			memcpy(&l, rec.data, rec.size < sizeof(l) ? rec.size : sizeof(l));
			st->lost_records += l.count;
			if (l.error)
				st->lost_error = l.error;
		} else if (rec.type == RAW_END) {
			struct raw_end e;

			memcpy(&e, rec.data, sizeof(e));
			st->ended = 1;
			st->lost = e.lost;
		}
	}
	/* a record that is not whole: what follows is unreadable, and the
	 * file is left as it is */
	if (next < 0 || next == RAW_NEXT_BAD_SIZE || next == RAW_NEXT_CUT ||
	    next == RAW_NEXT_MALFORMED)
		st->bad = 1;
	off = raw_tail_offset(&tail);
	/* ended from a signal handler: the file was left at its mapped size */
	if (st->ended && off < size && collect_zeros(fd, off, size) == 1 &&
	    ftruncate(fd, (off_t)off) == 0)
		st->tail_cut = 1;
	if (!st->ended) {
		int zeros = off < size ? collect_zeros(fd, off, size) : 0;

		st->lost = st->lost_records;
		if (zeros == 1 && ftruncate(fd, (off_t)off) == 0)
			st->cut = 1;
		else if (off < size && zeros != 1)
			st->bad = 1;
	}
	if (acct != NULL && !oom) {
		raw_cpu_settle(acct, &st->cpu);
		/* a thread paused and resumed is one thread */
		st->threads = st->cpu.tids;
	}
	raw_cpu_free(acct);
	raw_tail_free(&tail);
	close(fd);
	return 0;
}

/* One trace of the run, as found by collect_find_traces, and what
 * collect_report makes of it. */
struct collect_trace {
	char name[PATH_MAX];
	char exe[64];         /* base name of the program */
	uint32_t pid, ppid;
	uint64_t start_mono;
	struct collect_stats st;
	int scanned;          /* st holds what collect_scan found */
	int execd;            /* the image ran another program */
	int keep;             /* a part of the run file */
	uint64_t size;        /* bytes of the trace, once scanned */
};

/* Reads the header of a trace.  Returns 0 or -1 (not a trace). */
static int collect_header(const char *path, struct collect_trace *t)
{
	struct raw_header h;
	char exe[PATH_MAX];
	const char *base;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = pread(fd, &h, sizeof(h), 0);
	if (n != (ssize_t)sizeof(h) || memcmp(h.magic, RAW_MAGIC, RAW_MAGIC_LEN) != 0) {
		close(fd);
		return -1;
	}
	n = raw_header_fixed_size(h.version) > 0
		    ? pread(fd, exe, sizeof(exe) - 1, raw_header_fixed_size(h.version))
		    : 0;
	close(fd);
	exe[n > 0 ? n : 0] = '\0';
	base = strrchr(exe, '/');
	snprintf(t->exe, sizeof(t->exe), "%.63s", base != NULL ? base + 1 : exe);
	t->pid = h.pid;
	t->ppid = h.ppid;
	t->start_mono = h.start_monotonic_ns;
	return 0;
}

/* Is name "<stem>.<digits>.raw" or "<stem>.<digits>.<digits>.raw"? */
static int collect_is_child_name(const char *name, const char *stem)
{
	size_t len = strlen(stem);
	int groups = 0;
	const char *p;

	if (strncmp(name, stem, len) != 0 || name[len] != '.')
		return 0;
	for (p = name + len; *p == '.' && p[1] >= '0' && p[1] <= '9'; groups++) {
		p++;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return groups >= 1 && groups <= 2 && strcmp(p, ".raw") == 0;
}

static int collect_trace_cmp(const void *a, const void *b)
{
	const struct collect_trace *x = a, *y = b;

	return x->start_mono < y->start_mono ? -1 : x->start_mono > y->start_mono;
}

/* Adds t to the array *v of *n (capacity *cap).  Returns 0 or -1. */
static int collect_trace_push(struct collect_trace **v, size_t *n, size_t *cap,
			      const struct collect_trace *t)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct collect_trace *nv = realloc(*v, c * sizeof(*nv));

		if (nv == NULL)
			return -1;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = *t;
	return 0;
}

/* The directory and the stem ("<name>" without ".raw") of the trace the
 * launcher created, which the other processes' traces are named after. */
static void collect_stem(const char *shown, char *dir, size_t dcap, char *stem, size_t scap)
{
	const char *slash = strrchr(shown, '/');

	if (slash != NULL) {
		snprintf(dir, dcap, "%.*s", (int)(slash - shown + (slash == shown)), shown);
		snprintf(stem, scap, "%s", slash + 1);
	} else {
		snprintf(dir, dcap, ".");
		snprintf(stem, scap, "%s", shown);
	}
	if (strlen(stem) > 4 && strcmp(stem + strlen(stem) - 4, ".raw") == 0)
		stem[strlen(stem) - 4] = '\0';
}

/* The traces next to shown that processes of the run write or wrote:
 * named after it, started after t0 (CLOCK_MONOTONIC), not yet in v[0..n).
 * Appended to *v in the order they started, each once its parent is
 * known: the program (pid) or the process of a trace already in v. */
static void collect_find_more(const char *shown, pid_t pid, uint64_t t0, struct collect_trace **v,
			      size_t *n, size_t *cap)
{
	char dir[PATH_MAX], stem[PATH_MAX];
	struct collect_trace *cand = NULL, t;
	size_t ncand = 0, capcand = 0;
	const char *slash = strrchr(shown, '/');
	struct dirent *de;
	int changed;
	DIR *d;

	collect_stem(shown, dir, sizeof(dir), stem, sizeof(stem));
	d = opendir(dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		int known = 0;

		if (!collect_is_child_name(de->d_name, stem))
			continue;
		memset(&t, 0, sizeof(t));
		if (snprintf(t.name, sizeof(t.name), "%s%s%s", slash != NULL ? dir : "",
			     slash != NULL && slash != shown ? "/" : "", de->d_name) >=
		    (int)sizeof(t.name))
			continue;
		for (size_t j = 1; j < *n && !known; j++)
			known = strcmp((*v)[j].name, t.name) == 0;
		if (known || collect_header(t.name, &t) != 0 || t.start_mono < t0)
			continue;
		if (collect_trace_push(&cand, &ncand, &capcand, &t) != 0)
			break;
	}
	closedir(d);
	/* parents start before their children: mostly one pass */
	if (ncand > 1)
		qsort(cand, ncand, sizeof(*cand), collect_trace_cmp);
	do {
		changed = 0;
		for (size_t i = 0; i < ncand; i++) {
			int known = cand[i].ppid == (uint32_t)pid || cand[i].pid == (uint32_t)pid;

			if (cand[i].pid == 0)
				continue;
			for (size_t j = *n; j-- > 0 && !known;)
				known = cand[i].pid == (*v)[j].pid || cand[i].ppid == (*v)[j].pid;
			if (!known)
				continue;
			if (collect_trace_push(v, n, cap, &cand[i]) != 0)
				break;
			cand[i].pid = 0;
			changed = 1;
		}
	} while (changed);
	free(cand);
	qsort(*v + 1, *n - 1, sizeof(**v), collect_trace_cmp);
}

/* Finds the traces of the run: shown itself, then, unless !inherit, those
 * next to it of the program's descendants, by start time.  Returns how
 * many in *out (malloc'd), 0 when out of memory. */
static size_t collect_find_traces(const char *shown, pid_t pid, uint64_t t0, int inherit,
				  struct collect_trace **out)
{
	struct collect_trace *v = calloc(1, sizeof(*v));
	size_t n = 1, cap = 1;

	*out = v;
	if (v == NULL)
		return 0;
	snprintf(v[0].name, sizeof(v[0].name), "%s", shown);
	if (collect_header(shown, &v[0]) != 0) {
		v[0].pid = (uint32_t)pid;
		v[0].start_mono = 0;
		v[0].exe[0] = '\0';
	}
	if (inherit)
		collect_find_more(shown, pid, t0, out, &n, &cap);
	return n;
}

/* What samples stand for, in buf: the time of clock ns ("1.2 s of CPU"),
 * or a heap trace's bytes ("about 12.3 MiB allocated"). */
static void collect_weight_say(char *buf, size_t n, uint32_t clock, uint64_t ns, double bytes)
{
	static const char *const unit[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	char w[32];
	int u = 0;

	if (clock == RAW_CLOCK_HEAP) {
		while (bytes >= 1024 && u < 4) {
			bytes /= 1024;
			u++;
		}
		snprintf(buf, n, "about %.*f %s allocated", u ? 1 : 0, bytes, unit[u]);
		return;
	}
	pv_format_duration(w, sizeof(w), (int64_t)ns);
	snprintf(buf, n, "%s of %s", w, clock == RAW_CLOCK_WALL ? "wall-clock time" : "CPU");
}

/* The summary line of a trace cut into segments (--split). */
static void collect_report_segments(const struct seg *seg, const char *who, int quiet)
{
	char weight[64], say[512], cause[512], first[PATH_MAX + 32], last[PATH_MAX + 32];
	char where[3 * PATH_MAX], failed[96] = "", from[32], to[32];
	struct seg_summary s;
	size_t k = 0;

	seg_summary(seg, &s);
	if (quiet && !s.bad && !s.failed)
		return;
	/* (a heap trace's weights are bytes) */
	collect_weight_say(weight, sizeof(weight), s.clock, s.weight_ns, (double)s.weight_ns);
	cause[0] = '\0';
	if (s.failed) {
		const char *why = raw_lost_cause((uint32_t)s.failed_error);

		pv_format_duration(from, sizeof(from), (int64_t)s.failed_from_ns);
		pv_format_duration(to, sizeof(to), (int64_t)s.failed_to_ns);
		if (s.failed_first == s.failed_last)
			k = (size_t)snprintf(cause, sizeof(cause), " (%" PRIu64 " in segment %" PRIu64,
					     s.failed_samples, s.failed_first);
		else
			k = (size_t)snprintf(cause, sizeof(cause), " (%" PRIu64 " in segments %" PRIu64
					     " to %" PRIu64, s.failed_samples, s.failed_first,
					     s.failed_last);
		k += (size_t)snprintf(cause + k, sizeof(cause) - k, ", %s to %s of the run, that could "
				      "not be written%s%s", from, to, why ? ": " : "", why ? why : "");
	}
	if (s.lost > s.failed_samples && raw_lost_cause(s.lost_error) && k < sizeof(cause))
		k += (size_t)snprintf(cause + k, sizeof(cause) - k, "%sthe trace could not grow: %s",
				      k ? "; " : " (", raw_lost_cause(s.lost_error));
	if (k && k < sizeof(cause) - 1)
		snprintf(cause + k, sizeof(cause) - k, ")");
	seg_name(seg, s.first, first, sizeof(first));
	seg_name(seg, s.last, last, sizeof(last));
	if (s.segments == 0)
		snprintf(where, sizeof(where), "no segment could be written");
	else if (s.segments == 1)
		snprintf(where, sizeof(where), "written to 1 segment, '%s'", last);
	else if (s.first == s.last)
		snprintf(where, sizeof(where), "written to %" PRIu64 " segments, the last kept: '%s'",
			 s.segments, last);
	else if (s.last - s.first + 1 < s.segments)
		snprintf(where, sizeof(where), "written to %" PRIu64 " segments, the last %" PRIu64
			 " kept: '%s' to '%s'", s.segments, s.last - s.first + 1, first, last);
	else
		snprintf(where, sizeof(where), "written to %" PRIu64 " segments, '%s' to '%s'",
			 s.segments, first, last);
	if (s.failed)
		snprintf(failed, sizeof(failed), "; %" PRIu64 " segment%s could not be written",
			 s.failed, s.failed == 1 ? "" : "s");
	fprintf(stderr, COLLECT_NAME ": %s%" PRIu64 " sample%s (%s), %" PRIu64
		" thread%s, %" PRIu64 " lost%s, %s%s%s%s\n",
		who, s.samples, s.samples == 1 ? "" : "s", weight, s.threads,
		s.threads == 1 ? "" : "s", s.lost, cause, where, failed,
		s.finished ? "" : "; the program ended without running its exit handlers, "
				  "the last segment stops at its last complete record",
		s.bad ? "; unreadable data after the last good record" : "");
	/* (counted by segment: a thread alive in ten segments is ten there) */
	if (s.clock == RAW_CLOCK_CPU &&
	    raw_cpu_unsampled_say(say, sizeof(say), s.unsampled_ns, s.cpu_ns,
				  s.unsampled_threads < s.threads ? s.unsampled_threads : s.threads,
				  s.threads, s.lost))
		fprintf(stderr, COLLECT_NAME ": %s%s\n", who, say);
}

/* The summary line of one trace, as it was before runs were joined: its
 * samples, threads, losses and where it is; then the CPU time in no
 * sample when there is much.  where: "written to 'NAME'" or the like. */
static void collect_say_trace(const struct collect_trace *t, const char *who, const char *where)
{
	const struct collect_stats *st = &t->st;
	char weight[64], say[512], cause[160];

	collect_weight_say(weight, sizeof(weight), st->clock,
			   st->clock == RAW_CLOCK_WALL ? st->wall_weight_ns : st->cpu.weight_ns, st->heap_bytes);
	if (st->lost && raw_lost_cause(st->lost_error))
		snprintf(cause, sizeof(cause), " (the trace could not grow: %s)",
			 raw_lost_cause(st->lost_error));
	else
		cause[0] = '\0';
	fprintf(stderr, COLLECT_NAME ": %s%" PRIu64 " sample%s (%s), %" PRIu64
		" thread%s, %" PRIu64 " lost%s, %s%s%s\n",
		who, st->samples, st->samples == 1 ? "" : "s", weight,
		st->threads, st->threads == 1 ? "" : "s", st->lost, cause, where,
		st->ended ? "" : t->execd ? "; then the process ran another program"
			   : "; the program ended without running its exit handlers, "
			     "the trace stops at its last complete record",
		st->bad ? "; unreadable data after the last good record" : "");
	if (st->clock == RAW_CLOCK_CPU &&
	    raw_cpu_unsampled_say(say, sizeof(say), st->cpu.unsampled_cpu_ns, st->cpu.cpu_ns,
				  st->cpu.unsampled_threads, st->cpu.threads, st->lost))
		fprintf(stderr, COLLECT_NAME ": %s%s\n", who, say);
}

/* Copies the len bytes of the file at path into fd at offset off.
 * Returns 0 or -1. */
static int collect_copy(int fd, uint64_t off, const char *path, uint64_t len)
{
	int in = open(path, O_RDONLY | O_CLOEXEC);
	loff_t from = 0, to = (loff_t)off;
	char buf[65536];

	if (in < 0)
		return -1;
	while ((uint64_t)from < len) {
		size_t want = len - (uint64_t)from < (1u << 30) ? (size_t)(len - (uint64_t)from) : (1u << 30);
		ssize_t n = copy_file_range(in, &from, fd, &to, want, 0);

		if (n > 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			break; /* shorter than it was */
		/* not between these file systems: by hand */
		n = pread(in, buf, want < sizeof(buf) ? want : sizeof(buf), from);
		if (n <= 0 || pwrite(fd, buf, (size_t)n, to) != n)
			break;
		from += n;
		to += n;
	}
	close(in);
	return (uint64_t)from == len ? 0 : -1;
}

/* Joins the kept traces of v into one run file at shown (raw.h): in place
 * after the program's own trace when it is kept, else in a new file put
 * in its place.  Nothing to do for one trace that ran no other program.
 * Returns 0, or -1 with a message (the traces are then left as they are). */
static int collect_join(const char *shown, const struct collect_trace *v, size_t n)
{
	struct raw_run_footer foot = { 0 };
	struct raw_run_part *idx;
	char tmp[PATH_MAX + 16];
	size_t nkeep = 0, m = 0;
	uint64_t off = 0;
	int fd, inplace = v[0].keep, ok = 1;

	for (size_t k = 0; k < n; k++)
		nkeep += v[k].keep != 0;
	if (nkeep == 0 || (nkeep == 1 && v[0].keep && !v[0].execd))
		return 0;
	idx = calloc(nkeep, sizeof(*idx));
	if (idx == NULL) {
		collect_msg("cannot join the traces of the run: out of memory");
		return -1;
	}
	if (inplace) {
		fd = open(shown, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	} else {
		snprintf(tmp, sizeof(tmp), "%s.joining", shown);
		unlink(tmp);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, PV_OUTFILE_TRACE_MODE);
	}
	if (fd < 0) {
		collect_msg("cannot join the traces of the run into '%s': %s", shown, strerror(errno));
		free(idx);
		return -1;
	}
	for (size_t k = 0; k < n && ok; k++) {
		if (!v[k].keep)
			continue;
		off = (off + RAW_RUN_ALIGN - 1) / RAW_RUN_ALIGN * RAW_RUN_ALIGN;
		if (!(inplace && k == 0))
			ok = collect_copy(fd, off, v[k].name, v[k].size) == 0;
		idx[m].offset = inplace && k == 0 ? 0 : off;
		idx[m].length = v[k].size;
		idx[m].pid = v[k].pid;
		idx[m].flags = v[k].execd ? RAW_RUN_EXECD : 0;
		off = idx[m].offset + v[k].size;
		m++;
	}
	off = (off + 7) / 8 * 8;
	foot.index_offset = off;
	foot.nparts = (uint32_t)m;
	memcpy(foot.magic, RAW_RUN_MAGIC, RAW_MAGIC_LEN);
	if (ok)
		ok = pwrite(fd, idx, m * sizeof(*idx), (off_t)off) == (ssize_t)(m * sizeof(*idx)) &&
		     pwrite(fd, &foot, sizeof(foot), (off_t)(off + m * sizeof(*idx))) ==
			     (ssize_t)sizeof(foot) &&
		     ftruncate(fd, (off_t)(off + m * sizeof(*idx) + sizeof(foot))) == 0;
	if (!ok) {
		collect_msg("cannot join the traces of the run into '%s': %s; they are left apart",
			    shown, strerror(errno));
		if (inplace && ftruncate(fd, (off_t)v[0].size) != 0) {
			/* the index is missing: the file reads as its first trace */
		}
	}
	close(fd);
	if (ok && !inplace && rename(tmp, shown) != 0) {
		collect_msg("cannot put the run in place of '%s': %s", shown, strerror(errno));
		ok = 0;
	}
	if (!ok && !inplace)
		unlink(tmp);
	free(idx);
	return ok ? 0 : -1;
}

static int collect_weight_cmp(const void *a, const void *b)
{
	const struct collect_trace *x = *(const struct collect_trace *const *)a;
	const struct collect_trace *y = *(const struct collect_trace *const *)b;
	uint64_t wx = x->st.cpu.weight_ns + x->st.wall_weight_ns * (x->st.clock == RAW_CLOCK_WALL);
	uint64_t wy = y->st.cpu.weight_ns + y->st.wall_weight_ns * (y->st.clock == RAW_CLOCK_WALL);

	if (wx != wy)
		return wx < wy ? 1 : -1;
	return x->st.samples < y->st.samples ? 1 : x->st.samples > y->st.samples ? -1 : 0;
}

/* The summary of a run of several processes: the processes with samples,
 * each one line (the COLLECT_SHOWN with the most time when there are more),
 * then the totals, what was lost and why, and the CPU time in no
 * sample. */
static void collect_say_run(const char *shown, struct collect_trace *v, size_t n, int joined)
{
	const struct collect_trace **kept = calloc(n, sizeof(*kept));
	uint64_t samples = 0, lost = 0, weight = 0, cpu = 0, unsampled = 0, threads = 0;
	double bytes = 0;
	uint64_t unsampled_threads = 0, killed = 0, silent = 0, silent_cpu = 0, sthreads = 0;
	size_t nkept = 0, nproc = 0, shown_n;
	const char *cause = NULL;
	char w[64], u[32], c[32], more[96] = "", lostsay[192] = "", killsay[160] = "";
	int wall = 0, heap = 0;

	if (kept == NULL)
		return;
	for (size_t k = 0; k < n; k++) {
		const struct collect_stats *st = &v[k].st;

		if (!v[k].scanned || st->empty || st->foreign)
			continue;
		nproc++;
		wall |= st->clock == RAW_CLOCK_WALL;
		heap |= st->clock == RAW_CLOCK_HEAP;
		bytes += st->heap_bytes;
		samples += st->samples;
		lost += st->lost;
		if (st->lost && raw_lost_cause(st->lost_error) && cause == NULL)
			cause = raw_lost_cause(st->lost_error);
		weight += st->clock == RAW_CLOCK_WALL ? st->wall_weight_ns : st->cpu.weight_ns;
		cpu += st->cpu.cpu_ns;
		threads += st->cpu.threads;
		if (st->samples == 0) {
			silent++;
			silent_cpu += st->cpu.cpu_ns;
			continue;
		}
		unsampled += st->cpu.unsampled_cpu_ns;
		unsampled_threads += st->cpu.unsampled_threads;
		sthreads += st->cpu.threads;
		if (!st->ended && !v[k].execd)
			killed++;
		if (v[k].keep)
			kept[nkept++] = &v[k];
	}
	qsort(kept, nkept, sizeof(*kept), collect_weight_cmp);
	shown_n = nkept <= COLLECT_SHOWN + 1 ? nkept : COLLECT_SHOWN;
	for (size_t i = 0; i < shown_n; i++) {
		const struct collect_stats *st = &kept[i]->st;

		if (st->clock == RAW_CLOCK_HEAP)
			collect_weight_say(w, sizeof(w), st->clock, 0, st->heap_bytes);
		else
			pv_format_duration(w, sizeof(w),
					   (int64_t)(st->clock == RAW_CLOCK_WALL ? st->wall_weight_ns
										: st->cpu.weight_ns));
		fprintf(stderr, COLLECT_NAME ": pid %u (%s): %" PRIu64 " sample%s (%s), %" PRIu64
			" thread%s%s\n", kept[i]->pid, kept[i]->exe, st->samples,
			st->samples == 1 ? "" : "s", w, st->threads, st->threads == 1 ? "" : "s",
			st->ended || kept[i]->execd ? "" : "; killed: its trace stops at its last "
							   "complete record");
	}
	if (shown_n < nkept)
		snprintf(more, sizeof(more), " (%zu more not listed; -v lists every one)",
			 nkept - shown_n);
	if (lost)
		snprintf(lostsay, sizeof(lostsay), ", %" PRIu64 " lost%s%s%s", lost,
			 cause ? " (a trace could not grow: " : "", cause ? cause : "", cause ? ")" : "");
	if (killed > 1 || (killed == 1 && shown_n < nkept))
		snprintf(killsay, sizeof(killsay), "; %" PRIu64 " %s killed before their end",
			 killed, killed == 1 ? "was" : "were");
	collect_weight_say(w, sizeof(w), heap ? RAW_CLOCK_HEAP : wall ? RAW_CLOCK_WALL : RAW_CLOCK_CPU,
			   weight, bytes);
	fprintf(stderr, COLLECT_NAME ": %zu process%s, %zu with samples%s: %" PRIu64 " sample%s "
		"(%s)%s, %s '%s'%s\n", nproc, nproc == 1 ? "" : "es", nkept, more, samples,
		samples == 1 ? "" : "s", w, lostsay,
		joined ? "written to" : "the first in", shown, killsay);
	unsampled += silent_cpu;
	if (!wall && !heap && cpu > 0 && unsampled * 100 > cpu) {
		pv_format_duration(u, sizeof(u), (int64_t)unsampled);
		pv_format_duration(c, sizeof(c), (int64_t)cpu);
		char said[320] = "";

		if (silent > 0)
			snprintf(said, sizeof(said), "%" PRIu64 " process%s that ended before %s first "
				 "sample", silent, silent == 1 ? "" : "es", silent == 1 ? "its" : "their");
		if (unsampled_threads > 0)
			snprintf(said + strlen(said), sizeof(said) - strlen(said), "%s%" PRIu64 " of the %"
				 PRIu64 " threads of the others, never sampled", silent ? ", and of " : "",
				 unsampled_threads, sthreads);
		pv_format_duration(u, sizeof(u), (int64_t)unsampled);
		pv_format_duration(c, sizeof(c), (int64_t)cpu);
		fprintf(stderr, COLLECT_NAME ": %s of the %s of CPU time the processes used (%.1f%%) "
			"is in no sample: that of %s (see ACCURACY in collect-timer(1))\n", u, c,
			100.0 * (double)unsampled / (double)cpu, said);
	}
	free(kept);
}

/* Reports the run (see collect_find_traces) and makes one file of it:
 * the traces with samples joined into shown (collect_join), the others
 * removed.  One trace alone is said as it is; a run of several in one
 * summary (collect_say_run), each trace as it is with verbose.  seg: the
 * program's trace was cut into segments (--split), which seg says; the
 * other processes' traces are joined into shown then.  Returns 1 when
 * shown holds them, else 0. */
static int collect_report(const char *shown, pid_t pid, uint64_t t0, int inherit, int quiet,
			  int verbose, const struct seg *seg)
{
	struct collect_trace *v;
	size_t n = collect_find_traces(shown, pid, t0, inherit, &v);
	size_t nkeep = 0;
	int joined;

	if (n == 0) {
		collect_msg("cannot list the traces of the run: out of memory; the trace is '%s'",
			    shown);
		free(v);
		return 0;
	}
	for (size_t k = 0; k < n; k++) {
		struct collect_trace *t = &v[k];
		struct stat sb;

		for (size_t j = 0; j < n; j++)
			t->execd |= j != k && v[j].pid == t->pid && v[j].start_mono > t->start_mono;
		if (k == 0 && seg != NULL)
			continue;
		if (collect_scan(t->name, &t->st) != 0) {
			if (k == 0)
				collect_msg("cannot read '%s': %s", t->name, strerror(errno));
			continue;
		}
		t->scanned = 1;
		if (t->st.foreign) {
			char say[256];

			collect_msg("'%s': %s", t->name, raw_iter_machine_say(say, sizeof(say),
									     t->st.machine));
			continue;
		}
		t->size = stat(t->name, &sb) == 0 ? (uint64_t)sb.st_size : 0;
		t->keep = !t->st.empty && t->st.samples > 0 && t->size > 0;
		nkeep += t->keep != 0;
	}
	/* the run's entry: the program's trace, even without a sample */
	if (nkeep == 0 && seg == NULL && v[0].scanned && !v[0].st.empty && !v[0].st.foreign)
		v[0].keep = 1;
	if (n == 1 && seg == NULL) {
		if (v[0].scanned && v[0].st.empty) {
			if (unlink(shown) == 0 && !quiet)
				collect_msg("no profile was recorded; removed the empty '%s'", shown);
		} else if (v[0].scanned && !v[0].st.foreign && (!quiet || v[0].st.bad)) {
			char where[PATH_MAX + 16];

			snprintf(where, sizeof(where), "written to '%s'", shown);
			collect_say_trace(&v[0], "", where);
		}
		free(v);
		return 0;
	}
	if (seg != NULL) {
		const char *exe = strrchr(seg_program(seg), '/');
		char who[128] = "";

		if (n > 1)
			snprintf(who, sizeof(who), "pid %u (%.63s): ", v[0].pid,
				 exe != NULL ? exe + 1 : seg_program(seg));
		collect_report_segments(seg, who, quiet);
		if (n == 1) {
			free(v);
			return 0;
		}
	}
	joined = collect_join(shown, v, n) == 0;
	for (size_t k = 0; k < n && verbose; k++) {
		char who[128], where[PATH_MAX + 64];

		if (!v[k].scanned || v[k].st.foreign || (k == 0 && seg != NULL))
			continue;
		snprintf(who, sizeof(who), "pid %u (%s): ", v[k].pid, v[k].exe);
		if (v[k].keep && joined)
			snprintf(where, sizeof(where), "in '%s'", shown);
		else if (v[k].keep)
			snprintf(where, sizeof(where), "written to '%s'", v[k].name);
		else
			snprintf(where, sizeof(where), "not kept");
		collect_say_trace(&v[k], who, where);
	}
	/* what is joined, or holds nothing, goes */
	for (size_t k = 1; k < n; k++)
		if (v[k].scanned && !v[k].st.foreign && (joined || !v[k].keep))
			unlink(v[k].name);
	if (!quiet)
		collect_say_run(shown, v, n, joined);
	joined = joined && nkeep > 0;
	free(v);
	return joined;
}

static volatile pid_t collect_child_pid;  /* the program, until reaped */
static volatile sig_atomic_t collect_forward_sig;
static struct collect_control *collect_word; /* the run's control word */
static int collect_control_sig;

/* Makes the run's control word (collect-env.h): memory of ours that every
 * process of the run opens by its /proc path and maps.  path gets it, or
 * "" when it cannot be made (then the control signal sent to us goes to
 * the program alone). */
static void collect_make_word(char *path, size_t cap)
{
	int fd = memfd_create("profview-control", MFD_CLOEXEC);
	void *p = MAP_FAILED;

	path[0] = '\0';
	if (fd < 0)
		return;
	if (ftruncate(fd, COLLECT_CONTROL_SIZE) == 0)
		p = mmap(NULL, COLLECT_CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return;
	}
	collect_word = p;
	snprintf(path, cap, "/proc/%d/fd/%d", (int)getpid(), fd);
}

/* SIGTERM, SIGHUP and the control signal from a process are for the
 * program.  A SIGHUP from the kernel (the terminal hung up) reached the
 * program already. */
static void collect_on_signal(int sig, siginfo_t *si, void *uc)
{
	pid_t child = collect_child_pid;

	(void)uc;
	if (si->si_code > 0)
		return;
	if (sig == collect_control_sig && collect_word != NULL) {
		/* a pause or resume for every process of the run */
		atomic_fetch_add(&collect_word->requests, 1);
		syscall(SYS_futex, (void *)&collect_word->requests, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
		return;
	}
	collect_forward_sig = sig;
	if (child > 0)
		kill(child, sig);
}

/* Passes sig on to every child of ours (the program's descendants that
 * lost their parent). */
static void collect_forward_children(int sig)
{
	char path[64], buf[4096], *p, *e;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	for (p = buf;; p = e) {
		long c = strtol(p, &e, 10);

		if (e == p)
			break;
		if (c > 0)
			kill((pid_t)c, sig);
	}
}

static uint64_t collect_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- --split for every process of the run ----
 *
 * The traces of the program's descendants are found as they appear (as
 * collect_find_more finds them at the end), each cut by a seg of its own
 * numbered after the program's start (segments.h), and once every
 * process is past a window, the window's segments are joined into one run
 * (raw.h) in place of the program's segment: a segment then holds every
 * process's samples of its window while the processes run. */

struct collect_kid {
	char name[PATH_MAX];
	struct seg *seg;
	int ended;
};

struct collect_runseg {
	struct seg *root;
	const char *shown;
	pid_t pid;
	uint64_t t0;              /* collect-timer's start (collect_find_more) */
	uint64_t split_ns;
	unsigned keep;
	struct collect_trace *found; /* [0] the program's, then the others' */
	size_t nfound, capfound;
	struct collect_kid *kids;
	size_t nkids, capkids;
	uint64_t joined;          /* segments 1..joined are joined */
	int failed;               /* a join failed: said once */
};

static struct collect_runseg *collect_runseg_new(struct seg *root, const char *shown, pid_t pid,
						 uint64_t t0, double split, long keep)
{
	struct collect_runseg *rs = calloc(1, sizeof(*rs));

	if (rs == NULL)
		return NULL;
	rs->found = calloc(1, sizeof(*rs->found));
	if (rs->found == NULL) {
		free(rs);
		return NULL;
	}
	rs->root = root;
	rs->shown = shown;
	rs->pid = pid;
	rs->t0 = t0;
	rs->split_ns = (uint64_t)(split * 1e9);
	rs->keep = (unsigned)keep;
	rs->nfound = rs->capfound = 1;
	snprintf(rs->found[0].name, sizeof(rs->found[0].name), "%s", shown);
	rs->found[0].pid = (uint32_t)pid;
	return rs;
}

/* Starts a seg for every trace of the run that has none yet. */
static void collect_runseg_scan(struct collect_runseg *rs)
{
	uint64_t t0, n;

	if (!seg_where(rs->root, &t0, &n))
		return; /* the program's trace comes first */
	collect_find_more(rs->shown, rs->pid, rs->t0, &rs->found, &rs->nfound, &rs->capfound);
	for (size_t k = 1; k < rs->nfound; k++) {
		struct collect_kid *kid;
		int known = 0;

		for (size_t j = 0; j < rs->nkids && !known; j++)
			known = strcmp(rs->kids[j].name, rs->found[k].name) == 0;
		if (known)
			continue;
		if (rs->nkids == rs->capkids) {
			size_t c = rs->capkids ? rs->capkids * 2 : 16;
			struct collect_kid *v = realloc(rs->kids, c * sizeof(*v));

			if (v == NULL)
				return;
			rs->kids = v;
			rs->capkids = c;
		}
		kid = &rs->kids[rs->nkids];
		memset(kid, 0, sizeof(*kid));
		snprintf(kid->name, sizeof(kid->name), "%s", rs->found[k].name);
		kid->seg = seg_new(kid->name, rs->split_ns, rs->keep, collect_msg);
		if (kid->seg == NULL)
			return;
		/* the trace is joined whole into the run's file at the end */
		seg_align(kid->seg, t0, rs->joined + 1, 0);
		rs->nkids++;
	}
}

/* Joins segment m of every process into the program's segment m.
 * Returns 0, or -1 (the segments are left as they are). */
static int collect_runseg_join(struct collect_runseg *rs, uint64_t m)
{
	char name[PATH_MAX + 32], tmp[PATH_MAX + 48], part[PATH_MAX + 32];
	struct raw_run_part *idx;
	struct raw_run_footer foot = { 0 };
	size_t np = 0, cap = rs->nkids + 1;
	uint64_t off = 0;
	struct stat sb;
	int fd, ok = 1;

	seg_name(rs->root, m, name, sizeof(name));
	for (size_t j = 0; j < rs->nkids; j++)
		if (stat(seg_name(rs->kids[j].seg, m, part, sizeof(part)), &sb) == 0)
			np++;
	if (np == 0)
		return 0; /* the program's alone: as it is */
	idx = calloc(cap, sizeof(*idx));
	if (idx == NULL)
		return -1;
	snprintf(tmp, sizeof(tmp), "%s.joining", name);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, PV_OUTFILE_TRACE_MODE);
	if (fd < 0) {
		free(idx);
		return -1;
	}
	np = 0;
	for (size_t j = 0; j <= rs->nkids && ok; j++) {
		struct collect_trace t;

		if (j == 0)
			snprintf(part, sizeof(part), "%s", name);
		else
			seg_name(rs->kids[j - 1].seg, m, part, sizeof(part));
		if (stat(part, &sb) != 0 || collect_header(part, &t) != 0)
			continue;
		off = (off + RAW_RUN_ALIGN - 1) / RAW_RUN_ALIGN * RAW_RUN_ALIGN;
		ok = collect_copy(fd, off, part, (uint64_t)sb.st_size) == 0;
		idx[np].offset = off;
		idx[np].length = (uint64_t)sb.st_size;
		idx[np].pid = t.pid;
		np++;
		off += (uint64_t)sb.st_size;
	}
	off = (off + 7) / 8 * 8;
	foot.index_offset = off;
	foot.nparts = (uint32_t)np;
	memcpy(foot.magic, RAW_RUN_MAGIC, RAW_MAGIC_LEN);
	ok = ok && np > 0 &&
	     pwrite(fd, idx, np * sizeof(*idx), (off_t)off) == (ssize_t)(np * sizeof(*idx)) &&
	     pwrite(fd, &foot, sizeof(foot), (off_t)(off + np * sizeof(*idx))) == (ssize_t)sizeof(foot);
	ok = close(fd) == 0 && ok;
	free(idx);
	if (!ok || rename(tmp, name) != 0) {
		unlink(tmp);
		return -1;
	}
	for (size_t j = 0; j < rs->nkids; j++)
		unlink(seg_name(rs->kids[j].seg, m, part, sizeof(part)));
	return 0;
}

/* Joins the windows every process is past (all, with force). */
static void collect_runseg_joins(struct collect_runseg *rs, uint64_t now, int force)
{
	struct seg_summary sum;
	uint64_t t0, n, last = 0;

	if (!seg_where(rs->root, &t0, &n))
		return;
	seg_summary(rs->root, &sum);
	last = sum.ended ? sum.last : n - 1;
	for (size_t j = 0; j < rs->nkids; j++) {
		uint64_t kt0, kn;

		if (!seg_where(rs->kids[j].seg, &kt0, &kn))
			continue;
		seg_summary(rs->kids[j].seg, &sum);
		if (force || sum.ended) {
			if (sum.last > last)
				last = sum.last;
		} else if (kn - 1 < last) {
			last = kn - 1;
		}
	}
	/* a process that started late in a window is found a poll or two
	 * after its start */
	while (rs->joined < last &&
	       (force || now >= t0 + (rs->joined + 1) * rs->split_ns + 5 * COLLECT_POLL_NS)) {
		if (collect_runseg_join(rs, rs->joined + 1) != 0 && !rs->failed) {
			rs->failed = 1;
			collect_msg("cannot join the processes' segments %" PRIu64 ": %s; they are "
				    "left apart", rs->joined + 1, strerror(errno));
		}
		rs->joined++;
	}
}

static void collect_runseg_poll(struct collect_runseg *rs, uint64_t now)
{
	collect_runseg_scan(rs);
	for (size_t j = 0; j < rs->nkids; j++)
		if (!rs->kids[j].ended)
			rs->kids[j].ended = seg_poll(rs->kids[j].seg, now);
	collect_runseg_joins(rs, now, 0);
}

/* Every process has ended: the rest of every trace, and every window. */
static void collect_runseg_finish(struct collect_runseg *rs)
{
	collect_runseg_scan(rs);
	for (size_t j = 0; j < rs->nkids; j++)
		seg_finish(rs->kids[j].seg);
	collect_runseg_joins(rs, 0, 1);
}

static void collect_runseg_free(struct collect_runseg *rs)
{
	if (rs == NULL)
		return;
	for (size_t j = 0; j < rs->nkids; j++)
		seg_free(rs->kids[j].seg);
	free(rs->kids);
	free(rs->found);
	free(rs);
}

/* Waits for the program; with seg, reads its trace (at live) into
 * segments meanwhile, every COLLECT_POLL_NS, and removes it once it has
 * ended (--duration), all of it in the segments, while the program runs
 * on; with rs, the other processes' traces too.  Returns 0, or -1 with a
 * message. */
static int collect_wait_program(pid_t pid, struct seg *seg, struct collect_runseg *rs,
				const char *live, int *status)
{
	int ended = seg == NULL;

	for (;;) {
		pid_t w = waitpid(pid, status, ended && rs == NULL ? 0 : WNOHANG);
		struct timespec ts = { 0, COLLECT_POLL_NS };

		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR) {
			collect_msg("cannot wait for the program: %s", strerror(errno));
			return -1;
		}
		if (w == 0) {
			uint64_t now = collect_now();

			if (!ended) {
				ended = seg_poll(seg, now);
				if (ended)
					unlink(live);
			}
			if (rs != NULL)
				collect_runseg_poll(rs, now);
			nanosleep(&ts, NULL);
		}
	}
}

/* Waits for the descendants left when the program has ended; with rs,
 * cuts their traces into segments meanwhile. */
static void collect_wait_rest(struct collect_runseg *rs)
{
	for (;;) {
		int sig = collect_forward_sig;
		pid_t w;

		if (sig != 0) {
			collect_forward_sig = 0;
			collect_forward_children(sig);
		}
		w = waitpid(-1, NULL, rs != NULL ? WNOHANG : 0);
		if (w < 0 && errno != EINTR)
			break;
		if (w == 0) {
			struct timespec ts = { 0, COLLECT_POLL_NS };

			collect_runseg_poll(rs, collect_now());
			nanosleep(&ts, NULL);
		}
	}
}

int main(int argc, char **argv)
{
	struct collect_opts o = { 0 };
	struct seg *seg = NULL;
	struct collect_runseg *rs = NULL;
	struct seg_summary sum;
	char prog[PATH_MAX], lib[PATH_MAX], shown[PATH_MAX + 2];
	ssize_t n, got = 0;
	int rc, pipefd[2], status, others = 0;
	struct sigaction sa;
	struct timespec t0;
	sigset_t hold, entry, dfl;
	pid_t pid;

	/* The default control signal waits from the first thing we do (see
	 * below); the one named is known after the options. */
	sigemptyset(&dfl);
	sigaddset(&dfl, COLLECT_CONTROL_DEFAULT);
	sigprocmask(SIG_BLOCK, &dfl, &entry);
	rc = collect_parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.control != COLLECT_CONTROL_DEFAULT && sigismember(&entry, COLLECT_CONTROL_DEFAULT) == 0)
		sigprocmask(SIG_UNBLOCK, &dfl, NULL);
	rc = collect_resolve(o.argv[0], prog, sizeof(prog));
	if (rc != 0)
		return rc;
	if (collect_check_binary(prog) != 0 || collect_find_preload(lib, sizeof(lib)) != 0)
		return COLLECT_EXIT_FAIL;
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		collect_msg("cannot create a pipe: %s", strerror(errno));
		return COLLECT_EXIT_FAIL;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Descendants whose parent ends become ours, so that we can wait
	 * for them (and their traces). */
	if (!o.no_inherit)
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = collect_on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	/* The control signal may come at any time, even before we or the
	 * program's library have a handler for it: it waits, blocked, until
	 * then (in the program, until the library's constructor unblocks it),
	 * rather than meet its default action, which kills.  One the user
	 * blocks already is left as it is. */
	if (o.control != 0 && sigismember(&entry, o.control) == 0) {
		sigemptyset(&hold);
		sigaddset(&hold, o.control);
		o.held = sigprocmask(SIG_BLOCK, &hold, NULL) == 0;
	}
	if (o.control != 0)
		collect_make_word(o.word, sizeof(o.word));
	collect_control_sig = o.control;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		collect_msg("cannot fork: %s", strerror(errno));
		return COLLECT_EXIT_FAIL;
	}
	if (pid == 0) {
		close(pipefd[0]);
		collect_child(&o, prog, lib, pipefd[1]);
	}
	close(pipefd[1]);
	/* Like time(1): a ^C or ^\ is for the program. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	collect_child_pid = pid;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* so that it can be sent to collect-timer too */
	if (o.control != 0 && o.control != SIGINT && o.control != SIGQUIT)
		sigaction(o.control, &sa, NULL);
	if (o.held)
		sigprocmask(SIG_UNBLOCK, &hold, NULL);
	while (got < (ssize_t)sizeof(shown) - 1 &&
	       ((n = read(pipefd[0], shown + got, sizeof(shown) - 1 - (size_t)got)) > 0 ||
		(n < 0 && errno == EINTR)))
		got += n > 0 ? n : 0;
	close(pipefd[0]);
	shown[got] = '\0';
	if (o.split > 0 && got > 0 && (size_t)got == strlen(shown) + 1) {
		seg = seg_new(shown, (uint64_t)(o.split * 1e9), (unsigned)o.keep, collect_msg);
		if (seg != NULL)
			seg_clear_old(seg);
		else
			collect_msg("cannot cut the trace into segments: out of memory; it is written "
				    "whole to '%s'", shown);
	}
	if (seg != NULL && !o.no_inherit)
		rs = collect_runseg_new(seg, shown, pid,
					(uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec,
					o.split, o.keep);
	if (collect_wait_program(pid, seg, rs, shown, &status) != 0)
		return COLLECT_EXIT_FAIL;
	collect_child_pid = 0;
	if (seg != NULL) {
		seg_finish(seg);
		seg_summary(seg, &sum);
		if (!sum.started) {
			/* no trace was written at all: said as without --split */
			seg_free(seg);
			seg = NULL;
		}
	}
	if (!o.no_inherit)
		collect_wait_rest(seg != NULL ? rs : NULL);
	if (rs != NULL && seg != NULL)
		collect_runseg_finish(rs);
	collect_runseg_free(rs);
	if (got > 0 && (size_t)got > strlen(shown) + 1) {
		/* exec failed: the child said why; no trace to speak of */
		unlink(shown);
	} else if (got > 0) {
		others = collect_report(shown, pid,
					(uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec,
					!o.no_inherit, o.quiet, o.verbose, seg);
	}
	if (seg != NULL) {
		/* all of the program's is in the segments now */
		if (!others)
			unlink(shown);
		seg_free(seg);
	}
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		if (!o.quiet)
			collect_msg("the program was killed by signal %d (%s)", sig, strsignal(sig));
		return 128 + sig;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : COLLECT_EXIT_FAIL;
}
