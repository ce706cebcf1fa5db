/* test-calltree.c - the model, the call tree, the flat view and the text
 * reports on hand-built profiles */
#include "calltree.h"
#include "check.h"
#include "profbuild.h"
#include "error.h"
#include "folded-read.h"
#include "merge.h"
#include "report-text.h"
#include "present.h"
#include "pipeline.h"
#include "raw-heap.h"

#include <math.h>

static uint32_t child_named(const struct calltree *t, uint32_t node, const char *name)
{
	char buf[256];
	for (uint32_t c = t->nodes[node].first_child; c != PV_NONE; c = t->nodes[c].next_sibling)
		if (t->nodes[c].kind == CT_FRAME &&
		    strcmp(calltree_frame_name(t, t->nodes[c].frame, buf, sizeof buf), name) == 0)
			return c;
	return PV_NONE;
}

static void test_tree(void)
{
	struct pv_profile *p = standard();
	struct calltree *t = calltree_build(p, NULL);

	CHECK(t != NULL);
	CHECK_EQ(t->samples, 100);
	CHECK_EQ(t->nodes[0].count, 100);
	CHECK_EQ(t->nodes[0].value, 100 * 1000000LL);
	uint32_t m = child_named(t, 0, "main");
	CHECK(m != PV_NONE);
	CHECK_EQ(t->nodes[m].count, 100);
	CHECK_EQ(t->nodes[m].self_count, 4);
	uint32_t a = child_named(t, m, "alpha");
	uint32_t b = child_named(t, m, "beta");
	CHECK_EQ(t->nodes[a].count, 66);
	CHECK_EQ(t->nodes[a].self_count, 60);
	CHECK_EQ(t->nodes[b].count, 30);
	CHECK_EQ(t->nodes[b].self_count, 9);
	/* Children come hottest first. */
	CHECK_EQ(t->nodes[m].first_child, a);
	CHECK_EQ(t->nodes[a].next_sibling, b);
	uint32_t aa = child_named(t, a, "alpha");
	CHECK_EQ(t->nodes[aa].count, 6);
	CHECK_EQ(t->nodes[aa].depth, 3);
	/* The inlined frame is a child of the function it was inlined into. */
	uint32_t inl = child_named(t, b, "inlined_helper");
	CHECK(inl != PV_NONE);
	CHECK_EQ(t->nodes[inl].count, 1);
	CHECK_EQ(t->nodes[child_named(t, b, "gamma")].count, 20);

	/* Flat: recursion counts a sample once in cum, self at the leaf. */
	size_t n;
	struct ct_flat_row *rows = calltree_flat(t, &n);
	CHECK(rows != NULL);
	int64_t self_sum = 0;
	char buf[256];
	for (size_t i = 0; rows && i < n; i++) {
		const char *name = calltree_frame_name(t, rows[i].frame, buf, sizeof buf);
		self_sum += rows[i].self_count;
		if (strcmp(name, "alpha") == 0) {
			CHECK_EQ(rows[i].cum_count, 66);
			CHECK_EQ(rows[i].self_count, 66);
		} else if (strcmp(name, "main") == 0) {
			CHECK_EQ(rows[i].cum_count, 100);
			CHECK_EQ(rows[i].self_count, 4);
			CHECK_EQ(rows[i].cum_value, 100 * 1000000LL);
		} else if (strcmp(name, "beta") == 0) {
			CHECK_EQ(rows[i].cum_count, 30);
			CHECK_EQ(rows[i].self_count, 9);
		}
	}
	CHECK_EQ(self_sum, 100);
	free(rows);
	calltree_free(t);
	pv_profile_free(p);
}

static void test_threads_and_tids(void)
{
	struct pv_profile *p = standard();
	struct ct_options o = { .by_thread = true };
	struct calltree *t = calltree_build(p, &o);
	int seen = 0;

	for (uint32_t c = t->nodes[0].first_child; c != PV_NONE; c = t->nodes[c].next_sibling) {
		CHECK_EQ(t->nodes[c].kind, CT_THREAD);
		uint32_t tid = p->threads[t->nodes[c].frame].tid;
		CHECK_EQ(t->nodes[c].count, tid == 1 ? 93 : 7);
		seen++;
	}
	CHECK_EQ(seen, 2);
	calltree_free(t);

	uint32_t only[] = { 2 };
	struct ct_options o2 = { .tids = only, .ntids = 1 };
	t = calltree_build(p, &o2);
	CHECK_EQ(t->samples, 7);
	calltree_free(t);
	pv_profile_free(p);
}

static void test_granularity(void)
{
	struct pv_profile *p = standard();
	struct ct_options o = { .granularity = CT_LINES };
	struct calltree *t = calltree_build(p, &o);
	char buf[256];

	uint32_t m = child_named(t, 0, "main:10");
	CHECK(m != PV_NONE);
	/* beta appears at two lines: 30 (its own location) and 25 (the call
	 * site of the inlined helper). */
	CHECK(child_named(t, m, "beta:30") != PV_NONE);
	CHECK(child_named(t, m, "beta:25") != PV_NONE);
	CHECK_STR(calltree_frame_where(t, t->nodes[m].frame, buf, sizeof buf), "prog.c:10");
	CHECK_STR(calltree_frame_name(t, t->nodes[m].frame, buf, sizeof buf), "main:10");
	calltree_free(t);

	o.granularity = CT_FILES;
	t = calltree_build(p, &o);
	/* One file: every stack collapses to one frame. */
	CHECK_EQ(t->nnodes, 2);
	calltree_free(t);
	pv_profile_free(p);
}

