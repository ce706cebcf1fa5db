/* test-legacy.c - the readers of pprof's legacy text profiles: heap
 * profiles (jemalloc's heap_v2, gperftools', growth), contention, threads,
 * Go counts, Java's; every header variant, the unsampling, every cut of
 * every file, and the reports' choice of what to weigh by */
#include "calltree.h"
#include "check.h"
#include "error.h"
#include "legacy-read.h"
#include "report-text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char last_msg[1024], last_warning[1024];
static int nerrors, nwarnings;

static void sink(enum pv_level level, const char *msg)
{
	if (level == PV_LEVEL_WARNING) {
		nwarnings++;
		snprintf(last_warning, sizeof last_warning, "%s", msg);
	}
	if (level != PV_LEVEL_ERROR)
		return;
	nerrors++;
	snprintf(last_msg, sizeof last_msg, "%s", msg);
}

static struct pv_profile *read_text(const char *text)
{
	nerrors = nwarnings = 0;
	last_msg[0] = last_warning[0] = '\0';
	if (!legacy_detect((const unsigned char *)text, strlen(text)))
		return NULL;
	return legacy_read((const unsigned char *)text, strlen(text), "t");
}

/* The index of the type named type, checked to be in unit. */
static uint32_t type_of(const struct pv_profile *p, const char *type, const char *unit)
{
	uint32_t i = pv_find_value_type(p, type);

	CHECK(i != PV_NONE);
	if (i != PV_NONE)
		CHECK_STR(pv_str(p, p->sample_types[i].unit), unit);
	return i;
}

/* What pprof and jeprof make of n blocks of s bytes sampled at rate. */
static int64_t scaled(int64_t x, int64_t n, int64_t s, int64_t rate)
{
	double scale = 1 / (1 - exp(-((double)s / (double)n) / (double)rate));
	return (int64_t)((double)x * scale);
}

static const char jemalloc_text[] =
	"heap_v2/524288\n"
	"  t*: 3: 3072 [0: 0]\n"
	"  t0: 3: 3072 [0: 0]\n"
	"@ 0x7f0000001234 0x401234 0x401100 0x400f00\n"
	"  t*: 2: 2048 [0: 0]\n"
	"  t0: 2: 2048 [0: 0]\n"
	"@ 0x7f0000001234 0x401300 0x400f00\n"
	"  t*: 1: 100000 [0: 0]\n"
	"  t1: 1: 100000 [0: 0]\n"
	"\n"
	"MAPPED_LIBRARIES:\n"
	"00400000-00401000 r--p 00000000 08:01 1234                       /bin/app\n"
	"00401000-00402000 r-xp 00001000 08:01 1234                       /bin/app\n"
	"7f0000000000-7f0000010000 r-xp 00000000 08:01 99                 /usr/lib/libjemalloc.so.2\n"
	"7f0000100000-7f0000200000 rw-p 00000000 00:00 0 \n";

