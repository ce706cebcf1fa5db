/* test-perf.c - the perf script reader on hand-written perf script texts:
 * every field layout, with and without call chains, several events, cut
 * input and hostile names */
#include "check.h"
#include "error.h"
#include "folded-read.h"
#include "gdb-read.h"
#include "merge.h"
#include "perf-read.h"
#include "read.h"

#include <stdbool.h>
#include <fcntl.h>
#include <unistd.h>

static int nerrors, nwarnings;
static char last_msg[1024], last_warning[1024];

static void sink(enum pv_level level, const char *msg)
{
	if (level == PV_LEVEL_ERROR)
		nerrors++;
	else if (level == PV_LEVEL_WARNING) {
		nwarnings++;
		snprintf(last_warning, sizeof last_warning, "%s", msg);
	}
	snprintf(last_msg, sizeof last_msg, "%s", msg);
}

static struct pv_profile *rd_n(const char *text, size_t len)
{
	nerrors = nwarnings = 0;
	last_msg[0] = last_warning[0] = '\0';
	struct pv_profile *p = perf_read((const unsigned char *)text, len, "test");
	if (p && pv_profile_validate(p, "test") != 0) {
		fprintf(stderr, "invalid profile\n");
		check_failures++;
	}
	return p;
}

static struct pv_profile *rd(const char *text)
{
	return rd_n(text, strlen(text));
}

static bool detect(const char *text)
{
	return perf_detect((const unsigned char *)text, strlen(text));
}

/* "root;...;leaf" of sample i. */
static const char *stack_of(const struct pv_profile *p, size_t i)
{
	static char buf[8192];
	const struct pv_sample *s = &p->samples[i];
	const uint32_t *locs = pv_sample_locs(p, s);
	size_t n = 0;

	buf[0] = '\0';
	for (uint32_t k = s->nlocs; k-- > 0 && n < sizeof buf;) {
		const struct pv_location *l = &p->locations[locs[k]];
		const struct pv_line *lines = pv_location_lines(p, l);
		for (uint32_t j = l->nlines; j-- > 0 && n < sizeof buf;) {
			const struct pv_function *f = &p->functions[lines[j].function];
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? ";" : "", pv_str(p, f->name));
		}
	}
	return buf;
}

static const char *thread_name(const struct pv_profile *p, const struct pv_sample *s)
{
	return s->thread == PV_NONE ? NULL : pv_str(p, p->threads[s->thread].name);
}

static uint32_t tid_of(const struct pv_profile *p, const struct pv_sample *s)
{
	return s->thread == PV_NONE ? 0 : p->threads[s->thread].tid;
}

static const char *type_name(const struct pv_profile *p, uint32_t i)
{
	return i < p->nvalues ? pv_str(p, p->sample_types[i].type) : "";
}

static const char *type_unit(const struct pv_profile *p, uint32_t i)
{
	return i < p->nvalues ? pv_str(p, p->sample_types[i].unit) : "";
}

/* The mapping of the leaf of sample i. */
static const struct pv_mapping *leaf_mapping(const struct pv_profile *p, size_t i)
{
	const struct pv_sample *s = &p->samples[i];
	uint32_t m = p->locations[pv_sample_locs(p, s)[0]].mapping;
	return m == PV_NONE ? NULL : &p->mappings[m];
}

/* perf 6.1, perf record -e cpu-clock -g, perf script (default fields). */
static const char default_g[] =
	"demo 18883   391.944958:     250000 cpu-clock: \n"
	"\t            1334 parse_record+0xa4 (/tmp/ps/demo)\n"
	"\t            1410 process_batch+0x30 (/tmp/ps/demo)\n"
	"\t            1500 main+0x20 (/tmp/ps/demo)\n"
	"\t           29d90 __libc_start_call_main+0x80 (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
	"\n"
	"demo 18883   391.945457:     250000 cpu-clock: \n"
	"\tffffffff8162a93e find_mergeable_anon_vma+0x7e ([kernel.kallsyms])\n"
	"\tffffffff81000c82 asm_exc_page_fault+0x22 ([kernel.kallsyms])\n"
	"\t            122b insert_key.constprop.0+0x1b (/tmp/ps/demo)\n"
	"\t          18b9fe [unknown] ([unknown])\n"
	"\n"
	"worker-1 18892   391.946205:     250000 cpu-clock: \n"
	"\t            12fd parse_record+0x6d (/tmp/ps/demo)\n"
	"\t            7567b [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
	"\n";

