/* test-rawcpu.c - when raw-cpu.c says threads were never sampled: only
 * when no sample in that much CPU time is improbable, whatever the number
 * of threads, and never for a program too brief to expect a sample. */
#include "check.h"
#include "raw-cpu.h"

#include <math.h>

#define PERIOD 4000000ull /* 250 Hz */
#define SHORT 16000u      /* microseconds */

/* A trace of `n` threads, each `cpu_ns` of CPU time, none sampled, and
 * `sampled` threads above the threshold with samples; settled into *s. */
static void settle(uint64_t n, uint64_t cpu_ns, uint64_t sampled, struct raw_cpu_summary *s)
{
	struct raw_cpu *c = raw_cpu_new(SHORT, PERIOD);
	uint32_t tid = 100;

	CHECK(c != NULL);
	if (c == NULL)
		return;
	for (uint64_t i = 0; i < n; i++, tid++) {
		CHECK_EQ(raw_cpu_thread(c, tid, 1, 1000), 0);
		CHECK_EQ(raw_cpu_exit(c, tid, 1000 + cpu_ns), 0);
	}
	for (uint64_t i = 0; i < sampled; i++, tid++) {
		CHECK_EQ(raw_cpu_thread(c, tid, 1, 0), 0);
		CHECK(raw_cpu_sample(c, tid, PERIOD) >= 0);
		CHECK_EQ(raw_cpu_exit(c, tid, 50 * PERIOD), 0);
	}
	raw_cpu_settle(c, s);
	raw_cpu_free(c);
}

/* The smallest CPU time (to 1 us) at which one thread of `n` with no
 * sample is said to be unsampled; `others` sampled long threads beside. */
static uint64_t bar_of(uint64_t n, uint64_t others)
{
	uint64_t lo = SHORT * 1000ull, hi = 1000 * PERIOD;
	struct raw_cpu_summary s;

	while (hi - lo > 1000) {
		uint64_t mid = lo + (hi - lo) / 2;

		settle(n, mid, others, &s);
		if (s.unsampled_threads > 0)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* At one sample a period, the chance of no sample in the bar's CPU time,
 * times the groups tested, is below 10^-4, and the bar is not much higher
 * than it needs to be. */
static void test_bar(void)
{
	static const uint64_t groups[] = { 1, 2, 3, 10, 100, 1000 };

	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
		uint64_t g = groups[i], bar = bar_of(1, g - 1);
		double miss = exp(-(double)bar / (double)PERIOD) * (double)g;
		double need = (double)PERIOD * log(1e4 * (double)g);

		CHECK(miss < 1e-4);
		CHECK((double)bar < 1.1 * need);
	}
}

/* A program that ran 0.4 ms, one thread: in no sample, but brief. */
static void test_brief(void)
{
	struct raw_cpu_summary s;
	char say[512];

	settle(1, 400000, 0, &s);
	CHECK_EQ(s.unsampled_threads, 0);
	CHECK_EQ(s.unsampled_cpu_ns, 0);
	CHECK_EQ(s.brief_threads, 1);
	CHECK_EQ(s.brief_cpu_ns, 400000);
	CHECK(!raw_cpu_unsampled_say(say, sizeof(say), s.unsampled_cpu_ns, s.cpu_ns,
				     s.unsampled_threads, s.threads, 0));
	/* many short threads, none sampled, but together a second of CPU:
	 * that is no accident */
	settle(100, 10000000, 0, &s);
	CHECK_EQ(s.unsampled_threads, 100);
	CHECK_EQ(s.unsampled_cpu_ns, 1000000000);
	CHECK_EQ(s.brief_threads, 0);
	CHECK(raw_cpu_unsampled_say(say, sizeof(say), s.unsampled_cpu_ns, s.cpu_ns,
				    s.unsampled_threads, s.threads, 0));
	CHECK(strstr(say, "100 of 100 threads were never sampled") != NULL);
	/* one long thread of 100 periods never sampled beside 9 that were */
	settle(1, 100 * PERIOD, 9, &s);
	CHECK_EQ(s.unsampled_threads, 1);
	CHECK_EQ(s.unsampled_cpu_ns, 100 * PERIOD);
}

/* Without a period (unknown), every thread with no sample is said. */
static void test_no_period(void)
{
	struct raw_cpu *c = raw_cpu_new(SHORT, 0);
	struct raw_cpu_summary s;

	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_EQ(raw_cpu_thread(c, 7, 1, 0), 0);
	CHECK_EQ(raw_cpu_exit(c, 7, 400000), 0);
	raw_cpu_settle(c, &s);
	CHECK_EQ(s.unsampled_threads, 1);
	raw_cpu_free(c);
}

int main(void)
{
	test_bar();
	test_brief();
	test_no_period();
	return check_done("test-rawcpu");
}
