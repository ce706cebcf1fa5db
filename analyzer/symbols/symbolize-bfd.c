/* symbolize-bfd.c - functions, lines and inlined calls from libbfd
 *
 * modules.c places each runtime address at an ELF virtual address of its
 * file; here that address is looked up the way addr2line does: the section
 * holding it, bfd_find_nearest_line_discriminator() for the innermost
 * function and its line, then bfd_find_inliner_info() for each function it
 * was inlined into, with the line of the call site.  Without DWARF libbfd
 * answers from the symbols it is given (.symtab, else the dynamic symbols),
 * with no line; PLT stubs are named by libbfd's synthetic symbols
 * ("strlen@plt").
 */
#include "symbolize-bfd.h"
#include "demangle.h"
#include "error.h"
#include "vdso.h"

#include <bfd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LINES 64
#define DEBUG_DIR "/usr/lib/debug"

struct bfd_file {
	uint32_t path;        /* string index of the mapped file */
	bfd *abfd;            /* the mapped file, NULL when unreadable */
	bfd *debug;           /* its separate debug file, or NULL */
	bfd *lines;           /* the one lines come from: debug or abfd */
	asymbol **syms;       /* of lines' file, or the mapped file's */
	asymbol *synth;       /* the mapped file's synthetic symbols (PLT stubs) */
	long nsynth;          /* how many; -1 before they are read */
};

struct bfd_symbolizer {
	struct pv_profile *p;
	struct pv_modules *mods;
	bool demangle;
	struct bfd_file *files;
	size_t nfiles, cap_files;
	struct pv_line scratch[MAX_LINES];
	size_t nscratch;
};

/* An object file, or NULL (without a message: the caller says). */
static bfd *open_object(const char *path)
{
	int fd = modules_open_file(path);
	bfd *abfd = fd >= 0 ? bfd_fdopenr(path, NULL, fd) : NULL;

	if (!abfd) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	/* Read compressed debug sections (SHF_COMPRESSED, as in Debian's
	 * -dbg packages) too: without this libbfd finds no lines in them. */
	abfd->flags |= BFD_DECOMPRESS;
	if (!bfd_check_format(abfd, bfd_object)) {
		bfd_close(abfd);
		return NULL;
	}
	return abfd;
}

/* The symbols of abfd: .symtab, else the dynamic symbols; NULL when it has
 * none (or memory ran out: libbfd then looks functions up without them). */
static asymbol **read_symbols(bfd *abfd)
{
	asymbol **syms = NULL;
	long size, n = 0;

	if (bfd_get_file_flags(abfd) & HAS_SYMS) {
		size = bfd_get_symtab_upper_bound(abfd);
		if (size > 0 && (syms = malloc((size_t)size)))
			n = bfd_canonicalize_symtab(abfd, syms);
	}
	if (n <= 0) {
		free(syms);
		syms = NULL;
		size = bfd_get_dynamic_symtab_upper_bound(abfd);
		if (size > 0 && (syms = malloc((size_t)size)))
			n = bfd_canonicalize_dynamic_symtab(abfd, syms);
	}
	if (n <= 0) {
		free(syms);
		return NULL;
	}
	return syms;
}

static bool has_debug_info(bfd *abfd)
{
	return bfd_get_section_by_name(abfd, ".debug_info") != NULL;
}

/* The separate debug file of abfd, found by build-id and then by
 * .gnu_debuglink (next to the file, in .debug/ there, and under
 * /usr/lib/debug), or NULL. */
static bfd *open_debug_file(bfd *abfd)
{
	char *path = bfd_follow_build_id_debuglink(abfd, DEBUG_DIR);
	bfd *debug = NULL;

	if (!path)
		path = bfd_follow_gnu_debuglink(abfd, DEBUG_DIR);
	if (path) {
		debug = open_object(path);
		if (debug && !has_debug_info(debug)) {
			bfd_close(debug);
			debug = NULL;
		}
	}
	free(path);
	return debug;
}

static void file_open(struct bfd_file *f, const struct pv_profile *p, const struct pv_mapping *map)
{
	const char *path = pv_str(p, map->file);

	if (map->kind == PV_MAP_VDSO) {
		/* The analyzer's own vDSO when it is the trace's (vdso.h);
		 * modules.c places no address in another kernel's.  Opened
		 * read-only through /proc: libbfd refuses the read-write memfd
		 * given to bfd_fdopenr ("invalid operation"). */
		char proc[64];
		int fd = vdso_open(pv_str(p, map->build_id), map->limit - map->start);
		if (fd < 0)
			return;
		snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
		f->abfd = open_object(proc);
		close(fd);
	} else {
		f->abfd = open_object(path);
	}
	if (!f->abfd) {
		pv_warn("cannot read symbols of '%s' with libbfd: %s; its frames show as addresses",
			path, bfd_errmsg(bfd_get_error()));
		return;
	}
	f->lines = f->abfd;
	if (!has_debug_info(f->abfd)) {
		f->debug = open_debug_file(f->abfd);
		if (f->debug)
			f->lines = f->debug;
	}
	/* A debug file usually keeps the full .symtab a stripped file lost. */
	f->syms = read_symbols(f->lines);
	if (!f->syms && f->lines != f->abfd) {
		/* A debug file without symbols: symbols belong with the
		 * sections of their own file, so look up in the stripped file
		 * with its dynamic symbols (libbfd still follows its debug
		 * link there for lines, as addr2line does). */
		f->syms = read_symbols(f->abfd);
		if (f->syms) {
			bfd_close(f->debug);
			f->debug = NULL;
			f->lines = f->abfd;
		}
	}
}

