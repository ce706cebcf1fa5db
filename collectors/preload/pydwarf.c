/* pydwarf.c - CPython's structure offsets from its debug information (see
 * pydwarf.h)
 *
 * Which DWARF: the object that defines _PyRuntime (the program for a
 * static interpreter, else its libpython), known by its build-id, read
 * from the note in its loaded image.  Its own file when that has a
 * .debug_info, else the separate files gdb looks for: by build-id under
 * /usr/lib/debug/.build-id, then by the name in its .gnu_debuglink beside
 * it, in .debug beside it and under /usr/lib/debug.  A file is used only
 * when its build-id is the loaded object's: a file replaced since it was
 * loaded, or the debug file of another build, is not read.
 *
 * How: libdw, loaded with dlopen (RTLD_LOCAL) the first time, and left
 * loaded.  Each structure the walk needs is looked for among the top
 * DIEs of each unit (a structure by its tag, or a typedef of one), the
 * first complete definition of each kept, until all are found; then each
 * member's DW_AT_data_member_location, through the members' own types
 * for a nested one ("threads.head") and through anonymous structures and
 * unions.  The bits of a str's state the walk reads (kind, compact,
 * ascii) are checked to be where it reads them.  The section headers
 * are read here first, so that libdw is loaded only when some file has
 * DWARF.
 *
 * What was read is kept in a cache by build-id: libdw decompresses a
 * compressed section whole when it opens the file (Debian's debug file
 * of python3.11, 300 ms), which every Python process would pay.
 */
#include "pydwarf.h"
#include "preload.h"

#include <dlfcn.h>
#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define F(x) { #x, offsetof(struct py_layout, x) }
const struct pydwarf_field pydwarf_fields[] = {
	F(runtime_interpreters_head), F(interp_threads_head), F(interp_next),
	F(tstate_next), F(tstate_thread_id), F(tstate_frame), F(cframe_current_frame),
	F(frame_code), F(frame_instr), F(frame_previous), F(frame_owner),
	F(code_qualname), F(code_filename), F(code_firstlineno), F(code_linetable), F(code_adaptive),
	F(bytes_size), F(bytes_sval),
	F(unicode_length), F(unicode_state), F(unicode_ascii_data),
	F(unicode_utf8_length), F(unicode_utf8), F(unicode_compact_data),
	F(object_type),
};
#undef F
const uint32_t pydwarf_nfields = sizeof(pydwarf_fields) / sizeof(pydwarf_fields[0]);

/* The structures read, by their tag or typedef name. */
enum {
	PD_RUNTIME, PD_INTERP, PD_TSTATE, PD_CFRAME, PD_IFRAME, PD_FRAMEOBJ, PD_CODE,
	PD_BYTES, PD_ASCII, PD_COMPACT, PD_OBJECT, PD_NTYPES
};
static const char *const pd_type_names[PD_NTYPES] = {
	"pyruntimestate", "_is", "_ts", "_PyCFrame", "_PyInterpreterFrame", "_frame",
	"PyCodeObject", "PyBytesObject", "PyASCIIObject", "PyCompactUnicodeObject", "_object",
};

/* One offset of struct py_layout: the member at path of type, for the
 * versions lo..hi (major << 8 | minor); path NULL: the type's size. */
struct pd_member {
	uint32_t at;
	uint16_t lo, hi;
	uint8_t type;
	const char *path;
};

