/* test-raw-iter.c - a raw trace's header, of either version, and the walk
 * over its records: every record of a good trace, and each reason to stop,
 * at the right byte; and the same walk of a file a piece at a time
 * (raw-tail.h), also of one still being written */
#include "check.h"
#include "rawbuild.h"
#include "raw-iter.h"
#include "raw-tail.h"

#include <fcntl.h>
#include <unistd.h>

/* A whole trace of every record type; ends[] gets each record's end. */
static size_t build_all(struct rawbuf *r, size_t *ends)
{
	static const uint64_t st[] = { 0x401000, 0x402001 };
	uint64_t regs[RAW_NREGS] = { 0 };
	const unsigned char stack[12] = { 1, 2, 3 };
	size_t n = 0;

	rb_header(r, "/bin/x", 1000000);
	rb_mapping(r, 0x400000, 0x500000, 0, "/bin/x");
	ends[n++] = r->len;
	rb_thread(r, 1, "main");
	ends[n++] = r->len;
	rb_thread_v1(r, 2, "old");
	ends[n++] = r->len;
	rb_stack(r, 1, st, 2);
	ends[n++] = r->len;
	rb_sample(r, 1, 1, NULL, 0, 5, 5);
	ends[n++] = r->len;
	rb_sample(r, 1, 0, st, 2, 6, 5);
	ends[n++] = r->len;
	rb_sample_regs(r, 1, regs, stack, sizeof stack, 5);
	ends[n++] = r->len;
	rb_lost(r, 2);
	ends[n++] = r->len;
	rb_thread_exit(r, 1, 7, 10);
	ends[n++] = r->len;
	rb_end(r, 8, 3, 2);
	ends[n++] = r->len;
	return n;
}

static size_t header_size(const struct rawbuf *r)
{
	struct raw_header h;

	memcpy(&h, r->b, sizeof h);
	return h.header_size;
}

/* Walks buf from its header; returns how it stopped, *n the records. */
static enum raw_next walk(const unsigned char *buf, size_t len, size_t start, uint64_t *n,
			  struct raw_record *last)
{
	struct raw_iter it;
	enum raw_next next;

	raw_iter_init(&it, buf, len, start, RAW_NREGS);
	while ((next = raw_iter_next(&it, last)) == RAW_NEXT_RECORD)
		;
	*n = it.nrecords;
	return next;
}

static void test_whole(void)
{
	static const uint32_t types[] = { RAW_MAPPING, RAW_THREAD, RAW_THREAD, RAW_STACK,
					  RAW_SAMPLE, RAW_SAMPLE, RAW_SAMPLE_REGS, RAW_LOST,
					  RAW_THREAD_EXIT, RAW_END };
	struct rawbuf r = { 0 };
	size_t ends[16], n = build_all(&r, ends), start = header_size(&r), k = 0;
	struct raw_iter it;
	struct raw_record rec;

	raw_iter_init(&it, r.b, r.len, start, RAW_NREGS);
	while (raw_iter_next(&it, &rec) == RAW_NEXT_RECORD) {
		CHECK(k < n);
		if (k >= n)
			break;
		CHECK_EQ(rec.type, types[k]);
		CHECK_EQ(rec.off, k ? ends[k - 1] : start);
		CHECK_EQ(rec.off + rec.size, ends[k]);
		CHECK(rec.data == r.b + rec.off);
		k++;
	}
	CHECK_EQ(k, n);
	CHECK_EQ(it.nrecords, n);
	/* the end record ends the walk, and it stays ended */
	CHECK_EQ(raw_iter_next(&it, &rec), RAW_NEXT_ENDED);
	CHECK_EQ(raw_iter_next(&it, &rec), RAW_NEXT_ENDED);
	CHECK_EQ(rec.off, r.len);
	CHECK_EQ(it.off, r.len);
	/* nothing after it is read, not even garbage */
	rb_put(&r, "garbage!", 8);
	CHECK_EQ(walk(r.b, r.len, start, &(uint64_t){ 0 }, &rec), RAW_NEXT_ENDED);
	CHECK_EQ(rec.off, r.len - 8);
	free(r.b);
}

