/* profile.h - the profile model every reader produces and every report reads
 *
 * Shaped like pprof's profile.proto: samples point at locations, a location
 * is an address in a mapping with one or more lines (more than one when
 * calls were inlined), a line names a function.  All strings are interned in
 * the profile's string table.  Objects are referred to by their index in the
 * profile's arrays; pointers returned by accessors are borrowed and valid
 * until the profile is changed or freed.
 */
#ifndef PROFVIEW_PROFILE_H
#define PROFVIEW_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "budget.h"

#define PV_NONE UINT32_MAX  /* "no such index" */
/* Six: a heap profile's estimates (alloc_objects, alloc_space,
 * inuse_objects, inuse_space) and the sampled counts they come from. */
#define PV_MAX_VALUES 9

/* Values every sample carries, in the order of pv_profile.sample_types. */
struct pv_value_type {
	uint32_t type;         /* string index, e.g. "samples" */
	uint32_t unit;         /* string index, e.g. "count" */
};

enum pv_mapping_kind {
	PV_MAP_FILE = 0,       /* a file on disk */
	PV_MAP_VDSO,           /* [vdso] */
	PV_MAP_ANON,           /* anonymous memory (JIT code) */
	PV_MAP_SPECIAL,        /* other bracketed names: [heap], [stack] */
	/* The kernel ("[kernel.kallsyms]", as perf names it): its locations
	 * are kernel frames, beneath the user frame that entered the kernel.
	 * A location at address 0 stands for kernel code whose functions are
	 * not known (one frame "[kernel]").  Its build_id is the boot id
	 * (/proc/sys/kernel/random/boot_id) of the machine the profile was
	 * taken on, when known: its addresses are named from /proc/kallsyms
	 * only on that boot. */
	PV_MAP_KERNEL,
	/* Frames of a Python program ("[python]"): each location is one
	 * frame, already named (its function the code object's qualified
	 * name, file and first line; its line the one executed), at an
	 * address that only tells it from others. */
	PV_MAP_PYTHON,
};

#define PV_KERNEL_MAPPING_NAME "[kernel.kallsyms]"
#define PV_KERNEL_FRAME_NAME "[kernel]"
#define PV_PYTHON_MAPPING_NAME "[python]"

struct pv_mapping {
	uint64_t start, limit, offset;
	uint32_t file;         /* string index */
	uint32_t build_id;     /* string index, lower-case hex */
	uint8_t kind;          /* enum pv_mapping_kind */
	bool has_functions, has_filenames, has_line_numbers;
};

struct pv_function {
	uint32_t name;         /* string index, the name shown (demangled) */
	uint32_t system_name;  /* string index, the name in the binary */
	uint32_t filename;     /* string index */
	int64_t start_line;
};

/* One frame of a location; a location with inlined calls has several, the
 * innermost first and the function they were inlined into last. */
struct pv_line {
	uint32_t function;     /* function index */
	int64_t line;          /* 0 when unknown */
};

struct pv_location {
	uint64_t address;      /* inside the instruction (callers: return address - 1) */
	uint32_t mapping;      /* mapping index or PV_NONE */
	uint32_t line_off;     /* into pv_profile.lines */
	uint32_t nlines;       /* 0 until symbolized */
};

enum pv_sample_flags {
	PV_SAMPLE_TRUNCATED = 1u << 0, /* the stack is known to be incomplete */
	/* The second location is a candidate return address that only the
	 * leaf's call frame information can confirm (see raw.h); reports must
	 * not see a sample with this flag. */
	PV_SAMPLE_LEAF_CANDIDATE = 1u << 1,
	/* The sample belongs to the base of a comparison (profview
	 * --diff-base): reports show it apart from the others, the new ones. */
	PV_SAMPLE_BASE = 1u << 2,
	/* The thread was not running: blocked or waiting (wall-clock and gdb
	 * traces, whose stacks then end in a made-up "off-CPU" or "blocked"
	 * frame). */
	PV_SAMPLE_OFFCPU = 1u << 3,
	/* The sample's CPU time was spent in the kernel (system time): its
	 * innermost locations are in a PV_MAP_KERNEL mapping. */
	PV_SAMPLE_KERNEL = 1u << 4,
	/* The sample's reader knew the weight it carries: var holds what it
	 * adds to the variance of each value's estimated total (see
	 * pv_sample_var). */
	PV_SAMPLE_VAR = 1u << 5,
};

