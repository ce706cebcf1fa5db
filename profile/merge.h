/* merge.h - operations on whole profiles: merging inputs, naming the
 * program, and the helpers readers share to build one */
#ifndef PROFVIEW_MERGE_H
#define PROFVIEW_MERGE_H

#include "profile.h"

/* Add everything of src to dst: strings, mappings, functions, locations
 * (with their lines), threads and samples are interned into dst, so the
 * same program run several times becomes one profile.  Both must have the
 * same sample types, by name and unit, in the same order (else an error
 * naming src_name).  The earlier start time, the sum of the durations, the
 * larger period.  0, or -1 after reporting an error (dst is then
 * unchanged in what its samples say, but may hold unused objects). */
int pv_merge(struct pv_profile *dst, const struct pv_profile *src, const char *src_name);
/* Warns (a line each, the first few) about the segments of a run cut by
 * time that p lacks between two it holds, saying when they were and, where
 * the later segment knows, that they could not be written and how many
 * samples they held.  Returns the number of gaps. */
int pv_warn_segment_gaps(const struct pv_profile *p);

/* Do a and b have the same sample types, by name and unit, in order? */
bool pv_same_types(const struct pv_profile *a, const struct pv_profile *b);
/* p's sample types, "samples/count, cpu/nanoseconds" ("nothing" for
 * none), into buf; returns what to print. */
const char *pv_type_list(const struct pv_profile *p, char *buf, size_t n);

/* A copy of src that owns everything it holds; NULL after an error. */
struct pv_profile *pv_profile_copy(const struct pv_profile *src);

/* Turn every stack upside down, the inlined frames of each location too:
 * the outermost frame becomes the leaf, so a tree of p starts from where
 * the time was spent and goes out to the callers.  Each distinct stack is
 * reversed once.  0, or -1 when out of memory (p is then unchanged in
 * what its samples say, but some locations may be reversed: discard it). */
int pv_reverse_stacks(struct pv_profile *p);

/* Inlined calls made part of the function they were inlined into: each
 * location keeps only that function's line, its last (its first when
 * outermost_first: the stacks were reversed), as pprof's -noinlines.  In
 * place; nothing is freed. */
void pv_drop_inlines(struct pv_profile *p, bool outermost_first);

/* Make the main program's mappings point at the file path (the program
 * named on a command line, as pprof takes it): the mappings of the file
 * the profile names as its program, else those whose file has path's base
 * name, else the first mapping of a file.  Their build-id is kept: the
 * symbolizer warns when path's differs.  Sets p->program.  Returns
 * how many mappings now point at path, or -1 when out of memory. */
int pv_use_program(struct pv_profile *p, const char *path);

/* A location at address in mapping (PV_NONE: none) that has exactly these
 * lines: an existing one when one has them, else a new one.  When another
 * location already holds the address with other lines (a producer that
 * leaves addresses 0), the new one gets a synthetic address with no
 * mapping; a Python frame's (whose address is its process's number of its
 * code) one in the Python mapping still, that no reader makes.  Its index,
 * or PV_NONE when out of memory. */
uint32_t pv_location_with_lines(struct pv_profile *p, uint64_t address, uint32_t mapping,
				const struct pv_line *lines, uint32_t n);

/* The profile's kernel mapping (PV_KERNEL_MAPPING_NAME), added when it
 * has none: where a reader puts the kernel frames it reads.  Its index, or
 * PV_NONE when out of memory. */
uint32_t pv_kernel_mapping(struct pv_profile *p);

/* Flag PV_SAMPLE_KERNEL every sample whose leaf is a kernel frame: for
 * the readers of formats that say so by the frames alone. */
void pv_flag_kernel_samples(struct pv_profile *p);

#endif
