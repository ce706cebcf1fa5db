/* profview.c - the profview command: read, symbolize, then one view of the
 * profile as a report or in the browser (pipeline.h) */
#include "calltree.h"
#include "cli.h"
#include "diff.h"
#include "error.h"
#include "filter.h"
#include "report.h"
#include "report-svg.h"
#include "screen.h"
#include "modules.h"
#include "pipeline.h"
#include "load.h"
#include "outfile.h"
#include "read.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
	OPT_TREE = 256, OPT_FLAT, OPT_FOLDED, OPT_SORT, OPT_NOISEFLOOR, OPT_MINCOUNT, OPT_MAXDEPTH,
	OPT_THREADS, OPT_TID, OPT_PROCESSES, OPT_PID, OPT_FUNCTIONS, OPT_LINES, OPT_FILES, OPT_ADDRESSES, OPT_COLOR,
	OPT_SYMBOLIZER, OPT_NO_DEMANGLE, OPT_KEEP_ALLOC_FRAMES, OPT_NATIVE_FRAMES, OPT_DUMP_LOCATIONS, OPT_PPROF, OPT_MAX_INPUT, OPT_MAX_MEMORY,
};

/* Inlined calls and names. */
enum { OPT_NOINLINES = 0xd00, OPT_FULL_NAMES, OPT_FOLD_RECURSION };

/* The call graph (--svg) and its pruning. */
enum { OPT_SVG = 0x500, OPT_NODECOUNT, OPT_NODEFRACTION, OPT_EDGEFRACTION };

/* The filters: OPT_FILTER + enum pv_filter_kind. */
enum { OPT_FILTER = 0x400 };

/* The flame graph (--flame, --icicle). */
enum { OPT_FLAME = 0x600, OPT_ICICLE };

/* The interactive browser, and views every front end has. */
enum { OPT_TUI = 0x700, OPT_REVERSE, OPT_HIDE_KERNEL };

/* What reports weigh by. */
enum { OPT_SAMPLE_INDEX = 0x800 };

/* Comparisons and tables. */
enum { OPT_DIFF_BASE = 0x900, OPT_NORMALIZE, OPT_FDR, OPT_SIGNIFICANT, OPT_FIELD_SEP };

/* Time. */
enum { OPT_TIME = 0xa00 };

/* The timeline (--timeline, --highlight). */
enum { OPT_TIMELINE = 0xb00, OPT_HIGHLIGHT };
/* The samples in time order, for speedscope. */
enum { OPT_SPEEDSCOPE = 0xc00 };