static void test_jemalloc(void)
{
	struct pv_profile *p = read_text(jemalloc_text);

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(p->nvalues, 3);
	uint32_t sm = type_of(p, "samples", "count"), no = type_of(p, "inuse_objects", "count"),
		 sp = type_of(p, "inuse_space", "bytes");
	CHECK_EQ(pv_find_value_type(p, "alloc_space"), PV_NONE);
	CHECK_EQ(p->period, 524288);
	CHECK_STR(pv_str(p, p->source_format), "jemalloc heap profile");
	CHECK_STR(pv_str(p, p->program), "/bin/app");
	CHECK_EQ(p->nmappings, 2); /* the executable ones */
	CHECK_EQ(p->nsamples, 2);
	CHECK_EQ(p->samples[0].values[sm], 2);
	CHECK_EQ(p->samples[0].values[no], scaled(2, 2, 2048, 524288));
	CHECK_EQ(p->samples[0].values[sp], scaled(2048, 2, 2048, 524288));
	CHECK_EQ(p->samples[1].values[sm], 1);
	CHECK_EQ(p->samples[1].values[sp], scaled(100000, 1, 100000, 524288));
	/* the allocator's frame left out, the callers moved into their call */
	CHECK_EQ(p->samples[0].nlocs, 3);
	const uint32_t *locs = pv_sample_locs(p, &p->samples[0]);
	CHECK_EQ(p->locations[locs[0]].address, 0x401233);
	CHECK_EQ(p->locations[locs[2]].address, 0x400eff);
	CHECK(p->locations[locs[0]].mapping != PV_NONE);
	pv_profile_free(p);

	/* allocation counts (prof_accum): all six types */
	p = read_text("heap_v2/1024\n  t*: 1: 2048 [4: 8192]\n@ 0x401234\n  t*: 1: 2048 [4: 8192]\n");
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nvalues, 6);
		CHECK_EQ(p->samples[0].values[type_of(p, "alloc_samples", "count")], 4);
		CHECK_EQ(p->samples[0].values[type_of(p, "alloc_space", "bytes")], scaled(8192, 4, 8192, 1024));
		CHECK_EQ(p->samples[0].values[type_of(p, "alloc_objects", "count")], scaled(4, 4, 8192, 1024));
		CHECK_EQ(p->samples[0].values[type_of(p, "inuse_space", "bytes")], scaled(2048, 1, 2048, 1024));
		pv_profile_free(p);
	}
	/* every byte sampled (lg_prof_sample:0): nothing to unsample, no
	 * sampled count apart */
	p = read_text("heap_v2/1\n@ 0x401234\n  t*: 3: 30 [0: 0]\n");
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nvalues, 2);
		CHECK_EQ(p->samples[0].values[type_of(p, "inuse_space", "bytes")], 30);
		pv_profile_free(p);
	}
	/* damaged: a stack without its counts, a line of neither, a rate of 0 */
	static const char *const bad[] = {
		"heap_v2/1024\n@ 0x401234\n@ 0x401235\n  t*: 1: 1 [0: 0]\n",
		"heap_v2/1024\n@ 0x401234\n  t*: 1 1 [0: 0]\n",
		"heap_v2/1024\n@ 0x401234\n  t*: 0: 10 [0: 0]\n",
		"heap_v2/0\n",
		"heap_v2/x\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		p = read_text(bad[i]);
		CHECK(p == NULL);
		CHECK_EQ(nerrors, 1);
		pv_profile_free(p);
	}
	CHECK_CONTAINS(last_msg, "RATE a number of bytes");
}

/* Dumps cut short: read up to their last whole record, the cut one
 * dropped, and the totals the header promised said beside those read. */
