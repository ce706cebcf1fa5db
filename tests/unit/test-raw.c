/* test-raw.c - the raw trace reader: round trip, truncation, garbage */
#include "check.h"
#include "error.h"
#include "rawbuild.h"
#include "raw-cpu.h"
#include "raw-read.h"

static int nerrors, nwarnings;
static char last_msg[1024];

static void sink(enum pv_level level, const char *msg)
{
	if (level == PV_LEVEL_ERROR)
		nerrors++;
	else if (level == PV_LEVEL_WARNING)
		nwarnings++;
	snprintf(last_msg, sizeof last_msg, "%s", msg);
}

static void reset_msgs(void)
{
	nerrors = nwarnings = 0;
	last_msg[0] = '\0';
}

/* Is the CPU time the reader found in no sample worth a word (raw-cpu.h)?
 * The words themselves into say.  (The reports say it when the profile
 * knows its threads' CPU time: analyzer's report_unsampled.) */
static bool unsampled_said(const struct pv_profile *p, char *say, size_t n)
{
	return raw_cpu_unsampled_say(say, n, (uint64_t)p->unsampled_cpu_ns, (uint64_t)p->threads_cpu_ns,
				     p->unsampled_threads, p->nthreads, p->lost);
}

#define MAIN_LEAF 0x401010
#define MID_RET 0x402021
#define ROOT_RET 0x403031

/* The reference trace, with a header of the given version;
 * record_ends[] gets the end offset of every record. */
static size_t build_version(struct rawbuf *r, size_t *record_ends, size_t *nrec, bool finish,
			    uint32_t version)
{
	static const uint64_t st1[] = { MAIN_LEAF, MID_RET, ROOT_RET };
	static const uint64_t st2[] = { 0x401500, ROOT_RET };
	size_t n = 0, samples = 0;

	if (version == 1)
		rb_header(r, "/nonexistent/app", 10000000);
	else
		rb_header_v2(r, "/nonexistent/app", 10000000, 0, RAW_MACHINE_X86_64, RAW_NREGS);
	if (version == 3) /* the same header; its samples may be short */
		memcpy(r->b + offsetof(struct raw_header, version), &version, sizeof version);
	rb_mapping(r, 0x400000, 0x500000, 0, "/nonexistent/app");
	record_ends[n++] = r->len;
	rb_mapping(r, 0x7f0000000000, 0x7f0000001000, 0, "[vdso]");
	record_ends[n++] = r->len;
	rb_thread(r, 100, "main");
	record_ends[n++] = r->len;
	rb_thread(r, 101, "worker");
	record_ends[n++] = r->len;
	/* A sample may refer to a stack written after it. */
	rb_sample(r, 100, 7, NULL, 0, 1010000000, 10000000);
	record_ends[n++] = r->len;
	samples++;
	rb_stack(r, 7, st1, 3);
	record_ends[n++] = r->len;
	for (int i = 0; i < 5; i++) {
		if (version >= 3)
			rb_sample_short(r, 100, 7, 1020000000 + i * 10000000ULL, 12000000);
		else
			rb_sample(r, 100, 7, NULL, 0, 1020000000 + i * 10000000ULL, 12000000);
		record_ends[n++] = r->len;
		samples++;
	}
	for (int i = 0; i < 4; i++) {
		rb_sample(r, 101, 0, st2, 2, 1030000000 + i * 10000000ULL, 8000000);
		record_ends[n++] = r->len;
		samples++;
	}
	rb_lost(r, 3);
	record_ends[n++] = r->len;
	if (finish) {
		rb_end(r, 1100000000, samples, 3);
		record_ends[n++] = r->len;
	}
	*nrec = n;
	return samples;
}

static size_t build(struct rawbuf *r, size_t *record_ends, size_t *nrec, bool finish)
{
	return build_version(r, record_ends, nrec, finish, 1);
}

/* An older trace (no short-thread threshold): the samples keep their
 * recorded weights, and the exit records only say how much they miss. */
static void test_unsampled_legacy(void)
{
	struct rawbuf r = { 0 };
	size_t ends[64], nrec;
	struct pv_profile *p;
	char say[512];

	build(&r, ends, &nrec, false);
	/* main's samples carry 70 ms, worker's 32 ms (period 10 ms) */
	rb_thread_exit(&r, 100, 1090000000, 75000000);  /* 5 ms after its last sample */
	rb_thread_exit(&r, 101, 1090000000, 200000000); /* missed: 168 ms */
	rb_end(&r, 1100000000, 10, 3);
	reset_msgs();
	p = raw_read(r.b, r.len, "t.raw", NULL);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->threads[0].cpu_ns, 75000000);
		CHECK_EQ(p->threads_cpu_ns, 275000000);
		CHECK_EQ(p->unsampled_cpu_ns, 5000000 + 168000000);
		CHECK_EQ(pv_total(p, 1), 102000000);
		CHECK(unsampled_said(p, say, sizeof say));
		pv_profile_free(p);
	}
	free(r.b);

	/* Without exit records nothing is known. */
	r = (struct rawbuf){ 0 };
	build(&r, ends, &nrec, true);
	p = raw_read(r.b, r.len, "t.raw", NULL);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->threads_cpu_ns, 0);
		CHECK_EQ(p->unsampled_cpu_ns, 0);
		CHECK_EQ(p->unsampled_threads, 0);
		CHECK(!unsampled_said(p, say, sizeof say));
		pv_profile_free(p);
	}
	free(r.b);
}

