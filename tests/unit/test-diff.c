/* test-diff.c - comparisons: the incomplete beta function and the binomial
 * test against direct sums, Benjamini-Hochberg by hand, the call tree's
 * two sides, and the false discovery rate the test promises, measured on
 * simulated Poisson sampling (a fixed seed: the same numbers every run) */
#include "calltree.h"
#include "check.h"
#include "diff.h"
#include "profbuild.h"
#include "report.h"
#include "report-text.h"

#include <math.h>

static bool close_to(double a, double b, double rel)
{
	return fabs(a - b) <= rel * (fabs(b) > 1e-300 ? fabs(b) : 1e-300) || fabs(a - b) < 1e-300;
}

/* P(X >= k) of X ~ Binomial(n, p), summed term by term in logs. */
static double binom_upper(int n, int k, double p)
{
	double s = 0;

	for (int j = k; j <= n; j++)
		s += exp(lgamma(n + 1.0) - lgamma(j + 1.0) - lgamma(n - j + 1.0) + j * log(p) +
			 (n - j) * log1p(-p));
	return s;
}

static void test_incbeta(void)
{
	CHECK(close_to(pv_incbeta(0.5, 2, 3), 11.0 / 16, 1e-12));
	CHECK(close_to(pv_incbeta(0.3, 1, 1), 0.3, 1e-12));
	CHECK(close_to(pv_incbeta(0.7, 4, 1), pow(0.7, 4), 1e-12));
	CHECK(close_to(pv_incbeta(0.2, 3.5, 7.25), 1 - pv_incbeta(0.8, 7.25, 3.5), 1e-10));
	CHECK(pv_incbeta(0, 2, 2) == 0 && pv_incbeta(1, 2, 2) == 1);
	/* I_p(k, n - k + 1) is the binomial's upper tail */
	static const struct { int n, k; double p; } c[] = {
		{ 10, 3, 0.5 }, { 50, 40, 0.5 }, { 200, 130, 0.55 }, { 200, 20, 0.3 },
		{ 1000, 560, 0.5 }, { 1000, 450, 0.5 }, { 3000, 1650, 0.5 }, { 7, 7, 0.9 },
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		double want = binom_upper(c[i].n, c[i].k, c[i].p);
		double got = pv_incbeta(c[i].p, c[i].k, c[i].n - c[i].k + 1);
		if (!close_to(got, want, 1e-8))
			fprintf(stderr, "I_%g(%d, %d) = %.15g, the sum says %.15g\n", c[i].p, c[i].k,
				c[i].n - c[i].k + 1, got, want);
		CHECK(close_to(got, want, 1e-8));
	}
}

static void test_binomial_p(void)
{
	CHECK(pv_binomial_p(5, 10, 0.5) == 1);
	CHECK(close_to(pv_binomial_p(10, 10, 0.5), 2 * pow(0.5, 10), 1e-12));
	CHECK(close_to(pv_binomial_p(0, 10, 0.5), 2 * pow(0.5, 10), 1e-12));
	/* two-sided: twice the smaller tail */
	CHECK(close_to(pv_binomial_p(560, 1000, 0.5), 2 * binom_upper(1000, 560, 0.5), 1e-8));
	CHECK(pv_binomial_p(0, 0, 0.5) == 1);
	/* a side with nothing: k = 0 of m = 4 at p0 = 0.5 is not significant */
	CHECK(pv_binomial_p(0, 4, 0.5) > 0.1);
}

static void test_bh(void)
{
	struct pv_diff_scale sc = { .base = 1, .new_ = 1, .base_unit = 1, .new_unit = 1, .fdr = 0.05 };
	struct pv_diff_cell c[6];
	const double p[6] = { 0.01, 0.04, 0.03, 0.005, 0.5, 1 };

	for (int i = 0; i < 6; i++)
		c[i] = (struct pv_diff_cell){ .base = 1, .new_ = 2, .delta = 1, .p = p[i] };
	/* the last one has no samples: not in the family */
	c[5].base = c[5].new_ = c[5].delta = 0;
	CHECK(pv_diff_adjust(&sc, c, 6) == 0);
	/* m = 5: sorted .005 .01 .03 .04 .5 -> .025 .025 .05 .05 .5 */
	CHECK(close_to(c[3].q, 0.025, 1e-12));
	CHECK(close_to(c[0].q, 0.025, 1e-12));
	CHECK(close_to(c[2].q, 0.05, 1e-12));
	CHECK(close_to(c[1].q, 0.05, 1e-12));
	CHECK(close_to(c[4].q, 0.5, 1e-12));
	CHECK_EQ(c[0].verdict, PV_VERDICT_WORSE);
	CHECK_EQ(c[1].verdict, PV_VERDICT_WORSE);
	CHECK_EQ(c[4].verdict, PV_VERDICT_NONE);
	CHECK_EQ(c[5].verdict, PV_VERDICT_NONE);
}