#define M(f, lo, hi, t, p) { offsetof(struct py_layout, f), lo, hi, t, p }
static const struct pd_member pd_members[] = {
	M(runtime_interpreters_head, 0x309, 0x30d, PD_RUNTIME, "interpreters.head"),
	M(interp_next, 0x309, 0x30d, PD_INTERP, "next"),
	M(interp_threads_head, 0x309, 0x30a, PD_INTERP, "tstate_head"),
	M(interp_threads_head, 0x30b, 0x30d, PD_INTERP, "threads.head"),
	M(tstate_next, 0x309, 0x30d, PD_TSTATE, "next"),
	M(tstate_thread_id, 0x309, 0x30d, PD_TSTATE, "thread_id"),
	M(tstate_frame, 0x309, 0x30a, PD_TSTATE, "frame"),
	M(tstate_frame, 0x30b, 0x30c, PD_TSTATE, "cframe"),
	M(tstate_frame, 0x30d, 0x30d, PD_TSTATE, "current_frame"),
	M(cframe_current_frame, 0x30b, 0x30c, PD_CFRAME, "current_frame"),
	M(frame_code, 0x309, 0x30a, PD_FRAMEOBJ, "f_code"),
	M(frame_instr, 0x309, 0x30a, PD_FRAMEOBJ, "f_lasti"),
	M(frame_previous, 0x309, 0x30a, PD_FRAMEOBJ, "f_back"),
	M(frame_owner, 0x309, 0x30a, PD_FRAMEOBJ, "f_lasti"),
	M(frame_code, 0x30b, 0x30c, PD_IFRAME, "f_code"),
	M(frame_code, 0x30d, 0x30d, PD_IFRAME, "f_executable"),
	M(frame_instr, 0x30b, 0x30c, PD_IFRAME, "prev_instr"),
	M(frame_instr, 0x30d, 0x30d, PD_IFRAME, "instr_ptr"),
	M(frame_previous, 0x30b, 0x30d, PD_IFRAME, "previous"),
	M(frame_owner, 0x30b, 0x30b, PD_IFRAME, "is_entry"),
	M(frame_owner, 0x30c, 0x30d, PD_IFRAME, "owner"),
	M(code_qualname, 0x309, 0x30a, PD_CODE, "co_name"),
	M(code_qualname, 0x30b, 0x30d, PD_CODE, "co_qualname"),
	M(code_filename, 0x309, 0x30d, PD_CODE, "co_filename"),
	M(code_firstlineno, 0x309, 0x30d, PD_CODE, "co_firstlineno"),
	M(code_linetable, 0x309, 0x309, PD_CODE, "co_lnotab"),
	M(code_linetable, 0x30a, 0x30d, PD_CODE, "co_linetable"),
	M(code_adaptive, 0x30b, 0x30d, PD_CODE, "co_code_adaptive"),
	M(bytes_size, 0x309, 0x30d, PD_BYTES, "ob_base.ob_size"),
	M(bytes_sval, 0x309, 0x30d, PD_BYTES, "ob_sval"),
	M(unicode_length, 0x309, 0x30d, PD_ASCII, "length"),
	M(unicode_state, 0x309, 0x30d, PD_ASCII, "state"),
	M(unicode_ascii_data, 0x309, 0x30d, PD_ASCII, NULL),
	M(unicode_utf8_length, 0x309, 0x30d, PD_COMPACT, "utf8_length"),
	M(unicode_utf8, 0x309, 0x30d, PD_COMPACT, "utf8"),
	M(unicode_compact_data, 0x309, 0x30d, PD_COMPACT, NULL),
	M(object_type, 0x309, 0x30d, PD_OBJECT, "ob_type"),
};
#undef M

#define PD_MAX_OFFSET (1u << 20) /* no member the walk reads is further */
#define PD_MAX_DEPTH 4           /* anonymous members looked through */

/* libdw's and libelf's functions, from the dlopen'd libdw. */
static struct {
	int tried;
	__typeof__(elf_version) *elf_version;
	__typeof__(elf_begin) *elf_begin;
	__typeof__(elf_end) *elf_end;
	__typeof__(dwarf_begin_elf) *begin_elf;
	__typeof__(dwarf_end) *end;
	__typeof__(dwarf_getalt) *getalt;
	__typeof__(dwarf_nextcu) *nextcu;
	__typeof__(dwarf_offdie) *offdie;
	__typeof__(dwarf_child) *child;
	__typeof__(dwarf_siblingof) *siblingof;
	__typeof__(dwarf_tag) *tag;
	__typeof__(dwarf_diename) *diename;
	__typeof__(dwarf_hasattr) *hasattr;
	__typeof__(dwarf_haschildren) *haschildren;
	__typeof__(dwarf_attr) *attr;
	__typeof__(dwarf_attr_integrate) *attr_integrate;
	__typeof__(dwarf_formref_die) *formref_die;
	__typeof__(dwarf_formudata) *formudata;
	__typeof__(dwarf_getlocation) *getlocation;
	__typeof__(dwarf_peel_type) *peel_type;
	__typeof__(dwarf_bytesize) *bytesize;
	__typeof__(dwelf_elf_gnu_build_id) *build_id;
} dw;