/* Cut at every byte: every record before the cut is whole, the stop is
 * where the first cut record starts, and says how it was cut. */
static void test_cuts(void)
{
	struct rawbuf r = { 0 };
	size_t ends[16], n = build_all(&r, ends), start = header_size(&r);
	int bad = 0;

	for (size_t cut = start; cut <= r.len; cut++) {
		struct raw_record last;
		uint64_t got;
		size_t k = 0, at = start;
		enum raw_next want, next = walk(r.b, cut, start, &got, &last);

		while (k < n && ends[k] <= cut)
			at = ends[k++];
		if (k == n)
			want = RAW_NEXT_ENDED;
		else if (at == cut)
			want = RAW_NEXT_DONE;
		else if (cut - at < sizeof(struct raw_rec))
			want = RAW_NEXT_CUT_HEADER;
		else
			want = RAW_NEXT_CUT;
		if (next != want || got != k || last.off != at ||
		    (want == RAW_NEXT_CUT && last.size != ends[k] - at)) {
			if (bad++ < 5)
				fprintf(stderr, "cut %zu: stop %d (want %d), %" PRIu64 " records (want %zu) at %zu (want %zu)\n",
					cut, (int)next, (int)want, got, k, last.off, at);
		}
	}
	CHECK_EQ(bad, 0);
	free(r.b);
}

/* A trace whose writer died: zeros after its last record. */
static void test_zeros(void)
{
	struct rawbuf r = { 0 };
	struct raw_record last;
	uint64_t n;
	size_t start, end;

	rb_header(&r, "/bin/x", 1000000);
	start = r.len;
	rb_thread(&r, 1, "main");
	end = r.len;
	rb_zero(&r, 64);
	CHECK_EQ(walk(r.b, r.len, start, &n, &last), RAW_NEXT_ZEROS);
	CHECK_EQ(n, 1);
	CHECK_EQ(last.off, end);
	CHECK_EQ(last.type, 0);
	/* a type word of 0 stops the walk whatever its size says */
	{
		struct raw_rec h = { 0, 4096 };
		memcpy(r.b + end, &h, sizeof h);
	}
	CHECK_EQ(walk(r.b, r.len, start, &n, &last), RAW_NEXT_ZEROS);
	CHECK_EQ(last.size, 4096);
	/* an empty trace: nothing after the header */
	CHECK_EQ(walk(r.b, start, start, &n, &last), RAW_NEXT_DONE);
	CHECK_EQ(n, 0);
	free(r.b);
}

/* A record of the given type and size, its body zeros but for body[]:
 * how a walk over it alone stops. */
static enum raw_next one(uint32_t type, uint32_t size, const void *body, size_t blen)
{
	struct rawbuf r = { 0 };
	struct raw_rec h = { type, size };
	struct raw_record last;
	uint64_t n;
	size_t start;
	enum raw_next next;

	rb_header(&r, "/bin/x", 1000000);
	start = r.len;
	rb_put(&r, &h, sizeof h);
	rb_zero(&r, size > sizeof h ? size - sizeof h : 0);
	if (body)
		memcpy(r.b + start + sizeof h, body, blen);
	next = walk(r.b, r.len, start, &n, &last);
	if (next == RAW_NEXT_DONE)
		next = n == 1 ? RAW_NEXT_RECORD : RAW_NEXT_DONE;
	else
		CHECK_EQ(last.off, start);
	free(r.b);
	return next;
}

