/* raw-python.c - the Python frames of a raw trace (see raw-python.h)
 *
 * A code object's record becomes a function (its qualified name, file and
 * first line); each frame word, a location in the "[python]" mapping at
 * the word itself, whose one line is the function at the line its
 * instruction is on, looked up in the code's line table.
 */
#include "error.h"
#include "raw-python.h"
#include "budget.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CPython 3.11-3.13's location table (co_linetable): entries of code
 * units, each a first byte 1CCCCLLL (code C, L + 1 units) and what its
 * code says follows, in 6-bit varints (bit 6: more).  Only the line
 * matters here: code 15 has none, 14 a signed delta and three varints,
 * 13 a signed delta, 10 to 12 the delta C - 10 and two bytes, 0 to 9 no
 * change and one byte. */
static uint64_t py_varint(const unsigned char *t, size_t len, size_t *i)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (*i < len && shift < 64) {
		unsigned char b = t[(*i)++];
		v |= (uint64_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

static int64_t py_svarint(const unsigned char *t, size_t len, size_t *i)
{
	uint64_t u = py_varint(t, len, i);

	return u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
}

int64_t pv_python_line(const unsigned char *table, size_t len, int64_t first, uint32_t instr)
{
	int64_t line = first;
	uint64_t at = 0;
	size_t i = 0;

	while (i < len) {
		unsigned char b = table[i++];
		unsigned code = (b >> 3) & 15, units = (b & 7) + 1u;
		bool none = false;

		if (!(b & 128))
			return 0; /* not the first byte of an entry: damaged */
		if (code == 15) {
			none = true;
		} else if (code == 14) {
			line += py_svarint(table, len, &i);
			for (int k = 0; k < 3; k++)
				py_varint(table, len, &i);
		} else if (code == 13) {
			line += py_svarint(table, len, &i);
		} else if (code >= 10) {
			line += code - 10;
			i += 2;
		} else {
			i += 1;
		}
		if (instr < at + units)
			return none || line <= 0 ? 0 : line;
		at += units;
	}
	return 0;
}

/* 3.10: pairs of an unsigned byte count and a signed line delta, -128
 * for no line; the entry an instruction's byte offset is in gives its
 * line. */
int64_t pv_python_line_310(const unsigned char *table, size_t len, int64_t first, uint32_t instr)
{
	uint64_t end = 0, addr = (uint64_t)instr * 2;
	int64_t line = first;

	for (size_t i = 0; i + 1 < len; i += 2) {
		int8_t d = (int8_t)table[i + 1];
		bool none = d == -128;

		end += table[i];
		if (!none)
			line += d;
		if (addr < end)
			return none || line <= 0 ? 0 : line;
	}
	return 0;
}

/* 3.9: co_lnotab, pairs of an unsigned byte increment and a signed line
 * increment; the line is the one reached before the byte offset is
 * passed. */
int64_t pv_python_line_39(const unsigned char *table, size_t len, int64_t first, uint32_t instr)
{
	uint64_t at = 0, addr = (uint64_t)instr * 2;
	int64_t line = first;

	for (size_t i = 0; i + 1 < len; i += 2) {
		at += table[i];
		if (at > addr)
			break;
		line += (int8_t)table[i + 1];
	}
	return line > 0 ? line : 0;
}

/* A LEB128 varint (7 bits a byte, bit 7: more); *cut set when the table
 * ends inside it. */
static uint64_t py_leb128(const unsigned char *t, size_t len, size_t *i, bool *cut)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*i >= len) {
			*cut = true;
			break;
		}
		unsigned char b = t[(*i)++];

		v |= (uint64_t)(b & 127) << shift;
		if (!(b & 128))
			break;
	}
	return v;
}