/* Loads libdw, once.  Returns 0 when every function was found. */
static int pd_load(void)
{
	static int ok;
	void *h;

	if (dw.tried)
		return ok ? 0 : -1;
	dw.tried = 1;
	h = dlopen("libdw.so.1", RTLD_NOW | RTLD_LOCAL);
	if (h == NULL)
		return -1;
#define S(f, name) if ((*(void **)&dw.f = dlsym(h, name)) == NULL) return -1
	S(elf_version, "elf_version"); S(elf_begin, "elf_begin"); S(elf_end, "elf_end");
	S(begin_elf, "dwarf_begin_elf"); S(end, "dwarf_end"); S(getalt, "dwarf_getalt");
	S(nextcu, "dwarf_nextcu"); S(offdie, "dwarf_offdie"); S(child, "dwarf_child");
	S(siblingof, "dwarf_siblingof"); S(tag, "dwarf_tag"); S(diename, "dwarf_diename");
	S(hasattr, "dwarf_hasattr"); S(haschildren, "dwarf_haschildren"); S(attr, "dwarf_attr");
	S(attr_integrate, "dwarf_attr_integrate"); S(formref_die, "dwarf_formref_die");
	S(formudata, "dwarf_formudata"); S(getlocation, "dwarf_getlocation");
	S(peel_type, "dwarf_peel_type"); S(bytesize, "dwarf_bytesize");
	S(build_id, "dwelf_elf_gnu_build_id");
#undef S
	if (dw.elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	ok = 1;
	return 0;
}

/* The loaded object that holds an address: its file and build-id. */
struct pd_object {
	uintptr_t addr;
	char path[4096];
	unsigned char id[64];
	size_t idlen;
	int found;
};

/* The build-id in the notes of a loaded object's PT_NOTE segment. */
static void pd_note_id(struct pd_object *o, const unsigned char *p, size_t len)
{
	size_t at = 0;

	while (at + sizeof(ElfW(Nhdr)) <= len) {
		ElfW(Nhdr) n;
		size_t name, desc;

		memcpy(&n, p + at, sizeof(n));
		name = (n.n_namesz + 3) & ~(size_t)3;
		desc = (n.n_descsz + 3) & ~(size_t)3;
		if (name > len || desc > len || at + sizeof(n) + name + desc > len)
			return;
		if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 &&
		    memcmp(p + at + sizeof(n), "GNU", 4) == 0 && n.n_descsz <= sizeof(o->id) &&
		    n.n_descsz > 0) {
			memcpy(o->id, p + at + sizeof(n) + name, n.n_descsz);
			o->idlen = n.n_descsz;
			return;
		}
		at += sizeof(n) + name + desc;
	}
}

static int pd_find_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct pd_object *o = data;
	int in = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && o->addr >= lo && o->addr - lo < ph->p_memsz)
			in = 1;
	}
	if (!in)
		return 0;
	for (int i = 0; i < info->dlpi_phnum && o->idlen == 0; i++)
		if (info->dlpi_phdr[i].p_type == PT_NOTE)
			pd_note_id(o, (const unsigned char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr),
				   info->dlpi_phdr[i].p_memsz);
	if (info->dlpi_name == NULL || info->dlpi_name[0] == '\0')
		snprintf(o->path, sizeof(o->path), "/proc/self/exe");
	else
		snprintf(o->path, sizeof(o->path), "%s", info->dlpi_name);
	o->found = 1;
	return 1;
}

/* An ELF file opened for libdw, its build-id the object's; NULL when it
 * is not there, not ELF or of another build.  *fd is its descriptor. */
static Elf *pd_open(const char *path, const struct pd_object *o, int *fd)
{
	const void *id = NULL;
	Elf *e;

	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	e = dw.elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (e != NULL && dw.build_id(e, &id) == (ssize_t)o->idlen && id != NULL &&
	    memcmp(id, o->id, o->idlen) == 0)
		return e;
	if (e != NULL)
		dw.elf_end(e);
	close(*fd);
	*fd = -1;
	return NULL;
}

