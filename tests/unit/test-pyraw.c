/* test-pyraw.c - Python frames in raw traces: the line tables, the code
 * records and frame words read, damaged ones (the interpreter's frames
 * folded out: test-pyfold.c) */
#include "check.h"
#include "error.h"
#include "merge.h"
#include "pyfold.h"
#include "raw-python.h"
#include "raw-read.h"
#include "rawbuild.h"

static int nwarnings;

static void sink(enum pv_level level, const char *msg)
{
	(void)msg;
	if (level == PV_LEVEL_WARNING)
		nwarnings++;
}

/* A location table written by hand from CPython's format
 * (Objects/locations.md): first line 10. */
static const unsigned char table[] = {
	0xe9, 0x02,             /* code 13, 2 units: line delta +1 (svarint 2) */
	0xd2, 0x00, 0x04,       /* code 10, 3 units: one line, delta 0, columns */
	0xd8, 0x00, 0x04,       /* code 11, 1 unit: delta +1 */
	0xf0, 0x05, 0x01, 0x01, 0x01, /* code 14, 1 unit: delta -2, end line, columns */
	0xf9,                   /* code 15, 2 units: no location */
	0x80, 0x03,             /* code 0, 1 unit: short form, same line */
	0xe8, 0x48, 0x03,       /* code 13, 1 unit: delta +100 (svarint 200, two bytes) */
};

static void test_lines(void)
{
	static const int64_t want[] = { 11, 11, 11, 11, 11, 12, 10, 0, 0, 10, 110, 0, 0 };

	for (uint32_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_EQ(pv_python_line(table, sizeof table, 10, i), want[i]);
	/* damaged: a byte that starts no entry, a varint cut short */
	static const unsigned char bad[] = { 0x12, 0x34 };
	CHECK_EQ(pv_python_line(bad, sizeof bad, 10, 0), 0);
	static const unsigned char cut[] = { 0xe8, 0x48 };
	CHECK(pv_python_line(cut, sizeof cut, 10, 0) >= 0);
	CHECK_EQ(pv_python_line(NULL, 0, 10, 0), 0);

	/* 3.10's co_linetable: (bytes, line delta) pairs, -128 no line */
	static const unsigned char t310[] = { 6, 1, 4, 0, 2, 0x80, 8, 2 };
	static const int64_t want310[] = { 11, 11, 11, 11, 11, 0, 13, 13, 13, 13, 0 };
	for (uint32_t i = 0; i < sizeof(want310) / sizeof(want310[0]); i++)
		CHECK_EQ(pv_python_line_310(t310, sizeof t310, 10, i), want310[i]);
	/* 3.9's co_lnotab: (byte increment, line increment) pairs */
	static const unsigned char t39[] = { 4, 1, 6, 2, 0, 0xff };
	static const int64_t want39[] = { 10, 10, 11, 11, 11, 12, 12 };
	for (uint32_t i = 0; i < sizeof(want39) / sizeof(want39[0]); i++)
		CHECK_EQ(pv_python_line_39(t39, sizeof t39, 10, i), want39[i]);
}

static void rb_pycode(struct rawbuf *r, uint32_t index, int32_t first, const char *name,
		      const char *file, const unsigned char *t, uint32_t tlen)
{
	struct raw_pycode c = { 0 };
	size_t start = r->len;

	c.h.type = RAW_PYCODE;
	c.index = index;
	c.first_line = first;
	c.version = 0x030b;
	c.name_len = (uint32_t)strlen(name);
	c.file_len = (uint32_t)strlen(file);
	c.table_len = tlen;
	c.h.size = (uint32_t)(sizeof c + c.name_len + c.file_len + tlen + 7) & ~7u;
	rb_put(r, &c, sizeof c);
	rb_put(r, name, c.name_len);
	rb_put(r, file, c.file_len);
	rb_put(r, t, tlen);
	rb_zero(r, start + c.h.size - r->len);
}

static const char *fn_name(const struct pv_profile *p, uint32_t loc)
{
	const struct pv_location *l = &p->locations[loc];

	return l->nlines ? pv_str(p, p->functions[pv_location_lines(p, l)[0].function].name) : "";
}

static void test_records(void)
{
	struct rawbuf r = { 0 };
	const uint64_t frames[] = { raw_py_word(1, 6), raw_py_word(2, RAW_PY_NO_INSTR),
				    raw_py_word(7, 0), raw_py_word(0, RAW_PY_STOP_CODE), 0x401010 };
	struct pv_profile *p;

	rb_header(&r, "/nonexistent/python", 10000000);
	rb_mapping(&r, 0x400000, 0x500000, 0, "/nonexistent/python");
	rb_thread(&r, 100, "main");
	rb_pycode(&r, 1, 10, "Parser.parse", "/x.py", table, sizeof table);
	rb_pycode(&r, 2, 3, "\x1b[2Jevil", "/y.py", NULL, 0);
	rb_pycode(&r, 2, 4, "again", "/z.py", NULL, 0);  /* twice: the first kept */
	rb_pycode(&r, 0, 4, "zero", "/z.py", NULL, 0);   /* index 0: skipped */
	rb_stack(&r, 1, frames, 5);
	rb_sample(&r, 100, 1, NULL, 0, 1000, 4000000);
	rb_end(&r, 2000, 1, 0);
	nwarnings = 0;
	p = raw_read(r.b, r.len, "t", NULL);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(nwarnings, 2);
	CHECK_EQ(p->nsamples, 1);
	const uint32_t *locs = p->stack_locs + p->samples[0].loc_off;
	CHECK_EQ(p->samples[0].nlocs, 5);
	CHECK(pv_location_is_python(p, locs[0]));
	CHECK_STR(fn_name(p, locs[0]), "Parser.parse");
	const struct pv_line *ln = pv_location_lines(p, &p->locations[locs[0]]);
	CHECK_EQ(ln[0].line, 10); /* unit 6 */
	CHECK_STR(pv_str(p, p->functions[ln[0].function].filename), "/x.py");
	CHECK_EQ(p->functions[ln[0].function].start_line, 10);
	CHECK_STR(fn_name(p, locs[1]), "\x1b[2Jevil"); /* data: the reports escape it */
	CHECK_EQ(pv_location_lines(p, &p->locations[locs[1]])[0].line, 0);
	CHECK_STR(fn_name(p, locs[2]), "[python: code not recorded]");
	CHECK_STR(fn_name(p, locs[3]), "[python: frame without code]");
	CHECK(!pv_location_is_python(p, locs[4]));
	CHECK_EQ(p->locations[locs[4]].nlines, 0);
	CHECK_EQ(pv_profile_check_indices(p, "t"), 0);
	pv_profile_free(p);

	/* cut in the middle of a code record: read up to the record before */
	size_t whole = r.len;
	r.len = 0;
	rb_header(&r, "/nonexistent/python", 10000000);
	rb_thread(&r, 100, "main");
	rb_stack(&r, 1, frames, 5);
	rb_sample(&r, 100, 1, NULL, 0, 1000, 4000000);
	size_t before = r.len;
	rb_pycode(&r, 1, 10, "Parser.parse", "/x.py", table, sizeof table);
	r.len = before + 20;
	p = raw_read(r.b, r.len, "t", NULL);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 1);
		CHECK_STR(fn_name(p, p->stack_locs[p->samples[0].loc_off]),
			  "[python: code not recorded]");
		pv_profile_free(p);
	}
	(void)whole;
	free(r.b);
}

