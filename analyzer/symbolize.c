/* symbolize.c - give every location of a profile its function and file:line
 *
 * Each ELF file the profile maps is opened once with libdwfl (separate debug
 * info is found the standard way: build-id under /usr/lib/debug/.build-id/
 * and .gnu_debuglink).  A runtime address becomes a file offset through the
 * recorded mapping, and the file offset an ELF virtual address through the
 * file's PT_LOAD headers, so PIE, ASLR and libraries mapped anywhere are all
 * the same case.  Each location is symbolized once.
 */
#include "symbolize.h"
#include "error.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct module {
	uint32_t file;        /* string index of the path */
	Dwfl *dwfl;           /* NULL when the file could not be opened */
	Dwfl_Module *mod;
	GElf_Addr bias;
	GElf_Phdr *loads;     /* PT_LOAD headers */
	size_t nloads;
	bool warned;
};

struct symbolizer {
	struct pv_profile *p;
	struct module *mods;
	size_t nmods;
	uint32_t *mod_of_mapping; /* mapping index -> module index or PV_NONE */
	const struct pv_symbolize_options *opt;
	struct pv_line *scratch;
	size_t nscratch;
};

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void hex_build_id(char *out, size_t outsz, const unsigned char *id, int len)
{
	static const char digits[] = "0123456789abcdef";
	size_t o = 0;

	for (int i = 0; i < len && o + 2 < outsz; i++) {
		out[o++] = digits[id[i] >> 4];
		out[o++] = digits[id[i] & 15];
	}
	out[o] = '\0';
}

static int module_open(struct symbolizer *sy, struct module *m, const struct pv_mapping *map)
{
	const char *path = pv_str(sy->p, m->file);
	const unsigned char *id;
	GElf_Addr vaddr;
	Elf *elf;
	size_t nph;

	m->dwfl = dwfl_begin(&callbacks);
	if (!m->dwfl)
		return -1;
	dwfl_report_begin(m->dwfl);
	m->mod = dwfl_report_elf(m->dwfl, base_name(path), path, -1, 0, false);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod)
		goto fail;
	elf = dwfl_module_getelf(m->mod, &m->bias);
	if (!elf || elf_getphdrnum(elf, &nph) < 0)
		goto fail;
	m->loads = calloc(nph ? nph : 1, sizeof *m->loads);
	if (!m->loads)
		goto fail;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			m->loads[m->nloads++] = ph;
	}
	/* A file that changed since the trace was taken gives wrong names. */
	int len = dwfl_module_build_id(m->mod, &id, &vaddr);
	if (len > 0 && pv_str(sy->p, map->build_id)[0]) {
		char hex[2 * 64 + 1];
		hex_build_id(hex, sizeof hex, id, len);
		if (strcmp(hex, pv_str(sy->p, map->build_id)) != 0 && !sy->opt->quiet)
			pv_warn("'%s' is not the file that was profiled (its build-id differs); its names may be wrong",
				path);
	}
	return 0;
fail:
	if (!sy->opt->quiet)
		pv_warn("cannot read symbols of '%s': %s; its frames show as addresses", path,
			dwfl_errmsg(-1));
	if (m->dwfl)
		dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->mod = NULL;
	return -1;
}

static uint32_t module_for_mapping(struct symbolizer *sy, uint32_t mi)
{
	const struct pv_mapping *map = &sy->p->mappings[mi];
	struct module *m;

	if (sy->mod_of_mapping[mi] != PV_NONE)
		return sy->mod_of_mapping[mi];
	if (map->kind != PV_MAP_FILE)
		return PV_NONE;
	for (size_t i = 0; i < sy->nmods; i++)
		if (sy->mods[i].file == map->file)
			return sy->mod_of_mapping[mi] = (uint32_t)i;
	m = &sy->mods[sy->nmods];
	*m = (struct module){ .file = map->file };
	module_open(sy, m, map);
	return sy->mod_of_mapping[mi] = (uint32_t)sy->nmods++;
}

/* ELF virtual address (module address space) of a runtime address, or
 * false when the mapping and the file's segments do not agree. */
static bool module_address(const struct module *m, const struct pv_mapping *map, uint64_t addr,
			   GElf_Addr *out)
{
	uint64_t off = addr - map->start + map->offset;

	for (size_t i = 0; i < m->nloads; i++) {
		const GElf_Phdr *ph = &m->loads[i];
		if (off >= ph->p_offset && off < ph->p_offset + ph->p_filesz) {
			*out = off - ph->p_offset + ph->p_vaddr + m->bias;
			return true;
		}
	}
	return false;
}

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

/* Name for an address no symbol covers: "module+0xoffset" or "0xaddr". */
static int unknown_frame(struct symbolizer *sy, const struct pv_location *loc)
{
	struct pv_profile *p = sy->p;
	char buf[512];

	if (loc->mapping != PV_NONE) {
		const struct pv_mapping *map = &p->mappings[loc->mapping];
		const char *path = pv_str(p, map->file);
		const char *label = path[0] ? base_name(path) : "[anon]";
		snprintf(buf, sizeof buf, "%s+0x%" PRIx64, label, loc->address - map->start + map->offset);
	} else {
		snprintf(buf, sizeof buf, "0x%" PRIx64, loc->address);
	}
	uint32_t s = pv_intern_str(p, buf);
	return push_line(sy, s, s, 0, 0);
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name;

	/* The linkage name tells C++ overloads apart; the plain name is what C
	 * has.  Both may sit on the abstract origin of an inlined instance. */
	name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (!name)
		name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return name;
}

