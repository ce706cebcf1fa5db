/* test-rawmissed.c - a collect-timer sample after overflows that a perf
 * event counting user time only dropped in the kernel (RAW_SAMPLE_MISSED):
 * its user part is one sample, its system part a kernel sample for each
 * dropped period under the same user stack, with the noise of that many
 * samples; the same record without the flag stays one sample, in one
 * mode, as getrusage's split makes it. */
#include "check.h"
#include "error.h"
#include "rawbuild.h"
#include "raw-read.h"

#include <math.h>
#include <stddef.h>

#define MAIN_LEAF 0x401010
#define ROOT_RET 0x403031
#define MS 1000000ull

static void sink(enum pv_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

/* A trace at a 4 ms period of thread 101: a sample of 4 ms; one of 13 ms
 * whose 8 ms of system time are two dropped periods (flags: missed, or
 * not); one of 4 ms with 1 ms of system time by getrusage.  The thread's
 * exit says 21 ms, as the weights: no time is scaled. */
static void build_missed(struct rawbuf *r, bool missed)
{
	static const uint64_t st[] = { MAIN_LEAF, ROOT_RET };
	uint32_t flags = RAW_SAMPLE_RUNNING | RAW_SAMPLE_MISSED;

	rb_header_short(r, "/nonexistent/app", 4 * MS, 16000);
	rb_mapping(r, 0x400000, 0x500000, 0, "/nonexistent/app");
	rb_kernel_info(r, RAW_SYSTEM_RUSAGE, "");
	rb_thread(r, 101, "worker");
	rb_sample(r, 101, 0, st, 2, 1100000000, 4 * MS);
	if (missed) {
		size_t at = r->len;

		rb_sample(r, 101, 0, st, 2, 1200000000, 13 * MS);
		memcpy(r->b + at + offsetof(struct raw_sample, flags), &flags, sizeof flags);
	} else {
		rb_sample(r, 101, 0, st, 2, 1200000000, 13 * MS);
	}
	rb_sample_kernel(r, 101, 1200000000, 8 * MS, NULL, 0);
	rb_sample(r, 101, 0, st, 2, 1300000000, 4 * MS);
	rb_sample_kernel(r, 101, 1300000000, 1 * MS, NULL, 0);
	rb_thread_exit(r, 101, 1400000000, 21 * MS);
	rb_end(r, 1500000000, 3, 0);
}

static struct pv_profile *read_missed(struct rawbuf *r, bool missed)
{
	struct pv_profile *p;

	build_missed(r, missed);
	p = raw_read(r->b, r->len, "m.raw", NULL);
	CHECK(p != NULL);
	if (p)
		CHECK_EQ(p->nvalues, 2);
	return p;
}

static bool is_kernel(const struct pv_profile *p, size_t i)
{
	return (p->samples[i].flags & PV_SAMPLE_KERNEL) != 0;
}

/* The dropped periods: 5 ms of user time, one sample; 8 ms of system
 * time, two samples of the kernel on top of the user stack, whose
 * variance is two samples' of 4 ms (32 ms^2), not one of 8 (64) nor the
 * whole record's (169). */
static void test_missed(void)
{
	struct rawbuf r = { 0 };
	struct pv_profile *p = read_missed(&r, true);

	if (p && p->nvalues == 2) {
		CHECK_EQ(p->nsamples, 4);
		if (p->nsamples == 4) {
			const struct pv_sample *u = &p->samples[1], *k = &p->samples[2];

			CHECK(!is_kernel(p, 0) && !is_kernel(p, 1) && is_kernel(p, 2) && !is_kernel(p, 3));
			CHECK_EQ(u->values[0], 1);
			CHECK_EQ(u->values[1], (int64_t)(5 * MS));
			CHECK_EQ(k->values[0], 2);
			CHECK_EQ(k->values[1], (int64_t)(8 * MS));
			CHECK_EQ(k->nlocs, u->nlocs + 1);
			CHECK(pv_location_is_kernel(p, pv_sample_locs(p, k)[0]));
			CHECK_EQ(pv_sample_locs(p, k)[1], pv_sample_locs(p, u)[0]);
			CHECK(fabs(pv_sample_var(k, 1, 0) - 32.0 * MS * MS) < 1e-3 * MS * MS);
			CHECK(fabs(pv_sample_var(u, 1, 0) - 25.0 * MS * MS) < 1e-3 * MS * MS);
			/* the next sample's 1 ms of getrusage is not half of it */
			CHECK_EQ(p->samples[3].values[1], (int64_t)(4 * MS));
		}
		CHECK_EQ(p->system_cpu_ns, (int64_t)(8 * MS));
		pv_profile_free(p);
	}
	free(r.b);
}

/* Without the flag: one sample, the kernel's (8 of 13 ms owed), whole. */
static void test_not_missed(void)
{
	struct rawbuf r = { 0 };
	struct pv_profile *p = read_missed(&r, false);

	if (p && p->nvalues == 2) {
		CHECK_EQ(p->nsamples, 3);
		if (p->nsamples == 3) {
			CHECK(is_kernel(p, 1));
			CHECK_EQ(p->samples[1].values[0], 1);
			CHECK_EQ(p->samples[1].values[1], (int64_t)(13 * MS));
		}
		pv_profile_free(p);
	}
	free(r.b);
}

/* A POSIX timer's samples at a 4 ms period: 4 ms in user mode; 13 ms
 * whose signal came as the thread returned from a system call, its last
 * period the call's (4 ms of system time owed); 4 ms with 1 ms more.
 * Flagged RAW_SAMPLE_IN_CALL, the 13 ms sample is the kernel's (half a
 * period is owed) and the thread then owes 9 ms, so the last sample stays
 * user time; without the flag it is user time (less than half of it is
 * owed), and the last sample, owed 5 of 4 ms, the kernel's: either way
 * one sample's worth of system time, placed where the instant was in the
 * kernel when that is known. */
static void test_in_call(bool flag)
{
	static const uint64_t st[] = { MAIN_LEAF, ROOT_RET };
	uint32_t flags = RAW_SAMPLE_RUNNING | RAW_SAMPLE_IN_CALL;
	struct rawbuf r = { 0 };
	struct pv_profile *p;
	size_t at;

	rb_header_short(&r, "/nonexistent/app", 4 * MS, 16000);
	rb_mapping(&r, 0x400000, 0x500000, 0, "/nonexistent/app");
	rb_kernel_info(&r, RAW_SYSTEM_RUSAGE, "");
	rb_thread(&r, 101, "worker");
	rb_sample(&r, 101, 0, st, 2, 1100000000, 4 * MS);
	at = r.len;
	rb_sample(&r, 101, 0, st, 2, 1200000000, 13 * MS);
	if (flag)
		memcpy(r.b + at + offsetof(struct raw_sample, flags), &flags, sizeof flags);
	rb_sample_kernel(&r, 101, 1200000000, 4 * MS, NULL, 0);
	rb_sample(&r, 101, 0, st, 2, 1300000000, 4 * MS);
	rb_sample_kernel(&r, 101, 1300000000, 1 * MS, NULL, 0);
	rb_thread_exit(&r, 101, 1400000000, 21 * MS);
	rb_end(&r, 1500000000, 3, 0);
	p = raw_read(r.b, r.len, "c.raw", NULL);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 3);
		if (p->nsamples == 3) {
			CHECK(!is_kernel(p, 0));
			CHECK_EQ(is_kernel(p, 1), flag);
			CHECK_EQ(is_kernel(p, 2), !flag);
			CHECK_EQ(p->samples[1].values[1], (int64_t)(13 * MS));
		}
		pv_profile_free(p);
	}
	free(r.b);
}

int main(void)
{
	pv_error_set_sink(sink);
	test_missed();
	test_not_missed();
	test_in_call(true);
	test_in_call(false);
	return check_done("test-rawmissed");
}