/* RAW_PYCODE_COMPACT's runs (see raw.h). */
int64_t pv_python_line_compact(const unsigned char *table, size_t len, int64_t first, uint32_t instr)
{
	int64_t line = first;
	uint64_t at = 0;
	size_t i = 0;

	while (i < len) {
		bool cut = false;
		uint64_t units = py_leb128(table, len, &i, &cut), v = py_leb128(table, len, &i, &cut);
		uint64_t z = v >> 1;

		if (cut)
			return 0;
		if (!(v & 1))
			line += (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
		if (units == 0 || instr < at + units)
			return v & 1 || line <= 0 ? 0 : line;
		at += units;
	}
	return 0;
}

static const char *const py_stop_names[RAW_PY_STOP_TABLE + 1] = {
	[0] = "[python: frames not read]",
	[RAW_PY_STOP_READ] = "[python: frame not readable]",
	[RAW_PY_STOP_CODE] = "[python: frame without code]",
	[RAW_PY_STOP_DEPTH] = "[python: deeper frames not read]",
	[RAW_PY_STOP_TABLE] = "[python: too many code objects]",
};

/* The function named name (no file), kept in *slot1 (+ 1).  PV_NONE when
 * out of memory. */
static uint32_t py_named(struct reader *rd, uint32_t *slot1, const char *name)
{
	uint32_t s, f;

	if (*slot1)
		return *slot1 - 1;
	s = pv_intern_str(rd->p, name);
	f = s == PV_NONE ? PV_NONE : pv_get_function(rd->p, s, s, pv_intern_str(rd->p, ""), 0);
	if (f != PV_NONE)
		*slot1 = f + 1;
	return f;
}

/* The entry of code index (0 < index < RAW_PY_MAX_CODES), made; *e NULL
 * (with a warning) when it has a record already.  0, or -1 when out of
 * memory. */
static int py_code_slot(struct reader *rd, uint32_t index, size_t off, struct rd_python_code **e)
{
	struct rd_python *py = &rd->py;

	*e = NULL;
	if (index >= py->ncodes) {
		/* (indexed by the records' own numbers: charged, as a trace of
		 * a few bytes may name a big one) */
		size_t had = py->ncodes;

		if (pv_grow(&py->codes, &py->ncodes, (size_t)index + 1, sizeof *py->codes) < 0)
			return -1;
		memset(py->codes + had, 0, (py->ncodes - had) * sizeof *py->codes);
	}
	if (py->codes[index].function1) {
		pv_warn("%s: Python code %u at byte %zu is defined twice; the first is kept", rd->who,
			index, off);
		return 0;
	}
	*e = &py->codes[index];
	return 0;
}

int rd_python_code(struct reader *rd, const unsigned char *r, uint32_t size, size_t off)
{
	struct rd_python *py = &rd->py;
	struct raw_pycode c;
	struct rd_python_code *e;
	uint32_t name, file, fn;

	memcpy(&c, r, sizeof c);
	if ((uint64_t)c.name_len + c.file_len + c.table_len > size - sizeof c || c.index == 0 ||
	    c.index >= RAW_PY_MAX_CODES) {
		pv_warn("%s: Python code record at byte %zu is malformed; ignored", rd->who, off);
		return 0;
	}
	if (py_code_slot(rd, c.index, off, &e) < 0)
		return -1;
	if (e == NULL)
		return 0;
	r += sizeof c;
	name = pv_intern(rd->p, (const char *)r, c.name_len);
	if (c.version & RAW_PYCODE_FILE_REF) {
		uint32_t of = 0;

		if (c.file_len == 4)
			memcpy(&of, r + c.name_len, 4);
		if (of == 0 || of >= py->ncodes || !py->codes[of].function1) {
			pv_warn("%s: Python code %u at byte %zu names the file of code %u, not read before; "
				"its file is not known", rd->who, c.index, off, of);
			file = pv_intern_str(rd->p, "");
		} else {
			file = py->codes[of].file;
		}
	} else {
		file = pv_intern(rd->p, (const char *)r + c.name_len, c.file_len);
	}
	if (name == PV_NONE || file == PV_NONE)
		return -1;
	fn = pv_get_function(rd->p, name, name, file, c.first_line);
	if (fn == PV_NONE)
		return -1;
	if (c.table_len > 0) {
		e->table = malloc(c.table_len);
		if (!e->table)
			return pv_oom();
		memcpy(e->table, r + c.name_len + c.file_len, c.table_len);
		e->table_len = c.table_len;
	}
	e->first_line = c.first_line;
	e->version = c.version & RAW_PYCODE_VERSION;
	e->compact = (c.version & RAW_PYCODE_COMPACT) != 0;
	e->name = name;
	e->file = file;
	e->function1 = fn + 1;
	return 0;
}

/* May the entries of the trace take n more bytes of strings written
 * before?  Bounded by a multiple of its records' bytes, so that a trace of
 * a few bytes cannot name gigabytes; said once when it may not. */
static bool codes_may_share(struct reader *rd, uint64_t n, size_t off)
{
	struct rd_python *py = &rd->py;

	if (py->codes_shared + n > 64 * py->codes_read + 65536) {
		if (!py->codes_warned)
			pv_warn("%s: Python code record at byte %zu takes more of the names before "
				"than a trace of its size can; the rest of its names are cut",
				rd->who, off);
		py->codes_warned = true;
		return false;
	}
	py->codes_shared += n;
	return true;
}

/* The string of a RAW_PYCODES entry at *p (raw.h) interned into *s; a
 * string that names one not read is empty, with a warning.  0; 1 when it
 * does not decode; -1 when out of memory. */
static int codes_string(struct reader *rd, const unsigned char **p, const unsigned char *end,
			size_t off, uint32_t *s)
{
	struct rd_python *py = &rd->py;
	uint32_t v, id, pre = 0, n;
	const char *was = "";
	char *buf;

	if (raw_varint_get32(p, end, &v) < 0)
		return 1;
	if ((v & 3) != RAW_PYCODES_TEXT && (v & 3) != RAW_PYCODES_SAME &&
	    (v & 3) != RAW_PYCODES_PREFIX)
		return 1;
	if ((v & 3) == RAW_PYCODES_TEXT) {
		if (v >> 2 > (size_t)(end - *p))
			return 1;
		*s = pv_intern(rd->p, (const char *)*p, v >> 2);
		*p += v >> 2;
		return *s == PV_NONE ? -1 : 0;
	}
	id = v >> 2;
	if (id >> 1 < py->ncodes && py->codes[id >> 1].function1 && py->codes[id >> 1].lines)
		was = pv_str(rd->p, id & 1 ? py->codes[id >> 1].file : py->codes[id >> 1].name);
	else
		pv_warn("%s: Python code record at byte %zu names string %u, not read before; "
			"taken as empty", rd->who, off, id);
	if ((v & 3) == RAW_PYCODES_SAME) {
		*s = pv_intern_str(rd->p, was);
		return *s == PV_NONE ? -1 : 0;
	}
	if (raw_varint_get32(p, end, &pre) < 0 || raw_varint_get32(p, end, &n) < 0 ||
	    n > (size_t)(end - *p))
		return 1;
	if (pre > strlen(was))
		pre = (uint32_t)strlen(was);
	if (!codes_may_share(rd, pre, off))
		pre = 0;
	buf = malloc((size_t)pre + n + 1);
	if (buf == NULL)
		return pv_oom();
	memcpy(buf, was, pre);
	memcpy(buf + pre, *p, n);
	*p += n;
	*s = pv_intern(rd->p, buf, (size_t)pre + n);
	free(buf);
	return *s == PV_NONE ? -1 : 0;
}

int rd_python_codes(struct reader *rd, const unsigned char *r, uint32_t size, size_t off)
{
	const unsigned char *p = r + sizeof(struct raw_pycodes), *end = r + size;
	uint32_t index = 0, delta, zz, name, file, fn;
	struct rd_python_code *e;
	int bad = 0;

	rd->py.codes_read += size;
	while (p < end && *p != 0) {
		if (raw_varint_get32(&p, end, &delta) < 0 || raw_varint_get32(&p, end, &zz) < 0 ||
		    (bad = codes_string(rd, &p, end, off, &name)) > 0 ||
		    (bad == 0 && (bad = codes_string(rd, &p, end, off, &file)) > 0)) {
			pv_warn("%s: Python code record at byte %zu is malformed from byte %zu on; "
				"the rest ignored", rd->who, off, off + (size_t)(p - r));
			return 0;
		}
		if (bad < 0)
			return -1;
		index += delta >> 1 ^ -(delta & 1);
		if (index == 0 || index >= RAW_PY_MAX_CODES) {
			pv_warn("%s: Python code record at byte %zu names code %u; ignored", rd->who,
				off, index);
			continue;
		}
		if (py_code_slot(rd, index, off, &e) < 0)
			return -1;
		if (e == NULL)
			continue;
		e->first_line = (int32_t)(zz >> 1 ^ -(zz & 1));
		fn = pv_get_function(rd->p, name, name, file, e->first_line);
		if (fn == PV_NONE)
			return -1;
		e->lines = true;
		e->name = name;
		e->file = file;
		e->function1 = fn + 1;
	}
	return 0;
}

/* The process's code index is the run's code c (RAW_PYRUNCODES): 1; 0
 * when it may not be (index out of range, seen before, or the run has no
 * such code), with a warning; -1 when out of memory. */
static int run_code(struct reader *rd, uint32_t index, uint32_t c, size_t off)
{
	const struct rd_run_names *rn = rd->run_names;
	const struct rd_python_code *rc;
	struct rd_python_code *e;
	uint32_t name, file, fn;

	if (index == 0 || index >= RAW_PY_MAX_CODES || rn == NULL || c >= rn->py.ncodes ||
	    !rn->py.codes[c].function1 || !rn->py.codes[c].lines) {
		pv_warn("%s: Python code record at byte %zu names code %u as the run's code %u, "
			"which %s; the rest of the record ignored", rd->who, off, index, c,
			rn ? "the run's names do not have" : "are not in the file");
		return 0;
	}
	if (index < rd->py.ncodes && rd->py.codes[index].function1)
		return py_code_slot(rd, index, off, &e) < 0 ? -1 : 0; /* (says so) */
	if (py_code_slot(rd, index, off, &e) < 0)
		return -1;
	rc = &rn->py.codes[c];
	if (!codes_may_share(rd, strlen(pv_str(rn->p, rc->name)) + strlen(pv_str(rn->p, rc->file)),
			     off)) {
		name = file = pv_intern_str(rd->p, "");
	} else {
		name = pv_intern_str(rd->p, pv_str(rn->p, rc->name));
		file = pv_intern_str(rd->p, pv_str(rn->p, rc->file));
	}
	if (name == PV_NONE || file == PV_NONE)
		return -1;
	fn = pv_get_function(rd->p, name, name, file, rc->first_line);
	if (fn == PV_NONE)
		return -1;
	e->first_line = rc->first_line;
	e->lines = true;
	e->name = name;
	e->file = file;
	e->function1 = fn + 1;
	/* the process's code of the run's, for the run's parts */
	if (c >= rd->py.nrun_inv) {
		size_t had = rd->py.nrun_inv;

		if (pv_grow(&rd->py.run_inv, &rd->py.nrun_inv, (size_t)c + 1, sizeof *rd->py.run_inv) < 0)
			return -1;
		memset(rd->py.run_inv + had, 0, (rd->py.nrun_inv - had) * sizeof *rd->py.run_inv);
	}
	if (rd->py.run_inv[c] == 0)
		rd->py.run_inv[c] = index;
	return 1;
}

int rd_python_run_codes(struct reader *rd, const unsigned char *r, uint32_t size, size_t off)
{
	const unsigned char *p = r + sizeof(struct raw_pyruncodes), *end = r + size;
	uint32_t index = 0, c = 0, n, di, dc;

	rd->py.codes_read += size;
	while (p < end && *p != 0) {
		if (raw_varint_get32(&p, end, &n) < 0 || raw_varint_get32(&p, end, &di) < 0 ||
		    raw_varint_get32(&p, end, &dc) < 0) {
			pv_warn("%s: Python code record at byte %zu is malformed from byte %zu on; "
				"the rest ignored", rd->who, off, off + (size_t)(p - r));
			return 0;
		}
		index += di >> 1 ^ -(di & 1);
		c += dc >> 1 ^ -(dc & 1);
		/* each code of a range is new: a few bytes make no more work
		 * than the codes a trace may have */
		for (uint32_t k = 0; k < n; k++) {
			int got = run_code(rd, index, c, off);

			if (got <= 0)
				return got;
			index++;
			c++;
		}
	}
	return 0;
}

static const struct rd_python_part *part_get(const struct rd_python *py, uint32_t index);
static struct rd_python_part *part_new(struct rd_python *py, uint32_t index);

int rd_python_run_parts(struct reader *rd, const unsigned char *r, uint32_t size, size_t off)
{
	const unsigned char *p = r + sizeof(struct raw_pyrunparts), *end = r + size;
	const struct rd_run_names *rn = rd->run_names;
	uint32_t index = 0, g = 0, n, di, dg;
	uint64_t lo, hi;

	/* (the names of the run's codes its parts name are bounded by it) */
	rd->py.codes_read += size;
	if (raw_varint_get(&p, end, 10, &lo) < 0 || raw_varint_get(&p, end, 10, &hi) < 0) {
		pv_warn("%s: Python part record at byte %zu is malformed; ignored", rd->who, off);
		return 0;
	}
	hi += lo;
	if (p == end || *p == 0) {
		/* its stacks name the run's parts themselves */
		if (rn == NULL)
			pv_warn("%s: Python part record at byte %zu names the run's parts, which are "
				"not in the file", rd->who, off);
		rd->py.run_direct = true;
		rd->py.run_lo = lo;
		rd->py.run_hi = hi;
		return 0;
	}
	while (p < end && *p != 0) {
		if (raw_varint_get32(&p, end, &n) < 0 || raw_varint_get32(&p, end, &di) < 0 ||
		    raw_varint_get32(&p, end, &dg) < 0) {
			pv_warn("%s: Python part record at byte %zu is malformed from byte %zu on; "
				"the rest ignored", rd->who, off, off + (size_t)(p - r));
			return 0;
		}
		index += di >> 1 ^ -(di & 1);
		g += dg >> 1 ^ -(dg & 1);
		/* each part of a range is new and the run's: a few bytes make
		 * no more work than the parts a trace may have */
		for (uint32_t k = 0; k < n; k++, index++, g++) {
			struct rd_python_part *t;

			if (index == 0 || index > RAW_PY_MAX_PARTS || part_get(&rd->py, index) ||
			    rn == NULL || part_get(&rn->py, g) == NULL) {
				pv_warn("%s: Python part record at byte %zu names part %u as the run's "
					"part %u, which %s; the rest of the record ignored", rd->who,
					off, index, g,
					rn == NULL ? "are not in the file"
					: part_get(&rn->py, g) == NULL ? "the run's names do not have"
								       : "it may not be");
				return 0;
			}
			if ((t = part_new(&rd->py, index)) == NULL)
				return -1;
			*t = (struct rd_python_part){ .eval_lo = lo, .eval_hi = hi, .run1 = g + 1 };
		}
	}
	return 0;
}

uint32_t rd_python_location(struct reader *rd, uint64_t w)
{
	struct rd_python *py = &rd->py;
	uint32_t code = raw_py_code(w), loc;
	struct pv_line line = { PV_NONE, 0 };

	if (!py->map1) {
		struct pv_mapping m = { .start = RAW_PY_TAG << 48, .limit = (RAW_PY_TAG + 1) << 48,
					.kind = PV_MAP_PYTHON, .has_functions = true,
					.has_filenames = true, .has_line_numbers = true };
		uint32_t mi;

		m.file = pv_intern_str(rd->p, PV_PYTHON_MAPPING_NAME);
		if (m.file == PV_NONE || (mi = pv_add_mapping(rd->p, &m)) == PV_NONE)
			return PV_NONE;
		py->map1 = mi + 1;
	}
	loc = pv_get_location(rd->p, w, py->map1 - 1);
	if (loc == PV_NONE || rd->p->locations[loc].nlines)
		return loc;
	if (code == 0) {
		uint32_t why = raw_py_instr(w);
		line.function = py_named(rd, &py->stop1[why <= RAW_PY_STOP_TABLE ? why : 0],
					 py_stop_names[why <= RAW_PY_STOP_TABLE ? why : 0]);
	} else if (code < py->ncodes && py->codes[code].function1) {
		const struct rd_python_code *e = &py->codes[code];

		line.function = e->function1 - 1;
		uint32_t in = raw_py_instr(w);

		if (in != RAW_PY_NO_INSTR)
			line.line = e->lines ? in
				    : e->compact
					    ? pv_python_line_compact(e->table, e->table_len, e->first_line, in)
				    : e->version >= 0x030b
					    ? pv_python_line(e->table, e->table_len, e->first_line, in)
				    : e->version == 0x030a
					    ? pv_python_line_310(e->table, e->table_len, e->first_line, in)
					    : pv_python_line_39(e->table, e->table_len, e->first_line, in);
	} else {
		line.function = py_named(rd, &py->unknown1, "[python: code not recorded]");
	}
	if (line.function == PV_NONE || pv_set_lines(rd->p, loc, &line, 1) < 0)
		return PV_NONE;
	return loc;
}

int rd_python_stack(struct reader *rd, const unsigned char *r, size_t off)
{
	struct rd_python *py = &rd->py;
	struct raw_pystack g;

	memcpy(&g, r, sizeof g);
	r += sizeof g;
	for (uint32_t i = 0; i < g.nframes; i++) {
		uint64_t w;
		memcpy(&w, r + 8 * (size_t)i, 8);
		if (!raw_py_is(w))
			g.index = 0;
	}
	if (g.index == 0 || g.index > RAW_PY_MAX_CODES ||
	    (g.index < py->nstacks && py->stack_off1[g.index])) {
		pv_warn("%s: Python stack record at byte %zu is malformed or repeated; ignored",
			rd->who, off);
		return 0;
	}
	if (g.index >= py->nstacks) {
		size_t n = g.index + 1 > py->nstacks * 2 ? g.index + 1 : py->nstacks * 2;
		uint64_t *o;

		/* (indexed by the records' own numbers, as above) */
		if (pv_budget_charge((n - py->nstacks) * (sizeof *o + sizeof *py->stack_n)) < 0)
			return -1;
		o = realloc(py->stack_off1, n * sizeof *o);

		if (o)
			py->stack_off1 = o;
		uint32_t *c = o ? realloc(py->stack_n, n * sizeof *c) : NULL;
		if (!c)
			return pv_oom();
		py->stack_n = c;
		memset(o + py->nstacks, 0, (n - py->nstacks) * sizeof *o);
		memset(c + py->nstacks, 0, (n - py->nstacks) * sizeof *c);
		py->nstacks = n;
	}
	if (pv_grow(&py->words, &py->cap_words, py->nwords + g.nframes, sizeof *py->words) < 0)
		return -1;
	if (g.nframes > 0) /* (none: words may still be NULL) */
		memcpy(py->words + py->nwords, r, (size_t)g.nframes * 8);
	py->stack_off1[g.index] = py->nwords + 1;
	py->stack_n[g.index] = g.nframes;
	py->nwords += g.nframes;
	return 0;
}

uint32_t rd_python_stack_locations(struct reader *rd, uint64_t w, uint32_t *locs, uint32_t cap)
{
	struct rd_python *py = &rd->py;
	uint32_t idx = (uint32_t)w, n = 0;

	if (cap == 0)
		return 0;
	if (idx >= py->nstacks || !py->stack_off1[idx]) {
		/* as a frame whose code was not recorded */
		locs[0] = rd_python_location(rd, raw_py_word(RAW_PY_MAX_CODES, RAW_PY_NO_INSTR));
		return locs[0] == PV_NONE ? UINT32_MAX : 1;
	}
	for (uint32_t i = 0; i < py->stack_n[idx] && n < cap; i++) {
		locs[n] = rd_python_location(rd, py->words[py->stack_off1[idx] - 1 + i]);
		if (locs[n++] == PV_NONE)
			return UINT32_MAX;
	}
	return n;
}

/* Part index, NULL when it has no record. */
static const struct rd_python_part *part_get(const struct rd_python *py, uint32_t index)
{
	return index < py->npart_at && py->part_at[index] ? &py->parts[py->part_at[index] - 1] : NULL;
}

/* A new entry for part index (at most RAW_PY_MAX_PARTS, not known); NULL
 * when out of memory. */
static struct rd_python_part *part_new(struct rd_python *py, uint32_t index)
{
	if (index >= py->npart_at) {
		size_t n = index + 1 > py->npart_at * 2 ? index + 1 : py->npart_at * 2;
		uint32_t *o;

		/* (4 bytes an index, at most RAW_PY_MAX_PARTS of them) */
		if (pv_budget_charge((n - py->npart_at) * sizeof *o) < 0)
			return NULL;
		o = realloc(py->part_at, n * sizeof *o);
		if (!o) {
			pv_oom();
			return NULL;
		}
		memset(o + py->npart_at, 0, (n - py->npart_at) * sizeof *o);
		py->part_at = o;
		py->npart_at = n;
	}
	if (pv_grow(&py->parts, &py->cap_parts, py->nparts + 1, sizeof *py->parts) < 0)
		return NULL;
	py->part_at[index] = (uint32_t)++py->nparts;
	return &py->parts[py->nparts - 1];
}

/* The g.nwords frames of the part g at *r (before end) into words[0..)
 * and the ends of its calls into ends (*ne of them), *r past them: 0, or
 * -1 when they are not g.nwords whole frames. */
static int part_decode(const struct raw_pypart *g, const unsigned char **r,
		       const unsigned char *end, uint64_t *words, uint32_t *ends, uint32_t *ne)
{
	*ne = 0;
	for (uint32_t i = 0; i < g->nwords; i++) {
		uint32_t code, at;

		if (raw_varint_get32(r, end, &code) < 0 || raw_varint_get32(r, end, &at) < 0 ||
		    code > RAW_PY_MAX_CODES || (at >> 1) > RAW_PY_NO_INSTR)
			return -1;
		words[i] = raw_py_word(code, at >> 1);
		if (at & 1)
			ends[(*ne)++] = i + 1;
	}
	return 0;
}

/* Takes in the part g (its frames at *r, before end; *r past them; with
 * whole, they must end there), of the evaluation loop eval when it has no
 * parent: 0; 1 when it is malformed (said); -1 when out of memory. */
static int part_take(struct reader *rd, const struct raw_pypart *g, const uint64_t eval[2],
		     const unsigned char **r, const unsigned char *end, bool whole, size_t off)
{
	struct rd_python *py = &rd->py;
	uint32_t e = 0, ne;

	if (pv_grow(&py->words, &py->cap_words, py->nwords + g->nwords, sizeof *py->words) < 0 ||
	    pv_grow(&py->ends, &py->cap_ends, py->nends + g->nwords, sizeof *py->ends) < 0)
		return -1;
	if (g->nwords == 0 || g->nwords > RAW_PY_MAX_STACK || g->index == 0 ||
	    g->index > RAW_PY_MAX_PARTS - g->nwords + 1 ||
	    (g->parent >= g->index && g->parent - g->index < g->nwords) ||
	    part_decode(g, r, end, py->words + py->nwords, py->ends + py->nends, &ne) < 0 ||
	    (whole && *r != end)) {
		pv_warn("%s: Python stack part at byte %zu is malformed; ignored", rd->who, off);
		return 1;
	}
	/* the part, then the parts of its outer frames (those not known) */
	for (uint32_t j = 0; j < g->nwords; j++) {
		struct rd_python_part *t;

		if (part_get(py, g->index + j))
			continue;
		while (e < ne && py->ends[py->nends + e] <= j)
			e++;
		t = part_new(py, g->index + j);
		if (t == NULL)
			return -1;
		*t = (struct rd_python_part){ py->nwords + j + 1, py->nends + e, eval[0], eval[1],
					      g->nwords - j, ne - e, g->parent, j };
	}
	py->nwords += g->nwords;
	py->nends += ne;
	return 0;
}

int rd_python_part(struct reader *rd, const unsigned char *r, size_t off)
{
	struct raw_pypart g;
	uint64_t eval[2] = { 0, 0 };

	memcpy(&g, r, sizeof g);
	r += sizeof g;
	if (g.parent == 0) {
		memcpy(eval, r, sizeof eval);
		r += sizeof eval;
	}
	/* (raw-iter.c checked the counts against the size) */
	return part_take(rd, &g, eval, &r, r + g.len, true, off) < 0 ? -1 : 0;
}

int rd_python_parts(struct reader *rd, const unsigned char *r, uint32_t size, size_t off)
{
	const unsigned char *p = r + sizeof(struct raw_pyparts), *end = r + size;
	struct raw_pypart g = { .index = 0 };

	while (p < end && *p != 0) {
		uint64_t eval[2] = { 0, 0 };
		uint32_t di, par;
		int rc;

		if (raw_varint_get32(&p, end, &g.nwords) < 0 || raw_varint_get32(&p, end, &di) < 0 ||
		    raw_varint_get32(&p, end, &par) < 0 ||
		    (par == 0 && (raw_varint_get(&p, end, 10, &eval[0]) < 0 ||
				  raw_varint_get(&p, end, 10, &eval[1]) < 0))) {
			pv_warn("%s: Python stack part at byte %zu is malformed; the rest of its "
				"record ignored", rd->who, off + (size_t)(p - r));
			return 0;
		}
		g.index += di >> 1 ^ -(di & 1);
		g.parent = par == 0 ? 0 : g.index - ((par - 1) >> 1 ^ -((par - 1) & 1));
		eval[1] += eval[0];
		rc = part_take(rd, &g, eval, &p, end, false, off + (size_t)(p - r));
		if (rc != 0)
			return rc < 0 ? -1 : 0; /* (the rest: where it ends is not known) */
	}
	return 0;
}

/* The process's code of the run's code c, made after its own (once its
 * records are read) when it has none: RAW_PY_MAX_CODES when the run has
 * no such code or the process no index left (or out of memory, said). */
static uint32_t run_code_new(struct reader *rd, uint32_t c)
{
	struct rd_python *py = &rd->py;
	const struct rd_run_names *rn = rd->run_names;
	uint32_t index = py->run_next ? py->run_next : (uint32_t)(py->ncodes > 0 ? py->ncodes : 1);

	if (rn == NULL || c >= rn->py.ncodes || !rn->py.codes[c].function1 || !rn->py.codes[c].lines ||
	    index >= RAW_PY_MAX_CODES || run_code(rd, index, c, 0) <= 0)
		return RAW_PY_MAX_CODES;
	py->run_next = index + 1;
	return index;
}

/* The frame words w[0..n) of a run's part made the process's: each run
 * code the process's code that is it (its markers, code 0, as they are),
 * made when it has none (run_code_new). */
static void run_words(struct reader *rd, uint64_t *w, uint32_t n)
{
	const struct rd_python *py = &rd->py;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t c = raw_py_code(w[i]), pc;

		if (c == 0)
			continue;
		pc = c < py->nrun_inv && py->run_inv[c] ? py->run_inv[c] : run_code_new(rd, c);
		w[i] = raw_py_word(pc, raw_py_instr(w[i]));
	}
}

