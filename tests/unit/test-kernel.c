/* test-kernel.c - kernel frames on hand-built profiles: their marks in the
 * text reports and the pictures, the header's user and system time, the
 * folded and pprof round trips, and --hide-kernel */
#include "calltree.h"
#include "check.h"
#include "profbuild.h"
#include "error.h"
#include "folded-read.h"
#include "merge.h"
#include "pipeline.h"
#include "pprof-read.h"
#include "pprof-write.h"
#include "report.h"
#include "report-text.h"
#include "report-timeline.h"

#include <stdlib.h>
#include <string.h>

enum { K_SYSCALL, K_READ, K_EVIL, NK };
static const char *const knames[NK] = { "do_syscall_64", "sys_read", "\033]0;pwn\007<b>&x" };
static uint32_t kloc[NK];

static void quiet_sink(enum pv_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

/* Add count samples of 1 ms: user frames outermost first, then kernel
 * frames outermost first (the leaf last). */
static void add_k(struct pv_profile *p, int count, int nu, const int *user, int nk, const int *kern)
{
	uint32_t locs[16];
	int n = 0;

	for (int i = nk; i-- > 0;)
		locs[n++] = kloc[kern[i]];
	for (int i = nu; i-- > 0;)
		locs[n++] = loc_of[user[i]];
	uint32_t off = pv_add_stack(p, locs, (uint32_t)n);
	for (int i = 0; i < count; i++) {
		struct pv_sample s = { off, (uint32_t)n, pv_get_thread(p, 1, PV_NONE),
				       nk ? PV_SAMPLE_KERNEL : 0, { 1, 1000000 } };
		pv_add_sample(p, &s);
	}
}

/* 100 samples, 30 of them in the kernel: main 10 self; alpha 60 self and
 * 20 in sys_read under do_syscall_64; beta 10 in do_syscall_64. */
static struct pv_profile *kernel_profile(bool evil)
{
	struct pv_profile *p = make_profile();
	uint32_t km = pv_kernel_mapping(p);

	for (int i = 0; i < NK; i++) {
		uint32_t n = pv_intern_str(p, knames[i]);
		struct pv_line l = { pv_get_function(p, n, n, 0, 0), 0 };
		kloc[i] = pv_get_location(p, 0xffffffff81000000ull + 0x100 * (uint64_t)i, km);
		pv_set_lines(p, kloc[i], &l, 1);
	}
	add_k(p, 60, 2, (int[]){ F_MAIN, F_A }, 0, NULL);
	add_k(p, 20, 2, (int[]){ F_MAIN, F_A }, 2, (int[]){ K_SYSCALL, evil ? K_EVIL : K_READ });
	add_k(p, 10, 2, (int[]){ F_MAIN, F_B }, 1, (int[]){ K_SYSCALL });
	add_k(p, 10, 1, (int[]){ F_MAIN }, 0, NULL);
	p->system_cpu_ns = 30000000;
	return p;
}

enum render_kind { R_HEADER, R_TREE, R_FLAT, R_FOLDED, R_TABLE_FLAT, R_TABLE_TREE, R_FLAME };

static char *render(struct calltree *t, const struct pv_report_options *o, enum render_kind k)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct pv_report_ctx c = { .o = o, .t = t };

	CHECK_EQ(pv_report_prepare(&c, k == R_FLAME ? PV_REPORT_FLAME : k == R_TABLE_FLAT ? PV_REPORT_FLAT
										       : PV_REPORT_TREE), 0);
	switch (k) {
	case R_HEADER: report_header(f, &c); break;
	case R_TREE: report_tree(f, &c); break;
	case R_FLAT: report_flat(f, &c); break;
	case R_FOLDED: report_folded(f, &c); break;
	case R_TABLE_FLAT: report_table_flat(f, &c); break;
	case R_TABLE_TREE: report_table_tree(f, &c); break;
	case R_FLAME: report_flame(f, &c); break;
	}
	pv_report_ctx_free(&c);
	fclose(f);
	return text;
}

