/* diff.h - comparing two profiles: which differences are larger than the
 * sampling noise
 *
 * A comparison's profile holds the samples of both sides, the base's
 * flagged PV_SAMPLE_BASE (profile.h), and its call tree holds both sides'
 * totals per node (calltree.h, ct_diff_node).  Here each node or flat row
 * gets the two sides' values as reports show them, the change, and
 * whether the change is significant:
 *
 *   values   each side per run: a side's sum divided by how many profiles
 *            it merges; with normalize the base is also scaled so that its
 *            total equals the new side's (pprof's -normalize).
 *   test     a side's samples are a Poisson process; with weights that
 *            vary from sample to sample (CPU time per sample) a sum S of
 *            weights with sum of squares Q is, for the test, k = S^2/Q
 *            samples of u = Q/S each (k = the count, u = the weight when
 *            every sample weighs the same).  Given both sides' k, the new
 *            side's share of them is binomial under "no change in the
 *            value per run"; the two-sided p-value is that binomial test's
 *            (continuous in k, by the regularized incomplete beta).
 *   many     the p-values of all the nodes (or rows) of a report are
 *            turned into q-values (Benjamini-Hochberg): calling every
 *            change with q <= Q significant keeps the expected share of
 *            false calls among them at Q or less.
 */
#ifndef PROFVIEW_DIFF_H
#define PROFVIEW_DIFF_H

#include "calltree.h"

#include <stdbool.h>
#include <stddef.h>

#define PV_DIFF_DEFAULT_FDR 0.05

enum pv_verdict { PV_VERDICT_NONE = 0, PV_VERDICT_WORSE, PV_VERDICT_BETTER };

struct pv_diff_options {
	double fdr;            /* false discovery rate, (0, 1); 0: the default */
	bool normalize;        /* scale the base to the new side's total */
};

/* How a tree's sides are shown and tested: each side's factor from its
 * sums to what reports show, and each side's weight per sample over the
 * whole tree (for a node with no samples on that side). */
struct pv_diff_scale {
	double base, new_;
	double base_unit, new_unit;
	double fdr;
	/* A side has no samples at all: there is nothing to compare, so no
	 * cell gets a verdict, a q below 1 or a change in percent. */
	bool one_sided;
};

/* One node's or row's comparison.  base and new_ are in the tree's weight
 * (ct_pick: nanoseconds or samples), scaled; delta = new_ - base; pct is
 * delta as a percentage of base (INFINITY when base is 0 and new_ not, 0
 * when both are, NAN when a whole side has no samples); effect = delta /
 * max(base, new_), in [-1, 1]. */
struct pv_diff_cell {
	double base, new_, delta, pct, effect;
	double p, q;
	enum pv_verdict verdict;
};

/* The scale of tree t (its root's totals, its profile's runs); o NULL:
 * the defaults. */
void pv_diff_scale_of(const struct calltree *t, const struct pv_diff_options *o,
		      struct pv_diff_scale *sc);

/* The comparison of a node or row whose base side has sum sb (in the
 * tree's weight) and sum of squared weights qb, and new side sn, qn; q is
 * left equal to p and verdict none until pv_diff_adjust. */
void pv_diff_cell_of(const struct pv_diff_scale *sc, int64_t sb, double qb, int64_t sn, double qn,
		     struct pv_diff_cell *c);

/* Benjamini-Hochberg over cells[0..n): each q from the p-values of those
 * with a sample on either side, then the verdicts.  0, or -1 when out of
 * memory. */
int pv_diff_adjust(const struct pv_diff_scale *sc, struct pv_diff_cell *cells, size_t n);

/* Every node of t (cumulative), tested and adjusted as one family; NULL
 * after an error. */
struct pv_diff_cell *pv_diff_tree(const struct calltree *t, const struct pv_diff_options *o);

/* The same for the subtree of node root alone (a zoomed view), scaled by
 * root's totals as if they were the whole; the cells of the other nodes
 * are empty. */
struct pv_diff_cell *pv_diff_tree_at(const struct calltree *t, uint32_t root,
				     const struct pv_diff_options *o);

/* Every flat row, self and cumulative, each a family of its own; 0 or -1. */
int pv_diff_flat(const struct calltree *t, const struct ct_flat_row *rows, size_t n,
		 const struct pv_diff_options *o, struct pv_diff_cell **self,
		 struct pv_diff_cell **cum);

/* The two-sided p-value of k_new against a binomial with m trials and
 * probability p0 under the null, continuous in k_new and m (exposed for
 * the tests). */
double pv_binomial_p(double k_new, double m, double p0);
/* The regularized incomplete beta function I_x(a, b), a, b > 0. */
double pv_incbeta(double x, double a, double b);

const char *pv_verdict_name(enum pv_verdict v);

/* How every report writes a change in percent ("+31.0", "-4.5", "0.0"
 * for what rounds to nothing, "new" when the base had none, "-" when a
 * whole side had none) and a q-value
 * ("0.0064", "<1e-9"), so that tables and pictures agree to the digit.
 * Return buf. */
const char *pv_diff_pct_text(char *buf, size_t n, double pct);
const char *pv_diff_q_text(char *buf, size_t n, double q);

/* How strongly the pictures colour a change: from 0 (none) to 1 at a
 * doubling or a halving and beyond (|effect| 0.5; a vanishing is 1). */
static inline double pv_diff_strength(const struct pv_diff_cell *c)
{
	double s = 2.0 * (c->effect < 0 ? -c->effect : c->effect);
	return s < 1 ? s : 1;
}

#endif
