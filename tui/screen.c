/* screen.c - the call tree browsed on a terminal: the screen and the keys
 * over the state in browse.c */
#include "screen.h"
#include "browse.h"
#include "tree-widget.h"

#include "error.h"
#include "present.h"
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <math.h>
#include <ncurses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { HEADER_LINES = 4 };
/* The time strip: a thread's label, then a column of time a character;
 * at most so many rows of threads, and a third of the lines under the
 * header at most for the whole strip. */
enum { STRIP_LABEL = 15, STRIP_MAX_ROWS = 8 };
/* The colour pairs of a comparison's verdicts. */
enum { PAIR_WORSE = 1, PAIR_BETTER };

/* What the screen keeps beside the browsing state. */
struct screen {
	struct browse *b;
	const char *ellipsis;
	bool color;
	bool help;
	bool picking;          /* the thread picker is open */
	bool strip;            /* the time strip is shown */
	bool utf8;             /* the locale's characters are UTF-8 */
	int top;               /* the first line of the rows (under the header and the strip) */
	FILE *timing;          /* PROFVIEW_TIMING's file, or NULL */
	struct timespec t_key; /* when the key being handled was read */
};

/* ---- messages ---------------------------------------------------------- */

/* The session whose status line the messages go to while the screen is
 * its (one at a time). */
static struct browse *sink_browse;

static void status_sink(enum pv_level level, const char *msg)
{
	struct browse *b = sink_browse;

	if (!b || level == PV_LEVEL_NOTE)
		return;
	snprintf(b->status, sizeof b->status, "%s%s", level == PV_LEVEL_ERROR ? "" : "warning: ", msg);
	if (level == PV_LEVEL_ERROR)
		snprintf(b->last_error, sizeof b->last_error, "%s", msg);
}

/* ---- drawing ----------------------------------------------------------- */

/* Print s in at most width columns, cut with an ellipsis. */
static void put_cut(const struct screen *sc, const char *s, int width)
{
	int len = (int)strlen(s);

	if (width <= 0)
		return;
	if (len <= width) {
		addstr(s);
		return;
	}
	int el = (int)strlen(sc->ellipsis) > 1 ? 1 : 3;
	if (width <= el) {
		addnstr(s, width);
		return;
	}
	addnstr(s, width - el);
	addstr(sc->ellipsis);
}

/* ---- a comparison's columns -------------------------------------------- */

/* base, new, delta, delta% of a cell, in the columns of diff_columns(). */
static void diff_line(const struct calltree *t, const struct pv_diff_cell *c, char *line, size_t n)
{
	char base[PV_FIXED_LEN], new_[PV_FIXED_LEN], delta[PV_FIXED_LEN], pct[32];

	/* as the comparison's tables write them (present.h) */
	pv_weight_text(t, base, c->base, false);
	pv_weight_text(t, new_, c->new_, false);
	pv_weight_text(t, delta, c->delta, true);
	pv_diff_pct_text(pct, sizeof pct, c->pct);
	snprintf(line, n, "%9s %9s %9s %7s ", base, new_, delta, pct);
}

/* The column names of a comparison, ending where its rows' names start. */
static const char *diff_columns(const struct calltree *t)
{
	switch (calltree_value_unit(t)) {
	case CT_UNIT_NS: return "  base ms    new ms  delta ms  delta% verdict";
	case CT_UNIT_BYTES: return " base KiB   new KiB delta KiB  delta% verdict";
	default: return "     base       new     delta  delta% verdict";
	}
}

/* The verdict, coloured when colours are allowed, in a 7 column field
 * from the cursor; attr the row's attributes. */
static void put_verdict(const struct screen *sc, enum pv_verdict v, attr_t attr, int room)
{
	char word[16];

	if (room <= 0)
		return;
	snprintf(word, sizeof word, "%-7s", pv_verdict_name(v));
	if (sc->color && v != PV_VERDICT_NONE)
		attrset(attr | COLOR_PAIR(v == PV_VERDICT_WORSE ? PAIR_WORSE : PAIR_BETTER));
	addnstr(word, room);
	attrset(attr);
}