static void test_heap_truncated(void)
{
	static const char gperf[] = "heap profile:    3:   3072 [   3:   3072] @ heapprofile\n"
				    "     2:   2048 [   2:   2048] @ 0x401234 0x401100\n";
	static const char gperf_cut[] = "     1:   1024 [   1:   1024] @ 0x4013";
	static const char je[] = "heap_v2/1\n  t*: 5: 50 [0: 0]\n@ 0x401234\n  t*: 3: 30 [0: 0]\n";
	static const char je_cut[] = "@ 0x401300\n";
	char text[512];
	struct pv_profile *p;

	snprintf(text, sizeof text, "%s%s", gperf, gperf_cut);
	p = read_text(text);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 1);
		CHECK_EQ(p->dropped_bytes, strlen(gperf_cut));
		pv_profile_free(p);
	}
	CHECK_EQ(nwarnings, 1);
	CHECK_CONTAINS(last_warning, "heap dump truncated: its header promises 3 blocks / 3.0 KiB in use, read 2 / 2.0 KiB");
	/* the same record whole, and a memory map after it: no word */
	snprintf(text, sizeof text, "%s%s0x401300\nMAPPED_LIBRARIES:\n", gperf, gperf_cut);
	p = read_text(text);
	CHECK(p != NULL && p->nsamples == 2 && p->dropped_bytes == 0);
	CHECK_EQ(nwarnings, 0);
	pv_profile_free(p);

	/* jemalloc's: the header's "t*:" totals, a stack cut before its counts */
	snprintf(text, sizeof text, "%s%s", je, je_cut);
	p = read_text(text);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 1);
		CHECK_EQ(p->dropped_bytes, strlen(je_cut));
		pv_profile_free(p);
	}
	CHECK_EQ(nwarnings, 1);
	CHECK_CONTAINS(last_warning, "promises 5 blocks / 50 B in use, read 3 / 30 B");
	snprintf(text, sizeof text, "%s%s  t*: 2: 20 [0: 0]\n", je, je_cut);
	p = read_text(text);
	CHECK(p != NULL && p->nsamples == 2 && p->dropped_bytes == 0);
	CHECK_EQ(nwarnings, 0);
	pv_profile_free(p);
	/* records that add up to more than the header: damaged, said */
	snprintf(text, sizeof text, "%s%s  t*: 9: 90 [0: 0]\n", je, je_cut);
	p = read_text(text);
	CHECK(p != NULL);
	CHECK_EQ(nwarnings, 1);
	CHECK_CONTAINS(last_warning, "the file is damaged");
	pv_profile_free(p);
}

/* The "heap profile:" header's variants: which are sampled, at what rate,
 * with allocation counts or not. */
static void test_heap_headers(void)
{
	static const struct {
		const char *type;
		int64_t rate;          /* 0: an error */
		bool growth;
	} h[] = {
		{ "heap_v2/524288", 524288, false }, { "heapz_v2/524288", 524288, false },
		{ "heap/1048576", 524288, false },   { "heapprofile", 1, false },
		{ "growthz", 1, true },              { "growth", 1, true },
		{ "fragmentationz", 1, true },       { "heap_v3/1", 0, false },
		{ "cpu", 0, false },
	};
	char text[512];

	for (size_t i = 0; i < sizeof h / sizeof h[0]; i++) {
		snprintf(text, sizeof text,
			 "heap profile:    2:   4096 [   2:   4096] @ %s\n"
			 "     2:   4096 [   2:   4096] @ 0x401234 0x401100\n",
			 h[i].type);
		struct pv_profile *p = read_text(text);
		if (!h[i].rate) {
			CHECK(p == NULL);
			CHECK_EQ(nerrors, 1);
			CHECK_CONTAINS(last_msg, "line 1");
			continue;
		}
		CHECK(p != NULL);
		if (!p)
			continue;
		const char *space = h[i].growth ? "space" : "inuse_space";
		int64_t v = p->samples[0].values[type_of(p, space, "bytes")];
		CHECK_EQ(v, h[i].rate > 1 ? scaled(4096, 2, 4096, h[i].rate) : 4096);
		CHECK_EQ(pv_find_value_type(p, "samples") != PV_NONE, h[i].rate > 1);
		/* the same allocation counts as the in-use ones: none apart */
		CHECK_EQ(pv_find_value_type(p, "alloc_space"), PV_NONE);
		CHECK_EQ(p->period, h[i].rate);
		CHECK_EQ(p->samples[0].nlocs, 2);
		CHECK_EQ(p->locations[pv_sample_locs(p, &p->samples[0])[0]].address, 0x401233);
		pv_profile_free(p);
	}
	/* allocation counts of their own, the Go runtime's negative in-use
	 * counts, blank and comment lines, and no header type */
	struct pv_profile *p = read_text("heap profile: 1: 10 [5: 50] @ heapprofile\n"
					 "\n# a comment\n1: 10 [5: 50] @ 0x10 0x20\n"
					 "-1: -10 [0: 0] @ 0x30\n");
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nvalues, 4);
		CHECK_EQ(p->samples[0].values[type_of(p, "alloc_objects", "count")], 5);
		CHECK_EQ(p->samples[1].values[type_of(p, "inuse_space", "bytes")], -10);
		pv_profile_free(p);
	}
	static const char *const bad[] = {
		"heap profile: 1: 10 [1: 10]\n",
		"heap profile: 1: 10 [1: 10] @ heapprofile\n1: 10 @ 0x10\n",
		"heap profile: 1: 10 [1: 10] @ heapprofile\n0: 10 [0: 0] @ 0x10\n",
		"heap profile: 1: 10 [1: 10] @ heapprofile\n1: 99999999999999999999 [0: 0] @ 0x10\n",
		"heap profile: 1: 10 [1: 10] @ heapprofile\n1: 10 [0: 0] @ 0x11112222333344445555\n",
		"heap profile: 1: 10 [1: 10] @ heap_v2/4\n1: 1 [0: 0] @ 0x10\n0 @ 1\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		p = read_text(bad[i]);
		CHECK(p == NULL);
		CHECK_EQ(nerrors, 1);
		pv_profile_free(p);
	}
}