static char *render_profile(const struct pv_profile *p, const struct ct_options *co, const struct pv_report_options *o,
			    enum render_kind k)
{
	struct calltree *t = calltree_build(p, co);
	char *s = t ? render(t, o, k) : NULL;

	calltree_free(t);
	return s;
}

static void test_marks(void)
{
	struct pv_profile *p = kernel_profile(false);
	struct pv_report_options o = { 0 }, tab = { .field_sep = "," };
	char *s;

	s = render_profile(p, NULL, &o, R_TREE);
	CHECK_CONTAINS(s, "       20   20.0%      4      20.0      [k] do_syscall_64\n");
	CHECK_CONTAINS(s, "       10   10.0%      3      10.0      [k] do_syscall_64\n");
	CHECK_CONTAINS(s, "       20   20.0%      4      20.0        [k] sys_read\n");
	CHECK_CONTAINS(s, "       80   80.0%      9      80.0    alpha  prog.c:18\n");
	CHECK(!strstr(s, "[k] alpha") && !strstr(s, "[k] main"));
	free(s);

	/* the flat profile's names in one column */
	s = render_profile(p, NULL, &o, R_FLAT);
	CHECK_CONTAINS(s, "  [k] sys_read\n");
	CHECK_CONTAINS(s, "      alpha  prog.c:18\n");
	CHECK_CONTAINS(s, "      main  prog.c:8\n");
	free(s);

	s = render_profile(p, NULL, &tab, R_TABLE_FLAT);
	CHECK_CONTAINS(s, ",[k] sys_read,");
	CHECK_CONTAINS(s, ",alpha,prog.c:18");
	free(s);
	s = render_profile(p, NULL, &tab, R_TABLE_TREE);
	CHECK_CONTAINS(s, ",[k] do_syscall_64,");
	CHECK_CONTAINS(s, ",beta,prog.c:28");
	free(s);

	/* the standard profile has none: no mark, no padding */
	struct pv_profile *q = standard();
	s = render_profile(q, NULL, &o, R_FLAT);
	CHECK(!strstr(s, "[k]"));
	CHECK_CONTAINS(s, "  alpha  prog.c:18\n");
	CHECK(!strstr(s, "      alpha  prog.c:18\n"));
	free(s);
	pv_profile_free(q);
	pv_profile_free(p);
}

/* A kernel frame and a user frame of the same name are two frames. */
static void test_same_name(void)
{
	struct pv_profile *p = kernel_profile(false);
	struct pv_report_options o = { 0 };
	uint32_t n = pv_intern_str(p, "alpha");
	struct pv_line l = { pv_get_function(p, n, n, pv_intern_str(p, "prog.c"), 18), 20 };
	uint32_t kl = pv_get_location(p, 0xffffffff82000000ull, pv_kernel_mapping(p));
	char *s;

	pv_set_lines(p, kl, &l, 1);
	uint32_t locs[3] = { kl, loc_of[F_A], loc_of[F_MAIN] };
	struct pv_sample smp = { pv_add_stack(p, locs, 3), 3, PV_NONE, PV_SAMPLE_KERNEL, { 5, 5000000 } };
	pv_add_sample(p, &smp);
	s = render_profile(p, NULL, &o, R_TREE);
	CHECK_CONTAINS(s, "      [k] alpha  prog.c:18\n");
	CHECK_CONTAINS(s, "       85   81.0%      9      85.0    alpha  prog.c:18\n");
	free(s);
	pv_profile_free(p);
}

static void test_header(void)
{
	struct pv_profile *p = kernel_profile(false);
	struct pv_report_options o = { 0 };
	char *s;

	s = render_profile(p, NULL, &o, R_HEADER);
	CHECK_CONTAINS(s, "profile: CPU 100.0 ms (user 70.0 ms, system 30.0 ms) in 100 samples");
	free(s);
	p->system_cpu_ns = -1;
	s = render_profile(p, NULL, &o, R_HEADER);
	CHECK_CONTAINS(s, "profile: CPU 100.0 ms in 100 samples");
	CHECK(!strstr(s, "user"));
	free(s);
	/* more system time than the samples': all of theirs */
	p->system_cpu_ns = 500000000;
	s = render_profile(p, NULL, &o, R_HEADER);
	CHECK_CONTAINS(s, "profile: CPU 100.0 ms (user 0.0 ms, system 100.0 ms) in 100 samples");
	free(s);
	/* weighed by samples: no CPU time, no split */
	struct ct_options co = { .sample_index = "samples" };
	s = render_profile(p, &co, &o, R_HEADER);
	CHECK(!strstr(s, "system"));
	free(s);
	pv_profile_free(p);
}