enum render_kind { R_TREE, R_FLAT, R_FOLDED };

static char *render(struct calltree *t, const struct pv_report_options *o, enum render_kind k)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct pv_report_ctx c = { .o = o, .t = t };
	if (k == R_FLAT)
		report_flat(f, &c);
	else if (k == R_FOLDED)
		report_folded(f, &c);
	else
		report_tree(f, &c);
	fclose(f);
	return text;
}

static void test_reports(void)
{
	struct pv_profile *p = standard();
	struct calltree *t = calltree_build(p, NULL);
	struct pv_report_options o = { 0 };
	char *s;

	s = render(t, &o, R_TREE);
	CHECK_CONTAINS(s, "      100  100.0%     10");
	CHECK_CONTAINS(s, "       66   66.0%      8      66.0    alpha  prog.c:18");
	CHECK_CONTAINS(s, "        1    1.0%      1       1.0      inlined_helper  prog.c:48");
	free(s);

	/* Noise floor K=1: under main (N=100) a child needs more than 10
	 * samples; under beta (N=30) more than 5.48: gamma 20 stays, the
	 * inlined helper (1) goes and is summed in one line. */
	o.noisefloor = 1;
	s = render(t, &o, R_TREE);
	CHECK_CONTAINS(s, "gamma");
	CHECK(strstr(s, "inlined_helper") == NULL);
	CHECK_CONTAINS(s, "[1 more below the floor]");
	/* alpha's recursion (6 <= sqrt(66) = 8.1) is hidden too. */
	CHECK(strstr(s, "        6    6.0%") == NULL || strstr(s, "[1 more") != NULL);
	free(s);

	o.noisefloor = 0;
	o.maxdepth = 2;
	s = render(t, &o, R_TREE);
	CHECK(strstr(s, "gamma") == NULL);
	CHECK_CONTAINS(s, "beta");
	CHECK_CONTAINS(s, "more below the depth limit");
	free(s);

	o.maxdepth = 0;
	o.mincount = 21;
	s = render(t, &o, R_TREE);
	CHECK(strstr(s, "gamma") == NULL);
	CHECK_CONTAINS(s, "beta");
	free(s);

	o.mincount = 0;
	s = render(t, &o, R_FLAT);
	/* alpha first (self 66), then beta's gamma (20). */
	char *alpha = strstr(s, "alpha"), *gamma = strstr(s, "gamma"), *main_ = strstr(s, "main");
	CHECK(alpha && gamma && main_ && alpha < gamma && gamma < main_);
	CHECK_CONTAINS(s, "       66  66.0%       66  66.0%      8  alpha  prog.c:18");
	free(s);

	o.sort = SORT_NAME;
	s = render(t, &o, R_FLAT);
	alpha = strstr(s, "alpha");
	char *beta = strstr(s, "beta");
	CHECK(alpha && beta && main_ && alpha < beta);
	free(s);
	/* Folded: one line per distinct stack, outermost first, weighed as
	 * every report is: CPU time, in microseconds (1 ms a sample here). */
	s = render(t, &o, R_FOLDED);
	CHECK_CONTAINS(s, "main;alpha 60000\n");
	CHECK_CONTAINS(s, "main;alpha;alpha 6000\n");
	CHECK_CONTAINS(s, "main;beta;gamma 20000\n");
	CHECK_CONTAINS(s, "main;beta;inlined_helper 1000\n");
	CHECK_CONTAINS(s, "main 4000\n");
	free(s);
	calltree_free(t);
	/* --sample-index=samples: sample counts, adding up to all samples. */
	{
		struct ct_options by_n = { .sample_index = "samples" };
		t = calltree_build(p, &by_n);
		CHECK(t != NULL);
		CHECK_EQ(t->v_value, PV_NONE);
		CHECK(strcmp(calltree_weight_name(t), "samples") == 0);
		s = render(t, &o, R_FOLDED);
		CHECK_CONTAINS(s, "main;alpha 60\n");
		CHECK_CONTAINS(s, "main;alpha;alpha 6\n");
		CHECK_CONTAINS(s, "main 4\n");
		long sum = 0;
		for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n"))
			sum += strtol(strrchr(line, ' ') + 1, NULL, 10);
		CHECK_EQ(sum, 100);
		free(s);
		calltree_free(t);
		/* by name or index, as pprof's -sample_index; an unknown type
		 * is an error */
		by_n.sample_index = "cpu";
		t = calltree_build(p, &by_n);
		CHECK(t != NULL && t->v_value != PV_NONE);
		calltree_free(t);
		by_n.sample_index = "0";
		t = calltree_build(p, &by_n);
		CHECK(t != NULL && t->v_value == PV_NONE);
		calltree_free(t);
		by_n.sample_index = "alloc_space";
		t = calltree_build(p, &by_n);
		CHECK(t == NULL);
	}
	/* With threads, the thread is the first frame. */
	struct ct_options byt = { .by_thread = true };
	t = calltree_build(p, &byt);
	s = render(t, &o, R_FOLDED);
	CHECK_CONTAINS(s, "[thread 2 \"worker\"];main;alpha;alpha 6000\n");
	free(s);
	calltree_free(t);
	pv_profile_free(p);
}