/* Looks in unit die's top DIEs for the types still missing in t[]. */
static void pd_scan_unit(Dwarf_Die *unit, const int *want, Dwarf_Die *t, int *found, int *left)
{
	Dwarf_Die d, s;

	if (dw.child(unit, &d) != 0)
		return;
	do {
		int tag = dw.tag(&d), k;
		const char *name;

		if (tag != DW_TAG_structure_type && tag != DW_TAG_typedef)
			continue;
		name = dw.diename(&d);
		if (name == NULL)
			continue;
		for (k = 0; k < PD_NTYPES; k++)
			if (want[k] && !found[k] && strcmp(name, pd_type_names[k]) == 0)
				break;
		if (k == PD_NTYPES)
			continue;
		s = d;
		if (tag == DW_TAG_typedef && dw.peel_type(&d, &s) != 0)
			continue;
		if (dw.tag(&s) != DW_TAG_structure_type || dw.hasattr(&s, DW_AT_declaration) ||
		    dw.haschildren(&s) <= 0)
			continue;
		t[k] = s;
		found[k] = 1;
		--*left;
	} while (*left > 0 && dw.siblingof(&d, &d) == 0);
}

/* Does the unit's name end with the file name file ("ceval.c")? */
static int pd_unit_is(Dwarf_Die *unit, const char *file)
{
	const char *name = dw.diename(unit);
	size_t n = name != NULL ? strlen(name) : 0, f = strlen(file);

	return n >= f && strcmp(name + n - f, file) == 0 && (n == f || name[n - f - 1] == '/');
}

/* The types wanted (want[]) into t[]: first from the unit of the
 * evaluation loop (Python/ceval.c, which uses all of them in 3.9 to 3.13:
 * a unit's top DIEs are read only by parsing the whole unit, and the
 * first unit that has them all may be far into the file), then from
 * every unit of dbg and of its alternate file (dwz's).  Returns how many
 * are still missing. */