/* The open file mapping mi maps, opened on first use; NULL when out of
 * memory (reported). */
static struct bfd_file *file_for(struct bfd_symbolizer *sy, uint32_t mi)
{
	const struct pv_mapping *map = &sy->p->mappings[mi];
	uint32_t path = map->file;
	struct bfd_file *f;

	for (size_t i = 0; i < sy->nfiles; i++)
		if (sy->files[i].path == path)
			return &sy->files[i];
	if (sy->nfiles == sy->cap_files) {
		size_t cap = sy->cap_files ? 2 * sy->cap_files : 8;
		f = realloc(sy->files, cap * sizeof *f);
		if (!f) {
			pv_oom();
			return NULL;
		}
		sy->files = f;
		sy->cap_files = cap;
	}
	f = &sy->files[sy->nfiles++];
	*f = (struct bfd_file){ .path = path, .nsynth = -1 };
	file_open(f, sy->p, map);
	return f;
}

/* The allocated section holding vaddr, or NULL. */
static asection *section_of(bfd *abfd, uint64_t vaddr)
{
	for (asection *s = abfd->sections; s; s = s->next) {
		if (!(bfd_section_flags(s) & SEC_ALLOC))
			continue;
		if (vaddr >= bfd_section_vma(s) && vaddr - bfd_section_vma(s) < bfd_section_size(s))
			return s;
	}
	return NULL;
}

static int push(struct bfd_symbolizer *sy, const char *func, const char *file, unsigned line)
{
	struct pv_profile *p = sy->p;
	char *dem = sy->demangle ? demangle_symbol(func) : NULL;
	uint32_t nm = pv_intern_str(p, dem ? dem : func);
	uint32_t sn = pv_intern_str(p, func);
	uint32_t fi = file ? pv_intern_str(p, file) : 0;
	uint32_t fn;

	free(dem);
	if (nm == PV_NONE || sn == PV_NONE || fi == PV_NONE)
		return -1;
	fn = pv_get_function(p, nm, sn, fi, 0);
	if (fn == PV_NONE)
		return -1;
	if (sy->nscratch < MAX_LINES)
		sy->scratch[sy->nscratch++] = (struct pv_line){ fn, file ? line : 0 };
	return 0;
}

/* The lines of vaddr in f, innermost first; none when libbfd knows no
 * function there. */
static int bfd_lines(struct bfd_symbolizer *sy, struct bfd_file *f, uint32_t mi, uint64_t vaddr)
{
	struct pv_mapping *map = &sy->p->mappings[mi];
	asection *sec = section_of(f->lines, vaddr);
	const char *file = NULL, *func = NULL;
	unsigned line = 0, disc = 0;

	if (!sec)
		return 0;
	if (!bfd_find_nearest_line_discriminator(f->lines, sec, f->syms, vaddr - bfd_section_vma(sec),
						 &file, &func, &line, &disc))
		return 0;
	/* A line with no function (code with lines but no DIE) is not
	 * worth a frame: the address says more. */
	while (func && *func) {
		if (push(sy, func, file, line) < 0)
			return -1;
		map->has_functions = true;
		if (file && *file) {
			map->has_filenames = true;
			if (line > 0)
				map->has_line_numbers = true;
		}
		file = func = NULL;
		line = 0;
		if (!bfd_find_inliner_info(f->lines, &file, &func, &line))
			break;
	}
	return 0;
}

/* A function gcc split and inlined into itself is one frame, as the
 * default symbolizer makes it (pv_symbolize_self_inlined): where libdw
 * says the address is in such an instance, a frame of the same function
 * and file as the one it is inlined into goes, its line kept. */
static void merge_self_inlined(struct bfd_symbolizer *sy, uint32_t mi, uint64_t address)
{
	const struct pv_profile *p = sy->p;
	GElf_Addr a;
	Dwfl_Module *mod;
	size_t k = 0;

	if (sy->nscratch < 2)
		return;
	for (size_t i = 0; i + 1 < sy->nscratch && !k; i++) {
		const struct pv_function *in = &p->functions[sy->scratch[i].function];
		const struct pv_function *out = &p->functions[sy->scratch[i + 1].function];
		k = in->name == out->name && in->filename == out->filename ? i + 1 : 0;
	}
	if (!k || !(mod = modules_find(sy->mods, mi, address, &a)) || !pv_symbolize_self_inlined(mod, a))
		return;
	/* frame k-1 into k: the outer's function, the inner's line */
	sy->scratch[k].line = sy->scratch[k - 1].line;
	memmove(&sy->scratch[k - 1], &sy->scratch[k], (sy->nscratch - k) * sizeof *sy->scratch);
	sy->nscratch--;
}

