/* profview.c - the profview command: read, symbolize, then one view of the
 * profile as a report or in the browser (pipeline.h) */
#include "calltree.h"
#include "cli.h"
#include "diff.h"
#include "error.h"
#include "filter.h"
#include "report-text.h"
#include "report-svg.h"
#include "report-flame.h"
#include "report-timeline.h"
#include "report-speedscope.h"
#include "screen.h"
#include "modules.h"
#include "pipeline.h"
#include "load.h"
#include "outfile.h"
#include "pprof-write.h"
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

enum report_kind { REPORT_TREE, REPORT_FLAT, REPORT_FOLDED, REPORT_PPROF, REPORT_SVG, REPORT_FLAME,
		   REPORT_TIMELINE, REPORT_SPEEDSCOPE };

enum {
	OPT_TREE = 256, OPT_FLAT, OPT_FOLDED, OPT_SORT, OPT_NOISEFLOOR, OPT_MINCOUNT, OPT_MAXDEPTH,
	OPT_THREADS, OPT_TID, OPT_PROCESSES, OPT_PID, OPT_FUNCTIONS, OPT_LINES, OPT_FILES, OPT_ADDRESSES, OPT_COLOR,
	OPT_SYMBOLIZER, OPT_NO_DEMANGLE, OPT_DUMP_LOCATIONS, OPT_PPROF, OPT_MAX_INPUT,
};

/* Inlined calls and names. */
enum { OPT_NOINLINES = 0xd00, OPT_FULL_NAMES };

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
	{ "color", required_argument, NULL, OPT_COLOR },
	{ "symbolizer", required_argument, NULL, OPT_SYMBOLIZER },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "max-input", required_argument, NULL, OPT_MAX_INPUT },
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
		"                         dragging across it draws the span's flame graph\n"
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
		"                         alloc_space, alloc_objects; or any sample type of\n"
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
		"      --processes        split the tree by process (a run of several)\n"
		"      --pid=LIST         only these process ids (comma-separated)\n"
		"      --time=FROM,TO     only the samples taken from FROM to TO seconds after\n"
		"                         the start (10%%,20%%: shares of the run; either end\n"
		"                         may be left out; given again: any of the spans)\n"
		"      --noisefloor=K     hide nodes with n <= K*sqrt(N), N the parent's count\n"
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
		"\n"
		"Symbols:\n"
		"      --symbolizer=NAME  read debug info with dw (libdw, default) or bfd (libbfd)\n"
		"      --full-names       C++ functions with their parameter lists and template\n"
		"                         arguments (default: short, as \"std::vector::push_back\")\n"
		"      --no-demangle      show C++ functions by their mangled names\n"
		"\n"
		"Input:\n"
		"      --max-input=SIZE   read at most SIZE bytes of a pipe or device,\n"
		"                         decompress at most SIZE bytes, and build a profile\n"
		"                         in at most SIZE (or the input's size) and 16 MiB\n"
		"                         (default 1G; K, M, G and T are KiB to TiB; 0: no limit)\n"
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
	for (size_t i = 0; i < n; i++)
		if (paths[i] && strcmp(paths[i], "-") != 0 && stat(paths[i], &st) == 0 &&
		    st.st_dev == o.st_dev && st.st_ino == o.st_ino)
			return paths[i];
	return NULL;
}

/* --pprof: the whole profile, gzipped, to FILE or standard output (not a
 * terminal). */
