/* modules.c - open each mapped ELF file once, place it, find addresses in it */
#include "modules.h"
#include "debugfile.h"
#include "error.h"
#include "util.h"
#include "vdso.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <gelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum module_state {
	MODULE_UNREAD,         /* not opened yet */
	MODULE_READ,           /* an ELF file whose headers were read */
	MODULE_FAILED,         /* cannot be used: err or why says why */
};

struct module {
	struct pv_modules *ms; /* its table */
	char *path;            /* as the profile names it ("[vdso]" for the vDSO) */
	enum module_state state;
	int fd;                /* opened and read, not yet handed to libdwfl; or -1 */
	bool is_exec;          /* ET_EXEC: sits at its own addresses */
	GElf_Phdr *loads;      /* its PT_LOAD headers */
	size_t nloads;
	Dwfl_Module *mod;      /* its place in the Dwfl, NULL when it has none */
	GElf_Addr bias;        /* mod's load bias */
	int err;               /* MODULE_FAILED: errno of the open, or 0 */
	char *why;             /* MODULE_FAILED: what libdwfl said, or NULL */
	bool checked;          /* its warnings were given */
	bool fresh;            /* reported: its bias is to be asked for */
	unsigned round;        /* the modules_place call that last saw it */
};

struct pv_modules {
	Dwfl *dwfl;
	bool quiet;
	struct module **mods;
	size_t nmods, cap_mods;
	unsigned round;        /* modules_place calls so far */
	/* The profile whose mapping indices modules_find is given. */
	struct pv_profile *p;
	uint32_t *mod_of_mapping; /* mapping index -> module index or PV_NONE */
	size_t nmappings;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The ELF virtual addresses of the locations of the table's profile in
 * m's file (sorted, each once: the addresses its DWARF will be asked
 * about, modules_use_profile), *n of them; NULL when there is no profile
 * yet (the unwinder's time), none is in the file, or out of memory: any
 * address may be asked. */
static uint64_t *module_wanted(const struct module *m, size_t *n)
{
	const struct pv_modules *ms = m->ms;
	const struct pv_profile *p = ms->p;
	uint64_t *v;
	size_t k = 0;

	*n = 0;
	if (!p || !p->nlocations || !(v = malloc(p->nlocations * sizeof *v)))
		return NULL;
	for (size_t i = 0; i < p->nlocations; i++) {
		const struct pv_location *l = &p->locations[i];
		const struct pv_mapping *map;
		uint64_t off;
		if (l->mapping == PV_NONE || l->mapping >= ms->nmappings ||
		    ms->mod_of_mapping[l->mapping] == PV_NONE ||
		    ms->mods[ms->mod_of_mapping[l->mapping]] != m)
			continue;
		map = &p->mappings[l->mapping];
		off = l->address - map->start + map->offset;
		for (size_t j = 0; j < m->nloads; j++) {
			const GElf_Phdr *ph = &m->loads[j];
			if (off >= ph->p_offset && off < ph->p_offset + ph->p_filesz) {
				v[k++] = off - ph->p_offset + ph->p_vaddr;
				break;
			}
		}
	}
	qsort(v, k, sizeof *v, cmp_u64);
	for (size_t i = 0; i < k; i++)
		if (*n == 0 || v[*n - 1] != v[i])
			v[(*n)++] = v[i];
	if (*n == 0) {
		free(v);
		return NULL;
	}
	return v;
}

static void hex_build_id(char *out, size_t outsz, const unsigned char *id, int len);

/* Might path exist?  (What cannot be looked at counts as there.) */
static bool may_exist(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR);
}

/* Is one of the files libdwfl's local search (elfutils 0.188,
 * find-debuginfo.c: the default path ":.debug:/usr/lib/debug") may open
 * for file_name there?  name is the debug link's name (or the file's name
 * with ".debug"), base the file's name: in the file's folder, its .debug
 * folder, and /usr/lib/debug followed by each tail of the file's folder.
 * An over-estimate: a file there need not be the one. */