static void test_default_fields(void)
{
	struct pv_profile *p;

	CHECK(detect(default_g));
	p = rd(default_g);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(nwarnings, 0);
	CHECK_EQ(p->nsamples, 3);
	CHECK_STR(pv_str(p, p->source_format), "perf script output");
	CHECK_STR(pv_str(p, p->program), "demo");
	/* samples, and the clock's periods as CPU time, named after the
	 * event without its modifiers ("cpu-clock:ppp" is cpu-clock); the
	 * periods are what reports weigh by, as perf report */
	CHECK_EQ(p->nvalues, 2);
	CHECK_STR(type_name(p, 0), "samples");
	CHECK_STR(type_unit(p, 0), "count");
	CHECK_STR(type_name(p, 1), "cpu-clock");
	CHECK_STR(type_unit(p, 1), "nanoseconds");
	CHECK_STR(pv_str(p, p->default_type), "cpu-clock");
	CHECK_EQ(p->samples[0].values[0], 1);
	CHECK_EQ(p->samples[0].values[1], 250000);
	CHECK_EQ(p->period, 250000);
	CHECK_STR(pv_str(p, p->period_type.type), "cpu-clock");
	CHECK_STR(stack_of(p, 0), "__libc_start_call_main;main;process_batch;parse_record");
	/* kernel frames: one mapping, the sample flagged */
	CHECK_STR(stack_of(p, 1), "0x18b9fe;insert_key.constprop.0;asm_exc_page_fault;find_mergeable_anon_vma");
	CHECK(leaf_mapping(p, 1) != NULL);
	if (leaf_mapping(p, 1)) {
		CHECK_STR(pv_str(p, leaf_mapping(p, 1)->file), PV_KERNEL_MAPPING_NAME);
		CHECK_EQ(leaf_mapping(p, 1)->kind, PV_MAP_KERNEL);
	}
	CHECK(p->samples[1].flags & PV_SAMPLE_KERNEL);
	CHECK(!(p->samples[0].flags & PV_SAMPLE_KERNEL));
	CHECK_EQ(p->system_cpu_ns, 250000);
	CHECK_STR(pv_str(p, leaf_mapping(p, 0)->file), "/tmp/ps/demo");
	/* an unknown symbol in a known DSO keeps the address */
	CHECK_STR(stack_of(p, 2), "libc.so.6+0x7567b;parse_record");
	/* threads by tid, named by their command */
	CHECK_EQ(p->nthreads, 2);
	CHECK_EQ(tid_of(p, &p->samples[2]), 18892);
	CHECK_STR(thread_name(p, &p->samples[2]), "worker-1");
	CHECK_STR(thread_name(p, &p->samples[0]), "demo");
	/* times from the first sample */
	CHECK(p->timed);
	CHECK_EQ(p->samples[0].time_ns, 0);
	CHECK_EQ(p->samples[1].time_ns, 499000);
	CHECK_EQ(p->samples[2].time_ns, 1247000);
	CHECK_EQ(p->duration_ns, 1247000 + 250000);
	/* no pid in these fields: the tid alone */
	CHECK_EQ(p->pid, 0);
	/* the analyzer must not symbolize these again: every location named */
	for (size_t i = 0; i < p->nlocations; i++)
		CHECK(p->locations[i].nlines > 0);
	CHECK(p->finished);
	pv_profile_free(p);
}

/* -F comm,pid,tid,time,period,event,ip,sym,dso and --ns */
static void test_fields_pid_tid(void)
{
	static const char text[] =
		"demo 18883/18883   391.944958123:     250000 cpu-clock: \n"
		"\t           18c84 _dl_important_hwcaps (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n"
		"\t            61a2 _dl_init_paths (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n"
		"\n"
		"worker-2 18883/18893   391.945207000:     250000 cpu-clock: \n"
		"\t            e3aa _dl_relocate_object (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n"
		"\n";
	struct pv_profile *p;

	CHECK(detect(text));
	p = rd(text);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(p->nsamples, 2);
	CHECK_EQ(p->pid, 18883);
	CHECK_EQ(tid_of(p, &p->samples[1]), 18893);
	CHECK_STR(thread_name(p, &p->samples[1]), "worker-2");
	CHECK_EQ(p->samples[1].time_ns, 391945207000LL - 391944958123LL);
	CHECK_STR(stack_of(p, 0), "_dl_init_paths;_dl_important_hwcaps");
	pv_profile_free(p);
}