/* --hide-kernel: alpha's own time is its own and that of the kernel
 * frames above it; the system time stays what it was. */
static void test_hide_kernel(void)
{
	struct pv_profile *p = kernel_profile(false);
	struct pv_view v = { .hide_kernel = true, .granularity = CT_FUNCTIONS };
	struct pv_report_options o = { 0 };
	struct pv_result r;
	char *s;

	CHECK_EQ(pv_view_run_copy(p, &v, true, &r), 0);
	CHECK(r.owned);
	CHECK_STR(r.steps, "hide-kernel");
	CHECK(!r.t->kernel_frames);
	s = render(r.t, &o, R_FLAT);
	CHECK_CONTAINS(s, "       80  80.0%       80  80.0%      9  alpha  prog.c:18\n");
	CHECK_CONTAINS(s, "       10  10.0%       10  10.0%      3  beta  prog.c:28\n");
	CHECK(!strstr(s, "[k]") && !strstr(s, "sys_read"));
	free(s);
	s = render(r.t, &o, R_HEADER);
	CHECK_CONTAINS(s, "(user 70.0 ms, system 30.0 ms)");
	free(s);
	for (size_t i = 0; i < r.p->nsamples; i++)
		CHECK(!(r.p->samples[i].flags & PV_SAMPLE_KERNEL));
	pv_result_free(&r);

	/* the source is untouched */
	s = render_profile(p, NULL, &o, R_TREE);
	CHECK_CONTAINS(s, "[k] sys_read");
	free(s);

	/* a stack of kernel frames alone is left empty: the root's own */
	uint32_t only = kloc[K_READ];
	struct pv_sample smp = { pv_add_stack(p, &only, 1), 1, PV_NONE, PV_SAMPLE_KERNEL, { 4, 4000000 } };
	pv_add_sample(p, &smp);
	CHECK_EQ(pv_view_run_copy(p, &v, true, &r), 0);
	CHECK_EQ(r.t->nodes[0].count, 104);
	CHECK_EQ(r.t->nodes[0].self_count, 4);
	pv_result_free(&r);
	pv_profile_free(p);
}

/* Samples left out: the system time follows the kernel's samples kept. */
static void test_system_kept(void)
{
	struct pv_profile *p = kernel_profile(false);
	struct pv_filters f = { 0 };
	const char *err;
	struct pv_step st = { .kind = PV_STEP_FILTERS, .filters = &f };
	struct pv_view v = { .steps = &st, .nsteps = 1 };
	struct pv_result r;

	pv_filters_add(&f, PV_FILTER_FOCUS, "^beta$", &err);
	CHECK_EQ(pv_view_run_copy(p, &v, true, &r), 0);
	CHECK_EQ(r.p->system_cpu_ns, 10000000);
	pv_result_free(&r);
	pv_filters_free(&f);
	/* none of the kernel's kept: none of its time */
	pv_filters_add(&f, PV_FILTER_IGNORE, "do_syscall", &err);
	CHECK_EQ(pv_view_run_copy(p, &v, true, &r), 0);
	CHECK_EQ(r.p->system_cpu_ns, 0);
	pv_result_free(&r);
	pv_filters_free(&f);
	/* nothing left out: as the source says */
	CHECK_EQ(pv_view_run_copy(p, &(struct pv_view){ 0 }, true, &r), 0);
	CHECK_EQ(r.p->system_cpu_ns, 30000000);
	pv_result_free(&r);
	pv_profile_free(p);
}