struct pv_sample {
	uint32_t loc_off;      /* into pv_profile.stack_locs: leaf first */
	uint32_t nlocs;
	uint32_t thread;       /* thread index or PV_NONE */
	uint32_t flags;        /* enum pv_sample_flags */
	int64_t values[PV_MAX_VALUES];
	/* When it was taken, in ns from the profile's start (time_ns), when
	 * the profile is timed; else 0.  A heap block's: its allocation. */
	int64_t time_ns;
	/* A heap block's free, in ns from the profile's start, when the
	 * samples are blocks (pv_profile_has_lifetimes); 0: never freed (a
	 * free is stored as at least 1 ns, so that 0 is what every sample
	 * made with no end has). */
	int64_t end_ns;
	/* With PV_SAMPLE_VAR, per value: the variance it adds to the
	 * estimated total of that value over the samples (of a Poisson
	 * sample of events, w^2 (1 - p) for an event sampled with
	 * probability p that weighs w = x / p; 0 for an event sampled with
	 * certainty).  Unused without the flag. */
	float var[PV_MAX_VALUES];
};

struct pv_thread {
	uint32_t tid;
	uint32_t name;         /* string index */
	int64_t cpu_ns;        /* CPU time the collector measured, -1 unknown */
	uint32_t process;      /* process index, PV_NONE when the source has none */
};

/* A process of a run of several (collect-timer follows the processes a
 * program starts).  A reader may give each image (before and after an
 * exec) its own, with the same pid, or join them in one (raw runs do). */
struct pv_process {
	uint32_t pid;
	uint32_t name;         /* string index: the command (the program's base name) */
	uint32_t program;      /* string index: the program's path */
	/* string index: the commands it ran before this one, in order,
	 * comma-separated ("env, bash"), when a reader joined its images;
	 * 0 ("") when it ran no other */
	uint32_t before;
	/* When it was profiled, in ns from the profile's start (time_ns). */
	int64_t start_ns, end_ns;
};

/* A process of a run that was not profiled (its collector could not run
 * in it), as the run's collector accounted for it. */
struct pv_unprofiled {
	uint32_t pid;
	uint32_t program;      /* string index: the program, "" when not known */
	uint32_t why;          /* string index: why it was not profiled, in words */
	int64_t cpu_ns;        /* user and system time; -1 when not known */
	int killed_by;         /* the signal that killed it, 0 when not */
};

struct pv_strtab {
	char **strs;
	size_t n, cap;
	uint32_t *slots;       /* open addressing, index + 1, 0 = empty */
	size_t nslots;
};

/* A segment of a run that was cut by time (collect-timer --split): which
 * one, and the segments just before it that could not be written.  The
 * run is told by its key (its start and the segments' length). */
struct pv_segment {
	uint64_t run_key;      /* the same for every segment of one run */
	uint64_t split_ns;     /* the length of a segment */
	uint64_t number;       /* 1, 2, ... */
	uint64_t missing;      /* segments number - missing .. number - 1 not written */
	uint64_t missing_samples; /* the samples they held */
	uint32_t missing_cause; /* string index: why they were not written, "" unknown */
};

/* What sent the samples of a CPU profile, when its source says. */
enum pv_sampler {
	PV_SAMPLER_UNKNOWN = 0,
	PV_SAMPLER_POSIX,      /* POSIX CPU timers, checked at the scheduler tick */
	PV_SAMPLER_PERF,       /* perf task-clock events, a sample every period */
	PV_SAMPLER_MIXED,      /* merged profiles of both */
};

#define PV_PY_UNREAD_PIDS 16

struct pv_profile {
	struct pv_strtab strings;

	struct pv_value_type sample_types[PV_MAX_VALUES];
	uint32_t nvalues;
	struct pv_value_type period_type;
	uint32_t default_type; /* string index: the sample type reports weigh by
				  unless told (a perf capture's periods); 0: their own choice */
	int64_t period;
	int64_t time_ns;       /* start, ns since the epoch */
	int64_t duration_ns;

