/* pprof-write.h - write a profile as pprof's gzipped profile.proto */
#ifndef PROFVIEW_PPROF_WRITE_H
#define PROFVIEW_PPROF_WRITE_H

#include "profile.h"

#include <stdio.h>

struct pprof_write_options {
	bool uncompressed;     /* plain protobuf instead of gzip */
	/* The sample type pprof shows unless told otherwise
	 * (default_sample_type): NULL for the profile's time value when it
	 * has one ("cpu"), the sample count otherwise. */
	const char *default_sample_type;
	/* A comparison (pv_profile.diff) is written as pprof -diff_base
	 * writes one: the base's samples labelled "pprof::base" = "true" with
	 * their values negated.  Before that, the base's values are multiplied
	 * by base_scale and the new side's by new_scale (0: 1). */
	double base_scale, new_scale;
};

/* The comment that carries the profile's system CPU time
 * (pv_profile.system_cpu_ns), followed by it in nanoseconds: pprof shows
 * it (-comments), profview reads it back. */
#define PPROF_SYSTEM_COMMENT "system CPU time of the samples, ns: "

/* Write p to out (name for messages) as a profile.proto: its sample
 * types, period, time, mappings (the program's first, the kernel's last,
 * named PV_KERNEL_MAPPING_NAME as perf's converters name it), locations with
 * their lines (innermost first), functions, and samples with identical
 * stacks and threads merged into one with summed values, each labelled
 * with its thread ("thread": the id, "thread_name", both strings), and
 * the default sample type set.
 * Samples still flagged PV_SAMPLE_LEAF_CANDIDATE are refused.  May add
 * strings to p.  opt may be NULL.  0, or -1 after reporting an error. */
int pprof_write(FILE *out, const char *name, struct pv_profile *p,
		const struct pprof_write_options *opt);

#endif