static int pd_scan(Dwarf *dbg, const int *want, Dwarf_Die *t, int *found)
{
	int left = 0;

	for (int k = 0; k < PD_NTYPES; k++)
		left += want[k] && !found[k];
	for (int pass = 0; pass < 3 && left > 0; pass++) {
		Dwarf *d = pass < 2 ? dbg : dw.getalt(dbg);
		Dwarf_Off off = 0, next;
		size_t hsize;

		while (d != NULL && left > 0 && dw.nextcu(d, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			Dwarf_Die unit;

			if (dw.offdie(d, off + hsize, &unit) != NULL && (pass > 0 || pd_unit_is(&unit, "ceval.c")))
				pd_scan_unit(&unit, want, t, found, &left);
			off = next;
		}
	}
	return left;
}

/* A member's DW_AT_data_member_location: a constant, or an expression
 * of one DW_OP_plus_uconst.  Returns 0 when it is one of those. */
static int pd_location(Dwarf_Die *m, Dwarf_Word *off)
{
	Dwarf_Attribute a;
	Dwarf_Op *ops;
	size_t nops;

	if (dw.attr(m, DW_AT_data_member_location, &a) == NULL) {
		*off = 0; /* a union's members */
		return 0;
	}
	if (dw.formudata(&a, off) == 0)
		return 0;
	if (dw.getlocation(&a, &ops, &nops) == 0 && nops == 1 && ops[0].atom == DW_OP_plus_uconst) {
		*off = ops[0].number;
		return 0;
	}
	return -1;
}

/* The offset of the member name of the structure or union st, looked
 * for through its anonymous members too, and its type (peeled) in *type.
 * Returns 0 when found. */
static int pd_member_in(Dwarf_Die *st, const char *name, size_t len, Dwarf_Word *off, Dwarf_Die *type,
			int depth)
{
	Dwarf_Die m, mt;
	Dwarf_Attribute a;

	if (depth > PD_MAX_DEPTH || dw.child(st, &m) != 0)
		return -1;
	do {
		const char *mname;
		Dwarf_Word at;

		if (dw.tag(&m) != DW_TAG_member)
			continue;
		mname = dw.diename(&m);
		if (dw.attr_integrate(&m, DW_AT_type, &a) == NULL || dw.formref_die(&a, &mt) == NULL ||
		    dw.peel_type(&mt, &mt) != 0 || pd_location(&m, &at) != 0)
			continue;
		if (mname != NULL && strlen(mname) == len && memcmp(mname, name, len) == 0) {
			*off = at;
			*type = mt;
			return 0;
		}
		if (mname == NULL && (dw.tag(&mt) == DW_TAG_structure_type || dw.tag(&mt) == DW_TAG_union_type) &&
		    pd_member_in(&mt, name, len, off, type, depth + 1) == 0) {
			*off += at;
			return 0;
		}
	} while (dw.siblingof(&m, &m) == 0);
	return -1;
}

/* The offset of path ("a.b": b in a's type) in st.  Returns 0 when found. */
static int pd_member(Dwarf_Die *st, const char *path, Dwarf_Word *off)
{
	Dwarf_Die cur = *st, type;
	Dwarf_Word total = 0, at;

	for (;;) {
		const char *dot = strchr(path, '.');
		size_t len = dot != NULL ? (size_t)(dot - path) : strlen(path);

		if (pd_member_in(&cur, path, len, &at, &type, 0) != 0)
			return -1;
		total += at;
		if (dot == NULL)
			break;
		path = dot + 1;
		cur = type;
	}
	*off = total;
	return 0;
}

/* A bit-field of the structure st: its first bit (from the least
 * significant of its storage, little-endian) and width; -1 when not
 * one. */
static int pd_bits(Dwarf_Die *st, const char *name, Dwarf_Word *first, Dwarf_Word *width)
{
	Dwarf_Die m;
	Dwarf_Attribute a;
	Dwarf_Word off = 0, bit, bytes;

	if (dw.child(st, &m) != 0)
		return -1;
	do {
		const char *mname = dw.diename(&m);

		if (dw.tag(&m) != DW_TAG_member || mname == NULL || strcmp(mname, name) != 0)
			continue;
		if (dw.attr(&m, DW_AT_bit_size, &a) == NULL || dw.formudata(&a, width) != 0)
			return -1;
		if (dw.attr(&m, DW_AT_data_bit_offset, &a) != NULL) {
			if (dw.formudata(&a, first) != 0)
				return -1;
			return 0;
		}
		/* DWARF 2 and 3: from the most significant bit of a storage
		 * unit of DW_AT_byte_size at DW_AT_data_member_location */
		if (dw.attr(&m, DW_AT_bit_offset, &a) == NULL || dw.formudata(&a, &bit) != 0 ||
		    dw.attr(&m, DW_AT_byte_size, &a) == NULL || dw.formudata(&a, &bytes) != 0 ||
		    pd_location(&m, &off) != 0 || bit + *width > bytes * 8)
			return -1;
		*first = off * 8 + bytes * 8 - bit - *width;
		return 0;
	} while (dw.siblingof(&m, &m) == 0);
	return -1;
}

/* Are a str's kind (3 bits), compact and ascii (a bit each) at bits 2, 5
 * and 6 of its state, as the walk reads them? */
static int pd_state_bits(Dwarf_Die *ascii)
{
	static const struct { const char *name; Dwarf_Word first, width; } want[] = {
		{ "kind", 2, 3 }, { "compact", 5, 1 }, { "ascii", 6, 1 },
	};
	Dwarf_Die state, m;
	Dwarf_Attribute a;
	Dwarf_Word off, first, width;

	if (dw.child(ascii, &m) != 0)
		return -1;
	do {
		const char *mname = dw.diename(&m);

		if (dw.tag(&m) == DW_TAG_member && mname != NULL && strcmp(mname, "state") == 0)
			break;
	} while (dw.siblingof(&m, &m) == 0);
	if (dw.attr_integrate(&m, DW_AT_type, &a) == NULL || dw.formref_die(&a, &state) == NULL ||
	    dw.peel_type(&state, &state) != 0 || pd_location(&m, &off) != 0)
		return -1;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (pd_bits(&state, want[i].name, &first, &width) != 0 || first != want[i].first ||
		    width != want[i].width)
			return -1;
	return 0;
}

/* The layout of version from the types found.  Returns 0 when every
 * member of the version was read. */
static int pd_fill(Dwarf_Die *t, uint32_t version, struct py_layout *l)
{
	struct py_layout r = { .version = version };

	for (size_t i = 0; i < sizeof(pd_members) / sizeof(pd_members[0]); i++) {
		const struct pd_member *m = &pd_members[i];
		Dwarf_Word off;
		int size;

		if (version < m->lo || version > m->hi)
			continue;
		if (m->path == NULL) {
			size = dw.bytesize(&t[m->type]);
			if (size <= 0)
				return -1;
			off = (Dwarf_Word)size;
		} else if (pd_member(&t[m->type], m->path, &off) != 0) {
			return -1;
		}
		if (off >= PD_MAX_OFFSET)
			return -1;
		memcpy((char *)&r + m->at, &(uint32_t){ (uint32_t)off }, 4);
	}
	if (pd_state_bits(&t[PD_ASCII]) != 0)
		return -1;
	/* how the frames are read, of each version (not a layout) */
	r.owner_cstack = version >= 0x030c ? 3 : 0; /* FRAME_OWNED_BY_CSTACK */
	r.lasti = version == 0x0309 ? 2 : version == 0x030a ? 1 : 0;
	*l = r;
	return 0;
}

/* The layout from the file at path, when it is the object's and has
 * every structure the version needs. */
static int pd_read_file(const char *path, const struct pd_object *o, uint32_t version, struct py_layout *l)
{
	int want[PD_NTYPES], found[PD_NTYPES] = { 0 }, fd, rc = -1;
	Dwarf_Die t[PD_NTYPES];
	Elf *e = pd_open(path, o, &fd);
	Dwarf *dbg;

	if (e == NULL)
		return -1;
	for (int k = 0; k < PD_NTYPES; k++)
		want[k] = 1;
	want[PD_CFRAME] = version == 0x030b || version == 0x030c;
	want[PD_IFRAME] = version >= 0x030b;
	want[PD_FRAMEOBJ] = version <= 0x030a;
	dbg = dw.begin_elf(e, DWARF_C_READ, NULL);
	if (dbg != NULL && pd_scan(dbg, want, t, found) == 0)
		rc = pd_fill(t, version, l);
	if (dbg != NULL)
		dw.end(dbg);
	dw.elf_end(e);
	close(fd);
	return rc;
}

/* a b c d joined into out (4096 bytes): 1, or 0 when they do not fit. */
static int pd_join(char *out, const char *a, const char *b, const char *c, const char *d)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c), ld = strlen(d);

	if (la + lb + lc + ld >= 4096)
		return 0;
	memcpy(out, a, la);
	memcpy(out + la, b, lb);
	memcpy(out + la + lb, c, lc);
	memcpy(out + la + lb + lc, d, ld + 1);
	return 1;
}

