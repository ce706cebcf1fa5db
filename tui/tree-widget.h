/* tree-widget.h - a scrolling tree browser over opaque items (the screen
 * draws its rows: screen.c)
 *
 * The caller owns the data: items are 32-bit ids the widget hands back to
 * the caller's callbacks (children, drawing, matching).  The widget keeps
 * only view state: which items are expanded, the rows now visible, the
 * cursor and the scroll offset.  Moving the cursor redraws; expanding or
 * collapsing an item replaces the rows of its subtree alone (the rows
 * after it only move), so that a key costs what it shows or hides, never
 * the whole tree.
 */
#ifndef PROFVIEW_TREE_WIDGET_H
#define PROFVIEW_TREE_WIDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TW_NONE UINT32_MAX

struct tw_callbacks {
	/* First child of item, and the next sibling; TW_NONE ends. */
	uint32_t (*first_child)(void *ctx, uint32_t item);
	uint32_t (*next_sibling)(void *ctx, uint32_t item);
	/* Draw one row at screen line y, width columns wide. */
	void (*draw)(void *ctx, uint32_t item, int depth, bool expanded, bool has_children,
		     bool selected, int y, int width);
};

struct tw_row {
	uint32_t item;
	uint32_t depth;
};

struct tree_widget {
	struct tw_callbacks cb;
	void *ctx;
	uint8_t *expanded;     /* one byte per item id */
	size_t nitems;
	uint32_t *roots; size_t nroots;
	struct tw_row *rows; size_t nrows, cap_rows;
	size_t cursor, top;
	/* private */
	struct tw_row *scratch; size_t nscratch, cap_scratch;
	uint32_t *path; size_t cap_path;
};

/* A widget for items 0..nitems-1; NULL when out of memory. */
struct tree_widget *tree_widget_new(const struct tw_callbacks *cb, void *ctx, size_t nitems);
void tree_widget_free(struct tree_widget *w);

/* Change the item space (after the caller rebuilt its data): everything is
 * collapsed and there are no roots.  0, or -1 when out of memory. */
int tree_widget_reset(struct tree_widget *w, size_t nitems);
/* The top-level items (copied).  0, or -1 when out of memory. */
int tree_widget_set_roots(struct tree_widget *w, const uint32_t *roots, size_t n);

bool tree_widget_is_expanded(const struct tree_widget *w, uint32_t item);
/* Set one item's flag, or its whole subtree's (every descendant), then
 * replace the rows below the item's (when it is shown), keeping the cursor
 * on the same item when it is still visible, else on the item's row: the
 * cost of the rows shown or hidden, never of the whole tree. */
int tree_widget_expand(struct tree_widget *w, uint32_t item, bool on, bool subtree);
/* Every item at once (the rows built again). */
int tree_widget_expand_all(struct tree_widget *w, bool on);
/* Set one item's flag without rebuilding the rows (many at once: then
 * tree_widget_update). */
void tree_widget_mark(struct tree_widget *w, uint32_t item, bool on);
/* Rebuild every row after tree_widget_mark.  0, or -1 when out of memory. */
int tree_widget_update(struct tree_widget *w);
/* Make item visible (expand its ancestors: path lists them, outermost
 * first, ending with item) and put the cursor on it; only the rows below
 * the outermost ancestor that was collapsed change. */
int tree_widget_reveal(struct tree_widget *w, const uint32_t *path, size_t n);

/* The item under the cursor, or TW_NONE when there are no rows. */
uint32_t tree_widget_current(const struct tree_widget *w);
/* Its depth among the rows. */
uint32_t tree_widget_current_depth(const struct tree_widget *w);
/* Move the cursor by delta rows, clamped to the first and last row (a page
 * is the caller's delta). */
void tree_widget_move(struct tree_widget *w, long delta);
/* Move the cursor to the parent row of the current one. */
void tree_widget_to_parent(struct tree_widget *w);
/* Scroll so that the cursor is within the height rows shown from w->top
 * (the screen draws them: screen.c). */
void tree_widget_scroll(struct tree_widget *w, size_t height);

#endif