static void test_model(void)
{
	struct pv_profile *p = pv_profile_new();

	CHECK_EQ(pv_intern_str(p, ""), 0);
	uint32_t a = pv_intern_str(p, "x");
	CHECK_EQ(pv_intern(p, "xyz", 1), a);
	/* Many strings force the table to grow; all stay findable. */
	char buf[32];
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof buf, "s%d", i);
		pv_intern_str(p, buf);
	}
	CHECK_EQ(p->strings.n, 5002);
	CHECK_STR(pv_str(p, pv_intern_str(p, "s4321")), "s4321");
	CHECK_EQ(p->strings.n, 5002);
	/* Locations are deduplicated by address and mapping. */
	uint32_t l1 = pv_get_location(p, 0x10, PV_NONE);
	CHECK_EQ(pv_get_location(p, 0x10, PV_NONE), l1);
	CHECK(pv_get_location(p, 0x11, PV_NONE) != l1);
	struct pv_mapping m = { .start = 0x1000, .limit = 0x2000 };
	pv_add_mapping(p, &m);
	CHECK_EQ(pv_find_mapping(p, 0x1fff), 0);
	CHECK_EQ(pv_find_mapping(p, 0x2000), PV_NONE);
	/* A string with a NUL is cut there. */
	CHECK_STR(pv_str(p, pv_intern(p, "ab\0cd", 5)), "ab");
	/* Validation catches a dangling index. */
	struct pv_sample s = { 0, 1, PV_NONE, 0, { 1 } };
	uint32_t bad = 12345;
	s.loc_off = pv_add_stack(p, &bad, 1);
	pv_add_sample(p, &s);
	CHECK(pv_profile_validate(p, "test") < 0);
	pv_profile_free(p);
	pv_profile_free(NULL);
}

/* A copy holds the same samples and says the same about its source. */
static void test_copy(void)
{
	struct pv_profile *p = standard();
	p->program = pv_intern_str(p, "/bin/prog");
	p->source_format = pv_intern_str(p, "profview raw trace");
	p->pid = 77;
	p->finished = true;
	p->duration_ns = 5;
	struct pv_profile *c = pv_profile_copy(p);
	CHECK(c != NULL);
	if (c) {
		CHECK_EQ(c->nsamples, p->nsamples);
		CHECK_EQ(pv_total(c, 0), pv_total(p, 0));
		CHECK_EQ(pv_total(c, 1), pv_total(p, 1));
		CHECK_STR(pv_str(c, c->program), "/bin/prog");
		CHECK_STR(pv_str(c, c->source_format), "profview raw trace");
		CHECK_EQ(c->pid, 77);
		CHECK(c->finished);
		CHECK_EQ(c->duration_ns, 5);
		CHECK(pv_profile_validate(c, "copy") == 0);
		struct calltree *a = calltree_build(p, NULL), *b = calltree_build(c, NULL);
		CHECK_EQ(a->nnodes, b->nnodes);
		calltree_free(a);
		calltree_free(b);
	}
	pv_profile_free(c);
	pv_profile_free(p);
}