static void test_sizes(void)
{
	/* the size of the record header itself */
	CHECK_EQ(one(RAW_LOST, 0, NULL, 0), RAW_NEXT_BAD_SIZE);
	CHECK_EQ(one(RAW_LOST, 4, NULL, 0), RAW_NEXT_BAD_SIZE);
	CHECK_EQ(one(RAW_LOST, 20, NULL, 0), RAW_NEXT_BAD_SIZE);
	CHECK_EQ(one(99, RAW_MAX_RECORD + 8, NULL, 0), RAW_NEXT_BAD_SIZE);
	/* an unknown type needs nothing but its header */
	CHECK_EQ(one(99, 8, NULL, 0), RAW_NEXT_RECORD);
	CHECK_EQ(one(99, 64, NULL, 0), RAW_NEXT_RECORD);
	/* the least size of each type; the older, shorter thread and lost
	 * records stay valid */
	CHECK_EQ(one(RAW_THREAD, RAW_THREAD_MIN_SIZE, NULL, 0), RAW_NEXT_RECORD);
	CHECK_EQ(one(RAW_THREAD, RAW_THREAD_MIN_SIZE - 8, NULL, 0), RAW_NEXT_MALFORMED);
	CHECK_EQ(one(RAW_LOST, RAW_LOST_MIN_SIZE, NULL, 0), RAW_NEXT_RECORD);
	CHECK_EQ(one(RAW_LOST, RAW_LOST_MIN_SIZE - 8, NULL, 0), RAW_NEXT_MALFORMED);
	CHECK_EQ(one(RAW_MAPPING, sizeof(struct raw_mapping), NULL, 0), RAW_NEXT_RECORD);
	CHECK_EQ(one(RAW_MAPPING, sizeof(struct raw_mapping) - 8, NULL, 0), RAW_NEXT_MALFORMED);
	CHECK_EQ(one(RAW_STACK, sizeof(struct raw_stack) - 8, NULL, 0), RAW_NEXT_MALFORMED);
	/* the short form of a sample has its stack by id (raw.h) */
	CHECK_EQ(one(RAW_SAMPLE, RAW_SAMPLE_SHORT_SIZE, NULL, 0), RAW_NEXT_MALFORMED);
	{
		uint32_t ids[2] = { 5, 9 }; /* tid, stack id */

		CHECK_EQ(one(RAW_SAMPLE, RAW_SAMPLE_SHORT_SIZE, ids, sizeof ids), RAW_NEXT_RECORD);
	}
	CHECK_EQ(one(RAW_SAMPLE, RAW_SAMPLE_SHORT_SIZE - 8, NULL, 0), RAW_NEXT_MALFORMED);
	CHECK_EQ(one(RAW_THREAD_EXIT, RAW_THREAD_EXIT_MIN_SIZE - 8, NULL, 0), RAW_NEXT_MALFORMED);
	CHECK_EQ(one(RAW_END, sizeof(struct raw_end) - 8, NULL, 0), RAW_NEXT_MALFORMED);
	CHECK_EQ(one(RAW_SAMPLE_REGS, sizeof(struct raw_sample_regs), NULL, 0), RAW_NEXT_MALFORMED);
}

/* An exec record's path and a child record fit in their records. */
static void test_procs(void)
{
	unsigned char body[24] = { 0 };
	uint32_t len;

	CHECK_EQ(one(RAW_EXEC, sizeof(struct raw_exec), body, sizeof body), RAW_NEXT_RECORD);
	CHECK_EQ(one(RAW_EXEC, sizeof(struct raw_exec) - 8, NULL, 0), RAW_NEXT_MALFORMED);
	len = 1; /* a path longer than the record */
	memcpy(body + 16, &len, sizeof len);
	CHECK_EQ(one(RAW_EXEC, sizeof(struct raw_exec), body, sizeof body), RAW_NEXT_MALFORMED);
	len = 8;
	memcpy(body + 16, &len, sizeof len);
	CHECK_EQ(one(RAW_EXEC, sizeof(struct raw_exec) + 8, body, sizeof body), RAW_NEXT_RECORD);
	len = UINT32_MAX;
	memcpy(body + 16, &len, sizeof len);
	CHECK_EQ(one(RAW_EXEC, sizeof(struct raw_exec) + 8, body, sizeof body), RAW_NEXT_MALFORMED);
	CHECK_EQ(one(RAW_CHILD, sizeof(struct raw_child), NULL, 0), RAW_NEXT_RECORD);
	CHECK_EQ(one(RAW_CHILD, sizeof(struct raw_child) - 8, NULL, 0), RAW_NEXT_MALFORMED);
}

