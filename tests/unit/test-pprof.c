/* test-pprof.c - the pprof codec (write, read back, every cut and damage),
 * the gperftools reader in all four word layouts, the folded reader and
 * merging, on hand-built inputs */
#include "check.h"
#include "error.h"
#include "folded-read.h"
#include "gperf-read.h"
#include "gunzip.h"
#include "merge.h"
#include "pprof-read.h"
#include "pprof-write.h"
#include "raw-read.h"
#include "rawbuild.h"
#include "read.h"

#include <unistd.h>

/* Messages go here, so a test can check that a bad input gives exactly
 * one error line and what it says. */
static char last_msg[1024];
static int nerrors;

static void sink(enum pv_level level, const char *msg)
{
	if (level != PV_LEVEL_ERROR)
		return;
	nerrors++;
	snprintf(last_msg, sizeof last_msg, "%s", msg);
}

static uint32_t fn_main, fn_work, fn_inl, fn_libc;
static uint32_t loc_main, loc_work, loc_inl, loc_libc;

/* main -> work (with inl inlined into it) and main -> libc, two threads. */
static struct pv_profile *make_profile(void)
{
	struct pv_profile *p = pv_profile_new();
	struct pv_mapping lib = { .start = 0x7f0000, .limit = 0x7f8000, .offset = 0x1000,
				  .file = pv_intern_str(p, "/lib/libc.so.6"),
				  .build_id = pv_intern_str(p, "abcd") };
	struct pv_mapping exe = { .start = 0x400000, .limit = 0x401000,
				  .file = pv_intern_str(p, "/bin/app"),
				  .build_id = pv_intern_str(p, "1234"),
				  .has_functions = true, .has_filenames = true,
				  .has_line_numbers = true };
	uint32_t file = pv_intern_str(p, "app.c");

	pv_add_value_type(p, "samples", "count");
	pv_add_value_type(p, "cpu", "nanoseconds");
	p->period_type.type = pv_intern_str(p, "cpu");
	p->period_type.unit = pv_intern_str(p, "nanoseconds");
	p->period = 4000000;
	p->time_ns = 1700000000123456789LL;
	p->duration_ns = 2500000000LL;
	/* The library first: the writer must still put the program first. */
	uint32_t mlib = pv_add_mapping(p, &lib);
	uint32_t mexe = pv_add_mapping(p, &exe);
	p->program = exe.file;
	fn_main = pv_get_function(p, pv_intern_str(p, "main"), pv_intern_str(p, "main"), file, 40);
	fn_work = pv_get_function(p, pv_intern_str(p, "ns::work(int)"),
				  pv_intern_str(p, "_ZN2ns4workEi"), file, 20);
	fn_inl = pv_get_function(p, pv_intern_str(p, "inl"), pv_intern_str(p, "inl"), file, 10);
	fn_libc = pv_get_function(p, pv_intern_str(p, "libc+0x1234"), pv_intern_str(p, "libc+0x1234"), 0, 0);
	loc_main = pv_get_location(p, 0x400100, mexe);
	loc_work = pv_get_location(p, 0x400200, mexe);
	loc_inl = pv_get_location(p, 0x400300, mexe);
	loc_libc = pv_get_location(p, 0x7f0234, mlib);
	struct pv_line l;
	l = (struct pv_line){ fn_main, 45 };
	pv_set_lines(p, loc_main, &l, 1);
	l = (struct pv_line){ fn_work, 22 };
	pv_set_lines(p, loc_work, &l, 1);
	struct pv_line two[2] = { { fn_inl, 11 }, { fn_work, 23 } };
	pv_set_lines(p, loc_inl, two, 2);
	l = (struct pv_line){ fn_libc, 0 };
	pv_set_lines(p, loc_libc, &l, 1);
	uint32_t t1 = pv_get_thread(p, 101, pv_intern_str(p, "main"));
	uint32_t t2 = pv_get_thread(p, 102, pv_intern_str(p, "worker"));

