/* symbolize.c - give every location of a profile its function and file:line
 *
 * Functions come from DWARF (inlined calls as lines of their own, innermost
 * first, each with the line of its call site in the next) or, without
 * DWARF, from the symbol table; PLT stubs are "sym@plt" (plt.h); other
 * addresses no symbol covers get a "module+0xoffset" function.  Each location is symbolized once.
 */
#include "symbolize.h"
#include "cxxname.h"
#include "demangle.h"
#include "error.h"
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct symbolizer {
	struct pv_profile *p;
	struct pv_modules *mods;
	struct pv_line *scratch;
	size_t nscratch;
	bool demangle;
	struct cxxname_cache *cxx;
	struct pv_symcache *syms;
	struct pv_scopes *scopes;
};

static int push_line(struct symbolizer *sy, uint32_t name, uint32_t sysname, uint32_t file,
		     int64_t line)
{
	struct pv_profile *p = sy->p;
	uint32_t fn;

	if (name == PV_NONE || sysname == PV_NONE || file == PV_NONE)
		return -1;
	fn = pv_get_function(p, name, sysname, file, 0);
	if (fn == PV_NONE)
		return -1;
	if (sy->nscratch < 64)
		sy->scratch[sy->nscratch++] = (struct pv_line){ fn, line };
	return 0;
}

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

static int unknown_frame(struct symbolizer *sy, const struct pv_location *loc)
{
	uint32_t fn = pv_symbolize_unknown_function(sy->p, loc);

	if (fn == PV_NONE)
		return -1;
	if (sy->nscratch < 64)
		sy->scratch[sy->nscratch++] = (struct pv_line){ fn, 0 };
	return 0;
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
static bool inlined_into_itself(Dwarf_Die *s, Dwarf_Die *outer, int nouter)
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
		    !dwarf_diecu(s, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, NULL) != 0)
			return true;
		cf = dwarf_filesrc(files, fi, NULL, NULL);
		df = dwarf_decl_file(s);
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
		found = nouter > 0 && inlined_into_itself(&inst, outer, nouter);
		free(scopes);
		scopes = outer;
		n = nouter;
		i = 0;
	}
	free(scopes);
	return found;
}

/* Lines of an address from DWARF, innermost inlined call first, ending with
 * the function they were inlined into.  0 lines when there is no DWARF. */