static int64_t die_decl_line(Dwarf_Die *die)
{
	int line = 0;
	return dwarf_decl_line(die, &line) == 0 ? line : 0;
}

/* Lines of an address from DWARF, innermost inlined call first, ending with
 * the function they were inlined into.  0 lines when there is no DWARF. */
static int dwarf_lines(struct symbolizer *sy, struct module *m, GElf_Addr a, const char *file,
		       int line, const char *symname)
{
	struct pv_profile *p = sy->p;
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, a, &bias);
	Dwarf_Die *scopes = NULL;
	Dwarf_Files *files = NULL;
	int n;

	if (!cu)
		return 0;
	n = dwarf_getscopes(cu, a - bias, &scopes);
	if (n <= 0)
		return 0;
	dwarf_getsrcfiles(cu, &files, NULL);
	for (int i = 0; i < n; i++) {
		Dwarf_Die *s = &scopes[i];
		int tag = dwarf_tag(s);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		const char *name = die_name(s);
		/* The outermost function keeps the symbol table's name when the
		 * DWARF has none (and for clones such as foo.cold). */
		if (tag == DW_TAG_subprogram && symname && (!name || strncmp(symname, name, strlen(name)) == 0))
			name = symname;
		uint32_t nm = pv_intern_str(p, name ? name : "??");
		uint32_t fi = file ? pv_intern_str(p, file) : 0;
		if (nm == PV_NONE || fi == PV_NONE)
			goto fail;
		uint32_t fn = pv_get_function(p, nm, nm, fi, die_decl_line(s));
		if (fn == PV_NONE)
			goto fail;
		if (sy->nscratch < 64)
			sy->scratch[sy->nscratch++] = (struct pv_line){ fn, line };
		if (tag == DW_TAG_subprogram)
			break;
		/* The caller's line is where this instance was inlined. */
		Dwarf_Attribute attr;
		Dwarf_Word cf = 0, cl = 0;
		if (dwarf_formudata(dwarf_attr(s, DW_AT_call_file, &attr), &cf) == 0 && files)
			file = dwarf_filesrc(files, cf, NULL, NULL);
		else
			file = NULL;
		line = dwarf_formudata(dwarf_attr(s, DW_AT_call_line, &attr), &cl) == 0 ? (int)cl : 0;
	}
	free(scopes);
	return 0;
fail:
	free(scopes);
	return -1;
}

static int symbolize_location(struct symbolizer *sy, uint32_t li)
{
	struct pv_profile *p = sy->p;
	const struct pv_location *loc = &p->locations[li];
	uint32_t mi = loc->mapping;
	struct module *m = NULL;
	GElf_Addr a;

	sy->nscratch = 0;
	if (mi != PV_NONE) {
		uint32_t k = module_for_mapping(sy, mi);
		if (k != PV_NONE && sy->mods[k].mod)
			m = &sy->mods[k];
	}
	if (m && module_address(m, &p->mappings[mi], loc->address, &a)) {
		GElf_Off off;
		GElf_Sym sym;
		const char *name = dwfl_module_addrinfo(m->mod, a, &off, &sym, NULL, NULL, NULL);
		const char *file = NULL;
		int line = 0;
		Dwfl_Line *l = dwfl_module_getsrc(m->mod, a);

		if (l)
			file = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
		if (dwarf_lines(sy, m, a, file, line, name) < 0)
			return -1;
		if (sy->nscratch == 0 && name) {
			uint32_t n = pv_intern_str(p, name);
			if (push_line(sy, n, n, file ? pv_intern_str(p, file) : 0, line) < 0)
				return -1;
		}
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

int pv_symbolize(struct pv_profile *p, const struct pv_symbolize_options *opt)
{
	static const struct pv_symbolize_options defaults = { 0 };
	struct symbolizer sy = { .p = p, .opt = opt ? opt : &defaults };
	int ret = -1;

	sy.mods = calloc(p->nmappings ? p->nmappings : 1, sizeof *sy.mods);
	sy.mod_of_mapping = malloc((p->nmappings ? p->nmappings : 1) * sizeof *sy.mod_of_mapping);
	sy.scratch = malloc(64 * sizeof *sy.scratch);
	if (!sy.mods || !sy.mod_of_mapping || !sy.scratch) {
		pv_oom();
		goto out;
	}
	for (size_t i = 0; i < p->nmappings; i++)
		sy.mod_of_mapping[i] = PV_NONE;
	for (size_t i = 0; i < p->nlocations; i++) {
		if (p->locations[i].nlines)
			continue; /* the source named it already */
		if (symbolize_location(&sy, (uint32_t)i) < 0)
			goto out;
	}
	ret = 0;
out:
	for (size_t i = 0; i < sy.nmods; i++) {
		if (sy.mods[i].dwfl)
			dwfl_end(sy.mods[i].dwfl);
		free(sy.mods[i].loads);
	}
	free(sy.mods);
	free(sy.mod_of_mapping);
	free(sy.scratch);
	return ret;
}