static void cb_draw(void *ctx, uint32_t item, int depth, bool expanded, bool kids, bool selected, int y,
		    int width)
{
	struct browse *b = ctx;
	const struct screen *sc = b->ui;
	const struct ct_node *nd = &b->t->nodes[item];
	int64_t total = ct_weight(b->t, &b->t->nodes[0]);
	int64_t selfw = ct_pick(b->t, nd->self_count, nd->self_value);
	char line[128], nbuf[512], wbuf[512], text[1200];
	attr_t attr = 0;

	if (browse_below_floor(b, item))
		attr |= A_DIM;
	if (selected)
		attr |= A_REVERSE;
	attrset(attr);
	if (selected) {
		move(y, 0);
		for (int i = 0; i < width; i++)
			addch(' ');
	}
	int x;
	if (b->cells) {
		diff_line(b->t, &b->cells[item], line, sizeof line);
		mvaddnstr(y, 0, line, width);
		x = (int)strlen(line);
		put_verdict(sc, b->cells[item].verdict, attr, width - x);
		x += 8;
	} else {
		snprintf(line, sizeof line, "%6.1f%% %6.1f%% %8" PRId64 " ±%-5.0f ", pv_percent(ct_weight(b->t, nd), total),
			 pv_percent(selfw, total), nd->count, ct_node_noise(b->t, nd));
		mvaddnstr(y, 0, line, width);
		x = (int)strlen(line) - 1; /* ± is two bytes, one column */
	}
	const char *name = calltree_node_name(b->t, item, nbuf, sizeof nbuf);
	const char *where = nd->kind == CT_FRAME ? calltree_frame_where(b->t, nd->frame, wbuf, sizeof wbuf) : "";
	int indent = 2 * depth;
	if (indent > width / 2)
		indent = width / 2;
	snprintf(text, sizeof text, "%*s%s %s%s%s%s", indent, "", kids ? (expanded ? "-" : "+") : " ",
		 calltree_node_is_kernel(b->t, item) ? CT_KERNEL_MARK : "", name, *where ? "  " : "", where);
	move(y, x);
	put_cut(sc, text, width - x);
	attrset(A_NORMAL);
}

/* ---- flat lists: the flat view and the thread picker ---------------- */

/* Before a flat row's name: CT_KERNEL_MARK for a kernel frame, as many
 * blanks for the others when there are kernel frames (the names in one
 * column). */
static const char *kernel_mark(const struct calltree *t, uint32_t frame)
{
	if (calltree_frame_is_kernel(t, frame))
		return CT_KERNEL_MARK;
	return t->kernel_frames ? "    " : "";
}

/* Scroll *top so that row cursor is among the height rows shown. */
static void list_scroll(size_t cursor, size_t *top, int height)
{
	if (cursor < *top)
		*top = cursor;
	if (height > 0 && cursor >= *top + (size_t)height)
		*top = cursor - (size_t)height + 1;
}

/* Draw one row of a list at line y, across the width when selected. */
static void list_row(const struct screen *sc, int y, const char *line, int width, bool selected)
{
	if (selected) {
		attrset(A_REVERSE);
		for (int i = 0; i < width; i++)
			addch(' ');
		move(y, 0);
	}
	put_cut(sc, line, width + 1);
	attrset(A_NORMAL);
}

/* The cursor of a list of n rows after a movement key (unchanged for any
 * other key). */
static size_t list_move(size_t cursor, size_t n, int ch, int page)
{
	long d = 0, c;

	switch (ch) {
	case KEY_UP: case 'k': d = -1; break;
	case KEY_DOWN: case 'j': d = 1; break;
	case KEY_PPAGE: d = -page; break;
	case KEY_NPAGE: d = page; break;
	case KEY_HOME: d = -(long)n; break;
	case KEY_END: d = (long)n; break;
	}
	c = (long)cursor + d;
	if (c >= (long)n)
		c = (long)n - 1;
	return c < 0 ? 0 : (size_t)c;
}