static const struct option long_options[] = {
	{ "tree", no_argument, NULL, OPT_TREE },
	{ "flat", no_argument, NULL, OPT_FLAT },
	{ "folded", no_argument, NULL, OPT_FOLDED },
	/* what --fold meant before --fold-recursion made it ambiguous */
	{ "fold", no_argument, NULL, OPT_FOLDED },
	{ "pprof", no_argument, NULL, OPT_PPROF },
	{ "svg", no_argument, NULL, OPT_SVG },
	{ "flame", no_argument, NULL, OPT_FLAME },
	{ "icicle", no_argument, NULL, OPT_ICICLE },
	{ "timeline", no_argument, NULL, OPT_TIMELINE },
	{ "highlight", required_argument, NULL, OPT_HIGHLIGHT },
	{ "speedscope", no_argument, NULL, OPT_SPEEDSCOPE },
	{ "tui", no_argument, NULL, OPT_TUI },
	{ "reverse", no_argument, NULL, OPT_REVERSE },
	{ "hide-kernel", no_argument, NULL, OPT_HIDE_KERNEL },
	{ "sample-index", required_argument, NULL, OPT_SAMPLE_INDEX },
	{ "sample_index", required_argument, NULL, OPT_SAMPLE_INDEX },
	{ "diff-base", required_argument, NULL, OPT_DIFF_BASE },
	{ "diff_base", required_argument, NULL, OPT_DIFF_BASE },
	{ "normalize", no_argument, NULL, OPT_NORMALIZE },
	{ "fdr", required_argument, NULL, OPT_FDR },
	{ "significant", no_argument, NULL, OPT_SIGNIFICANT },
	{ "field-separator", required_argument, NULL, 't' },
	{ "nodecount", required_argument, NULL, OPT_NODECOUNT },
	{ "nodefraction", required_argument, NULL, OPT_NODEFRACTION },
	{ "edgefraction", required_argument, NULL, OPT_EDGEFRACTION },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "noisefloor", required_argument, NULL, OPT_NOISEFLOOR },
	{ "mincount", required_argument, NULL, OPT_MINCOUNT },
	{ "maxdepth", required_argument, NULL, OPT_MAXDEPTH },
	{ "threads", no_argument, NULL, OPT_THREADS },
	{ "tid", required_argument, NULL, OPT_TID },
	{ "processes", no_argument, NULL, OPT_PROCESSES },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "time", required_argument, NULL, OPT_TIME },
	{ "functions", no_argument, NULL, OPT_FUNCTIONS },
	{ "lines", no_argument, NULL, OPT_LINES },
	{ "files", no_argument, NULL, OPT_FILES },
	{ "addresses", no_argument, NULL, OPT_ADDRESSES },
	{ "noinlines", no_argument, NULL, OPT_NOINLINES },
	{ "full-names", no_argument, NULL, OPT_FULL_NAMES },
	{ "fold-recursion", no_argument, NULL, OPT_FOLD_RECURSION },
	{ "color", required_argument, NULL, OPT_COLOR },
	{ "symbolizer", required_argument, NULL, OPT_SYMBOLIZER },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "keep-alloc-frames", no_argument, NULL, OPT_KEEP_ALLOC_FRAMES },
	{ "native-frames", no_argument, NULL, OPT_NATIVE_FRAMES },
	{ "max-input", required_argument, NULL, OPT_MAX_INPUT },
	{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
	{ "focus", required_argument, NULL, OPT_FILTER + PV_FILTER_FOCUS },
	{ "ignore", required_argument, NULL, OPT_FILTER + PV_FILTER_IGNORE },
	{ "hide", required_argument, NULL, OPT_FILTER + PV_FILTER_HIDE },
	{ "show", required_argument, NULL, OPT_FILTER + PV_FILTER_SHOW },
	{ "show-from", required_argument, NULL, OPT_FILTER + PV_FILTER_SHOW_FROM },
	{ "prune-from", required_argument, NULL, OPT_FILTER + PV_FILTER_PRUNE_FROM },
	/* Hidden, for tests/e2e/symbolizers.sh: every symbolized location with
	 * the file and ELF address to give addr2line, tab-separated. */
	{ "dump-locations", no_argument, NULL, OPT_DUMP_LOCATIONS },
	{ "output", required_argument, NULL, 'o' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: profview [OPTION]... [PROGRAM] PROFILE...\n"
		"Show where the time went in a profile: a collect-timer trace, a pprof\n"
		"profile.proto, a gperftools CPU profile, folded stacks or gdb backtraces,\n"
		"told apart by their content.  Several profiles are merged into one.  An\n"
		"executable before them is the program to read symbols from.\n"
		"\n"
		"Reports (one of):\n"
		"      --tree             call tree from the root down (default)\n"
		"      --flat             one row per function: self and cumulative\n"
		"      --folded           folded stacks (\"main;f;g 42\"), FlameGraph's input\n"
		"      --pprof            the whole profile as gzipped pprof profile.proto\n"
		"      --svg              call graph drawn by graphviz, as SVG\n"
		"      --flame            flame graph, as SVG with hover, zoom and search\n"
		"      --icicle           the flame graph upside down: the root on top\n"
		"      --timeline         the samples along the run, a row per thread, as SVG;\n"
		"                         dragging across it draws the span's flame graph;\n"
		"                         of a heap trace, the heap in use along the run\n"
		"      --highlight=RE     timeline: colour the samples with a frame matching\n"
		"                         RE, grey the others\n"
		"      --speedscope       the samples for speedscope, as JSON: a profile per\n"
		"                         thread, in the order they were taken\n"
		"      --tui              browse the call tree interactively (the default when\n"
		"                         standard output is a terminal and no report is named)\n"
		"\n"
		"Granularity:\n"
		"      --functions        a node per function (default)\n"
		"      --lines            a node per function and source line\n"
		"      --files            a node per source file\n"
		"      --addresses        a node per instruction address\n"
		"      --noinlines        inlined calls are part of the function they were\n"
		"                         inlined into (as perf's symbols), not frames\n"
		"\n"
		"Value (the same in every report):\n"
		"      --sample-index=TYPE  what shares and sizes are measured in: cpu (the\n"
		"                         default for a collect-timer trace: CPU time), wall,\n"
		"                         samples (sample counts); of a heap profile\n"
		"                         inuse_space (the default), inuse_objects,\n"
		"                         alloc_space, alloc_objects; of perf script output\n"
		"                         each event's periods, by its name (the first\n"
		"                         event's the default, as perf report: task-clock,\n"
		"                         cycles, page-faults...); or any sample type of\n"
		"                         the profile, by name or index\n"
		"\n"
		"Comparison (the change from BASE to the PROFILEs, and whether it is more\n"
		"than the sampling noise; see profview(1)):\n"
		"      --diff-base=BASE   compare with BASE (given again: several merged)\n"
		"      --normalize        scale the base to the new total (else compare the\n"
		"                         values per run as they are)\n"
		"      --fdr=Q            call changes with a q-value <= Q worse or better: the\n"
		"                         false discovery rate (default 0.05)\n"
		"      --significant      flat and tree: only the changes called, and their\n"
		"                         callers\n"
		"\n"
		"Selection and pruning:\n"
		"      --threads          split the tree by thread\n"
		"      --tid=LIST         only these thread ids (comma-separated)\n"
		"      --processes        split the tree and the call graph by process (a run\n"
		"                         of several)\n"
		"      --pid=LIST         only these process ids (comma-separated)\n"
		"      --time=FROM,TO     only the samples taken from FROM to TO seconds after\n"
		"                         the start (10%%,20%%: shares of the run; either end\n"
		"                         may be left out; given again: any of the spans);\n"
		"                         of a heap trace, the blocks allocated then and\n"
		"                         still in use at TO\n"
		"      --noisefloor=K     hide nodes within K times the noise of their parent's samples\n"
		"      --mincount=N       hide nodes with fewer than N samples\n"
		"      --maxdepth=D       show the tree down to depth D\n"
		"      --sort=ORDER       flat view order: count (self), cum, or name\n"
		"      --nodecount=N      call graph: keep the N hottest nodes (default 80, 0 all)\n"
		"      --nodefraction=F   call graph: drop nodes under F of the total (0.005)\n"
		"      --edgefraction=F   call graph: drop edges under F of the total (0.001)\n"
		"\n"
		"Filters (regular expressions on function, source file and mapped file\n"
		"names, as pprof's; several of one kind match any of them):\n"
		"      --focus=RE         keep only the samples with a matching frame\n"
		"      --ignore=RE        drop the samples with a matching frame\n"
		"      --hide=RE          remove the matching frames from the stacks\n"
		"      --show=RE          keep only the matching frames in the stacks\n"
		"      --show-from=RE     cut the stacks above their outermost matching frame\n"
		"      --prune-from=RE    cut the stacks below their innermost matching frame\n"
		"      --reverse          turn the stacks upside down (after the filters): the\n"
		"                         tree starts from where the time was spent and goes\n"
		"                         out to the callers\n"
		"      --hide-kernel      remove the kernel frames ([k]) from the stacks (after\n"
		"                         the filters): the time in the kernel becomes the own\n"
		"                         time of the function that entered it\n"
		"      --fold-recursion   fold recursion: a frame already on the stack below\n"
		"                         takes the stack back there, the frames between it\n"
		"                         dropped (a;b;a;b;c is a;b;c, f;f;g is f;g, a;b;a is a)\n"
		"\n"
		"Symbols:\n"
		"      --symbolizer=NAME  read debug info with dw (libdw, default) or bfd (libbfd)\n"
		"      --full-names       C++ functions with their parameter lists and template\n"
		"                         arguments (default: short, as \"std::vector::push_back\")\n"
		"      --no-demangle      show C++ functions by their mangled names\n"
		"      --keep-alloc-frames  keep the allocator's frames (malloc, operator new,\n"
		"                         je_*, tc_*...) at the leaf of a heap profile's\n"
		"                         stacks (default: trimmed, the bytes charged to the\n"
		"                         function that asked for them, as pprof)\n"
		"      --native-frames    keep the Python interpreter's own frames (its\n"
		"                         evaluation loop, call dispatch) between a Python\n"
		"                         program's frames (default: folded out)\n"
		"\n"
		"Input:\n"
		"      --max-input=SIZE   read at most SIZE bytes of a pipe or device,\n"
		"                         decompress at most SIZE bytes, and build a profile\n"
		"                         in at most SIZE (or the input's size) and 16 MiB\n"
		"                         (default 1G; K, M, G and T are KiB to TiB; 0: no limit)\n"
		"      --max-memory=SIZE  the memory reading an input may take, and again\n"
		"                         the report on its profile (default: --max-input or\n"
		"                         the input's size, and 16 MiB; 0: no limit)\n"
		"\n"
		"Output:\n"
		"  -o, --output=FILE      write the report to FILE instead of standard output\n"
		"  -t, --field-separator=SEP  flat and tree: a table with a header row, fields\n"
		"                         separated by SEP, no padding\n"
		"      --color=WHEN       auto (default), always or never; NO_COLOR turns it off\n"
		"  -q, --quiet            no warnings about the input\n"
		"  -h, --help             show this help and exit\n"
		"  -V, --version          show the version and exit\n"
		"\n"
		"Exit status: 0 on success, 1 when the input cannot be read, 2 on a usage error.\n"
		"See profview(1), profview-raw(5) and profview-formats(5).\n");
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vusage_error(fmt, ap);
	va_end(ap);
	return CLI_EXIT_USAGE;
}