static int dwarf_lines(struct symbolizer *sy, Dwfl_Module *mod, GElf_Addr a, const char *file,
		       int line, const char *symname)
{
	struct pv_profile *p = sy->p;
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, a, &bias);
	Dwarf_Die *scopes = NULL;
	Dwarf_Files *files = NULL;
	int n;

	if (!cu)
		return 0;
	/* The scopes holding a, innermost first, each in the next. */
	n = pv_scopes_at(sy->scopes, cu, a - bias, &scopes);
	if (n <= 0)
		return n;
	dwarf_getsrcfiles(cu, &files, NULL);
	for (int i = 0; i < n; i++) {
		Dwarf_Die *s = &scopes[i];
		int tag = dwarf_tag(s);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		/* The name shown is the source's (foo, not foo.constprop.0);
		 * the symbol's goes to the system name.  A C++ function's
		 * DW_AT_name is bare ("method"): it is shown by its linkage
		 * name, demangled ("ns::Klass<int>::method(int)"), or as that
		 * linkage name when demangling is off. */
		const char *link = die_name(s, true);
		const char *name = NULL;
		const char *sys = link;
		char *dem = NULL;
		if (link)
			name = shown_symbol(sy, link, &dem);
		if (!name || (name == link && sy->demangle))
			name = die_name(s, false);
		if (!link && sy->demangle && internal_cxx(s)) {
			/* No linkage name: a C++ function with internal
			 * linkage.  Named as its symbol demangles, with
			 * its parameter list, as libbfd and addr2line name
			 * it: from the symbol when this is the function
			 * the address is in, else from its DWARF. */
			const char *cx = NULL;
			if (tag == DW_TAG_subprogram && symname)
				cx = dem = demangle_function(symname);
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
		uint32_t nm = pv_intern_str(p, name ? name : "??");
		uint32_t sn = pv_intern_str(p, sys ? sys : "??");
		free(dem);
		uint32_t fi = file ? pv_intern_str(p, file) : 0;
		if (nm == PV_NONE || sn == PV_NONE || fi == PV_NONE)
			return -1;
		uint32_t fn = pv_get_function(p, nm, sn, fi, die_decl_line(s));
		if (fn == PV_NONE)
			return -1;
		bool pushed = sy->nscratch < 64;
		if (pushed)
			sy->scratch[sy->nscratch++] = (struct pv_line){ fn, line };
		if (tag == DW_TAG_subprogram)
			break;
		/* The caller's line is where this instance was inlined. */
		Dwarf_Attribute attr;
		Dwarf_Word cf = 0, cl = 0;
		const char *own_file = file;
		int own_line = line;
		if (dwarf_formudata(dwarf_attr(s, DW_AT_call_file, &attr), &cf) == 0 && files)
			file = dwarf_filesrc(files, cf, NULL, NULL);
		else
			file = NULL;
		line = dwarf_formudata(dwarf_attr(s, DW_AT_call_line, &attr), &cl) == 0 ? (int)cl : 0;
		/* scopes[i..n) hold this instance, itself first. */
		if (inlined_into_itself(s, &scopes[i], n - i)) {
			/* One frame, the function's, at this instance's
			 * line: its call site is the declaration. */
			if (pushed)
				sy->nscratch--;
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

	if (!elf || !plt_name(elf, a - bias, buf, sizeof buf))
		return 0;
	uint32_t s = pv_intern_str(sy->p, buf);
	return push_line(sy, s, s, 0, 0);
}

static int symbolize_location(struct symbolizer *sy, uint32_t li)
{
	struct pv_profile *p = sy->p;
	const struct pv_location *loc = &p->locations[li];
	uint32_t mi = loc->mapping;
	GElf_Addr a = 0;
	Dwfl_Module *mod = modules_find(sy->mods, mi, loc->address, &a);

	sy->nscratch = 0;
	if (mod) {
		const char *name = pv_symcache_lookup(sy->syms, mod, a);
		const char *file = NULL;
		int line = 0;
		Dwfl_Line *l = dwfl_module_getsrc(mod, a);

		if (l)
			file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
		if (dwarf_lines(sy, mod, a, file, line, name) < 0)
			return -1;
		if (sy->nscratch == 0 && name) {
			char *dem;
			uint32_t n = pv_intern_str(p, shown_symbol(sy, name, &dem));
			uint32_t sn = pv_intern_str(p, name);
			free(dem);
			if (push_line(sy, n, sn, file ? pv_intern_str(p, file) : 0, line) < 0)
				return -1;
		}
		if (sy->nscratch == 0 && plt_stub(sy, mod, a) < 0)
			return -1;
		if (sy->nscratch) {
			p->mappings[mi].has_functions = true;
			if (file) {
				p->mappings[mi].has_filenames = true;
				if (line > 0)
					p->mappings[mi].has_line_numbers = true;
			}
		}
	}
	if (sy->nscratch == 0 && unknown_frame(sy, loc) < 0)
		return -1;
	return pv_set_lines(p, li, sy->scratch, (uint32_t)sy->nscratch);
}

int pv_symbolize(struct pv_profile *p, struct pv_modules *mods,
		 const struct pv_symbolize_options *opt)
{
	struct symbolizer sy = { .p = p, .mods = mods, .demangle = !(opt && opt->no_demangle) };
	int ret = -1;

	sy.scratch = malloc(64 * sizeof *sy.scratch);
	sy.cxx = cxxname_cache_new();
	sy.syms = pv_symcache_new();
	sy.scopes = pv_scopes_new();
	if (!sy.scratch || !sy.cxx || !sy.syms || !sy.scopes) {
		pv_oom();
		goto out;
	}
	for (size_t i = 0; i < p->nlocations; i++) {
		if (p->locations[i].nlines)
			continue; /* the source named it already */
		if (symbolize_location(&sy, (uint32_t)i) < 0)
			goto out;
	}
	ret = 0;
out:
	free(sy.scratch);
	cxxname_cache_free(sy.cxx);
	pv_symcache_free(sy.syms);
	pv_scopes_free(sy.scopes);
	return ret;
}