static void draw_flat(struct screen *sc, int y0, int height, int width)
{
	struct browse *b = sc->b;
	int64_t total = ct_weight(b->t, &b->t->nodes[0]);

	list_scroll(b->fcursor, &b->ftop, height);
	for (int y = 0; y < height; y++) {
		size_t r = b->ftop + (size_t)y;
		move(y0 + y, 0);
		clrtoeol();
		if (r >= b->nflat)
			continue;
		const struct ct_flat_row *row = &b->rows[r];
		char line[1400], nbuf[512], wbuf[512];
		if (b->fcells) {
			attr_t attr = r == b->fcursor ? A_REVERSE : 0;
			int x;
			move(y0 + y, 0);
			attrset(attr);
			if (attr)
				for (int i = 0; i < width; i++)
					addch(' ');
			diff_line(b->t, &b->fcells[r], line, sizeof line);
			mvaddnstr(y0 + y, 0, line, width);
			x = (int)strlen(line);
			put_verdict(sc, b->fcells[r].verdict, attr, width - x);
			x += 8;
			snprintf(line, sizeof line, "%s%s  %s", kernel_mark(b->t, row->frame),
				 calltree_frame_name(b->t, row->frame, nbuf, sizeof nbuf),
				 calltree_frame_where(b->t, row->frame, wbuf, sizeof wbuf));
			if (x < width) {
				move(y0 + y, x);
				put_cut(sc, line, width - x);
			}
			attrset(A_NORMAL);
			continue;
		}
		snprintf(line, sizeof line, "%6.1f%% %6.1f%% %8" PRId64 " ±%-5.0f %s%s  %s",
			 pv_percent(ct_self_weight(b->t, row), total), pv_percent(ct_cum_weight(b->t, row), total),
			 row->self_count, ct_noise_samples(b->t, row->self_count, ct_self_weight(b->t, row), row->self_sq),
			 kernel_mark(b->t, row->frame),
			 calltree_frame_name(b->t, row->frame, nbuf, sizeof nbuf),
			 calltree_frame_where(b->t, row->frame, wbuf, sizeof wbuf));
		list_row(sc, y0 + y, line, width, r == b->fcursor);
	}
}

static void draw_picker(struct screen *sc, int y0, int height, int width)
{
	struct browse *b = sc->b;
	int64_t total = b->nthreads ? b->threads[0].value : 0;

	list_scroll(b->tcursor, &b->ttop, height);
	for (int y = 0; y < height; y++) {
		size_t r = b->ttop + (size_t)y;
		char line[1200], cpu[32] = "";
		move(y0 + y, 0);
		clrtoeol();
		if (r >= b->nthreads)
			continue;
		const struct browse_thread *tr = &b->threads[r];
		if (tr->cpu_ns >= 0)
			pv_format_duration(cpu, sizeof cpu, tr->cpu_ns);
		if (tr->tid == BROWSE_ALL_THREADS)
			snprintf(line, sizeof line, "%6.1f%% %8" PRId64 "  %10s  %-8s  [all threads]", 100.0, tr->count,
				 cpu, "");
		else if (tr->tid == BROWSE_CMD_THREADS)
			snprintf(line, sizeof line, "%6.1f%% %8" PRId64 "  %10s  %-8s  [the threads of --tid]",
				 pv_percent(tr->value, total), tr->count, cpu, "");
		else {
			char pr[256];
			pv_thread_process_name(b->orig, tr->thread, pr, sizeof pr);
			snprintf(line, sizeof line, "%6.1f%% %8" PRId64 "  %10s  %-8" PRIu32 "  %s%s%s",
				 pv_percent(tr->value, total), tr->count, cpu, tr->tid, pv_str(b->orig, tr->name),
				 pr[0] ? " in " : "", pr);
		}
		list_row(sc, y0 + y, line, width, r == b->tcursor);
	}
}

/* ---- the time strip ---------------------------------------------------- */

/* A cell's glyph by its samples: a bar as high as its samples on CPU are
 * of the fullest cell's, or the off-CPU glyph when most of them are off
 * CPU. */
static const char *const bars_utf8[] = { " ", "\u2581", "\u2582", "\u2583", "\u2584",
					 "\u2585", "\u2586", "\u2587", "\u2588" };
static const char *const bars_ascii[] = { " ", ".", ":", "-", "=", "+", "*", "#", "%", "@" };

static const char *cell_glyph(const struct screen *sc, uint32_t on, uint32_t off, uint32_t max)
{
	const char *const *bars = sc->utf8 ? bars_utf8 : bars_ascii;
	uint64_t levels = sc->utf8 ? 8 : 9, k;

	if (on == 0 && off == 0)
		return " ";
	if (off > on)
		return sc->utf8 ? "\u2591" : "_";
	k = (levels * on + max - 1) / (max ? max : 1);
	return bars[k < 1 ? 1 : k > levels ? levels : k];
}