static const char contention_text[] =
	"--- contentionz 1 ---\n"
	"cycles/second = 2000000000\n"
	"sampling period = 10\n"
	"ms since reset = 1500\n"
	"discarded samples = 0\n"
	"  4000 3 @ 0x401234 0x401100\n"
	"  100 1 @ 0x401300\n"
	"--- Memory map: ---\n"
	"  00400000-00402000: /bin/app\n";

static const char java_contention_text[] =
	"--- contentionz 1 ---\n"
	"format = java\n"
	"resolution = microseconds\n"
	"sampling period = 100\n"
	"ms since reset = 10\n"
	"  5 2 @ 0x1 0x2\n"
	"\n"
	" 0x1 com.example.Lock.wait (Lock.java:12)\n"
	" 0x2 VM\n";

static const char thread_text[] =
	"--- threadz 1 ---\n"
	"\n"
	"--- Thread 7f79 (name: main/14748) stack: ---\n"
	"  PC:  0x00401234: helper(arg *)\n"
	"  0x00401100: main\n"
	"--- Thread 7f7a (name: worker/14751) stack: ---\n"
	"  same as previous thread\n"
	"--- Thread 7f7b (name: worker/14752) stack: ---\n"
	"  PC: 0x401300 0x401300 0x401100\n"
	"--- Memory map: ---\n"
	"  00400000-00402000: /bin/app\n";

static const char count_text[] =
	"threadcreate profile: total 3\n"
	"2 @ 0x401234 0x401100\n"
	"1 @ 0x401300\n";

static const char java_heap_text[] =
	"--- heapz 1 ---\n"
	"format = java\n"
	"resolution = bytes\n"
	"          7048     1 @ 0x1 0x2\n"
	"           100     4 @ 0x3\n"
	"\n"
	" 0x1 com.example.Foo.bar (Foo.java:42)\n"
	" 0x2 com.example.Main.main (/src/Main.java)\n"
	" 0x3 generated stub/JIT\n"
	" 0x9 com.example.Unused.x (Unused.java:1)\n";