static bool local_debug_in(const char *file_name, const char *name, const char *base)
{
	const char *slash = strrchr(file_name, '/');
	int dlen = slash ? (int)(slash - file_name) : 1;
	const char *dir = slash ? file_name : ".";
	char buf[PATH_MAX];

	if (dlen == 0)
		dir = "/", dlen = 1;
	if (snprintf(buf, sizeof buf, "%.*s/%s", dlen, dir, name) >= (int)sizeof buf || may_exist(buf) ||
	    snprintf(buf, sizeof buf, "%.*s/.debug/%s", dlen, dir, name) >= (int)sizeof buf ||
	    may_exist(buf) ||
	    snprintf(buf, sizeof buf, "%.*s/.debug/%s", dlen, dir, base) >= (int)sizeof buf ||
	    may_exist(buf))
		return true;
	if (file_name[0] != '/')
		return false; /* libdwfl looks under /usr/lib/debug only for absolute names */
	for (int at = 0; at <= dlen; at++) {
		if (at < dlen && file_name[at] != '/')
			continue;
		const char *tail = file_name + at;
		int tlen = dlen - at;
		if (snprintf(buf, sizeof buf, "/usr/lib/debug%.*s/%s", tlen, tail, name) >=
			    (int)sizeof buf ||
		    may_exist(buf) ||
		    snprintf(buf, sizeof buf, "/usr/lib/debug%.*s/%s", tlen, tail, base) >=
			    (int)sizeof buf ||
		    may_exist(buf))
			return true;
	}
	return false;
}

/* Might libdwfl's standard search find a separate debug file on this
 * machine for the module of file_name (its build-id id[0..len), its debug
 * link debuglink or NULL)?  false only when none of the places it looks
 * in holds a file.  An alternate debug file (a link with a folder in it)
 * is always looked for. */
static bool local_debug_file(const char *file_name, const unsigned char *id, int len,
			     const char *debuglink)
{
	char buf[PATH_MAX], hex[2 * 64 + 1], name[NAME_MAX + 1];
	char *canon;
	const char *base;
	bool found;

	if (!file_name || (debuglink && strchr(debuglink, '/')))
		return true;
	if (len > 0) {
		if (len < 2 || len > 64)
			return true;
		hex_build_id(hex, sizeof hex, id, len);
		if (snprintf(buf, sizeof buf, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2) >=
			    (int)sizeof buf ||
		    may_exist(buf))
			return true;
	}
	base = strrchr(file_name, '/') ? strrchr(file_name, '/') + 1 : file_name;
	if (snprintf(name, sizeof name, "%s%s", debuglink ? debuglink : base, debuglink ? "" : ".debug") >=
	    (int)sizeof name)
		return true;
	found = local_debug_in(file_name, name, base);
	/* the same again for the file a symbolic link names */
	canon = found ? NULL : realpath(file_name, NULL);
	if (canon && strcmp(canon, file_name) != 0) {
		base = strrchr(canon, '/') + 1;
		found = (!debuglink && snprintf(name, sizeof name, "%s.debug", base) >= (int)sizeof name) ||
			local_debug_in(canon, name, base);
	}
	free(canon);
	return found;
}

/* May libdwfl's standard search ask debuginfod?  It would when it finds
 * nothing on the machine, and libdw 0.188 then loads libdebuginfod (and
 * with it libcurl, GnuTLS, Kerberos...: some 30 libraries, a few
 * milliseconds of a short report) even with no server to ask, which the
 * client finds out only once loaded. */
static bool debuginfod_wanted(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && urls[0];
}

/* The standard search, but a separate debug file with compressed sections
 * found in its first place (by build-id, debugfile.h) is given to libdwfl
 * decompressed (as much of it as the profile's addresses in the module
 * need, once there is a profile), unless PROFVIEW_SYMBOLIZE=serial asks
 * for libdw to decompress all of it on the one thread.  (libdwfl's own search by build-id
 * keeps the file it opened whatever the callback returns: it is asked
 * only when that place has no such file.)  The symbolizer's two threads
 * may ask at once: libdwfl's search, which may start and use the Dwfl's
 * one debuginfod client, is asked by one at a time. */
static pthread_mutex_t standard_search = PTHREAD_MUTEX_INITIALIZER;