	struct pv_mapping *mappings;   size_t nmappings, cap_mappings;
	struct pv_function *functions; size_t nfunctions, cap_functions;
	struct pv_location *locations; size_t nlocations, cap_locations;
	struct pv_line *lines;         size_t nlines, cap_lines;
	struct pv_sample *samples;     size_t nsamples, cap_samples;
	uint32_t *stack_locs;          size_t nstack_locs, cap_stack_locs;
	struct pv_thread *threads;     size_t nthreads, cap_threads;
	/* Empty unless the source is a run of several processes. */
	struct pv_process *processes;  size_t nprocesses, cap_processes;
	/* The processes of the run that were not profiled (counted in
	 * run_processes). */
	struct pv_unprofiled *unprofiled; size_t nunprofiled, cap_unprofiled;
	/* The segments of runs cut by time it holds, if any. */
	struct pv_segment *segments;   size_t nsegments, cap_segments;

	/* What the source said about itself. */
	uint32_t program;      /* string index: the profiled executable */
	uint32_t source_format; /* string index, e.g. "profview raw trace" */
	uint32_t pid;
	/* Processes the run had, with samples or not, as its collector
	 * counted them; 0 when the source does not say. */
	uint32_t run_processes;
	uint64_t lost;         /* samples the collector could not store */
	uint32_t lost_cause;   /* string index: why they were lost, "" unknown */
	/* lost counts those of the whole source, not of the samples a view
	 * kept (a time span, threads, processes): no share of them is said */
	bool lost_whole;
	/* string index: the program of a heap trace when it defines its own
	 * malloc, which the collector's never saw a call to; 0 otherwise */
	uint32_t own_allocator;
	/* A heap trace of an attach to a running process (collect-heap -p):
	 * its blocks are those allocated since, and in use means in use of
	 * those */
	bool heap_since_attach;
	int sampler;           /* enum pv_sampler: what sent a CPU profile's samples */
	uint64_t truncated;    /* samples whose stack is known to be incomplete */
	uint64_t stacks_cut;   /* of those, the stacks cut to PV_MAX_DEPTH frames */
	uint64_t dropped_bytes; /* bytes of a damaged input that were not read */
	/* CPU time the threads used by the source's own count (a collector's
	 * thread and exit records) and how much of it is in no sample (that
	 * of threads that were never sampled); 0 when the source does not
	 * say. */
	int64_t threads_cpu_ns, unsampled_cpu_ns;
	/* The samples' CPU times add up, thread by thread, to the threads'
	 * CPU time, measured exactly (a finished collect-timer trace whose
	 * every thread has its CPU time): a function's share of it is a
	 * binomial, not a Poisson, count. */
	bool cpu_exact;
	/* Of the samples' CPU time, how much the kernel accounted as system
	 * time (in the kernel on the program's behalf: system calls, page
	 * faults); -1 when the source does not say. */
	int64_t system_cpu_ns;
	/* Threads that used CPU time but were never sampled. */
	uint64_t unsampled_threads;
	/* Samples of the collector's own work in the program's threads
	 * (collect-timer recording what a dlopen loaded), left out of the
	 * samples, and the time they stood for (CPU, or wall time in a
	 * wall-clock trace). */
	uint64_t collector_samples;
	int64_t collector_ns;
	/* The CPU time the collector's library measured it spent in the
	 * program's processes (starting, making unwind tables, ending:
	 * RAW_COLLECTOR records); 0 when the source does not say. */
	int64_t collector_cpu_ns;
	/* Processes whose CPython the collector found but whose Python frames
	 * it did not read (a version whose layout it does not know), and the
	 * version of one of them (major << 8 | minor; 0 when not known). */
	uint32_t python_unread, python_unread_version;
	/* The pids of the first PV_PY_UNREAD_PIDS of them, so that a process
	 * is counted once however many segments of its run are merged. */
	uint32_t python_unread_pids[PV_PY_UNREAD_PIDS];
	/* Processes whose Python frames were read, and of the first of them
	 * the version (major << 8 | minor), its third number + 1 (0: not
	 * known) and where the offsets into its structures came from (enum
	 * raw_python_offsets: 0 not said, 1 the interpreter's own, 2 its
	 * debug information, 3 the collector's table). */
	uint32_t python_read, python_read_version, python_read_micro, python_read_offsets;
	/* A comparison: the base profiles' samples are flagged PV_SAMPLE_BASE.
	 * How many runs (profiles) each side merges, and the base's own
	 * duration (duration_ns is the new side's). */
	bool diff;
	uint32_t diff_base_runs, diff_new_runs;
	/* The samples say when they were taken (pv_sample.time_ns): those of
	 * collect-timer and collect-gdb. */
	bool timed;
	int64_t diff_base_duration_ns;
	bool finished;         /* the source says it was completed cleanly */
	bool live;             /* not finished: its program is still running */

