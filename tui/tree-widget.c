/* tree-widget.c - a scrolling tree browser over opaque items */
#include "tree-widget.h"

#include <stdlib.h>
#include <string.h>

struct tree_widget *tree_widget_new(const struct tw_callbacks *cb, void *ctx, size_t nitems)
{
	struct tree_widget *w = calloc(1, sizeof *w);

	if (!w)
		return NULL;
	w->cb = *cb;
	w->ctx = ctx;
	if (tree_widget_reset(w, nitems) < 0) {
		tree_widget_free(w);
		return NULL;
	}
	return w;
}

void tree_widget_free(struct tree_widget *w)
{
	if (!w)
		return;
	free(w->expanded);
	free(w->roots);
	free(w->rows);
	free(w->scratch);
	free(w->path);
	free(w);
}

int tree_widget_reset(struct tree_widget *w, size_t nitems)
{
	uint8_t *e = calloc(nitems + 1, 1);

	if (!e)
		return -1;
	free(w->expanded);
	w->expanded = e;
	w->nitems = nitems;
	w->nroots = w->nrows = 0;
	w->cursor = w->top = 0;
	return 0;
}

/* Room for n more rows in *rows (of *cap). */
static int reserve(struct tw_row **rows, size_t *cap, size_t used, size_t n)
{
	if (used + n <= *cap)
		return 0;
	size_t c = *cap ? *cap : 256;
	while (c < used + n)
		c *= 2;
	struct tw_row *r = realloc(*rows, c * sizeof *r);
	if (!r)
		return -1;
	*rows = r;
	*cap = c;
	return 0;
}

static bool expanded(const struct tree_widget *w, uint32_t item)
{
	return item < w->nitems && w->expanded[item];
}

/* Append to w->scratch the visible rows below item (at depth), in
 * pre-order: a walk down the expanded items with the path from item kept
 * in w->path, so that going back up costs nothing.  all: expand every
 * item below on the way (the whole subtree in one walk). */
static int collect_below(struct tree_widget *w, uint32_t item, uint32_t depth, bool all)
{
	size_t level = 0;
	uint32_t c;

	if (!expanded(w, item))
		return 0;
	c = w->cb.first_child(w->ctx, item);
	for (;;) {
		if (c == TW_NONE) {
			if (level == 0)
				return 0;
			c = w->cb.next_sibling(w->ctx, w->path[--level]);
			continue;
		}
		if (reserve(&w->scratch, &w->cap_scratch, w->nscratch, 1) < 0)
			return -1;
		w->scratch[w->nscratch++] = (struct tw_row){ c, depth + 1 + (uint32_t)level };
		if (all && c < w->nitems)
			w->expanded[c] = 1;
		uint32_t fc = expanded(w, c) ? w->cb.first_child(w->ctx, c) : TW_NONE;
		if (fc == TW_NONE) {
			c = w->cb.next_sibling(w->ctx, c);
			continue;
		}
		if (level == w->cap_path) {
			size_t cap = w->cap_path ? 2 * w->cap_path : 64;
			uint32_t *p = realloc(w->path, cap * sizeof *p);
			if (!p)
				return -1;
			w->path = p;
			w->cap_path = cap;
		}
		w->path[level++] = c;
		c = fc;
	}
}

/* Every row again, from the roots; the cursor stays on its item when it
 * is still shown. */
static int rebuild(struct tree_widget *w)
{
	uint32_t keep = tree_widget_current(w);
	size_t old = w->cursor;

	w->nscratch = 0;
	for (size_t i = 0; i < w->nroots; i++) {
		if (reserve(&w->scratch, &w->cap_scratch, w->nscratch, 1) < 0)
			return -1;
		w->scratch[w->nscratch++] = (struct tw_row){ w->roots[i], 0 };
		if (collect_below(w, w->roots[i], 0, false) < 0)
			return -1;
	}
	/* the new rows become the rows, the old ones the scratch */
	struct tw_row *r = w->rows;
	size_t cap = w->cap_rows;
	w->rows = w->scratch;
	w->cap_rows = w->cap_scratch;
	w->nrows = w->nscratch;
	w->scratch = r;
	w->cap_scratch = cap;
	w->nscratch = 0;
	w->cursor = 0;
	if (keep != TW_NONE) {
		/* Usually the same row or close: look around it first. */
		size_t lo = old, hi = old;
		for (;;) {
			if (lo < w->nrows && w->rows[lo].item == keep) {
				w->cursor = lo;
				break;
			}
			if (hi < w->nrows && w->rows[hi].item == keep) {
				w->cursor = hi;
				break;
			}
			if (lo == 0 && hi >= w->nrows)
				break;
			if (lo > 0)
				lo--;
			hi++;
		}
	}
	if (w->cursor >= w->nrows)
		w->cursor = w->nrows ? w->nrows - 1 : 0;
	return 0;
}

/* The rows below row r again, after its item or some below it were
 * expanded or collapsed: the rows of its subtree are replaced, the others
 * only move.  The cursor stays on its item, or goes to row r when its
 * item is no longer shown. */