/* The sum of the CPU time of thread index th's samples. */
static int64_t thread_cpu(const struct pv_profile *p, uint32_t th)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->nsamples; i++)
		if (p->samples[i].thread == th)
			sum += p->samples[i].values[1];
	return sum;
}

/* What each sample stands for (raw-cpu.h): a long thread's samples share
 * its CPU time by their weights, exactly; short threads share theirs
 * equally; a thread never sampled is said to be. */
static void test_cpu_shares(void)
{
	static const uint64_t st[] = { MAIN_LEAF, ROOT_RET };
	struct rawbuf r = { 0 };
	struct pv_profile *p;
	uint64_t short_cpu = 0;
	char say[512];

	/* period 4 ms; threads under 16 ms of CPU time are short */
	rb_header_short(&r, "/nonexistent/app", 4000000, 16000);
	rb_mapping(&r, 0x400000, 0x500000, 0, "/nonexistent/app");
	/* main: 2 ms before profiling, samples of 4 + 4 + 2 ms, 13 ms at
	 * its end: its 11 ms of profiled time... is short */
	rb_thread_cpu(&r, 100, "main", 2000000);
	/* long: 100 ms, samples weighing 30, 30 and 20 ms */
	rb_thread(&r, 101, "long");
	rb_sample(&r, 101, 0, st, 2, 1100000000, 30000000);
	rb_sample(&r, 101, 0, st, 2, 1200000000, 30000000);
	rb_sample(&r, 101, 0, st, 2, 1300000000, 20000000);
	rb_thread_exit(&r, 101, 1400000000, 100000000);
	/* 30 short threads of 1..3 ms, every third one sampled once, with
	 * whatever weight: their 60 ms go equally to their 10 samples; the
	 * first is also a reused id */
	for (uint32_t i = 0; i < 30; i++) {
		uint32_t tid = i == 0 ? 101 : 200 + i;
		uint64_t cpu = 1000000 + (i % 3) * 1000000;
		rb_thread(&r, tid, "task");
		if (i % 3 == 0)
			rb_sample(&r, tid, 0, st, 2, 1500000000 + i, 777 + i);
		rb_thread_exit(&r, tid, 1500000000 + i, cpu);
		short_cpu += cpu;
	}
	/* a long thread that blocked the signal: 50 ms, never sampled */
	rb_thread(&r, 300, "blocked");
	rb_thread_exit(&r, 300, 1600000000, 50000000);
	/* main's samples and its end */
	rb_sample(&r, 100, 0, st, 2, 1700000000, 4000000);
	rb_sample(&r, 100, 0, st, 2, 1700000001, 4000000);
	rb_thread_exit(&r, 100, 1800000000, 13000000);
	rb_end(&r, 1900000000, 15, 0);

	reset_msgs();
	p = raw_read(r.b, r.len, "t.raw", NULL);
	CHECK(p != NULL);
	if (!p) {
		free(r.b);
		return;
	}
	CHECK_EQ(nerrors, 0);
	CHECK_EQ(p->nsamples, 15);
	CHECK_EQ(short_cpu, 60000000);
	/* the first long thread: 30 + 30 + 20 scaled to 100 ms exactly */
	CHECK_EQ(p->samples[0].values[1], 37500000);
	CHECK_EQ(p->samples[1].values[1], 37500000);
	CHECK_EQ(p->samples[2].values[1], 25000000);
	/* the short ones, main (11 ms) among them: 71 ms in 12 samples */
	{
		int64_t sum = 0;
		for (size_t i = 3; i < 15; i++) {
			CHECK(p->samples[i].values[1] >= 71000000 / 12 - 1 &&
			      p->samples[i].values[1] <= 71000000 / 12 + 1);
			sum += p->samples[i].values[1];
		}
		CHECK_EQ(sum, 71000000);
	}
	CHECK_EQ(pv_total(p, 1), 171000000);
	CHECK_EQ(p->threads_cpu_ns, 221000000);
	CHECK_EQ(p->unsampled_cpu_ns, 50000000);
	CHECK_EQ(p->unsampled_threads, 1);
	CHECK(unsampled_said(p, say, sizeof say));
	CHECK(strstr(say, "1 of 32 threads were never sampled") != NULL);
	/* thread 101 is two threads: 100 ms and a 1 ms task */
	{
		uint32_t th = PV_NONE;
		for (size_t i = 0; i < p->nthreads; i++)
			if (p->threads[i].tid == 101)
				th = (uint32_t)i;
		CHECK(th != PV_NONE);
		if (th != PV_NONE) {
			CHECK_EQ(p->threads[th].cpu_ns, 101000000);
			CHECK(thread_cpu(p, th) > 100000000);
		}
	}
	pv_profile_free(p);
	free(r.b);

	/* No short thread sampled at all: their time is in no sample, but
	 * 5 ms at a 4 ms period is too brief for that to say anything
	 * (test-rawcpu.c has the rule). */
	r = (struct rawbuf){ 0 };
	rb_header_short(&r, "/nonexistent/app", 4000000, 16000);
	rb_thread(&r, 100, "main");
	rb_sample(&r, 100, 0, st, 2, 1100000000, 40000000);
	rb_thread_exit(&r, 100, 1200000000, 40000000);
	for (uint32_t i = 0; i < 5; i++) {
		rb_thread(&r, 200 + i, "task");
		rb_thread_exit(&r, 200 + i, 1300000000, 1000000);
	}
	p = raw_read(r.b, r.len, "t.raw", NULL);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(pv_total(p, 1), 40000000);
		CHECK_EQ(p->unsampled_cpu_ns, 0);
		CHECK_EQ(p->unsampled_threads, 0);
		CHECK(!unsampled_said(p, say, sizeof say));
		pv_profile_free(p);
	}
	free(r.b);

	/* A 40-byte thread record of an older collector is still read. */
	r = (struct rawbuf){ 0 };
	rb_header(&r, "/nonexistent/app", 4000000);
	rb_thread_v1(&r, 100, "old");
	rb_sample(&r, 100, 0, st, 2, 1100000000, 4000000);
	rb_end(&r, 1200000000, 1, 0);
	reset_msgs();
	p = raw_read(r.b, r.len, "t.raw", NULL);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(nwarnings, 0);
		CHECK_EQ(p->nthreads, 1);
		CHECK(strcmp(pv_str(p, p->threads[0].name), "old") == 0);
		CHECK_EQ(pv_total(p, 1), 4000000);
		pv_profile_free(p);
	}
	free(r.b);
}