/* The columns and rows of threads the strip has room for. */
static void strip_room(size_t *ncols, size_t *maxrows)
{
	int rows = (LINES - HEADER_LINES - 1) / 3 - 1;

	*ncols = COLS > STRIP_LABEL + 1 ? (size_t)(COLS - STRIP_LABEL) : 1;
	*maxrows = rows < 1 ? 1 : rows > STRIP_MAX_ROWS ? STRIP_MAX_ROWS : (size_t)rows;
}

/* Open the strip (computed for the screen) and say which keys it has; in
 * a profile without sample times it stays closed, and the status line
 * says why. */
static int strip_open(struct screen *sc)
{
	struct browse *b = sc->b;
	size_t ncols, maxrows;

	strip_room(&ncols, &maxrows);
	if (browse_time_strip(b, ncols, maxrows) < 0)
		return -1;
	sc->strip = b->strip.ncols > 0;
	if (sc->strip)
		snprintf(b->status, sizeof b->status,
			 "time strip: , . move the time cursor, [ ] start and end the span there, \\ the whole run%s%s",
			 b->strip.offcpu ? "; off CPU: " : "", b->strip.offcpu ? cell_glyph(sc, 0, 1, 1) : "");
	return 0;
}

/* Draw the strip from line y0: its rows of threads, then a line with the
 * span in force (=) and the time cursor (^).  The lines it took. */
static int draw_strip(struct screen *sc, int y0)
{
	struct browse *b = sc->b;
	const struct browse_strip *st = &b->strip;
	int64_t ends[16][2], c0, c1;
	size_t nspans, cursor, ncols, maxrows;
	char label[STRIP_LABEL + 64];
	uint8_t *in;
	int y = y0;

	strip_room(&ncols, &maxrows);
	if (browse_time_strip(b, ncols, maxrows) < 0 || !st->ncols || !(in = calloc(st->ncols, 1))) {
		sc->strip = false;
		return 0;
	}
	nspans = browse_time_spans(b, ends, sizeof ends / sizeof *ends);
	if (nspans > sizeof ends / sizeof *ends)
		nspans = sizeof ends / sizeof *ends;
	for (size_t c = 0; c < st->ncols; c++) {
		browse_time_column(b, c, &c0, &c1);
		for (size_t k = 0; k < nspans && !in[c]; k++)
			in[c] = c0 < ends[k][1] && c1 > ends[k][0];
	}
	cursor = browse_time_cursor(b);
	for (size_t r = 0; r < st->nrows && y < LINES - 1; r++, y++) {
		const struct browse_strip_row *row = &st->rows[r];
		if (row->nthreads > 1)
			snprintf(label, sizeof label, "+%zu threads", row->nthreads);
		else if (row->tid == 0 && row->name == 0)
			snprintf(label, sizeof label, "no thread");
		else {
			char pr[256], whole[512];
			pv_thread_process_name(b->orig, row->thread, pr, sizeof pr);
			snprintf(whole, sizeof whole, "%" PRIu32 " %s%s%s", row->tid, pv_str(b->orig, row->name),
				 pr[0] ? " in " : "", pr);
			/* cut to the label's width */
			snprintf(label, sizeof label, "%.*s", (int)sizeof label - 1, whole);
		}
		move(y, 0);
		clrtoeol();
		addnstr(label, STRIP_LABEL - 1);
		move(y, STRIP_LABEL);
		for (size_t c = 0; c < st->ncols && STRIP_LABEL + (int)c < COLS; c++) {
			attrset(nspans && !in[c] ? A_DIM : A_NORMAL);
			addstr(cell_glyph(sc, row->on[c], row->off[c], st->max));
		}
		attrset(A_NORMAL);
	}
	if (y < LINES - 1) {
		move(y, 0);
		clrtoeol();
		addnstr(nspans ? "time span" : "time", STRIP_LABEL - 1);
		move(y, STRIP_LABEL);
		for (size_t c = 0; c < st->ncols && STRIP_LABEL + (int)c < COLS; c++)
			addch(c == cursor ? '^' : in[c] ? '=' : ' ');
		y++;
	}
	free(in);
	return y - y0;
}

