/* browse-flat.c - the flat view: its rows sorted by self or cumulative
 * weight, a comparison's by the change (see browse.h) */
#include "browse.h"

#include "diff.h"
#include "error.h"

#include <math.h>
#include <stdlib.h>

static int cmp_rows(const void *x, const void *y, void *ctx)
{
	const struct browse *b = ctx;
	const struct ct_flat_row *a = x, *c = y;
	int64_t wa, wc;

	if (b->flat_by_cum) {
		wa = ct_cum_weight(b->t, a);
		wc = ct_cum_weight(b->t, c);
	} else {
		wa = ct_self_weight(b->t, a);
		wc = ct_self_weight(b->t, c);
	}
	if (wa != wc)
		return wa > wc ? -1 : 1;
	return a->frame < c->frame ? -1 : a->frame > c->frame;
}

/* A comparison's flat row with its cell. */
struct diff_row {
	struct ct_flat_row row;
	struct pv_diff_cell cell;
};

/* With the filter, the rows with a verdict first; then the larger change
 * first (as the text report), the larger weight, the frame. */
static int cmp_diff_rows(const void *x, const void *y, void *ctx)
{
	const struct browse *b = ctx;
	const struct diff_row *a = x, *c = y;
	double da = fabs(a->cell.delta), dc = fabs(c->cell.delta);

	if (b->significant && (a->cell.verdict != PV_VERDICT_NONE) != (c->cell.verdict != PV_VERDICT_NONE))
		return a->cell.verdict != PV_VERDICT_NONE ? -1 : 1;
	if (da != dc)
		return da > dc ? -1 : 1;
	if (a->cell.delta != c->cell.delta)
		return a->cell.delta > c->cell.delta ? -1 : 1;
	return cmp_rows(&a->row, &c->row, ctx);
}

/* A comparison's flat rows: each tested (self or cumulative, as sorted:
 * pv_diff_flat's families), sorted by the change, the cells beside them
 * in b->fcells.  0, or -1 after an error (said). */
static int sort_diff_rows(struct browse *b)
{
	struct pv_diff_cell *self, *cum, *c;
	struct diff_row *dr;

	free(b->fcells);
	b->fcells = NULL;
	if (pv_diff_flat(b->t, b->rows, b->nrows, b->dopt, &self, &cum) < 0)
		return -1;
	c = b->flat_by_cum ? cum : self;
	free(b->flat_by_cum ? self : cum);
	if (!(dr = malloc((b->nrows + 1) * sizeof *dr))) {
		free(c);
		return pv_oom();
	}
	for (size_t i = 0; i < b->nrows; i++)
		dr[i] = (struct diff_row){ b->rows[i], c[i] };
	qsort_r(dr, b->nrows, sizeof *dr, cmp_diff_rows, b);
	b->nflat = b->significant ? 0 : b->nrows;
	for (size_t i = 0; i < b->nrows; i++) {
		b->rows[i] = dr[i].row;
		c[i] = dr[i].cell;
		if (b->significant && c[i].verdict != PV_VERDICT_NONE)
			b->nflat++;
	}
	free(dr);
	b->fcells = c;
	return 0;
}

int browse_set_flat(struct browse *b, bool on, bool by_cum)
{
	b->flat = on;
	b->flat_by_cum = by_cum;
	if (!on)
		return 0;
	if (!b->rows && !(b->rows = calltree_flat(b->t, &b->nrows)))
		return -1;
	if (b->cells) {
		if (sort_diff_rows(b) < 0)
			return -1;
	} else {
		qsort_r(b->rows, b->nrows, sizeof *b->rows, cmp_rows, b);
		b->nflat = b->nrows;
	}
	if (b->fcursor >= b->nflat)
		b->fcursor = b->nflat ? b->nflat - 1 : 0;
	return 0;
}
