/* test-segments.c - collect-timer --split's cutting (collectors/launch/
 * segments.c) on a trace built by hand, written to a file the way the
 * collector writes it (zeros after the last record published): every
 * segment is a trace of its own, finished, that the raw reader reads
 * without a word; they start and last what their windows say; the
 * stacks their samples refer to are in them (a stack on the native frames
 * of another, that one before it); together they hold every
 * sample once and each thread's CPU time exactly as the whole trace does,
 * a pause and quiet windows included; the part cut is given back to the
 * file system; --keep-segments keeps the last ones. */
#include "check.h"
#include "error.h"
#include "profile.h"
#include "raw-read.h"
#include "rawbuild.h"
#include "segments.h"

#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#define S 1000000000ull  /* the trace's start (rawbuild's) */
#define SEC 1000000000ull
#define MS 1000000ull
#define LIVE_SIZE (8u << 20)
#define BULK (3u << 20)  /* a record of a type no reader knows, to make the trace large */

static int nwarnings;
static char dir[] = "/tmp/profview-segments.XXXXXX";

static void sink(enum pv_level level, const char *msg)
{
	(void)level;
	nwarnings++;
	fprintf(stderr, "message: %s\n", msg);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	nwarnings++;
}

static void fp_sample(struct rawbuf *r, uint32_t tid, uint32_t stack, uint64_t t, uint64_t w)
{
	static const uint64_t leaf[] = { 0x400300, 0x400200 };

	rb_sample(r, tid, stack, leaf, 2, t, w);
}

/* The whole run, and where the part published before the first poll ends:
 * five windows of a second, the first busy, a pause from 1.5 s to 3.6 s
 * (windows 3 and 4 quiet), a thread that lives and ends in window 4, and
 * the end at 4.2 s. */
static void build(struct rawbuf *r, size_t *first_part)
{
	static const uint64_t st1[] = { 0x400100, 0x400200 }, st2[] = { 0x400180, 0x400200 };
	uint64_t c10 = 1000 * MS, c11 = 500 * MS;

	rb_header_short(r, "/nonexistent/app", 4 * MS, 16000);
	rb_mapping(r, 0x400000, 0x401000, 0, "/nonexistent/app");
	rb_thread_cpu(r, 10, "main", c10);
	rb_thread_cpu(r, 11, "worker", c11);
	rb_stack(r, 1, st1, 2);
	/* stack 3 with a Python part, in window 1 alone; in window 2, stack
	 * 4 of its native frames with another part (a segment of its own
	 * needs them both) */
	rb_stack_py(r, 3, 7, st2, 2);
	/* window 1: 200 samples of each thread, 4 ms each */
	for (int i = 0; i < 200; i++) {
		fp_sample(r, 10, i == 1 ? 3 : i % 3 ? 1 : 0, S + 100 * MS + (uint64_t)i * 4 * MS, 4 * MS);
		fp_sample(r, 11, 0, S + 100 * MS + (uint64_t)i * 4 * MS + MS, 4 * MS);
	}
	c10 += 800 * MS;
	c11 += 800 * MS;
	{
		struct raw_rec h = { 99, BULK };

		/* zeros after its header: only a reader that skips it by its
		 * size goes on past it */
		rb_put(r, &h, sizeof h);
		rb_zero(r, BULK - sizeof h);
	}
	*first_part = r->len;
	/* window 2: stack 1 again (written in window 1), a new stack 2 */
	rb_stack_pyref(r, 4, 8, 3);
	fp_sample(r, 10, 4, S + 1100 * MS, 6 * MS);
	rb_stack(r, 2, st2, 2);
	fp_sample(r, 11, 2, S + 1200 * MS, 7 * MS);
	fp_sample(r, 10, 2, S + 1300 * MS, 5 * MS);
	c10 += 11 * MS;
	c11 += 7 * MS;
	/* the pause: each thread's time after its last sample is in its
	 * stretch (3 and 2 ms) */
	rb_thread_exit(r, 10, S + 1500 * MS, c10 + 3 * MS);
	rb_thread_exit(r, 11, S + 1500 * MS, c11 + 2 * MS);
	/* the resume, after 300 and 400 ms of CPU time paused */
	c10 += 303 * MS;
	c11 += 402 * MS;
	rb_thread_cpu(r, 10, "main", c10);
	rb_thread_cpu(r, 11, "worker", c11);
	/* window 4 */
	fp_sample(r, 10, 1, S + 3700 * MS, 3 * MS);
	fp_sample(r, 11, 0, S + 3800 * MS, 5 * MS);
	c10 += 3 * MS;
	c11 += 5 * MS;
	rb_thread_cpu(r, 12, "late", 0);
	fp_sample(r, 12, 1, S + 3900 * MS, MS);
	rb_thread_exit(r, 12, S + 3950 * MS, 2 * MS);
	rb_lost(r, 2);
	/* window 5: the end */
	fp_sample(r, 10, 2, S + 4100 * MS, 4 * MS);
	c10 += 4 * MS;
	rb_thread_exit(r, 10, S + 4200 * MS, c10 + MS);
	rb_thread_exit(r, 11, S + 4200 * MS, c11 + 9 * MS);
	rb_end(r, S + 4200 * MS, 0, 3);
}