/* Reads the section headers of the ELF file fd (of this machine's
 * class): whether it has DWARF (.debug_info, compressed or not) in
 * *debug, and the file name its .gnu_debuglink gives in link (256 bytes,
 * "" when none).  Returns 0, -1 when it is not such a file. */
static int pd_sections(int fd, int *debug, char *link)
{
	ElfW(Ehdr) eh;
	ElfW(Shdr) *sh = NULL;
	char *names = NULL;
	int rc = -1;

	*debug = 0;
	link[0] = '\0';
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    eh.e_shentsize != sizeof(*sh) || eh.e_shnum == 0 || eh.e_shnum > 4096 ||
	    eh.e_shstrndx >= eh.e_shnum)
		return -1;
	sh = malloc(eh.e_shnum * sizeof(*sh));
	if (sh == NULL || pread(fd, sh, eh.e_shnum * sizeof(*sh), (off_t)eh.e_shoff) !=
			       (ssize_t)(eh.e_shnum * sizeof(*sh)))
		goto out;
	if (sh[eh.e_shstrndx].sh_size == 0 || sh[eh.e_shstrndx].sh_size > (1u << 20) ||
	    (names = malloc(sh[eh.e_shstrndx].sh_size + 1)) == NULL ||
	    pread(fd, names, sh[eh.e_shstrndx].sh_size, (off_t)sh[eh.e_shstrndx].sh_offset) !=
		    (ssize_t)sh[eh.e_shstrndx].sh_size)
		goto out;
	names[sh[eh.e_shstrndx].sh_size] = '\0';
	for (int i = 0; i < eh.e_shnum; i++) {
		const char *name = sh[i].sh_name < sh[eh.e_shstrndx].sh_size ? names + sh[i].sh_name : "";

		if (sh[i].sh_type != SHT_NOBITS && sh[i].sh_size > 0 &&
		    (strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0))
			*debug = 1;
		if (strcmp(name, ".gnu_debuglink") == 0 && sh[i].sh_size > 4) {
			size_t len = sh[i].sh_size < 256 ? sh[i].sh_size : 255;

			if (pread(fd, link, len, (off_t)sh[i].sh_offset) != (ssize_t)len)
				len = 0;
			link[len] = '\0';
		}
	}
	rc = 0;
out:
	free(names);
	free(sh);
	return rc;
}

/* The files that may hold o's DWARF, in the order they are looked for,
 * into paths[] (4): its own file when it has some, the separate file
 * by its build-id, by its debug link; only those there.  Returns how
 * many.  Reads the section headers itself: libdw is loaded only when
 * there is one. */