/* A run of one 4096-byte part and a table of two processes not profiled
 * (one named "./static-child", one not named): its footer in *f. */
static void build_others(struct rawbuf *r, struct raw_run_footer *f)
{
	struct raw_run_others head = { RAW_RUN_OTHERS_MAGIC, 2 };
	struct raw_run_other a = { .pid = 7, .why = RAW_WHY_STATIC, .end = RAW_RUN_EXITED,
				   .cpu_ns = 500000000, .name_len = 14 };
	struct raw_run_other b = { .pid = 8, .why = RAW_WHY_UNSEEN, .cpu_ns = RAW_UNKNOWN };
	struct raw_run_part part = { .offset = 0, .length = 4096, .pid = 6, .flags = RAW_RUN_ROOT };

	memset(f, 0, sizeof *f);
	rb_zero(r, 4096);
	f->others_offset = r->len;
	rb_put(r, &head, sizeof head);
	rb_put(r, &a, sizeof a);
	rb_put(r, "./static-child\0\0", 16);
	rb_put(r, &b, sizeof b);
	f->index_offset = r->len;
	rb_put(r, &part, sizeof part);
	f->nparts = 1;
	f->nprocesses = 3;
	memcpy(f->magic, RAW_RUN_MAGIC, RAW_MAGIC_LEN);
	rb_put(r, f, sizeof *f);
}

/* The table of processes not profiled: read whole; every byte of it
 * changed, read without a step outside it; none at all. */
static void test_run_others(void)
{
	struct rawbuf r = { 0 };
	struct raw_run_footer f, got;
	struct raw_run_other o;
	const char *name;
	uint64_t pos = 0;

	build_others(&r, &f);
	CHECK_EQ(raw_run_index(r.b, r.len, &got), 1);
	CHECK_EQ(got.others_offset, f.others_offset);
	CHECK_EQ(raw_run_other_next(r.b, r.len, &got, &pos, &o, &name), 1);
	CHECK_EQ(o.pid, 7);
	CHECK_EQ(o.why, RAW_WHY_STATIC);
	CHECK_EQ(o.cpu_ns, 500000000);
	CHECK(o.name_len == 14 && memcmp(name, "./static-child", 14) == 0);
	CHECK_EQ(raw_run_other_next(r.b, r.len, &got, &pos, &o, &name), 1);
	CHECK_EQ(o.pid, 8);
	CHECK_EQ(o.name_len, 0);
	CHECK_EQ(raw_run_other_next(r.b, r.len, &got, &pos, &o, &name), 0);
	CHECK(strcmp(raw_why_say(RAW_WHY_STATIC), "static binary") == 0);
	for (uint64_t at = f.others_offset; at < f.index_offset; at++) {
		unsigned char keep = r.b[at];
		int k = 0, rc;

		r.b[at] ^= 0xff;
		pos = 0;
		while ((rc = raw_run_other_next(r.b, r.len, &got, &pos, &o, &name)) == 1 && k < 4) {
			CHECK(name >= (const char *)r.b + f.others_offset &&
			      name + o.name_len <= (const char *)r.b + f.index_offset);
			k++;
		}
		CHECK(k <= 2);
		r.b[at] = keep;
	}
	/* an offset outside the file, or none */
	got.others_offset = r.len;
	pos = 0;
	CHECK_EQ(raw_run_other_next(r.b, r.len, &got, &pos, &o, &name), -1);
	got.others_offset = 0;
	pos = 0;
	CHECK_EQ(raw_run_other_next(r.b, r.len, &got, &pos, &o, &name), 0);
	free(r.b);
}

