/* symbolize.c - give every location of a profile its function and file:line
 *
 * Functions come from DWARF (inlined calls as lines of their own, innermost
 * first, each with the line of its call site in the next) or, without
 * DWARF, from the symbol table; PLT stubs are "sym@plt" (plt.h); other
 * addresses no symbol covers get a "module+0xoffset" function.  Each
 * location is symbolized once.
 *
 * In two passes.  The first reads what each location's lines are (names,
 * files, lines: strings libdw, the ELF files and the caches keep) module
 * by module; the second puts them in the profile in the locations' order,
 * so that the profile's strings and functions come out as one pass in
 * that order would make them.  Most of the first pass is libdw reading a
 * module once (decompressing a separate debug file's sections, the line
 * tables of the units holding the addresses), and two threads may read
 * two different modules at once: each module's DWARF, line tables and
 * symbol table are its own, and nothing of the Dwfl changes once every
 * module is placed (modules_find places them all before; each module's
 * debug information is opened before too, its separate debug file
 * decompressed then).  So a second
 * thread takes modules from the end of the list while this one takes them
 * from the start, each with its own caches.  PROFVIEW_SYMBOLIZE=serial
 * reads them all on one thread; so does a session that may ask debuginfod
 * (DEBUGINFOD_URLS set), whose client is the Dwfl's, one for both.  The
 * pages of a module's files that libdw touched are given back as it is
 * read (MADV_DONTNEED on libelf's private mapping of the file: the strings
 * the second pass reads come back from the page cache), so that the peak
 * holds a part of the modules being read, not all of them: once the units
 * of the module's addresses are found (libdw 0.188 reads the header of
 * every unit for the aranges, and each header read maps the pages around
 * it, the kernel's fault-around, 64 KiB: for libpython or libc, megabytes
 * of .debug_info that nothing reads again), then as its locations are
 * read unit by unit, every megabyte or so of units (a unit's entries, line
 * program and ranges are not read again once its locations are), and at
 * its end.
 */
#include "symbolize.h"
#include "cxxname.h"
#include "demangle.h"
#include "error.h"
#include "lines.h"
#include "util.h"
#include "modules.h"
#include "plt.h"
#include "scopes.h"
#include "symcache.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define MAX_LINES 64 /* lines kept a location */

/* A function met while reading a location's lines, in the order the
 * profile is to get it; its line is kept unless taken back. */
struct rec {
	const char *name, *sys; /* never NULL */
	const char *file;       /* NULL: none */
	int64_t line, decl;
	bool pop;               /* an inlined piece of its own function: taken back */
};

/* What the first pass found for a location. */
struct lres {
	uint32_t start, n;      /* its records in its reader's */
	uint8_t reader;         /* which reader: 0 this thread, 1 the other */
	uint8_t flags;
};

enum {
	LRES_MODULE = 1,        /* in a module that can be read */
	LRES_FILE = 2,          /* the line table names its file */
	LRES_LINE = 4,          /* and a line */
};

/* Where a location's file:line comes from. */
enum src_how {
	SRC_LIBDW,             /* dwfl_module_getsrc, asked now */
	SRC_LINE,              /* the line reader's file and line */
	SRC_NONE,              /* the line reader's: no line */
};

/* A location of the module being read, as the line reader answered. */
struct src {
	Dwarf_Die *cu;
	const char *file;
	int line;
	enum src_how how;
	uint32_t unit;          /* its unit's file names in units, or UINT32_MAX */
	uint32_t k;             /* its place in the job */
};

/* One reader of modules (one thread's). */
struct symbolizer {
	bool demangle;
	struct cxxname_cache *cxx;
	struct pv_symcache *syms;
	struct pv_scopes *scopes;
	struct rec *recs;
	size_t nrecs, cap_recs;
	char **owned;           /* strings the records point to, freed at the end */
	size_t nowned, cap_owned;
	uint32_t nkept;         /* lines the current location keeps so far */
	struct pv_unit_files *units; /* the units the line reader read */
	size_t nunits, cap_units;
	struct src *src;        /* the current module's locations */
	size_t cap_src;
	bool failed;            /* out of memory (reported) */
};

/* The modules to read: each with the locations in it. */
struct job {
	Dwfl_Module *mod;
	uint32_t *locs;
	size_t n, cap;
};