static bool parse_long(const char *s, long long min, long long max, long long *out)
{
	return cli_parse_int(s, min, max, out);
}

/* A number from 0 to 1e9. */
static bool parse_double(const char *s, double *out)
{
	return cli_parse_number(s, 0, 1e9, out);
}

/* "1G", "64M", "4096" -> bytes (cli.h); "0" -> SIZE_MAX, no limit.  False
 * when malformed. */
static bool parse_size(const char *s, size_t *out)
{
	if (!cli_parse_size(s, SIZE_MAX, out))
		return false;
	if (*out == 0)
		*out = SIZE_MAX;
	return true;
}

/* "12,13,14" -> tids; false on a malformed list. */
static bool parse_tids(const char *s, uint32_t **tids, size_t *n)
{
	size_t cap = 1;
	const char *c;
	uint32_t *v;

	for (c = s; *c; c++)
		cap += *c == ',';
	v = calloc(cap, sizeof *v);
	if (!v)
		return false;
	*n = 0;
	while (*s) {
		char *end;
		long long t;
		errno = 0;
		t = strtoll(s, &end, 10);
		if (errno || end == s || t <= 0 || t > UINT32_MAX || (*end && *end != ',')) {
			free(v);
			return false;
		}
		v[(*n)++] = (uint32_t)t;
		s = *end ? end + 1 : end;
	}
	if (*n == 0) {
		free(v);
		return false;
	}
	*tids = v;
	return true;
}

