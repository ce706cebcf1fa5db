/* diff.c - significance of the differences between two profiles (diff.h) */
#include "diff.h"
#include "error.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One step of the modified Lentz method: the next partial numerator num
 * folded into c and d; returns the factor the fraction changes by. */
static double lentz_step(double *c, double *d, double num)
{
	const double tiny = 1e-300;

	*d = 1 + num * *d;
	*c = 1 + num / *c;
	if (fabs(*d) < tiny)
		*d = tiny;
	if (fabs(*c) < tiny)
		*c = tiny;
	*d = 1 / *d;
	return *d * *c;
}

/* The continued fraction of the incomplete beta function (evaluated by the
 * modified Lentz method), valid where x < (a + 1) / (a + b + 2). */
static double incbeta_cf(double x, double a, double b)
{
	const double tiny = 1e-300, eps = 1e-15;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 100000; m++) {
		double m2 = 2.0 * m, del;

		/* the even term, then the odd one */
		h *= lentz_step(&c, &d, m * (b - m) * x / ((a + m2 - 1) * (a + m2)));
		del = lentz_step(&c, &d, -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)));
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

double pv_incbeta(double x, double a, double b)
{
	double front;

	if (!(x > 0))
		return 0;
	if (!(x < 1))
		return 1;
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * incbeta_cf(x, a, b) / a;
	return 1 - front * incbeta_cf(1 - x, b, a) / b;
}

double pv_binomial_p(double k, double m, double p0)
{
	double up, down, p;

	if (!(m > 0) || !(p0 > 0) || !(p0 < 1))
		return 1;
	if (k < 0)
		k = 0;
	if (k > m)
		k = m;
	/* P(X >= k) and P(X <= k) of X ~ Binomial(m, p0), through the beta
	 * function: I_p0(k, m - k + 1) and I_(1-p0)(m - k, k + 1). */
	up = k > 0 ? pv_incbeta(p0, k, m - k + 1) : 1;
	down = k < m ? pv_incbeta(1 - p0, m - k, k + 1) : 1;
	p = 2 * (up < down ? up : down);
	return p > 1 ? 1 : p;
}

const char *pv_verdict_name(enum pv_verdict v)
{
	switch (v) {
	case PV_VERDICT_WORSE: return "worse";
	case PV_VERDICT_BETTER: return "better";
	default: return "";
	}
}

const char *pv_diff_pct_text(char *buf, size_t n, double pct)
{
	if (isnan(pct)) {
		snprintf(buf, n, "-");
		return buf;
	}
	if (isinf(pct)) {
		/* a base of 0: no percentage of it, the function is new */
		snprintf(buf, n, "%s", pct > 0 ? "new" : "-");
		return buf;
	}
	if (!(fabs(pct) < 1e15)) {
		snprintf(buf, n, "%+.1f", pct);
		return buf;
	}
	/* tenths, rounded half away from zero */
	double x = pct * 10;
	long long r = (long long)(x < 0 ? x - 0.5 : x + 0.5);
	unsigned long long u = r < 0 ? 0ULL - (unsigned long long)r : (unsigned long long)r;
	snprintf(buf, n, "%s%llu.%llu", r < 0 ? "-" : r > 0 ? "+" : "", u / 10, u % 10);
	return buf;
}

const char *pv_diff_q_text(char *buf, size_t n, double q)
{
	if (q < 1e-9)
		snprintf(buf, n, "<1e-9");
	else
		snprintf(buf, n, "%.2g", q);
	return buf;
}

/* The scale of the subtree of node root, which stands for the whole. */
static void scale_at(const struct calltree *t, uint32_t root, const struct pv_diff_options *o,
		     struct pv_diff_scale *sc)
{
	static const struct pv_diff_options defaults = { PV_DIFF_DEFAULT_FDR, false };

	const struct pv_profile *p = t->p;
	double runs_b = p->diff_base_runs ? p->diff_base_runs : 1;
	double runs_n = p->diff_new_runs ? p->diff_new_runs : 1;
	double tb = t->dn ? (double)ct_base_weight(t, root) : 0;
	double tn = (double)ct_weight(t, &t->nodes[root]);
	double qb = t->dn ? t->dn[root].base_sq : 0, qn = t->nodes[root].sq;

	if (!o)
		o = &defaults;

	sc->new_ = 1 / runs_n;
	sc->base = 1 / runs_b;
	if (o->normalize && tb > 0 && tn > 0)
		sc->base = sc->new_ * tn / tb;
	/* each side's weight per sample, for the nodes it has none of */
	sc->base_unit = tb > 0 && qb > 0 ? qb / tb : 0;
	sc->new_unit = tn > 0 && qn > 0 ? qn / tn : 0;
	if (!(sc->base_unit > 0))
		sc->base_unit = sc->new_unit > 0 ? sc->new_unit : 1;
	if (!(sc->new_unit > 0))
		sc->new_unit = sc->base_unit;
	sc->fdr = o->fdr > 0 && o->fdr < 1 ? o->fdr : PV_DIFF_DEFAULT_FDR;
	sc->one_sided = !(tb > 0) || !(tn > 0);
}

void pv_diff_scale_of(const struct calltree *t, const struct pv_diff_options *o,
		      struct pv_diff_scale *sc)
{
	scale_at(t, 0, o, sc);
}

void pv_diff_cell_of(const struct pv_diff_scale *sc, int64_t sb, double qb, int64_t sn, double qn,
		     struct pv_diff_cell *c)
{
	double b = sb > 0 ? (double)sb : 0, n = sn > 0 ? (double)sn : 0;
	double ub, un, kb, kn, big;