static void test_others(void)
{
	struct pv_profile *p = read_text(contention_text);

	CHECK(p != NULL);
	if (p) {
		uint32_t c = type_of(p, "contentions", "count"), d = type_of(p, "delay", "nanoseconds");
		/* cycles at 2 GHz in ns, both times the sampling period */
		CHECK_EQ(p->samples[0].values[c], 30);
		CHECK_EQ(p->samples[0].values[d], 20000);
		CHECK_EQ(p->duration_ns, 1500000000);
		CHECK_EQ(p->nmappings, 1);
		pv_profile_free(p);
	}
	p = read_text(java_contention_text);
	CHECK(p != NULL);
	if (p) {
		CHECK_STR(pv_str(p, p->source_format), "Java contention profile");
		/* the delay in nanoseconds: microseconds times the period */
		CHECK_EQ(p->samples[0].values[type_of(p, "delay", "nanoseconds")], 5 * 100 * 1000);
		CHECK_EQ(p->samples[0].values[type_of(p, "contentions", "count")], 200);
		const struct pv_location *l = &p->locations[pv_sample_locs(p, &p->samples[0])[0]];
		CHECK_EQ(l->nlines, 1);
		const struct pv_function *f = &p->functions[pv_location_lines(p, l)[0].function];
		CHECK_STR(pv_str(p, f->name), "com.example.Lock.wait");
		CHECK_STR(pv_str(p, f->filename), "Lock.java");
		CHECK_EQ(pv_location_lines(p, l)[0].line, 12);
		pv_profile_free(p);
	}
	p = read_text(thread_text);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 2);
		CHECK_EQ(p->samples[0].values[0], 2); /* and the one "same as previous" */
		/* the leaf as it is, the callers moved back; a leaf seen twice once */
		CHECK_EQ(p->locations[pv_sample_locs(p, &p->samples[0])[0]].address, 0x401234);
		CHECK_EQ(p->locations[pv_sample_locs(p, &p->samples[0])[1]].address, 0x4010ff);
		CHECK_EQ(p->samples[1].nlocs, 2);
		CHECK_EQ(pv_total(p, 0), 3);
		pv_profile_free(p);
	}
	p = read_text(count_text);
	CHECK(p != NULL);
	if (p) {
		type_of(p, "threadcreate", "count");
		CHECK_EQ(pv_total(p, 0), 3);
		CHECK_EQ(p->locations[pv_sample_locs(p, &p->samples[0])[0]].address, 0x401233);
		pv_profile_free(p);
	}
	p = read_text(java_heap_text);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->samples[0].values[type_of(p, "inuse_space", "bytes")],
			 scaled(7048, 1, 7048, 524288));
		CHECK_EQ(p->samples[1].values[type_of(p, "inuse_objects", "count")],
			 scaled(4, 4, 100, 524288));
		CHECK_EQ(p->samples[1].values[type_of(p, "samples", "count")], 4);
		const struct pv_location *l = &p->locations[pv_sample_locs(p, &p->samples[0])[1]];
		const struct pv_function *f = &p->functions[pv_location_lines(p, l)[0].function];
		CHECK_STR(pv_str(p, f->name), "com.example.Main.main");
		CHECK_STR(pv_str(p, f->filename), "Main.java");
		l = &p->locations[pv_sample_locs(p, &p->samples[1])[0]];
		CHECK_STR(pv_str(p, p->functions[pv_location_lines(p, l)[0].function].name), "STUB");
		pv_profile_free(p);
	}
	/* not these formats */
	CHECK(!legacy_detect((const unsigned char *)"main;f 1\n", 9));
	CHECK(!legacy_detect((const unsigned char *)"x profile: total 7 more\n", 24));
	CHECK(!legacy_detect((const unsigned char *)"main;heap profile: f 3\n", 23));
	CHECK(legacy_detect((const unsigned char *)"\n# c\nheap_v2/1", 14));
	/* a NUL byte, an attribute of no contention profile */
	static const char nul[] = "heap_v2/1\n@ 0x1\0\n";
	nerrors = 0;
	CHECK(legacy_read((const unsigned char *)nul, sizeof nul - 1, "t") == NULL);
	CHECK_EQ(nerrors, 1);
	p = read_text("--- contentionz 1 ---\ncolour = blue\n");
	CHECK(p == NULL && nerrors == 1);
	p = read_text("--- threadz 1 ---\n--- not a thread ---\n");
	CHECK(p == NULL && nerrors == 1);
}