static const char *const help_lines[] = {
	"profview: keys",
	"",
	"  Up, Down, j, k      move the cursor           PgUp, PgDn, Home, End   by pages, to the ends",
	"  Enter, Space        expand or collapse the node under the cursor",
	"  Right, Left         expand; collapse (or go to the parent)",
	"  *                   expand the whole subtree  + / -   expand / collapse everything",
	"  z                   zoom: the node becomes the root",
	"  f                   focus on the function: only the samples through it",
	"  F                   callers of the function: the inverted tree rooted at it",
	"  i                   ignore the function: drop the samples through it",
	"  h                   hide the function: remove its frames from the stacks",
	"  Backspace, u        undo the last zoom, filter or time span",
	"  /, n, N             search function names (extended regular expression); next, previous match",
	"  < >                 lower, raise the noise floor (dimmed: within K times the parent's noise)",
	"  t                   toggle the flat view      s   sort it by self or cumulative",
	"  T                   pick a thread (or all)    g   functions or source lines",
	"  K                   hide the kernel frames ([k]): their time to the function that entered it",
	"  I                   inlined calls as frames, or part of the function they are in",
	"  e, E                export the view as a flame graph, as a call graph (SVG)",
	"  d                   a comparison: only the significant nodes and the paths to them, or all",
	"  v, V                a comparison: next, previous node that is worse or better",
	"  w                   the time strip: when each thread ran, and the span shown",
	"  , .  [ ]  \\         time cursor left, right; span start, end there; whole run",
	"  ?, q                this help, quit           mouse wheel   scroll",
	"",
	"press any key to go back",
};

/* The widget's rows from screen line y0, height of them, scrolled to
 * the cursor; lines past the last row cleared. */