struct split {
	const struct pv_profile *p;
	struct job *jobs;
	size_t njobs, cap_jobs;
	GElf_Addr *addr;        /* each location's address in its module */
	struct lres *res;       /* each location's result */
	pthread_mutex_t lock;
	size_t lo, hi;          /* jobs[lo..hi) not taken yet */
	struct symbolizer readers[2];
};

uint32_t pv_symbolize_unknown_function(struct pv_profile *p, const struct pv_location *loc)
{
	char buf[512];

	if (loc->mapping != PV_NONE) {
		const struct pv_mapping *map = &p->mappings[loc->mapping];
		const char *path = pv_str(p, map->file);
		const char *label = path[0] ? pv_base_name(path) : "[anon]";
		snprintf(buf, sizeof buf, "%s+0x%" PRIx64, label, loc->address - map->start + map->offset);
	} else {
		snprintf(buf, sizeof buf, "0x%" PRIx64, loc->address);
	}
	uint32_t s = pv_intern_str(p, buf);
	return s == PV_NONE ? PV_NONE : pv_get_function(p, s, s, 0, 0);
}

/* The name shown for a symbol: demangled when it is a mangled C++ name and
 * demangling is on.  *owned is what the caller frees. */
static const char *shown_symbol(struct symbolizer *sy, const char *sym, char **owned)
{
	*owned = sy->demangle ? demangle_symbol(sym) : NULL;
	return *owned ? *owned : sym;
}

/* The source name of a function (DW_AT_name), or with linkage its
 * linkage name when it has one; both may sit on the abstract origin of an
 * inlined instance. */
static const char *die_name(Dwarf_Die *die, bool linkage)
{
	Dwarf_Attribute attr;
	const char *name = NULL;

	if (linkage) {
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
		if (!name)
			name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
		return name;
	}
	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
}

/* A function of a C++ unit with no linkage name that is not external:
 * one with internal linkage (static, or in an anonymous namespace).  An
 * external one without a linkage name has C linkage. */
static bool internal_cxx(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	bool external = false;

	dwarf_formflag(dwarf_attr_integrate(die, DW_AT_external, &attr), &external);
	return !external && cxxname_is_cxx(die);
}

/* A symbol demangled as a function's name: without the clone suffix gcc
 * adds to a part or copy of it (" [clone .cold]"), NULL when it is not a
 * mangled name. */
static char *demangle_function(const char *sym)
{
	char *d = demangle_symbol(sym), *clone;

	while (d && (clone = strstr(d, " [clone ")) != NULL)
		*clone = '\0';
	return d;
}

static int64_t die_decl_line(Dwarf_Die *die)
{
	int line = 0;
	return dwarf_decl_line(die, &line) == 0 ? line : 0;
}

/* The function a subprogram or inlined instance is of: its abstract
 * origin, or the die itself when it has none.  False when that cannot be
 * read. */
static bool die_origin(Dwarf_Die *die, Dwarf_Die *origin)
{
	Dwarf_Attribute attr;

	if (dwarf_attr(die, DW_AT_abstract_origin, &attr))
		return dwarf_formref_die(&attr, origin) != NULL;
	*origin = *die;
	return true;
}

/* Is the inlined instance s a piece of the function it is inlined into,
 * not a call?  gcc splits a function (its "foo.part.0" clones) and inlines
 * the piece back, or merges identical tails; the piece is then described
 * as the function inlined into itself, "called" from the function's own
 * declaration (the same file, line and column), where no call can be
 * written.  A real recursive call inlined into itself is called from a
 * line of the body.  outer[0..nouter) are the scopes that hold s, s first. */
/* A unit's file names from the line reader, or NULL: libdw's. */
struct unit_ref {
	const struct pv_unit_files *files;
	struct Dwarf_CU *cu;
};

/* The file s is declared in, as dwarf_decl_file names it: from the line
 * reader's names when the attribute is in the unit it read. */
static const char *decl_file(Dwarf_Die *s, const struct unit_ref *u)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx;

	if (!u)
		return dwarf_decl_file(s);
	if (dwarf_formudata(dwarf_attr_integrate(s, DW_AT_decl_file, &attr), &idx) != 0)
		return NULL;
	return attr.cu == u->cu ? pv_unit_file(u->files, idx) : dwarf_decl_file(s);
}