static void quiet_sink(enum pv_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

static struct pv_profile *folded(const char *text)
{
	return folded_read((const unsigned char *)text, strlen(text), "t.folded");
}

/* Names from the input are written escaped in every text report and the
 * header. */
static void test_escaped_names(void)
{
	struct pv_profile *p = folded("main;\033]0;t\007\033[2Jx;tab\there 3\nmain;semi\302\233 1\n");
	struct pv_report_options o = { 0 };
	struct calltree *t;
	char *s, *h = NULL;
	size_t hl = 0;

	CHECK(p != NULL);
	if (!p)
		return;
	p->program = pv_intern_str(p, "/tmp/\033[2Japp");
	t = calltree_build(p, NULL);
	for (int k = R_TREE; k <= R_FOLDED; k++) {
		s = render(t, &o, (enum render_kind)k);
		CHECK(strchr(s, '\033') == NULL && strchr(s, '\007') == NULL);
		CHECK(strstr(s, "\302\233") == NULL);
		CHECK_CONTAINS(s, k == R_FOLDED ? "main;^[]0;t^G^[[2Jx;tab^Ihere 3\n" : "t^G^[[2Jx");
		CHECK_CONTAINS(s, "semi\\xc2\\x9b");
		free(s);
	}
	FILE *f = open_memstream(&h, &hl);
	report_header(f, &(struct pv_report_ctx){ .o = &o, .t = t, .filters = "focus=\033[2J" });
	fclose(f);
	CHECK_CONTAINS(h, "program: /tmp/^[[2Japp, folded stacks\n");
	CHECK_CONTAINS(h, "filters: focus=^[[2J;");
	CHECK(strchr(h, '\033') == NULL);
	free(h);
	calltree_free(t);
	pv_profile_free(p);
}

/* Folded output reads back as written: a name ending in a space and
 * digits would read as a count (with one stack, as a comparison), a name
 * of the program's ending in "_[k]" as a kernel frame; both are written
 * so that they cannot, while the kernel's own frames keep the suffix. */
static void test_folded_reads_back(void)
{
	struct pv_profile *p = folded("main;f 5 10\nmain;g 3\nmain;sys_read_[k] 2\n");
	struct pv_report_options o = { 0 };

	CHECK(p != NULL && !p->diff);
	if (!p)
		return;
	/* g_[k]: a name another reader could give */
	for (size_t i = 0; i < p->nfunctions; i++)
		if (strcmp(pv_str(p, p->functions[i].name), "g") == 0)
			p->functions[i].name = pv_intern_str(p, "g_[k]");
	struct calltree *t = calltree_build(p, NULL);
	char *s = render(t, &o, R_FOLDED);
	CHECK_CONTAINS(s, "main;f_5 10\n");
	CHECK_CONTAINS(s, "main;g_(k) 3\n");
	CHECK_CONTAINS(s, "main;sys_read_[k] 2\n");
	/* each line alone reads back as one stack of one count, and only
	 * the kernel's frame is the kernel's */
	for (char *line = s, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
		struct pv_profile *r = folded_read((const unsigned char *)line, (size_t)(nl + 1 - line), "back");
		CHECK(r != NULL && !r->diff && r->nsamples == 1);
		if (r) {
			bool kernel = false;
			for (size_t m = 0; m < r->nmappings; m++)
				kernel |= r->mappings[m].kind == PV_MAP_KERNEL;
			CHECK_EQ(kernel, (memmem(line, (size_t)(nl - line), "sys_read", 8) != NULL));
		}
		pv_profile_free(r);
	}
	free(s);
	calltree_free(t);
	pv_profile_free(p);
}

/* Deep stacks: the indentation stops at REPORT_INDENT_MAX, long chains
 * below it are shown by their ends. */
static void test_deep_tree(void)
{
	/* main, f1 .. f199 (depth 200), with g beside f150 under f149. */
	char text[4096], *at = text;
	at += sprintf(at, "main");
	for (int i = 1; i < 200; i++)
		at += sprintf(at, ";f%d", i);
	at += sprintf(at, " 3\nmain");
	for (int i = 1; i < 150; i++)
		at += sprintf(at, ";f%d", i);
	sprintf(at, ";g 2\n");

	struct pv_profile *p = folded(text);
	struct pv_report_options o = { 0 };
	struct calltree *t;
	char *s;

	CHECK(p != NULL);
	if (!p)
		return;
	t = calltree_build(p, NULL);
	s = render(t, &o, R_TREE);
	CHECK_CONTAINS(s, "  f63\n");
	CHECK_CONTAINS(s, "  [+65] f64\n");
	CHECK(strstr(s, "  f64\n") == NULL);
	/* f64 .. f79 shown, f80 .. f133 not, f134 .. f149 shown. */
	CHECK_CONTAINS(s, "[+80] f79\n");
	CHECK_CONTAINS(s, "[54 frames of one call chain not shown: depth 81 to 134]\n");
	CHECK(strstr(s, " f80\n") == NULL && strstr(s, " f133\n") == NULL);
	CHECK_CONTAINS(s, "[+135] f134\n");
	/* The branch, both its children, then f150's chain by its ends. */
	CHECK_CONTAINS(s, "[+150] f149\n");
	CHECK_CONTAINS(s, "[+151] f150\n");
	CHECK_CONTAINS(s, "[+151] g\n");
	CHECK_CONTAINS(s, "[17 frames of one call chain not shown: depth 168 to 184]\n");
	CHECK_CONTAINS(s, "[+200] f199\n");
	size_t lines = 0, longest = 0;
	for (const char *l = s; *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);
		longest = n > longest ? n : longest;
		lines++;
		l += n + (nl != NULL);
	}
	CHECK_EQ(lines, 1 + 64 + 16 + 1 + 16 + 1 + 1 + 16 + 1 + 16);
	CHECK(longest < 36 + 2 * REPORT_INDENT_MAX + 64);
	free(s);

	/* With --maxdepth the chain ends at the limit. */
	o.maxdepth = 100;
	s = render(t, &o, R_TREE);
	CHECK_CONTAINS(s, "[4 frames of one call chain not shown: depth 81 to 84]\n");
	CHECK_CONTAINS(s, "[+100] f99\n");
	CHECK_CONTAINS(s, "[1 more below the depth limit]");
	free(s);
	calltree_free(t);
	pv_profile_free(p);
}

/* A subtree: its node under a root of its own, with its totals; the flat
 * view and the reports see only its samples. */
static void test_subtree(void)
{
	struct pv_profile *p = standard();
	struct calltree *t = calltree_build(p, NULL);
	uint32_t m = child_named(t, 0, "main"), b = child_named(t, m, "beta");
	struct calltree *sub = calltree_subtree(t, b);
	size_t n;

	CHECK(sub != NULL);
	if (!sub)
		return;
	CHECK_EQ(sub->samples, 30);
	CHECK_EQ(sub->nodes[0].count, 30);
	CHECK_EQ(sub->nodes[0].value, 30 * 1000000LL);
	CHECK_EQ(sub->nodes[0].self_count, 0);
	uint32_t sb = child_named(sub, 0, "beta");
	CHECK_EQ(sb, 1);
	CHECK_EQ(sub->nodes[sb].depth, 1);
	CHECK_EQ(sub->nodes[sb].next_sibling, PV_NONE);
	uint32_t g = child_named(sub, sb, "gamma");
	CHECK(g != PV_NONE);
	CHECK_EQ(sub->nodes[g].count, 20);
	CHECK_EQ(sub->nodes[g].parent, sb);
	CHECK_EQ(sub->nodes[g].depth, 2);
	CHECK(child_named(sub, 0, "main") == PV_NONE);
	/* 1 root, beta, gamma, the inlined helper */
	CHECK_EQ(sub->nnodes, 4);
	struct ct_flat_row *rows = calltree_flat(sub, &n);
	CHECK(rows != NULL);
	int64_t cum_beta = -1, cum_main = 0;
	char buf[64];
	for (size_t i = 0; rows && i < n; i++) {
		const char *name = calltree_frame_name(sub, rows[i].frame, buf, sizeof buf);
		if (strcmp(name, "beta") == 0)
			cum_beta = rows[i].cum_count;
		if (strcmp(name, "main") == 0)
			cum_main = rows[i].cum_count;
	}
	CHECK_EQ(cum_beta, 30);
	CHECK_EQ(cum_main, 0);
	free(rows);
	calltree_free(sub);
	/* the root's subtree is the tree */
	sub = calltree_subtree(t, 0);
	CHECK(sub != NULL && sub->nnodes == t->nnodes && sub->samples == 100);
	calltree_free(sub);
	calltree_free(t);
	pv_profile_free(p);
	/* an empty profile (nothing sampled) has a subtree too: its root */
	p = make_profile();
	t = calltree_build(p, NULL);
	sub = t ? calltree_subtree(t, 0) : NULL;
	CHECK(sub != NULL && sub->nnodes == 1 && sub->nframes == 0 && sub->samples == 0);
	calltree_free(sub);
	calltree_free(t);
	pv_profile_free(p);
}