/* Fields missing: no time, no period, no tid, no event. */
static void test_missing_fields(void)
{
	static const char no_time[] =
		"demo 18883     250000 cpu-clock: \n"
		"\t           18c84 a (/x)\n"
		"\n"
		"demo 18883     250000 cpu-clock: \n"
		"\t           18c85 b (/x)\n"
		"\n";
	static const char no_period[] =
		"demo 18883   391.944958: cpu-clock: \n"
		"\t           18c84 a (/x)\n"
		"\n";
	static const char no_tid[] =
		"demo   391.944958:     250000 cpu-clock: \n"
		"\t           18c84 a (/x)\n"
		"\n";
	static const char comm_tid[] =
		"demo 18883 \n"
		"\t           18c84 a\n"
		"\t           18c90 main\n"
		"\n";
	static const char tid_ip[] =
		"18883 \n"
		"\t           18c84\n"
		"\n";
	static const char ip_sym[] =
		"\n"
		"\t           18c84 a\n"
		"\t           18c90 main\n"
		"\n";
	struct pv_profile *p;

	CHECK(detect(no_time));
	p = rd(no_time);
	CHECK(p && p->nsamples == 2 && !p->timed);
	if (p) {
		CHECK_EQ(p->samples[1].time_ns, 0);
		CHECK_EQ(p->system_cpu_ns, -1); /* no kernel frames: not known */
	}
	pv_profile_free(p);

	CHECK(detect(no_period));
	p = rd(no_period);
	CHECK(p && p->nsamples == 1 && p->timed);
	if (p) {
		/* without periods: samples alone */
		CHECK_EQ(p->nvalues, 1);
		CHECK_STR(type_name(p, 0), "samples");
	}
	pv_profile_free(p);

	CHECK(detect(no_tid));
	p = rd(no_tid);
	CHECK(p && p->nsamples == 1);
	if (p) {
		CHECK_EQ(p->samples[0].thread, PV_NONE);
		CHECK_EQ(p->nthreads, 0);
	}
	pv_profile_free(p);

	CHECK(detect(comm_tid));
	p = rd(comm_tid);
	CHECK(p && p->nsamples == 1);
	if (p) {
		CHECK_STR(stack_of(p, 0), "main;a");
		CHECK_EQ(tid_of(p, &p->samples[0]), 18883);
	}
	pv_profile_free(p);

	CHECK(detect(tid_ip));
	p = rd(tid_ip);
	CHECK(p && p->nsamples == 1);
	if (p)
		CHECK_STR(stack_of(p, 0), "0x18c84");
	pv_profile_free(p);

	CHECK(detect(ip_sym));
	p = rd(ip_sym);
	CHECK(p && p->nsamples == 1);
	if (p) {
		CHECK_STR(stack_of(p, 0), "main;a");
		CHECK_EQ(p->samples[0].thread, PV_NONE);
	}
	pv_profile_free(p);
}

/* Recorded without -g: the frame ends the header, comm padded to 16. */
static void test_no_callchain(void)
{
	static const char text[] =
		"            demo 18883   391.944958:     250000 cpu-clock:      7ff6c0264c84 _dl_important_hwcaps+0x6b4 (/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2)\n"
		"     tmux: server  1234 [001]   391.945207:     250000 cpu-clock:  ffffffff8162a93e find_mergeable_anon_vma+0x7e ([kernel.kallsyms])\n"
		"         4 2 6 8  4242   391.945457:     250000 cpu-clock:      55d1c0001234 [unknown] ([unknown])\n";
	static const char tid_ip[] =
		"            demo 18883      7ff6c0264c84 _dl_important_hwcaps (/usr/lib/ld.so)\n"
		"            demo 18883      7ff6c025a3aa _dl_relocate_object (/usr/lib/ld.so)\n";
	struct pv_profile *p;

	/* command, tid and frame alone: two lines of the same fields */
	CHECK(detect(tid_ip));
	CHECK(!detect("            demo 18883      7ff6c0264c84 _dl_important_hwcaps (/usr/lib/ld.so)\n"
		      "something else\n"));
	p = rd(tid_ip);
	CHECK(p && p->nsamples == 2 && !p->timed);
	if (p)
		CHECK_STR(stack_of(p, 1), "_dl_relocate_object");
	pv_profile_free(p);

	CHECK(detect(text));
	p = rd(text);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(nwarnings, 0);
	CHECK_EQ(p->nsamples, 3);
	CHECK_STR(stack_of(p, 0), "_dl_important_hwcaps");
	CHECK_STR(stack_of(p, 1), "find_mergeable_anon_vma");
	CHECK(p->samples[1].flags & PV_SAMPLE_KERNEL);
	CHECK_STR(thread_name(p, &p->samples[1]), "tmux: server");
	CHECK_EQ(tid_of(p, &p->samples[1]), 1234);
	/* a command of digits and spaces before the tid */
	CHECK_STR(thread_name(p, &p->samples[2]), "4 2 6 8");
	CHECK_EQ(tid_of(p, &p->samples[2]), 4242);
	CHECK_STR(stack_of(p, 2), "0x55d1c0001234");
	CHECK(p->timed);
	pv_profile_free(p);
}

/* -G -F comm,pid,tid,time,period,ip,sym,dso: a period and then the frame,
 * no event between them (perf 6.1's layout). */