static bool inlined_into_itself(Dwarf_Die *s, Dwarf_Die *outer, int nouter,
				const struct unit_ref *u)
{
	Dwarf_Attribute attr;
	Dwarf_Word cl = 0, cc = 0;
	int dl = 0, dc = 0;
	Dwarf_Die so, fo;
	const char *cf, *df;

	if (dwarf_formudata(dwarf_attr(s, DW_AT_call_line, &attr), &cl) != 0 ||
	    dwarf_decl_line(s, &dl) != 0 || cl != (Dwarf_Word)dl)
		return false;
	/* The column and the file, where the producer gives them. */
	if (dwarf_formudata(dwarf_attr(s, DW_AT_call_column, &attr), &cc) == 0 &&
	    dwarf_decl_column(s, &dc) == 0 && cc != (Dwarf_Word)dc)
		return false;
	if (!die_origin(s, &so))
		return false;
	for (int i = 1; i < nouter; i++) {
		int tag = dwarf_tag(&outer[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		if (!die_origin(&outer[i], &fo) || dwarf_dieoffset(&fo) != dwarf_dieoffset(&so))
			return false;
		/* The call's file against the declaration's: both as
		 * the unit's file table names them. */
		Dwarf_Files *files = NULL;
		Dwarf_Word fi = 0;
		Dwarf_Die cu;
		if (dwarf_formudata(dwarf_attr(s, DW_AT_call_file, &attr), &fi) != 0 ||
		    !dwarf_diecu(s, &cu, NULL, NULL))
			return true;
		if (u && cu.cu == u->cu) {
			cf = pv_unit_file(u->files, fi);
		} else {
			if (dwarf_getsrcfiles(&cu, &files, NULL) != 0)
				return true;
			cf = dwarf_filesrc(files, fi, NULL, NULL);
		}
		df = decl_file(s, u);
		return !cf || !df || strcmp(cf, df) == 0;
	}
	return false;
}

bool pv_symbolize_self_inlined(Dwfl_Module *mod, GElf_Addr a)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, a, &bias);
	Dwarf_Die *scopes = NULL;
	bool found = false;
	int n;

	if (!cu || (n = dwarf_getscopes(cu, a - bias, &scopes)) <= 0)
		return false;
	/* The instances from the innermost out, as dwarf_lines walks them. */
	for (int i = 0; i < n && !found; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		Dwarf_Die inst = scopes[i], *outer = NULL;
		int nouter = dwarf_getscopes_die(&inst, &outer);
		found = nouter > 0 && inlined_into_itself(&inst, outer, nouter, NULL);
		free(scopes);
		scopes = outer;
		n = nouter;
		i = 0;
	}
	free(scopes);
	return found;
}

/* Keep s (malloc'd, or NULL) until the end: NULL when out of memory
 * (reported, s freed). */
static const char *keep(struct symbolizer *sy, char *s)
{
	if (!s)
		return NULL;
	if (pv_grow(&sy->owned, &sy->cap_owned, sy->nowned + 1, sizeof *sy->owned) < 0) {
		free(s);
		sy->failed = true;
		return NULL;
	}
	sy->owned[sy->nowned++] = s;
	return s;
}

/* Record a function with its line; false when out of memory (reported). */
static bool record(struct symbolizer *sy, const char *name, const char *sys, const char *file,
		   int64_t line, int64_t decl)
{
	if (pv_grow(&sy->recs, &sy->cap_recs, sy->nrecs + 1, sizeof *sy->recs) < 0) {
		sy->failed = true;
		return false;
	}
	sy->recs[sy->nrecs++] = (struct rec){ name, sys, file, line, decl, false };
	if (sy->nkept < MAX_LINES)
		sy->nkept++;
	return true;
}

/* Take back the line of the last record, if it was kept. */
static void take_back(struct symbolizer *sy, bool kept)
{
	sy->recs[sy->nrecs - 1].pop = true;
	if (kept)
		sy->nkept--;
}

