/* lines.c - a unit's line program run once for all its sampled addresses
 * (see lines.h; the program's layout is DWARF 2-5's, section 6.2)
 *
 * libdw sorts the rows by (address, ends of sequences first, order in the
 * program) and dwfl_module_getsrc takes the last row at most the address:
 * the highest address, and of the rows there the last normal one, or an
 * end of sequence when there is none (then no line).  A run of rows whose
 * addresses never go down (a sequence, usually) answers an address with
 * its last row at most it, or the normal row just before when that is an
 * end at the same address; the best of the runs' answers, by that order,
 * is libdw's.  Once sorted, libdw makes the last row an end, whatever it
 * was, in its place: no line at or above it.  No row is kept but the last
 * few: the program is run once with the addresses sorted, and each row,
 * as the next one comes, answers the addresses between the two (a
 * pointer into the sorted addresses that moves up with the run); a run's
 * last row answers every address above it, and is kept (a tail) to be
 * compared, at the end, with what the addresses above it found.  So the
 * cost is the program's decoding, whatever the number of runs and
 * addresses.
 */
#include "lines.h"
#include "error.h"
#include "util.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

struct cursor {
	const unsigned char *p, *end;
	bool bad;
};

/* A row of the line table; idx its place in the program. */
struct row {
	uint64_t addr, idx;
	uint32_t file, line;
	bool end;
};

/* An address asked about; i its place among those given. */
struct query {
	uint64_t addr;
	size_t i;
};

/* The walk of a program for sorted queries: no row is kept but the ones
 * that may still answer. */
struct walk {
	const struct query *q;
	size_t n;
	struct row *best;      /* each query's answer so far */
	bool *has;             /* whether it has one */
	struct row ring[4];    /* the last rows, row i at i % 4 */
	uint64_t run_start;    /* the first row of the current run */
	size_t at;             /* the first query at or above the last row's address */
	struct row *tails;     /* the answers of runs above their last rows */
	size_t ntails, cap_tails;
	struct row last;       /* the last row in libdw's order */
	uint64_t nrows;
};

struct sections {
	Elf_Data *line, *line_str, *str;
};

/* A unit's line program header, as far as it is needed. */
struct header {
	unsigned version, min_inst, line_range, opcode_base;
	int line_base;
	bool dwarf64;
	const unsigned char *std_lengths; /* opcode_base - 1 of them */
	const unsigned char *program, *end;
};

static uint64_t get_u(struct cursor *c, size_t n)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static uint64_t get_uleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (c->p < c->end) {
		unsigned char b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

static int64_t get_sleb(struct cursor *c)
{
	int64_t v = 0;
	unsigned shift = 0;
	unsigned char b = 0;

	while (c->p < c->end) {
		b = *c->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= (int64_t)(~(uint64_t)0 << shift);
			return v;
		}
	}
	c->bad = true;
	return 0;
}

static const char *get_cstr(struct cursor *c)
{
	const unsigned char *nul = memchr(c->p, 0, (size_t)(c->end - c->p));
	const char *s = (const char *)c->p;

	if (!nul) {
		c->bad = true;
		c->p = c->end;
		return NULL;
	}
	c->p = nul + 1;
	return s;
}

/* A string at offset off of section d; NULL when outside it. */
static const char *str_at(const Elf_Data *d, uint64_t off)
{
	if (!d || off >= d->d_size || !memchr((const char *)d->d_buf + off, 0, d->d_size - off))
		return NULL;
	return (const char *)d->d_buf + off;
}

/* The (decompressed) sections of the unit's file; false when there is no
 * .debug_line or a section libdw left compressed. */
static bool find_sections(Dwarf *dw, struct sections *s)
{
	Elf *elf = dwarf_getelf(dw);
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	*s = (struct sections){ 0 };
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		const char *name = sh ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;
		Elf_Data **slot = NULL;
		if (!name)
			continue;
		if (strcmp(name, ".debug_line") == 0)
			slot = &s->line;
		else if (strcmp(name, ".debug_line_str") == 0)
			slot = &s->line_str;
		else if (strcmp(name, ".debug_str") == 0)
			slot = &s->str;
		if (!slot)
			continue;
		if ((sh->sh_flags & SHF_COMPRESSED) || sh->sh_type == SHT_NOBITS)
			return false;
		*slot = elf_getdata(scn, NULL);
	}
	return s->line != NULL;
}