/* Counts that overflow their record. */
static void test_counts(void)
{
	struct raw_mapping m = { 0 };
	struct raw_stack s = { 0 };
	struct raw_sample sa = { 0 };
	struct raw_sample_regs sr = { 0 };
	const size_t off = sizeof(struct raw_rec);

	m.path_len = 16;
	CHECK_EQ(one(RAW_MAPPING, sizeof m + 16, (char *)&m + off, sizeof m - off), RAW_NEXT_RECORD);
	CHECK_EQ(one(RAW_MAPPING, sizeof m + 8, (char *)&m + off, sizeof m - off), RAW_NEXT_MALFORMED);
	m.path_len = 0;
	m.build_id_len = sizeof m.build_id + 1;
	CHECK_EQ(one(RAW_MAPPING, sizeof m, (char *)&m + off, sizeof m - off), RAW_NEXT_MALFORMED);

	s.nframes = 2;
	CHECK_EQ(one(RAW_STACK, sizeof s + 16, (char *)&s + off, sizeof s - off), RAW_NEXT_RECORD);
	CHECK_EQ(one(RAW_STACK, sizeof s + 8, (char *)&s + off, sizeof s - off), RAW_NEXT_MALFORMED);
	s.nframes = RAW_MAX_FRAMES + 1;
	CHECK_EQ(one(RAW_STACK, sizeof s + 8 * (RAW_MAX_FRAMES + 1), (char *)&s + off, sizeof s - off),
		 RAW_NEXT_MALFORMED);

	sa.nframes = 3;
	CHECK_EQ(one(RAW_SAMPLE, sizeof sa + 24, (char *)&sa + off, sizeof sa - off), RAW_NEXT_RECORD);
	CHECK_EQ(one(RAW_SAMPLE, sizeof sa + 16, (char *)&sa + off, sizeof sa - off), RAW_NEXT_MALFORMED);
	sa.nframes = UINT32_MAX;
	CHECK_EQ(one(RAW_SAMPLE, sizeof sa + 16, (char *)&sa + off, sizeof sa - off), RAW_NEXT_MALFORMED);

	sr.nregs = RAW_NREGS;
	sr.stack_len = 16;
	CHECK_EQ(one(RAW_SAMPLE_REGS, sizeof sr + 8 * RAW_NREGS + 16, (char *)&sr + off, sizeof sr - off),
		 RAW_NEXT_RECORD);
	CHECK_EQ(one(RAW_SAMPLE_REGS, sizeof sr + 8 * RAW_NREGS + 8, (char *)&sr + off, sizeof sr - off),
		 RAW_NEXT_MALFORMED);
	sr.stack_len = UINT32_MAX;
	CHECK_EQ(one(RAW_SAMPLE_REGS, sizeof sr + 8 * RAW_NREGS + 16, (char *)&sr + off, sizeof sr - off),
		 RAW_NEXT_MALFORMED);
	/* fewer registers than the register set has, or too many */
	sr.stack_len = 0;
	sr.nregs = RAW_NREGS - 1;
	CHECK_EQ(one(RAW_SAMPLE_REGS, sizeof sr + 8 * RAW_NREGS, (char *)&sr + off, sizeof sr - off),
		 RAW_NEXT_MALFORMED);
	sr.nregs = RAW_MAX_REGS;
	CHECK_EQ(one(RAW_SAMPLE_REGS, sizeof sr + 8 * RAW_MAX_REGS, (char *)&sr + off, sizeof sr - off),
		 RAW_NEXT_RECORD);
	sr.nregs = RAW_MAX_REGS + 1;
	CHECK_EQ(one(RAW_SAMPLE_REGS, sizeof sr + 8 * (RAW_MAX_REGS + 1), (char *)&sr + off, sizeof sr - off),
		 RAW_NEXT_MALFORMED);
}

/* A start past the buffer (a header that claims more than there is) is
 * the end of an empty walk, never a read past it. */