static void test_period_then_ip(void)
{
	static const char text[] =
		"         cc1plus 11941/11941  3307.275412:    4000000      7f0f2229a4cd __memset_avx2_unaligned_erms (/usr/lib/x86_64-linux-gnu/libc.so.6)\n"
		"         cc1plus 11941/11941  3307.283767:    4000000           1b1a2f6 _cpp_parse_expr (/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus)\n"
		"         cc1plus 11941/11942  3307.287786:    2000000           1b1f4ca [unknown] (/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus)\n";
	/* no period: a decimal-looking address, then a symbol that looks
	 * like hex ("add") and its dso */
	static const char hex_sym[] =
		"demo 18883   391.944958:      401234 add (/tmp/demo)\n"
		"demo 18883   391.945958:      401250 add (/tmp/demo)\n";
	struct pv_profile *p;

	CHECK(detect(text));
	p = rd(text);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 3);
		CHECK_STR(stack_of(p, 0), "__memset_avx2_unaligned_erms");
		CHECK_STR(stack_of(p, 1), "_cpp_parse_expr");
		CHECK_EQ(p->samples[0].values[0], 1);
		/* the periods are the weights: 4 ms, 4 ms, 2 ms */
		CHECK(p->nvalues >= 2);
		if (p->nvalues >= 2)
			CHECK_EQ(p->samples[2].values[1], 2000000);
		CHECK_EQ(tid_of(p, &p->samples[2]), 11942);
		CHECK_EQ(p->locations[pv_sample_locs(p, &p->samples[1])[0]].address, 0x1b1a2f6);
	}
	pv_profile_free(p);

	p = rd(hex_sym);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 2);
		CHECK_STR(stack_of(p, 0), "add");
		CHECK_EQ(p->locations[pv_sample_locs(p, &p->samples[0])[0]].address, 0x401234);
	}
	pv_profile_free(p);
}

/* Two events recorded together stay apart; the first is the default. */
static void test_events(void)
{
	static const char text[] =
		"app 10   1.000000:     200000     cycles:u: \n"
		"\t  1000 hot (/app)\n"
		"\t  2000 main (/app)\n"
		"\n"
		"app 10   1.000100:     150000 instructions:u: \n"
		"\t  1100 cold (/app)\n"
		"\t  2000 main (/app)\n"
		"\n"
		"app 10   1.000200:     300000     cycles:u: \n"
		"\t  1000 hot (/app)\n"
		"\t  2000 main (/app)\n"
		"\n"
		"app 10   1.000300:         42 sched:sched_switch: prev_comm=app prev_pid=10\n"
		"\t  1200 other (/app)\n"
		"\n"
		"app 10   1.000400:         42 page-faults/period=42/: \n"
		"\t  1300 fault (/app)\n"
		"\n"
		"app 10   1.000500:          7 cpu/event=0x3c,umask=0x0/u: \n"
		"\t  1300 fault (/app)\n"
		"\n";
	struct pv_profile *p;

	CHECK(detect(text));
	p = rd(text);
	CHECK(p != NULL);
	if (!p)
		return;
	/* every event's periods, named without modifiers or settings, and
	 * its count of samples; "samples" counts them all */
	CHECK_EQ(p->nvalues, 9);
	CHECK_STR(type_name(p, 0), "samples");
	CHECK_STR(type_name(p, 1), "cycles");
	CHECK_STR(type_unit(p, 1), "count");
	CHECK_STR(type_name(p, 2), "cycles_samples");
	CHECK_STR(type_name(p, 3), "instructions");
	CHECK_STR(type_name(p, 4), "instructions_samples");
	CHECK_STR(type_name(p, 5), "sched:sched_switch");
	CHECK_STR(type_name(p, 7), "page-faults");
	CHECK_STR(pv_str(p, p->default_type), "cycles");
	CHECK_EQ(pv_total(p, 0), 5);
	CHECK_EQ(pv_total(p, 1), 500000);
	CHECK_EQ(pv_total(p, 2), 2);
	CHECK_EQ(pv_total(p, 3), 150000);
	CHECK_EQ(pv_total(p, 4), 1);
	CHECK_EQ(pv_total(p, 5), 42);
	CHECK_EQ(pv_total(p, 7), 42);
	CHECK_EQ(pv_total(p, 8), 1);
	CHECK_EQ(p->samples[1].values[1], 0);
	CHECK_EQ(p->samples[1].values[2], 0);
	CHECK_EQ(p->period, 0); /* counts, not a time */
	/* a fifth event has no room: left out, with a warning */
	CHECK_EQ(p->nsamples, 5);
	CHECK_EQ(nwarnings, 1);
	CHECK_CONTAINS(last_warning, "1 samples of events past the first 4");
	CHECK_CONTAINS(last_warning, "line 19");
	pv_profile_free(p);

	/* two events without periods: each one's counts, the first's made
	 * for the samples read before the second came */
	static const char counts[] =
		"app 10 cycles:u: \n\t  1000 hot (/app)\n\n"
		"app 10 cycles:u: \n\t  1000 hot (/app)\n\n"
		"app 10 page-faults: \n\t  1100 cold (/app)\n\n";
	p = rd(counts);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(nwarnings, 0);
		CHECK_EQ(p->nvalues, 5);
		CHECK_STR(type_name(p, 1), "cycles");
		CHECK_STR(type_name(p, 2), "cycles_samples");
		CHECK_STR(type_name(p, 3), "page-faults");
		CHECK_EQ(pv_total(p, 0), 3);
		CHECK_EQ(pv_total(p, 1), 2);
		CHECK_EQ(pv_total(p, 2), 2);
		CHECK_EQ(pv_total(p, 3), 1);
		CHECK_EQ(pv_total(p, 4), 1);
	}
	pv_profile_free(p);

	/* two clocks: each in nanoseconds, the first the profile's period */
	static const char clocks[] =
		"cc1 20076 [000]   440.941708:     250000  cpu-clock:            e88596 [unknown] (/usr/lib/gcc/x86_64-linux-gnu/12/cc1)\n"
		"cc1 20076 [000]   440.941712:     500000 task-clock:            e88596 [unknown] (/usr/lib/gcc/x86_64-linux-gnu/12/cc1)\n";
	CHECK(detect(clocks));
	p = rd(clocks);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nvalues, 5);
		CHECK_STR(type_name(p, 1), "cpu-clock");
		CHECK_STR(type_name(p, 3), "task-clock");
		CHECK_STR(type_unit(p, 3), "nanoseconds");
		CHECK_EQ(p->period, 250000);
		CHECK_STR(stack_of(p, 0), "cc1+0xe88596");
	}
	pv_profile_free(p);
}