/* The simulation: a node sampled for one unit of time at rate lambda,
 * each sample weighing 1 to 4 periods (a CPU timer that fires late), as
 * sums S and Q. */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((rng >> 11) + 0.5) / 9007199254740992.0;
}

static void poisson_side(double lambda, int64_t *s, double *q)
{
	double t = 0;

	*s = 0;
	*q = 0;
	for (;;) {
		t += -log(uniform()) / lambda;
		if (t >= 1)
			break;
		int64_t w = 1 + (int64_t)(uniform() * 4);
		*s += w;
		*q += (double)(w * w);
	}
}

/* Families of 40 nodes, rates 20 to 600 samples; in each family the
 * first `changed` nodes really change by `factor`.  Returns the share of
 * families with any false call (with changed = 0: the family-wise rate,
 * which under no change at all is what the FDR bounds) and the mean false
 * discovery proportion and power. */
static void simulate(int families, int changed, double factor, double *any_false, double *fdp,
		     double *power)
{
	enum { M = 40 };
	struct pv_diff_scale sc = { .base = 1, .new_ = 1, .base_unit = 2.5, .new_unit = 2.5, .fdr = 0.05 };
	int with_false = 0;
	double sum_fdp = 0, found = 0;

	for (int f = 0; f < families; f++) {
		struct pv_diff_cell c[M];
		int false_calls = 0, calls = 0;
		for (int i = 0; i < M; i++) {
			double lambda = 20 + 580 * uniform();
			int64_t sb, sn;
			double qb, qn;
			poisson_side(lambda, &sb, &qb);
			poisson_side(i < changed ? lambda * factor : lambda, &sn, &qn);
			pv_diff_cell_of(&sc, sb, qb, sn, qn, &c[i]);
		}
		pv_diff_adjust(&sc, c, M);
		for (int i = 0; i < M; i++) {
			if (c[i].verdict == PV_VERDICT_NONE)
				continue;
			calls++;
			if (i >= changed)
				false_calls++;
			else
				found++;
		}
		with_false += false_calls > 0;
		sum_fdp += calls ? (double)false_calls / calls : 0;
	}
	*any_false = (double)with_false / families;
	*fdp = sum_fdp / families;
	*power = changed ? found / ((double)families * changed) : 0;
}

static void test_calibration(void)
{
	double any, fdp, power;

	/* A/A: no node changes; a call anywhere is false.  Benjamini-Hochberg
	 * at 5% keeps the chance of any call at 5% or less; a test whose
	 * p-values were too small (the Poisson noise underestimated) would
	 * call far more; one far too cautious, far less. */
	simulate(1500, 0, 1, &any, &fdp, &power);
	fprintf(stderr, "A/A: %.4f of families with a false call (at most 0.05 promised)\n", any);
	CHECK(any <= 0.05 + 0.015);
	CHECK(any >= 0.02);
	/* 8 of 40 nodes 30% slower: false discoveries stay at 5% or less of
	 * the calls, and most real changes are found */
	simulate(1000, 8, 1.3, &any, &fdp, &power);
	fprintf(stderr, "8 of 40 changed by 30%%: false discovery proportion %.4f, power %.3f\n", fdp,
		power);
	CHECK(fdp <= 0.05 + 0.01);
	CHECK(power >= 0.5);
}

/* A comparison in the call tree: the standard profile as the base, and as
 * the new side with alpha's 60 samples made 90. */
static struct pv_profile *compared(bool slower)
{
	struct pv_profile *p = make_profile();