/* --dump-locations: one line per frame of every location, innermost first:
 * runtime address, file, ELF virtual address in it ("-" when unknown),
 * depth, function, system name, source file, line. */
static int dump_locations(FILE *out, struct pv_profile *p, struct pv_modules *mods)
{
	for (size_t i = 0; i < p->nlocations; i++) {
		const struct pv_location *loc = &p->locations[i];
		const struct pv_line *lines = pv_location_lines(p, loc);
		const char *path = "-";
		uint64_t vaddr = 0;
		bool known = loc->mapping != PV_NONE &&
			     modules_file_vaddr(mods, loc->mapping, loc->address, &path, &vaddr);

		for (uint32_t j = 0; j < loc->nlines; j++) {
			const struct pv_function *f = &p->functions[lines[j].function];
			fprintf(out, "0x%" PRIx64 "\t%s\t", loc->address, known ? path : "-");
			if (known)
				fprintf(out, "0x%" PRIx64, vaddr);
			else
				fputc('-', out);
			fprintf(out, "\t%" PRIu32 "\t%s\t%s\t%s\t%" PRId64 "\n", j, pv_str(p, f->name),
				pv_str(p, f->system_name), pv_str(p, f->filename), lines[j].line);
		}
	}
	return 0;
}

/* -o FILE: opens the report's file, never through a link nor over a file
 * that is not one's own regular file (pv_outfile_open).  NULL after saying
 * why. */
static FILE *open_output(const char *output)
{
	char why[256];
	int fd = pv_outfile_open(output, PV_OUTFILE_REPORT_MODE, 0, why, sizeof why);
	FILE *f;

	if (fd < 0) {
		pv_error("cannot write '%s': %s", output, why);
		return NULL;
	}
	if (!(f = fdopen(fd, "w"))) {
		pv_error("cannot write '%s': %s", output, strerror(errno));
		close(fd);
	}
	return f;
}

/* Is output (when it is a regular file) the file of one of the n paths,
 * by any name?  Writing the report there would destroy what it is made
 * of: the path, or NULL. */
static const char *output_is_input(const char *output, char *const *paths, size_t n)
{
	struct stat o, st;

	if (!output || stat(output, &o) != 0 || !S_ISREG(o.st_mode))
		return NULL;
	for (size_t i = 0; i < n; i++) {
		/* "-": standard input, which may be that file too */
		int known = paths[i] && (strcmp(paths[i], "-") == 0 ? fstat(STDIN_FILENO, &st) == 0
								   : stat(paths[i], &st) == 0);

		if (known && st.st_dev == o.st_dev && st.st_ino == o.st_ino)
			return paths[i];
	}
	return NULL;
}

/* Everything the command line asks for. */
struct args {
	enum pv_report_kind kind;
	bool kind_given, tui, dump, reverse;
	struct pv_report_options ro;
	/* the view but for what view_of adds: threads, processes, spans, steps */
	struct pv_view view;
	struct pv_source_options sopt;
	struct pv_diff_options dopt;
	regex_t highlight;
	char **bases;
	size_t nbases;
	struct pv_span *spans;
	size_t nspans;
	const char *output, *color;
	uint32_t *tids, *pids;
	size_t ntids, npids;
	struct pv_filters filters;
};