	/* Private lookup tables. */
	uint32_t *loc_slots; size_t nloc_slots;    /* address+mapping -> location */
	uint32_t *fn_slots; size_t nfn_slots;      /* name+file -> function */
	uint32_t *thr_slots; size_t nthr_slots;    /* tid -> thread */
};

struct pv_profile *pv_profile_new(void);
void pv_profile_free(struct pv_profile *p);

/* Intern s (len bytes, need not be NUL-terminated); returns its index or
 * PV_NONE when out of memory.  Index 0 is always "". */
uint32_t pv_intern(struct pv_profile *p, const char *s, size_t len);
uint32_t pv_intern_str(struct pv_profile *p, const char *s);
static inline const char *pv_str(const struct pv_profile *p, uint32_t i)
{
	return i < p->strings.n ? p->strings.strs[i] : "";
}

/* Add a value type; returns its index or PV_NONE (too many or no memory). */
uint32_t pv_add_value_type(struct pv_profile *p, const char *type, const char *unit);
/* Index of the value type named type, or PV_NONE. */
uint32_t pv_find_value_type(const struct pv_profile *p, const char *type);

uint32_t pv_add_mapping(struct pv_profile *p, const struct pv_mapping *m);
/* The mapping kind a path stands for ("[vdso]", "" or "//anon", ...). */
uint8_t pv_mapping_kind_of(const char *path);
/* Mapping that contains addr, or PV_NONE. */
uint32_t pv_find_mapping(const struct pv_profile *p, uint64_t addr);

/* Function with this name and file, added when new. */
uint32_t pv_get_function(struct pv_profile *p, uint32_t name, uint32_t system_name,
			 uint32_t filename, int64_t start_line);

/* Location for address in mapping, added (with no lines) when new. */
uint32_t pv_get_location(struct pv_profile *p, uint64_t address, uint32_t mapping);
/* Does location loc have exactly these lines? */
bool pv_location_has_lines(const struct pv_profile *p, uint32_t loc, const struct pv_line *lines,
			   uint32_t n);
/* Replace the lines of a location (innermost first; at most PV_MAX_DEPTH
 * of them are kept). 0 or -1. */
int pv_set_lines(struct pv_profile *p, uint32_t loc, const struct pv_line *lines, uint32_t n);

/* The most frames a stack may have, a location counting as many frames as
 * it has lines (inlined calls): every reader cuts a deeper stack to its
 * innermost PV_MAX_DEPTH frames (pv_add_stack_capped), and reading says
 * how many it cut (pv_profile.stacks_cut). */
#define PV_MAX_DEPTH 65536

/* Store the stack of sample s: n locations at locs (leaf first), cut to
 * PV_MAX_DEPTH frames; sets s->loc_off and s->nlocs.  When it was cut, or
 * cut is true (the reader dropped outer frames itself), s is flagged
 * PV_SAMPLE_TRUNCATED and counted in p->stacks_cut.  0, or -1 when out of
 * memory. */
int pv_add_stack_capped(struct pv_profile *p, struct pv_sample *s, const uint32_t *locs,
			uint32_t n, bool cut);
/* Store a stack (location indices, leaf first); returns its offset for
 * pv_sample.loc_off, or UINT32_MAX when out of memory.  Samples may share
 * one stored stack. */
uint32_t pv_add_stack(struct pv_profile *p, const uint32_t *locs, uint32_t n);
/* Add a sample; 0 or -1. */
int pv_add_sample(struct pv_profile *p, const struct pv_sample *s);
/* Add a sample, or, when it is the same as the last one in all but its
 * values (stack, thread, flags and time), add its values to that one's, so
 * that a run of repeated records costs one sample (its stack, when stored
 * last, is given back).  For sources whose samples are counts, not events
 * in time.  0 or -1. */
int pv_add_sample_merged(struct pv_profile *p, const struct pv_sample *s);

