/* report-folded.c - folded stacks, FlameGraph's input: a line per
 * distinct stack, the frames outermost first, and its weight
 */
#include "report.h"
#include "report-labels.h"
#include "present.h"
#include "error.h"
#include "escape.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Folded stacks: "outer;...;leaf WEIGHT", one line per distinct stack (a
 * node with samples of its own), outermost frame first, as FlameGraph's
 * flamegraph.pl reads them, in the order of the tree (hottest first,
 * depth first).  With the tree split by thread the thread is the first
 * frame.  The weight is what every report weighs by: the time value in
 * whole microseconds (rounded so that the lines add up to the total), a
 * size in bytes or an estimated count as it is, or the sample count. */
int report_folded(FILE *out, const struct pv_report_ctx *rc)
{
	const struct calltree *t = rc->t;
	const struct ct_node *nodes = t->nodes;
	uint32_t *stack = pv_budget_calloc(t->nnodes ? t->nnodes : 1, sizeof *stack);
	size_t *len_at = pv_budget_calloc(t->nnodes ? t->nnodes : 1, sizeof *len_at);
	char *path = NULL;
	size_t cap = 0, sp = 0;
	int64_t sum_ns = 0, written_us = 0;
	struct report_labels l;
	int ret = -1;

	struct pv_diff_scale sc = { 0 };

	if (t->dn && rc->diff)
		pv_diff_scale_of(t, rc->diff, &sc);
	if (!stack || !len_at || report_labels_init(&l, t, REPORT_LABEL_FOLDED) < 0) {
		free(stack);
		free(len_at);
		return pv_oom();
	}
	/* Depth first; len_at[k] is the length of the path of stack[k]'s
	 * parent, where its own name starts. */
	sp = nodes[0].nchildren;
	{
		size_t k = sp;
		for (uint32_t c = nodes[0].first_child; c != PV_NONE; c = nodes[c].next_sibling) {
			stack[--k] = c;
			len_at[k] = 0;
		}
	}
	while (sp) {
		uint32_t id = stack[--sp];
		size_t len = len_at[sp];
		const struct ct_node *nd = &nodes[id];
		char thread[REPORT_NAME_MAX];
		const char *name, *where;
		size_t nl, wl;

		if (ct_is_group(nd->kind)) {
			char raw[REPORT_NAME_MAX];
			name = pv_escape(thread, sizeof thread, calltree_node_name(t, id, raw, sizeof raw));
			nl = strlen(name);
		} else if (!(name = report_labels_frame(&l, nd->frame, &nl, &where, &wl))) {
			goto out;
		}
		if (pv_grow(&path, &cap, len + nl + 64, 1) < 0)
			goto out;
		if (len)
			path[len++] = ';';
		/* ';' separates frames, as in FlameGraph's own stackcollapse
		 * scripts: one in a name becomes ':'.  A newline was escaped
		 * (^J) and cannot end the line; the count is after the last
		 * space, so spaces may stay. */
		memcpy(path + len, name, nl);
		for (char *c = memchr(path + len, ';', nl); c; c = memchr(c, ';', (size_t)(path + len + nl - c)))
			*c = ':';
		len += nl;
		if (t->dn && rc->diff) {
			/* a comparison: "stack BASE NEW", FlameGraph's
			 * difffolded.pl format, in samples (per run, the base
			 * normalized when asked): what a test needs to be
			 * made again from these lines */
			const struct ct_diff_node *d = &t->dn[id];
			if (nd->self_count > 0 || d->self_count > 0) {
				double b = (double)d->self_count * sc.base;
				double n = (double)nd->self_count * sc.new_;
				char *q = path + len;
				q += sprintf(q, " %.0f %.0f\n", b, n);
				fwrite_unlocked(path, 1, (size_t)(q - path), out);
			}
		} else if (nd->self_count > 0) {
			int64_t weight = nd->self_count;
			bool show = true;
			if (t->v_value != PV_NONE) {
				int64_t upto;
				if (nd->self_value <= 0 || __builtin_add_overflow(sum_ns, nd->self_value, &sum_ns)) {
					show = false;
				} else {
					int64_t div = calltree_value_unit(t) == CT_UNIT_NS ? 1000 : 1;
					upto = sum_ns / div + (div > 1 && sum_ns % div >= div / 2);
					weight = upto - written_us;
					/* under half a microsecond so far: nothing */
					show = weight > 0;
					if (show)
						written_us = upto;
				}
			}
			if (show) {
				char *q = path + len;
				q += sprintf(q, " %" PRId64 "\n", weight);
				fwrite_unlocked(path, 1, (size_t)(q - path), out);
			}
		}
		/* children, the hottest on top of the stack */
		sp += nd->nchildren;
		size_t j = sp;
		for (uint32_t c = nd->first_child; c != PV_NONE; c = nodes[c].next_sibling) {
			stack[--j] = c;
			len_at[j] = len;
		}
	}
	ret = 0;
out:
	free(stack);
	free(len_at);
	free(path);
	report_labels_free(&l);
	return ret;
}