/* The options that name a report: its kind. */
static const struct { int opt; enum pv_report_kind kind; } report_opts[] = {
	{ OPT_TREE, PV_REPORT_TREE }, { OPT_FLAT, PV_REPORT_FLAT }, { OPT_FOLDED, PV_REPORT_FOLDED },
	{ OPT_PPROF, PV_REPORT_PPROF }, { OPT_SVG, PV_REPORT_SVG }, { OPT_FLAME, PV_REPORT_FLAME },
	{ OPT_ICICLE, PV_REPORT_FLAME }, { OPT_TIMELINE, PV_REPORT_TIMELINE },
	{ OPT_SPEEDSCOPE, PV_REPORT_SPEEDSCOPE },
};

/* --highlight=RE; 0, or the exit status of a usage error. */
static int parse_highlight(struct args *a, const char *re)
{
	char why[256];
	int rc;

	if (a->ro.highlight)
		regfree(&a->highlight);
	a->ro.highlight = NULL;
	if ((rc = regcomp(&a->highlight, re, REG_EXTENDED | REG_NOSUB)) != 0) {
		regerror(rc, &a->highlight, why, sizeof why);
		return usage_error("invalid --highlight '%s': %s", re, why);
	}
	a->ro.highlight = &a->highlight;
	a->ro.highlight_text = re;
	return 0;
}

/* The options of the reports' pruning and the call graph; -1 when c is
 * none of them, else 0 or the exit status of a usage error. */
static int parse_pruning(struct args *a, int c, const char *arg)
{
	long long v;
	double f;

	switch (c) {
	case OPT_NODECOUNT:
		if (!parse_long(arg, 0, INT_MAX, &v))
			return usage_error("invalid --nodecount '%s': expected a whole number >= 0", arg);
		a->ro.graph.nodecount = (size_t)v;
		return 0;
	case OPT_NODEFRACTION:
	case OPT_EDGEFRACTION:
		if (!parse_double(arg, &f) || f > 1)
			return usage_error("invalid --%s '%s': expected a number from 0 to 1",
					   c == OPT_NODEFRACTION ? "nodefraction" : "edgefraction", arg);
		*(c == OPT_NODEFRACTION ? &a->ro.graph.nodefraction : &a->ro.graph.edgefraction) = f;
		return 0;
	case OPT_SORT:
		if (strcmp(arg, "count") == 0 || strcmp(arg, "self") == 0)
			a->ro.sort = SORT_COUNT;
		else if (strcmp(arg, "cum") == 0)
			a->ro.sort = SORT_CUM;
		else if (strcmp(arg, "name") == 0)
			a->ro.sort = SORT_NAME;
		else
			return usage_error("invalid --sort '%s': expected count, cum or name", arg);
		return 0;
	case OPT_NOISEFLOOR:
		if (!parse_double(arg, &a->ro.noisefloor))
			return usage_error("invalid --noisefloor '%s': expected a number >= 0", arg);
		return 0;
	case OPT_MINCOUNT:
		if (!parse_long(arg, 0, LLONG_MAX, &v))
			return usage_error("invalid --mincount '%s': expected a whole number >= 0", arg);
		a->ro.mincount = v;
		return 0;
	case OPT_MAXDEPTH:
		if (!parse_long(arg, 0, INT_MAX, &v))
			return usage_error("invalid --maxdepth '%s': expected a whole number >= 0", arg);
		a->ro.maxdepth = (int)v;
		return 0;
	}
	return -1;
}

/* The options of the view: threads, processes, granularity, filters,
 * time; -1 when c is none of them, else 0 or an exit status. */
static int parse_view(struct args *a, int c, const char *arg)
{
	const char *why;

	switch (c) {
	case OPT_THREADS: a->view.by_thread = true; return 0;
	case OPT_PROCESSES: a->view.by_process = true; return 0;
	case OPT_PID:
		free(a->pids);
		if (!parse_tids(arg, &a->pids, &a->npids))
			return usage_error("invalid --pid '%s': expected process ids separated by commas", arg);
		a->ro.pid_filter = arg;
		return 0;
	case OPT_TID:
		free(a->tids);
		if (!parse_tids(arg, &a->tids, &a->ntids))
			return usage_error("invalid --tid '%s': expected thread ids separated by commas", arg);
		a->ro.tid_filter = arg;
		return 0;
	case OPT_FUNCTIONS: a->view.granularity = CT_FUNCTIONS; return 0;
	case OPT_LINES: a->view.granularity = CT_LINES; return 0;
	case OPT_FILES: a->view.granularity = CT_FILES; return 0;
	case OPT_ADDRESSES: a->view.granularity = CT_ADDRESSES; return 0;
	case OPT_NOINLINES: a->view.noinlines = true; return 0;
	case OPT_FULL_NAMES: a->view.full_names = true; return 0;
	case OPT_FOLD_RECURSION: a->view.fold_recursion = true; return 0;
	case OPT_REVERSE: a->reverse = true; return 0;
	case OPT_HIDE_KERNEL: a->view.hide_kernel = true; return 0;
	case OPT_SAMPLE_INDEX:
		if (!arg[0])
			return usage_error("%s", "empty --sample-index");
		a->view.sample_index = arg;
		return 0;
	case OPT_TIME:
		if (!pv_span_parse(arg, &a->spans[a->nspans], &why))
			return usage_error("invalid --time '%s': %s", arg, why);
		a->nspans++;
		return 0;
	}
	if (c >= OPT_FILTER + PV_FILTER_FOCUS && c <= OPT_FILTER + PV_FILTER_PRUNE_FROM) {
		if (pv_filters_add(&a->filters, (enum pv_filter_kind)(c - OPT_FILTER), arg, &why) < 0) {
			pv_filters_free(&a->filters);
			if (!why)
				return pv_oom(), 1;
			return usage_error("invalid --%s '%s': %s", pv_filter_name(c - OPT_FILTER), arg, why);
		}
		return 0;
	}
	return -1;
}