/* The CPU time in no sample (a raw trace's reader measures it): said in
 * the report's header when it is more than a hundredth of the threads' CPU
 * time, counting the profile's threads; never when the profile does not
 * know its threads' CPU time. */
static void test_unsampled(void)
{
	struct pv_profile *p = standard();
	struct pv_report_options o = { 0 };
	struct calltree *t;
	char say[512], *s;

	CHECK(!report_unsampled(p, say, sizeof say));
	p->unsampled_cpu_ns = 50000000;
	p->unsampled_threads = 1;
	CHECK(!report_unsampled(p, say, sizeof say));
	p->threads_cpu_ns = 10000000000;
	CHECK(!report_unsampled(p, say, sizeof say));
	p->threads_cpu_ns = 1000000000;
	CHECK(report_unsampled(p, say, sizeof say));
	CHECK_CONTAINS(say, "50.0 ms of the 1.00 s of CPU time the threads used (5.0%) is in no sample: 1 of 2 threads were never sampled (they blocked");
	p->lost = 3;
	CHECK(report_unsampled(p, say, sizeof say));
	CHECK_CONTAINS(say, "(their samples were lost, or they blocked");
	t = calltree_build(p, NULL);
	{
		size_t len = 0;
		FILE *f = open_memstream(&s, &len);
		report_header(f, &(struct pv_report_ctx){ .o = &o, .t = t });
		fclose(f);
	}
	CHECK_CONTAINS(s, "\nwarning: 50.0 ms of the 1.00 s of CPU time");
	free(s);
	calltree_free(t);
	pv_profile_free(p);
}

/* The reports' numbers are formatted by hand: each must read as printf's
 * "%9lld %6.1f%% %6.0f %9.1f" (tree) and "%9lld %5.1f%% %8lld %5.1f%% %6.0f"
 * (flat) would write it, ties of the rounding included (0.125 -> 0.1,
 * 0.75 -> 0.8, 2.5 -> 2). */
static void test_number_format(void)
{
	struct pv_profile *p = pv_profile_new();
	uint32_t file = pv_intern_str(p, "n.c"), mainfn, mainloc;
	uint64_t rng = 12345;
	int64_t counts[300], values[300], total_v = 0, total_c = 0;
	char name[32], want[256];

	pv_add_value_type(p, "samples", "count");
	pv_add_value_type(p, "cpu", "nanoseconds");
	mainfn = pv_get_function(p, pv_intern_str(p, "main"), pv_intern_str(p, "main"), file, 1);
	mainloc = pv_get_location(p, 0x100, PV_NONE);
	pv_set_lines(p, mainloc, &(struct pv_line){ mainfn, 1 }, 1);
	for (int i = 0; i < 300; i++) {
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		/* small counts and halves of a millisecond: ties in every column */
		counts[i] = i < 20 ? (int64_t[]){ 1, 2, 4, 12, 6, 30, 42, 56, 72, 90 }[i % 10] :
				     1 + (int64_t)(rng >> 40) % 5000;
		values[i] = i % 3 ? counts[i] * 1250000 : counts[i] * 1000000 + (int64_t)(rng >> 50);
		snprintf(name, sizeof name, "f_%d", i);
		uint32_t n = pv_intern_str(p, name);
		uint32_t fi = pv_get_function(p, n, n, file, 10 + i);
		uint32_t li = pv_get_location(p, 0x1000 + 16 * (uint64_t)i, PV_NONE);
		pv_set_lines(p, li, &(struct pv_line){ fi, 10 + i }, 1);
		uint32_t locs[2] = { li, mainloc };
		uint32_t off = pv_add_stack(p, locs, 2);
		pv_add_sample(p, &(struct pv_sample){ off, 2, PV_NONE, 0, { counts[i], values[i] } });
		total_c += counts[i];
		total_v += values[i];
	}
	struct calltree *t = calltree_build(p, NULL);
	struct pv_report_options o = { 0 };
	char *tree = render(t, &o, R_TREE), *flat = render(t, &o, R_FLAT);
	for (int i = 0; i < 300; i++) {
		snprintf(want, sizeof want, "%9" PRId64 " %6.1f%% %6.0f %9.1f    f_%d  n.c:%d\n", counts[i],
			 100.0 * (double)values[i] / (double)total_v, sqrt((double)counts[i]),
			 (double)values[i] / 1e6, i, 10 + i);
		CHECK_CONTAINS(tree, want);
		snprintf(want, sizeof want, "%9" PRId64 " %5.1f%% %8" PRId64 " %5.1f%% %6.0f  f_%d  n.c:%d\n",
			 counts[i], 100.0 * (double)values[i] / (double)total_v, counts[i],
			 100.0 * (double)values[i] / (double)total_v, sqrt((double)counts[i]), i, 10 + i);
		CHECK_CONTAINS(flat, want);
	}
	/* the root's noise: one standard error of its weight, each sample c
	 * periods of v / c, in samples (relative error times the count) */
	double sq = 0;
	for (int i = 0; i < 300; i++)
		sq += (double)values[i] * (double)values[i] / (double)counts[i];
	snprintf(want, sizeof want, "%9" PRId64 " %6.1f%% %6.0f %9.1f  main", total_c, 100.0,
		 sqrt(sq) / (double)total_v * (double)total_c, (double)total_v / 1e6);
	CHECK_CONTAINS(tree, want);
	free(tree);
	free(flat);
	calltree_free(t);
	pv_profile_free(p);
}