uint32_t rd_python_part_merge(struct reader *rd, uint32_t index, uint64_t *frames, uint32_t n,
			      uint32_t cap)
{
	const struct rd_python *py = &rd->py;
	uint64_t words[RAW_PY_MAX_STACK], lo = 0, hi = 0;
	uint32_t ends[RAW_PY_MAX_STACK + 1], nw = 0, ne = 0;
	bool run = false;

	/* from the part out through its parents (each at least one word:
	 * a loop of parents ends at RAW_PY_MAX_STACK words), into the run's
	 * parts at most once, whose parents are the run's */
	for (;;) {
		const struct rd_python_part *g;

		g = part_get(py, index);
		if (g && g->run1 && !run && rd->run_names) {
			lo = g->eval_lo;
			hi = g->eval_hi;
			run = true;
			py = &rd->run_names->py;
			g = part_get(py, index = g->run1 - 1);
		} else if (!g && !run && rd->py.run_direct && rd->run_names) {
			/* (a part of the run's named by the stack itself) */
			lo = rd->py.run_lo;
			hi = rd->py.run_hi;
			run = true;
			py = &rd->run_names->py;
			g = part_get(py, index);
		}
		if (!g || g->run1) {
			/* as a frame whose code was not recorded */
			if (nw < RAW_PY_MAX_STACK)
				words[nw++] = raw_py_word(RAW_PY_MAX_CODES, RAW_PY_NO_INSTR);
			break;
		}
		if (nw + g->n > RAW_PY_MAX_STACK)
			break;
		for (uint32_t i = 0; i < g->nends; i++)
			ends[ne++] = nw + py->ends[g->end_off + i] - g->shift;
		memcpy(words + nw, py->words + g->off1 - 1, (size_t)g->n * 8);
		if (run)
			run_words(rd, words + nw, g->n);
		nw += g->n;
		if (g->parent == 0) {
			if (!run) {
				lo = g->eval_lo;
				hi = g->eval_hi;
			}
			break;
		}
		index = g->parent;
	}
	if (ne == 0 || ends[ne - 1] != nw)
		ends[ne++] = nw;
	return raw_py_merge(frames, n, cap, words, nw, ends, ne, lo, hi);
}

