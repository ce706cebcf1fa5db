/* test-pynames.c - a run's Python names and parts (raw.h,
 * RAW_RUN_PYNAMES_MAGIC): a run built by hand read (the processes' frames
 * named from the run's parts, each code the process's that is the run's,
 * the evaluation loop the process's; a part the run does not have), and
 * the names and parts made as the launcher joins a run's traces
 * (collectors/launch/collect-pynames.c), on traces built by hand: two
 * processes whose code indices differ and whose one stack was split into
 * parts differently share the run's codes and one run part of its
 * frames, and read back as their own traces say; a process whose part
 * names a parent it never wrote keeps its parts.  The names of a run of
 * many, deflated, read as the same names written as they are; deflated
 * names damaged, cut short, or not the bytes their trailer says (a bomb
 * among them): said in one line, the names lost, every sample read. */
#include "check.h"
#include "collect-pynames.h"
#include "error.h"
#include "profile.h"
#include "raw-python.h"
#include "raw-read.h"
#include "rawbuild.h"

#include <fcntl.h>
#include <inttypes.h>
#include <unistd.h>
#include <zlib.h>

static int nwarnings;
static char first_msg[512]; /* the first message since nwarnings was 0 */
static char dir[] = "/tmp/profview-pynames.XXXXXX";

static void sink(enum pv_level level, const char *msg)
{
	(void)level;
	if (nwarnings++ == 0)
		snprintf(first_msg, sizeof first_msg, "%s", msg);
	fprintf(stderr, "message: %s\n", msg);
}

static void put_varint(struct rawbuf *r, uint64_t v)
{
	do {
		unsigned char b = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));

		rb_put(r, &b, 1);
		v >>= 7;
	} while (v);
}

static uint64_t zz(int64_t d)
{
	return d < 0 ? ((uint64_t)-d << 1) - 1 : (uint64_t)d << 1;
}

/* A record of type whose body is body[0..n), padded. */
static void put_record(struct rawbuf *r, uint32_t type, const struct rawbuf *body)
{
	struct raw_rec h = { type, (uint32_t)sizeof h + raw_pad((uint32_t)body->len) };

	rb_put(r, &h, sizeof h);
	rb_put(r, body->b, body->len);
	rb_zero(r, raw_pad((uint32_t)body->len) - body->len);
}

/* A RAW_PYCODES record: codes index[i] named name[i] in file[i] (NULL:
 * /a.py), first line first[i], every string as text. */
static void put_codes_in(struct rawbuf *r, const uint32_t *index, const char *const *name,
			 const char *const *file, const int32_t *first, uint32_t n)
{
	struct rawbuf e = { 0 };
	uint32_t last = 0;

	for (uint32_t i = 0; i < n; i++) {
		const char *f = file ? file[i] : "/a.py";

		put_varint(&e, zz((int64_t)index[i] - last));
		put_varint(&e, zz(first[i]));
		put_varint(&e, (uint64_t)strlen(name[i]) << 2);
		rb_put(&e, name[i], strlen(name[i]));
		put_varint(&e, (uint64_t)strlen(f) << 2);
		rb_put(&e, f, strlen(f));
		last = index[i];
	}
	put_record(r, RAW_PYCODES, &e);
	free(e.b);
}

static void put_codes(struct rawbuf *r, const uint32_t *index, const char *const *name,
		      const int32_t *first, uint32_t n)
{
	put_codes_in(r, index, name, NULL, first, n);
}

/* A RAW_PYPARTS record of one part: index, parent (0: a root, of the
 * evaluation loop eval_lo to eval_lo + 0x100, 0 for 0), frames code[i]
 * at line[i], each ending a call where end[i]. */
static void put_part_eval(struct rawbuf *r, uint32_t index, uint32_t parent, const uint32_t *code,
			  const uint32_t *line, const uint8_t *end, uint32_t n, uint64_t eval_lo)
{
	struct rawbuf e = { 0 };

	put_varint(&e, n);
	put_varint(&e, zz(index));
	put_varint(&e, parent ? zz((int64_t)index - parent) + 1 : 0);
	if (!parent) {
		put_varint(&e, eval_lo);
		put_varint(&e, eval_lo ? 0x100 : 0);
	}
	for (uint32_t i = 0; i < n; i++) {
		put_varint(&e, code[i]);
		put_varint(&e, (uint64_t)line[i] << 1 | end[i]);
	}
	put_record(r, RAW_PYPARTS, &e);
	free(e.b);
}