/* A damaged sample weight (near INT64_MAX, more than the time since the
 * start): the sample is dropped and its record counted as damaged, the
 * others keep their time, and no sum goes negative. */
static void test_damaged_weight(void)
{
	struct rawbuf r = { 0 };
	uint64_t st[2] = { 0x401000, 0x402000 };
	struct pv_profile *p;

	rb_header(&r, "/nonexistent/app", 10000000);
	rb_sample(&r, 100, 0, st, 2, 1100000000, 10000000);
	rb_sample(&r, 100, 0, st, 2, 1200000000, INT64_MAX - 1000);
	rb_sample(&r, 100, 0, st, 2, 1300000000, 10000000);
	/* 0.35 s since the start: a weight of 0.3 s is time, 0.5 s is not */
	rb_sample(&r, 100, 0, st, 2, 1350000000, 300000000);
	rb_sample(&r, 100, 0, st, 2, 1350000001, 500000000);
	rb_end(&r, 1400000000, 5, 0);
	reset_msgs();
	p = raw_read(r.b, r.len, "t.raw", NULL);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 3);
		CHECK_EQ(pv_total(p, 0), 3);
		CHECK_EQ(pv_total(p, 1), 320000000);
		CHECK_EQ(p->dropped_bytes, 2 * (sizeof(struct raw_sample) + 16));
		CHECK_EQ(nwarnings, 1);
		CHECK_EQ(pv_profile_validate(p, "t.raw"), 0);
		pv_profile_free(p);
	}
	free(r.b);
}

static void test_round_trip(uint32_t version)
{
	struct rawbuf r = { 0 };
	size_t ends[64], nrec;
	size_t nsamples = build_version(&r, ends, &nrec, true, version);
	struct pv_profile *p;

	reset_msgs();
	p = raw_read(r.b, r.len, "t.raw", NULL);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(nerrors, 0);
	CHECK_EQ(nwarnings, 0);
	CHECK(p->finished);
	CHECK_EQ(p->nsamples, nsamples);
	CHECK_EQ(p->lost, 3);
	CHECK_EQ(p->pid, 4242);
	CHECK_STR(pv_str(p, p->program), "/nonexistent/app");
	CHECK_EQ(p->duration_ns, 100000000);
	CHECK_EQ(p->period, 10000000);
	CHECK_EQ(p->nvalues, 2);
	CHECK_STR(pv_str(p, p->sample_types[0].type), "samples");
	CHECK_STR(pv_str(p, p->sample_types[1].type), "cpu");
	CHECK_STR(pv_str(p, p->sample_types[1].unit), "nanoseconds");
	CHECK_EQ(pv_total(p, 0), 10);
	CHECK_EQ(pv_total(p, 1), 10000000 + 5 * 12000000 + 4 * 8000000);
	CHECK_EQ(p->nmappings, 2);
	CHECK_EQ(p->mappings[1].kind, PV_MAP_VDSO);
	CHECK_EQ(p->nthreads, 2);
	CHECK_STR(pv_str(p, p->threads[0].name), "main");
	CHECK_STR(pv_str(p, p->threads[1].name), "worker");
	CHECK(pv_profile_validate(p, "t.raw") == 0);

	/* The first sample: leaf as recorded, callers one byte back. */
	const struct pv_sample *s = &p->samples[0];
	CHECK_EQ(s->nlocs, 3);
	const uint32_t *locs = pv_sample_locs(p, s);
	CHECK_EQ(p->locations[locs[0]].address, MAIN_LEAF);
	CHECK_EQ(p->locations[locs[1]].address, MID_RET - 1);
	CHECK_EQ(p->locations[locs[2]].address, ROOT_RET - 1);
	CHECK_EQ(p->locations[locs[0]].mapping, 0);
	CHECK_EQ(p->threads[s->thread].tid, 100);
	/* Frame-pointer stacks: the second frame is only a candidate. */
	CHECK(s->flags & PV_SAMPLE_LEAF_CANDIDATE);
	/* Samples of one stack share its stored locations. */
	CHECK_EQ(p->samples[1].loc_off, s->loc_off);
	/* ROOT_RET - 1 is one location whichever stack it came from. */
	const struct pv_sample *w = &p->samples[6];
	CHECK_EQ(pv_sample_locs(p, w)[1], locs[2]);
	CHECK_EQ(p->threads[w->thread].tid, 101);
	pv_profile_free(p);
	free(r.b);
}