static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			  char **debuginfo_file_name)
{
	const char *how = getenv("PROFVIEW_SYMBOLIZE");
	const unsigned char *id;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &id, &vaddr);
	int fd;

	if (len > 0 && !(how && strcmp(how, "serial") == 0)) {
		const struct module *m = *userdata;
		size_t n = 0;
		uint64_t *want = m ? module_wanted(m, &n) : NULL;
		fd = debugfile_by_build_id(id, (size_t)len, want, n, debuginfo_file_name);
		free(want);
		if (fd >= 0)
			return fd;
	}
	if (!debuginfod_wanted() && !local_debug_file(file_name, id, len, debuglink_file)) {
		errno = 0;
		return -1;
	}
	pthread_mutex_lock(&standard_search);
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	pthread_mutex_unlock(&standard_search);
	return fd;
}

static char *debuginfo_path;
static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
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

/* The index of the module of path, added (unread) when new; PV_NONE when
 * out of memory (reported). */
static uint32_t module_index(struct pv_modules *ms, const char *path)
{
	struct module *m;

	for (size_t i = 0; i < ms->nmods; i++)
		if (strcmp(ms->mods[i]->path, path) == 0)
			return (uint32_t)i;
	if (pv_grow(&ms->mods, &ms->cap_mods, ms->nmods + 1, sizeof *ms->mods) < 0)
		return PV_NONE;
	m = calloc(1, sizeof *m);
	if (!m || !(m->path = strdup(path))) {
		free(m);
		pv_oom();
		return PV_NONE;
	}
	m->fd = -1;
	m->ms = ms;
	ms->mods[ms->nmods] = m;
	return (uint32_t)ms->nmods++;
}

static void module_fail(struct module *m, int err, const char *why)
{
	m->state = MODULE_FAILED;
	m->err = err;
	free(m->why);
	m->why = why ? strdup(why) : NULL;
	if (why && !m->why)
		m->err = ENOMEM;
}

/* A descriptor of m's file: the vDSO is this process's copy when map's is
 * the same, and another kernel's is not ours to read (its frames show as
 * addresses, without a word).  -1 after marking m failed. */
static int module_open_fd(struct module *m, const struct pv_profile *p,
			  const struct pv_mapping *map)
{
	int fd;

	if (map->kind == PV_MAP_VDSO) {
		fd = vdso_open(pv_str(p, map->build_id), map->limit - map->start);
		if (fd < 0)
			module_fail(m, 0, NULL);
		return fd;
	}
	fd = modules_open_file(m->path);
	if (fd < 0)
		module_fail(m, errno, NULL);
	return fd;
}

/* Open m's file and read its type and PT_LOAD headers, once; the
 * descriptor stays open for libdwfl.  Is it a usable ELF file? */
static bool module_read(struct module *m, const struct pv_profile *p, const struct pv_mapping *map)
{
	GElf_Ehdr eh;
	size_t nph;
	Elf *elf;
	int fd;

	if (m->state != MODULE_UNREAD)
		return m->state == MODULE_READ;
	fd = module_open_fd(m, p, map);
	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    elf_getphdrnum(elf, &nph) != 0) {
		module_fail(m, 0, "not a valid ELF file");
		goto fail;
	}
	m->loads = calloc(nph ? nph : 1, sizeof *m->loads);
	if (!m->loads) {
		module_fail(m, ENOMEM, NULL);
		goto fail;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			m->loads[m->nloads++] = ph;
	}
	m->is_exec = eh.e_type == ET_EXEC;
	elf_end(elf);
	m->fd = fd;
	m->state = MODULE_READ;
	return true;
fail:
	elf_end(elf);
	close(fd);
	return false;
}

/* Where mapping map puts m's file: its load bias (see modules.h).  false
 * when the mapping's offset is in no PT_LOAD segment. */
static bool mapping_bias(const struct module *m, const struct pv_mapping *map, GElf_Addr *bias)
{
	for (size_t i = 0; i < m->nloads; i++) {
		const GElf_Phdr *ph = &m->loads[i];
		uint64_t first = ph->p_offset & ~(uint64_t)4095;
		if (map->offset >= first && map->offset < ph->p_offset + ph->p_filesz) {
			*bias = m->is_exec ? 0
					   : map->start - map->offset + ph->p_offset - ph->p_vaddr;
			return true;
		}
	}
	return false;
}