static void put_part(struct rawbuf *r, uint32_t index, uint32_t parent, const uint32_t *code,
		     const uint32_t *line, const uint8_t *end, uint32_t n)
{
	put_part_eval(r, index, parent, code, line, end, n, 0x401100);
}

/* A record of type (RAW_PYRUNCODES or RAW_PYRUNPARTS) of the varints
 * head[0..nhead), then the ranges rg[0..n) (count, index, run's number),
 * each from the end of the one before. */
static void put_ranges(struct rawbuf *r, uint32_t type, const uint64_t *head, uint32_t nhead,
		       const uint32_t (*rg)[3], uint32_t n)
{
	struct rawbuf e = { 0 };
	uint32_t ei = 0, ec = 0;

	for (uint32_t i = 0; i < nhead; i++)
		put_varint(&e, head[i]);
	for (uint32_t i = 0; i < n; i++) {
		put_varint(&e, rg[i][0]);
		put_varint(&e, zz((int64_t)rg[i][1] - ei));
		put_varint(&e, zz((int64_t)rg[i][2] - ec));
		ei = rg[i][1] + rg[i][0];
		ec = rg[i][2] + rg[i][0];
	}
	put_record(r, type, &e);
	free(e.b);
}

static void trace_begin(struct rawbuf *r, uint32_t pid)
{
	struct raw_header h;
	size_t at = r->len;

	rb_header(r, "/nonexistent/python", 10000000);
	memcpy(&h, r->b + at, sizeof h);
	h.pid = pid;
	memcpy(r->b + at, &h, sizeof h);
	rb_mapping(r, 0x400000, 0x500000, 0, "/nonexistent/python");
	rb_thread(r, 100, "main");
}

/* Stack id (a C function under the evaluation loop under main) of part
 * py, sampled once. */
static void sample_part(struct rawbuf *r, uint32_t id, uint32_t py)
{
	const uint64_t native[] = { 0x401010, 0x401101, 0x402020 };
	struct raw_stack_py s = { { RAW_STACK_PY, (uint32_t)(sizeof s + sizeof native) }, id, py };

	rb_put(r, &s, sizeof s);
	rb_put(r, native, sizeof native);
	rb_sample(r, 100, id, NULL, 0, 1000 + id, 4000000);
}

/* Process 4242: codes 1 outer (line 10) and 2 inner (20); part 7,
 * inner at 25 then outer at 12 in one call, sampled.  Process 4343: the
 * same codes as 6 and 5, the same stack written as part 3 (outer at 12)
 * and part 4 on it (inner at 25), parts 4 and 3 sampled.  Process 4444:
 * code 1 x, part 2 on part 9, which it never wrote, sampled. */
static void build(struct rawbuf *t, int k)
{
	static const char *const names[] = { "outer", "inner" }, *const rnames[] = { "inner", "outer" };
	static const int32_t firsts[] = { 10, 20 }, rfirsts[] = { 20, 10 };
	static const uint32_t a_codes[] = { 1, 2 }, b_codes[] = { 5, 6 };
	static const uint32_t a_w[] = { 2, 1 }, a_l[] = { 25, 12 }, b3_w[] = { 6 }, b3_l[] = { 12 };
	static const uint32_t b4_w[] = { 5 }, b4_l[] = { 25 }, c_w[] = { 1 }, c_l[] = { 3 };
	static const uint8_t a_e[] = { 0, 1 }, one_end[] = { 1 }, open_end[] = { 0 };
	static const char *const x[] = { "x" };

	trace_begin(t, 4242 + 101 * (uint32_t)k);
	if (k == 0) {
		put_codes(t, a_codes, names, firsts, 2);
		put_part(t, 7, 0, a_w, a_l, a_e, 2);
		sample_part(t, 1, 7);
	} else if (k == 1) {
		put_codes(t, b_codes, rnames, rfirsts, 2);
		put_part(t, 3, 0, b3_w, b3_l, one_end, 1);
		put_part(t, 4, 3, b4_w, b4_l, open_end, 1);
		sample_part(t, 1, 4);
		sample_part(t, 2, 3);
	} else {
		put_codes(t, c_w, x, firsts, 1);
		put_part(t, 2, 9, c_w, c_l, one_end, 1);
		sample_part(t, 1, 2);
	}
	rb_end(t, 2000, k == 1 ? 2 : 1, 0);
}

