/* load.c - read, place, symbolize: the profile every view starts from */
#include "load.h"

#include "allocframes.h"
#include "kresume.h"
#include "pyfold.h"
#include "elfsym.h"
#include "error.h"
#include "kallsyms.h"
#include "leaf.h"
#include "merge.h"
#include "read.h"
#include "symbolize-bfd.h"
#include "unwind-dwarf.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool pv_is_elf(const char *path)
{
	unsigned char magic[4];
	int fd = strcmp(path, "-") == 0 ? -1 : open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	bool elf;

	if (fd < 0)
		return false;
	/* Only a regular file: a pipe's first bytes belong to its reader. */
	elf = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	      read(fd, magic, sizeof magic) == (ssize_t)sizeof magic &&
	      memcmp(magic, "\177ELF", 4) == 0;
	close(fd);
	return elf;
}

/* Every profile, merged into the first. */
static struct pv_profile *read_all(char *const *paths, size_t n, const struct pv_read_options *ropts)
{
	struct pv_profile *p = NULL;

	for (size_t i = 0; i < n; i++) {
		if (pv_is_elf(paths[i])) {
			pv_error("'%s' is a program, not a profile: give it first, before the profiles",
				 paths[i]);
			pv_profile_free(p);
			return NULL;
		}
		struct pv_profile *q = pv_read_file(paths[i], ropts);
		if (!q) {
			pv_profile_free(p);
			return NULL;
		}
		if (!p) {
			p = q;
			continue;
		}
		int r = pv_merge(p, q, strcmp(paths[i], "-") == 0 ? "standard input" : paths[i]);
		pv_profile_free(q);
		if (r < 0) {
			pv_profile_free(p);
			return NULL;
		}
	}
	/* (one segment alone may start after the run's start) */
	if (p && p->nsegments > 0)
		pv_warn_segment_gaps(p);
	return p;
}

/* A heap trace of a program that defines its own malloc (given, or the
 * one the trace names): its allocations never reached the collector's,
 * which the header says.  0, or -1 when out of memory. */
static int own_allocator(struct pv_profile *p, const char *program)
{
	const char *path = program ? program : pv_str(p, p->program);

	if (!pv_is_heap_profile(p) || strcmp(pv_str(p, p->source_format), "profview raw trace") != 0 ||
	    !path[0] || pv_elf_defines(path, "malloc") != 1)
		return 0;
	p->own_allocator = pv_intern_str(p, path);
	return p->own_allocator == PV_NONE ? -1 : 0;
}

int pv_source_open(char *const *paths, size_t n, const struct pv_source_options *o,
		   struct pv_source *s)
{
	struct raw_unwinder uw;
	struct pv_read_options ropts = { .max_input = o->max_input, .max_memory = o->max_memory };

	*s = (struct pv_source){ 0 };
	s->mods = modules_new(o->quiet);
	if (!s->mods)
		goto fail;
	s->unwinder = unwinder_new(s->mods, o->quiet);
	if (!s->unwinder)
		goto fail;
	unwinder_interface(s->unwinder, &uw);
	ropts.unwinder = &uw;
	s->p = read_all(paths, n, &ropts);
	unwinder_settle(s->unwinder);
	if (!s->p)
		goto fail;
	if (o->program) {
		int k = pv_use_program(s->p, o->program);
		if (k < 0)
			goto fail;
		if (k == 0 && s->p->nmappings)
			pv_warn("the profile maps no file that could be '%s'; its symbols are not used",
				o->program);
	}
	if (modules_use_profile(s->mods, s->p) < 0 || pv_settle_leaf_candidates(s->p, s->mods) < 0)
		goto fail;
	if (pv_symbolize_kernel(s->p, NULL, NULL, o->quiet) < 0 || pv_charge_resumptions(s->p) < 0)
		goto fail;
	if ((o->bfd ? pv_symbolize_bfd(s->p, s->mods, &o->symbolize)
		    : pv_symbolize(s->p, s->mods, &o->symbolize)) < 0)
		goto fail;
	if (!o->keep_alloc_frames && pv_is_heap_profile(s->p) && pv_trim_alloc_frames(s->p) < 0)
		goto fail;
	if (o->native_frames && pv_split_python_loops(s->p) < 0)
		goto fail;
	if (!pv_is_heap_profile(s->p) && pv_mark_python_waits(s->p, !o->native_frames) < 0)
		goto fail;
	if (!o->native_frames && pv_fold_python_frames(s->p) < 0)
		goto fail;
	if (own_allocator(s->p, o->program) < 0)
		goto fail;
	return 0;
fail:
	pv_source_close(s);
	return -1;
}