/* Any other option: the input, the output, the comparison.  -1 to go on,
 * else the exit status. */
static int parse_other(struct args *a, int c, const char *arg)
{
	switch (c) {
	case OPT_HIGHLIGHT: return parse_highlight(a, arg);
	case OPT_COLOR:
		if (strcmp(arg, "auto") && strcmp(arg, "always") && strcmp(arg, "never"))
			return usage_error("invalid --color '%s': expected auto, always or never", arg);
		a->color = arg;
		return 0;
	case OPT_SYMBOLIZER:
		if (strcmp(arg, "dw") && strcmp(arg, "bfd"))
			return usage_error("invalid --symbolizer '%s': expected dw or bfd", arg);
		a->sopt.bfd = strcmp(arg, "bfd") == 0;
		return 0;
	case OPT_NO_DEMANGLE: a->sopt.symbolize.no_demangle = true; return 0;
	case OPT_MAX_MEMORY:
		if (!parse_size(arg, &a->sopt.max_memory))
			return usage_error("invalid --max-memory '%s': expected a size such as 512M or 2G; 0 for no limit", arg);
		return 0;
	case OPT_KEEP_ALLOC_FRAMES: a->sopt.keep_alloc_frames = true; return 0;
	case OPT_NATIVE_FRAMES: a->sopt.native_frames = true; return 0;
	case OPT_MAX_INPUT:
		if (!parse_size(arg, &a->sopt.max_input))
			return usage_error("invalid --max-input '%s': expected a size such as 512M or 2G; 0 for no limit", arg);
		return 0;
	case OPT_DUMP_LOCATIONS: a->dump = true; return 0;
	case 'o': a->output = arg; return 0;
	case 't':
		if (!arg[0])
			return usage_error("%s", "empty --field-separator");
		a->ro.field_sep = arg;
		return 0;
	case OPT_DIFF_BASE: a->bases[a->nbases++] = (char *)arg; return 0;
	case OPT_NORMALIZE: a->dopt.normalize = true; return 0;
	case OPT_SIGNIFICANT: a->ro.significant = true; return 0;
	case OPT_FDR:
		if (!parse_double(arg, &a->dopt.fdr) || !(a->dopt.fdr > 0) || !(a->dopt.fdr < 1))
			return usage_error("invalid --fdr '%s': expected a number between 0 and 1", arg);
		return 0;
	case 'q': a->sopt.quiet = true; return 0;
	case 'h': usage(stdout); return 0;
	case 'V': printf("profview %s\n", PROFVIEW_VERSION); return 0;
	case OPT_TUI: a->tui = true; return 0;
	}
	fprintf(stderr, "Try 'profview --help' for more information.\n");
	return 2;
}

/* One option: -1 to go on, else the exit status (0 after --help). */
static int parse_option(struct args *a, int c, const char *arg)
{
	int r;

	for (size_t i = 0; i < sizeof report_opts / sizeof *report_opts; i++) {
		if (report_opts[i].opt == c) {
			/* any report option gives text, however abbreviated */
			a->kind = report_opts[i].kind;
			a->kind_given = true;
			a->ro.icicle = c == OPT_ICICLE;
			return -1;
		}
	}
	if ((r = parse_pruning(a, c, arg)) >= 0 || (r = parse_view(a, c, arg)) >= 0)
		return r ? r : -1;
	r = parse_other(a, c, arg);
	return r == 0 && c != 'h' && c != 'V' ? -1 : r;
}