/* One attribute of a DWARF 5 directory or file entry: a string for
 * DW_LNCT_path, a number for DW_LNCT_directory_index, nothing for the
 * others.  false for a form this does not read. */
static bool entry_value(struct cursor *c, const struct header *h, const struct sections *s,
			uint64_t form, const char **str, uint64_t *num)
{
	*str = NULL;
	*num = 0;
	switch (form) {
	case DW_FORM_string:
		*str = get_cstr(c);
		return true;
	case DW_FORM_line_strp:
	case DW_FORM_strp:
		*str = str_at(form == DW_FORM_strp ? s->str : s->line_str, get_u(c, h->dwarf64 ? 8 : 4));
		return *str != NULL;
	case DW_FORM_udata:
		*num = get_uleb(c);
		return true;
	case DW_FORM_data1:
	case DW_FORM_data2:
	case DW_FORM_data4:
	case DW_FORM_data8:
		*num = get_u(c, form == DW_FORM_data1 ? 1 : form == DW_FORM_data2 ? 2
							     : form == DW_FORM_data4 ? 4 : 8);
		return true;
	case DW_FORM_data16:
		get_u(c, 8);
		get_u(c, 8);
		return true;
	case DW_FORM_block: {
		uint64_t len = get_uleb(c);
		if (len > (uint64_t)(c->end - c->p))
			return false;
		c->p += len;
		return true;
	}
	default:
		return false;
	}
}

/* The growing lists of a header's directories and files. */
struct names {
	const char **dirs;
	size_t ndirs, cap_dirs;
	const char **files;    /* the names as written */
	uint64_t *file_dir;
	size_t nfiles, cap_files, cap_dir;
};

static int add_name(const char ***v, size_t *n, size_t *cap, const char *s)
{
	if (pv_grow(v, cap, *n + 1, sizeof **v) < 0)
		return -1;
	(*v)[(*n)++] = s;
	return 0;
}

static int add_file(struct names *nm, const char *name, uint64_t dir)
{
	size_t cap = nm->cap_files;

	if (add_name(&nm->files, &nm->nfiles, &cap, name) < 0 ||
	    pv_grow(&nm->file_dir, &nm->cap_dir, nm->nfiles, sizeof *nm->file_dir) < 0)
		return -1;
	nm->cap_files = cap;
	nm->file_dir[nm->nfiles - 1] = dir;
	return 0;
}

/* DWARF 5's directory or file table: 1 read, 0 not readable here, -1
 * out of memory. */
static int v5_table(struct cursor *c, const struct header *h, const struct sections *s,
		    struct names *nm, bool files)
{
	uint64_t fmt[2 * 16];
	unsigned nfmt = (unsigned)get_u(c, 1);
	uint64_t count;

	if (nfmt > 16)
		return 0;
	for (unsigned i = 0; i < 2 * nfmt; i++)
		fmt[i] = get_uleb(c);
	count = get_uleb(c);
	for (uint64_t k = 0; k < count && !c->bad; k++) {
		const char *path = NULL;
		uint64_t dir = 0;
		for (unsigned i = 0; i < nfmt; i++) {
			const char *str;
			uint64_t num;
			if (!entry_value(c, h, s, fmt[2 * i + 1], &str, &num))
				return 0;
			if (fmt[2 * i] == DW_LNCT_path)
				path = str;
			else if (fmt[2 * i] == DW_LNCT_directory_index)
				dir = num;
		}
		if (!path)
			return 0;
		if ((files ? add_file(nm, path, dir)
			   : add_name(&nm->dirs, &nm->ndirs, &nm->cap_dirs, path)) < 0)
			return -1;
	}
	return c->bad ? 0 : 1;
}

/* Before DWARF 5: directory 0 is the unit's, file 0 libdw's "???". */
static int v4_tables(struct cursor *c, struct names *nm, const char *comp_dir)
{
	const char *s;

	if (add_name(&nm->dirs, &nm->ndirs, &nm->cap_dirs, comp_dir) < 0 ||
	    add_file(nm, "???", UINT64_MAX) < 0)
		return -1;
	while ((s = get_cstr(c)) != NULL && s[0])
		if (add_name(&nm->dirs, &nm->ndirs, &nm->cap_dirs, s) < 0)
			return -1;
	while (!c->bad && (s = get_cstr(c)) != NULL && s[0]) {
		uint64_t dir = get_uleb(c);
		get_uleb(c); /* mtime */
		get_uleb(c); /* length */
		if (add_file(nm, s, dir) < 0)
			return -1;
	}
	return c->bad ? 0 : 1;
}