static void test_start(void)
{
	static const unsigned char buf[8] = { 1 };
	struct raw_iter it;
	struct raw_record rec;

	raw_iter_init(&it, buf, sizeof buf, 64, RAW_NREGS);
	CHECK_EQ(raw_iter_next(&it, &rec), RAW_NEXT_DONE);
	CHECK_EQ(it.off, sizeof buf);
}

/* The header of each version, and what is wrong with a header. */
static void test_head(void)
{
	struct rawbuf r = { 0 };
	struct raw_head head;
	struct raw_header h;
	struct raw_arch a = { RAW_MACHINE_X86_64, RAW_REGS_DWARF, 20, 0 };
	char say[160];

	/* version 1: x86-64, 17 DWARF registers; the path at 64 */
	rb_header(&r, "/bin/x", 1000000);
	CHECK_EQ(raw_iter_head(r.b, r.len, &head), RAW_HEAD_OK);
	CHECK_EQ(head.h.version, 1);
	CHECK_EQ(head.fixed_size, 64);
	CHECK_EQ(head.h.header_size, 72);
	CHECK_EQ(head.arch.machine, RAW_MACHINE_X86_64);
	CHECK_EQ(head.arch.regs, RAW_REGS_DWARF);
	CHECK_EQ(head.arch.nregs, RAW_NREGS);
	CHECK_STR((const char *)r.b + head.fixed_size, "/bin/x");
	free(r.b);

	/* version 2: what it says, the path at 80 */
	r = (struct rawbuf){ 0 };
	rb_header_arch(&r, &a, "/bin/x", 1000000, 0);
	CHECK_EQ(raw_iter_head(r.b, r.len, &head), RAW_HEAD_OK);
	CHECK_EQ(head.h.version, 2);
	CHECK_EQ(head.fixed_size, 80);
	CHECK_EQ(head.h.header_size, 88);
	CHECK_EQ(head.arch.nregs, 20);
	CHECK_STR((const char *)r.b + head.fixed_size, "/bin/x");
	/* cut anywhere: short before the fixed part, cut inside the path */
	for (size_t len = 0; len < r.len; len++) {
		enum raw_head_status want = len < RAW_MAGIC_LEN ? RAW_HEAD_NOT_RAW
					    : len < 80 ? RAW_HEAD_SHORT : RAW_HEAD_CUT;
		CHECK_EQ(raw_iter_head(r.b, len, &head), want);
	}
	CHECK_EQ(raw_iter_head(r.b, 70, &head), RAW_HEAD_SHORT);
	CHECK_EQ(head.fixed_size, 80);
	CHECK_EQ(raw_iter_head(r.b, 30, &head), RAW_HEAD_SHORT);
	CHECK_EQ(head.fixed_size, 64);

	memcpy(&h, r.b, sizeof h);
	h.version = RAW_VERSION + 1;
	memcpy(r.b, &h, sizeof h);
	CHECK_EQ(raw_iter_head(r.b, r.len, &head), RAW_HEAD_VERSION);
	CHECK_EQ(head.h.version, RAW_VERSION + 1);
	h.version = 0;
	memcpy(r.b, &h, sizeof h);
	CHECK_EQ(raw_iter_head(r.b, r.len, &head), RAW_HEAD_VERSION);
	h.version = 2;
	h.header_size = 84;
	memcpy(r.b, &h, sizeof h);
	CHECK_EQ(raw_iter_head(r.b, r.len, &head), RAW_HEAD_CORRUPT);
	h.header_size = 88;
	h.exe_len = 9;
	memcpy(r.b, &h, sizeof h);
	CHECK_EQ(raw_iter_head(r.b, r.len, &head), RAW_HEAD_CORRUPT);
	h.exe_len = 7;
	memcpy(r.b, &h, sizeof h);
	CHECK_EQ(raw_iter_head(r.b, r.len, &head), RAW_HEAD_OK);

	/* another machine, another numbering, a register set too small or
	 * too large */
	a.machine = 183;
	memcpy(r.b + sizeof h, &a, sizeof a);
	CHECK_EQ(raw_iter_head(r.b, r.len, &head), RAW_HEAD_MACHINE);
	CHECK_EQ(head.arch.machine, 183);
	a.machine = RAW_MACHINE_X86_64;
	a.regs = 2;
	memcpy(r.b + sizeof h, &a, sizeof a);
	CHECK_EQ(raw_iter_head(r.b, r.len, &head), RAW_HEAD_REGS);
	a.regs = RAW_REGS_DWARF;
	a.nregs = RAW_NREGS - 1;
	memcpy(r.b + sizeof h, &a, sizeof a);
	CHECK_EQ(raw_iter_head(r.b, r.len, &head), RAW_HEAD_REGS);
	a.nregs = RAW_MAX_REGS + 1;
	memcpy(r.b + sizeof h, &a, sizeof a);
	CHECK_EQ(raw_iter_head(r.b, r.len, &head), RAW_HEAD_REGS);
	r.b[0] = 'X';
	CHECK_EQ(raw_iter_head(r.b, r.len, &head), RAW_HEAD_NOT_RAW);
	free(r.b);

	CHECK_STR(raw_iter_machine_say(say, sizeof say, 183),
		  "a trace of an aarch64 program (ELF machine 183): this profview reads x86-64 traces");
	CHECK_STR(raw_iter_machine_say(say, sizeof say, 243),
		  "a trace of a RISC-V program (ELF machine 243): this profview reads x86-64 traces");
	CHECK_STR(raw_iter_machine_say(say, sizeof say, 4242),
		  "a trace of a program of ELF machine 4242: this profview reads x86-64 traces");
}