/* Cut the trace at every byte: the reader keeps every whole record before
 * the cut, reports what it dropped, and never fails past the header. */
static void test_truncation(uint32_t version)
{
	struct rawbuf r = { 0 };
	size_t ends[64], nrec;
	build_version(&r, ends, &nrec, true, version);
	size_t header = ends[0] - (sizeof(struct raw_mapping) + raw_pad(strlen("/nonexistent/app") + 1));
	int bad = 0;

	for (size_t cut = 0; cut <= r.len; cut++) {
		unsigned char *copy = malloc(cut ? cut : 1);
		memcpy(copy, r.b, cut);
		reset_msgs();
		struct pv_profile *p = raw_read(copy, cut, "cut.raw", NULL);
		if (cut < header) {
			if (p || nerrors != 1)
				bad++;
		} else {
			size_t whole = header, k;
			for (k = 0; k < nrec && ends[k] <= cut; k++)
				whole = ends[k];
			if (!p) {
				bad++;
			} else {
				/* The sample before its stack (record 5) counts only
				 * once the stack record is there. */
				size_t expect = 0;
				if (k >= 6)
					expect = 1 + (k > 6 ? (k - 6 < 9 ? k - 6 : 9) : 0);
				/* warnings: the bytes dropped, or else an unfinished
				 * trace with samples (one without is said by the
				 * header alone); and the sample whose stack is
				 * missing (record 5) */
				int warn = cut == r.len ? 0 : (cut != whole || expect > 0) + (k == 5);

				if (p->nsamples != expect || p->dropped_bytes != cut - whole ||
				    p->finished != (cut == r.len) || nwarnings != warn ||
				    pv_profile_validate(p, "cut") != 0) {
					if (bad < 5)
						fprintf(stderr, "cut %zu: samples %zu (want %zu) dropped %" PRIu64
							" (want %zu) warnings %d: %s\n", cut, p->nsamples, expect,
							p->dropped_bytes, cut - whole, nwarnings, last_msg);
					bad++;
				}
			}
		}
		pv_profile_free(p);
		free(copy);
	}
	CHECK_EQ(bad, 0);
	free(r.b);
}

/* A trace whose writer died: zeros after the last record. */
static void test_unfinished(void)
{
	struct rawbuf r = { 0 };
	size_t ends[64], nrec;
	size_t nsamples = build(&r, ends, &nrec, false);

	rb_zero(&r, 4096);
	reset_msgs();
	struct pv_profile *p = raw_read(r.b, r.len, "killed.raw", NULL);
	CHECK(p != NULL);
	if (p) {
		CHECK(!p->finished);
		CHECK_EQ(p->nsamples, nsamples);
		CHECK_EQ(p->dropped_bytes, 0);
		CHECK_EQ(p->lost, 3);
		CHECK_EQ(nwarnings, 1);
		CHECK_CONTAINS(last_msg, "not finished");
	}
	pv_profile_free(p);
	free(r.b);
}

static void test_garbage(void)
{
	struct rawbuf r = { 0 };
	size_t ends[64], nrec;
	unsigned char junk[4096];
	uint64_t x = 88172645463325252ULL;

	for (size_t i = 0; i < sizeof junk; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		junk[i] = (unsigned char)x;
	}
	reset_msgs();
	CHECK(raw_read(junk, sizeof junk, "junk", NULL) == NULL);
	CHECK_EQ(nerrors, 1);
	CHECK_CONTAINS(last_msg, "not a profview raw trace");
	CHECK(!raw_detect(junk, sizeof junk));

	/* A good header followed by garbage: the header is kept, the rest
	 * dropped with one warning, never a crash. */
	build(&r, ends, &nrec, true);
	size_t header = ends[0] - (sizeof(struct raw_mapping) + raw_pad(strlen("/nonexistent/app") + 1));
	for (int round = 0; round < 200; round++) {
		struct rawbuf g = { 0 };
		rb_put(&g, r.b, header);
		for (int i = 0; i < 64; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			uint64_t v = x;
			if (round % 2 == 0 && i % 2 == 0)
				v = (v & 0xffff00000000ULL) | (1 + (v % 7)); /* plausible types */
			rb_put(&g, &v, sizeof v);
		}
		reset_msgs();
		struct pv_profile *p = raw_read(g.b, g.len, "garbage", NULL);
		CHECK(p != NULL);
		if (p)
			CHECK(pv_profile_validate(p, "garbage") == 0);
		pv_profile_free(p);
		free(g.b);
	}

	/* A version from the future is refused with a hint, one from
	 * before the first without. */
	struct raw_header h;
	memcpy(&h, r.b, sizeof h);
	h.version = RAW_VERSION + 1;
	memcpy(r.b, &h, sizeof h);
	reset_msgs();
	CHECK(raw_read(r.b, r.len, "new.raw", NULL) == NULL);
	CHECK_EQ(nerrors, 1);
	CHECK_CONTAINS(last_msg, "'new.raw': raw trace format version 4 is not supported (this profview reads versions 1 to 3); use a newer profview");
	h.version = 0;
	memcpy(r.b, &h, sizeof h);
	reset_msgs();
	CHECK(raw_read(r.b, r.len, "old.raw", NULL) == NULL);
	CHECK_CONTAINS(last_msg, "version 0 is not supported");
	CHECK(strstr(last_msg, "newer") == NULL);
	free(r.b);
}