/* Sample i's frames, leaf first: a Python frame "name@line", a native one
 * "-", space-separated. */
static void frames_of(const struct pv_profile *p, uint32_t i, char *out, size_t cap)
{
	const uint32_t *locs = p->stack_locs + p->samples[i].loc_off;
	size_t n = 0;

	out[0] = '\0';
	for (uint32_t k = 0; k < p->samples[i].nlocs && n < cap; k++) {
		const struct pv_location *l = &p->locations[locs[k]];

		if (pv_location_is_python(p, locs[k]) && l->nlines)
			n += (size_t)snprintf(out + n, cap - n, "%s%s@%" PRId64, k ? " " : "",
					      pv_str(p, p->functions[pv_location_lines(p, l)[0].function].name),
					      pv_location_lines(p, l)[0].line);
		else
			n += (size_t)snprintf(out + n, cap - n, "%s-", k ? " " : "");
	}
}

/* An iterator over the records of the trace b[0..len): 0, or -1 when
 * its header does not read. */
static int iter_of(const unsigned char *b, size_t len, struct raw_iter *it)
{
	struct raw_head head;

	if (raw_iter_head(b, len, &head) != RAW_HEAD_OK)
		return -1;
	raw_iter_init(it, b, len, head.h.header_size, head.arch.nregs);
	return 0;
}

/* How many records of the trace b[0..len) are of type, or -1. */
static int count_type(const unsigned char *b, size_t len, uint32_t type)
{
	struct raw_iter it;
	struct raw_record r;
	int n = 0;

	if (iter_of(b, len, &it) < 0)
		return -1;
	while (raw_iter_next(&it, &r) == RAW_NEXT_RECORD)
		n += r.type == type;
	return n;
}

/* Of the trace b[0..len), whose parts are the run's: its stacks' parts
 * (RAW_STACK_PY, RAW_STACK_PYREF) each one of the run's nparts or 0, and
 * its RAW_PYRUNPARTS record the evaluation loop alone, no ranges: 1,
 * else 0. */
static int names_run_parts(const unsigned char *b, size_t len, uint32_t nparts)
{
	struct raw_iter it;
	struct raw_record r;
	int ok = 1;

	if (iter_of(b, len, &it) < 0)
		return 0;
	while (raw_iter_next(&it, &r) == RAW_NEXT_RECORD) {
		struct raw_stack_py sp;
		const unsigned char *p = r.data + sizeof(struct raw_pyrunparts), *end = r.data + r.size;
		uint64_t v;

		if (r.type == RAW_STACK_PY || r.type == RAW_STACK_PYREF) {
			memcpy(&sp, r.data, sizeof(sp));
			ok &= sp.py <= nparts;
		} else if (r.type == RAW_PYRUNPARTS) {
			ok &= raw_varint_get(&p, end, 10, &v) == 0 && raw_varint_get(&p, end, 10, &v) == 0;
			while (p < end)
				ok &= *p++ == 0;
		}
	}
	return ok;
}

/* A run of three processes whose Python parts are the run's: the run's
 * codes 1 "outer" (/a.py, line 10) and 2 "inner" (20), its part 1 inner
 * at line 25 then outer at 12 (one call; part 2: outer alone), of no
 * evaluation loop.  Process 4242's codes 3 and 4 are the run's 1 and 2,
 * its part 7 the run's 1 (with bad, the run's 99, which it does not
 * have); process 4343's codes 9 and 8 the run's 1 and 2 (the other way
 * round), its part 3 the run's 2, and its own part 5, inner at line 30,
 * has part 3 as its parent; process 4444 has no codes, its part 2 the
 * run's 1.  Each process samples each of its stacks once. */
