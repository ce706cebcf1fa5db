/* load.h - the profile every view starts from: read, place, symbolize
 *
 * Reading the files, unwinding DWARF-mode traces, choosing the program's
 * symbols and symbolizing are one stage, the same for every front end:
 *
 *   modules   one Dwfl for every file the profiles map (modules.h), made
 *             before reading so the unwinder and the symbolizers share it;
 *   read      every file, in any format (read.h), merged into the first;
 *   program   "profview ./app prof.out": the executable given first stands
 *             for the profile's main binary (pv_use_program);
 *   place     each mapped file placed where its mapping put it;
 *   leaf      the sampled instruction's function settled (leaf.h);
 *   symbolize with libdw, or libbfd as a second opinion.
 *
 * What comes out is the source of pipeline.h's views.
 */
#ifndef PROFVIEW_LOAD_H
#define PROFVIEW_LOAD_H

#include "modules.h"
#include "profile.h"
#include "symbolize.h"

#include <stdbool.h>
#include <stddef.h>

struct pv_unwinder;

struct pv_source_options {
	const char *program;   /* the program's executable, or NULL */
	size_t max_input;      /* per file (read.h); 0: the default */
	size_t max_memory;     /* the budget (read.h); 0: the default */
	bool bfd;              /* symbolize with libbfd instead of libdw */
	struct pv_symbolize_options symbolize;
	bool quiet;            /* no warnings about the input */
	/* a heap profile's stacks keep the allocator's frames at their leaf
	 * (malloc, operator new...: allocframes.h), trimmed unless told */
	bool keep_alloc_frames;
	/* a Python program's stacks keep the interpreter's own frames
	 * between its Python frames (pyfold.h), folded out unless told */
	bool native_frames;
};

struct pv_source {
	struct pv_profile *p;  /* symbolized */
	struct pv_modules *mods; /* the files it maps, for addresses' files */
	struct pv_unwinder *unwinder;
};

/* Reads paths[0..n) into s, ready for views.  0, or -1 after the error was
 * reported (a file that is not a profile, one that is a program given in
 * the wrong place, out of memory); s is then empty. */
int pv_source_open(char *const *paths, size_t n, const struct pv_source_options *o,
		   struct pv_source *s);
/* A comparison: the base profiles base[0..nb) and the new ones
 * paths[0..n), each side read and symbolized as pv_source_open does, then
 * the base merged into the new side with its samples flagged
 * PV_SAMPLE_BASE (profile.h: the profile's diff fields say how many runs
 * each side holds).  0, or -1 after the error was reported. */
int pv_source_open_diff(char *const *base, size_t nb, char *const *paths, size_t n,
			const struct pv_source_options *o, struct pv_source *s);
void pv_source_close(struct pv_source *s);

/* Does path name an ELF file?  How a program on the command line is told
 * from a profile ("-", standard input, is not). */
bool pv_is_elf(const char *path);

#endif