static int write_pprof(struct pv_profile *p, const char *output, const char *sample_index,
		       const struct pv_diff_options *diff)
{
	const char *name = output ? output : "standard output";
	struct pprof_write_options wo = { 0 };
	FILE *f = stdout;
	int ret;

	if (p->diff && diff) {
		/* the scales every report shows a comparison with */
		struct ct_options co = { .sample_index = sample_index, .paths_only = true };
		struct calltree *t = calltree_build(p, &co);
		struct pv_diff_scale sc;
		if (!t)
			return -1;
		pv_diff_scale_of(t, diff, &sc);
		wo.base_scale = sc.base;
		wo.new_scale = sc.new_;
		calltree_free(t);
	}

	if (sample_index) {
		/* pprof's default sample type, checked as the reports do */
		struct ct_options co = { .sample_index = sample_index };
		struct calltree *t = calltree_build(p, &co);
		if (!t)
			return -1;
		wo.default_sample_type = calltree_weight_name(t);
		if (pv_find_value_type(p, wo.default_sample_type) == PV_NONE)
			wo.default_sample_type = NULL;
		calltree_free(t);
	}
	if (!output && isatty(STDOUT_FILENO))
		return pv_error("not writing a binary profile to a terminal: give -o FILE or redirect the output");
	if (output && !(f = open_output(output)))
		return -1;
	ret = pprof_write(f, name, p, &wo);
	if (fflush(f) != 0 || ferror(f))
		ret = pv_error("cannot write '%s': %s", name, strerror(errno));
	if (f != stdout && fclose(f) != 0 && ret == 0)
		ret = pv_error("cannot write '%s': %s", name, strerror(errno));
	return ret;
}

/* What the pictures' legends say is in force: the time spans and the
 * filters ("time 1.000-2.000 s of 6.700 s, 412 samples; focus=f"), or
 * NULL for nothing. */
static const char *picture_label(char *buf, size_t n, const struct report_options *o)
{
	bool spans = o->time_spans && o->time_spans[0], filters = o->filters && o->filters[0];

	if (!spans)
		return o->filters;
	snprintf(buf, n, "time %s, %" PRId64 " samples%s%s", o->time_spans, o->time_samples,
		 filters ? "; " : "", filters ? o->filters : "");
	return buf;
}

/* --speedscope: the file's title, the program's name (else the first
 * profile's) and the spans and filters that chose the samples. */
static const char *speedscope_title(char *buf, size_t n, const struct pv_profile *p, const char *first,
				    const struct report_options *r)
{
	const char *prog = pv_str(p, p->program);
	int len = snprintf(buf, n, "%s", pv_base_name(prog[0] ? prog : first));

	if ((r->time_spans || r->filters) && len >= 0 && (size_t)len < n)
		snprintf(buf + len, n - (size_t)len, " (%s%s%s%s)", r->time_spans ? "time " : "",
			 r->time_spans ? r->time_spans : "", r->time_spans && r->filters ? ", " : "",
			 r->filters ? r->filters : "");
	return buf;
}

