/* tree-widget.c - a scrolling tree browser over opaque items */
#include "tree-widget.h"

#include <ncurses.h>
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

static int push_row(struct tree_widget *w, uint32_t item, uint32_t depth)
{
	if (w->nrows == w->cap_rows) {
		size_t cap = w->cap_rows ? 2 * w->cap_rows : 256;
		struct tw_row *r = realloc(w->rows, cap * sizeof *r);
		if (!r)
			return -1;
		w->rows = r;
		w->cap_rows = cap;
	}
	w->rows[w->nrows++] = (struct tw_row){ item, depth };
	return 0;
}

/* Walk the visible items in pre-order without recursion: the rows pushed
 * so far are the stack. */
static int add_visible(struct tree_widget *w, uint32_t item, uint32_t depth)
{
	size_t base = w->nrows;

	if (push_row(w, item, depth) < 0)
		return -1;
	/* Explicit depth-first walk. */
	uint32_t cur = item;
	uint32_t d = depth;
	for (;;) {
		uint32_t next = TW_NONE;
		if (cur < w->nitems && w->expanded[cur])
			next = w->cb.first_child(w->ctx, cur);
		if (next != TW_NONE) {
			d++;
		} else {
			/* Up until a sibling is found, not past item. */
			while (cur != item) {
				next = w->cb.next_sibling(w->ctx, cur);
				if (next != TW_NONE)
					break;
				/* The parent is the last row at depth d-1. */
				size_t r = w->nrows;
				while (r > base && w->rows[r - 1].depth >= d)
					r--;
				cur = w->rows[r - 1].item;
				d--;
			}
			if (cur == item)
				return 0;
		}
		if (push_row(w, next, d) < 0)
			return -1;
		cur = next;
	}
}

static int rebuild(struct tree_widget *w)
{
	uint32_t keep = tree_widget_current(w);
	size_t old = w->cursor;

	w->nrows = 0;
	for (size_t i = 0; i < w->nroots; i++)
		if (add_visible(w, w->roots[i], 0) < 0)
			return -1;
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
	if (subtree)
		set_subtree(w, item, on);
	else
		w->expanded[item] = on;
	return rebuild(w);
}

int tree_widget_expand_all(struct tree_widget *w, bool on)
{
	memset(w->expanded, on, w->nitems);
	return rebuild(w);
}

int tree_widget_reveal(struct tree_widget *w, const uint32_t *path, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i + 1 < n; i++)
		if (path[i] < w->nitems)
			w->expanded[path[i]] = 1;
	if (rebuild(w) < 0)
		return -1;
	for (size_t r = 0; r < w->nrows; r++)
		if (w->rows[r].item == path[n - 1]) {
			w->cursor = r;
			break;
		}
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

void tree_widget_draw(struct tree_widget *w, int y0, int height, int width)
{
	if (height <= 0)
		return;
	if (w->cursor < w->top)
		w->top = w->cursor;
	if (w->cursor >= w->top + (size_t)height)
		w->top = w->cursor - (size_t)height + 1;
	if (w->top + (size_t)height > w->nrows)
		w->top = w->nrows > (size_t)height ? w->nrows - (size_t)height : 0;
	for (int y = 0; y < height; y++) {
		size_t r = w->top + (size_t)y;
		move(y0 + y, 0);
		clrtoeol();
		if (r >= w->nrows)
			continue;
		uint32_t it = w->rows[r].item;
		bool kids = w->cb.first_child(w->ctx, it) != TW_NONE;
		w->cb.draw(w->ctx, it, (int)w->rows[r].depth, tree_widget_is_expanded(w, it), kids,
			   r == w->cursor, y0 + y, width);
	}
}