static void rb_pystack(struct rawbuf *r, uint32_t index, const uint64_t *w, uint32_t n)
{
	struct raw_pystack g = { { RAW_PYSTACK, (uint32_t)(sizeof g + 8 * n) }, index, n };

	rb_put(r, &g, sizeof g);
	rb_put(r, w, 8 * n);
}

static void test_pystacks(void)
{
	struct rawbuf r = { 0 };
	const uint64_t group[] = { raw_py_word(1, 6), raw_py_word(2, RAW_PY_NO_INSTR) };
	const uint64_t bad[] = { raw_py_word(1, 6), 0x401010 }; /* not all Python frames */
	const uint64_t frames[] = { 0x401010, raw_pystack_word(5), raw_pystack_word(9),
				    raw_pystack_word(6), 0x402020 };
	struct pv_profile *p;

	rb_header(&r, "/nonexistent/python", 10000000);
	rb_mapping(&r, 0x400000, 0x500000, 0, "/nonexistent/python");
	rb_thread(&r, 100, "main");
	rb_stack(&r, 1, frames, 5); /* before the records it names */
	rb_pycode(&r, 1, 10, "Parser.parse", "/x.py", table, sizeof table);
	rb_pycode(&r, 2, 3, "outer", "/y.py", NULL, 0);
	rb_pystack(&r, 5, group, 2);
	rb_pystack(&r, 6, bad, 2);
	rb_sample(&r, 100, 1, NULL, 0, 1000, 4000000);
	rb_end(&r, 2000, 1, 0);
	nwarnings = 0;
	p = raw_read(r.b, r.len, "t", NULL);
	CHECK(p != NULL);
	if (p) {
		const uint32_t *locs = p->stack_locs + p->samples[0].loc_off;

		CHECK_EQ(nwarnings, 1);
		CHECK_EQ(p->samples[0].nlocs, 6);
		CHECK_STR(fn_name(p, locs[1]), "Parser.parse");
		CHECK_EQ(pv_location_lines(p, &p->locations[locs[1]])[0].line, 10);
		CHECK_STR(fn_name(p, locs[2]), "outer");
		CHECK_STR(fn_name(p, locs[3]), "[python: code not recorded]");
		CHECK_STR(fn_name(p, locs[4]), "[python: code not recorded]");
		CHECK(!pv_location_is_python(p, locs[5]));
		CHECK_EQ(pv_profile_check_indices(p, "t"), 0);
		pv_profile_free(p);
	}
	free(r.b);
}