/* Per thread id, the CPU time a profile charges it (sum over segments). */
struct totals {
	int64_t cpu[16];
	uint64_t samples;
	int64_t weight;
};

static void add_totals(struct totals *t, const struct pv_profile *p)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid < 16 && p->threads[i].cpu_ns > 0)
			t->cpu[p->threads[i].tid] += p->threads[i].cpu_ns;
	t->samples += p->nsamples;
	t->weight += pv_total(p, 1);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *b;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) != 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	b = malloc((size_t)st.st_size + 1);
	*len = b != NULL ? (size_t)read(fd, b, (size_t)st.st_size) : 0;
	close(fd);
	return b;
}

static void test_cut(void)
{
	struct rawbuf r = { 0 };
	struct totals whole = { 0 }, parts = { 0 };
	struct pv_profile *p;
	struct seg_summary sum;
	struct stat st;
	size_t first, len;
	char live[64], name[128];
	unsigned char *zeros = calloc(LIVE_SIZE, 1);
	struct seg *s;
	int fd;

	build(&r, &first);
	snprintf(live, sizeof live, "%s/t.raw", dir);
	/* as the collector leaves it: zeros after what is published */
	fd = open(live, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && zeros != NULL && r.len < LIVE_SIZE);
	CHECK_EQ(pwrite(fd, zeros, LIVE_SIZE, 0), LIVE_SIZE);
	CHECK_EQ(pwrite(fd, r.b, first, 0), (ssize_t)first);
	s = seg_new(live, SEC, 0, say);
	CHECK(s != NULL);
	if (s == NULL)
		return;
	/* window 1 is not over yet: nothing written */
	CHECK_EQ(seg_poll(s, S + 900 * MS), 0);
	seg_name(s, 1, name, sizeof name);
	CHECK_STR(strrchr(name, '/') + 1, "t.seg0001.raw");
	CHECK(access(name, F_OK) != 0);
	/* the rest comes: the trace ends, five windows */
	CHECK_EQ(pwrite(fd, r.b + first, r.len - first, (off_t)first), (ssize_t)(r.len - first));
	CHECK_EQ(seg_poll(s, S + 4500 * MS), 1);
	seg_finish(s);
	seg_summary(s, &sum);
	CHECK(sum.started && sum.ended && sum.finished && !sum.bad);
	CHECK_EQ(sum.segments, 5);
	CHECK_EQ(sum.first, 1);
	CHECK_EQ(sum.last, 5);
	CHECK_EQ(sum.failed, 0);
	CHECK_EQ(sum.samples, 407);
	CHECK_EQ(sum.lost, 3);
	CHECK_EQ(sum.threads, 3);
	/* what was cut is a hole now, up to a 2 MiB boundary: all but the
	 * header's page */
	CHECK_EQ(fstat(fd, &st), 0);
	CHECK((uint64_t)st.st_blocks * 512 <= LIVE_SIZE - (r.len / (2u << 20) * (2u << 20) - 4096));

	p = raw_read(r.b, r.len, "whole", NULL);
	CHECK(p != NULL);
	if (p)
		add_totals(&whole, p);
	pv_profile_free(p);
	nwarnings = 0;
	for (uint64_t k = 1; k <= 5; k++) {
		unsigned char *b = slurp(seg_name(s, k, name, sizeof name), &len);

		CHECK(b != NULL);
		if (b == NULL)
			continue;
		p = raw_read(b, len, name, NULL);
		CHECK(p != NULL);
		if (p != NULL) {
			CHECK(p->finished);
			CHECK_EQ(p->time_ns, 1700000000000000000LL + (int64_t)((k - 1) * SEC));
			CHECK_EQ(p->duration_ns, k < 5 ? (int64_t)SEC : (int64_t)(200 * MS));
			/* (and the Python frames' of the segments with stacks 3 and 4) */
			CHECK_EQ(p->nmappings, k <= 2 ? 2 : 1);
			CHECK_EQ(p->lost, k == 4 ? 2 : k == 5 ? 1 : 0);
			add_totals(&parts, p);
		}
		pv_profile_free(p);
		free(b);
	}
	/* not a word: no stack missing, nothing cut short */
	CHECK_EQ(nwarnings, 0);
	CHECK_EQ(parts.samples, whole.samples);
	CHECK_EQ(parts.weight, whole.weight);
	for (int t = 10; t <= 12; t++)
		CHECK_EQ(parts.cpu[t], whole.cpu[t]);
	/* the whole trace's: the stretches, the paused time in none */
	CHECK_EQ(whole.cpu[10], (800 + 11 + 3) * MS + (3 + 4 + 1) * MS);
	CHECK_EQ(whole.cpu[11], (800 + 7 + 2) * MS + (5 + 9) * MS);
	CHECK_EQ(whole.cpu[12], 2 * MS);
	seg_free(s);
	close(fd);
	free(zeros);
	free(r.b);
}

