/* pipeline.h - from a symbolized profile to what a report shows
 *
 * Every front end takes the same steps, in the same order, through this
 * one function, as pprof's driver serves its command line, shell and web
 * interface from one report generator:
 *
 *   threads   keep the samples of the threads asked for (--tid, T);
 *   steps     filters and callers, in the order given: a filter group
 *             (several expressions of one kind act as their alternation,
 *             as pprof's options), "callers of f" (the stacks turned upside
 *             down once and re-rooted at f), the whole profile reversed;
 *   kernel    the kernel frames removed, when asked (--hide-kernel, K):
 *             their time goes to the user frames that entered the kernel;
 *   aggregate the call tree at the view's granularity, with inlined calls
 *             as frames or not (--noinlines), by thread or not, weighed
 *             by the view's value (--sample-index).
 *
 * The reading, unwinding and symbolizing before (load.h) give the
 * source profile; the text reports, the pictures, --pprof and the browser
 * all start from a pv_view.
 */
#ifndef PROFVIEW_PIPELINE_H
#define PROFVIEW_PIPELINE_H

#include "calltree.h"
#include "filter.h"
#include "profile.h"

#include <stdbool.h>
#include <stddef.h>

enum pv_step_kind {
	PV_STEP_FILTERS,       /* a group of filters (filter.h) */
	PV_STEP_CALLERS,       /* the callers of the functions matching re */
	PV_STEP_REVERSE,       /* every stack upside down */
};

struct pv_step {
	enum pv_step_kind kind;
	const struct pv_filters *filters; /* PV_STEP_FILTERS: compiled, borrowed */
	const char *re;        /* PV_STEP_CALLERS: an extended regular expression */
	/* How the step reads in a report's header ("focus=f", "callers=g");
	 * NULL: from the filters, or the kind. */
	const char *label;
	/* Say which of the group's filters matched nothing (pv_filters_warn):
	 * for the command line's, not for what the browser does. */
	bool warn;
};

/* A span of the run (--time=FROM,TO): its ends in seconds from the
 * profile's start, or as a share of the run when pct; an end not given is
 * the run's start or end. */
struct pv_span {
	double from, to;
	bool from_pct, to_pct, has_from, has_to;
};

/* "1.5,3", "10%,20%", ",2", "5," -> *out; false when malformed (then *why
 * says how). */
bool pv_span_parse(const char *s, struct pv_span *out, const char **why);

/* What to show. */
struct pv_view {
	const uint32_t *tids;  /* only these threads (NULL: all) */
	size_t ntids;
	const uint32_t *pids;  /* only these processes (NULL: all) */
	size_t npids;
	/* only the samples taken in these spans of the run (any of them; an
	 * untimed profile cannot be cut: an error) */
	const struct pv_span *spans;
	size_t nspans;
	const struct pv_step *steps; /* applied in order */
	size_t nsteps;
	enum ct_granularity granularity;
	bool by_thread;        /* a level of thread nodes under the root */
	bool by_process;       /* a level of process nodes under the root */
	bool noinlines;        /* inlined calls part of their caller (calltree.h) */
	bool full_names;       /* functions named whole, not short (names.h) */
	bool fold_recursion;   /* recursion folded in the tree (calltree.h) */
	const char *sample_index; /* what nodes are weighed by (calltree.h) */
	/* Remove the kernel frames from the stacks, after the steps
	 * (pv_hide_kernel, as pprof's hide comes after its focus and
	 * ignore): their time becomes the user frames' own. */
	bool hide_kernel;
	/* The report needs the flat rows or the call graph only: the tree
	 * keeps the distinct stacks, no nodes (calltree.h, paths_only). */
	bool paths_only;
};

struct pv_result {
	/* The view's profile: the one run in place, or the source when no
	 * step changed it (borrowed: not to be changed), or a copy (owned). */
	struct pv_profile *p;
	bool owned;
	struct calltree *t;    /* the call tree, when asked for */
	/* Samples of the threads kept, before and after the steps, counted as
	 * the reports count them; and the steps in force, "focus=a callers=g
	 * reverse" ("" none). */
	int64_t before, after;
	char steps[1024];
	/* The spans, resolved ("1.000-2.000 s of 6.700 s"), and the samples
	 * of the threads kept that are in them ("" and 0 without spans). */
	char spans[256];
	int64_t in_spans;
	/* The spans' extent in ns from the profile's start: the earliest
	 * start and the latest end, cut at the run's end (0 and 0 without
	 * spans). */
	int64_t span_from, span_to;
};

/* The profile's system CPU time (pv_profile.system_cpu_ns) is kept to the
 * samples the view shows: when samples are left out, to the share of the
 * kernel's samples kept (else of all the samples). */

/* Runs view v on profile p, changing it in place (a command that shows one
 * view): r->p is p.  tree: build the call tree too.  0, or -1 after
 * reporting the error (an unknown sample_index, an invalid expression, out
 * of memory); r is then empty, and p may be half filtered. */
int pv_view_run(struct pv_profile *p, const struct pv_view *v, bool tree, struct pv_result *r);
/* The same on a copy of source, which is left as it is (a front end that
 * shows many views of one profile); no copy when the view changes
 * nothing. */
int pv_view_run_copy(const struct pv_profile *source, const struct pv_view *v, bool tree,
		     struct pv_result *r);
void pv_result_free(struct pv_result *r);

/* The run's length in ns: the profile's duration, or its last sample's
 * time when that is later. */
int64_t pv_run_length(const struct pv_profile *p);
/* When heap block s (pv_profile_has_lifetimes) stopped being in use:
 * its free (end_ns), else, in a run of several processes, the end of its
 * process when that came before the run's end (len: pv_run_length) -- the
 * memory went with the process -- else 0: in use to the end. */
int64_t pv_block_end(const struct pv_profile *p, const struct pv_sample *s, int64_t len);

/* Span s of a run len ns long, as ns from its start: [*from, *to), *to
 * INT64_MAX when open. */
void pv_span_resolve(const struct pv_span *s, int64_t len, int64_t *from, int64_t *to);

/* The samples of p, counted as the reports count them: the count of
 * samples beside the value shown, index (--sample-index, a name or a
 * number; NULL: the default), as "peak_samples" is beside "peak_space"
 * and "alloc_samples" beside "alloc_objects"; else its "samples" value,
 * else its first, else one a sample. */
int64_t pv_count_samples(const struct pv_profile *p, const char *index);

#endif