/* Reads a version 2 trace of ELF machine machine with nregs registers a
 * sample; NULL and one error when it is refused. */
static struct pv_profile *read_v2(uint32_t machine, uint32_t regs, uint32_t nregs)
{
	static const uint64_t st[] = { MAIN_LEAF, ROOT_RET };
	struct rawbuf r = { 0 };
	struct raw_arch a = { machine, regs, nregs, 0 };
	struct pv_profile *p;

	rb_header_arch(&r, &a, "/nonexistent/app", 1000000, 0);
	rb_sample(&r, 1, 0, st, 2, 1, 1);
	rb_end(&r, 2, 1, 0);
	reset_msgs();
	p = raw_read(r.b, r.len, "t.raw", NULL);
	CHECK_EQ(nerrors, p ? 0 : 1);
	free(r.b);
	return p;
}

/* A version 2 header says the architecture and the register set: only
 * x86-64 with DWARF-numbered registers is read, the others are refused
 * saying what they are. */
static void test_arch(void)
{
	struct pv_profile *p;

	p = read_v2(RAW_MACHINE_X86_64, RAW_REGS_DWARF, RAW_NREGS);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 1);
		CHECK_STR(pv_str(p, p->program), "/nonexistent/app");
	}
	pv_profile_free(p);

	CHECK(read_v2(183, RAW_REGS_DWARF, 33) == NULL);
	CHECK_STR(last_msg, "'t.raw': a trace of an aarch64 program (ELF machine 183): this profview reads x86-64 traces");
	CHECK(read_v2(0, RAW_REGS_DWARF, RAW_NREGS) == NULL);
	CHECK_STR(last_msg, "'t.raw': a trace of a program of ELF machine 0: this profview reads x86-64 traces");
	CHECK(read_v2(RAW_MACHINE_X86_64, 7, RAW_NREGS) == NULL);
	CHECK_CONTAINS(last_msg, "registers in a numbering this profview does not know (7)");
	CHECK(read_v2(RAW_MACHINE_X86_64, RAW_REGS_DWARF, RAW_NREGS - 1) == NULL);
	CHECK_STR(last_msg, "'t.raw': corrupt header (16 registers a sample, expected 17 to 64)");
	CHECK(read_v2(RAW_MACHINE_X86_64, RAW_REGS_DWARF, RAW_MAX_REGS + 1) == NULL);
	CHECK_CONTAINS(last_msg, "corrupt header (65 registers a sample");

	/* cut inside the part version 2 adds */
	{
		struct rawbuf r = { 0 };
		rb_header_v2(&r, "/x", 1000000, 0, RAW_MACHINE_X86_64, RAW_NREGS);
		reset_msgs();
		CHECK(raw_read(r.b, 70, "cut.raw", NULL) == NULL);
		CHECK_STR(last_msg, "'cut.raw': trace is cut off inside its 80-byte header (70 bytes)");
		CHECK(raw_read(r.b, 80, "cut.raw", NULL) == NULL);
		CHECK_STR(last_msg, "'cut.raw': trace is cut off inside its header (80 of 88 bytes)");
		/* a header size that leaves no room for the architecture */
		struct raw_header h;
		memcpy(&h, r.b, sizeof h);
		h.header_size = 72;
		h.exe_len = 0;
		memcpy(r.b, &h, sizeof h);
		CHECK(raw_read(r.b, r.len, "bad.raw", NULL) == NULL);
		CHECK_STR(last_msg, "'bad.raw': corrupt header (header size 72, path length 0)");
		free(r.b);
	}
}

/* A register set larger than x86-64's 17: every record carries at least
 * that many, the unwinder gets them all and the stack copy after them; a
 * record with fewer ends the reading. */
static int wide_nregs;

static int wide_unwind(void *ctx, const uint64_t *regs, uint32_t nregs, const unsigned char *stack,
		       uint32_t stack_len, uint64_t *frames, uint32_t cap, bool *complete)
{
	(void)ctx;
	(void)cap;
	wide_nregs = (int)nregs;
	frames[0] = regs[RAW_REG_RIP];
	memcpy(frames + 1, stack, stack_len);
	*complete = regs[19] == 19;
	return 1 + (int)(stack_len / 8);
}