/* Sample times count from the earlier start of merged profiles; a copy
 * keeps them; an untimed profile makes the merge untimed. */
static void test_merged_times(void)
{
	struct pv_profile *a = standard(), *b = standard(), *c;

	a->timed = b->timed = true;
	a->time_ns = 1000000;
	b->time_ns = 400000;
	for (size_t i = 0; i < a->nsamples; i++)
		a->samples[i].time_ns = 10 + (int64_t)i;
	for (size_t i = 0; i < b->nsamples; i++)
		b->samples[i].time_ns = 20;
	size_t na = a->nsamples;
	CHECK(pv_merge(a, b, "b") == 0);
	CHECK(a->timed);
	CHECK_EQ(a->time_ns, 400000);
	CHECK_EQ(a->samples[0].time_ns, 600010);
	CHECK_EQ(a->samples[na - 1].time_ns, 600000 + 10 + (int64_t)na - 1);
	CHECK_EQ(a->samples[na].time_ns, 20);
	c = pv_profile_copy(a);
	CHECK(c && c->timed && c->time_ns == 400000 && c->samples[0].time_ns == 600010);
	pv_profile_free(c);
	b->timed = false;
	CHECK(pv_merge(a, b, "b") == 0);
	CHECK(!a->timed);
	pv_profile_free(a);
	pv_profile_free(b);
}

/* A heap block's free time (end_ns) shifts with its allocation's when
 * profiles are merged, stays in a copy (0: never freed stays 0), and
 * keeps blocks freed at different times apart when samples are added
 * merged. */
static void test_block_ends(void)
{
	struct pv_profile *a = standard(), *b = standard(), *c;
	struct pv_sample s;

	a->timed = b->timed = true;
	a->time_ns = 1000000;
	b->time_ns = 400000;
	for (size_t i = 0; i < a->nsamples; i++) {
		a->samples[i].time_ns = 10;
		a->samples[i].end_ns = i % 2 ? 50 : 0;
	}
	b->samples[0].end_ns = 30;
	size_t na = a->nsamples;
	CHECK(pv_merge(a, b, "b") == 0);
	CHECK_EQ(a->samples[0].end_ns, 0);
	CHECK_EQ(a->samples[1].end_ns, 600050);
	CHECK_EQ(a->samples[na].end_ns, 30);
	CHECK_EQ(a->samples[na + 1].end_ns, 0);
	c = pv_profile_copy(a);
	CHECK(c && c->samples[1].end_ns == 600050 && c->samples[0].end_ns == 0);
	pv_profile_free(c);
	CHECK(!pv_profile_has_lifetimes(a));
	CHECK(pv_add_value_type(a, "alloc_space", "bytes") != PV_NONE);
	CHECK(pv_profile_has_lifetimes(a));
	/* the same block freed at another time is another sample */
	na = a->nsamples;
	s = a->samples[na - 1];
	s.end_ns = s.end_ns + 1;
	CHECK(pv_add_sample_merged(a, &s) == 0);
	CHECK_EQ(a->nsamples, na + 1);
	CHECK(pv_add_sample_merged(a, &s) == 0);
	CHECK_EQ(a->nsamples, na + 1);
	pv_profile_free(a);
	pv_profile_free(b);
}

/* A block never freed ends with its process when that ended before the
 * run: in a run of several processes, the memory went with it. */
static void test_block_end_process(void)
{
	struct pv_profile *p = standard();
	struct pv_process a = { .pid = 10, .start_ns = 0, .end_ns = 1000000000 };
	struct pv_process b = { .pid = 11, .start_ns = 0, .end_ns = 3000000000 };
	uint32_t pa, pb, ta, tb;
	int64_t len = 3000000000;

	pa = pv_add_process(p, &a);
	pb = pv_add_process(p, &b);
	ta = pv_get_process_thread(p, pa, 10, 0);
	tb = pv_get_process_thread(p, pb, 11, 0);
	CHECK(pa != PV_NONE && pb != PV_NONE && ta != PV_NONE && tb != PV_NONE && p->nsamples >= 3);
	if (p->nsamples < 3 || ta == PV_NONE || tb == PV_NONE) {
		pv_profile_free(p);
		return;
	}
	p->samples[0].thread = ta;
	p->samples[0].time_ns = 500000000;
	p->samples[1].thread = ta;
	p->samples[1].time_ns = 500000000;
	p->samples[1].end_ns = 700000000;
	p->samples[2].thread = tb;
	p->samples[2].time_ns = 500000000;
	CHECK_EQ(pv_block_end(p, &p->samples[0], len), 1000000000); /* with its process */
	CHECK_EQ(pv_block_end(p, &p->samples[1], len), 700000000);  /* its free */
	CHECK_EQ(pv_block_end(p, &p->samples[2], len), 0);          /* to the end */
	/* one process: to the end */
	p->nprocesses = 1;
	CHECK_EQ(pv_block_end(p, &p->samples[0], len), 0);
	pv_profile_free(p);
}