/* The function names of DWARF scope s: *name shown, *sys the system's. */
static void scope_names(struct symbolizer *sy, Dwarf_Die *s, int tag, const char *symname,
			const char **name_out, const char **sys_out)
{
	/* The name shown is the source's (foo, not foo.constprop.0); the
	 * symbol's goes to the system name.  A C++ function's DW_AT_name is
	 * bare ("method"): it is shown by its linkage name, demangled
	 * ("ns::Klass<int>::method(int)"), or as that linkage name when
	 * demangling is off. */
	const char *link = die_name(s, true);
	const char *name = NULL;
	const char *sys = link;
	char *dem = NULL;

	if (link)
		name = shown_symbol(sy, link, &dem);
	if (!name || (name == link && sy->demangle))
		name = die_name(s, false);
	if (!link && sy->demangle && internal_cxx(s)) {
		/* No linkage name: a C++ function with internal linkage.
		 * Named as its symbol demangles, with its parameter list, as
		 * libbfd and addr2line name it: from the symbol when this is
		 * the function the address is in, else from its DWARF. */
		const char *cx = NULL;
		if (tag == DW_TAG_subprogram && symname) {
			free(dem);
			cx = dem = demangle_function(symname);
		}
		if (!cx)
			cx = cxxname_cached(sy->cxx, s);
		if (cx)
			name = cx;
	}
	if (tag == DW_TAG_subprogram && symname)
		sys = symname;
	if (!name && sys)
		name = shown_symbol(sy, sys, &dem);
	if (!sys)
		sys = name;
	keep(sy, dem);
	*name_out = name ? name : "??";
	*sys_out = sys ? sys : "??";
}

/* Lines of an address from DWARF, innermost inlined call first, ending with
 * the function they were inlined into.  0 lines when there is no DWARF;
 * -1 when out of memory (reported). */
static int dwarf_lines(struct symbolizer *sy, Dwfl_Module *mod, GElf_Addr a, const char *file,
		       int line, const char *symname, const struct pv_unit_files *unit)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, a, &bias);
	Dwarf_Die *scopes = NULL;
	Dwarf_Files *files = NULL;
	struct unit_ref uref;
	int n;

	if (!cu)
		return 0;
	uref = (struct unit_ref){ unit, cu->cu };
	/* The scopes holding a, innermost first, each in the next. */
	n = pv_scopes_at(sy->scopes, cu, a - bias, &scopes);
	if (n <= 0)
		return n;
	if (!unit)
		dwarf_getsrcfiles(cu, &files, NULL);
	for (int i = 0; i < n; i++) {
		Dwarf_Die *s = &scopes[i];
		int tag = dwarf_tag(s);
		const char *name, *sys;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		scope_names(sy, s, tag, symname, &name, &sys);
		bool pushed = sy->nkept < MAX_LINES;
		if (sy->failed || !record(sy, name, sys, file, line, die_decl_line(s)))
			return -1;
		if (tag == DW_TAG_subprogram)
			break;
		/* The caller's line is where this instance was inlined. */
		Dwarf_Attribute attr;
		Dwarf_Word cf = 0, cl = 0;
		const char *own_file = file;
		int own_line = line;
		if (dwarf_formudata(dwarf_attr(s, DW_AT_call_file, &attr), &cf) == 0 && unit)
			file = pv_unit_file(unit, cf);
		else if (dwarf_formudata(dwarf_attr(s, DW_AT_call_file, &attr), &cf) == 0 && files)
			file = dwarf_filesrc(files, cf, NULL, NULL);
		else
			file = NULL;
		line = dwarf_formudata(dwarf_attr(s, DW_AT_call_line, &attr), &cl) == 0 ? (int)cl : 0;
		/* scopes[i..n) hold this instance, itself first. */
		if (inlined_into_itself(s, &scopes[i], n - i, unit ? &uref : NULL)) {
			/* One frame, the function's, at this instance's
			 * line: its call site is the declaration. */
			take_back(sy, pushed);
			file = own_file;
			line = own_line;
		}
	}
	return 0;
}

/* A PLT stub of mod at module address a, named "sym@plt" (plt.h). */
static int plt_stub(struct symbolizer *sy, Dwfl_Module *mod, GElf_Addr a)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	char buf[512];
	const char *s;

	if (!elf || !plt_name(elf, a - bias, buf, sizeof buf))
		return 0;
	s = keep(sy, strdup(buf));
	if (!s) {
		sy->failed = true;
		return pv_oom();
	}
	return record(sy, s, s, NULL, 0, 0) ? 0 : -1;
}