/* Is the output one of the inputs?  Then say so: 2, else -1. */
static int check_output(const struct args *a, char *const *profiles, size_t n)
{
	const char *same = output_is_input(a->output, profiles, n);

	if (!same)
		same = output_is_input(a->output, a->bases, a->nbases);
	if (!same && a->sopt.program)
		same = output_is_input(a->output, (char *const *)&a->sopt.program, 1);
	if (!same)
		return -1;
	if (strcmp(same, "-") == 0)
		pv_error("cannot write '%s': it is the standard input, read as the profile; not "
			 "writing the report over it", a->output);
	else
		pv_error("cannot write '%s': it is the input '%s'; not writing the report over it",
			 a->output, same);
	return 2;
}

/* The options that do not go together, in the report asked for: -1 when
 * none, else the exit status of the usage error. */
/* A part this build leaves out (meson's -Dbfd, -Dgraphviz, -Dtui), said
 * before any input is read: exit 1, or -1 to go on. */
static int check_built_in(const struct args *a)
{
	const char *what = NULL;

	if (a->sopt.bfd && !PROFVIEW_HAVE_BFD)
		what = "libbfd (-Dbfd=disabled): --symbolizer=bfd is not available";
	else if (a->kind == PV_REPORT_SVG && !a->tui && !PROFVIEW_HAVE_GRAPHVIZ)
		what = "graphviz (-Dgraphviz=disabled): no --svg call graph; --flame draws the stacks";
	else if (a->tui && !PROFVIEW_HAVE_TUI)
		what = "the browser (-Dtui=disabled): use --tree, --flat or a picture";
	if (!what)
		return -1;
	pv_error("this profview was built without %s", what);
	return 1;
}

static int check_report(const struct args *a)
{
	const struct pv_report_kind_info *k = pv_report_kind(a->kind);

	if (a->ro.field_sep && (a->tui || !k->tables))
		return usage_error("%s", "--field-separator makes tables of the flat and tree reports: give --flat or --tree");
	if (a->ro.significant && !k->tables && !a->tui)
		return usage_error("%s", "--significant filters the flat and tree reports and the browser: the pictures colour what is significant");
	if (a->ro.highlight && a->kind != PV_REPORT_TIMELINE)
		return usage_error("%s", "--highlight colours the timeline: give --timeline");
	if (k->one_profile && a->nbases && !a->tui)
		return usage_error("%s", k->one_profile);
	if ((a->dopt.normalize || a->ro.significant) && !a->nbases)
		return usage_error("--%s compares: give the base profile with --diff-base",
				   a->dopt.normalize ? "normalize" : "significant");
	return check_built_in(a);
}

/* Text in colour: --color, NO_COLOR, and a terminal for auto. */
static bool use_color(const struct args *a)
{
	bool on = false;

	if (strcmp(a->color, "always") == 0)
		on = true;
	else if (strcmp(a->color, "auto") == 0)
		on = !a->output && isatty(STDOUT_FILENO) && !getenv("NO_COLOR") &&
		     !(getenv("TERM") && strcmp(getenv("TERM"), "dumb") == 0);
	if (getenv("NO_COLOR") && getenv("NO_COLOR")[0])
		on = false;
	return on;
}

/* The view the options ask for: the threads, the filters, the reverse, in
 * that order (pipeline.h); steps has room for two. */
static struct pv_view view_of(const struct args *a, struct pv_step *steps)
{
	const struct pv_report_kind_info *k = pv_report_kind(a->kind);
	size_t nsteps = 0;

	if (pv_filters_any(&a->filters))
		steps[nsteps++] = (struct pv_step){ .kind = PV_STEP_FILTERS, .filters = &a->filters, .warn = true };
	if (a->reverse)
		steps[nsteps++] = (struct pv_step){ .kind = PV_STEP_REVERSE };
	struct pv_view v = a->view;

	v.tids = a->tids;
	v.ntids = a->ntids;
	v.pids = a->pids;
	v.npids = a->npids;
	v.spans = a->spans;
	v.nspans = a->nspans;
	v.steps = steps;
	v.nsteps = nsteps;
	v.paths_only = !a->tui && k->needs == PV_NEEDS_PATHS;
	return v;
}

/* The report of the view's result r, to -o's file or standard output. */
static int write_report(struct args *a, const struct pv_result *r, const char *input)
{
	struct pv_report_ctx c;
	FILE *out = stdout;
	int ret;

	a->ro.color = use_color(a);
	pv_report_ctx_init(&c, &a->ro, r);
	c.view = &a->view;
	c.diff = r->p->diff ? &a->dopt : NULL;
	c.output = a->output;
	c.input = input;
	if (pv_report_prepare(&c, a->kind) < 0 || (a->output && !(out = open_output(a->output)))) {
		pv_report_ctx_free(&c);
		return 1;
	}
	ret = pv_report_write(out, a->kind, &c) < 0;
	pv_report_ctx_free(&c);
	if (fflush(out) != 0 || ferror(out)) {
		pv_error("cannot write '%s': %s", a->output ? a->output : "standard output", strerror(errno));
		ret = 1;
	}
	if (out != stdout && fclose(out) != 0 && ret == 0)
		ret = pv_error("cannot write '%s': %s", a->output, strerror(errno)) ? 1 : 1;
	return ret;
}