/* The synthetic symbols libbfd makes for the PLT stubs of f's file
 * ("strlen@plt", from its dynamic relocations), read on first use. */
static void read_synthetic(struct bfd_file *f)
{
	long size, ndyn = 0;
	asymbol **dyn = NULL;

	f->nsynth = 0;
	size = bfd_get_dynamic_symtab_upper_bound(f->abfd);
	if (size <= 0 || !(dyn = malloc((size_t)size)))
		return;
	ndyn = bfd_canonicalize_dynamic_symtab(f->abfd, dyn);
	if (ndyn > 0) {
		long n = bfd_get_synthetic_symtab(f->abfd, 0, NULL, ndyn, dyn, &f->synth);
		f->nsynth = n > 0 ? n : 0;
	}
	/* The synthetic symbols keep their own copies of the names. */
	free(dyn);
}

/* A PLT stub at vaddr of f's file: the nearest synthetic symbol at or
 * below it in the same PLT section. */
static int plt_stub(struct bfd_symbolizer *sy, struct bfd_file *f, uint64_t vaddr)
{
	asection *sec = section_of(f->abfd, vaddr);
	const char *best = NULL;
	uint64_t best_at = 0;

	if (!sec || strncmp(bfd_section_name(sec), ".plt", 4) != 0)
		return 0;
	if (f->nsynth < 0)
		read_synthetic(f);
	for (long i = 0; i < f->nsynth; i++) {
		asymbol *s = &f->synth[i];
		uint64_t at = bfd_asymbol_value(s);
		if (s->section == sec && at <= vaddr && (!best || at > best_at)) {
			best = bfd_asymbol_name(s);
			best_at = at;
		}
	}
	if (!best)
		return 0;
	uint32_t nm = pv_intern_str(sy->p, best);
	uint32_t fn = nm == PV_NONE ? PV_NONE : pv_get_function(sy->p, nm, nm, 0, 0);
	if (fn == PV_NONE)
		return -1;
	sy->scratch[sy->nscratch++] = (struct pv_line){ fn, 0 };
	return 0;
}

static int symbolize_location(struct bfd_symbolizer *sy, uint32_t li)
{
	struct pv_profile *p = sy->p;
	const struct pv_location *loc = &p->locations[li];
	const char *path;
	uint64_t vaddr;

	sy->nscratch = 0;
	if (loc->mapping != PV_NONE &&
	    modules_file_vaddr(sy->mods, loc->mapping, loc->address, &path, &vaddr)) {
		struct bfd_file *f = file_for(sy, loc->mapping);
		if (!f)
			return -1;
		if (f->lines && bfd_lines(sy, f, loc->mapping, vaddr) < 0)
			return -1;
		merge_self_inlined(sy, loc->mapping, loc->address);
		if (sy->nscratch == 0 && f->abfd && plt_stub(sy, f, vaddr) < 0)
			return -1;
		if (sy->nscratch)
			sy->p->mappings[loc->mapping].has_functions = true;
	}
	if (sy->nscratch == 0) {
		uint32_t fn = pv_symbolize_unknown_function(p, loc);
		if (fn == PV_NONE)
			return -1;
		sy->scratch[sy->nscratch++] = (struct pv_line){ fn, 0 };
	}
	return pv_set_lines(p, li, sy->scratch, (uint32_t)sy->nscratch);
}

int pv_symbolize_bfd(struct pv_profile *p, struct pv_modules *mods,
		     const struct pv_symbolize_options *opt)
{
	struct bfd_symbolizer sy = { .p = p, .mods = mods, .demangle = !(opt && opt->no_demangle) };
	int ret = -1;

	if (bfd_init() != BFD_INIT_MAGIC) {
		pv_error("libbfd was built for another version of its header (bfd_init failed)");
		return -1;
	}
	for (size_t i = 0; i < p->nlocations; i++) {
		if (p->locations[i].nlines)
			continue; /* the source named it already */
		if (symbolize_location(&sy, (uint32_t)i) < 0)
			goto out; /* reported where memory ran out */
	}
	ret = 0;
out:
	for (size_t i = 0; i < sy.nfiles; i++) {
		free(sy.files[i].syms);
		free(sy.files[i].synth);
		if (sy.files[i].debug)
			bfd_close(sy.files[i].debug);
		if (sy.files[i].abfd)
			bfd_close(sy.files[i].abfd);
	}
	free(sy.files);
	return ret;
}