/* Cut input: read to the last whole sample, a warning of what was left. */
static void test_truncated(void)
{
	size_t full = strlen(default_g);
	/* where the second sample starts, and the third */
	const char *second = strstr(default_g, "demo 18883   391.945457");
	const char *third = strstr(default_g, "worker-1");
	struct pv_profile *p;

	/* every cut point: never a crash, samples only whole ones */
	for (size_t cut = 1; cut < full; cut++) {
		p = rd_n(default_g, cut);
		size_t whole = cut >= (size_t)(third - default_g) ? 2 : cut >= (size_t)(second - default_g) ? 1 : 0;
		if (!p) {
			CHECK_EQ(whole, 0);
			CHECK_EQ(nerrors, 1);
			continue;
		}
		CHECK_EQ(p->nsamples, whole);
		if (cut == (size_t)(second - default_g) || cut == (size_t)(third - default_g)) {
			/* a cut between samples leaves whole ones */
			CHECK(p->finished && nwarnings == 0);
			pv_profile_free(p);
			continue;
		}
		CHECK(!p->finished);
		CHECK_EQ(nwarnings, 1);
		CHECK_CONTAINS(last_warning, "cut off");
		CHECK(p->dropped_bytes > 0 && p->dropped_bytes <= cut);
		pv_profile_free(p);
	}
	/* without the last blank line: the last call chain may be cut */
	p = rd_n(default_g, full - 1);
	CHECK(p && p->nsamples == 2);
	if (p)
		CHECK_CONTAINS(last_warning, "line 13");
	pv_profile_free(p);
	/* a single-line capture cut inside its last line */
	static const char lines[] =
		"a 1   1.000000:     250000 cpu-clock:      7ff6c0264c84 f (/x)\n"
		"a 1   1.000250:     250000 cpu-clock:      7ff6c0264c84 f (/x)\n";
	p = rd_n(lines, sizeof lines - 10);
	CHECK(p && p->nsamples == 1 && nwarnings == 1);
	if (p)
		CHECK_EQ(p->dropped_bytes, sizeof lines / 2 - 9);
	pv_profile_free(p);
	p = rd(lines);
	CHECK(p && p->nsamples == 2 && nwarnings == 0 && p->finished);
	pv_profile_free(p);
}

