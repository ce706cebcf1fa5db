/* modules.c - open each mapped ELF file once and place addresses in it */
#include "modules.h"
#include "error.h"
#include "util.h"
#include "vdso.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct module {
	uint32_t file;        /* string index of the path */
	Dwfl *dwfl;           /* NULL when the file could not be opened */
	Dwfl_Module *mod;
	GElf_Addr bias;
	GElf_Phdr *loads;     /* PT_LOAD headers */
	size_t nloads;
};

struct pv_modules {
	struct pv_profile *p;
	bool quiet;
	struct module *mods;
	size_t nmods;
	uint32_t *mod_of_mapping; /* mapping index -> module index or PV_NONE */
	size_t nmappings;
};

static char *debuginfo_path;
const Dwfl_Callbacks modules_offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

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

int modules_open_file(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

static void module_open(struct pv_modules *ms, struct module *m, const struct pv_mapping *map)
{
	const char *path = pv_str(ms->p, m->file);
	const unsigned char *id;
	GElf_Addr vaddr;
	Elf *elf;
	size_t nph;
	int len, fd = -1;

	if (map->kind == PV_MAP_VDSO) {
		/* Another kernel's vDSO is not ours to read: addresses then. */
		fd = vdso_open(pv_str(ms->p, map->build_id), map->limit - map->start);
		if (fd < 0)
			return;
	} else {
		fd = modules_open_file(path);
		if (fd < 0) {
			if (!ms->quiet)
				pv_warn("cannot read symbols of '%s': %s; its frames show as addresses",
					path, errno == EINVAL ? "not a regular file" : strerror(errno));
			return;
		}
	}
	m->dwfl = dwfl_begin(&modules_offline_callbacks);
	if (!m->dwfl)
		goto fail;
	dwfl_report_begin(m->dwfl);
	m->mod = dwfl_report_elf(m->dwfl, pv_base_name(path), path, fd, 0, false);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod)
		goto fail;
	fd = -1; /* libdwfl owns it now */
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
	len = dwfl_module_build_id(m->mod, &id, &vaddr);
	if (len > 0 && pv_str(ms->p, map->build_id)[0]) {
		char hex[2 * 64 + 1];
		hex_build_id(hex, sizeof hex, id, len);
		if (strcmp(hex, pv_str(ms->p, map->build_id)) != 0 && !ms->quiet)
			pv_warn("'%s' is not the file that was profiled (its build-id differs); its names may be wrong",
				path);
	}
	return;
fail:
	if (fd >= 0)
		close(fd);
	if (!ms->quiet)
		pv_warn("cannot read symbols of '%s': %s; its frames show as addresses", path,
			dwfl_errmsg(-1));
	if (m->dwfl)
		dwfl_end(m->dwfl);
	free(m->loads);
	m->loads = NULL;
	m->nloads = 0;
	m->dwfl = NULL;
	m->mod = NULL;
}

struct pv_modules *modules_new(struct pv_profile *p, bool quiet)
{
	struct pv_modules *ms = calloc(1, sizeof *ms);
	size_t n = p->nmappings ? p->nmappings : 1;

	if (!ms)
		goto oom;
	ms->p = p;
	ms->quiet = quiet;
	ms->nmappings = p->nmappings;
	ms->mods = calloc(n, sizeof *ms->mods);
	ms->mod_of_mapping = malloc(n * sizeof *ms->mod_of_mapping);
	if (!ms->mods || !ms->mod_of_mapping)
		goto oom;
	for (size_t i = 0; i < p->nmappings; i++)
		ms->mod_of_mapping[i] = PV_NONE;
	return ms;
oom:
	modules_free(ms);
	pv_oom();
	return NULL;
}

void modules_free(struct pv_modules *ms)
{
	if (!ms)
		return;
	for (size_t i = 0; i < ms->nmods; i++) {
		if (ms->mods[i].dwfl)
			dwfl_end(ms->mods[i].dwfl);
		free(ms->mods[i].loads);
	}
	free(ms->mods);
	free(ms->mod_of_mapping);
	free(ms);
}

static struct module *module_for_mapping(struct pv_modules *ms, uint32_t mi)
{
	const struct pv_mapping *map = &ms->p->mappings[mi];
	struct module *m;

	if (ms->mod_of_mapping[mi] != PV_NONE)
		return &ms->mods[ms->mod_of_mapping[mi]];
	if (map->kind != PV_MAP_FILE && map->kind != PV_MAP_VDSO)
		return NULL;
	for (size_t i = 0; i < ms->nmods; i++)
		if (ms->mods[i].file == map->file) {
			ms->mod_of_mapping[mi] = (uint32_t)i;
			return &ms->mods[i];
		}
	m = &ms->mods[ms->nmods];
	*m = (struct module){ .file = map->file };
	module_open(ms, m, map);
	ms->mod_of_mapping[mi] = (uint32_t)ms->nmods++;
	return m;
}

/* The PT_LOAD segment holding runtime address addr of mapping mi. */
static const GElf_Phdr *segment_of(struct pv_modules *ms, uint32_t mi, uint64_t addr,
				   struct module **mp, uint64_t *off)
{
	const struct pv_mapping *map;
	struct module *m;

	if (mi == PV_NONE || mi >= ms->nmappings)
		return NULL;
	m = module_for_mapping(ms, mi);
	if (!m || !m->mod)
		return NULL;
	map = &ms->p->mappings[mi];
	*off = addr - map->start + map->offset;
	*mp = m;
	for (size_t i = 0; i < m->nloads; i++) {
		const GElf_Phdr *ph = &m->loads[i];
		if (*off >= ph->p_offset && *off < ph->p_offset + ph->p_filesz)
			return ph;
	}
	return NULL;
}

Dwfl_Module *modules_find(struct pv_modules *ms, uint32_t mi, uint64_t addr, GElf_Addr *maddr)
{
	struct module *m;
	uint64_t off;
	const GElf_Phdr *ph = segment_of(ms, mi, addr, &m, &off);

	if (!ph)
		return NULL;
	*maddr = off - ph->p_offset + ph->p_vaddr + m->bias;
	return m->mod;
}

bool modules_file_vaddr(struct pv_modules *ms, uint32_t mi, uint64_t addr, const char **path,
			uint64_t *vaddr)
{
	struct module *m;
	uint64_t off;
	const GElf_Phdr *ph = segment_of(ms, mi, addr, &m, &off);

	if (!ph)
		return false;
	*vaddr = off - ph->p_offset + ph->p_vaddr;
	*path = pv_str(ms->p, m->file);
	return true;
}