/* Each side of a comparison was checked alone; one table holds both, so
 * their totals together must be countable too. Said of both sides, since
 * neither alone is at fault. */
static int sides_overflow(const struct pv_profile *base, const struct pv_profile *p,
			  const char *base_name, const char *new_name)
{
	for (uint32_t v = 0; v < p->nvalues; v++) {
		int64_t sum;
		if (!__builtin_add_overflow(pv_total(base, v), pv_total(p, v), &sum))
			continue;
		const char *b = base_name && strcmp(base_name, "-") ? base_name : "the base profiles";
		const char *n = new_name && strcmp(new_name, "-") ? new_name : "the new profiles";
		return pv_error("cannot compare '%s' with '%s': their '%s' values together add up to more than %" PRId64 ", which profview cannot count",
				b, n, pv_str(p, p->sample_types[v].type), INT64_MAX);
	}
	return 0;
}

int pv_source_open_diff(char *const *base, size_t nb, char *const *paths, size_t n,
			const struct pv_source_options *o, struct pv_source *s)
{
	struct pv_source b;
	struct pv_profile *p;
	int64_t duration, system;

	if (pv_source_open(base, nb, o, &b) < 0)
		return -1;
	if (pv_source_open(paths, n, o, s) < 0) {
		pv_source_close(&b);
		return -1;
	}
	p = s->p;
	if (p->diff || b.p->diff) {
		pv_source_close(&b);
		pv_source_close(s);
		return pv_error("a profile given is a comparison already: compare plain profiles");
	}
	if (!pv_same_types(p, b.p)) {
		char x[256], y[256];
		pv_error("cannot compare: the base's samples count %s, the new profiles' %s: compare profiles recorded the same way",
			 pv_type_list(b.p, x, sizeof x), pv_type_list(p, y, sizeof y));
		pv_source_close(&b);
		pv_source_close(s);
		return -1;
	}
	if (sides_overflow(b.p, p, nb == 1 ? base[0] : NULL, n == 1 ? paths[0] : NULL) < 0) {
		pv_source_close(&b);
		pv_source_close(s);
		return -1;
	}
	for (size_t i = 0; i < b.p->nsamples; i++)
		b.p->samples[i].flags |= PV_SAMPLE_BASE;
	/* each side's times from its own start */
	b.p->time_ns = p->time_ns;
	duration = p->duration_ns;
	/* the header speaks of the new side's CPU time */
	system = p->system_cpu_ns;
	if (pv_merge(p, b.p, nb == 1 && strcmp(base[0], "-") ? base[0] : "the base profiles") < 0) {
		pv_source_close(&b);
		pv_source_close(s);
		return -1;
	}
	p->duration_ns = duration;
	p->system_cpu_ns = system;
	p->diff = true;
	p->diff_base_runs = (uint32_t)nb;
	p->diff_new_runs = (uint32_t)n;
	p->diff_base_duration_ns = b.p->duration_ns;
	pv_source_close(&b);
	return 0;
}

void pv_source_close(struct pv_source *s)
{
	pv_profile_free(s->p);
	modules_free(s->mods);
	unwinder_free(s->unwinder);
	*s = (struct pv_source){ 0 };
}