/* The first pass over a location at address a of mod: its records. */
static int read_location(struct symbolizer *sy, struct lres *res, Dwfl_Module *mod, GElf_Addr a,
			 const struct src *src)
{
	const char *name = pv_symcache_lookup(sy->syms, mod, a);
	const char *file = NULL;
	int line = 0;

	res->start = (uint32_t)sy->nrecs;
	sy->nkept = 0;
	if (src->how == SRC_LIBDW) {
		Dwfl_Line *l = dwfl_module_getsrc(mod, a);
		if (l)
			file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	} else if (src->how == SRC_LINE) {
		file = src->file;
		line = src->line;
	}
	if (dwarf_lines(sy, mod, a, file, line, name,
			src->unit != UINT32_MAX ? &sy->units[src->unit] : NULL) < 0)
		return -1;
	if (sy->nkept == 0 && name) {
		char *dem;
		const char *shown = shown_symbol(sy, name, &dem);
		if (dem && !keep(sy, dem))
			return -1;
		if (!record(sy, shown, name, file, line, 0))
			return -1;
	}
	if (sy->nkept == 0 && plt_stub(sy, mod, a) < 0)
		return -1;
	res->n = (uint32_t)(sy->nrecs - res->start);
	if (file)
		res->flags |= LRES_FILE | (line > 0 ? LRES_LINE : 0);
	return 0;
}

/* The second pass over location li: its records put in the profile, as
 * functions and lines, in order. */
static int put_location(struct pv_profile *p, uint32_t li, const struct symbolizer *sy,
			const struct lres *r, struct pv_line *lines)
{
	uint32_t n = 0;

	for (uint32_t k = r->start; sy && k < r->start + r->n; k++) {
		const struct rec *rec = &sy->recs[k];
		uint32_t nm = pv_intern_str(p, rec->name);
		uint32_t sn = pv_intern_str(p, rec->sys);
		uint32_t fi = rec->file ? pv_intern_str(p, rec->file) : 0;
		if (nm == PV_NONE || sn == PV_NONE || fi == PV_NONE)
			return -1;
		uint32_t fn = pv_get_function(p, nm, sn, fi, rec->decl);
		if (fn == PV_NONE)
			return -1;
		bool pushed = n < MAX_LINES;
		if (pushed)
			lines[n++] = (struct pv_line){ fn, rec->line };
		if (rec->pop && pushed)
			n--;
	}
	if (n && (r->flags & LRES_MODULE)) {
		struct pv_mapping *map = &p->mappings[p->locations[li].mapping];
		map->has_functions = true;
		if (r->flags & LRES_FILE) {
			map->has_filenames = true;
			if (r->flags & LRES_LINE)
				map->has_line_numbers = true;
		}
	}
	if (n == 0) {
		uint32_t fn = pv_symbolize_unknown_function(p, &p->locations[li]);
		if (fn == PV_NONE)
			return -1;
		lines[n++] = (struct pv_line){ fn, 0 };
	}
	return pv_set_lines(p, li, lines, n);
}

static int reader_init(struct symbolizer *sy, bool demangle)
{
	*sy = (struct symbolizer){ .demangle = demangle };
	sy->cxx = cxxname_cache_new();
	sy->syms = pv_symcache_new();
	sy->scopes = pv_scopes_new();
	return sy->cxx && sy->syms && sy->scopes ? 0 : pv_oom();
}

static void reader_free(struct symbolizer *sy)
{
	cxxname_cache_free(sy->cxx);
	pv_symcache_free(sy->syms);
	pv_scopes_free(sy->scopes);
	for (size_t i = 0; i < sy->nowned; i++)
		free(sy->owned[i]);
	free(sy->owned);
	free(sy->recs);
	for (size_t i = 0; i < sy->nunits; i++)
		pv_unit_files_free(&sy->units[i]);
	free(sy->units);
	free(sy->src);
}