	/* 3 x (main, work) on t1, 1 x (main, work) on t2, 2 x (main, inl) on
	 * t1, 1 x (main, libc) on t2: four distinct stack+thread pairs. */
	struct { uint32_t leaf, thread; int n; } s[] = {
		{ loc_work, t1, 3 }, { loc_work, t2, 1 }, { loc_inl, t1, 2 }, { loc_libc, t2, 1 },
	};
	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
		for (int k = 0; k < s[i].n; k++) {
			uint32_t st[2] = { s[i].leaf, loc_main };
			struct pv_sample ps = { .nlocs = 2, .thread = s[i].thread };
			ps.loc_off = pv_add_stack(p, st, 2);
			ps.values[0] = 1;
			ps.values[1] = 4000000 + k;
			pv_add_sample(p, &ps);
		}
	return p;
}

static unsigned char *encode(struct pv_profile *p, bool plain, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct pprof_write_options o = { .uncompressed = plain };

	CHECK(f != NULL);
	CHECK_EQ(pprof_write(f, "mem", p, &o), 0);
	fclose(f);
	return (unsigned char *)buf;
}

static const char *fname(const struct pv_profile *p, const struct pv_location *l, uint32_t j)
{
	return pv_str(p, p->functions[pv_location_lines(p, l)[j].function].name);
}

static void test_round_trip(void)
{
	struct pv_profile *p = make_profile();
	size_t len;
	unsigned char *buf = encode(p, true, &len);
	struct pv_profile *q;

	CHECK(pprof_detect(buf, len));
	q = pprof_read(buf, len, "mem", false);
	CHECK(q != NULL);
	if (!q)
		goto out;
	CHECK_EQ(pv_profile_validate(q, "mem"), 0);
	CHECK_EQ(q->nvalues, 2);
	CHECK_STR(pv_str(q, q->sample_types[0].type), "samples");
	CHECK_STR(pv_str(q, q->sample_types[1].unit), "nanoseconds");
	CHECK_STR(pv_str(q, q->period_type.type), "cpu");
	CHECK_EQ(q->period, 4000000);
	CHECK_EQ(q->time_ns, 1700000000123456789LL);
	CHECK_EQ(q->duration_ns, 2500000000LL);
	/* Identical stacks on one thread are one sample, values summed. */
	CHECK_EQ(q->nsamples, 4);
	CHECK_EQ(pv_total(q, 0), 7);
	CHECK_EQ(pv_total(q, 1), pv_total(p, 1));
	for (size_t i = 0; i < q->nsamples; i++) {
		const struct pv_sample *s = &q->samples[i];
		const struct pv_location *leaf = &q->locations[pv_sample_locs(q, s)[0]];
		const struct pv_thread *t = &q->threads[s->thread];
		CHECK(s->thread != PV_NONE);
		if (leaf->address == 0x400200 && t->tid == 101) {
			CHECK_EQ(s->values[0], 3);
			CHECK_EQ(s->values[1], 3 * 4000000 + 0 + 1 + 2);
			CHECK_STR(pv_str(q, t->name), "main");
		}
		if (leaf->address == 0x7f0234) {
			CHECK_EQ(t->tid, 102);
			CHECK_STR(pv_str(q, t->name), "worker");
		}
	}
	/* The program's mapping comes first; flags and build-ids kept. */
	CHECK_EQ(q->nmappings, 2);
	CHECK_STR(pv_str(q, q->mappings[0].file), "/bin/app");
	CHECK_STR(pv_str(q, q->program), "/bin/app");
	CHECK(q->mappings[0].has_functions && q->mappings[0].has_line_numbers);
	CHECK(!q->mappings[1].has_functions);
	CHECK_STR(pv_str(q, q->mappings[1].build_id), "abcd");
	CHECK_EQ(q->mappings[1].offset, 0x1000);
	/* Inlined lines, innermost first, names and system names. */
	bool seen_inl = false;
	for (size_t i = 0; i < q->nlocations; i++) {
		const struct pv_location *l = &q->locations[i];
		if (l->address != 0x400300)
			continue;
		seen_inl = true;
		CHECK_EQ(l->nlines, 2);
		CHECK_STR(fname(q, l, 0), "inl");
		CHECK_STR(fname(q, l, 1), "ns::work(int)");
		CHECK_EQ(pv_location_lines(q, l)[1].line, 23);
		CHECK_STR(pv_str(q, q->functions[pv_location_lines(q, l)[1].function].system_name),
			  "_ZN2ns4workEi");
		CHECK_EQ(q->functions[pv_location_lines(q, l)[1].function].start_line, 20);
	}
	CHECK(seen_inl);
	pv_profile_free(q);

	/* Gzipped, through the detection of pv_read_file. */
	{
		size_t glen;
		unsigned char *gz = encode(p, false, &glen);
		char path[] = "/tmp/test-pprof.XXXXXX";
		int fd = mkstemp(path);
		CHECK(fd >= 0);
		CHECK(pv_gzip_detect(gz, glen));
		CHECK_EQ(write(fd, gz, glen), (long long)glen);
		close(fd);
		q = pv_read_file(path, NULL);
		CHECK(q != NULL);
		if (q)
			CHECK_EQ(pv_total(q, 0), 7);
		pv_profile_free(q);
		/* A gzip cut short: one error, saying so. */
		CHECK_EQ(truncate(path, (off_t)glen - 9), 0);
		nerrors = 0;
		q = pv_read_file(path, NULL);
		CHECK(q == NULL);
		CHECK_EQ(nerrors, 1);
		CHECK_CONTAINS(last_msg, "ends early");
		unlink(path);
		free(gz);
	}
out:
	/* Every cut of the plain encoding is an error, never a crash; one
	 * message each, naming a byte. */
	for (size_t n = 1; n < len; n++) {
		nerrors = 0;
		q = pprof_read(buf, n, "mem", false);
		if (q) {
			/* A cut between two whole fields is a valid shorter profile. */
			CHECK_EQ(pv_profile_validate(q, "mem"), 0);
			pv_profile_free(q);
			continue;
		}
		CHECK_EQ(nerrors, 1);
		if (nerrors != 1)
			fprintf(stderr, "cut at %zu: %d errors, last: %s\n", n, nerrors, last_msg);
		CHECK_CONTAINS(last_msg, "'mem'");
	}
	/* A length that runs past the end is reported with its byte. */
	nerrors = 0;
	q = pprof_read(buf, len - 1, "mem", false);
	if (!q) {
		CHECK_CONTAINS(last_msg, "at byte");
	}
	pv_profile_free(q);
	/* Every single-byte damage: a profile or one error. */
	for (size_t i = 0; i < len; i++) {
		unsigned char save = buf[i];
		buf[i] ^= 0xa5;
		nerrors = 0;
		q = pprof_read(buf, len, "mem", false);
		CHECK(q ? pv_profile_validate(q, "mem") == 0 : nerrors == 1);
		if (!q && nerrors != 1)
			fprintf(stderr, "damage at %zu: %d errors, last: %s\n", i, nerrors, last_msg);
		pv_profile_free(q);
		buf[i] = save;
	}
	free(buf);
	pv_profile_free(p);
}