/* The unit's file names composed as libdw does, in one block: 1, 0 (a
 * directory index out of range), -1. */
static int compose(const struct names *nm, struct pv_unit_files *out)
{
	size_t size = 0;
	char *block, *w;

	for (size_t i = 0; i < nm->nfiles; i++) {
		const char *f = nm->files[i], *d = NULL;
		if (f[0] != '/' && nm->file_dir[i] != UINT64_MAX) {
			if (nm->file_dir[i] >= nm->ndirs)
				return 0;
			d = nm->dirs[nm->file_dir[i]];
		}
		size += (d ? strlen(d) + 1 : 0) + strlen(f) + 1;
	}
	out->names = malloc(nm->nfiles * sizeof *out->names + size + 1);
	if (!out->names)
		return pv_oom();
	block = w = (char *)(out->names + nm->nfiles);
	for (size_t i = 0; i < nm->nfiles; i++) {
		const char *f = nm->files[i], *d = NULL;
		if (f[0] != '/' && nm->file_dir[i] != UINT64_MAX)
			d = nm->dirs[nm->file_dir[i]];
		out->names[i] = w;
		if (d) {
			size_t dl = strlen(d);
			memcpy(w, d, dl);
			w += dl;
			*w++ = '/';
		}
		w = stpcpy(w, f) + 1;
	}
	(void)block;
	out->n = nm->nfiles;
	return 1;
}

/* Read the header at offset off of .debug_line and the unit's file names.
 * 1, 0 (not readable here), -1. */
static int read_header(const struct sections *s, uint64_t off, const char *comp_dir,
		       struct header *h, struct pv_unit_files *files)
{
	struct cursor c = { (const unsigned char *)s->line->d_buf + off,
			    (const unsigned char *)s->line->d_buf + s->line->d_size, false };
	struct names nm = { 0 };
	uint64_t len, hlen;
	int r = 0;

	if (off >= s->line->d_size)
		return 0;
	*h = (struct header){ 0 };
	len = get_u(&c, 4);
	if (len == 0xffffffff) {
		h->dwarf64 = true;
		len = get_u(&c, 8);
	} else if (len >= 0xfffffff0) {
		return 0;
	}
	if (c.bad || len > (uint64_t)(c.end - c.p))
		return 0;
	c.end = c.p + len;
	h->end = c.end;
	h->version = (unsigned)get_u(&c, 2);
	if (h->version < 2 || h->version > 5)
		return 0;
	if (h->version >= 5 && (get_u(&c, 1) != 8 || get_u(&c, 1) != 0))
		return 0; /* another address size, or segments */
	hlen = get_u(&c, h->dwarf64 ? 8 : 4);
	if (c.bad || hlen > (uint64_t)(c.end - c.p))
		return 0;
	h->program = c.p + hlen;
	h->min_inst = (unsigned)get_u(&c, 1);
	if (h->version >= 4 && get_u(&c, 1) != 1)
		return 0; /* VLIW: op_index */
	get_u(&c, 1); /* default_is_stmt */
	h->line_base = (int)(int8_t)get_u(&c, 1);
	h->line_range = (unsigned)get_u(&c, 1);
	h->opcode_base = (unsigned)get_u(&c, 1);
	if (c.bad || h->line_range == 0 || h->opcode_base == 0 ||
	    (size_t)(c.end - c.p) < h->opcode_base - 1)
		return 0;
	h->std_lengths = c.p;
	c.p += h->opcode_base - 1;
	if (h->version >= 5) {
		r = v5_table(&c, h, s, &nm, false);
		if (r > 0)
			r = v5_table(&c, h, s, &nm, true);
	} else {
		r = v4_tables(&c, &nm, comp_dir);
	}
	if (r > 0)
		r = compose(&nm, files);
	free(nm.dirs);
	free(nm.files);
	free(nm.file_dir);
	return r;
}

/* Is row a after row b in libdw's order? */
static bool later(const struct row *a, const struct row *b)
{
	if (a->addr != b->addr)
		return a->addr > b->addr;
	if (a->end != b->end)
		return !a->end;
	return a->idx > b->idx;
}

