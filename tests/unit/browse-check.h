/* browse-check.h - what the browser's unit tests share: the error sink,
 * the view of every function, and finding a node's row */
#ifndef PROFVIEW_TESTS_BROWSE_CHECK_H
#define PROFVIEW_TESTS_BROWSE_CHECK_H

#include "browse.h"
#include "check.h"
#include "error.h"

#include <stdio.h>
#include <string.h>

static char last_error[512];

static inline void sink(enum pv_level level, const char *msg)
{
	if (level == PV_LEVEL_ERROR)
		snprintf(last_error, sizeof last_error, "%s", msg);
}

static const struct pv_view all_of = { .granularity = CT_FUNCTIONS };

/* The row of the node named name, shown now, or -1. */
static inline long row_of(const struct browse *b, const char *name)
{
	char buf[256];

	for (size_t r = 0; r < b->w->nrows; r++)
		if (strcmp(calltree_node_name(b->t, b->w->rows[r].item, buf, sizeof buf), name) == 0)
			return (long)r;
	return -1;
}

static inline const char *current(const struct browse *b, char *buf, size_t n)
{
	uint32_t cur = tree_widget_current(b->w);
	return cur == TW_NONE ? "" : calltree_node_name(b->t, cur, buf, n);
}

/* Put the cursor on the row of name. */
static inline void go_to(struct browse *b, const char *name)
{
	long r = row_of(b, name);
	CHECK(r >= 0);
	if (r >= 0)
		b->w->cursor = (size_t)r;
}

#endif