/* A gperftools CPU profile in a given layout. */
static size_t put_word(unsigned char *b, uint64_t v, unsigned word, bool big)
{
	for (unsigned i = 0; i < word; i++) {
		unsigned shift = 8 * (big ? word - 1 - i : i);
		b[i] = (unsigned char)(v >> shift);
	}
	return word;
}

static const char gperf_maps[] =
	"00400000-00401000 r-xp 00000000 08:01 1234 /bin/app\n"
	"00600000-00601000 rw-p 00000000 08:01 1234 /bin/app\n"
	"7f000000-7f010000 r-xp 00001000 08:01 99 /lib/libc.so.6\n";

static size_t make_gperf(unsigned char *b, unsigned word, bool big, bool trailer)
{
	/* Three samples whose second frame is the same signal-handler
	 * address (dropped), one with the leaf repeated as its caller. */
	const uint64_t words[] = {
		0, 3, 0, 10000, 0,
		5, 4, 0x400100, 0x7f000500, 0x400201, 0x400301,
		2, 4, 0x400150, 0x7f000500, 0x400150, 0x400301,
		1, 3, 0x7f000100, 0x7f000500, 0x400301,
		0, 1, 0,
	};
	size_t n = 0, nw = sizeof words / sizeof words[0] - (trailer ? 0 : 3);

	for (size_t i = 0; i < nw; i++)
		n += put_word(b + n, words[i], word, big);
	memcpy(b + n, gperf_maps, sizeof gperf_maps - 1);
	return n + sizeof gperf_maps - 1;
}