/* A RAW_PYPART of the frames w[0..n) (their codes and instructions),
 * frame i ending a call where end[i] says; its len bytes (0: as many as
 * the frames take; else that many, cut or padded with 0). */
static void rb_pypart(struct rawbuf *r, uint32_t index, uint32_t parent, const uint64_t *w,
		      uint32_t n, const uint8_t *end, uint32_t len)
{
	unsigned char b[64 * 8];
	uint32_t k = 0;
	const uint64_t eval[2] = { 0x401100, 0x401200 };

	for (uint32_t i = 0; i < n; i++) {
		uint32_t v[2] = { raw_py_code(w[i]), raw_py_instr(w[i]) << 1 | end[i] };

		for (int j = 0; j < 2; j++) {
			do {
				b[k++] = (unsigned char)((v[j] & 0x7f) | (v[j] > 0x7f ? 0x80 : 0));
				v[j] >>= 7;
			} while (v[j]);
		}
	}
	if (len == 0)
		len = k;
	while (k < len)
		b[k++] = 0;
	uint32_t size = (uint32_t)sizeof(struct raw_pypart) + (parent ? 0 : 16) + len;
	struct raw_pypart g = { { RAW_PYPART, raw_pad(size) }, index, parent, n, len };

	rb_put(r, &g, sizeof g);
	if (!parent)
		rb_put(r, eval, sizeof eval);
	rb_put(r, b, len);
	rb_zero(r, raw_pad(size) - size);
}

