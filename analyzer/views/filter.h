/* filter.h - pprof's focus, ignore, hide, show, show-from and prune-from
 * filters, applied to a profile before any report
 *
 * Every filter is a POSIX extended regular expression, searched for (not
 * anchored) in the names a frame has.  A frame is one line of a location
 * (inlined calls are frames of their own).  As in pprof:
 *
 *   focus      keep the samples that have a location matching it
 *   ignore     drop the samples that have a location matching it
 *   hide       remove the matching frames from every stack
 *   show       keep only the matching frames of every stack
 *   show-from  drop the frames above (callers of) the outermost matching
 *              frame of a stack, and the samples that have none
 *   prune-from drop the frames below (callees of) the innermost matching
 *              frame of a stack
 *
 * focus, ignore, hide, show and show-from match a frame's function name
 * (whole, or short as reports show it: "std::vector::push_back", names.h),
 * its source file name, or the file of the location's mapping; prune-from
 * matches the function name only, without its parameter list.  They apply
 * in pprof's order: focus and ignore (on the stacks as read), then hide and
 * show, then show-from, then prune-from.  Several expressions of one kind
 * act as their alternation ("--focus=a --focus=b" is pprof's
 * "-focus='a|b'").
 */
#ifndef PROFVIEW_FILTER_H
#define PROFVIEW_FILTER_H

#include "profile.h"

#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum pv_filter_kind {
	PV_FILTER_FOCUS, PV_FILTER_IGNORE, PV_FILTER_HIDE, PV_FILTER_SHOW,
	PV_FILTER_SHOW_FROM, PV_FILTER_PRUNE_FROM,
	PV_FILTER_KINDS
};

struct pv_filter_re {
	regex_t re;
	const char *text;      /* borrowed: the expression as given */
};

struct pv_filters {
	struct pv_filter_re *res[PV_FILTER_KINDS];
	size_t n[PV_FILTER_KINDS], cap[PV_FILTER_KINDS];
};

struct pv_filter_stats {
	/* Samples before and after, counted in the profile's "samples" value
	 * (else its first value), as the reports count them. */
	int64_t before, after;
	/* Did each kind in force match anything (pprof's "matched no
	 * samples" warnings)? */
	bool matched[PV_FILTER_KINDS];
};

/* The option name of a kind without its dashes: "focus", "show-from"... */
const char *pv_filter_name(enum pv_filter_kind kind);

/* Add expression re (borrowed: it must outlive f) to the filters of kind.
 * 0; or -1 with *err set to regcomp's message (a static buffer) when re is
 * not a valid extended regular expression, or NULL when out of memory. */
int pv_filters_add(struct pv_filters *f, enum pv_filter_kind kind, const char *re, const char **err);

/* Any filter at all? */
bool pv_filters_any(const struct pv_filters *f);

/* Release the compiled expressions; f may then be reused empty. */
void pv_filters_free(struct pv_filters *f);

/* Filter p in place: drops samples, rewrites their stacks and the lines of
 * locations (the profile's stored stacks are replaced, so pointers into
 * them are invalidated).  The profile must be symbolized for names to
 * match.  Fills st when not NULL.  0, or -1 after reporting an error (out
 * of memory). */
int pv_filters_apply(struct pv_profile *p, const struct pv_filters *f, struct pv_filter_stats *st);

/* Keep only the samples of the threads whose ids are in tids (--tid),
 * before the filters, so that their counts are of those threads. */
void pv_keep_threads(struct pv_profile *p, const uint32_t *tids, size_t ntids);
/* Keep only the samples of the processes whose ids are in pids (--pid):
 * those of a thread in such a process, or, in a profile without
 * processes, all of them when its pid is one. */
void pv_keep_processes(struct pv_profile *p, const uint32_t *pids, size_t npids);

/* Remove the kernel frames (pv_location_is_kernel) from every stack: the
 * time spent in the kernel becomes the own time of the user frame that
 * entered it, as in a profile taken without kernel frames; a stack of
 * kernel frames alone is left empty (its time the whole profile's own).
 * The samples lose their PV_SAMPLE_KERNEL flag.  How many samples had
 * kernel frames, or -1 after reporting an error (out of memory). */
int64_t pv_hide_kernel(struct pv_profile *p);

/* Warn (pv_warn) about every kind in force that matched nothing. */
void pv_filters_warn(const struct pv_filters *f, const struct pv_filter_stats *st);

/* "focus=a focus=b ignore=c": the filters in force, for a report header,
 * into buf (truncated to n bytes).  Returns buf. */
char *pv_filters_describe(const struct pv_filters *f, char *buf, size_t n);

#endif