/* Names are data: C++, spaces, parentheses, control characters. */
static void test_names(void)
{
	static const char text[] =
		"a\033]0;x\007b 7   1.000000:          1 cpu-clock: \n"
		"\t  1000 std::vector<int, std::allocator<int> >::push_back(int const&)+0x10 (/tmp/my dir (copy)/lib.so)\n"
		"\t  1100 {lambda(int)#1}::operator()(int) const (/tmp/my dir (copy)/lib.so)\n"
		"\t  1200 f\033[31mred+0x1 (/x\tq)\n"
		"\t  1300 operator new(unsigned long)+0x4\n"
		"\n";
	struct pv_profile *p;

	CHECK(detect(text));
	p = rd(text);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(p->nsamples, 1);
	CHECK_STR(stack_of(p, 0),
		  "operator new(unsigned long);f\033[31mred;{lambda(int)#1}::operator()(int) const;"
		  "std::vector<int, std::allocator<int> >::push_back(int const&)");
	CHECK_STR(pv_str(p, leaf_mapping(p, 0)->file), "/tmp/my dir (copy)/lib.so");
	CHECK_STR(thread_name(p, &p->samples[0]), "a\033]0;x\007b");
	pv_profile_free(p);
}

static void test_srcline_and_extras(void)
{
	static const char text[] =
		"# ========\n"
		"# captured on    : Fri Nov 27 04:05:20 2026\n"
		"# ========\n"
		"#\n"
		"demo 18883 [000]   391.944000: PERF_RECORD_COMM: demo:18883/18883\n"
		"demo 18883   391.944958:     250000 cpu-clock: \n"
		"\t           18c84 _dl_important_hwcaps (/lib/ld.so)\n"
		"  dl-hwcaps.c:261\n"
		"\t            61a2 _dl_init_paths (/lib/ld.so)\n"
		"  ??:0\n"
		"\n";
	struct pv_profile *p;

	CHECK(detect(text));
	p = rd(text);
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(nwarnings, 0);
	CHECK_EQ(p->nsamples, 1);
	const struct pv_location *l = &p->locations[pv_sample_locs(p, &p->samples[0])[0]];
	const struct pv_line *ln = pv_location_lines(p, l);
	CHECK_EQ(ln[0].line, 261);
	CHECK_STR(pv_str(p, p->functions[ln[0].function].filename), "dl-hwcaps.c");
	CHECK_STR(pv_str(p, p->functions[ln[0].function].name), "_dl_important_hwcaps");
	pv_profile_free(p);
}

static void test_deep(void)
{
	size_t n = 5000, cap = 64 + n * 32;
	char *text = malloc(cap);
	size_t off = (size_t)snprintf(text, cap, "a 1   1.000000:          1 cpu-clock: \n");
	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(text + off, cap - off, "\t  %zx f%zu (/x)\n", 0x1000 + i, i);
	off += (size_t)snprintf(text + off, cap - off, "\n");
	struct pv_profile *p = rd_n(text, off);
	CHECK(p && p->nsamples == 1);
	if (p) {
		CHECK_EQ(p->samples[0].nlocs, 4096);
		CHECK(p->samples[0].flags & PV_SAMPLE_TRUNCATED);
		CHECK_EQ(p->truncated, 1);
	}
	pv_profile_free(p);
	/* as many inlined frames at one address: a location of 4096 lines */
	off = (size_t)snprintf(text, cap, "a 1   1.000000:          1 cpu-clock: \n");
	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(text + off, cap - off, "\t  1000 f%zu (inlined)\n", i);
	off += (size_t)snprintf(text + off, cap - off, "\t  1000 g (/x)\n\n");
	p = rd_n(text, off);
	CHECK(p && p->nsamples == 1);
	if (p) {
		CHECK_EQ(p->samples[0].nlocs, 1);
		CHECK_EQ(p->locations[pv_sample_locs(p, &p->samples[0])[0]].nlines, 4097);
		CHECK(p->samples[0].flags & PV_SAMPLE_TRUNCATED);
	}
	pv_profile_free(p);
	free(text);
}