static int cmp_src(const void *a, const void *b)
{
	const struct src *x = a, *y = b;

	if (x->cu != y->cu)
		return (uintptr_t)x->cu < (uintptr_t)y->cu ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/* The file:line of each location of a unit's group src[0..n), by the line
 * reader when it can read the unit (else left to libdw): 0 or -1. */
static int unit_group(struct symbolizer *sy, const struct split *sp, const struct job *j,
		      struct src *src, size_t n, Dwarf_Addr bias)
{
	uint64_t *addrs = malloc(n * sizeof *addrs);
	const char **file = malloc(n * sizeof *file);
	int *line = malloc(n * sizeof *line);
	bool *found = malloc(n * sizeof *found);
	struct pv_unit_files uf;
	int r = -1;

	if (!addrs || !file || !line || !found ||
	    pv_grow(&sy->units, &sy->cap_units, sy->nunits + 1, sizeof *sy->units) < 0) {
		pv_oom();
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		addrs[i] = sp->addr[j->locs[src[i].k]] - bias;
	r = pv_unit_lines(src[0].cu, addrs, n, file, line, found, &uf);
	if (r <= 0)
		goto out;
	sy->units[sy->nunits] = uf;
	for (size_t i = 0; i < n; i++)
		src[i] = (struct src){ src[i].cu, file[i], line[i], found[i] ? SRC_LINE : SRC_NONE,
				       (uint32_t)sy->nunits, src[i].k };
	sy->nunits++;
	r = 0;
out:
	free(addrs);
	free(file);
	free(line);
	free(found);
	return r < 0 ? -1 : 0;
}

/* The pages of a module's files that libelf mapped, worked out once for
 * the module: what give_back hands back to the page cache. */
struct pages {
	uintptr_t lo[2], hi[2];
	int n;
};

static void pages_of(struct pages *pg, Dwfl_Module *mod);
static void give_back(const struct pages *pg);

/* Where each of job j's locations' file:line come from, in sy->src[0..j->n)
 * sorted by unit (each unit's line program run once for all its
 * locations): the units found first, then given back (libdw 0.188 reads
 * the header of every unit for the aranges, and each read maps the pages
 * around it: megabytes of .debug_info that nothing reads again).  0, or
 * -1 when out of memory (reported). */
static int job_units(struct symbolizer *sy, const struct split *sp, const struct job *j,
		     const struct pages *pg)
{
	struct src *src;

	if (pv_grow(&sy->src, &sy->cap_src, j->n, sizeof *sy->src) < 0)
		return -1;
	src = sy->src;
	for (size_t k = 0; k < j->n; k++) {
		Dwarf_Addr bias;
		src[k] = (struct src){ .how = SRC_LIBDW, .unit = UINT32_MAX, .k = (uint32_t)k };
		src[k].cu = dwfl_module_addrdie(j->mod, sp->addr[j->locs[k]], &bias);
	}
	give_back(pg);
	qsort(src, j->n, sizeof *src, cmp_src);
	return 0;
}

/* The next module for reader who (0 from the start, 1 from the end). */
static struct job *take(struct split *sp, int who)
{
	struct job *j = NULL;

	pthread_mutex_lock(&sp->lock);
	if (sp->lo < sp->hi)
		j = who ? &sp->jobs[--sp->hi] : &sp->jobs[sp->lo++];
	pthread_mutex_unlock(&sp->lock);
	return j;
}

/* Is [lo, hi) inside one mapping of a file (an inode: a file's, a
 * memfd's), by /proc/self/maps? */
static bool file_mapped(uintptr_t lo, uintptr_t hi)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	bool found = false;

	if (!f)
		return false;
	while (!found && fgets(line, sizeof line, f)) {
		unsigned long a, b, ino;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %lu", &a, &b, &ino) == 3 && a <= lo && hi <= b)
			found = ino != 0;
	}
	fclose(f);
	return found;
}

/* Is [lo, hi) exactly one mapping of a file?  Its name in
 * /proc/self/map_files is there only then: one lookup, where reading
 * /proc/self/maps has the kernel print every mapping. */
static bool file_mapping_is(uintptr_t lo, uintptr_t hi)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof path, "/proc/self/map_files/%lx-%lx", (unsigned long)lo,
		 (unsigned long)hi);
	return lstat(path, &st) == 0;
}

/* The page-aligned part of e's file that libelf mapped, in *lo and *hi
 * (empty when none): only a file libelf mapped (the whole file at a
 * page's start: looked up as that mapping first), and not an ET_REL one,
 * which libdwfl relocates in place.  What is read of it after its pages
 * are given back (the second pass's names) comes back from the file. */
static void mapped_part(Elf *e, uintptr_t *lo, uintptr_t *hi)
{
	GElf_Ehdr eh;
	size_t size;
	char *base;
	uintptr_t a, b;

	*lo = *hi = 0;
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || eh.e_type == ET_REL ||
	    !(base = elf_rawfile(e, &size)) || size == 0)
		return;
	a = ((uintptr_t)base + 4095) & ~(uintptr_t)4095;
	b = ((uintptr_t)base + size) & ~(uintptr_t)4095;
	if (b > a && ((a == (uintptr_t)base && file_mapping_is(a, ((uintptr_t)base + size + 4095) &
								      ~(uintptr_t)4095)) ||
		      file_mapped(a, b))) {
		*lo = a;
		*hi = b;
	}
}

