/* report-labels.c - the escaped names and locations of a call tree's
 * frames, made once each for the text reports (see report-labels.h)
 */
#include "report-labels.h"
#include "error.h"
#include "escape.h"
#include "folded-read.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

int report_labels_init(struct report_labels *l, const struct calltree *t, enum report_label_style style)
{
	size_t n = t->nframes ? t->nframes : 1;

	memset(l, 0, sizeof *l);
	l->t = t;
	l->style = style;
	l->off = pv_budget_calloc(n, sizeof *l->off);
	l->name_len = pv_budget_calloc(n, sizeof *l->name_len);
	l->where_len = pv_budget_calloc(n, sizeof *l->where_len);
	if (!l->off || !l->name_len || !l->where_len) {
		free(l->off);
		free(l->name_len);
		free(l->where_len);
		return pv_oom();
	}
	memset(l->off, 0xff, n * sizeof *l->off);
	return 0;
}

void report_labels_free(struct report_labels *l)
{
	free(l->off);
	free(l->name_len);
	free(l->where_len);
	free(l->text);
}

/* A name written into folded stacks must read back as itself: one ending
 * in FOLDED_KERNEL_SUFFIX that is not the kernel's would read as a kernel
 * frame (written "_(k)"), and a space before the digits that end a name
 * would make them a count (written '_').  name is escaped already. */
static void folded_unambiguous(char *name)
{
	size_t n = strlen(name), k = sizeof FOLDED_KERNEL_SUFFIX - 1, d = n;

	if (n > k && memcmp(name + n - k, FOLDED_KERNEL_SUFFIX, k) == 0) {
		name[n - k + 1] = '(';
		name[n - 1] = ')';
	}
	while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
		d--;
	if (d > 0 && d < n && name[d - 1] == ' ')
		name[d - 1] = '_';
}

const char *report_labels_frame(struct report_labels *l, uint32_t f, size_t *name_len, const char **where,
				size_t *where_len)
{
	if (l->off[f] == PV_NONE) {
		char raw[REPORT_NAME_MAX], name[REPORT_NAME_MAX], w[REPORT_NAME_MAX];
		size_t nl, wl;

		bool kernel = calltree_frame_is_kernel(l->t, f);
		size_t at = kernel && l->style == REPORT_LABEL_MARK ? CT_KERNEL_MARK_LEN : 0;

		/* the mark and the suffix are ours: they are not escaped */
		memcpy(name, CT_KERNEL_MARK, at);
		pv_escape(name + at, sizeof name - at - sizeof FOLDED_KERNEL_SUFFIX,
			  calltree_frame_name(l->t, f, raw, sizeof raw));
		if (!kernel && l->style == REPORT_LABEL_FOLDED)
			folded_unambiguous(name);
		if (kernel && l->style == REPORT_LABEL_FOLDED)
			strcat(name, FOLDED_KERNEL_SUFFIX);
		pv_escape(w, sizeof w, calltree_frame_where(l->t, f, raw, sizeof raw));
		nl = strlen(name);
		wl = strlen(w);
		if (l->n + nl + wl + 2 >= UINT32_MAX || pv_grow(&l->text, &l->cap, l->n + nl + wl + 2, 1) < 0)
			return NULL;
		l->off[f] = (uint32_t)l->n;
		memcpy(l->text + l->n, name, nl + 1);
		memcpy(l->text + l->n + nl + 1, w, wl + 1);
		l->n += nl + wl + 2;
		l->name_len[f] = (uint16_t)nl;
		l->where_len[f] = (uint16_t)wl;
	}
	*name_len = l->name_len[f];
	*where_len = l->where_len[f];
	*where = l->text + l->off[f] + *name_len + 1;
	return l->text + l->off[f];
}