/* Report m's file to the Dwfl at load bias bias (inside dwfl_report_begin
 * and dwfl_report_end); libdwfl takes the descriptor.  A file placed
 * before and dropped since is opened again.  false after marking m
 * failed. */
static bool module_report(struct pv_modules *ms, struct module *m, const struct pv_profile *p,
			  const struct pv_mapping *map, GElf_Addr bias)
{
	int fd = m->fd >= 0 ? m->fd : module_open_fd(m, p, map);

	m->fd = -1;
	if (fd < 0)
		return false;
	/* Named by the whole path: libdwfl takes a module reported again
	 * with the same name and addresses for the same one. */
	m->mod = dwfl_report_elf(ms->dwfl, m->path, m->path, fd, bias, true);
	if (!m->mod) {
		module_fail(m, 0, dwfl_errmsg(-1));
		close(fd);
		return false;
	}
	/* the module's userdata, for find_debuginfo */
	void **ud;
	if (dwfl_module_info(m->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL))
		*ud = m;
	return true;
}

/* After dwfl_report_end: the bias libdwfl gave m's new module. */
static void module_settle(struct module *m)
{
	if (m->mod && !dwfl_module_getelf(m->mod, &m->bias)) {
		module_fail(m, 0, dwfl_errmsg(-1));
		m->mod = NULL;
	}
}

/* Place m's file for a symbolizer where map put it (or, when map's offset
 * is in no segment, at its own addresses: the symbolizers only need a
 * bias). */
static void module_place_for(struct pv_modules *ms, struct module *m, const struct pv_mapping *map)
{
	GElf_Addr bias = 0;

	if (!module_read(m, ms->p, map))
		return;
	mapping_bias(m, map, &bias);
	dwfl_report_begin_add(ms->dwfl);
	module_report(ms, m, ms->p, map, bias);
	dwfl_report_end(ms->dwfl, NULL, NULL);
	module_settle(m);
}

/* The warnings about m, once: a file that cannot be read, a file that
 * changed since the trace was taken (it gives wrong names). */
static void module_check(struct pv_modules *ms, struct module *m, const struct pv_mapping *map)
{
	const unsigned char *id;
	GElf_Addr vaddr;
	int len;

	m->checked = true;
	if (ms->quiet)
		return;
	if (m->state == MODULE_FAILED) {
		const char *why = m->why ? m->why
				 : m->err == EINVAL ? "not a regular file" : strerror(m->err);
		if (m->err || m->why)
			pv_warn("cannot read symbols of '%s': %s; its frames show as addresses", m->path,
				why);
		return;
	}
	len = m->mod ? dwfl_module_build_id(m->mod, &id, &vaddr) : 0;
	if (len > 0 && pv_str(ms->p, map->build_id)[0]) {
		char hex[2 * 64 + 1];
		hex_build_id(hex, sizeof hex, id, len);
		if (strcmp(hex, pv_str(ms->p, map->build_id)) != 0)
			pv_warn("'%s' is not the file that was profiled (its build-id differs); its names may be wrong",
				m->path);
	}
}

/* dwfl_report_end's word that mod left the Dwfl. */
static int module_dropped(Dwfl_Module *mod, void *userdata, const char *name, Dwarf_Addr base,
			  void *arg)
{
	struct pv_modules *ms = arg;

	(void)userdata;
	(void)name;
	(void)base;
	for (size_t i = 0; i < ms->nmods; i++)
		if (ms->mods[i]->mod == mod)
			ms->mods[i]->mod = NULL;
	return 0;
}

