/* report-labels.h - the escaped names and locations of a call tree's
 * frames, for the text reports (tree, flat, folded)
 *
 * Names come from the input: every one is written through pv_escape.  A
 * report escapes each frame's name and location once, into a cache, and
 * copies them from there into every line that shows the frame.  The
 * labels borrow the tree, which must outlive them; the strings returned
 * are valid until report_labels_free.
 */
#ifndef PROFVIEW_REPORT_LABELS_H
#define PROFVIEW_REPORT_LABELS_H

#include "calltree.h"

#include <stddef.h>
#include <stdint.h>

/* The longest name or location written, with its end. */
#define REPORT_NAME_MAX 4096

enum report_label_style {
	REPORT_LABEL_MARK,     /* a kernel frame's name after CT_KERNEL_MARK */
	REPORT_LABEL_FOLDED,   /* after it FOLDED_KERNEL_SUFFIX (FlameGraph's); a
				* name that would read back as another made
				* unambiguous */
};

struct report_labels {
	const struct calltree *t;
	enum report_label_style style;
	uint32_t *off;         /* per frame: its "name\0where\0" in text, or PV_NONE */
	uint16_t *name_len, *where_len;
	char *text; size_t n, cap;
};

/* Labels of the frames of t, none made yet.  0, or -1 after reporting
 * running out of memory. */
int report_labels_init(struct report_labels *l, const struct calltree *t, enum report_label_style style);
void report_labels_free(struct report_labels *l);
/* The escaped name of frame f (its length in *name_len) and its location
 * (*where, *where_len), made on first use; NULL when out of memory. */
const char *report_labels_frame(struct report_labels *l, uint32_t f, size_t *name_len, const char **where,
				size_t *where_len);

#endif