/* What the report may take (budget.h): --max-memory, or as much as
 * reading the largest input could. */
static size_t report_budget(const struct args *a, char *const *profiles, size_t n)
{
	size_t largest = 0;
	struct stat st;

	if (a->sopt.max_memory)
		return a->sopt.max_memory < SIZE_MAX ? a->sopt.max_memory : 0;
	for (size_t i = 0; i < n; i++)
		if (stat(profiles[i], &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size > largest)
			largest = (size_t)st.st_size;
	return pv_read_budget(largest, a->sopt.max_input);
}

static void args_free(struct args *a)
{
	pv_filters_free(&a->filters);
	free(a->tids);
	free(a->pids);
	free(a->bases);
	free(a->spans);
	if (a->ro.highlight)
		regfree(&a->highlight);
}

int main(int argc, char **argv)
{
	struct args a = { .kind = PV_REPORT_TREE, .ro = PV_REPORT_OPTIONS_DEFAULT,
			  .view = { .granularity = CT_FUNCTIONS }, .dopt = { .fdr = PV_DIFF_DEFAULT_FDR },
			  .color = "auto" };
	struct pv_source src = { 0 };
	struct pv_step steps[2];
	struct pv_view view;
	struct pv_result res = { 0 };
	char **profiles;
	size_t nprofiles;
	int c, ret = 1;
	char who[512];

	pv_error_set_progname("profview");
	if (!(a.bases = calloc((size_t)argc + 1, sizeof *a.bases)) ||
	    !(a.spans = calloc((size_t)argc + 1, sizeof *a.spans)))
		return pv_oom(), 1;
	opterr = 0; /* said as the other tools say it */
	while ((c = getopt_long(argc, argv, ":o:t:qhV", long_options, NULL)) != -1)
		if (c == '?' || c == ':')
			return cli_getopt_error(c, argv);
		else if ((ret = parse_option(&a, c, optarg)) >= 0)
			return ret;
	if (optind >= argc)
		return usage_error("%s", "no trace given");
	/* Any report option, -o or a pipe give text; --tui forces the browser. */
	if (!a.tui && !a.kind_given && !a.output && !a.dump && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO))
		a.tui = PROFVIEW_HAVE_TUI; /* without it, the tree */
	/* "profview ./app prof.out", as pprof takes it: an executable first is
	 * the program whose symbols the profile's addresses are read with. */
	if (pv_is_elf(argv[optind])) {
		if (argc - optind == 1)
			return usage_error("'%s' is a program, not a profile: give its profile after it",
					   argv[optind]);
		a.sopt.program = argv[optind++];
	}
	profiles = argv + optind;
	nprofiles = (size_t)(argc - optind);
	if ((ret = check_output(&a, profiles, nprofiles)) >= 0)
		return ret;
	pv_error_set_quiet(a.sopt.quiet);
	if (a.kind == PV_REPORT_SVG && !a.tui && !a.dump)
		report_svg_ready();
	if ((ret = check_report(&a)) >= 0)
		return ret;
	ret = 1;
	if (a.nbases ? pv_source_open_diff(a.bases, a.nbases, profiles, nprofiles, &a.sopt, &src) < 0
		     : pv_source_open(profiles, nprofiles, &a.sopt, &src) < 0)
		goto out;
	if (a.dump) {
		ret = dump_locations(stdout, src.p, src.mods) < 0 || fflush(stdout) != 0;
		goto out;
	}
	view = view_of(&a, steps);
	snprintf(who, sizeof who, "the report on '%s'", profiles[0]);
	pv_budget_set(who, "making it", report_budget(&a, profiles, nprofiles));
	if (a.tui) {
		struct screen_options bo = { .view = view, .noisefloor = a.ro.noisefloor ? a.ro.noisefloor : 1,
					      .color = strcmp(a.color, "never") != 0 && !getenv("NO_COLOR"),
					      .diff = src.p->diff ? &a.dopt : NULL, .significant = a.ro.significant };
		ret = screen_run(src.p, &bo) < 0;
		goto out;
	}
	if (pv_view_run(src.p, &view, pv_report_kind(a.kind)->needs != PV_NEEDS_PROFILE, &res) < 0)
		goto out;
	ret = write_report(&a, &res, profiles[0]);
out:
	report_svg_unready();
	pv_budget_set(NULL, NULL, 0);
	pv_result_free(&res);
	pv_source_close(&src);
	args_free(&a);
	return ret;
}