static void pages_of(struct pages *pg, Dwfl_Module *mod)
{
	GElf_Addr bias;
	Dwarf_Addr dbias;
	Elf *main = dwfl_module_getelf(mod, &bias);
	Dwarf *dw = dwfl_module_getdwarf(mod, &dbias);
	Elf *debug = dw ? dwarf_getelf(dw) : NULL;

	pg->n = 0;
	mapped_part(main, &pg->lo[0], &pg->hi[0]);
	pg->n += pg->hi[0] > pg->lo[0];
	if (debug != main) {
		mapped_part(debug, &pg->lo[pg->n], &pg->hi[pg->n]);
		pg->n += pg->hi[pg->n] > pg->lo[pg->n];
	}
}

/* The pages of a module's files that libdw touched given back, so that
 * the two readers' modules do not all stay in memory at once, nor a
 * module's units: each unit's entries, line program and ranges are read
 * and done with before the next unit's. */
static void give_back(const struct pages *pg)
{
	for (int i = 0; i < pg->n; i++)
		madvise((void *)pg->lo[i], pg->hi[i] - pg->lo[i], MADV_DONTNEED);
}

/* About what reading a unit maps of its files: its entries, and at least
 * the 64 KiB the kernel maps around each page first read (fault-around)
 * in .debug_info, .debug_line and the ranges, abbreviations and strings;
 * a unit's pages are given back once that is GIVE_BACK_AT for the units
 * read since, not after each of many small units. */
#define GIVE_BACK_AT (1u << 20)

static uint64_t unit_cost(Dwarf_Die *cu)
{
	Dwarf_Off hdr, next;

	if (!cu)
		return 0;
	hdr = dwarf_dieoffset(cu) - dwarf_cuoffset(cu);
	if (dwarf_next_unit(dwarf_cu_getdwarf(cu->cu), hdr, &next, NULL, NULL, NULL, NULL, NULL,
			    NULL, NULL) != 0 || next < hdr)
		return GIVE_BACK_AT;
	return (next - hdr) + 4 * (64u << 10);
}

/* Reader who's first pass over job j: its locations unit by unit, the
 * pages given back after each megabyte or so of units and at the end.
 * 0, or -1 when out of memory (reported). */
static int read_job(struct symbolizer *sy, struct split *sp, const struct job *j, int who)
{
	struct pages pg;
	struct src *src;
	uint64_t read = 0;

	pages_of(&pg, j->mod);
	if (job_units(sy, sp, j, &pg) < 0)
		return -1;
	src = sy->src;
	for (size_t lo = 0, hi; lo < j->n; lo = hi) {
		Dwarf_Addr bias = 0;
		for (hi = lo + 1; hi < j->n && src[hi].cu == src[lo].cu; hi++)
			;
		if (src[lo].cu) {
			dwfl_module_addrdie(j->mod, sp->addr[j->locs[src[lo].k]], &bias);
			if (unit_group(sy, sp, j, &src[lo], hi - lo, bias) < 0)
				return -1;
		}
		for (size_t i = lo; i < hi; i++) {
			uint32_t li = j->locs[src[i].k];
			sp->res[li].reader = (uint8_t)who;
			if (read_location(sy, &sp->res[li], j->mod, sp->addr[li], &src[i]) < 0)
				return -1;
		}
		read += unit_cost(src[lo].cu);
		if (read >= GIVE_BACK_AT || hi == j->n) {
			give_back(&pg);
			read = 0;
		}
	}
	return 0;
}

/* Reader who's first pass, module by module, until none is left. */
static void read_jobs(struct split *sp, int who)
{
	struct symbolizer *sy = &sp->readers[who];
	struct job *j;

	while (!sy->failed && (j = take(sp, who)) != NULL)
		if (read_job(sy, sp, j, who) < 0)
			sy->failed = true;
}

static void *reader_thread(void *arg)
{
	read_jobs(arg, 1);
	return NULL;
}

/* Place every location's module (warnings about files in the locations'
 * order) and make the list of modules to read. */