/* A version 2 trace walks the same, from its longer header; its register
 * set is the least a sample-regs record holds. */
static void test_v2_walk(void)
{
	struct rawbuf r = { 0 };
	struct raw_head head;
	struct raw_iter it;
	struct raw_record rec;
	uint64_t regs[20] = { 0 };

	rb_header_v2(&r, "/bin/x", 1000000, 0, RAW_MACHINE_X86_64, 20);
	rb_sample_nregs(&r, 1, regs, 20, (const unsigned char *)regs, 0, 1);
	rb_sample_nregs(&r, 1, regs, RAW_NREGS, (const unsigned char *)regs, 0, 1);
	CHECK_EQ(raw_iter_head(r.b, r.len, &head), RAW_HEAD_OK);
	raw_iter_init(&it, r.b, r.len, head.h.header_size, head.arch.nregs);
	CHECK_EQ(raw_iter_next(&it, &rec), RAW_NEXT_RECORD);
	CHECK_EQ(rec.off, 88);
	CHECK_EQ(raw_iter_next(&it, &rec), RAW_NEXT_MALFORMED);
	CHECK_EQ(rec.off, 88 + sizeof(struct raw_sample_regs) + 8 * 20);
	free(r.b);
}

/* A file holding buf[0..len).  Returns its descriptor. */
static int tail_file(const unsigned char *buf, size_t len)
{
	char name[] = "/tmp/profview-raw-tail.XXXXXX";
	int fd = mkstemp(name);

	CHECK(fd >= 0);
	if (fd < 0)
		return -1;
	unlink(name);
	CHECK_EQ(pwrite(fd, buf, len, 0), (ssize_t)len);
	return fd;
}

/* Walks the file from start with raw-tail: how it stopped, *n the records,
 * their offsets checked against the walk of the buffer. */
static int tail_walk(int fd, size_t start, int live, uint64_t *n, struct raw_record *last)
{
	struct raw_tail t;
	int next;

	*n = 0;
	if (raw_tail_init(&t, fd, start, RAW_NREGS, live) != 0)
		return -1;
	while ((next = raw_tail_next(&t, last)) == RAW_NEXT_RECORD)
		(*n)++;
	raw_tail_free(&t);
	return next;
}