/* Folded stacks: kernel frames end in _[k] and are read back as such. */
static void test_folded(void)
{
	struct pv_profile *p = kernel_profile(false), *q;
	struct ct_options co = { .sample_index = "samples" };
	struct pv_report_options o = { 0 };
	char *s, *s2;

	s = render_profile(p, &co, &o, R_FOLDED);
	CHECK_CONTAINS(s, "main;alpha;do_syscall_64_[k];sys_read_[k] 20\n");
	CHECK_CONTAINS(s, "main;beta;do_syscall_64_[k] 10\n");
	CHECK_CONTAINS(s, "main;alpha 60\n");
	q = folded_read((const unsigned char *)s, strlen(s), "k.folded");
	CHECK(q != NULL);
	s2 = render_profile(q, &co, &o, R_FOLDED);
	CHECK_STR(s2, s);
	size_t kernel_samples = 0;
	for (size_t i = 0; i < q->nsamples; i++)
		kernel_samples += (q->samples[i].flags & PV_SAMPLE_KERNEL) != 0;
	CHECK_EQ(kernel_samples, 2);
	free(s2);
	s2 = render_profile(q, NULL, &o, R_TREE);
	CHECK_CONTAINS(s2, "  [k] sys_read\n");
	free(s2);
	free(s);
	pv_profile_free(q);

	/* the unknown kernel code, and "_[k]" alone (a name, not a mark) */
	const char *in = "main;read;[kernel]_[k] 3\nmain;_[k] 2\n";
	q = folded_read((const unsigned char *)in, strlen(in), "u.folded");
	CHECK(q != NULL);
	s = render_profile(q, NULL, &o, R_TREE);
	CHECK_CONTAINS(s, "      [k] [kernel]\n");
	CHECK_CONTAINS(s, "    _[k]\n");
	free(s);
	bool at0 = false;
	for (size_t i = 0; i < q->nlocations; i++)
		at0 |= pv_location_is_kernel(q, (uint32_t)i) && q->locations[i].address == 0;
	CHECK(at0);
	pv_profile_free(q);
	pv_profile_free(p);
}

/* pprof: the kernel mapping kept, the system time too. */
static void test_pprof(void)
{
	struct pv_profile *p = kernel_profile(false), *q;
	struct pprof_write_options wo = { .uncompressed = true };
	struct pv_report_options o = { 0 };
	char *buf = NULL, *a, *b;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	p->program = pv_intern_str(p, "/bin/prog");
	CHECK_EQ(pprof_write(f, "k.pb", p, &wo), 0);
	fclose(f);
	q = pprof_read((const unsigned char *)buf, len, "k.pb", false);
	CHECK(q != NULL);
	if (!q)
		goto out;
	size_t kmaps = 0, ksamples = 0;
	for (size_t i = 0; i < q->nmappings; i++)
		if (q->mappings[i].kind == PV_MAP_KERNEL) {
			kmaps++;
			CHECK_STR(pv_str(q, q->mappings[i].file), PV_KERNEL_MAPPING_NAME);
		}
	CHECK_EQ(kmaps, 1);
	for (size_t i = 0; i < q->nsamples; i++)
		ksamples += (q->samples[i].flags & PV_SAMPLE_KERNEL) != 0;
	CHECK_EQ(ksamples, 2);
	CHECK_EQ(q->system_cpu_ns, 30000000);
	CHECK(strcmp(pv_str(q, q->program), PV_KERNEL_MAPPING_NAME) != 0);
	a = render_profile(p, NULL, &o, R_FOLDED);
	b = render_profile(q, NULL, &o, R_FOLDED);
	CHECK_STR(b, a);
	free(a);
	free(b);
	pv_profile_free(q);

	/* no system time: no comment, -1 read back */
	free(buf);
	buf = NULL;
	p->system_cpu_ns = -1;
	f = open_memstream(&buf, &len);
	CHECK_EQ(pprof_write(f, "k.pb", p, &wo), 0);
	fclose(f);
	q = pprof_read((const unsigned char *)buf, len, "k.pb", false);
	CHECK(q && q->system_cpu_ns == -1);
	pv_profile_free(q);
out:
	free(buf);
	pv_profile_free(p);
}