	add(p, 1, slower ? 90 : 60, 2, (int[]){ F_MAIN, F_A });
	add(p, 1, 20, 3, (int[]){ F_MAIN, F_B, F_C });
	add(p, 1, 9, 2, (int[]){ F_MAIN, F_B });
	size_t nnew = p->nsamples;
	add(p, 1, 60, 2, (int[]){ F_MAIN, F_A });
	add(p, 1, 20, 3, (int[]){ F_MAIN, F_B, F_C });
	add(p, 1, 9, 2, (int[]){ F_MAIN, F_B });
	for (size_t i = nnew; i < p->nsamples; i++)
		p->samples[i].flags |= PV_SAMPLE_BASE;
	p->diff = true;
	p->diff_base_runs = p->diff_new_runs = 1;
	return p;
}

static uint32_t child_named(const struct calltree *t, uint32_t node, const char *name)
{
	char buf[256];
	for (uint32_t c = t->nodes[node].first_child; c != PV_NONE; c = t->nodes[c].next_sibling)
		if (strcmp(calltree_node_name(t, c, buf, sizeof buf), name) == 0)
			return c;
	return PV_NONE;
}

static void test_tree_sides(void)
{
	struct pv_profile *p = compared(true);
	struct pv_diff_options o = { .fdr = 0.05 };
	struct calltree *t = calltree_build(p, NULL);
	struct pv_diff_cell *c;

	CHECK(t && t->dn);
	if (!t || !t->dn)
		return;
	CHECK_EQ(t->nodes[0].count, 119);
	CHECK_EQ(t->dn[0].count, 89);
	uint32_t m = child_named(t, 0, "main"), a = child_named(t, m, "alpha"), b = child_named(t, m, "beta");
	CHECK(a != PV_NONE && b != PV_NONE);
	CHECK_EQ(t->nodes[a].count, 90);
	CHECK_EQ(t->dn[a].count, 60);
	CHECK_EQ(t->dn[b].count, 29);
	CHECK_EQ(t->dn[b].self_count, 9);
	/* each sample weighs 1 ms: the sum of squares is 60 ms^2 */
	CHECK(close_to(t->dn[a].base_sq, 60 * 1e12, 1e-12));
	c = pv_diff_tree(t, &o);
	CHECK(c != NULL);
	if (c) {
		CHECK(close_to(c[a].delta, 30e6, 1e-12));
		CHECK(close_to(c[a].pct, 50, 1e-12));
		/* 90 against 60 at p0 = 1/2: the binomial test's own p-value */
		CHECK(close_to(c[a].p, 2 * binom_upper(150, 90, 0.5), 1e-8));
		CHECK_EQ(c[b].verdict, PV_VERDICT_NONE);
		CHECK(c[b].delta == 0);
		free(c);
	}
	/* the flat rows carry both sides too, and a zoomed tree keeps them */
	size_t n;
	struct ct_flat_row *rows = calltree_flat(t, &n);
	CHECK(rows != NULL);
	for (size_t i = 0; rows && i < n; i++) {
		char buf[64];
		if (strcmp(calltree_frame_name(t, rows[i].frame, buf, sizeof buf), "gamma") == 0) {
			CHECK_EQ(rows[i].base_self_count, 20);
			CHECK_EQ(rows[i].self_count, 20);
		}
	}
	free(rows);
	struct calltree *sub = calltree_subtree(t, b);
	CHECK(sub && sub->dn && sub->dn[0].count == 29 && sub->dn[1].count == 29);
	calltree_free(sub);
	/* the paths-only tree (flat, call graph) agrees */
	struct ct_options po = { .paths_only = true };
	struct calltree *pt = calltree_build(p, &po);
	CHECK(pt && pt->dn && pt->dn[0].count == 89 && pt->nodes[0].count == 119);
	if (pt) {
		rows = calltree_flat(pt, &n);
		for (size_t i = 0; rows && i < n; i++) {
			char buf[64];
			if (strcmp(calltree_frame_name(pt, rows[i].frame, buf, sizeof buf), "alpha") == 0) {
				CHECK_EQ(rows[i].base_cum_count, 60);
				CHECK_EQ(rows[i].cum_count, 90);
				CHECK(close_to(rows[i].base_cum_sq, 60e12, 1e-12));
			}
		}
		free(rows);
	}
	calltree_free(pt);
	calltree_free(t);
	pv_profile_free(p);

	/* against itself: every delta 0, nothing called */
	p = compared(false);
	t = calltree_build(p, NULL);
	c = t ? pv_diff_tree(t, &o) : NULL;
	CHECK(c != NULL);
	for (size_t i = 0; c && i < t->nnodes; i++) {
		CHECK(c[i].delta == 0);
		CHECK(c[i].p == 1);
		CHECK_EQ(c[i].verdict, PV_VERDICT_NONE);
	}
	free(c);
	/* normalize: the base scaled to the new total changes nothing here */
	o.normalize = true;
	c = t ? pv_diff_tree(t, &o) : NULL;
	for (size_t i = 0; c && i < t->nnodes; i++)
		CHECK(c[i].delta == 0);
	free(c);
	calltree_free(t);
	pv_profile_free(p);
}