/* What is not perf script stays with its own reader, or none. */
static void test_detection(void)
{
	static const char *const not_perf[] = {
		"main;foo;bar 12\nmain;baz 3\n",
		"main;foo 12 14\n",
		"Thread 1 (Thread 0x7f (LWP 5) \"a\"):\n#0  0x0000 in poll () from /lib/libc.so.6\n",
		"hello world\n",
		"12:00:01 INFO: started\n\tat foo\n",
		"\tf 3\nmain 4\n",
		"",
		"\n\n",
		"# only comments\n",
		"demo 18883 \nnot a frame\n",
	};
	for (size_t i = 0; i < sizeof not_perf / sizeof not_perf[0]; i++) {
		if (detect(not_perf[i]))
			fprintf(stderr, "detected as perf script: %s\n", not_perf[i]);
		CHECK(!detect(not_perf[i]));
	}
	/* a perf header ends in a number: folded stacks would take it */
	static const char comm_tid[] = "demo 18883 \n\t  18c84 a\n\n";
	CHECK(folded_detect((const unsigned char *)comm_tid, strlen(comm_tid)));
	CHECK(!gdb_detect((const unsigned char *)default_g, strlen(default_g)));
	CHECK(perf_data_detect((const unsigned char *)"PERFILE2\x68\0\0\0", 12));
	CHECK(!perf_data_detect((const unsigned char *)"PERFILE", 7));

	/* read.c gives it to this reader */
	char path[] = "/tmp/test-perf-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(write(fd, comm_tid, strlen(comm_tid)) == (ssize_t)strlen(comm_tid));
	close(fd);
	struct pv_profile *p = pv_read_file(path, NULL);
	CHECK(p != NULL);
	if (p)
		CHECK_STR(pv_str(p, p->source_format), "perf script output");
	pv_profile_free(p);
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(write(fd, "PERFILE2\x68\0\0\0\0\0\0\0", 16) == 16);
	close(fd);
	nerrors = 0;
	p = pv_read_file(path, NULL);
	CHECK(p == NULL && nerrors == 1);
	CHECK_CONTAINS(last_msg, "perf script -i");
	unlink(path);
}

static void test_garbage(void)
{
	struct pv_profile *p;

	/* detected, but nothing to read: one error */
	p = rd("demo 18883   391.944958:     250000 cpu-clock: \n\n");
	CHECK(p == NULL && nerrors == 1);
	CHECK_CONTAINS(last_msg, "no sample has an address");
	p = rd("garbage\n\n");
	CHECK(p == NULL && nerrors == 1);
	CHECK_CONTAINS(last_msg, "no sample");
	p = rd("a 1   1.000000:          1 cpu-clock: \n\t  1000 f (/x)\n");
	CHECK(p == NULL && nerrors == 1);
	CHECK_CONTAINS(last_msg, "cut off in the sample at line 1");
	static const char nul[] = "a 1   1.000000:          1 cpu-clock: \n\t  1000 f\0 (/x)\n\n";
	p = rd_n(nul, sizeof nul - 1);
	CHECK(p == NULL && nerrors == 1);
	CHECK_CONTAINS(last_msg, "NUL");
	/* lines not understood among samples: skipped, one warning */
	p = rd("a 1   1.000000:          1 cpu-clock: \n\t  1000 f (/x)\n\n???\n!!!\n"
	       "a 1   1.000001:          1 cpu-clock: \n\t  1000 f (/x)\n\n");
	CHECK(p && p->nsamples == 2 && nwarnings == 1);
	CHECK_CONTAINS(last_warning, "2 lines not understood (the first at line 4)");
	pv_profile_free(p);
	/* huge numbers saturate, sums stay in range */
	p = rd("a 99999999999999999999   99999999999.9:  99999999999999999999 cpu-clock: \n\t  ffffffffffffffffff f\n\n"
	       "a 1   1.0:  9223372036854775807 cpu-clock: \n\t  1 g\n\n"
	       "a 1   1.0:  9223372036854775806 cpu-clock: \n\t  1 g\n\n");
	CHECK(p != NULL);
	if (p) {
		CHECK(pv_total(p, 1) >= 0);
		CHECK(p->duration_ns >= 0);
	}
	pv_profile_free(p);
	p = rd("a 1   1.0:  99999999999999999999 cycles: \n\t  1 g\n\n"
	       "a 1   1.1:  9223372036854775806 cycles: \n\t  1 g\n\n");
	CHECK(p != NULL);
	if (p) {
		/* a period of 2^63 or more is the most a sum holds, said once */
		CHECK_EQ(pv_total(p, 1), INT64_MAX);
		CHECK_EQ(nwarnings, 1);
		CHECK_CONTAINS(last_warning, "1 samples with a period of 2^63 or more (the first at line 1)");
	}
	pv_profile_free(p);
}

/* What perf prints of a sample without frames, of frames it read from
 * inline info, of kernel modules, and lines of its side band. */