static void draw_rows(struct tree_widget *w, int y0, int height, int width)
{
	if (height <= 0)
		return;
	tree_widget_scroll(w, (size_t)height);
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

static void draw(struct screen *sc)
{
	struct browse *b = sc->b;
	int width = COLS, height = LINES;
	char buf[2048], nbuf[512], thread[600];
	size_t off = 0;
	int64_t total;

	erase();
	if (sc->help) {
		for (size_t i = 0; i < sizeof help_lines / sizeof *help_lines && (int)i < height; i++) {
			move((int)i, 0);
			put_cut(sc, help_lines[i], width);
		}
		refresh();
		return;
	}
	total = ct_weight(b->t, &b->t->nodes[0]);
	/* Line 0: what is shown. */
	snprintf(buf, sizeof buf, "profview: %s  %" PRId64 " samples  %s view, %s%s, %s  floor K=%g  (? for help)",
		 *pv_str(b->orig, b->orig->program) ? pv_str(b->orig, b->orig->program) : "profile",
		 b->t->samples, b->flat ? "flat" : "tree",
		 b->copt.granularity == CT_LINES ? "lines" : b->copt.granularity == CT_FUNCTIONS ? "functions" :
		 b->copt.granularity == CT_FILES ? "files" : "addresses",
		 b->copt.noinlines ? " without inlines" : "",
		 browse_threads_shown(b, thread, sizeof thread), b->floor);
	attrset(A_BOLD);
	move(0, 0);
	put_cut(sc, buf, width);
	attrset(A_NORMAL);
	/* Line 1: the zoom breadcrumb. */
	off = (size_t)snprintf(buf, sizeof buf, "zoom: ");
	{
		uint32_t path[64];
		size_t k = 0;
		for (uint32_t n = b->root; n != PV_NONE && b->t->nodes[n].kind != CT_ROOT && k < 64;
		     n = b->t->nodes[n].parent)
			path[k++] = n;
		if (k == 0)
			off += (size_t)snprintf(buf + off, sizeof buf - off, "[all]");
		while (k-- > 0 && off < sizeof buf)
			off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s",
						calltree_node_name(b->t, path[k], nbuf, sizeof nbuf), k ? " > " : "");
	}
	move(1, 0);
	put_cut(sc, buf, width);
	/* Line 2: the span and filters in force. */
	if (b->res.spans[0])
		off = (size_t)snprintf(buf, sizeof buf, "in force: time: %s; %" PRId64 " samples%s%s", b->res.spans,
				       b->res.in_spans, b->res.steps[0] ? "   " : "", b->res.steps);
	else
		off = (size_t)snprintf(buf, sizeof buf, "in force: %s",
				       b->res.steps[0] ? b->res.steps : "no filters");
	if (off >= sizeof buf)
		off = sizeof buf - 1;
	if (b->have_re && off < sizeof buf)
		snprintf(buf + off, sizeof buf - off, "   search /%s/: %zu matches, %.1f%%", b->pattern, b->nmatches,
			 pv_percent(b->match_weight, total));
	move(2, 0);
	put_cut(sc, buf, width);
	/* The time strip, then the columns. */
	sc->top = HEADER_LINES;
	if (sc->strip)
		sc->top += draw_strip(sc, 3);
	attrset(A_UNDERLINE);
	move(sc->top - 1, 0);
	if (b->cells) {
		snprintf(buf, sizeof buf, "%s%s", diff_columns(b->t),
			 !b->flat ? "   function  location"
			 : b->flat_by_cum ? " function  location   (cumulative, sorted by change)"
					  : " function  location   (self, sorted by change)");
		put_cut(sc, buf, width);
	} else if (b->flat) {
		put_cut(sc, b->flat_by_cum ? "  self%    cum% samples  ±     function  location   (sorted by cum)"
					   : "  self%    cum% samples  ±     function  location   (sorted by self)", width);
	} else {
		put_cut(sc, "   cum%   self%  samples  ±     function  location", width);
	}
	attrset(A_NORMAL);

	int body = height - sc->top - 1;
	const char *full = "";
	char where[512];
	if (sc->picking) {
		attrset(A_UNDERLINE);
		move(sc->top - 1, 0);
		clrtoeol();
		put_cut(sc, "  share  samples    CPU time  tid       thread", width);
		attrset(A_NORMAL);
		draw_picker(sc, sc->top, body, width);
		move(height - 1, 0);
		clrtoeol();
		attrset(A_BOLD);
		put_cut(sc, b->status[0] ? b->status : "pick a thread: Enter shows it, Esc goes back", width);
		attrset(A_NORMAL);
		refresh();
		return;
	}
	where[0] = 0;
	if (b->flat) {
		draw_flat(sc, sc->top, body, width);
		if (b->fcursor < b->nflat) {
			full = calltree_frame_full_name(b->t, b->rows[b->fcursor].frame, nbuf, sizeof nbuf);
			calltree_frame_where(b->t, b->rows[b->fcursor].frame, where, sizeof where);
		}
	} else {
		draw_rows(b->w, sc->top, body, width);
		uint32_t cur = tree_widget_current(b->w);
		if (cur != TW_NONE) {
			full = calltree_node_name(b->t, cur, nbuf, sizeof nbuf);
			if (b->t->nodes[cur].kind == CT_FRAME) {
				full = calltree_frame_full_name(b->t, b->t->nodes[cur].frame, nbuf, sizeof nbuf);
				calltree_frame_where(b->t, b->t->nodes[cur].frame, where, sizeof where);
			}
		}
	}
	/* The status line: a message, else the whole name under the cursor
	 * (in a comparison with its q-value, after whether the filter of
	 * significant nodes is on), after the time cursor's column when the
	 * strip is shown. */
	move(height - 1, 0);
	clrtoeol();
	attrset(A_BOLD);
	if (b->status[0]) {
		put_cut(sc, b->status, width);
	} else {
		const struct pv_diff_cell *c = NULL;
		char q[64] = "";
		if (b->flat && b->fcells && b->fcursor < b->nflat)
			c = &b->fcells[b->fcursor];
		else if (!b->flat && b->cells && tree_widget_current(b->w) != TW_NONE)
			c = &b->cells[tree_widget_current(b->w)];
		if (c) {
			char t[32];
			snprintf(q, sizeof q, "   q %s", pv_diff_q_text(t, sizeof t, c->q));
		}
		char at[128] = "";
		if (sc->strip) {
			int64_t c0, c1;
			browse_time_column(b, browse_time_cursor(b), &c0, &c1);
			snprintf(at, sizeof at, "time cursor %.3f-%.3f s of %.3f s   ", (double)c0 / 1e9,
				 (double)c1 / 1e9, (double)b->strip.len / 1e9);
		}
		snprintf(buf, sizeof buf, "%s%s%s%s%s%s", at, b->significant && b->cells ? "[significant only] " : "",
			 full, *where ? "  " : "", where, q);
		put_cut(sc, buf, width);
	}
	attrset(A_NORMAL);
	refresh();
}

/* ---- timing ------------------------------------------------------------ */

/* PROFVIEW_TIMING=FILE, a debugging aid: a line per key appended to FILE,
 * the key and the milliseconds from reading it to the screen updated
 * (refresh done: the terminal has the bytes), and first the time from
 * entering the browser (the profile read) to the first screen; "build MS"
 * after it when the key built a tree (the pipeline's share). */