static void test_flame(void)
{
	struct pv_profile *p = kernel_profile(false), *q = standard();
	struct pv_report_options o = { 0 };
	char *s;

	s = render_profile(p, NULL, &o, R_FLAME);
	CHECK_CONTAINS(s, "<g class=\"f k\"><title>[k] sys_read\n");
	CHECK_CONTAINS(s, "<g class=\"f\"><title>alpha\n");
	CHECK_CONTAINS(s, "[k]: kernel frames");
	free(s);
	s = render_profile(q, NULL, &o, R_FLAME);
	CHECK(!strstr(s, "\"f k\"") && !strstr(s, "[k]"));
	free(s);
	pv_profile_free(p);
	pv_profile_free(q);
}

/* The timeline names kernel frames [k], darker than the others, and
 * --highlight sees their names bare. */
static void test_timeline(void)
{
	struct pv_profile *p = kernel_profile(false);
	struct calltree *t;
	struct pv_report_options to = { 0 };
	regex_t re;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	p->timed = true;
	p->duration_ns = 1000000000;
	for (size_t i = 0; i < p->nsamples; i++)
		p->samples[i].time_ns = (int64_t)i * 10000000;
	t = calltree_build(p, &(struct ct_options){ .paths_only = true });
	regcomp(&re, "^sys_read$", REG_EXTENDED | REG_NOSUB);
	to.highlight = &re;
	to.highlight_text = "^sys_read$";
	f = open_memstream(&text, &len);
	{
		struct pv_report_ctx c = { .o = &to, .t = t };
		CHECK_EQ(pv_report_prepare(&c, PV_REPORT_TIMELINE), 0);
		CHECK_EQ(pv_report_write(f, PV_REPORT_TIMELINE, &c), 0);
	}
	fclose(f);
	CHECK_CONTAINS(text, "\"[k] sys_read\"");
	CHECK_CONTAINS(text, "\"[k] do_syscall_64\"");
	/* the frames' names, then whether each matched: the kernel's
	 * sys_read matches ^sys_read$, do_syscall_64 does not */
	const char *list = text ? strstr(text, "\"f\":[") : NULL;
	const char *at = list ? strstr(list, "\"[k] sys_read\"") : NULL;
	const char *other = list ? strstr(list, "\"[k] do_syscall_64\"") : NULL;
	const char *fm = list ? strstr(list, "\"fm\":\"") : NULL;
	CHECK(at && other && fm);
	if (at && other && fm) {
		size_t k = 0, j = 0;
		for (const char *c = list; c < at; c++)
			k += *c == ',';
		for (const char *c = list; c < other; c++)
			j += *c == ',';
		CHECK_EQ(fm[6 + k], '1');
		CHECK_EQ(fm[6 + j], '0');
	}
	free(text);
	regfree(&re);
	calltree_free(t);
	pv_profile_free(p);
}

/* A kernel frame's name is data like any other. */
static void test_hostile(void)
{
	struct pv_profile *p = kernel_profile(true);
	struct ct_options co = { .sample_index = "samples" };
	struct pv_report_options o = { 0 };
	char *s;

	s = render_profile(p, NULL, &o, R_TREE);
	CHECK_CONTAINS(s, "[k] ^[]0;pwn^G<b>&x\n");
	CHECK(!strchr(s, '\033') && !strchr(s, '\007'));
	free(s);
	s = render_profile(p, &co, &o, R_FOLDED);
	CHECK_CONTAINS(s, "main;alpha;do_syscall_64_[k];^[]0:pwn^G<b>&x_[k] 20\n");
	free(s);
	s = render_profile(p, NULL, &o, R_FLAME);
	CHECK_CONTAINS(s, "[k] ^[]0;pwn^G&lt;b&gt;&amp;x");
	CHECK(!strstr(s, "<b>") && !strchr(s, '\033'));
	free(s);
	pv_profile_free(p);
}

int main(void)
{
	pv_error_set_sink(quiet_sink);
	test_marks();
	test_same_name();
	test_header();
	test_hide_kernel();
	test_system_kept();
	test_folded();
	test_pprof();
	test_flame();
	test_timeline();
	test_hostile();
	return check_done("test-kernel");
}