/* A raw trace as collect-timer --split writes a segment: its header's
 * start times are the segment's, its end record ends it.  The pprof
 * profile of it starts then (time_nanos) and lasts as long
 * (duration_nanos). */
static void test_segment_times(void)
{
	static const uint64_t frames[] = { 0x400100 };
	const uint64_t start = 61000000000ULL, real = 1700000060123456789ULL;
	struct rawbuf r = { 0 };
	struct raw_header h;
	struct pv_profile *p, *q;
	unsigned char *buf;
	size_t len;

	rb_header_short(&r, "/nonexistent/app", 4000000, 16000);
	memcpy(&h, r.b, sizeof h);
	h.start_monotonic_ns = start;
	h.start_realtime_ns = real;
	memcpy(r.b, &h, sizeof h);
	rb_thread_cpu(&r, 7, "main", 0);
	rb_sample(&r, 7, 0, frames, 1, start + 100000000, 4000000);
	rb_thread_exit(&r, 7, start + 1500000000, 4000000);
	rb_end(&r, start + 1500000000, 1, 0);
	p = raw_read(r.b, r.len, "t.seg0002.raw", NULL);
	CHECK(p != NULL);
	if (!p)
		goto out;
	CHECK_EQ(p->time_ns, (int64_t)real);
	CHECK_EQ(p->duration_ns, 1500000000);
	buf = encode(p, true, &len);
	q = pprof_read(buf, len, "mem", false);
	CHECK(q != NULL);
	if (q) {
		CHECK_EQ(q->time_ns, (int64_t)real);
		CHECK_EQ(q->duration_ns, 1500000000);
	}
	pv_profile_free(q);
	free(buf);
out:
	pv_profile_free(p);
	free(r.b);
}

static void test_gperf(void)
{
	unsigned char b[1024];

	for (int layout = 0; layout < 4; layout++) {
		unsigned word = layout & 1 ? 4 : 8;
		bool big = layout & 2;
		size_t n = make_gperf(b, word, big, true);
		struct pv_profile *p;

		CHECK(gperf_detect(b, n));
		/* The first word alone is not enough: zeros are no profile. */
		CHECK(!gperf_detect((const unsigned char[64]){ 0 }, 64));
		CHECK(!gperf_detect(b, word));
		nerrors = 0;
		p = gperf_read(b, n, "g");
		CHECK(p != NULL);
		if (!p)
			continue;
		CHECK_EQ(pv_profile_validate(p, "g"), 0);
		CHECK_EQ(p->period, 10000000);
		CHECK_EQ(p->nsamples, 3);
		CHECK_EQ(pv_total(p, 0), 8);
		CHECK_EQ(pv_total(p, 1), 80000000);
		CHECK_EQ(p->nmappings, 2); /* executable ones only */
		CHECK_STR(pv_str(p, p->program), "/bin/app");
		/* Sample 1: the handler frame dropped, callers stepped back. */
		const struct pv_sample *s = &p->samples[0];
		CHECK_EQ(s->nlocs, 3);
		CHECK_EQ(p->locations[pv_sample_locs(p, s)[0]].address, 0x400100);
		CHECK_EQ(p->locations[pv_sample_locs(p, s)[1]].address, 0x400200);
		CHECK_EQ(p->locations[pv_sample_locs(p, s)[2]].address, 0x400300);
		/* Sample 2: the repeated leaf dropped too. */
		s = &p->samples[1];
		CHECK_EQ(s->nlocs, 2);
		CHECK_EQ(p->locations[pv_sample_locs(p, s)[1]].address, 0x400300);
		/* Sample 3: in the library's mapping, at its file offset. */
		s = &p->samples[2];
		const struct pv_location *l = &p->locations[pv_sample_locs(p, s)[0]];
		CHECK(l->mapping != PV_NONE);
		if (l->mapping != PV_NONE)
			CHECK_STR(pv_str(p, p->mappings[l->mapping].file), "/lib/libc.so.6");
		pv_profile_free(p);

		/* No trailer: cut off, said with the byte. */
		n = make_gperf(b, word, big, false);
		nerrors = 0;
		p = gperf_read(b, 25 * word - 3 * word, "g");
		CHECK(p == NULL);
		CHECK_EQ(nerrors, 1);
		CHECK_CONTAINS(last_msg, "cut off at byte");
		/* Every cut of the samples: an error, never a crash. */
		n = make_gperf(b, word, big, true);
		for (size_t k = 4; k < 25 * word; k++) {
			nerrors = 0;
			p = gperf_read(b, k, "g");
			CHECK(p == NULL && nerrors == 1);
			pv_profile_free(p);
		}
	}
	/* A wrong header: version 2 (1 is Java's), and a bad word count. */
	size_t n = make_gperf(b, 8, false, true);
	b[16] = 2;
	nerrors = 0;
	CHECK(gperf_read(b, n, "g") == NULL);
	CHECK_EQ(nerrors, 1);
	CHECK_CONTAINS(last_msg, "version 2");
	CHECK_CONTAINS(last_msg, "byte 16");
	b[16] = 0;
	b[8] = 5;
	nerrors = 0;
	CHECK(gperf_read(b, n, "g") == NULL);
	CHECK_CONTAINS(last_msg, "header should be");
}