static bool same_cells(const struct pv_diff_cell *a, const struct pv_diff_cell *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].delta != b[i].delta || a[i].q != b[i].q || a[i].verdict != b[i].verdict)
			return false;
	return true;
}

/* The reports' table, and the comparison pv_report_prepare tests once for
 * the kind: every node for the tree and the flame graph, every flat row
 * for the flat table and the call graph, nothing for the others. */
static void test_report_prepare(void)
{
	struct pv_profile *p = compared(true);
	struct pv_diff_options o = { .fdr = 0.05 };
	struct pv_report_options ro = PV_REPORT_OPTIONS_DEFAULT;
	struct calltree *t = calltree_build(p, NULL);
	struct calltree *pt = calltree_build(p, &(struct ct_options){ .paths_only = true });
	struct pv_diff_cell *want = t ? pv_diff_tree(t, &o) : NULL, *self = NULL, *cum = NULL;
	struct ct_flat_row *rows = NULL;
	size_t n = 0;

	for (int k = 0; k < PV_REPORT_NKINDS; k++) {
		const struct pv_report_kind_info *info = pv_report_kind((enum pv_report_kind)k);
		CHECK(info->name && info->name[0] && info->write);
		CHECK((info->compares == PV_COMPARES_NOT) == (info->one_profile != NULL));
		CHECK(!info->time_order || info->needs == PV_NEEDS_PATHS);
	}
	CHECK(t && pt && want);
	if (!t || !pt || !want)
		return;
	for (enum pv_report_kind k = PV_REPORT_TREE; k <= PV_REPORT_FLAME; k++) {
		struct pv_report_ctx c = { .o = &ro, .p = p, .t = k == PV_REPORT_FLAT || k == PV_REPORT_SVG ? pt : t,
					   .diff = &o };
		CHECK_EQ(pv_report_prepare(&c, k), 0);
		if (k == PV_REPORT_TREE || k == PV_REPORT_FLAME) {
			CHECK(c.cells && !c.rows && same_cells(c.cells, want, t->nnodes));
		} else if (k == PV_REPORT_FLAT || k == PV_REPORT_SVG) {
			CHECK(!c.cells && c.rows && c.self && c.cum);
			rows = calltree_flat(pt, &n);
			CHECK(rows && n == c.nrows && pv_diff_flat(pt, rows, n, &o, &self, &cum) == 0);
			CHECK(self && cum && same_cells(c.self, self, n) && same_cells(c.cum, cum, n));
			free(rows);
			free(self);
			free(cum);
			self = cum = NULL;
		} else {
			CHECK(!c.cells && !c.rows && !c.self && !c.cum);
		}
		pv_report_ctx_free(&c);
	}
	free(want);
	calltree_free(pt);
	calltree_free(t);
	pv_profile_free(p);
}

/* How a change in percent is written: "new" for a base of nothing. */
static void test_pct_text(void)
{
	char b[32];

	CHECK_STR(pv_diff_pct_text(b, sizeof b, INFINITY), "new");
	CHECK_STR(pv_diff_pct_text(b, sizeof b, NAN), "-");
	CHECK_STR(pv_diff_pct_text(b, sizeof b, 31.0), "+31.0");
	CHECK_STR(pv_diff_pct_text(b, sizeof b, -4.5), "-4.5");
}

int main(void)
{
	test_pct_text();
	test_incbeta();
	test_binomial_p();
	test_bh();
	test_calibration();
	test_tree_sides();
	test_report_prepare();
	return check_done("test-diff");
}