static void build_run(struct rawbuf *r, bool bad, struct raw_run_part part[3])
{
	static const char *const names[] = { "outer", "inner" };
	static const int32_t firsts[] = { 10, 20 };
	static const uint32_t codes[] = { 1, 2 }, run_w[] = { 2, 1 }, run_l[] = { 25, 12 };
	static const uint32_t own_w[] = { 8 }, own_l[] = { 30 };
	static const uint8_t run_e[] = { 0, 1 }, own_e[] = { 0 };
	const uint64_t eval[] = { 0x401100, 0x100 };
	const uint32_t a_codes[][3] = { { 2, 3, 1 } }, a_parts[][3] = { { 1, 7, bad ? 99 : 1 } };
	const uint32_t b_codes[][3] = { { 1, 8, 2 }, { 1, 9, 1 } }, b_parts[][3] = { { 1, 3, 2 } };
	struct raw_run_pynames t = { 0 };
	struct raw_run_footer f = { 0 };
	size_t at;

	const uint32_t c_parts[][3] = { { 1, 2, 1 } };

	for (int k = 0; k < 3; k++) {
		part[k] = (struct raw_run_part){ .offset = r->len, .pid = 4242 + 101 * (uint32_t)k,
						 .flags = k ? 0 : RAW_RUN_ROOT };
		trace_begin(r, part[k].pid);
		if (k < 2)
			put_ranges(r, RAW_PYRUNCODES, NULL, 0, k ? b_codes : a_codes, k ? 2 : 1);
		put_ranges(r, RAW_PYRUNPARTS, eval, 2, k == 2 ? c_parts : k ? b_parts : a_parts, 1);
		sample_part(r, 1, k == 2 ? 2 : k ? 3 : 7);
		if (k == 1) {
			put_part(r, 5, 3, own_w, own_l, own_e, 1);
			sample_part(r, 2, 5);
		}
		rb_end(r, 2000, k == 1 ? 2 : 1, 0);
		part[k].length = r->len - part[k].offset;
		rb_zero(r, (r->len + RAW_RUN_ALIGN - 1) / RAW_RUN_ALIGN * RAW_RUN_ALIGN - r->len);
	}
	at = r->len;
	put_codes(r, codes, names, firsts, 2);
	put_part_eval(r, 1, 0, run_w, run_l, run_e, 2, 0);
	t.size = r->len - at;
	memcpy(t.magic, RAW_RUN_PYNAMES_MAGIC, RAW_MAGIC_LEN);
	rb_put(r, &t, sizeof t);
	f.index_offset = r->len;
	rb_put(r, part, 3 * sizeof *part);
	f.nparts = 3;
	f.nprocesses = 3;
	memcpy(f.magic, RAW_RUN_MAGIC, RAW_MAGIC_LEN);
	rb_put(r, &f, sizeof f);
}

/* The run's parts read: each process's frames its own codes that are the
 * run's codes the run's part names (the run's codes themselves for a
 * process that has none), the evaluation loop its own (the run's parts
 * have none), a part of its own on one of the run's; a part the run does
 * not have. */
static void test_read(void)
{
	static const char *const want[] = { "- inner@25 outer@12 - -", "- outer@12 - -",
					    "- inner@30 outer@12 - -" };
	static const int times[] = { 2, 1, 1 };
	struct raw_run_part part[3];
	struct rawbuf r = { 0 };
	struct pv_profile *p;
	char got[256];
	int seen[3] = { 0 };

	build_run(&r, false, part);
	nwarnings = 0;
	p = raw_read_run(r.b, r.len, "t", NULL, false);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(nwarnings, 0);
	CHECK_EQ(p->nsamples, 4);
	for (uint32_t i = 0; i < p->nsamples; i++) {
		int hit = 0;

		frames_of(p, i, got, sizeof got);
		for (int k = 0; k < 3; k++)
			if (strcmp(got, want[k]) == 0)
				hit = ++seen[k];
		if (!hit)
			fprintf(stderr, "test-pynames: a run's sample is '%s'\n", got);
		CHECK(hit > 0);
	}
	for (int k = 0; k < 3; k++)
		CHECK_EQ(seen[k], times[k]);
	CHECK_EQ(pv_profile_check_indices(p, "t"), 0);
	pv_profile_free(p);
	if (getenv("PYNAMES_SEED") && strcmp(getenv("PYNAMES_SEED"), "pyparts") == 0)
		fwrite(r.b, 1, r.len, stdout); /* the raw fuzzer's seed run-pyparts */

	/* a part the run's names do not have: said, and not recorded */
	r.len = 0;
	build_run(&r, true, part);
	nwarnings = 0;
	p = raw_read_run(r.b, r.len, "t", NULL, false);
	CHECK(p != NULL);
	CHECK_EQ(nwarnings, 1);
	for (uint32_t i = 0; p && i < p->nsamples; i++) {
		frames_of(p, i, got, sizeof got);
		if (strcmp(got, want[0]) && strcmp(got, want[1]) && strcmp(got, want[2]))
			CHECK_STR(got, "- - - [python: code not recorded]@0");
	}
	if (p)
		pv_profile_free(p);
	free(r.b);
}