static void test_folded(void)
{
	const char good[] = "main;work;hot 42\nmain;work;cold 7\r\n\nmain;other 1\nmain;work;hot 8\n";
	const char bad[] = "main;work 3\nmain;work;hot\n";
	struct pv_profile *p;

	CHECK(folded_detect((const unsigned char *)good, sizeof good - 1));
	CHECK(!pprof_detect((const unsigned char *)"\x0a\x04\x08\x01\x10\x02", 0));
	p = folded_read((const unsigned char *)good, sizeof good - 1, "f");
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 4);
		CHECK_EQ(pv_total(p, 0), 58);
		/* Leaf first in the model. */
		const struct pv_sample *s = &p->samples[0];
		CHECK_EQ(s->nlocs, 3);
		CHECK_STR(fname(p, &p->locations[pv_sample_locs(p, s)[0]], 0), "hot");
		CHECK_STR(fname(p, &p->locations[pv_sample_locs(p, s)[2]], 0), "main");
		/* The same frame name is the same location. */
		CHECK_EQ(pv_sample_locs(p, &p->samples[3])[0], pv_sample_locs(p, s)[0]);
		pv_profile_free(p);
	}
	nerrors = 0;
	p = folded_read((const unsigned char *)bad, sizeof bad - 1, "f");
	CHECK(p == NULL);
	CHECK_EQ(nerrors, 1);
	CHECK_CONTAINS(last_msg, "line 2: no count");
}

static void test_merge(void)
{
	struct pv_profile *a = make_profile(), *b = make_profile();
	const char fold[] = "main;work 3\n";
	struct pv_profile *f = folded_read((const unsigned char *)fold, sizeof fold - 1, "f");
	size_t nloc = a->nlocations, nfn = a->nfunctions;

	/* The same program twice: samples add up, nothing is duplicated. */
	CHECK_EQ(pv_merge(a, b, "b"), 0);
	CHECK_EQ(pv_total(a, 0), 14);
	CHECK_EQ(a->nlocations, nloc);
	CHECK_EQ(a->nfunctions, nfn);
	CHECK_EQ(a->nmappings, 2);
	CHECK_EQ(pv_profile_validate(a, "a"), 0);
	/* Different sample types: an error naming both. */
	nerrors = 0;
	CHECK_EQ(pv_merge(a, f, "f"), -1);
	CHECK_EQ(nerrors, 1);
	CHECK_CONTAINS(last_msg, "samples/count, cpu/nanoseconds");
	/* The program named on a command line replaces the program's file. */
	CHECK_EQ(pv_use_program(b, "/elsewhere/app"), 1);
	CHECK_STR(pv_str(b, b->mappings[1].file), "/elsewhere/app");
	CHECK_STR(pv_str(b, b->mappings[0].file), "/lib/libc.so.6");
	pv_profile_free(a);
	pv_profile_free(b);
	pv_profile_free(f);

	/* Times at the ends of the int64 range, as a damaged or hostile
	 * profile may carry: the sums are held at the ends, not wrapped. */
	a = make_profile();
	b = make_profile();
	a->duration_ns = b->duration_ns = INT64_MAX / 2 + 1;
	a->time_ns = INT64_MIN;
	b->time_ns = INT64_MAX;
	for (size_t i = 0; i < b->nsamples; i++)
		b->samples[i].time_ns = INT64_MAX - 1;
	CHECK_EQ(pv_merge(a, b, "b"), 0);
	CHECK_EQ(a->duration_ns, INT64_MAX);
	CHECK_EQ(a->time_ns, INT64_MIN);
	CHECK_EQ(a->samples[a->nsamples - 1].time_ns, INT64_MAX);
	pv_profile_free(a);
	pv_profile_free(b);
}