/* The flat row of the frame named name, or NULL. */
static const struct ct_flat_row *row_named(const struct calltree *t, const struct ct_flat_row *rows,
					   size_t n, const char *name)
{
	char buf[256];

	for (size_t i = 0; rows && i < n; i++)
		if (strcmp(calltree_frame_name(t, rows[i].frame, buf, sizeof buf), name) == 0)
			return &rows[i];
	return NULL;
}

/* noinlines: beta's self holds the sample of its inlined helper, which is
 * no frame; the same from pv_drop_inlines on the profile, and on a
 * reversed profile, whose locations hold the caller first. */
static void test_noinlines(void)
{
	struct pv_profile *p = standard(), *q;
	struct ct_options o = { .noinlines = true };
	struct calltree *t = calltree_build(p, &o);
	struct ct_flat_row *rows;
	const struct ct_flat_row *r;
	size_t n;

	uint32_t m = child_named(t, 0, "main"), b = child_named(t, m, "beta");
	CHECK_EQ(t->nodes[b].self_count, 10);
	CHECK_EQ(t->nodes[b].count, 30);
	CHECK(child_named(t, b, "inlined_helper") == PV_NONE);
	rows = calltree_flat(t, &n);
	CHECK(row_named(t, rows, n, "inlined_helper") == NULL);
	r = row_named(t, rows, n, "beta");
	CHECK(r && r->self_count == 10 && r->cum_count == 30);
	free(rows);
	calltree_free(t);

	/* by line: the helper's sample at the line of the call in beta */
	o.granularity = CT_LINES;
	t = calltree_build(p, &o);
	m = child_named(t, 0, "main:10");
	CHECK_EQ(t->nodes[child_named(t, m, "beta:25")].self_count, 1);
	CHECK_EQ(t->nodes[child_named(t, m, "beta:25")].nchildren, 0);
	calltree_free(t);

	/* reversed: the roots are where the time went, the helper's in beta */
	q = pv_profile_copy(p);
	CHECK(q && pv_reverse_stacks(q) == 0);
	o = (struct ct_options){ .noinlines = true, .reversed = true };
	t = calltree_build(q, &o);
	CHECK(child_named(t, 0, "inlined_helper") == PV_NONE);
	b = child_named(t, 0, "beta");
	CHECK(b != PV_NONE);
	CHECK_EQ(t->nodes[b].count, 10);
	CHECK_EQ(t->nodes[child_named(t, b, "main")].count, 10);
	calltree_free(t);

	/* the profile without inlines, with and without reversing */
	pv_drop_inlines(q, true);
	t = calltree_build(q, NULL);
	CHECK(child_named(t, 0, "inlined_helper") == PV_NONE);
	CHECK_EQ(t->nodes[child_named(t, 0, "beta")].count, 10);
	calltree_free(t);
	pv_profile_free(q);
	pv_drop_inlines(p, false);
	t = calltree_build(p, &(struct ct_options){ .paths_only = true });
	rows = calltree_flat(t, &n);
	CHECK(row_named(t, rows, n, "inlined_helper") == NULL);
	r = row_named(t, rows, n, "beta");
	CHECK(r && r->self_count == 10 && r->cum_count == 30);
	free(rows);
	calltree_free(t);
	pv_profile_free(p);
}

/* C++ names: short unless full_names, instantiations and overloads apart,
 * whole for a tooltip in any case, in the text reports too. */
static void test_cxx_names(void)
{
	struct pv_profile *p = folded("main;std::vector<int, std::allocator<int> >::push_back(int const&) 3\n"
				      "main;ns::f(int) 1\nmain;ns::f(double) 2\n"
				      "main;Acc<int>::spin(int) 4\nmain;Acc<long>::spin(int) 5\n");
	struct ct_options o = { 0 };
	struct calltree *t = calltree_build(p, &o);
	struct pv_report_options ro = { 0 };
	char buf[256], *text;
	uint32_t m = child_named(t, 0, "main");

	CHECK_EQ(t->nodes[child_named(t, m, "std::vector::push_back")].count, 3);
	CHECK_EQ(t->nodes[child_named(t, m, "ns::f(int)")].count, 1);
	CHECK_EQ(t->nodes[child_named(t, m, "ns::f(double)")].count, 2);
	CHECK_EQ(t->nodes[child_named(t, m, "Acc<int>::spin")].count, 4);
	CHECK_EQ(t->nodes[child_named(t, m, "Acc<long>::spin")].count, 5);
	CHECK_STR(calltree_frame_full_name(t, t->nodes[child_named(t, m, "std::vector::push_back")].frame,
					   buf, sizeof buf),
		  "std::vector<int, std::allocator<int> >::push_back(int const&)");
	text = render(t, &ro, R_FOLDED);
	CHECK(text && strstr(text, "main;std::vector::push_back 3\n") != NULL);
	free(text);
	calltree_free(t);
	o.full_names = true;
	t = calltree_build(p, &o);
	m = child_named(t, 0, "main");
	CHECK_EQ(t->nodes[child_named(t, m, "std::vector<int, std::allocator<int> >::push_back(int const&)")].count, 3);
	CHECK_EQ(t->nodes[child_named(t, m, "Acc<long>::spin(int)")].count, 5);
	CHECK(child_named(t, m, "std::vector::push_back") == PV_NONE);
	calltree_free(t);
	pv_profile_free(p);
}

/* Sample s of the stack main -> f with count c, CPU v ns, and, when var
 * is not negative, the variance of its CPU time. */