static void test_wide_regs(void)
{
	struct rawbuf r = { 0 };
	uint64_t regs[20] = { 0 };
	const uint64_t rets[1] = { 0x402001 };
	struct raw_unwinder uw = { NULL, NULL, wide_unwind };
	struct pv_profile *p;

	rb_header_v2(&r, "/bin/x", 1000000, 0, RAW_MACHINE_X86_64, 20);
	rb_set_unwind(&r, RAW_UNWIND_DWARF);
	regs[RAW_REG_RIP] = 0x401000;
	regs[19] = 19;
	rb_sample_nregs(&r, 7, regs, 20, (const unsigned char *)rets, sizeof rets, 5000);
	rb_sample_nregs(&r, 7, regs, RAW_NREGS, (const unsigned char *)rets, sizeof rets, 5000);
	rb_end(&r, 2, 2, 0);
	reset_msgs();
	p = raw_read(r.b, r.len, "wide.raw", &uw);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(wide_nregs, 20);
		CHECK_EQ(p->nsamples, 1);
		CHECK(!(p->samples[0].flags & PV_SAMPLE_TRUNCATED));
		CHECK_EQ(p->samples[0].nlocs, 2);
		CHECK_EQ(p->locations[pv_sample_locs(p, &p->samples[0])[1]].address, 0x402000);
		CHECK(!p->finished);
		CHECK_EQ(nwarnings, 1);
		CHECK_CONTAINS(last_msg, "record 2 (sample-regs) at byte");
		CHECK_CONTAINS(last_msg, "is malformed");
	}
	pv_profile_free(p);
	free(r.b);
}

/* Records of a type this reader does not know are skipped. */
static void test_unknown_record(void)
{
	struct rawbuf r = { 0 };
	static const uint64_t st[] = { 0x401000 };
	struct { struct raw_rec h; uint64_t payload[3]; } unknown = { { 99, 32 }, { 1, 2, 3 } };

	rb_header(&r, "/bin/x", 1000000);
	rb_put(&r, &unknown, sizeof unknown);
	rb_sample(&r, 1, 0, st, 1, 1, 1);
	rb_end(&r, 2, 1, 0);
	reset_msgs();
	struct pv_profile *p = raw_read(r.b, r.len, "u.raw", NULL);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 1);
		CHECK(p->finished);
		CHECK_EQ(nwarnings, 0);
	}
	pv_profile_free(p);
	free(r.b);
}

/* A zero second frame (nothing at the stack pointer looked like code) is
 * dropped, and the stack is no candidate then. */
static void test_leaf_candidate(void)
{
	struct rawbuf r = { 0 };
	static const uint64_t st[] = { 0x401000, 0, 0x402001, 0x403001 };

	rb_header(&r, "/bin/x", 1000000);
	rb_stack(&r, 1, st, 4);
	rb_sample(&r, 1, 1, NULL, 0, 1, 1);
	rb_sample(&r, 1, 0, st, 4, 1, 1);
	rb_end(&r, 2, 2, 0);
	struct pv_profile *p = raw_read(r.b, r.len, "c.raw", NULL);
	CHECK(p != NULL);
	for (size_t i = 0; p && i < p->nsamples; i++) {
		const struct pv_sample *s = &p->samples[i];
		CHECK_EQ(s->nlocs, 3);
		CHECK(!(s->flags & PV_SAMPLE_LEAF_CANDIDATE));
		CHECK_EQ(p->locations[pv_sample_locs(p, s)[1]].address, 0x402000);
	}
	pv_profile_free(p);
	free(r.b);
}

/* A sample whose stack never arrives is counted as lost, not invented. */
static void test_missing_stack(void)
{
	struct rawbuf r = { 0 };

	rb_header(&r, "/bin/x", 1000000);
	rb_sample(&r, 1, 55, NULL, 0, 1, 1);
	rb_end(&r, 2, 1, 0);
	reset_msgs();
	struct pv_profile *p = raw_read(r.b, r.len, "m.raw", NULL);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 0);
		CHECK_EQ(p->lost, 1);
		CHECK_EQ(nwarnings, 1);
	}
	pv_profile_free(p);
	free(r.b);
}

/* Counts of lost samples from a damaged file saturate: two records of
 * 2^63 + 7 must not add up to 14. */
static void test_lost_saturates(void)
{
	struct rawbuf r = { 0 };

	rb_header(&r, "/bin/x", 1000000);
	rb_lost(&r, (1ull << 63) + 7);
	rb_lost(&r, (1ull << 63) + 7);
	reset_msgs();
	struct pv_profile *p = raw_read(r.b, r.len, "l.raw", NULL);
	CHECK(p != NULL);
	if (p)
		CHECK_EQ(p->lost, UINT64_MAX);
	pv_profile_free(p);
	free(r.b);
}

/* A register sample goes through the unwinder the caller provides; the
 * reader turns what it returns into locations and flags a walk that did not
 * reach the outermost frame.  Without an unwinder only the leaf is kept. */
static int fake_prepared;

static int fake_prepare(void *ctx, struct pv_profile *p)
{
	(void)ctx;
	fake_prepared = (int)p->nmappings;
	return 0;
}

static int fake_unwind(void *ctx, const uint64_t *regs, uint32_t nregs, const unsigned char *stack,
		       uint32_t stack_len, uint64_t *frames, uint32_t cap, bool *complete)
{
	(void)ctx;
	(void)nregs;
	(void)cap;
	/* The test's "stack" holds the return addresses themselves. */
	frames[0] = regs[RAW_REG_RIP];
	memcpy(frames + 1, stack, stack_len);
	*complete = regs[0] == 1;
	return 1 + (int)(stack_len / 8);
}