static double ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static void timing_open(struct screen *sc)
{
	const char *path = getenv("PROFVIEW_TIMING");

	if (!path || !*path)
		return;
	sc->timing = fopen(path, "a");
	if (!sc->timing)
		pv_warn("cannot open '%s' (PROFVIEW_TIMING): %s", path, strerror(errno));
}

static void timing_log(struct screen *sc, const char *what)
{
	if (!sc->timing)
		return;
	fprintf(sc->timing, "%s %.3f", what, ms_since(&sc->t_key));
	if (sc->b->build_ms >= 0)
		fprintf(sc->timing, " build %.3f", sc->b->build_ms);
	fputc('\n', sc->timing);
	fflush(sc->timing);
	sc->b->build_ms = -1;
}

/* ---- keys -------------------------------------------------------------- */

static void prompt(const char *what, char *buf, size_t n)
{
	move(LINES - 1, 0);
	clrtoeol();
	addstr(what);
	echo();
	curs_set(1);
	getnstr(buf, (int)n - 1);
	noecho();
	curs_set(0);
}

/* A key while the picker is open. */
static int picker_key(struct screen *sc, int ch)
{
	struct browse *b = sc->b;
	int page = LINES - sc->top - 1;

	switch (ch) {
	case 27: case 'q': case 'T':
		sc->picking = false;
		return 0;
	case '\n': case '\r': case KEY_ENTER: case ' ':
		sc->picking = false;
		return browse_pick_thread(b, b->tcursor);
	}
	b->tcursor = list_move(b->tcursor, b->nthreads, ch, page > 1 ? page : 1);
	return 0;
}

static int handle_key(struct screen *sc, int ch, bool *quit)
{
	struct browse *b = sc->b;
	int page = LINES - sc->top - 1;
	uint32_t cur = tree_widget_current(b->w);

	if (page < 1)
		page = 1;
	b->status[0] = 0;
	if (sc->help) {
		sc->help = false;
		return 0;
	}
	if (sc->picking && ch != KEY_RESIZE && ch != KEY_MOUSE)
		return picker_key(sc, ch);
	switch (ch) {
	case 'q': *quit = true; return 0;
	case '?': sc->help = true; return 0;
	case KEY_RESIZE: return 0;
	case KEY_MOUSE: {
		MEVENT ev;
		if (getmouse(&ev) == OK) {
			if (ev.bstate & BUTTON4_PRESSED)
				ch = KEY_UP;
			else if (ev.bstate & BUTTON5_PRESSED)
				ch = KEY_DOWN;
			else
				return 0;
			for (int i = 0; i < 3; i++)
				handle_key(sc, ch, quit);
		}
		return 0;
	}
	case '<': b->floor = b->floor > 0.5 ? b->floor - 0.5 : 0; return 0;
	case '>': b->floor += 0.5; return 0;
	case 'e': case 'E': return browse_export(b, ch == 'e');
	case 't': return browse_set_flat(b, !b->flat, b->flat_by_cum);
	case 's': return browse_set_flat(b, b->flat, !b->flat_by_cum);
	case 'T':
		if (browse_list_threads(b) < 0)
			return -1;
		sc->picking = true;
		return 0;
	case 'g': return browse_toggle_lines(b);
	case 'K': return browse_toggle_kernel(b);
	case 'I': return browse_toggle_inlines(b);
	case 'f': return browse_filter(b, BROWSE_FOCUS);
	case 'F': return browse_filter(b, BROWSE_CALLERS);
	case 'i': return browse_filter(b, BROWSE_IGNORE);
	case 'h': return browse_filter(b, BROWSE_HIDE);
	case KEY_BACKSPACE: case 127: case 8: case 'u': return browse_undo(b);
	case '/': {
		char re[256];
		prompt("/", re, sizeof re);
		clock_gettime(CLOCK_MONOTONIC, &sc->t_key); /* not the typing */
		return re[0] ? browse_search(b, re) : 0;
	}
	case 'n': case 'N':
		browse_next_match(b, ch == 'n');
		return 0;
	case 'w':
		if (sc->strip) {
			sc->strip = false;
			return 0;
		}
		return strip_open(sc);
	case ',': case '.': case '[': case ']':
		if (!sc->strip) {
			/* first the strip, to see where the cursor is */
			return strip_open(sc);
		}
		if (ch == ',' || ch == '.') {
			browse_time_move(b, ch == ',' ? -1 : 1);
			return 0;
		}
		return browse_time_mark(b, ch == ']');
	case '\\': return browse_time_clear(b);
	case 'd': return browse_toggle_significant(b);
	case 'v': case 'V': return browse_next_verdict(b, ch == 'v');
	}
	if (b->flat) {
		b->fcursor = list_move(b->fcursor, b->nflat, ch, page);
		return 0;
	}
	switch (ch) {
	case KEY_UP: case 'k': tree_widget_move(b->w, -1); break;
	case KEY_DOWN: case 'j': tree_widget_move(b->w, 1); break;
	case KEY_PPAGE: tree_widget_move(b->w, -page); break;
	case KEY_NPAGE: tree_widget_move(b->w, page); break;
	case KEY_HOME: tree_widget_move(b->w, -(long)b->w->nrows); break;
	case KEY_END: tree_widget_move(b->w, (long)b->w->nrows); break;
	case '\n': case '\r': case KEY_ENTER: case ' ':
		if (cur != TW_NONE)
			return tree_widget_expand(b->w, cur, !tree_widget_is_expanded(b->w, cur), false);
		break;
	case KEY_RIGHT: case 'l':
		if (cur != TW_NONE)
			return tree_widget_expand(b->w, cur, true, false);
		break;
	case KEY_LEFT:
		if (cur != TW_NONE && tree_widget_is_expanded(b->w, cur))
			return tree_widget_expand(b->w, cur, false, false);
		tree_widget_to_parent(b->w);
		break;
	case '*':
		if (cur != TW_NONE)
			return tree_widget_expand(b->w, cur, true, true);
		break;
	case '+': return tree_widget_expand_all(b->w, true);
	case '-': return tree_widget_expand_all(b->w, false);
	case 'z': return browse_zoom(b);
	}
	return 0;
}