/* A hand-made profile.proto, for encodings our writer does not use. */
struct pb {
	unsigned char b[4096];
	size_t n;
};

static void pb_varint(struct pb *o, uint64_t v)
{
	while (v >= 0x80) {
		o->b[o->n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	o->b[o->n++] = (unsigned char)v;
}

static void pb_uint(struct pb *o, unsigned field, uint64_t v)
{
	pb_varint(o, (uint64_t)field << 3);
	pb_varint(o, v);
}

static void pb_bytes(struct pb *o, unsigned field, const void *d, size_t n)
{
	pb_varint(o, (uint64_t)field << 3 | 2);
	pb_varint(o, n);
	memcpy(o->b + o->n, d, n);
	o->n += n;
}

static void pb_msg(struct pb *o, unsigned field, struct pb *m)
{
	pb_bytes(o, field, m->b, m->n);
	m->n = 0;
}

/* The profile: two functions at locations 10 and 20, two sample types;
 * samples given by the caller as encoded Sample messages. */
static size_t wire_profile(unsigned char *out, const struct pb *samples, size_t nsamples)
{
	static const char *const strs[] = { "", "samples", "count", "cpu", "nanoseconds", "f", "g",
					    "pprof::base" };
	struct pb o = { .n = 0 }, m = { .n = 0 }, l = { .n = 0 };

	pb_uint(&m, 1, 1), pb_uint(&m, 2, 2), pb_msg(&o, 1, &m);
	pb_uint(&m, 1, 3), pb_uint(&m, 2, 4), pb_msg(&o, 1, &m);
	for (size_t i = 0; i < nsamples; i++)
		pb_bytes(&o, 2, samples[i].b, samples[i].n);
	for (unsigned f = 1; f <= 2; f++) {
		pb_uint(&m, 1, f), pb_uint(&m, 2, 4 + f), pb_msg(&o, 5, &m);
		pb_uint(&m, 1, 10 * f), pb_uint(&m, 3, 0x1000 * f);
		pb_uint(&l, 1, f), pb_uint(&l, 2, 7), pb_msg(&m, 4, &l);
		pb_msg(&o, 4, &m);
	}
	for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
		pb_bytes(&o, 6, strs[i], strlen(strs[i]));
	memcpy(out, o.b, o.n);
	return o.n;
}

/* Samples decoded from the wire: packed and unpacked repeated fields,
 * unknown fields skipped, ids looked up, and the same as protobuf-c's
 * unpacking gives (a label makes the reader unpack everything). */
static void test_wire_samples(void)
{
	struct pb s[3] = { { .n = 0 } };
	unsigned char buf[8192];
	size_t n;

	/* g <- f, locations one by one, values packed, unknown fields */
	pb_uint(&s[0], 1, 20), pb_uint(&s[0], 1, 10);
	{
		struct pb v = { .n = 0 };
		pb_varint(&v, 3), pb_varint(&v, 300);
		pb_bytes(&s[0], 2, v.b, v.n);
	}
	pb_uint(&s[0], 9, 77);
	s[0].b[s[0].n++] = 10 << 3 | 5, memset(s[0].b + s[0].n, 0, 4), s[0].n += 4;
	/* f alone, locations packed, values one by one */
	{
		struct pb v = { .n = 0 };
		pb_varint(&v, 10);
		pb_bytes(&s[1], 1, v.b, v.n);
	}
	pb_uint(&s[1], 2, 1), pb_uint(&s[1], 2, 100);

	for (int labelled = 0; labelled < 2; labelled++) {
		size_t ns = 2;
		if (labelled) {
			/* a third sample with a label: protobuf-c unpacks it all */
			struct pb lab = { .n = 0 };
			s[2] = s[1];
			pb_uint(&lab, 1, 5), pb_uint(&lab, 3, 1);
			pb_msg(&s[2], 3, &lab);
			ns = 3;
		}
		n = wire_profile(buf, s, ns);
		struct pv_profile *p = pprof_read(buf, n, "wire", false);
		CHECK(p != NULL);
		if (!p)
			continue;
		/* the third is the second again (its label is no thread's):
		 * one sample of twice the values */
		CHECK_EQ(p->nsamples, 2);
		const struct pv_sample *a = &p->samples[0], *b = &p->samples[1];
		CHECK_EQ(a->nlocs, 2);
		CHECK_EQ(a->values[0], 3);
		CHECK_EQ(a->values[1], 300);
		CHECK_STR(fname(p, &p->locations[pv_sample_locs(p, a)[0]], 0), "g");
		CHECK_STR(fname(p, &p->locations[pv_sample_locs(p, a)[1]], 0), "f");
		CHECK_EQ(b->nlocs, 1);
		CHECK_STR(fname(p, &p->locations[pv_sample_locs(p, b)[0]], 0), "f");
		CHECK_EQ(b->values[0], (int64_t)ns - 1);
		CHECK_EQ(b->values[1], 100 * ((int64_t)ns - 1));
		CHECK_EQ(b->thread, PV_NONE);
		pv_profile_free(p);
	}

	/* one value for two sample types; a location that is not there */
	struct pb bad = { .n = 0 };
	pb_uint(&bad, 1, 10), pb_uint(&bad, 2, 5);
	n = wire_profile(buf, &bad, 1);
	nerrors = 0;
	CHECK(pprof_read(buf, n, "wire", false) == NULL);
	CHECK_EQ(nerrors, 1);
	CHECK(strstr(last_msg, "sample 1 has 1 values, the profile has 2 sample types") != NULL);
	bad.n = 0;
	pb_uint(&bad, 1, 10), pb_uint(&bad, 1, 99), pb_uint(&bad, 2, 5), pb_uint(&bad, 2, 6);
	struct pb two[2] = { s[1], bad };
	n = wire_profile(buf, two, 2);
	nerrors = 0;
	CHECK(pprof_read(buf, n, "wire", false) == NULL);
	CHECK_EQ(nerrors, 1);
	CHECK(strstr(last_msg, "sample 2 refers to location 99, which is not in the profile") != NULL);

	/* A negative value outside a comparison's base, from the wire and
	 * unpacked (with a label): refused, naming the value. */
	for (int labelled = 0; labelled < 2; labelled++) {
		bad.n = 0;
		pb_uint(&bad, 1, 10), pb_uint(&bad, 2, (uint64_t)-15), pb_uint(&bad, 2, 5);
		if (labelled) {
			struct pb lab = { .n = 0 };
			pb_uint(&lab, 1, 5), pb_uint(&lab, 3, 1);
			pb_msg(&bad, 3, &lab);
		}
		n = wire_profile(buf, &bad, 1);
		nerrors = 0;
		CHECK(pprof_read(buf, n, "wire", false) == NULL);
		CHECK_EQ(nerrors, 1);
		CHECK(strstr(last_msg, "sample 1 has a negative 'samples' value") != NULL);
	}

	/* A comparison's base (labelled pprof::base) is stored negated: its
	 * own values back; a positive one, or INT64_MIN, whose magnitude has
	 * no int64_t, refused and said for what it is. */
	static const int64_t base_vals[3][2] = { { -2, -200 }, { 3, -100 }, { INT64_MIN, -100 } };
	static const char *const base_says[3] = {
		NULL, "sample 1 has a positive 'samples' value in the base of a comparison",
		"sample 1 has the 'samples' value -9223372036854775808 in the base of a comparison, whose magnitude" };
	for (int k = 0; k < 3; k++) {
		struct pb lab = { .n = 0 };
		bad.n = 0;
		pb_uint(&bad, 1, 10);
		pb_uint(&bad, 2, (uint64_t)base_vals[k][0]), pb_uint(&bad, 2, (uint64_t)base_vals[k][1]);
		pb_uint(&lab, 1, 7), pb_uint(&lab, 2, 5);
		pb_msg(&bad, 3, &lab);
		n = wire_profile(buf, &bad, 1);
		nerrors = 0;
		struct pv_profile *p = pprof_read(buf, n, "wire", false);
		CHECK_EQ(p != NULL, base_says[k] == NULL);
		CHECK_EQ(nerrors, base_says[k] != NULL);
		if (base_says[k])
			CHECK(strstr(last_msg, base_says[k]) != NULL);
		if (p) {
			CHECK(p->diff);
			CHECK_EQ(p->nsamples, 1);
			CHECK_EQ(p->samples[0].values[0], 2);
			CHECK_EQ(p->samples[0].values[1], 200);
			CHECK(p->samples[0].flags & PV_SAMPLE_BASE);
		}
		pv_profile_free(p);
	}

	/* 2^62 and 2^62 - 1 samples add up to INT64_MAX; 2^62 twice is
	 * more than can be counted. */
	for (int over = 0; over < 2; over++) {
		struct pb big[2] = { { .n = 0 }, { .n = 0 } };
		for (int i = 0; i < 2; i++)
			pb_uint(&big[i], 1, 10 * (uint64_t)(i + 1)),
				pb_uint(&big[i], 2, ((uint64_t)1 << 62) - (uint64_t)(i && !over)),
				pb_uint(&big[i], 2, 1);
		n = wire_profile(buf, big, 2);
		struct pv_profile *p = pprof_read(buf, n, "wire", false);
		CHECK(p != NULL);
		nerrors = 0;
		CHECK_EQ(pv_profile_check_sums(p, "wire"), over ? -1 : 0);
		CHECK_EQ(nerrors, over);
		if (over)
			CHECK(strstr(last_msg, "the samples' 'samples' values add up to more than 9223372036854775807") != NULL);
		pv_profile_free(p);
	}
}

/* Locations that name no function (none of their lines does: no line, or
 * function id 0) are read as unsymbolized, in their mapping, or in the one
 * that holds their address when they give none. */
static void test_wire_unnamed(void)
{
	static const char *const strs[] = { "", "samples", "count", "/opt/lib/libfoo.so.1" };
	struct pb o = { .n = 0 }, m = { .n = 0 }, l = { .n = 0 };
	static const uint64_t addr[3] = { 0x7f0000001234, 0x7f0000005678, 0x1000 };

	pb_uint(&m, 1, 1), pb_uint(&m, 2, 2), pb_msg(&o, 1, &m);
	for (unsigned i = 0; i < 3; i++) {
		pb_uint(&m, 1, 10 * (i + 1)), pb_uint(&m, 2, 1), pb_msg(&o, 2, &m);
		pb_uint(&m, 1, 10 * (i + 1));
		if (i == 0)
			pb_uint(&m, 2, 1);
		pb_uint(&m, 3, addr[i]);
		if (i == 1)
			pb_uint(&l, 2, 7), pb_msg(&m, 4, &l); /* a line with function id 0 */
		pb_msg(&o, 4, &m);
	}
	pb_uint(&m, 1, 1), pb_uint(&m, 2, 0x7f0000000000), pb_uint(&m, 3, 0x7f0000010000);
	pb_uint(&m, 4, 0x2000), pb_uint(&m, 5, 3), pb_msg(&o, 3, &m);
	for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
		pb_bytes(&o, 6, strs[i], strlen(strs[i]));

	struct pv_profile *p = pprof_read(o.b, o.n, "unnamed", false);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(p->nsamples, 3);
	for (unsigned i = 0; i < 3 && i < p->nsamples; i++) {
		const struct pv_location *loc = &p->locations[pv_sample_locs(p, &p->samples[i])[0]];
		CHECK_EQ(loc->address, addr[i]);
		CHECK_EQ(loc->nlines, 0);
		if (i < 2) {
			CHECK(loc->mapping < p->nmappings);
			if (loc->mapping < p->nmappings)
				CHECK_STR(pv_str(p, p->mappings[loc->mapping].file), "/opt/lib/libfoo.so.1");
		} else {
			CHECK_EQ(loc->mapping, PV_NONE);
		}
	}
	pv_profile_free(p);
}

int main(void)
{
	pv_error_set_sink(sink);
	test_round_trip();
	test_wire_samples();
	test_wire_unnamed();
	test_segment_times();
	test_gperf();
	test_folded();
	test_merge();
	return check_done("pprof");
}