static void test_regs_samples(void)
{
	struct rawbuf r = { 0 };
	uint64_t regs[RAW_NREGS] = { 0 };
	const uint64_t rets[2] = { 0x402001, 0x403001 };
	struct raw_unwinder uw = { NULL, fake_prepare, fake_unwind };

	rb_header(&r, "/bin/x", 1000000);
	{
		struct raw_header h;
		memcpy(&h, r.b, sizeof h);
		h.unwind = RAW_UNWIND_DWARF;
		memcpy(r.b, &h, sizeof h);
	}
	rb_mapping(&r, 0x400000, 0x500000, 0, "/bin/x");
	regs[RAW_REG_RIP] = 0x401000;
	regs[0] = 1; /* complete */
	rb_sample_regs(&r, 7, regs, (const unsigned char *)rets, sizeof rets, 5000);
	rb_sample_regs(&r, 7, regs, (const unsigned char *)rets, sizeof rets, 5000);
	regs[0] = 0; /* the walk stopped early */
	rb_sample_regs(&r, 7, regs, (const unsigned char *)rets, 8, 5000);
	rb_end(&r, 2, 3, 0);

	reset_msgs();
	struct pv_profile *p = raw_read(r.b, r.len, "regs.raw", &uw);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(fake_prepared, 1);
		CHECK_EQ(p->nsamples, 3);
		CHECK_EQ(nwarnings, 0);
		const struct pv_sample *s = &p->samples[0];
		CHECK_EQ(s->nlocs, 3);
		CHECK(!(s->flags & PV_SAMPLE_TRUNCATED));
		CHECK(!(s->flags & PV_SAMPLE_LEAF_CANDIDATE));
		CHECK_EQ(p->locations[pv_sample_locs(p, s)[0]].address, 0x401000);
		CHECK_EQ(p->locations[pv_sample_locs(p, s)[1]].address, 0x402000);
		CHECK_EQ(p->locations[pv_sample_locs(p, s)[2]].address, 0x403000);
		/* Equal stacks are stored once. */
		CHECK_EQ(p->samples[1].loc_off, s->loc_off);
		CHECK_EQ(p->samples[2].nlocs, 2);
		CHECK(p->samples[2].flags & PV_SAMPLE_TRUNCATED);
		CHECK_EQ(p->truncated, 1);
		CHECK_EQ(pv_total(p, 1), 15000);
	}
	pv_profile_free(p);

	reset_msgs();
	p = raw_read(r.b, r.len, "regs.raw", NULL);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 3);
		CHECK_EQ(p->samples[0].nlocs, 1);
		CHECK_EQ(p->truncated, 3);
		CHECK_EQ(nwarnings, 1);
		CHECK_CONTAINS(last_msg, "need DWARF unwinding");
	}
	pv_profile_free(p);
	free(r.b);
}

#define KADDR1 0xffffffff81000100ull
#define KADDR2 0xffffffff81000201ull

/* A trace with system time: samples A-E of thread 101, 10 ms each, with
 * 3 ms (no kernel frames), 8 ms (two), all, a record of another sample,
 * none; the thread's exit says 100 ms, so every time doubles.  cut: the
 * buffer ends inside C's kernel record. */
static size_t build_kernel(struct rawbuf *r, bool with_info, size_t *cut)
{
	static const uint64_t st[] = { MAIN_LEAF, ROOT_RET };
	static const uint64_t kf[] = { KADDR1, KADDR2 };

	rb_header_short(r, "/nonexistent/app", 4000000, 16000);
	rb_mapping(r, 0x400000, 0x500000, 0, "/nonexistent/app");
	if (with_info)
		rb_kernel_info(r, RAW_SYSTEM_PERF, "a-boot-of-another-machine");
	rb_thread(r, 101, "worker");
	rb_sample(r, 101, 0, st, 2, 1100000000, 10000000);
	rb_sample_kernel(r, 101, 1100000000, 3000000, NULL, 0);
	rb_sample(r, 101, 0, st, 2, 1200000000, 10000000);
	rb_sample_kernel(r, 101, 1200000000, 8000000, kf, 2);
	rb_sample(r, 101, 0, st, 2, 1300000000, 10000000);
	*cut = r->len + 20;
	rb_sample_kernel(r, 101, 1300000000, 10000000, kf, 1);
	rb_sample(r, 101, 0, st, 2, 1400000000, 10000000);
	rb_sample_kernel(r, 101, 1399999999, 5000000, NULL, 0);
	rb_sample(r, 101, 0, st, 2, 1500000000, 10000000);
	rb_thread_exit(r, 101, 1600000000, 100000000);
	rb_end(r, 1700000000, 5, 0);
	return r->len;
}

static int64_t cpu_of(const struct pv_profile *p, size_t i)
{
	return p->samples[i].values[1];
}

static int64_t count_of(const struct pv_profile *p, size_t i)
{
	return p->samples[i].values[0];
}

static bool is_kernel(const struct pv_profile *p, size_t i)
{
	return (p->samples[i].flags & PV_SAMPLE_KERNEL) != 0;
}