static void test_keep(void)
{
	struct rawbuf r = { 0 };
	struct seg_summary sum;
	char live[64], name[128], old[128];
	size_t first;
	struct seg *s;
	int fd;

	build(&r, &first);
	snprintf(live, sizeof live, "%s/k.raw", dir);
	fd = open(live, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK_EQ(pwrite(fd, r.b, r.len, 0), (ssize_t)r.len);
	s = seg_new(live, SEC, 2, say);
	CHECK(s != NULL);
	if (s == NULL)
		return;
	/* an earlier run's segment by the same name goes first */
	seg_name(s, 42, old, sizeof old);
	close(open(old, O_WRONLY | O_CREAT, 0600));
	seg_clear_old(s);
	CHECK(access(old, F_OK) != 0);
	CHECK_EQ(seg_poll(s, S + 4500 * MS), 1);
	seg_finish(s);
	seg_summary(s, &sum);
	CHECK_EQ(sum.segments, 5);
	CHECK_EQ(sum.first, 4);
	CHECK_EQ(sum.last, 5);
	for (uint64_t k = 1; k <= 5; k++)
		CHECK_EQ(access(seg_name(s, k, name, sizeof name), F_OK) == 0, k >= 4);
	for (uint64_t k = 4; k <= 5; k++)
		unlink(seg_name(s, k, name, sizeof name));
	seg_free(s);
	close(fd);
	unlink(live);
	free(r.b);
}

int main(void)
{
	char name[128];

	pv_error_set_sink(sink);
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_cut();
	test_keep();
	for (int k = 1; k <= 5; k++) {
		snprintf(name, sizeof name, "%s/t.seg%04d.raw", dir, k);
		unlink(name);
	}
	snprintf(name, sizeof name, "%s/t.raw", dir);
	unlink(name);
	rmdir(dir);
	return check_done("segments");
}