static int cmp_query(const void *a, const void *b)
{
	const struct query *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_row(const void *a, const void *b)
{
	return later(a, b) ? 1 : later(b, a) ? -1 : 0;
}

/* Row r as the answer of the query at k of the sorted ones, when it is
 * better than the one it has. */
static void offer(struct walk *w, size_t k, const struct row *r)
{
	if (!w->has[k] || later(r, &w->best[k])) {
		w->best[k] = *r;
		w->has[k] = true;
	}
}

/* The first of the sorted queries at or above addr. */
static size_t first_at(const struct walk *w, uint64_t addr)
{
	size_t l = 0, u = w->n;

	while (l < u) {
		size_t m = l + (u - l) / 2;
		if (w->q[m].addr < addr)
			l = m + 1;
		else
			u = m;
	}
	return l;
}

/* The row before row k (one of the last three) in the current run, when
 * there is one at k's address; else NULL. */
static const struct row *same_before(const struct walk *w, uint64_t k)
{
	const struct row *r = &w->ring[(k - 1) & 3];

	return k > w->run_start && r->addr == w->ring[k & 3].addr ? r : NULL;
}

/* The run, rows run_start to nrows - 1, ends: its answer for every query
 * from w->at on (all at or above its last row's address) is its last
 * row, or the normal row just before when that is an end at the same
 * address (t); kept among the tails when some query is there.  t is also
 * the run's last row in libdw's order.  0 or -1. */
static int close_run(struct walk *w)
{
	uint64_t k = w->nrows - 1;
	const struct row *t = &w->ring[k & 3], *b = same_before(w, k);

	if (t->end && b)
		t = b;
	if (w->last.idx == UINT64_MAX || later(t, &w->last))
		w->last = *t;
	if (w->at >= w->n)
		return 0;
	if (pv_grow(&w->tails, &w->cap_tails, w->ntails + 1, sizeof *w->tails) < 0)
		return -1;
	w->tails[w->ntails++] = *t;
	return 0;
}

/* The next row of the program, r: within a run (addresses that never go
 * down, no end before), the row before it answers the queries from its
 * address up to r's; else the run before ends and r starts one.  0 or
 * -1. */
static inline int step(struct walk *w, const struct row *r)
{
	const struct row *prev = &w->ring[(w->nrows - 1) & 3];

	if (w->nrows > w->run_start && !prev->end && r->addr >= prev->addr) {
		for (; w->at < w->n && w->q[w->at].addr < r->addr; w->at++)
			offer(w, w->at, prev);
	} else {
		if (w->nrows > 0 && close_run(w) < 0)
			return -1;
		w->at = first_at(w, r->addr);
		w->run_start = w->nrows;
	}
	w->ring[w->nrows & 3] = *r;
	w->nrows++;
	return 0;
}

/* The address and line advances of each special opcode. */
static void special_table(const struct header *h, uint64_t adv[256], int32_t dline[256])
{
	for (unsigned op = h->opcode_base; op < 256; op++) {
		unsigned adj = op - h->opcode_base;
		adv[op] = (uint64_t)h->min_inst * (adj / h->line_range);
		dline[op] = h->line_base + (int)(adj % h->line_range);
	}
}

/* Run the program, each row given to step: 1, 0 (not readable here),
 * -1. */
static int run_program(const struct header *h, struct walk *w)
{
	struct cursor c = { h->program, h->end, false };
	uint64_t addr = 0, adv[256];
	int32_t dline[256];
	uint32_t file = 1, line = 1;
	bool last_end = false;

	special_table(h, adv, dline);
	while (c.p < c.end && !c.bad) {
		unsigned op = *c.p++;
		bool emit = false, end = false;

		if (op >= h->opcode_base) {
			addr += adv[op];
			line += (uint32_t)dline[op];
			emit = true;
		} else if (op == 0) {
			uint64_t len = get_uleb(&c);
			const unsigned char *next = c.p + len;
			if (c.bad || len == 0 || len > (uint64_t)(c.end - c.p))
				return 0;
			unsigned sub = *c.p++;
			if (sub == DW_LNE_end_sequence) {
				emit = end = true;
			} else if (sub == DW_LNE_set_address) {
				if (len != 9)
					return 0;
				addr = get_u(&c, 8);
			} else if (sub == DW_LNE_define_file) {
				return 0;
			}
			c.p = next;
		} else if (op == DW_LNS_copy) {
			emit = true;
		} else if (op == DW_LNS_advance_pc) {
			addr += (uint64_t)h->min_inst * get_uleb(&c);
		} else if (op == DW_LNS_advance_line) {
			line += (uint32_t)get_sleb(&c);
		} else if (op == DW_LNS_set_file) {
			file = (uint32_t)get_uleb(&c);
		} else if (op == DW_LNS_const_add_pc) {
			addr += adv[255];
		} else if (op == DW_LNS_fixed_advance_pc) {
			addr += get_u(&c, 2);
		} else if (op == DW_LNS_negate_stmt || op == DW_LNS_set_basic_block ||
			   op == DW_LNS_set_prologue_end || op == DW_LNS_set_epilogue_begin) {
			/* no operand, nothing kept */
		} else {
			/* set_column, set_isa and unknown ones: skip the operands */
			for (unsigned i = 0; i < h->std_lengths[op - 1]; i++)
				get_uleb(&c);
		}
		if (!emit)
			continue;
		if (step(w, &(struct row){ addr, w->nrows, file, line, end }) < 0)
			return -1;
		last_end = end;
		if (end) {
			addr = 0;
			file = 1;
			line = 1;
		}
	}
	/* libdw wants the table to end a sequence */
	return !c.bad && last_end ? 1 : 0;
}

/* After the program: the last run closed, and each query's answer the
 * better of its own and the best tail at or below it.  1 or -1. */
static int finish(struct walk *w)
{
	if (w->nrows > 0 && close_run(w) < 0)
		return -1;
	qsort(w->tails, w->ntails, sizeof *w->tails, cmp_row);
	for (size_t k = 0; k < w->n; k++) {
		size_t l = 0, u = w->ntails;
		while (l < u) {
			size_t m = l + (u - l) / 2;
			if (w->tails[m].addr <= w->q[k].addr)
				l = m + 1;
			else
				u = m;
		}
		if (l > 0)
			offer(w, k, &w->tails[l - 1]);
	}
	return 1;
}

/* The queries addrs[0..n) sorted, with room for their answers. */
static int walk_init(struct walk *w, const uint64_t *addrs, size_t n)
{
	struct query *q = malloc((n ? n : 1) * sizeof *q);

	*w = (struct walk){ .q = q, .n = n, .last.idx = UINT64_MAX };
	w->best = malloc((n ? n : 1) * sizeof *w->best);
	w->has = calloc(n ? n : 1, sizeof *w->has);
	if (!q || !w->best || !w->has)
		return pv_oom();
	for (size_t i = 0; i < n; i++)
		q[i] = (struct query){ addrs[i], i };
	qsort(q, n, sizeof *q, cmp_query);
	return 0;
}

static void walk_free(struct walk *w)
{
	free((void *)w->q);
	free(w->best);
	free(w->has);
	free(w->tails);
}

int pv_unit_lines(Dwarf_Die *cu, const uint64_t *addrs, size_t n, const char **file, int *line,
		  bool *found, struct pv_unit_files *files)
{
	Dwarf *dw = dwarf_cu_getdwarf(cu->cu);
	Dwarf_Attribute attr;
	Dwarf_Word off;
	struct sections s;
	struct header h;
	struct walk w;
	int r;

	*files = (struct pv_unit_files){ 0 };
	if (!dw || dwarf_tag(cu) != DW_TAG_compile_unit ||
	    dwarf_formudata(dwarf_attr(cu, DW_AT_stmt_list, &attr), &off) != 0 ||
	    !find_sections(dw, &s))
		return 0;
	r = walk_init(&w, addrs, n);
	if (r == 0)
		r = read_header(&s, off, dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr)), &h,
				files);
	if (r > 0)
		r = run_program(&h, &w);
	if (r > 0)
		r = finish(&w);
	for (size_t k = 0; r > 0 && k < n; k++) {
		size_t i = w.q[k].i;
		/* libdw makes the last row in its order an end, whatever it
		 * was (some producers forget the last end; more often, a
		 * sequence's last row is at the address of its end), once the
		 * rows are sorted: the answer of every address at or above it,
		 * then none */
		found[i] = w.has[k] && !w.best[k].end && w.best[k].idx != w.last.idx;
		file[i] = found[i] ? pv_unit_file(files, w.best[k].file) : NULL;
		line[i] = found[i] ? (int)w.best[k].line : 0;
	}
	if (r <= 0)
		pv_unit_files_free(files);
	walk_free(&w);
	return r;
}

const char *pv_unit_file(const struct pv_unit_files *files, uint64_t i)
{
	return i < files->n ? files->names[i] : NULL;
}

void pv_unit_files_free(struct pv_unit_files *files)
{
	free(files->names);
	*files = (struct pv_unit_files){ 0 };
}