int screen_run(const struct pv_profile *p, const struct screen_options *o)
{
	struct screen sc = { 0 };
	bool quit = false, ncurses_on = false;
	int ret = -1;

	clock_gettime(CLOCK_MONOTONIC, &sc.t_key);
	timing_open(&sc);
	sc.b = browse_new(p, &o->view, o->noisefloor, cb_draw);
	if (!sc.b)
		return -1; /* said why */
	sc.b->ui = &sc;
	if (browse_set_diff(sc.b, o->diff, o->significant) < 0)
		goto out;
	setlocale(LC_ALL, "");
	sc.utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	sc.ellipsis = sc.utf8 ? "\xe2\x80\xa6" : "...";
	sc.top = HEADER_LINES;
	if (!initscr()) {
		pv_error("cannot open the terminal: set TERM");
		goto out;
	}
	ncurses_on = true;
	/* While the screen is ours, messages go to the status line. */
	sink_browse = sc.b;
	pv_error_set_sink(status_sink);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	set_escdelay(25);
	mousemask(BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	sc.color = o->color && has_colors() && !(getenv("NO_COLOR") && getenv("NO_COLOR")[0]);
	if (sc.color) {
		short bg = -1;
		start_color();
		if (use_default_colors() != OK)
			bg = COLOR_BLACK;
		init_pair(PAIR_WORSE, COLOR_RED, bg);
		init_pair(PAIR_BETTER, COLOR_BLUE, bg);
	}
	browse_startup_warnings(sc.b);
	draw(&sc);
	timing_log(&sc, "first-screen");
	while (!quit) {
		int ch = getch();
		if (ch == ERR)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &sc.t_key);
		if (handle_key(&sc, ch, &quit) < 0) {
			endwin();
			ncurses_on = false;
			pv_error_set_sink(NULL);
			sink_browse = NULL;
			/* what went wrong, said on the status line, once more
			 * where it stays */
			pv_error("%s", sc.b->last_error[0] ? sc.b->last_error : "out of memory");
			goto out;
		}
		if (!quit) {
			draw(&sc);
			timing_log(&sc, ch == ' ' ? "Space" : keyname(ch));
		}
	}
	ret = 0;
out:
	if (ncurses_on)
		endwin();
	pv_error_set_sink(NULL);
	sink_browse = NULL;
	browse_free(sc.b);
	if (sc.timing)
		fclose(sc.timing);
	return ret;
}