static void rb_varint(unsigned char *b, uint32_t *k, uint64_t v)
{
	do {
		b[(*k)++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

/* A part of a RAW_PYPARTS record, as rb_pypart's. */
struct rb_part {
	uint32_t index, parent;
	const uint64_t *w;
	uint32_t n;
	const uint8_t *end;
};

/* A RAW_PYPARTS record of the parts g[0..n) (raw.h, encoded by hand). */
static void rb_pyparts(struct rawbuf *r, const struct rb_part *g, uint32_t n)
{
	unsigned char b[1024];
	uint32_t k = 0, last = 0;

	for (uint32_t i = 0; i < n; i++) {
		int64_t d = (int64_t)g[i].index - last, dp = (int64_t)g[i].index - g[i].parent;

		rb_varint(b, &k, g[i].n);
		rb_varint(b, &k, d < 0 ? ((uint64_t)-d << 1) - 1 : (uint64_t)d << 1);
		rb_varint(b, &k, g[i].parent == 0 ? 0 : (dp < 0 ? ((uint64_t)-dp << 1) - 1 : (uint64_t)dp << 1) + 1);
		if (g[i].parent == 0) {
			rb_varint(b, &k, 0x401100);
			rb_varint(b, &k, 0x100);
		}
		for (uint32_t j = 0; j < g[i].n; j++) {
			rb_varint(b, &k, raw_py_code(g[i].w[j]));
			rb_varint(b, &k, (uint64_t)raw_py_instr(g[i].w[j]) << 1 | g[i].end[j]);
		}
		last = g[i].index;
	}
	struct raw_pyparts h = { { RAW_PYPARTS, (uint32_t)sizeof h + raw_pad(k) } };

	rb_put(r, &h, sizeof h);
	rb_put(r, b, k);
	rb_zero(r, raw_pad(k) - k);
}

/* Stacks whose Python frames are parts: a part, the parts of its outer
 * frames it names, a part that continues its parent's innermost call, a
 * part not recorded, damaged parts; as RAW_PYPART records (older
 * collectors') or packed (RAW_PYPARTS, several to a record). */
/* With refs, stacks 2 to 5 are RAW_STACK_PYREF records naming stack 1,
 * read as the same stacks, and three that name no stack of native frames
 * before them (none, a reference, a later one) are left out, with a
 * warning each. */
static void test_pyparts(bool packed, bool refs)
{
	struct rawbuf r = { 0 };
	/* a C function (leaf), the evaluation loop, main */
	const uint64_t native[] = { 0x401010, 0x401101, 0x402020 };
	const uint64_t root[] = { raw_py_word(1, 6), raw_py_word(2, 0), raw_py_word(1, 0) };
	const uint64_t child[] = { raw_py_word(2, 0) }, far[] = { raw_py_word(2, 300) };
	const uint8_t root_ends[] = { 1, 0, 1 }, child_ends[] = { 1 }, open_end[] = { 0 };
	struct pv_profile *p;

	rb_header(&r, "/nonexistent/python", 10000000);
	rb_mapping(&r, 0x400000, 0x500000, 0, "/nonexistent/python");
	rb_thread(&r, 100, "main");
	/* before the parts they name */
	rb_stack_py(&r, 1, 7, native, 3);
	if (refs) {
		rb_stack_pyref(&r, 2, 8, 1);
		rb_stack_pyref(&r, 3, 20, 1);
		rb_stack_pyref(&r, 4, 30, 1);
		rb_stack_pyref(&r, 5, 21, 1);
		rb_stack_pyref(&r, 6, 21, 99);
		rb_stack_pyref(&r, 7, 21, 2);
		rb_stack_pyref(&r, 8, 21, 9);
		rb_stack_py(&r, 9, 7, native, 3);
	} else {
		rb_stack_py(&r, 2, 8, native, 3);
		rb_stack_py(&r, 3, 20, native, 3);
		rb_stack_py(&r, 4, 30, native, 3);
		rb_stack_py(&r, 5, 21, native, 3);
	}
	rb_pycode(&r, 1, 10, "Parser.parse", "/x.py", table, sizeof table);
	rb_pycode(&r, 2, 3, "outer", "/y.py", NULL, 0);
	/* 7: parse, then (another call) outer and parse; 8: from outer on,
	 * 9: the last parse */
	if (packed) {
		const struct rb_part three[] = { { 7, 0, root, 3, root_ends },
						 { 20, 9, child, 1, child_ends },
						 { 21, 9, child, 1, open_end } };
		const struct rb_part again = { 7, 0, child, 1, child_ends };
		const struct rb_part high = { RAW_PY_MAX_PARTS - 1, 0, root, 3, root_ends };
		const struct rb_part own = { 42, 43, root, 3, root_ends };

		rb_pyparts(&r, three, 3);
		rb_pyparts(&r, &again, 1);
		rb_pyparts(&r, &high, 1);
		rb_pyparts(&r, &own, 1);
	} else {
		rb_pypart(&r, 7, 0, root, 3, root_ends, 0);
		/* 20: outer, its call ending there, then 9's; 21: outer, its
		 * call going on into 9's */
		rb_pypart(&r, 20, 9, child, 1, child_ends, 0);
		rb_pypart(&r, 21, 9, child, 1, open_end, 0);
		rb_pypart(&r, 7, 0, child, 1, child_ends, 0); /* repeated: the first kept */
		rb_pypart(&r, 40, 0, far, 1, child_ends, 2);  /* cut short */
		rb_pypart(&r, 41, 0, child, 1, child_ends, 4); /* bytes after its frames */
		rb_pypart(&r, RAW_PY_MAX_PARTS - 1, 0, root, 3, root_ends, 0); /* too high */
		rb_pypart(&r, 42, 43, root, 3, root_ends, 0); /* its own parent */
	}
	for (uint32_t id = 1; id <= 5; id++)
		rb_sample(&r, 100, id, NULL, 0, 1000 + id, 4000000);
	rb_end(&r, 2000, 5, 0);
	nwarnings = 0;
	p = raw_read(r.b, r.len, "t", NULL);
	CHECK(p != NULL);
	if (!p) {
		free(r.b);
		return;
	}
	CHECK_EQ(nwarnings, (packed ? 2 : 4) + (refs ? 3 : 0));
	CHECK_EQ(p->nsamples, 5);
	if (p->nsamples != 5) {
		pv_profile_free(p);
		free(r.b);
		return;
	}
	const uint32_t *l1 = p->stack_locs + p->samples[0].loc_off;
	const uint32_t *l2 = p->stack_locs + p->samples[1].loc_off;
	const uint32_t *l3 = p->stack_locs + p->samples[2].loc_off;
	const uint32_t *l4 = p->stack_locs + p->samples[3].loc_off;
	const uint32_t *l5 = p->stack_locs + p->samples[4].loc_off;

	/* the innermost call before the loop's frame, the outer at the root
	 * (the one loop the native walk saw takes the last call) */
	CHECK_EQ(p->samples[0].nlocs, 6);
	CHECK(!pv_location_is_python(p, l1[0]));
	CHECK_STR(fn_name(p, l1[1]), "Parser.parse");
	CHECK_EQ(pv_location_lines(p, &p->locations[l1[1]])[0].line, 10); /* (table: instr 6) */
	CHECK_STR(fn_name(p, l1[2]), "outer");
	CHECK_STR(fn_name(p, l1[3]), "Parser.parse");
	CHECK_EQ(pv_location_lines(p, &p->locations[l1[3]])[0].line, 11);
	CHECK(!pv_location_is_python(p, l1[4]));
	CHECK(!pv_location_is_python(p, l1[5]));
	CHECK_EQ(p->samples[1].nlocs, 5);
	CHECK_STR(fn_name(p, l2[1]), "outer");
	CHECK_STR(fn_name(p, l2[2]), "Parser.parse");
	CHECK_EQ(p->samples[2].nlocs, 5);
	CHECK_STR(fn_name(p, l3[1]), "outer");
	CHECK_STR(fn_name(p, l3[2]), "Parser.parse");
	CHECK(!pv_location_is_python(p, l3[3]));
	CHECK_EQ(p->samples[3].nlocs, 4);
	CHECK(!pv_location_is_python(p, l4[2]));
	CHECK_STR(fn_name(p, l4[3]), "[python: code not recorded]");
	CHECK_EQ(p->samples[4].nlocs, 5);
	CHECK_STR(fn_name(p, l5[1]), "outer");
	CHECK_STR(fn_name(p, l5[2]), "Parser.parse");
	CHECK_EQ(pv_profile_check_indices(p, "t"), 0);
	pv_profile_free(p);
	if (packed && !refs && getenv("PYRAW_SEED") && strcmp(getenv("PYRAW_SEED"), "pyparts") == 0)
		fwrite(r.b, 1, r.len, stdout); /* the raw fuzzer's seed python-pyparts */
	if (packed && refs && getenv("PYRAW_SEED") && strcmp(getenv("PYRAW_SEED"), "pyrefs") == 0)
		fwrite(r.b, 1, r.len, stdout); /* the raw fuzzer's seed python-pyrefs */
	free(r.b);
}

/* A location of function name in mapping m. */
/* RAW_PYCODE_COMPACT's runs, written by hand from raw.h: first line 10. */
static const unsigned char compact[] = {
	3, 2 << 1,              /* 3 units, delta +1: line 11 */
	2, 1,                   /* 2 units, no line */
	130, 1, 3 << 1,         /* 130 units (two bytes), delta -2: line 9 */
	1, 200, 1,              /* 1 unit, delta +50 (zigzag 100 << 1: two bytes) */
};

static void test_compact(void)
{
	static const struct { uint32_t instr; int64_t line; } want[] = {
		{ 0, 11 }, { 2, 11 }, { 3, 0 }, { 4, 0 }, { 5, 9 }, { 134, 9 }, { 135, 59 }, { 136, 0 },
		{ 100000, 0 },
	};
	/* 0 units: every later instruction; a line at or below 0 is none */
	static const unsigned char rest[] = { 2, 0, 0, 2 << 1 }, neg[] = { 1, 19 << 1 };

	for (uint32_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_EQ(pv_python_line_compact(compact, sizeof compact, 10, want[i].instr), want[i].line);
	CHECK_EQ(pv_python_line_compact(rest, sizeof rest, 10, 1), 10);
	CHECK_EQ(pv_python_line_compact(rest, sizeof rest, 10, 1000000), 11);
	CHECK_EQ(pv_python_line_compact(neg, sizeof neg, 10, 0), 0);
	CHECK_EQ(pv_python_line_compact(NULL, 0, 10, 0), 0);
	static const unsigned char cut[] = { 0x80 }; /* a varint cut short */
	CHECK_EQ(pv_python_line_compact(cut, sizeof cut, 10, 0), 0);

	/* records: a compact table, a file named by an earlier code's index,
	 * and one naming a code not read before */
	struct rawbuf r = { 0 };
	const uint64_t frames[] = { raw_py_word(1, 135), raw_py_word(2, 0), raw_py_word(3, 0), 0x401010 };
	uint32_t ref = 1, bad = 9;
	struct pv_profile *p;

	rb_header(&r, "/nonexistent/python", 10000000);
	rb_mapping(&r, 0x400000, 0x500000, 0, "/nonexistent/python");
	rb_thread(&r, 100, "main");
	rb_pycode(&r, 1, 10, "outer", "/a.py", compact, sizeof compact);
	rb_pycode(&r, 2, 20, "inner", "....", NULL, 0); /* room for the reference */
	rb_pycode(&r, 3, 30, "other", "....", NULL, 0);
	rb_stack(&r, 1, frames, 4);
	rb_sample(&r, 100, 1, NULL, 0, 1000, 4000000);
	rb_end(&r, 2000, 1, 0);
	/* flags and the 4-byte file references set in place */
	for (size_t off = 0, i = 0; off + sizeof(struct raw_pycode) <= r.len; off += 8) {
		struct raw_pycode c;

		memcpy(&c, r.b + off, sizeof c);
		if (c.h.type != RAW_PYCODE || c.index != i + 1 || c.version != 0x030b)
			continue;
		c.version |= i == 0 ? RAW_PYCODE_COMPACT : RAW_PYCODE_FILE_REF;
		if (i > 0) {
			c.file_len = 4;
			memcpy(r.b + off + sizeof c + c.name_len, i == 1 ? &ref : &bad, 4);
		}
		memcpy(r.b + off, &c, sizeof c);
		i++;
	}
	nwarnings = 0;
	p = raw_read(r.b, r.len, "t", NULL);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(nwarnings, 1); /* code 3's file */
	CHECK_EQ(p->nsamples, 1);
	if (p->nsamples != 1)
		return;
	const uint32_t *locs = p->stack_locs + p->samples[0].loc_off;
	const struct pv_line *ln = pv_location_lines(p, &p->locations[locs[0]]);
	CHECK_EQ(ln[0].line, 59);
	CHECK_STR(pv_str(p, p->functions[ln[0].function].filename), "/a.py");
	ln = pv_location_lines(p, &p->locations[locs[1]]);
	CHECK_STR(pv_str(p, p->functions[ln[0].function].name), "inner");
	CHECK_STR(pv_str(p, p->functions[ln[0].function].filename), "/a.py");
	ln = pv_location_lines(p, &p->locations[locs[2]]);
	CHECK_STR(pv_str(p, p->functions[ln[0].function].filename), "");
	pv_profile_free(p);
	if (getenv("PYRAW_SEED") && strcmp(getenv("PYRAW_SEED"), "pycode-compact") == 0)
		/* the trace, as the raw fuzzer's seed pycode-compact */
		fwrite(r.b, 1, r.len, stdout);
	free(r.b);
}

/* A RAW_PYCODES record of the entries e[0..n) (LEB128 bytes, as raw.h
 * says: each index zigzag-encoded from the one before). */
static void rb_pycodes(struct rawbuf *r, const unsigned char *e, uint32_t n)
{
	struct raw_pycodes c = { { RAW_PYCODES, (uint32_t)sizeof c + raw_pad(n) } };
	size_t start = r->len;

	rb_put(r, &c, sizeof c);
	rb_put(r, e, n);
	rb_zero(r, start + c.h.size - r->len);
}

static const struct pv_line *line_of(const struct pv_profile *p, uint32_t loc)
{
	return pv_location_lines(p, &p->locations[loc]);
}

static const char *file_of(const struct pv_profile *p, uint32_t loc)
{
	return pv_str(p, p->functions[line_of(p, loc)[0].function].filename);
}

/* Code objects packed: strings by text, by number and by their beginning,
 * lines in the frame words; damaged entries. */
static void test_codes(void)
{
	/* code 1: "Parser.parse" in "/lib/json/decoder.py", first line 10;
	 * code 2: string 2's first 7 bytes + "feed", string 3, line 20;
	 * code 3: string 2, string 3's first 10 bytes + "x.py", line -1;
	 * code 4: string 99 (not written) and string 9 (its own: not yet) */
	static const unsigned char e1[] = {
		2 /* 1 */, 20, 12 << 2, 'P', 'a', 'r', 's', 'e', 'r', '.', 'p', 'a', 'r', 's', 'e',
		20 << 2, '/', 'l', 'i', 'b', '/', 'j', 's', 'o', 'n', '/', 'd', 'e', 'c', 'o', 'd', 'e', 'r', '.', 'p', 'y',
		2 /* 2 */, 40, 2 << 2 | 2, 7, 4, 'f', 'e', 'e', 'd', 3 << 2 | 1,
	};
	static const unsigned char e2[] = {
		6 /* 3 */, 1, 2 << 2 | 1, 3 << 2 | 2, 10, 4, 'x', '.', 'p', 'y',
		2 /* 4 */, 2, 0x8d, 0x03 /* 99 << 2 | 1 */, 9 << 2 | 1,
		5 /* 1 */, 2, 5 << 2, 'a', 'g', 'a', 'i', 'n', 0, /* code 1 again: the first kept */
		8 /* 5 */, 2, 40 << 2, 'c', 'u', 't', /* cut short: the rest ignored */
	};
	struct rawbuf r = { 0 };
	const uint64_t frames[] = { raw_py_word(1, 42), raw_py_word(2, 0), raw_py_word(3, RAW_PY_NO_INSTR),
				    raw_py_word(4, 7), raw_py_word(5, 7), 0x401010 };
	struct pv_profile *p;

	rb_header(&r, "/nonexistent/python", 10000000);
	rb_mapping(&r, 0x400000, 0x500000, 0, "/nonexistent/python");
	rb_thread(&r, 100, "main");
	rb_pycodes(&r, e1, sizeof e1);
	rb_pycodes(&r, e2, sizeof e2);
	rb_stack(&r, 1, frames, 6);
	rb_sample(&r, 100, 1, NULL, 0, 1000, 4000000);
	rb_end(&r, 2000, 1, 0);
	nwarnings = 0;
	p = raw_read(r.b, r.len, "t", NULL);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(nwarnings, 4); /* strings 99 and 9, code 1 twice, the cut entry */
	CHECK_EQ(p->nsamples, 1);
	if (p->nsamples == 1) {
		const uint32_t *locs = p->stack_locs + p->samples[0].loc_off;

		CHECK_STR(fn_name(p, locs[0]), "Parser.parse");
		CHECK_EQ(line_of(p, locs[0])[0].line, 42);
		CHECK_STR(file_of(p, locs[0]), "/lib/json/decoder.py");
		CHECK_EQ(p->functions[line_of(p, locs[0])[0].function].start_line, 10);
		CHECK_STR(fn_name(p, locs[1]), "Parser.feed");
		CHECK_EQ(line_of(p, locs[1])[0].line, 0);
		CHECK_STR(file_of(p, locs[1]), "/lib/json/decoder.py");
		CHECK_STR(fn_name(p, locs[2]), "Parser.parse");
		CHECK_EQ(line_of(p, locs[2])[0].line, 0);
		CHECK_STR(file_of(p, locs[2]), "/lib/json/x.py");
		CHECK_EQ(p->functions[line_of(p, locs[2])[0].function].start_line, -1);
		CHECK_STR(fn_name(p, locs[3]), "");
		CHECK_STR(file_of(p, locs[3]), "");
		CHECK_EQ(line_of(p, locs[3])[0].line, 7);
		CHECK_STR(fn_name(p, locs[4]), "[python: code not recorded]");
	}
	CHECK_EQ(pv_profile_check_indices(p, "t"), 0);
	pv_profile_free(p);
	if (getenv("PYRAW_SEED") && strcmp(getenv("PYRAW_SEED"), "pycodes") == 0)
		fwrite(r.b, 1, r.len, stdout); /* the raw fuzzer's seed pycodes */

	/* cut in the middle of the second record (as a trace being written,
	 * or of a process killed): the first one's codes read */
	r.len = 0;
	rb_header(&r, "/nonexistent/python", 10000000);
	rb_mapping(&r, 0x400000, 0x500000, 0, "/nonexistent/python");
	rb_thread(&r, 100, "main");
	rb_stack(&r, 1, frames, 6);
	rb_sample(&r, 100, 1, NULL, 0, 1000, 4000000);
	rb_pycodes(&r, e1, sizeof e1);
	size_t before = r.len;
	rb_pycodes(&r, e2, sizeof e2);
	r.len = before + 12;
	nwarnings = 0;
	p = raw_read(r.b, r.len, "t", NULL);
	CHECK(p != NULL);
	if (p && p->nsamples == 1) {
		const uint32_t *locs = p->stack_locs + p->samples[0].loc_off;

		CHECK_STR(fn_name(p, locs[1]), "Parser.feed");
		CHECK_EQ(line_of(p, locs[0])[0].line, 42);
		CHECK_STR(fn_name(p, locs[2]), "[python: code not recorded]");
	}
	if (p)
		pv_profile_free(p);
	free(r.b);
}

/* A run of one process whose codes are the run's names (raw.h): run code
 * 1 "Parser.parse" in "/lib/json/decoder.py" (first line 10), 2
 * "Parser.feed" (string 2's beginning) in string 3, first line 20; the
 * process's codes 1 and 2 the run's 1 and 2, its code 3 the run's 9
 * (which it does not have: a warning), and, with names, its code 4 written
 * by a RAW_PYCODES record of its own. */
static void rb_run_names(struct rawbuf *r, bool names)
{
	static const unsigned char run[] = {
		2 /* 1 */, 20, 12 << 2, 'P', 'a', 'r', 's', 'e', 'r', '.', 'p', 'a', 'r', 's', 'e',
		20 << 2, '/', 'l', 'i', 'b', '/', 'j', 's', 'o', 'n', '/', 'd', 'e', 'c', 'o', 'd', 'e', 'r', '.', 'p', 'y',
		2 /* 2 */, 40, 2 << 2 | 2, 7, 4, 'f', 'e', 'e', 'd', 3 << 2 | 1,
	};
	static const unsigned char own[] = { 8 /* 4 */, 2, 3 << 2, 'o', 'w', 'n', 1 << 2, 'f' };
	/* codes 1-2 are the run's 1-2; code 3 the run's 9 */
	static const unsigned char ranges[] = { 2, 2 /* 1 */, 2 /* 1 */, 1, 0 /* 3 */, 12 /* 9 */ };
	const uint64_t frames[] = { raw_py_word(1, 42), raw_py_word(2, 7), raw_py_word(4, 3),
				    raw_py_word(3, 5), 0x401010 };
	struct raw_pyruncodes rc = { { RAW_PYRUNCODES, (uint32_t)(sizeof rc + raw_pad(sizeof ranges)) } };
	struct raw_run_part part = { .offset = 0, .pid = 4242, .flags = RAW_RUN_ROOT };
	struct raw_run_footer f = { 0 };
	struct raw_run_pynames t = { 0 };
	size_t at;

	rb_header(r, "/nonexistent/python", 10000000);
	rb_mapping(r, 0x400000, 0x500000, 0, "/nonexistent/python");
	rb_thread(r, 100, "main");
	at = r->len;
	rb_put(r, &rc, sizeof rc);
	rb_put(r, ranges, sizeof ranges);
	rb_zero(r, at + rc.h.size - r->len);
	if (names)
		rb_pycodes(r, own, sizeof own);
	rb_stack(r, 1, frames, 5);
	rb_sample(r, 100, 1, NULL, 0, 1000, 4000000);
	rb_end(r, 2000, 1, 0);
	part.length = r->len;
	rb_zero(r, raw_pad((uint32_t)r->len) - r->len);
	if (names) {
		at = r->len;
		rb_pycodes(r, run, sizeof run);
		t.size = r->len - at;
		memcpy(t.magic, RAW_RUN_PYNAMES_MAGIC, RAW_MAGIC_LEN);
		rb_put(r, &t, sizeof t);
	}
	f.index_offset = r->len;
	rb_put(r, &part, sizeof part);
	f.nparts = 1;
	f.nprocesses = 1;
	memcpy(f.magic, RAW_RUN_MAGIC, RAW_MAGIC_LEN);
	rb_put(r, &f, sizeof f);
}

/* The codes of a process of a run named from the run's names: names,
 * first lines and the lines of the frame words; a code the run's names
 * do not have, and a run without them. */
static void test_run_names(void)
{
	struct rawbuf r = { 0 };
	struct pv_profile *p;

	rb_run_names(&r, true);
	nwarnings = 0;
	p = raw_read_run(r.b, r.len, "t", NULL, false);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(nwarnings, 1); /* the run's code 9 */
	CHECK_EQ(p->nsamples, 1);
	if (p->nsamples == 1) {
		const uint32_t *locs = p->stack_locs + p->samples[0].loc_off;

		CHECK_STR(fn_name(p, locs[0]), "Parser.parse");
		CHECK_EQ(line_of(p, locs[0])[0].line, 42);
		CHECK_STR(file_of(p, locs[0]), "/lib/json/decoder.py");
		CHECK_EQ(p->functions[line_of(p, locs[0])[0].function].start_line, 10);
		CHECK_STR(fn_name(p, locs[1]), "Parser.feed");
		CHECK_EQ(line_of(p, locs[1])[0].line, 7);
		CHECK_STR(file_of(p, locs[1]), "/lib/json/decoder.py");
		CHECK_EQ(p->functions[line_of(p, locs[1])[0].function].start_line, 20);
		CHECK_STR(fn_name(p, locs[2]), "own");
		CHECK_STR(file_of(p, locs[2]), "f");
		CHECK_STR(fn_name(p, locs[3]), "[python: code not recorded]");
	}
	CHECK_EQ(pv_profile_check_indices(p, "t"), 0);
	pv_profile_free(p);
	if (getenv("PYRAW_SEED") && strcmp(getenv("PYRAW_SEED"), "pynames") == 0)
		fwrite(r.b, 1, r.len, stdout); /* the raw fuzzer's seed run-pynames */

	/* no run's names: the codes named from them are not recorded */
	r.len = 0;
	rb_run_names(&r, false);
	nwarnings = 0;
	p = raw_read_run(r.b, r.len, "t", NULL, false);
	CHECK(p != NULL);
	CHECK_EQ(nwarnings, 1); /* (the first range: the rest of the record ignored) */
	if (p && p->nsamples == 1) {
		const uint32_t *locs = p->stack_locs + p->samples[0].loc_off;

		CHECK_STR(fn_name(p, locs[0]), "[python: code not recorded]");
	}
	if (p)
		pv_profile_free(p);
	free(r.b);
}

/* Entries that each take a long name written before: what they take is
 * bounded by a multiple of the records' size, with one warning. */
static void test_codes_bound(void)
{
	enum { N = 4000, LONG = 1000 };
	unsigned char *e = malloc(N * 8 + LONG + 16);
	struct rawbuf r = { 0 };
	struct pv_profile *p;
	uint32_t n = 0;

	if (e == NULL)
		return;
	e[n++] = 2; /* code 1 */
	e[n++] = 0;
	e[n++] = ((LONG << 2) & 0x7f) | 0x80;
	e[n++] = (LONG << 2) >> 7;
	memset(e + n, 'a', LONG);
	n += LONG;
	e[n++] = 0; /* no file */
	for (uint32_t i = 2; i <= N; i++) {
		e[n++] = 2; /* the next code */
		e[n++] = 0;
		e[n++] = 2 << 2 | 2; /* code 1's name: all of it, and one byte */
		e[n++] = (LONG & 0x7f) | 0x80;
		e[n++] = LONG >> 7;
		e[n++] = 1;
		e[n++] = (unsigned char)('0' + i % 64);
		e[n++] = 3 << 2 | 1;
	}
	rb_header(&r, "/nonexistent/python", 10000000);
	rb_pycodes(&r, e, n);
	rb_end(&r, 2000, 0, 0);
	nwarnings = 0;
	p = raw_read(r.b, r.len, "t", NULL);
	CHECK(p != NULL);
	CHECK_EQ(nwarnings, 1);
	if (p) {
		size_t bytes = 0;

		for (uint32_t i = 0; i < p->strings.n; i++)
			bytes += strlen(pv_str(p, i));
		CHECK(bytes <= 64 * (size_t)r.len + 65536 + 2 * N);
		pv_profile_free(p);
	}
	free(e);
	free(r.b);
}

int main(void)
{
	pv_error_set_sink(sink);
	test_lines();
	test_records();
	test_compact();
	test_codes();
	test_codes_bound();
	test_run_names();
	test_pystacks();
	test_pyparts(false, false);
	test_pyparts(true, false);
	test_pyparts(true, true);
	return check_done("test-pyraw");
}