static int resplice(struct tree_widget *w, size_t r, bool all)
{
	uint32_t depth = w->rows[r].depth, keep = tree_widget_current(w);
	size_t end = r + 1, old, new;

	while (end < w->nrows && w->rows[end].depth > depth)
		end++;
	old = end - (r + 1);
	w->nscratch = 0;
	if (collect_below(w, w->rows[r].item, depth, all) < 0)
		return -1;
	new = w->nscratch;
	if (new > old && reserve(&w->rows, &w->cap_rows, w->nrows, new - old) < 0)
		return -1;
	memmove(w->rows + r + 1 + new, w->rows + end, (w->nrows - end) * sizeof *w->rows);
	memcpy(w->rows + r + 1, w->scratch, new * sizeof *w->rows);
	w->nrows = w->nrows - old + new;
	if (w->cursor >= end) {
		w->cursor = w->cursor - old + new;
	} else if (w->cursor > r) {
		w->cursor = r;
		for (size_t i = 0; i < new; i++)
			if (w->scratch[i].item == keep) {
				w->cursor = r + 1 + i;
				break;
			}
	}
	return 0;
}

/* The row of item: the cursor's if it is there, else looked for from row
 * from on; the number of rows when it is not shown. */
static size_t row_of(const struct tree_widget *w, uint32_t item, size_t from)
{
	if (w->cursor < w->nrows && w->cursor >= from && w->rows[w->cursor].item == item)
		return w->cursor;
	for (size_t r = from; r < w->nrows; r++)
		if (w->rows[r].item == item)
			return r;
	return w->nrows;
}

void tree_widget_mark(struct tree_widget *w, uint32_t item, bool on)
{
	if (item < w->nitems)
		w->expanded[item] = on;
}

int tree_widget_update(struct tree_widget *w)
{
	return rebuild(w);
}

int tree_widget_set_roots(struct tree_widget *w, const uint32_t *roots, size_t n)
{
	uint32_t *r = malloc((n + 1) * sizeof *r);

	if (!r)
		return -1;
	memcpy(r, roots, n * sizeof *r);
	free(w->roots);
	w->roots = r;
	w->nroots = n;
	w->cursor = w->top = 0;
	w->nrows = 0;
	return rebuild(w);
}

bool tree_widget_is_expanded(const struct tree_widget *w, uint32_t item)
{
	return item < w->nitems && w->expanded[item];
}

static void set_subtree(struct tree_widget *w, uint32_t item, bool on)
{
	/* Iterative pre-order walk with an explicit stack of siblings. */
	size_t cap = 64, n = 0;
	uint32_t *stack = malloc(cap * sizeof *stack);

	if (!stack)
		return;
	stack[n++] = item;
	while (n) {
		uint32_t x = stack[--n];
		if (x >= w->nitems)
			continue;
		w->expanded[x] = on;
		for (uint32_t c = w->cb.first_child(w->ctx, x); c != TW_NONE; c = w->cb.next_sibling(w->ctx, c)) {
			if (n == cap) {
				uint32_t *s = realloc(stack, 2 * cap * sizeof *s);
				if (!s)
					break;
				stack = s;
				cap *= 2;
			}
			stack[n++] = c;
		}
	}
	free(stack);
}

int tree_widget_expand(struct tree_widget *w, uint32_t item, bool on, bool subtree)
{
	if (item >= w->nitems)
		return 0;
	size_t r = row_of(w, item, 0);

	w->expanded[item] = on;
	if (r == w->nrows) {
		/* not shown: the flags alone */
		if (subtree)
			set_subtree(w, item, on);
		return 0;
	}
	if (subtree && !on)
		set_subtree(w, item, on);
	/* expanding a subtree: its rows are walked and its items
	 * expanded in one go */
	return resplice(w, r, subtree && on);
}

int tree_widget_expand_all(struct tree_widget *w, bool on)
{
	memset(w->expanded, on, w->nitems);
	return rebuild(w);
}

int tree_widget_reveal(struct tree_widget *w, const uint32_t *path, size_t n)
{
	size_t first = n, from = 0, r;

	if (n == 0)
		return 0;
	/* Only the rows below the outermost collapsed item change. */
	for (size_t i = 0; i + 1 < n; i++)
		if (path[i] < w->nitems && !w->expanded[path[i]]) {
			w->expanded[path[i]] = 1;
			if (first == n)
				first = i;
		}
	if (first < n && (from = row_of(w, path[first], 0)) < w->nrows && resplice(w, from, false) < 0)
		return -1;
	if (from >= w->nrows)
		from = 0;
	r = row_of(w, path[n - 1], from);
	if (r < w->nrows)
		w->cursor = r;
	return 0;
}

uint32_t tree_widget_current(const struct tree_widget *w)
{
	return w->cursor < w->nrows ? w->rows[w->cursor].item : TW_NONE;
}

uint32_t tree_widget_current_depth(const struct tree_widget *w)
{
	return w->cursor < w->nrows ? w->rows[w->cursor].depth : 0;
}

void tree_widget_move(struct tree_widget *w, long delta)
{
	long c = (long)w->cursor + delta;

	if (c >= (long)w->nrows)
		c = (long)w->nrows - 1;
	if (c < 0)
		c = 0;
	w->cursor = (size_t)c;
}

void tree_widget_to_parent(struct tree_widget *w)
{
	uint32_t d = tree_widget_current_depth(w);

	if (d == 0)
		return;
	while (w->cursor > 0 && w->rows[w->cursor].depth >= d)
		w->cursor--;
}

void tree_widget_scroll(struct tree_widget *w, size_t height)
{
	if (height == 0)
		return;
	if (w->cursor < w->top)
		w->top = w->cursor;
	if (w->cursor >= w->top + height)
		w->top = w->cursor - height + 1;
	if (w->top + height > w->nrows)
		w->top = w->nrows > height ? w->nrows - height : 0;
}