static int pd_candidates(const struct pd_object *o, char paths[][4096])
{
	char dir[4096], link[256], *slash;
	int n = 0, fd, debug = 0;

	fd = open(o->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || pd_sections(fd, &debug, link) != 0)
		link[0] = '\0';
	if (fd >= 0)
		close(fd);
	if (debug)
		n += pd_join(paths[n], "", o->path, "", "");
	memcpy(paths[n], "/usr/lib/debug/.build-id/", 26);
	for (size_t i = 0; i < o->idlen; i++)
		snprintf(paths[n] + strlen(paths[n]), 4, i == 0 ? "%02x/" : "%02x", o->id[i]);
	strcat(paths[n], ".debug");
	n += access(paths[n], R_OK) == 0;
	if (link[0] != '\0' && strchr(link, '/') == NULL && realpath(o->path, dir) != NULL &&
	    (slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		n += pd_join(paths[n], "", dir, "/", link) && access(paths[n], R_OK) == 0;
		n += pd_join(paths[n], "", dir, "/.debug/", link) && access(paths[n], R_OK) == 0;
		n += pd_join(paths[n], "/usr/lib/debug", dir, "/", link) && access(paths[n], R_OK) == 0;
	}
	return n;
}

/* The cache of layouts read: <folder>/python-<build-id>.offsets, one
 * line: "PVPYOFF1", the version (hex), the build-id (hex), the fields of
 * struct py_layout after the version in decimal, an FNV-1a hash (hex) of
 * what comes before it.  A file that is not a regular one of ours, mode
 * 0600, whose line is not whole, of this version and build-id, with the
 * hash right and every offset in bounds, is not trusted. */
#define PD_CACHE_MAGIC "PVPYOFF1"
#define PD_NWORDS (sizeof(struct py_layout) / 4)

static uint64_t pd_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

/* The cache's folder into dir (4096 bytes), made when missing; 0, or -1
 * when there is none (PROFVIEW_CACHE=off, no XDG_CACHE_HOME nor HOME). */
static int pd_cache_folder(char *dir)
{
	const char *off = getenv("PROFVIEW_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");

	if (off != NULL && strcmp(off, "off") == 0)
		return -1;
	if (xdg != NULL && xdg[0] == '/') {
		if (!pd_join(dir, xdg, "", "", ""))
			return -1;
	} else if (home == NULL || home[0] != '/' || !pd_join(dir, home, "/.cache", "", "")) {
		return -1;
	}
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return -1;
	return pd_join(dir, dir, "/profview", "", "") && (mkdir(dir, 0700) == 0 || errno == EEXIST) ? 0 : -1;
}

/* o's line of the cache, the layout l of version: into line (512
 * bytes); its length. */
static size_t pd_cache_line(char *line, const struct pd_object *o, const uint32_t *w)
{
	size_t n = (size_t)snprintf(line, 512, PD_CACHE_MAGIC " %x ", w[0]);

	for (size_t i = 0; i < o->idlen && n < 400; i++)
		n += (size_t)snprintf(line + n, 512 - n, "%02x", o->id[i]);
	for (size_t i = 1; i < PD_NWORDS && n < 480; i++)
		n += (size_t)snprintf(line + n, 512 - n, " %u", w[i]);
	return n;
}

/* The cache's file of o into path (4096 bytes); 0, or -1. */
static int pd_cache_path(char *path, const struct pd_object *o)
{
	char id[2 * sizeof(o->id) + 1];

	if (pd_cache_folder(path) != 0)
		return -1;
	for (size_t i = 0; i < o->idlen; i++)
		snprintf(id + 2 * i, 3, "%02x", o->id[i]);
	id[2 * o->idlen] = '\0';
	return pd_join(path, path, "/python-", id, ".offsets") ? 0 : -1;
}

/* The layout of version that the cache has of o; 0, or -1. */
static int pd_cache_get(const struct pd_object *o, uint32_t version, struct py_layout *l)
{
	char path[4096], text[600], want[512], *end;
	uint32_t w[PD_NWORDS];
	unsigned long long h;
	struct stat st;
	size_t n;
	ssize_t got;
	int fd;

	if (pd_cache_path(path, o) != 0)
		return -1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	got = -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 077) == 0 &&
	    st.st_size < (off_t)sizeof(text))
		got = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (got <= 0 || text[got - 1] != '\n')
		return -1;
	text[got - 1] = '\0';
	/* the line read must be the one this layout would write */
	end = strrchr(text, ' ');
	if (end == NULL || sscanf(end, " %llx", &h) != 1 || h != pd_hash(text, (size_t)(end - text)))
		return -1;
	*end = '\0';
	memset(w, 0, sizeof(w));
	w[0] = version;
	{
		const char *p = text;

		p += strlen(PD_CACHE_MAGIC " ");
		while (*p != '\0' && *p != ' ')
			p++; /* the version */
		while (*p == ' ')
			p++;
		while (*p != '\0' && *p != ' ')
			p++; /* the build-id */
		for (size_t i = 1; i < PD_NWORDS; i++) {
			char *next;
			unsigned long v = strtoul(p, &next, 10);

			if (next == p || *p != ' ' || v >= PD_MAX_OFFSET)
				return -1;
			w[i] = (uint32_t)v;
			p = next;
		}
	}
	n = pd_cache_line(want, o, w);
	if (n != strlen(text) || memcmp(want, text, n) != 0)
		return -1;
	memcpy(l, w, sizeof(w));
	return 0;
}