int modules_place(struct pv_modules *ms, const struct pv_profile *p)
{
	int placed = 0;
	bool oom = false;

	ms->round++;
	dwfl_report_begin(ms->dwfl);
	/* Newest first: later mapping records describe the process later. */
	for (size_t i = p->nmappings; i-- > 0;) {
		const struct pv_mapping *map = &p->mappings[i];
		struct module *m;
		GElf_Addr bias;
		uint32_t mi;

		if (map->kind != PV_MAP_FILE && map->kind != PV_MAP_VDSO)
			continue;
		mi = module_index(ms, pv_str(p, map->file));
		if (mi == PV_NONE) {
			oom = true;
			break;
		}
		m = ms->mods[mi];
		if (m->round == ms->round)
			continue; /* placed by a newer mapping, or not at all */
		m->round = ms->round;
		if (!module_read(m, p, map) || !mapping_bias(m, map, &bias))
			continue;
		if (m->mod && m->bias == bias) {
			/* Already there: reported with the same name and
			 * addresses, libdwfl keeps it. */
			Dwarf_Addr lo, hi;
			dwfl_module_info(m->mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
			if (dwfl_report_module(ms->dwfl, m->path, lo, hi) == m->mod)
				placed++;
		} else if (module_report(ms, m, p, map, bias)) {
			m->fresh = true;
			placed++;
		} else if (m->why && !ms->quiet) {
			pv_warn("cannot use the call frame information of '%s': %s; stacks through it stop there",
				m->path, m->why);
		}
	}
	dwfl_report_end(ms->dwfl, module_dropped, ms);
	for (size_t i = 0; i < ms->nmods; i++) {
		struct module *m = ms->mods[i];
		if (!m->fresh)
			continue;
		m->fresh = false;
		module_settle(m);
		if (!m->mod)
			placed--;
	}
	return oom ? -1 : placed;
}

Dwfl *modules_dwfl(struct pv_modules *ms)
{
	return ms->dwfl;
}

struct pv_modules *modules_new(bool quiet)
{
	struct pv_modules *ms = calloc(1, sizeof *ms);

	if (!ms) {
		pv_oom();
		return NULL;
	}
	ms->quiet = quiet;
	ms->dwfl = dwfl_begin(&offline_callbacks);
	if (!ms->dwfl) {
		pv_error("cannot start libdwfl: %s", dwfl_errmsg(-1));
		free(ms);
		return NULL;
	}
	return ms;
}

void modules_free(struct pv_modules *ms)
{
	if (!ms)
		return;
	dwfl_end(ms->dwfl);
	for (size_t i = 0; i < ms->nmods; i++) {
		struct module *m = ms->mods[i];
		if (m->fd >= 0)
			close(m->fd);
		free(m->loads);
		free(m->why);
		free(m->path);
		free(m);
	}
	free(ms->mods);
	free(ms->mod_of_mapping);
	free(ms);
}

int modules_use_profile(struct pv_modules *ms, struct pv_profile *p)
{
	uint32_t *of = malloc((p->nmappings ? p->nmappings : 1) * sizeof *of);

	if (!of)
		return pv_oom();
	for (size_t i = 0; i < p->nmappings; i++) {
		const struct pv_mapping *map = &p->mappings[i];
		of[i] = PV_NONE;
		if (map->kind != PV_MAP_FILE && map->kind != PV_MAP_VDSO)
			continue;
		of[i] = module_index(ms, pv_str(p, map->file));
		if (of[i] == PV_NONE) {
			free(of);
			return -1;
		}
	}
	free(ms->mod_of_mapping);
	ms->mod_of_mapping = of;
	ms->nmappings = p->nmappings;
	ms->p = p;
	return 0;
}

/* The module of mapping mi, placed and checked; NULL when it has none. */
static struct module *module_for_mapping(struct pv_modules *ms, uint32_t mi)
{
	const struct pv_mapping *map;
	struct module *m;

	if (mi == PV_NONE || mi >= ms->nmappings || ms->mod_of_mapping[mi] == PV_NONE)
		return NULL;
	m = ms->mods[ms->mod_of_mapping[mi]];
	map = &ms->p->mappings[mi];
	if (!m->mod && m->state != MODULE_FAILED)
		module_place_for(ms, m, map);
	if (!m->checked)
		module_check(ms, m, map);
	return m->mod ? m : NULL;
}

/* The PT_LOAD segment holding runtime address addr of mapping mi. */
static const GElf_Phdr *segment_of(struct pv_modules *ms, uint32_t mi, uint64_t addr,
				   struct module **mp, uint64_t *off)
{
	const struct pv_mapping *map;
	struct module *m = module_for_mapping(ms, mi);

	if (!m)
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
	*path = m->path;
	return true;
}