static void add_weighed(struct pv_profile *p, int f, int64_t c, int64_t v, double var)
{
	uint32_t locs[2] = { loc_of[f], loc_of[F_MAIN] };
	struct pv_sample s = { pv_add_stack(p, locs, 2), 2, pv_get_thread(p, 1, PV_NONE), 0, { c, v } };

	if (var >= 0) {
		s.flags = PV_SAMPLE_VAR;
		s.var[0] = (float)c;
		s.var[1] = (float)var;
	}
	pv_add_sample_merged(p, &s);
}

/* The noise: each node's variance the sum of its samples' (the Poisson
 * v^2 / c where a sample does not say), the ± in samples, the noise floor
 * against the parent's, the binomial share of an exact total, and
 * collect-heap's blocks. */
static void test_variances(void)
{
	struct pv_profile *p = make_profile();
	struct calltree *t;
	uint32_t m, a, b;

	add_weighed(p, F_A, 1, 4000000, -1);   /* 16e12 */
	add_weighed(p, F_C, 1, 1, -1);         /* a sample between: no merging */
	add_weighed(p, F_A, 1, 12000000, -1);  /* 144e12 */
	add_weighed(p, F_B, 2, 8000000, -1);   /* 2 of 4 ms: 32e12 */
	add_weighed(p, F_B, 1, 5000000, 0);    /* sampled with certainty */
	add_weighed(p, F_B, 1, 5000000, 0);    /* merged into the one before */
	CHECK_EQ(p->nsamples, 5);
	t = calltree_build(p, NULL);
	m = child_named(t, 0, "main");
	a = child_named(t, m, "alpha");
	b = child_named(t, m, "beta");
	CHECK(fabs(t->nodes[a].sq - 160e12) < 1e6);
	CHECK(fabs(t->nodes[b].sq - 32e12) < 1e6);
	CHECK(fabs(t->nodes[m].sq - (192e12 + 1)) < 1e6);
	/* alpha: 2 samples, 16 ms, sqrt(160e12) = 12.65 ms: 1.58 samples */
	CHECK(fabs(ct_node_noise(t, &t->nodes[a]) - sqrt(160e12) / 16e6 * 2) < 1e-9);
	/* beta's 4 samples, 18 ms, sqrt(32e12) ns */
	CHECK(fabs(ct_node_noise(t, &t->nodes[b]) - sqrt(32e12) / 18e6 * 4) < 1e-9);
	/* the floor: beta's 18 ms against main's 13.86 ms */
	CHECK(ct_node_below_floor(t, b, 1.3));
	CHECK(!ct_node_below_floor(t, b, 1.29));
	calltree_free(t);
	/* by samples: beta's 4 samples have the variance 4 (2 + 1 + 1) */
	t = calltree_build(p, &(struct ct_options){ .sample_index = "samples" });
	b = child_named(t, child_named(t, 0, "main"), "beta");
	CHECK(fabs(t->nodes[b].sq - 4) < 1e-9);
	calltree_free(t);
	/* the threads' CPU time exact: a share s of it varies 1 - s as much */
	p->cpu_exact = true;
	p->threads_cpu_ns = 34000001;
	t = calltree_build(p, NULL);
	m = child_named(t, 0, "main");
	a = child_named(t, m, "alpha");
	CHECK(fabs(ct_var(t, 16000000, t->nodes[a].sq) - 160e12 * (1 - 16000000.0 / 34000001)) < 1e6);
	CHECK(ct_node_noise(t, &t->nodes[m]) == 0);
	calltree_free(t);
	pv_profile_free(p);

	/* collect-heap at 8 KiB: a block of 1 MiB is certain, one of 64
	 * bytes stands for 1/p blocks with the variance (1 - p) / p^2 */
	struct pv_profile *hp = pv_profile_new();
	struct raw_heap *h = raw_heap_new(hp, 8192);
	struct pv_sample ps = { 0 };
	double q = -expm1(-64.0 / 8192), n = 1 / q;
	uint32_t objs = pv_find_value_type(hp, "alloc_objects"), space = pv_find_value_type(hp, "alloc_space");
	CHECK(h && raw_heap_alloc(h, &ps, 1 << 20, 0x1000) == 0 && raw_heap_alloc(h, &ps, 64, 0x2000) == 0);
	CHECK(hp->samples[0].flags & PV_SAMPLE_VAR);
	CHECK(pv_sample_var(&hp->samples[0], space, PV_NONE) == 0);
	CHECK(pv_sample_var(&hp->samples[0], objs, PV_NONE) == 0);
	CHECK(fabs(pv_sample_var(&hp->samples[1], objs, PV_NONE) - (n * n * (1 - q) + (n - floor(n)) * (1 - n + floor(n)))) <
	      1e-3 * n * n);
	CHECK(fabs(pv_sample_var(&hp->samples[1], space, PV_NONE) - 64 * n * 64 * n * (1 - q)) < 1e-3 * 4096 * n * n);
	raw_heap_delete(h);
	pv_profile_free(hp);
}

int main(void)
{
	pv_error_set_sink(quiet_sink);
	test_model();
	test_tree();
	test_subtree();
	test_threads_and_tids();
	test_granularity();
	test_reports();
	test_number_format();
	test_unsampled();
	test_escaped_names();
	test_folded_reads_back();
	test_deep_tree();
	test_copy();
	test_merged_times();
	test_block_ends();
	test_block_end_process();
	test_noinlines();
	test_cxx_names();
	test_variances();
	return check_done("test-calltree");
}