/* A sample is the kernel's when half its weight or more is owed to the
 * kernel: A owes 3 of 10 ms (a user sample; 3 carried), B 8 + 3 (kernel,
 * 1 carried, its frames), C 10 + 1 (kernel, 1 carried), D and E none
 * (user).  Every sample is whole: its count and its time together. */
static void test_kernel_split(void)
{
	struct rawbuf r = { 0 };
	struct pv_profile *p;
	size_t cut;
	int64_t count = 0;

	build_kernel(&r, true, &cut);
	reset_msgs();
	p = raw_read(r.b, r.len, "k.raw", NULL);
	CHECK(p != NULL);
	if (!p) {
		free(r.b);
		return;
	}
	CHECK_EQ(nerrors, 0);
	CHECK_EQ(p->nsamples, 5);
	if (p->nsamples == 5) {
		const uint32_t *locs;

		/* A: a user sample, its 3 ms of system time owed on */
		CHECK(!is_kernel(p, 0));
		CHECK_EQ(cpu_of(p, 0), 20000000);
		CHECK_EQ(count_of(p, 0), 1);
		CHECK_EQ(p->samples[0].nlocs, 2);
		/* B: the kernel's, its frames leaf first (a return address
		 * stepped back) on top of the user stack */
		CHECK(is_kernel(p, 1));
		CHECK_EQ(cpu_of(p, 1), 20000000);
		CHECK_EQ(count_of(p, 1), 1);
		CHECK_EQ(p->samples[1].nlocs, 4);
		locs = pv_sample_locs(p, &p->samples[1]);
		CHECK_EQ(p->locations[locs[0]].address, KADDR1);
		CHECK_EQ(p->locations[locs[1]].address, KADDR2 - 1);
		CHECK(pv_location_is_kernel(p, locs[1]));
		CHECK(!pv_location_is_kernel(p, locs[2]));
		CHECK_EQ(p->locations[locs[2]].address, MAIN_LEAF);
		{
			const struct pv_mapping *m = &p->mappings[p->locations[locs[0]].mapping];
			CHECK_EQ(m->kind, PV_MAP_KERNEL);
			CHECK_STR(pv_str(p, m->file), PV_KERNEL_MAPPING_NAME);
			CHECK_STR(pv_str(p, m->build_id), "a-boot-of-another-machine");
			CHECK(m->start <= KADDR2 - 1 && KADDR1 < m->limit);
		}
		/* C: the kernel's, one kernel frame */
		CHECK(is_kernel(p, 2));
		CHECK_EQ(cpu_of(p, 2), 20000000);
		CHECK_EQ(count_of(p, 2), 1);
		CHECK_EQ(p->samples[2].nlocs, 3);
		/* D: the record after it is another sample's; E: none; the
		 * 1 ms owed is not half a sample */
		CHECK(!is_kernel(p, 3) && !is_kernel(p, 4));
		CHECK_EQ(cpu_of(p, 3), 20000000);
		CHECK_EQ(cpu_of(p, 4), 20000000);
	}
	for (size_t i = 0; i < p->nsamples; i++)
		count += count_of(p, i);
	CHECK_EQ(count, 5);
	CHECK_EQ(p->system_cpu_ns, 40000000);
	CHECK_EQ(p->threads_cpu_ns, 100000000);
	pv_profile_free(p);

	/* cut inside C's kernel record: A and B as above, C a user sample
	 * (1 ms owed) */
	reset_msgs();
	p = raw_read(r.b, cut, "k.raw", NULL);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(nerrors, 0);
		CHECK(nwarnings > 0);
		CHECK_EQ(p->nsamples, 3);
		if (p->nsamples == 3) {
			CHECK(!is_kernel(p, 0));
			CHECK(is_kernel(p, 1));
			CHECK(!is_kernel(p, 2));
			CHECK_EQ(count_of(p, 2), 1);
		}
		pv_profile_free(p);
	}
	free(r.b);

	/* an older trace: no system time said, no kernel mapping */
	memset(&r, 0, sizeof r);
	{
		static const uint64_t st[] = { MAIN_LEAF, ROOT_RET };
		rb_header_short(&r, "/nonexistent/app", 4000000, 16000);
		rb_mapping(&r, 0x400000, 0x500000, 0, "/nonexistent/app");
		rb_thread(&r, 101, "worker");
		rb_sample(&r, 101, 0, st, 2, 1100000000, 10000000);
		rb_thread_exit(&r, 101, 1600000000, 10000000);
		rb_end(&r, 1700000000, 1, 0);
	}
	reset_msgs();
	p = raw_read(r.b, r.len, "old.raw", NULL);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 1);
		CHECK_EQ(p->system_cpu_ns, -1);
		CHECK_EQ(p->nmappings, 1);
		pv_profile_free(p);
	}
	free(r.b);
}

int main(void)
{
	pv_error_set_sink(sink);
	test_round_trip(1);
	test_round_trip(2);
	test_round_trip(3);
	test_unsampled_legacy();
	test_cpu_shares();
	test_truncation(1);
	test_truncation(2);
	test_truncation(3);
	test_unfinished();
	test_garbage();
	test_unknown_record();
	test_missing_stack();
	test_lost_saturates();
	test_leaf_candidate();
	test_regs_samples();
	test_arch();
	test_wide_regs();
	test_kernel_split();
	test_damaged_weight();
	return check_done("test-raw");
}