/* The traces make(t, k), k < n (at most 8), joined as the launcher joins
 * them (collect-pynames.c) into out: its index part[0..n), its footer *f. */
static void join(void (*make)(struct rawbuf *, int), int n, struct rawbuf *out, struct raw_run_part *part,
		 struct raw_run_footer *f)
{
	struct collect_pynames *t = collect_pynames_new();
	char path[sizeof dir + 16];
	uint64_t off = 0;
	int fd;
	int64_t w;

	snprintf(path, sizeof path, "%s/run", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(t != NULL && fd >= 0);
	for (int k = 0; k < n; k++) {
		struct rawbuf tr = { 0 };
		char tp[sizeof dir + 16];
		FILE *fp;

		make(&tr, k);
		snprintf(tp, sizeof tp, "%s/t%d", dir, k);
		fp = fopen(tp, "wb");
		CHECK(fp != NULL && fwrite(tr.b, 1, tr.len, fp) == tr.len && fclose(fp) == 0);
		off = (off + RAW_RUN_ALIGN - 1) / RAW_RUN_ALIGN * RAW_RUN_ALIGN;
		w = collect_pynames_copy(t, fd, off, tp, 0, tr.len);
		CHECK(w > 0);
		part[k] = (struct raw_run_part){ .offset = off, .length = (uint64_t)w, .pid = 4242 + 101 * (uint32_t)k,
						 .flags = k == 0 ? RAW_RUN_ROOT : 0 };
		off += (uint64_t)(w > 0 ? w : 0);
		free(tr.b);
		unlink(tp);
	}
	off = (off + 7) / 8 * 8;
	w = collect_pynames_write(t, fd, off);
	CHECK(w > 0);
	off += (uint64_t)(w > 0 ? w : 0);
	*f = (struct raw_run_footer){ .index_offset = off, .nparts = (uint32_t)n, .nprocesses = (uint32_t)n };
	memcpy(f->magic, RAW_RUN_MAGIC, RAW_MAGIC_LEN);
	CHECK(pwrite(fd, part, n * sizeof *part, (off_t)off) == (ssize_t)(n * sizeof *part) &&
	      pwrite(fd, f, sizeof *f, (off_t)(off + n * sizeof *part)) == (ssize_t)sizeof *f);
	collect_pynames_free(t);
	out->len = (size_t)lseek(fd, 0, SEEK_END);
	out->b = malloc(out->len);
	CHECK(out->b != NULL && pread(fd, out->b, out->len, 0) == (ssize_t)out->len);
	close(fd);
	unlink(path);
}

/* Process k of a run of many names: codes 1 + k to NMANY + k, methods
 * of classes of modules in files of packages (names that share words, as
 * a program's do, but not always their beginnings), and eight parts of
 * three frames each, each sampled. */
#define NMANY 80
static void build_many(struct rawbuf *t, int k)
{
	static const char *const mods[] = { "json", "re", "email", "http", "unittest", "collections", "importlib" };
	static const char *const meth[] = { "decode", "encode", "parse", "__init__", "feed", "close",
					    "run", "_compile", "get", "format", "visit" };
	static const uint8_t ends[] = { 0, 0, 1 };
	char nb[NMANY][64], fb[NMANY][64];
	const char *names[NMANY], *files[NMANY];
	uint32_t index[NMANY];
	int32_t first[NMANY];

	trace_begin(t, 4242 + 101 * (uint32_t)k);
	for (uint32_t i = 0; i < NMANY; i++) {
		snprintf(nb[i], sizeof nb[i], "%s.%c%s.%s", mods[i % 7], 'A' + i % 5, meth[i / 7 % 11], meth[i % 11]);
		snprintf(fb[i], sizeof fb[i], "/usr/lib/python3.11/%s/%s.py", mods[i % 7], meth[i / 3 % 11]);
		names[i] = nb[i];
		/* one whose file name is its name, as CPython's shim after a
		 * class's __init__ (3.12 on) */
		files[i] = i == 3 ? nb[i] : fb[i];
		index[i] = i + 1 + (uint32_t)k;
		first[i] = 10 * (int32_t)i + 1;
	}
	put_codes_in(t, index, names, files, first, NMANY);
	for (uint32_t j = 0; j < 8; j++) {
		const uint32_t w[] = { 3 * j + 1 + (uint32_t)k, 3 * j + 2 + (uint32_t)k, 3 * j + 3 + (uint32_t)k };
		const uint32_t l[] = { 5 + j, 6 + j, 7 + j };

		put_part(t, 1 + 3 * j, 0, w, l, ends, 3);
		sample_part(t, 1 + j, 1 + 3 * j);
	}
	rb_end(t, 2000, 8, 0);
}

/* Into dst: src's bytes before its run's names (at off), then names[0..n)
 * and zeros to a multiple of 8, the trailer tr[0..ntr), the index
 * part[0..np) and the footer f (its index where it now is). */
static void rebuild(struct rawbuf *dst, const struct rawbuf *src, uint64_t off, const void *names, size_t n,
		    const void *tr, size_t ntr, const struct raw_run_part *part, uint32_t np,
		    struct raw_run_footer f)
{
	dst->len = 0;
	rb_put(dst, src->b, (size_t)off);
	rb_put(dst, names, n);
	rb_zero(dst, raw_pad((uint32_t)n) - n);
	rb_put(dst, tr, ntr);
	f.index_offset = dst->len;
	rb_put(dst, part, np * sizeof *part);
	rb_put(dst, &f, sizeof f);
}

/* Each sample's frames of p, "name@line:file" for a Python one, one line
 * each, into out. */
static void samples_text(const struct pv_profile *p, struct rawbuf *out)
{
	out->len = 0;
	for (uint32_t i = 0; i < p->nsamples; i++) {
		const uint32_t *locs = p->stack_locs + p->samples[i].loc_off;
		char line[256];

		for (uint32_t k = 0; k < p->samples[i].nlocs; k++) {
			const struct pv_location *l = &p->locations[locs[k]];
			const struct pv_line *ln = pv_location_lines(p, l);

			if (pv_location_is_python(p, locs[k]) && l->nlines)
				snprintf(line, sizeof line, " %s@%" PRId64 ":%s", pv_str(p, p->functions[ln[0].function].name),
					 ln[0].line, pv_str(p, p->functions[ln[0].function].filename));
			else
				snprintf(line, sizeof line, " -");
			rb_put(out, line, strlen(line));
		}
		rb_put(out, "\n", 1);
	}
}

/* The run r read: its names lost (the first message says they are
 * damaged), each of its nsamples samples read, none of them named. */
static void read_names_lost(const struct rawbuf *r, uint32_t nsamples, const char *what)
{
	struct rawbuf txt = { 0 };
	struct pv_profile *p;

	nwarnings = 0;
	first_msg[0] = '\0';
	p = raw_read_run(r->b, r->len, "t", NULL, false);
	CHECK(p != NULL);
	if (!p)
		return;
	if (!strstr(first_msg, "the run's Python names are damaged"))
		fprintf(stderr, "test-pynames: %s: the first message is '%s'\n", what, first_msg);
	CHECK(strstr(first_msg, "the run's Python names are damaged") != NULL);
	CHECK_EQ(p->nsamples, nsamples);
	samples_text(p, &txt);
	rb_put(&txt, "", 1);
	CHECK(strstr((char *)txt.b, "/usr/lib/python3.11/") == NULL);
	CHECK_EQ(pv_profile_check_indices(p, "t"), 0);
	pv_profile_free(p);
	free(txt.b);
}

/* A run of many names: its names deflated, as they are smaller so, and
 * read as the same run with them as they are; a byte of them changed,
 * cut short, a trailer that says more or fewer bytes than they make, more
 * than the most, more than deflate makes of their size, and a stream that
 * makes more than its trailer says (a bomb): each said, the names lost,
 * every sample read. */
static void test_deflated(void)
{
	struct raw_run_part part[3];
	struct raw_run_footer f;
	struct rawbuf z = { 0 }, plain = { 0 }, bad = { 0 }, t1 = { 0 }, t2 = { 0 };
	struct raw_run_pynames tr = { 0 };
	struct raw_run_pynamez tz;
	uint64_t off = 0, size = 0, inflated = 0, o2, s2, i2;
	unsigned char *rec = NULL, *big = NULL;
	uLongf n;
	uint32_t nsamples = 0;
	struct pv_profile *p, *q;

	join(build_many, 3, &z, part, &f);
	CHECK_EQ(raw_run_pynames(z.b, z.len, &f, &off, &size, &inflated), 1);
	CHECK(inflated > size + 8);
	if (getenv("PYNAMES_SEED") && strcmp(getenv("PYNAMES_SEED"), "deflated") == 0)
		fwrite(z.b, 1, z.len, stdout); /* the raw fuzzer's seed run-pynamez */
	n = (uLongf)inflated;
	rec = malloc(inflated ? inflated : 1);
	CHECK(rec != NULL && inflated > size && uncompress(rec, &n, z.b + off, (uLong)size) == Z_OK &&
	      n == inflated);
	if (!rec || n != inflated || inflated <= size) {
		free(rec);
		free(z.b);
		return;
	}
	memcpy(&tz, z.b + off + size, sizeof tz);
	tr.size = inflated;
	memcpy(tr.magic, RAW_RUN_PYNAMES_MAGIC, RAW_MAGIC_LEN);
	rebuild(&plain, &z, off, rec, inflated, &tr, sizeof tr, part, 3, f);
	memcpy(&f, plain.b + plain.len - sizeof f, sizeof f);
	CHECK(raw_run_pynames(plain.b, plain.len, &f, &o2, &s2, &i2) == 1 && i2 == 0 && s2 == inflated);

	/* read back alike */
	nwarnings = 0;
	p = raw_read_run(z.b, z.len, "t", NULL, false);
	q = raw_read_run(plain.b, plain.len, "t", NULL, false);
	CHECK(p != NULL && q != NULL);
	CHECK_EQ(nwarnings, 0);
	if (p && q) {
		samples_text(p, &t1);
		samples_text(q, &t2);
		rb_put(&t1, "", 1);
		rb_put(&t2, "", 1);
		CHECK_EQ(p->nsamples, 24);
		CHECK_STR((char *)t1.b, (char *)t2.b);
		CHECK(strstr((char *)t1.b, " json.Adecode.decode@5:/usr/lib/python3.11/json/decode.py") != NULL);
		CHECK(strstr((char *)t1.b, " http.Ddecode.__init__@6:http.Ddecode.__init__ ") != NULL);
		nsamples = (uint32_t)p->nsamples;
	}
	pv_profile_free(p);
	pv_profile_free(q);

	/* a byte changed */
	rebuild(&bad, &z, off, z.b + off, size, &tz, sizeof tz, part, 3, f);
	bad.b[off + size / 2] ^= 0x40;
	read_names_lost(&bad, nsamples, "a byte changed");
	/* cut short: the first half, a trailer of its size */
	tz.size = raw_pad((uint32_t)size / 2);
	rebuild(&bad, &z, off, z.b + off, (size_t)tz.size, &tz, sizeof tz, part, 3, f);
	read_names_lost(&bad, nsamples, "cut short");
	tz.size = size;
	/* 8 bytes more than it makes, 8 fewer */
	for (int k = 0; k < 2; k++) {
		tz.inflated = k ? inflated - 8 : inflated + 8;
		rebuild(&bad, &z, off, z.b + off, size, &tz, sizeof tz, part, 3, f);
		read_names_lost(&bad, nsamples, k ? "8 bytes fewer" : "8 bytes more");
	}
	/* more than the most, more than deflate makes of its size */
	for (int k = 0; k < 2; k++) {
		tz.inflated = k ? (size + 8) * 1032 : RAW_RUN_PYNAMES_MAX + 8;
		rebuild(&bad, &z, off, z.b + off, size, &tz, sizeof tz, part, 3, f);
		read_names_lost(&bad, nsamples, k ? "over deflate's ratio" : "over the most");
	}
	/* a bomb: 8 MiB of zeros deflated, the trailer saying 4096 bytes */
	n = compressBound(8 << 20);
	big = calloc(1, (size_t)(8 << 20) + n);
	CHECK(big != NULL && compress2(big + (8 << 20), &n, big, 8 << 20, 9) == Z_OK);
	if (big) {
		tz.inflated = 4096;
		tz.size = raw_pad((uint32_t)n);
		rebuild(&bad, &z, off, big + (8 << 20), n, &tz, sizeof tz, part, 3, f);
		read_names_lost(&bad, nsamples, "a bomb");
	}
	free(big);
	free(rec);
	free(z.b);
	free(plain.b);
	free(bad.b);
	free(t1.b);
	free(t2.b);
}

int main(void)
{
	static const char *const want[] = { "- inner@25 outer@12 - -", "- inner@25 outer@12 - -",
					    "- outer@12 - -" };
	struct raw_run_part part[3] = { { 0 } };
	struct raw_run_footer f = { 0 };
	struct rawbuf out = { 0 };
	char got[256];
	int seen[4] = { 0 };

	pv_error_set_sink(sink);
	test_read();
	CHECK(mkdtemp(dir) != NULL);
	join(build, 3, &out, part, &f);
	test_deflated();
	rmdir(dir);

	/* the first two: their parts the run's, none of their own, nor codes
	 * (only the run's parts name them), their stacks naming the run's
	 * parts themselves; the third's its own, on its codes */
	for (int k = 0; k < 3; k++) {
		CHECK_EQ(count_type(out.b + part[k].offset, part[k].length, RAW_PYPARTS), k == 2 ? 1 : 0);
		CHECK_EQ(count_type(out.b + part[k].offset, part[k].length, RAW_PYRUNPARTS), k == 2 ? 0 : 1);
		CHECK_EQ(count_type(out.b + part[k].offset, part[k].length, RAW_PYRUNCODES), k == 2 ? 1 : 0);
	}
	/* one stack, written once: the run's parts are the two of its frames */
	uint64_t names_off, names_len, names_inflated;

	CHECK_EQ(raw_run_pynames(out.b, out.len, &f, &names_off, &names_len, &names_inflated), 1);
	/* (so few, as they are: deflated they would not be smaller) */
	CHECK_EQ(names_inflated, 0);
	struct rd_run_names *rn = rd_run_names_read(out.b + names_off, (size_t)names_len, "t");

	CHECK(rn != NULL);
	if (rn) {
		CHECK_EQ(rn->py.nparts, 2);
		for (int k = 0; k < 2; k++)
			CHECK(names_run_parts(out.b + part[k].offset, part[k].length, 2));
		rd_run_names_free(rn);
	}
	nwarnings = 0;
	struct pv_profile *p = raw_read_run(out.b, out.len, "t", NULL, false);

	CHECK(p != NULL);
	CHECK_EQ(nwarnings, 0);
	for (uint32_t i = 0; p && i < p->nsamples; i++) {
		int hit = 0;

		frames_of(p, i, got, sizeof got);
		for (int k = 0; k < 3 && !hit; k++)
			if (strcmp(got, want[k]) == 0 && !seen[k])
				hit = seen[k] = 1;
		/* (the third's: its frame, and its parent's not recorded) */
		if (!hit && !seen[3] && strstr(got, "x@3") && strstr(got, "[python: code not recorded]"))
			hit = seen[3] = 1;
		if (!hit)
			fprintf(stderr, "test-pynames: a sample is '%s'\n", got);
		CHECK(hit);
	}
	CHECK(p && p->nsamples == 4);
	if (p)
		pv_profile_free(p);
	if (getenv("PYNAMES_SEED") && strcmp(getenv("PYNAMES_SEED"), "joined") == 0)
		fwrite(out.b, 1, out.len, stdout); /* the raw fuzzer's seed run-pyjoined */
	free(out.b);
	return check_done("test-pynames");
}