/* The file at every cut stops where, and as, the buffer does. */
static void test_tail_cuts(void)
{
	struct rawbuf r = { 0 };
	size_t ends[16], start;
	int bad = 0, fd;

	build_all(&r, ends);
	start = header_size(&r);
	fd = tail_file(r.b, r.len);
	/* downwards: each cut keeps what the next one needs */
	for (size_t cut = r.len; cut >= start && fd >= 0; cut--) {
		struct raw_record a, b;
		uint64_t na, nb;
		enum raw_next want = walk(r.b, cut, start, &na, &a);
		int next;

		CHECK_EQ(ftruncate(fd, (off_t)cut), 0);
		next = tail_walk(fd, start, 0, &nb, &b);
		if (next != (int)want || na != nb || a.off != b.off) {
			if (bad++ < 5)
				fprintf(stderr, "tail, cut %zu: stop %d (want %d), %" PRIu64 " records (want %" PRIu64 ") at %zu (want %zu)\n",
					cut, next, (int)want, nb, na, b.off, a.off);
		}
	}
	CHECK_EQ(bad, 0);
	if (fd >= 0)
		close(fd);
	free(r.b);
}

/* Records larger than the buffer, one after the other, and a file still
 * being written: zeros after the last record stop the walk for now, and it
 * goes on from there once more is published. */
static void test_tail_live(void)
{
	struct rawbuf r = { 0 };
	struct raw_record rec;
	struct raw_tail t;
	size_t start, first;
	uint64_t n;
	int fd;

	rb_header(&r, "/bin/x", 1000000);
	start = r.len;
	rb_thread(&r, 1, "main");
	for (int k = 0; k < 3; k++) {
		struct raw_rec h = { 77, (3u << 20) + 8 * (uint32_t)k };

		rb_put(&r, &h, sizeof h);
		rb_zero(&r, h.size - sizeof h);
	}
	first = r.len;
	rb_thread_exit(&r, 1, 7, 10);
	rb_end(&r, 8, 0, 0);
	fd = tail_file(r.b, first);
	if (fd < 0)
		return;
	CHECK_EQ(ftruncate(fd, (off_t)(first + (1 << 20))), 0);
	CHECK_EQ(raw_tail_init(&t, fd, start, RAW_NREGS, 1), 0);
	for (n = 0; raw_tail_next(&t, &rec) == RAW_NEXT_RECORD; n++)
		CHECK(n == 0 || rec.size == (3u << 20) + 8 * (n - 1));
	CHECK_EQ(n, 4);
	CHECK_EQ(raw_tail_next(&t, &rec), RAW_NEXT_ZEROS);
	CHECK_EQ(rec.off, first);
	CHECK_EQ(raw_tail_offset(&t), first);
	/* published since */
	CHECK_EQ(pwrite(fd, r.b + first, r.len - first, (off_t)first), (ssize_t)(r.len - first));
	CHECK_EQ(raw_tail_next(&t, &rec), RAW_NEXT_RECORD);
	CHECK_EQ(rec.type, RAW_THREAD_EXIT);
	CHECK_EQ(rec.off, first);
	CHECK_EQ(raw_tail_next(&t, &rec), RAW_NEXT_RECORD);
	CHECK_EQ(rec.type, RAW_END);
	CHECK_EQ(raw_tail_next(&t, &rec), RAW_NEXT_ENDED);
	CHECK_EQ(raw_tail_offset(&t), r.len);
	raw_tail_free(&t);
	/* the same, not live: as the buffer walk says */
	CHECK_EQ(tail_walk(fd, start, 0, &n, &rec), RAW_NEXT_ENDED);
	CHECK_EQ(n, 6);
	close(fd);
	free(r.b);
}

int main(void)
{
	test_tail_cuts();
	test_tail_live();
	test_head();
	test_v2_walk();
	test_whole();
	test_cuts();
	test_zeros();
	test_sizes();
	test_counts();
	test_procs();
	test_run_others();
	test_start();
	return check_done("test-raw-iter");
}