static void test_perf_shapes(void)
{
	struct pv_profile *p;

	/* a call chain perf printed empty: the sample kept, unknown where */
	p = rd("a 1   1.000000:          5 cpu-clock: \n\t  1000 f (/x)\n\n"
	       "a 1   1.000001:          7 cpu-clock: \n\n");
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(nwarnings, 0);
		CHECK_EQ(p->nsamples, 2);
		CHECK_EQ(pv_total(p, 1), 12);
		CHECK_STR(stack_of(p, 1), "[unknown]");
	}
	pv_profile_free(p);

	/* "(inlined)": lines of the next frame's location, innermost first;
	 * inlined frames that no frame of theirs follows, a location of
	 * their own */
	static const char inl[] =
		"inl 20599   655.846800:     250000 cpu-clock:ppp: \n"
		"\t            1204 inner+0x24 (inlined)\n"
		"\t            1204 middle+0x24 (inlined)\n"
		"\t            1204 outer+0x24 (/tmp/psx/inl)\n"
		"\t            1090 main+0x30 (/tmp/psx/inl)\n"
		"\t           27304 __libc_start_main_impl+0x84 (inlined)\n"
		"\t            1110 _start+0x20 (/tmp/psx/inl)\n"
		"\n";
	p = rd(inl);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(nwarnings, 0);
		CHECK_EQ(p->samples[0].nlocs, 4);
		CHECK_STR(stack_of(p, 0), "_start;__libc_start_main_impl;main;outer;middle;inner");
		const struct pv_location *l = &p->locations[pv_sample_locs(p, &p->samples[0])[0]];
		CHECK_EQ(l->nlines, 3);
		CHECK_EQ(l->address, 0x1204);
		CHECK(l->mapping != PV_NONE && strcmp(pv_str(p, p->mappings[l->mapping].file), "/tmp/psx/inl") == 0);
		pv_drop_inlines(p, false);
		CHECK_STR(stack_of(p, 0), "_start;__libc_start_main_impl;main;outer");
	}
	pv_profile_free(p);

	/* kernel modules and kernel addresses perf has no DSO of are the
	 * kernel's; the vsyscall page is not */
	static const char kmod[] =
		"a 1   1.000000:          1 cpu-clock: \n"
		"\tffffffffc0a1b2c3 xfs_buf_get_map+0x53 ([xfs])\n"
		"\tffffffffc0a1b000 [unknown] ([unknown])\n"
		"\tffffffffff600000 [unknown] ([vsyscall])\n"
		"\t            1000 f (/x)\n"
		"\n";
	p = rd(kmod);
	CHECK(p != NULL);
	if (p) {
		const uint32_t *locs = pv_sample_locs(p, &p->samples[0]);
		CHECK(pv_location_is_kernel(p, locs[0]));
		CHECK(pv_location_is_kernel(p, locs[1]));
		CHECK(!pv_location_is_kernel(p, locs[2]));
		CHECK(!pv_location_is_kernel(p, locs[3]));
		CHECK(p->samples[0].flags & PV_SAMPLE_KERNEL);
	}
	pv_profile_free(p);

	/* -F ip,sym of a capture without call chains: a sample a line;
	 * side band lines and source lines after a sample's one frame */
	static const char oneline[] =
		" ffffffff81c3957a percpu_counter_add_batch\n"
		"     562f8122c231 spin\n"
		"     562f8122c231 spin\n";
	CHECK(detect(oneline));
	p = rd(oneline);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(nwarnings, 0);
		CHECK_EQ(pv_total(p, 0), 3);
		CHECK_STR(stack_of(p, 1), "spin");
		CHECK(pv_location_is_kernel(p, pv_sample_locs(p, &p->samples[0])[0]));
	}
	pv_profile_free(p);
	static const char band[] =
		"         swapper     0     0.000000: PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x12090c8) @ 0xffffffff81000000]: x [kernel.kallsyms]_text\n"
		"24070/24070    2000000 task-clock:  ffffffff81c3957a percpu_counter_add_batch ([kernel.kallsyms])\n"
		"  [kernel.kallsyms][ffffffff81c3957a]\n"
		"24070/24070    2000000 task-clock:      562f8122c231 spin+0x31 (/tmp/psx/pf) 0x1/0x2/P/-/-/0\n"
		"  pf.c:5\n"
		"              pf 24070   703.819391: PERF_RECORD_EXIT(24070:24070):(24010:24010)\n";
	CHECK(detect(band));
	p = rd(band);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(nwarnings, 0);
		CHECK_EQ(p->nsamples, 2);
		CHECK_EQ(pv_total(p, 1), 4000000);
		CHECK_STR(stack_of(p, 1), "spin");
		const struct pv_location *l = &p->locations[pv_sample_locs(p, &p->samples[1])[0]];
		const struct pv_line *ln = pv_location_lines(p, l);
		CHECK_EQ(ln[0].line, 5);
		CHECK_STR(pv_str(p, p->functions[ln[0].function].filename), "pf.c");
		CHECK(l->mapping != PV_NONE && strcmp(pv_str(p, p->mappings[l->mapping].file), "/tmp/psx/pf") == 0);
	}
	pv_profile_free(p);
}

int main(void)
{
	pv_error_set_sink(sink);
	test_default_fields();
	test_fields_pid_tid();
	test_missing_fields();
	test_no_callchain();
	test_period_then_ip();
	test_events();
	test_truncated();
	test_names();
	test_srcline_and_extras();
	test_deep();
	test_detection();
	test_garbage();
	test_perf_shapes();
	return check_done("perf");
}