/* Every cut of every file: a profile that is valid, or one error. */
static void test_cuts(void)
{
	static const char *const texts[] = {
		jemalloc_text, contention_text, java_contention_text, thread_text, count_text,
		java_heap_text,
		"heap profile:   3:   3072 [   5:   5120] @ heap_v2/524288\n"
		"     2:   2048 [   3:   3072] @ 0x401234 0x401100\n"
		"     1:   1024 [   2:   2048] @ 0x401300\n"
		"--- Memory map: ---\n  source=/opt\n  00400000-00402000: $source/app\n",
	};
	size_t cuts = 0, read = 0;

	for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
		size_t n = strlen(texts[i]);
		for (size_t k = 1; k <= n; k++) {
			const unsigned char *b = (const unsigned char *)texts[i];
			if (!legacy_detect(b, k))
				continue;
			nerrors = 0;
			struct pv_profile *p = legacy_read(b, k, "t");
			cuts++;
			if (p) {
				read++;
				CHECK_EQ(nerrors, 0);
				CHECK_EQ(pv_profile_validate(p, "t"), 0);
			} else {
				CHECK_EQ(nerrors, 1);
			}
			pv_profile_free(p);
		}
	}
	CHECK(cuts > 1000);
	CHECK(read > 0);
	/* the short map: $source replaced */
	struct pv_profile *p = read_text(texts[6]);
	CHECK(p && p->nmappings == 1);
	if (p)
		CHECK_STR(pv_str(p, p->mappings[0].file), "/opt/app");
	pv_profile_free(p);
}

/* What the reports weigh a heap profile by: the estimated bytes in use
 * unless told, the sampled count beside them (the noise is its); any
 * type by name. */
static void test_weights(void)
{
	struct pv_profile *p = read_text("heap_v2/1024\n  t*: 1: 2048 [4: 8192]\n"
					 "@ 0x401234\n  t*: 1: 2048 [4: 8192]\n"
					 "@ 0x401300\n  t*: 3: 3072 [3: 3072]\n");
	struct calltree *t;

	CHECK(p != NULL);
	if (!p)
		return;
	t = calltree_build(p, NULL);
	CHECK(t != NULL);
	if (t) {
		CHECK_STR(calltree_weight_name(t), "inuse_space");
		CHECK_EQ(calltree_value_unit(t), CT_UNIT_BYTES);
		CHECK_EQ(t->nodes[0].count, 4); /* blocks sampled */
		CHECK_EQ(t->nodes[0].value, scaled(2048, 1, 2048, 1024) + scaled(3072, 3, 3072, 1024));
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		struct pv_report_options o = { 0 };
		report_header(f, &(struct pv_report_ctx){ .o = &o, .t = t });
		fclose(f);
		CHECK_CONTAINS(text, "profile: inuse_space ");
		CHECK_CONTAINS(text, " in 4 samples (a sample every 1024 bytes on average)");
		CHECK(!strstr(text, "0.0 ms") && !strstr(text, "threads"));
		free(text);
		calltree_free(t);
	}
	static const struct {
		const char *index, *count;
		enum ct_unit unit;
	} w[] = {
		{ "alloc_space", "alloc_samples", CT_UNIT_BYTES },
		{ "alloc_objects", "alloc_samples", CT_UNIT_COUNT },
		{ "inuse_objects", "samples", CT_UNIT_COUNT },
		{ "inuse_space", "samples", CT_UNIT_BYTES },
		{ "samples", "samples", CT_UNIT_SAMPLES },
		{ "alloc_samples", "alloc_samples", CT_UNIT_SAMPLES },
	};
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
		struct ct_options co = { .sample_index = w[i].index };
		t = calltree_build(p, &co);
		CHECK(t != NULL);
		if (!t)
			continue;
		CHECK_EQ(calltree_value_unit(t), w[i].unit);
		CHECK_EQ(t->v_count, pv_find_value_type(p, w[i].count));
		calltree_free(t);
	}
	pv_profile_free(p);
}

int main(void)
{
	pv_error_set_sink(sink);
	test_jemalloc();
	test_heap_headers();
	test_others();
	test_cuts();
	test_heap_truncated();
	test_weights();
	return check_done("legacy");
}