/* Thread with this tid, added when new (name may be PV_NONE). */
uint32_t pv_get_thread(struct pv_profile *p, uint32_t tid, uint32_t name);
/* Thread with this tid in process (an index, or PV_NONE as
 * pv_get_thread), added when new. */
uint32_t pv_get_process_thread(struct pv_profile *p, uint32_t process, uint32_t tid, uint32_t name);
/* Put every thread in process (an index). */
void pv_threads_in_process(struct pv_profile *p, uint32_t process);
/* Add a process; its index, or PV_NONE when out of memory. */
uint32_t pv_add_process(struct pv_profile *p, const struct pv_process *proc);
/* Counts process pid among those whose Python frames were not read:
 * not again when it is (same: a pid counted is the same process, as in
 * one run), nor pid 0 (not known) under same. */
void pv_python_unread_add(struct pv_profile *p, uint32_t pid, bool same);
/* Adds a process that was not profiled.  0, or -1 when out of memory. */
int pv_add_unprofiled(struct pv_profile *p, const struct pv_unprofiled *u);
/* Notes that the profile holds segment seg (a copy); the missing segments
 * and samples of one already there add up.  0 or -1 (out of memory). */
int pv_add_segment(struct pv_profile *p, const struct pv_segment *seg);
/* "pid 123 (make)": the process of thread th, into buf; "" when it has
 * none.  Returns buf. */
const char *pv_thread_process_name(const struct pv_profile *p, uint32_t th, char *buf, size_t n);

/* Are the samples heap blocks with a lifetime: allocated at time_ns,
 * freed at end_ns (0: never)?  Those of collect-heap's traces, which are
 * timed and have the value "alloc_space". */
bool pv_profile_has_lifetimes(const struct pv_profile *p);

/* The variance sample s adds to the estimated total of value v, whose
 * standard error is the square root of the sum over the samples: what
 * its reader stored (PV_SAMPLE_VAR), else the Poisson estimate for c
 * events of equal weight, values[v]^2 / c, c its value vc (the number of
 * samples it stands for; 1 when vc is PV_NONE or c is 0).  With v ==
 * vc that is c, the variance of a Poisson count: sqrt(n) samples.  v
 * PV_NONE: the sample's count alone. */
double pv_sample_var(const struct pv_sample *s, uint32_t v, uint32_t vc);

/* Sum of value v over all samples. */
int64_t pv_total(const struct pv_profile *p, uint32_t v);

static inline const uint32_t *pv_sample_locs(const struct pv_profile *p, const struct pv_sample *s)
{
	/* No arithmetic on a NULL array (a profile with only empty stacks). */
	return p->stack_locs ? p->stack_locs + s->loc_off : NULL;
}
static inline const struct pv_line *pv_location_lines(const struct pv_profile *p,
						      const struct pv_location *l)
{
	return p->lines ? p->lines + l->line_off : NULL;
}

/* Is location loc a kernel frame? */
static inline bool pv_location_is_kernel(const struct pv_profile *p, uint32_t loc)
{
	uint32_t m = loc < p->nlocations ? p->locations[loc].mapping : PV_NONE;
	return m < p->nmappings && p->mappings[m].kind == PV_MAP_KERNEL;
}

/* Is location loc a frame of a Python program? */
static inline bool pv_location_is_python(const struct pv_profile *p, uint32_t loc)
{
	uint32_t m = loc < p->nlocations ? p->locations[loc].mapping : PV_NONE;
	return m < p->nmappings && p->mappings[m].kind == PV_MAP_PYTHON;
}

/* Is every value of every sample at least 0, and does each value type
 * add up to no more than INT64_MAX over all samples (so that any sum of
 * some of them, a report's totals and cumulative counts, can be
 * computed)?  0, or -1 with an error naming what (an input) and the value
 * type. */
int pv_profile_check_sums(const struct pv_profile *p, const char *what);
/* Is every index in range (internal consistency)?  0, or -1 with an
 * error.  A reader's profile always is: what the fuzz targets check. */
int pv_profile_check_indices(const struct pv_profile *p, const char *what);
/* Check internal consistency (pv_profile_check_indices) and the sums
 * (pv_profile_check_sums): an input whose values cannot be added up is
 * refused here.  0, or -1 with an error. */
int pv_profile_validate(const struct pv_profile *p, const char *what);

#endif