void rd_python_free(struct rd_python *py)
{
	free(py->parts);
	free(py->part_at);
	free(py->ends);
	free(py->stack_off1);
	free(py->stack_n);
	free(py->words);
	for (size_t i = 0; i < py->ncodes; i++)
		free(py->codes[i].table);
	free(py->codes);
	free(py->run_inv);
}

struct rd_run_names *rd_run_names_read(const unsigned char *buf, size_t len, const char *who)
{
	struct reader rd = { .buf = buf, .len = len, .name = who };
	struct rd_run_names *n = calloc(1, sizeof(*n));
	size_t off = 0;

	if (n == NULL || (rd.p = pv_profile_new()) == NULL) {
		free(n);
		pv_oom();
		return NULL;
	}
	snprintf(rd.who, sizeof rd.who, "'%s': the run's Python names", who);
	while (len - off >= sizeof(struct raw_rec)) {
		struct raw_rec h;

		memcpy(&h, buf + off, sizeof h);
		if ((h.type != RAW_PYCODES && h.type != RAW_PYPARTS) || h.size < sizeof h ||
		    h.size % RAW_ALIGN != 0 || h.size > len - off) {
			pv_warn("%s: a record at byte %zu does not hold together; the rest ignored",
				rd.who, off);
			break;
		}
		if ((h.type == RAW_PYCODES ? rd_python_codes(&rd, buf + off, h.size, off)
					   : rd_python_parts(&rd, buf + off, h.size, off)) < 0) {
			n->py = rd.py;
			n->p = rd.p;
			rd_run_names_free(n);
			return NULL;
		}
		off += h.size;
	}
	n->py = rd.py;
	n->p = rd.p;
	return n;
}

void rd_run_names_free(struct rd_run_names *n)
{
	if (n == NULL)
		return;
	rd_python_free(&n->py);
	pv_profile_free(n->p);
	free(n);
}