	c->base = b * sc->base;
	c->new_ = n * sc->new_;
	c->delta = c->new_ - c->base;
	if (c->base > 0)
		c->pct = 100 * c->delta / c->base;
	else
		c->pct = c->new_ > 0 ? INFINITY : 0;
	big = c->base > c->new_ ? c->base : c->new_;
	c->effect = big > 0 ? c->delta / big : 0;
	c->verdict = PV_VERDICT_NONE;
	if ((b == 0 && n == 0) || sc->one_sided) {
		if (sc->one_sided && (b > 0 || n > 0))
			c->pct = NAN;
		c->p = c->q = 1;
		return;
	}
	/* Each side as k samples of u: k = S^2/Q, u = Q/S. */
	ub = b > 0 && qb > 0 ? qb / b : sc->base_unit;
	un = n > 0 && qn > 0 ? qn / n : sc->new_unit;
	kb = b / ub;
	kn = n / un;
	/* No change: a_n u_n E[k_n] = a_b u_b E[k_b], so the new side's share
	 * of the k_b + k_n samples is a_b u_b / (a_b u_b + a_n u_n). */
	c->p = pv_binomial_p(kn, kb + kn, sc->base * ub / (sc->base * ub + sc->new_ * un));
	c->q = c->p;
}

struct by_p {
	double p;
	size_t i;
};

static int cmp_p(const void *a, const void *b)
{
	const struct by_p *x = a, *y = b;

	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

int pv_diff_adjust(const struct pv_diff_scale *sc, struct pv_diff_cell *cells, size_t n)
{
	struct by_p *v = malloc((n ? n : 1) * sizeof *v);
	size_t m = 0;
	double run = 1;

	if (!v)
		return pv_oom();
	for (size_t i = 0; i < n; i++)
		if (cells[i].base > 0 || cells[i].new_ > 0)
			v[m++] = (struct by_p){ cells[i].p, i };
	qsort(v, m, sizeof *v, cmp_p);
	/* q of the k-th smallest p: min over j >= k of p_j m / j */
	for (size_t k = m; k-- > 0;) {
		double q = v[k].p * (double)m / (double)(k + 1);
		if (q < run)
			run = q;
		cells[v[k].i].q = run;
	}
	for (size_t i = 0; i < n; i++) {
		struct pv_diff_cell *c = &cells[i];
		c->verdict = PV_VERDICT_NONE;
		if ((c->base > 0 || c->new_ > 0) && c->q <= sc->fdr && c->delta != 0 && !sc->one_sided)
			c->verdict = c->delta > 0 ? PV_VERDICT_WORSE : PV_VERDICT_BETTER;
	}
	free(v);
	return 0;
}

struct pv_diff_cell *pv_diff_tree_at(const struct calltree *t, uint32_t root,
				     const struct pv_diff_options *o)
{
	struct pv_diff_scale sc;
	struct pv_diff_cell *c;
	uint8_t *in;

	if (!t->dn) {
		pv_error("not a comparison: give a base profile with --diff-base");
		return NULL;
	}
	c = calloc(t->nnodes ? t->nnodes : 1, sizeof *c);
	in = pv_budget_calloc(t->nnodes ? t->nnodes : 1, 1);
	if (!c || !in || root >= t->nnodes) {
		free(c);
		free(in);
		if (root >= t->nnodes)
			pv_error("internal error: no node %" PRIu32 " to compare under", root);
		else
			pv_oom();
		return NULL;
	}
	scale_at(t, root, o, &sc);
	/* the subtree: every node comes after its parent */
	in[root] = 1;
	for (size_t i = root; i < t->nnodes; i++) {
		if (i != root && !(t->nodes[i].parent != PV_NONE && in[t->nodes[i].parent]))
			continue;
		in[i] = 1;
		pv_diff_cell_of(&sc, ct_base_weight(t, (uint32_t)i), t->dn[i].base_sq,
				ct_weight(t, &t->nodes[i]), t->nodes[i].sq, &c[i]);
	}
	/* the nodes outside it hold nothing: not in the family */
	for (size_t i = 0; i < t->nnodes; i++)
		if (!in[i])
			c[i] = (struct pv_diff_cell){ .p = 1, .q = 1 };
	free(in);
	if (pv_diff_adjust(&sc, c, t->nnodes) < 0) {
		free(c);
		return NULL;
	}
	return c;
}

struct pv_diff_cell *pv_diff_tree(const struct calltree *t, const struct pv_diff_options *o)
{
	return pv_diff_tree_at(t, 0, o);
}

int pv_diff_flat(const struct calltree *t, const struct ct_flat_row *rows, size_t n,
		 const struct pv_diff_options *o, struct pv_diff_cell **self,
		 struct pv_diff_cell **cum)
{
	struct pv_diff_scale sc;
	struct pv_diff_cell *s = calloc(n ? n : 1, sizeof *s);
	struct pv_diff_cell *c = calloc(n ? n : 1, sizeof *c);

	if (!s || !c) {
		free(s);
		free(c);
		return pv_oom();
	}
	pv_diff_scale_of(t, o, &sc);
	for (size_t i = 0; i < n; i++) {
		const struct ct_flat_row *r = &rows[i];
		pv_diff_cell_of(&sc, ct_base_self_weight(t, r), r->base_self_sq, ct_self_weight(t, r),
				r->self_sq, &s[i]);
		pv_diff_cell_of(&sc, ct_base_cum_weight(t, r), r->base_cum_sq, ct_cum_weight(t, r),
				r->cum_sq, &c[i]);
	}
	if (pv_diff_adjust(&sc, s, n) < 0 || pv_diff_adjust(&sc, c, n) < 0) {
		free(s);
		free(c);
		return -1;
	}
	*self = s;
	*cum = c;
	return 0;
}