/* Keeps the layout l of o in the cache (a new file, renamed over the
 * last).  Failures are silent: the next start reads the DWARF again. */
static void pd_cache_put(const struct pd_object *o, const struct py_layout *l)
{
	char path[4096], tmp[4096], line[600], pid[32];
	uint32_t w[PD_NWORDS];
	size_t n;
	int fd, ok;

	if (pd_cache_path(path, o) != 0)
		return;
	memcpy(w, l, sizeof(w));
	n = pd_cache_line(line, o, w);
	n += (size_t)snprintf(line + n, sizeof(line) - n, " %llx\n", (unsigned long long)pd_hash(line, n));
	snprintf(pid, sizeof(pid), ".%d", (int)getpid());
	if (n >= sizeof(line) || !pd_join(tmp, path, pid, ".new", ""))
		return;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	ok = write(fd, line, n) == (ssize_t)n;
	if (close(fd) != 0 || !ok || rename(tmp, path) != 0)
		unlink(tmp);
}

int pydwarf_layout(const void *runtime, uint32_t version, struct py_layout *l, int fresh)
{
	static struct pd_object o;
	static char paths[5][4096] PRELOAD_COLD;
	const char *test = getenv("PROFVIEW_TEST_PYDWARF");
	int n;

	if (version < 0x0309 || version > 0x030d)
		return -1;
	memset(&o, 0, sizeof(o));
	o.addr = (uintptr_t)runtime;
	dl_iterate_phdr(pd_find_object, &o);
	if (!o.found || o.idlen == 0)
		return -1;
	if (test != NULL)
		return pd_load() == 0 ? pd_read_file(test, &o, version, l) : -1;
	if (!fresh && pd_cache_get(&o, version, l) == 0)
		return 1;
	n = pd_candidates(&o, paths);
	if (n == 0 || pd_load() != 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (pd_read_file(paths[i], &o, version, l) == 0) {
			if (!fresh)
				pd_cache_put(&o, l);
			return 0;
		}
	}
	return -1;
}

void pydwarf_compare(const void *runtime, uint32_t version, const struct py_layout *table,
		     const struct py_layout *published)
{
	const struct py_layout *other[2] = { table, published };
	static const char *const what[2] = { "the table", "_Py_DebugOffsets" };
	struct py_layout d;
	uint32_t a, b, same;

	if (pydwarf_layout(runtime, version, &d, 1) != 0) {
		preload_warn("python offsets: no debug information read");
		return;
	}
	for (int k = 0; k < 2; k++) {
		if (other[k] == NULL)
			continue;
		same = 0;
		for (uint32_t i = 0; i < pydwarf_nfields; i++) {
			memcpy(&a, (const char *)&d + pydwarf_fields[i].at, 4);
			memcpy(&b, (const char *)other[k] + pydwarf_fields[i].at, 4);
			if (a == b)
				same++;
			else
				preload_warn("python offsets: %s: debug information %u, %s %u",
					     pydwarf_fields[i].name, a, what[k], b);
		}
		preload_warn("python offsets: debug information and %s: %u of %u fields the same",
			     what[k], same, pydwarf_nfields);
	}
}