int main(int argc, char **argv)
{
	enum report_kind kind = REPORT_TREE;
	bool kind_given = false, tui = false;
	struct ct_options copt = { .granularity = CT_FUNCTIONS };
	struct report_options ropt = { 0 };
	struct flame_options flameopt = { 0 };
	struct timeline_options tlopt = { 0 };
	regex_t highlight;
	struct svg_options svgopt = { .graph = { GRAPH_DEFAULT_NODECOUNT, GRAPH_DEFAULT_NODEFRACTION,
						  GRAPH_DEFAULT_EDGEFRACTION } };
	struct pv_source_options sopt = { 0 };
	struct pv_source src = { 0 };
	struct pv_diff_options dopt = { .fdr = PV_DIFF_DEFAULT_FDR };
	char label[1536];
	char **bases = NULL;
	size_t nbases = 0;
	struct pv_span *spans = NULL;
	size_t nspans = 0;
	bool dump = false, reverse = false, hide_kernel = false;
	const char *output = NULL, *color = "auto";
	uint32_t *tids = NULL, *pids = NULL;
	size_t ntids = 0, npids = 0;
	struct pv_profile *p;
	struct pv_filters filters = { 0 };
	struct pv_step steps[2];
	size_t nsteps = 0;
	struct pv_view view;
	struct pv_result res = { 0 };
	struct calltree *t = NULL;
	FILE *out = stdout;
	int c, ret = 1;
	long long v;

	pv_error_set_progname("profview");
	if (!(bases = calloc((size_t)argc + 1, sizeof *bases)) ||
	    !(spans = calloc((size_t)argc + 1, sizeof *spans)))
		return pv_oom(), 1;
	while ((c = getopt_long(argc, argv, "o:t:qhV", long_options, NULL)) != -1) {
		switch (c) {
		/* Any report option gives text, however abbreviated. */
		case OPT_TREE: kind = REPORT_TREE; kind_given = true; break;
		case OPT_FLAT: kind = REPORT_FLAT; kind_given = true; break;
		case OPT_FOLDED: kind = REPORT_FOLDED; kind_given = true; break;
		case OPT_PPROF: kind = REPORT_PPROF; kind_given = true; break;
		case OPT_SVG: kind = REPORT_SVG; kind_given = true; break;
		case OPT_FLAME: kind = REPORT_FLAME; kind_given = true; flameopt.icicle = false; break;
		case OPT_ICICLE: kind = REPORT_FLAME; kind_given = true; flameopt.icicle = true; break;
		case OPT_TIMELINE: kind = REPORT_TIMELINE; kind_given = true; break;
		case OPT_HIGHLIGHT: {
			int rc;
			char why[256];
			if (tlopt.highlight)
				regfree(&highlight);
			tlopt.highlight = NULL;
			if ((rc = regcomp(&highlight, optarg, REG_EXTENDED | REG_NOSUB)) != 0) {
				regerror(rc, &highlight, why, sizeof why);
				return usage_error("invalid --highlight '%s': %s", optarg, why);
			}
			tlopt.highlight = &highlight;
			tlopt.highlight_text = optarg;
			break;
		}
		case OPT_SPEEDSCOPE: kind = REPORT_SPEEDSCOPE; kind_given = true; break;
		case OPT_NODECOUNT:
			if (!parse_long(optarg, 0, INT_MAX, &v))
				return usage_error("invalid --nodecount '%s' (a whole number >= 0)", optarg);
			svgopt.graph.nodecount = (size_t)v;
			break;
		case OPT_NODEFRACTION:
		case OPT_EDGEFRACTION: {
			double f;
			if (!parse_double(optarg, &f) || f > 1)
				return usage_error("invalid --%s '%s' (a number from 0 to 1)",
						   c == OPT_NODEFRACTION ? "nodefraction" : "edgefraction", optarg);
			*(c == OPT_NODEFRACTION ? &svgopt.graph.nodefraction : &svgopt.graph.edgefraction) = f;
			break;
		}
		case OPT_SORT:
			if (strcmp(optarg, "count") == 0 || strcmp(optarg, "self") == 0)
				ropt.sort = SORT_COUNT;
			else if (strcmp(optarg, "cum") == 0)
				ropt.sort = SORT_CUM;
			else if (strcmp(optarg, "name") == 0)
				ropt.sort = SORT_NAME;
			else
				return usage_error("invalid --sort '%s' (count, cum or name)", optarg);
			break;
		case OPT_NOISEFLOOR:
			if (!parse_double(optarg, &ropt.noisefloor))
				return usage_error("invalid --noisefloor '%s' (a number >= 0)", optarg);
			break;
		case OPT_MINCOUNT:
			if (!parse_long(optarg, 0, LLONG_MAX, &v))
				return usage_error("invalid --mincount '%s' (a whole number >= 0)", optarg);
			ropt.mincount = v;
			break;
		case OPT_MAXDEPTH:
			if (!parse_long(optarg, 0, INT_MAX, &v))
				return usage_error("invalid --maxdepth '%s' (a whole number >= 0)", optarg);
			ropt.maxdepth = (int)v;
			break;
		case OPT_THREADS: copt.by_thread = true; break;
		case OPT_PROCESSES: copt.by_process = true; break;
		case OPT_PID:
			free(pids);
			if (!parse_tids(optarg, &pids, &npids))
				return usage_error("invalid --pid '%s' (process ids separated by commas)", optarg);
			ropt.pid_filter = optarg;
			break;
		case OPT_TID:
			free(tids);
			if (!parse_tids(optarg, &tids, &ntids))
				return usage_error("invalid --tid '%s' (thread ids separated by commas)", optarg);
			ropt.tid_filter = optarg;
			break;
		case OPT_FUNCTIONS: copt.granularity = CT_FUNCTIONS; break;
		case OPT_LINES: copt.granularity = CT_LINES; break;
		case OPT_FILES: copt.granularity = CT_FILES; break;
		case OPT_ADDRESSES: copt.granularity = CT_ADDRESSES; break;
		case OPT_NOINLINES: copt.noinlines = true; break;
		case OPT_FULL_NAMES: copt.full_names = true; break;
		case OPT_COLOR:
			if (strcmp(optarg, "auto") && strcmp(optarg, "always") && strcmp(optarg, "never"))
				return usage_error("invalid --color '%s' (auto, always or never)", optarg);
			color = optarg;
			break;
		case OPT_SYMBOLIZER:
			if (strcmp(optarg, "dw") && strcmp(optarg, "bfd"))
				return usage_error("invalid --symbolizer '%s' (dw or bfd)", optarg);
			sopt.bfd = strcmp(optarg, "bfd") == 0;
			break;
		case OPT_NO_DEMANGLE: sopt.symbolize.no_demangle = true; break;
		case OPT_MAX_INPUT:
			if (!parse_size(optarg, &sopt.max_input))
				return usage_error("invalid --max-input '%s' (a size such as 512M or 2G; 0 for no limit)",
						   optarg);
			break;
		case OPT_DUMP_LOCATIONS: dump = true; break;
		case OPT_FILTER + PV_FILTER_FOCUS: case OPT_FILTER + PV_FILTER_IGNORE:
		case OPT_FILTER + PV_FILTER_HIDE: case OPT_FILTER + PV_FILTER_SHOW:
		case OPT_FILTER + PV_FILTER_SHOW_FROM: case OPT_FILTER + PV_FILTER_PRUNE_FROM: {
			const char *err;
			if (pv_filters_add(&filters, (enum pv_filter_kind)(c - OPT_FILTER), optarg, &err) < 0) {
				pv_filters_free(&filters);
				if (!err)
					return pv_oom(), 1;
				return usage_error("invalid --%s '%s': %s", pv_filter_name(c - OPT_FILTER),
						   optarg, err);
			}
			break;
		}
		case 'o': output = optarg; break;
		case 't':
			if (!optarg[0])
				return usage_error("%s", "empty --field-separator");
			ropt.field_sep = optarg;
			break;
		case OPT_DIFF_BASE: bases[nbases++] = optarg; break;
		case OPT_TIME: {
			const char *why;
			if (!pv_span_parse(optarg, &spans[nspans], &why))
				return usage_error("invalid --time '%s' (%s)", optarg, why);
			nspans++;
			break;
		}
		case OPT_NORMALIZE: dopt.normalize = true; break;
		case OPT_SIGNIFICANT: ropt.significant = true; break;
		case OPT_FDR:
			if (!parse_double(optarg, &dopt.fdr) || !(dopt.fdr > 0) || !(dopt.fdr < 1))
				return usage_error("invalid --fdr '%s' (a number between 0 and 1)", optarg);
			break;
		case 'q': sopt.quiet = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("profview %s\n", PROFVIEW_VERSION); return 0;
		case OPT_TUI: tui = true; break;
		case OPT_REVERSE: reverse = true; break;
		case OPT_HIDE_KERNEL: hide_kernel = true; break;
		case OPT_SAMPLE_INDEX:
			if (!optarg[0])
				return usage_error("%s", "empty --sample-index");
			copt.sample_index = optarg;
			break;
		default:
			fprintf(stderr, "Try 'profview --help' for more information.\n");
			return 2;
		}
	}
	if (optind >= argc)
		return usage_error("%s", "no trace given");
	/* Any report option, -o or a pipe give text; --tui forces the browser. */
	if (!tui && !kind_given && !output && !dump && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO))
		tui = true;
	/* "profview ./app prof.out", as pprof takes it: an executable first is
	 * the program whose symbols the profile's addresses are read with. */
	if (pv_is_elf(argv[optind])) {
		if (argc - optind == 1)
			return usage_error("'%s' is a program, not a profile: give its profile after it",
					   argv[optind]);
		sopt.program = argv[optind++];
	}
	copt.tids = tids;
	copt.ntids = ntids;
	{
		const char *same = output_is_input(output, argv + optind, (size_t)(argc - optind));
		if (!same)
			same = output_is_input(output, bases, nbases);
		if (!same && sopt.program)
			same = output_is_input(output, (char *const *)&sopt.program, 1);
		if (same) {
			pv_error("cannot write '%s': it is the input '%s'; not writing the report over it",
				 output, same);
			return 2;
		}
	}

	pv_error_set_quiet(sopt.quiet);
	if (kind == REPORT_SVG && !tui && !dump)
		report_svg_ready();
	if (ropt.field_sep && (tui || (kind != REPORT_TREE && kind != REPORT_FLAT)))
		return usage_error("%s", "--field-separator makes tables of the flat and tree reports: give --flat or --tree");
	if (ropt.significant && kind != REPORT_TREE && kind != REPORT_FLAT && !tui)
		return usage_error("%s", "--significant filters the flat and tree reports and the browser: the pictures colour what is significant");
	if (tlopt.highlight && kind != REPORT_TIMELINE)
		return usage_error("%s", "--highlight colours the timeline: give --timeline");
	if (kind == REPORT_TIMELINE && nbases)
		return usage_error("%s", "--timeline shows one profile, not a comparison: leave out --diff-base");
	if (kind == REPORT_SPEEDSCOPE && nbases && !tui)
		return usage_error("%s", "--speedscope shows the samples of one profile: it cannot compare (--diff-base)");
	if ((dopt.normalize || ropt.significant) && !nbases)
		return usage_error("--%s compares: give the base profile with --diff-base",
				   dopt.normalize ? "normalize" : "significant");
	if (nbases ? pv_source_open_diff(bases, nbases, argv + optind, (size_t)(argc - optind), &sopt,
					 &src) < 0
		   : pv_source_open(argv + optind, (size_t)(argc - optind), &sopt, &src) < 0)
		goto out;
	if (src.p->diff)
		ropt.diff = &dopt;
	p = src.p;
	if (dump) {
		ret = dump_locations(stdout, p, src.mods) < 0 || fflush(stdout) != 0;
		goto out;
	}
	/* The view the options ask for: the threads, the filters, the
	 * reverse, in that order (pipeline.h). */
	if (pv_filters_any(&filters))
		steps[nsteps++] = (struct pv_step){ .kind = PV_STEP_FILTERS, .filters = &filters, .warn = true };
	if (reverse)
		steps[nsteps++] = (struct pv_step){ .kind = PV_STEP_REVERSE };
	view = (struct pv_view){ .tids = tids, .ntids = ntids, .pids = pids, .npids = npids, .spans = spans, .nspans = nspans,
				 .steps = steps, .nsteps = nsteps, .hide_kernel = hide_kernel,
				 .granularity = copt.granularity, .by_thread = copt.by_thread,
				 .by_process = copt.by_process, .noinlines = copt.noinlines, .full_names = copt.full_names,
				 .sample_index = copt.sample_index,
				 .paths_only = !tui && (kind == REPORT_FLAT || kind == REPORT_SVG ||
							      kind == REPORT_TIMELINE ||
							      kind == REPORT_SPEEDSCOPE) };
	if (tui) {
		struct browser_options bo = { .view = view, .noisefloor = ropt.noisefloor ? ropt.noisefloor : 1,
					      .color = strcmp(color, "never") != 0 && !getenv("NO_COLOR"),
					      .diff = src.p->diff ? &dopt : NULL, .significant = ropt.significant };
		ret = browser_run(p, &bo) < 0;
		goto out;
	}
	if (pv_view_run(p, &view, kind != REPORT_PPROF, &res) < 0)
		goto out;
	if (res.spans[0]) {
		ropt.time_spans = res.spans;
		ropt.time_samples = res.in_spans;
	}
	if (res.steps[0]) {
		ropt.filters = res.steps;
		ropt.filter_total = res.before;
		ropt.filter_kept = res.after;
	}
	if (kind == REPORT_PPROF) {
		ret = write_pprof(p, output, copt.sample_index, ropt.diff) < 0;
		goto out;
	}
	t = res.t;
	if (output) {
		out = open_output(output);
		if (!out) {
			out = stdout;
			goto out;
		}
	}
	if (strcmp(color, "always") == 0)
		ropt.color = true;
	else if (strcmp(color, "auto") == 0)
		ropt.color = !output && isatty(STDOUT_FILENO) && !getenv("NO_COLOR") &&
			     !(getenv("TERM") && strcmp(getenv("TERM"), "dumb") == 0);
	if (getenv("NO_COLOR") && getenv("NO_COLOR")[0])
		ropt.color = false;

	if (kind == REPORT_TIMELINE) {
		tlopt.from_ns = res.span_from;
		tlopt.to_ns = res.span_to;
		tlopt.by_thread = copt.by_thread;
		tlopt.filters = ropt.filters;
		tlopt.spans = ropt.time_spans;
		ret = report_timeline(out, t, &tlopt) < 0;
	} else if (kind == REPORT_FLAME) {
		flameopt.noisefloor = ropt.noisefloor;
		flameopt.mincount = ropt.mincount;
		flameopt.maxdepth = ropt.maxdepth;
		flameopt.filters = picture_label(label, sizeof label, &ropt);
		flameopt.diff = ropt.diff;
		ret = report_flame(out, t, &flameopt) < 0;
	} else if (kind == REPORT_SVG) {
		svgopt.noisefloor = ropt.noisefloor;
		svgopt.filters = picture_label(label, sizeof label, &ropt);
		svgopt.diff = ropt.diff;
		ret = report_svg(out, t, &svgopt) < 0;
	} else if (kind == REPORT_SPEEDSCOPE) {
		char title[1024];
		struct speedscope_options so = {
			.name = speedscope_title(title, sizeof title, p, argv[optind], &ropt) };
		ret = report_speedscope(out, t, &so) < 0;
	} else if (kind == REPORT_FOLDED) {
		ret = report_folded(out, t, &ropt) < 0;
	} else if (ropt.field_sep || t->dn) {
		if (!ropt.field_sep)
			report_header(out, t, &ropt);
		if (kind == REPORT_FLAT)
			ret = report_table_flat(out, t, &ropt) < 0;
		else
			ret = report_table_tree(out, t, &ropt) < 0;
	} else {
		report_header(out, t, &ropt);
		if (kind == REPORT_FLAT)
			ret = report_flat(out, t, &ropt) < 0;
		else
			ret = report_tree(out, t, &ropt) < 0;
	}
	if (fflush(out) != 0 || ferror(out)) {
		pv_error("cannot write '%s': %s", output ? output : "standard output", strerror(errno));
		ret = 1;
	}
out:
	report_svg_unready();
	if (out != stdout && fclose(out) != 0 && ret == 0)
		ret = pv_error("cannot write '%s': %s", output, strerror(errno)) ? 1 : 1;
	pv_result_free(&res);
	pv_source_close(&src);
	pv_filters_free(&filters);
	free(tids);
	free(pids);
	free(bases);
	free(spans);
	if (tlopt.highlight)
		regfree(&highlight);
	return ret;
}