static int find_modules(struct split *sp, struct pv_modules *mods)
{
	const struct pv_profile *p = sp->p;
	size_t last = 0;

	for (size_t i = 0; i < p->nlocations; i++) {
		const struct pv_location *loc = &p->locations[i];
		Dwfl_Module *mod;
		struct job *j = NULL;

		if (loc->nlines)
			continue; /* the source named it already */
		mod = modules_find(mods, loc->mapping, loc->address, &sp->addr[i]);
		if (!mod)
			continue;
		sp->res[i].flags = LRES_MODULE;
		if (last < sp->njobs && sp->jobs[last].mod == mod)
			j = &sp->jobs[last];
		for (size_t k = 0; !j && k < sp->njobs; k++)
			if (sp->jobs[k].mod == mod)
				j = &sp->jobs[last = k];
		if (!j) {
			if (pv_grow(&sp->jobs, &sp->cap_jobs, sp->njobs + 1, sizeof *sp->jobs) < 0)
				return -1;
			last = sp->njobs++;
			j = &sp->jobs[last];
			*j = (struct job){ .mod = mod };
		}
		if (pv_grow(&j->locs, &j->cap, j->n + 1, sizeof *j->locs) < 0)
			return -1;
		j->locs[j->n++] = (uint32_t)i;
	}
	return 0;
}

/* May a second thread read modules? */
static bool two_readers(const struct split *sp)
{
	const char *how = getenv("PROFVIEW_SYMBOLIZE");
	const char *urls = getenv("DEBUGINFOD_URLS");

	return sp->njobs > 1 && !(how && strcmp(how, "serial") == 0) && !(urls && urls[0]);
}

/* May a second thread read modules? */
static bool two_readers(const struct split *sp);

/* All the jobs taken by reader 0 (first, on this thread) and reader 1
 * (second's thread, when two may read) from either end of the list. */
static void on_both(struct split *sp, void *(*second)(void *), void (*first)(struct split *, int))
{
	pthread_t helper;
	bool helping;

	sp->lo = 0;
	sp->hi = sp->njobs;
	helping = two_readers(sp) && pthread_create(&helper, NULL, second, sp) == 0;
	first(sp, 0);
	if (helping)
		pthread_join(helper, NULL);
}

/* Reader who's modules' debug information found and opened, until none
 * is left. */
static void open_jobs(struct split *sp, int who)
{
	struct job *j;

	while ((j = take(sp, who)) != NULL) {
		Dwarf_Addr bias;
		dwfl_module_getdwarf(j->mod, &bias);
	}
}

static void *open_thread(void *arg)
{
	open_jobs(arg, 1);
	return NULL;
}

/* Every module's debug information found and opened before the readers
 * start, on the readers' threads: a separate debug file with compressed
 * sections is decompressed then (debugfile.h: each on two threads more,
 * each section inflated in memory at once when it can be), while the
 * memory in use is the least it will be, not beside a module being
 * read. */
static void open_debug_info(struct split *sp)
{
	on_both(sp, open_thread, open_jobs);
}

/* The first pass: every location's records, on one thread or two. */
static int read_all(struct split *sp)
{
	open_debug_info(sp);
	on_both(sp, reader_thread, read_jobs);
	return sp->readers[0].failed || sp->readers[1].failed ? -1 : 0;
}

int pv_symbolize(struct pv_profile *p, struct pv_modules *mods,
		 const struct pv_symbolize_options *opt)
{
	struct split sp = { .p = p };
	bool demangle = !(opt && opt->no_demangle);
	struct pv_line lines[MAX_LINES];
	int ret = -1;

	pthread_mutex_init(&sp.lock, NULL);
	sp.addr = calloc(p->nlocations ? p->nlocations : 1, sizeof *sp.addr);
	sp.res = calloc(p->nlocations ? p->nlocations : 1, sizeof *sp.res);
	if (!sp.addr || !sp.res) {
		pv_oom();
		goto out;
	}
	if (reader_init(&sp.readers[0], demangle) < 0 || reader_init(&sp.readers[1], demangle) < 0 ||
	    find_modules(&sp, mods) < 0 || read_all(&sp) < 0)
		goto out;
	for (size_t i = 0; i < p->nlocations; i++) {
		const struct lres *r = &sp.res[i];
		if (p->locations[i].nlines)
			continue;
		if (put_location(p, (uint32_t)i, r->n ? &sp.readers[r->reader] : NULL, r, lines) < 0)
			goto out;
	}
	ret = 0;
out:
	for (size_t k = 0; k < sp.njobs; k++)
		free(sp.jobs[k].locs);
	free(sp.jobs);
	reader_free(&sp.readers[0]);
	reader_free(&sp.readers[1]);
	free(sp.addr);
	free(sp.res);
	pthread_mutex_destroy(&sp.lock);
	return ret;
}
