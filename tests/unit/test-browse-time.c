/* test-browse-time.c - the browser's time strip: its rows and cells,
 * the cursor's columns, the span chosen on it (as --time filters), undo,
 * and a profile without sample times */
#include "browse-check.h"
#include "profbuild.h"

/* ---- time -------------------------------------------------------------- */

/* count samples of a stack in thread tid, 10 ms apart from t0 ms (5 ms
 * into each 10), with flags. */
static void add_at(struct pv_profile *p, uint32_t tid, int count, int n, const int *frames, int64_t t0,
		   uint32_t flags)
{
	uint32_t locs[16];
	for (int i = 0; i < n; i++)
		locs[i] = loc_of[frames[n - 1 - i]];
	uint32_t off = pv_add_stack(p, locs, (uint32_t)n);
	for (int i = 0; i < count; i++) {
		struct pv_sample s = { off, (uint32_t)n, pv_get_thread(p, tid, PV_NONE), flags, { 1, 10000000 },
				       (t0 + 10 * i + 5) * 1000000 };
		pv_add_sample(p, &s);
	}
}

/* A run of 3 s: thread 1 in alpha for a second, then in beta, then off
 * CPU while thread 2 is in gamma. */
static struct pv_profile *timed(void)
{
	struct pv_profile *p = make_profile();

	add_at(p, 1, 100, 2, (int[]){ F_MAIN, F_A }, 0, 0);
	add_at(p, 1, 100, 2, (int[]){ F_MAIN, F_B }, 1000, 0);
	add_at(p, 2, 100, 3, (int[]){ F_MAIN, F_B, F_C }, 2000, 0);
	add_at(p, 1, 100, 1, (int[]){ F_MAIN }, 2000, PV_SAMPLE_OFFCPU);
	p->timed = true;
	p->duration_ns = 3000000000;
	return p;
}

/* A profile without sample times: every time key says so and changes
 * nothing. */
static void test_time_untimed(void)
{
	struct pv_profile *p = standard();
	struct browse *b = browse_new(p, &all_of, 1, NULL);

	if (!b)
		return;
	CHECK_EQ(browse_time_strip(b, 40, 4), 0);
	CHECK_STR(b->status, "this profile has no sample times");
	CHECK_EQ(b->strip.ncols, 0);
	b->status[0] = 0;
	browse_time_move(b, 3);
	CHECK_STR(b->status, "this profile has no sample times");
	b->status[0] = 0;
	CHECK_EQ(browse_time_mark(b, false), 0);
	CHECK_STR(b->status, "this profile has no sample times");
	b->status[0] = 0;
	CHECK_EQ(browse_time_clear(b), 0);
	CHECK_STR(b->status, "this profile has no sample times");
	CHECK_EQ(b->nacts, 0);
	CHECK_EQ(b->t->samples, 100);
	CHECK_EQ(b->time_at, 0);
	browse_free(b);
	pv_profile_free(p);
}

/* The strip's rows and cells, the cursor's columns. */
static void test_time_strip(void)
{
	struct pv_profile *p = timed();
	struct browse *b = browse_new(p, &all_of, 1, NULL);
	int64_t from, to;

	if (!b)
		return;
	CHECK_EQ(b->t->samples, 400);
	/* 30 columns of 100 ms: 10 samples a column */
	CHECK_EQ(browse_time_strip(b, 30, 8), 0);
	CHECK_EQ(b->strip.ncols, 30);
	CHECK_EQ(b->strip.len, 3000000000);
	CHECK_EQ(b->strip.nrows, 2);
	CHECK_EQ(b->strip.rows[0].tid, 1);
	CHECK_STR(pv_str(p, b->strip.rows[0].name), "main");
	CHECK_EQ(b->strip.rows[0].samples, 300);
	CHECK_EQ(b->strip.rows[1].tid, 2);
	CHECK_EQ(b->strip.rows[0].on[0], 10);
	CHECK_EQ(b->strip.rows[0].on[19], 10);
	CHECK_EQ(b->strip.rows[0].on[20], 0);
	CHECK_EQ(b->strip.rows[0].off[20], 10);
	CHECK_EQ(b->strip.rows[0].off[19], 0);
	CHECK_EQ(b->strip.rows[1].on[19], 0);
	CHECK_EQ(b->strip.rows[1].on[29], 10);
	CHECK_EQ(b->strip.max, 10);
	CHECK(b->strip.offcpu);
	/* one row: both threads in it */
	CHECK_EQ(browse_time_strip(b, 30, 1), 0);
	CHECK_EQ(b->strip.nrows, 1);
	CHECK_EQ(b->strip.rows[0].nthreads, 2);
	CHECK_EQ(b->strip.rows[0].samples, 400);
	CHECK_EQ(b->strip.rows[0].on[25], 10);
	CHECK_EQ(b->strip.rows[0].off[25], 10);
	CHECK_EQ(b->strip.max, 20);
	/* the cursor, within the run */
	CHECK_EQ(browse_time_strip(b, 30, 8), 0);
	CHECK_EQ(browse_time_cursor(b), 0);
	browse_time_move(b, -5);
	CHECK_EQ(browse_time_cursor(b), 0);
	browse_time_move(b, 12);
	CHECK_EQ(browse_time_cursor(b), 12);
	browse_time_column(b, 12, &from, &to);
	CHECK_EQ(from, 1200000000);
	CHECK_EQ(to, 1300000000);
	browse_time_move(b, 1000);
	CHECK_EQ(browse_time_cursor(b), 29);
	/* columns that do not divide the run: each time in one column */
	CHECK_EQ(browse_time_strip(b, 7, 8), 0);
	for (size_t c = 0; c < 7; c++) {
		browse_time_column(b, c, &from, &to);
		CHECK(from < to);
		b->time_at = from;
		CHECK_EQ(browse_time_cursor(b), c);
		b->time_at = to - 1;
		CHECK_EQ(browse_time_cursor(b), c);
	}
	CHECK_EQ(to, 3000000000);
	browse_free(b);
	pv_profile_free(p);
}

static bool shows(struct browse *b, const char *name)
{
	tree_widget_expand_all(b->w, true);
	return row_of(b, name) >= 0;
}

/* A span chosen with the cursor filters the tree as --time does; undo
 * and clear; a zoom stays. */
static void test_time_span(void)
{
	struct pv_profile *p = timed();
	struct browse *b = browse_new(p, &all_of, 1, NULL);
	int64_t ends[4][2];
	char buf[256];

	if (!b)
		return;
	CHECK_EQ(browse_time_mark(b, false), 0);
	CHECK_STR(b->status, "no time strip: w shows it");
	CHECK_EQ(b->nacts, 0);
	CHECK_EQ(browse_time_strip(b, 30, 8), 0);
	CHECK_EQ(browse_time_spans(b, ends, 4), 0);
	/* from 0.2 s on */
	browse_time_move(b, 2);
	CHECK_EQ(browse_time_mark(b, false), 0);
	CHECK_EQ(b->t->samples, 380);
	CHECK_STR(b->res.spans, "0.200-3.000 s of 3.000 s");
	CHECK_STR(b->status, "time: 0.200-3.000 s of 3.000 s; 380 samples");
	CHECK_EQ(browse_time_spans(b, ends, 4), 1);
	CHECK_EQ(ends[0][0], 200000000);
	CHECK_EQ(ends[0][1], INT64_MAX);
	/* to 1 s: alpha alone */
	browse_time_move(b, 7);
	CHECK_EQ(browse_time_mark(b, true), 0);
	CHECK_EQ(b->t->samples, 80);
	CHECK_EQ(b->res.in_spans, 80);
	CHECK_STR(b->res.spans, "0.200-1.000 s of 3.000 s");
	CHECK(shows(b, "alpha"));
	CHECK(!shows(b, "beta"));
	/* an end before the start: from the run's start */
	browse_time_move(b, -9);
	CHECK_EQ(browse_time_mark(b, true), 0);
	CHECK_STR(b->res.spans, "0.000-0.100 s of 3.000 s");
	CHECK_EQ(b->t->samples, 10);
	/* a start after the end: to the run's end, its last column */
	browse_time_move(b, 1000);
	CHECK_EQ(browse_time_mark(b, false), 0);
	CHECK_STR(b->res.spans, "2.900-3.000 s of 3.000 s");
	CHECK_EQ(b->t->samples, 20);
	/* undo, one span at a time */
	CHECK_EQ(browse_undo(b), 0);
	CHECK_EQ(b->t->samples, 10);
	CHECK_EQ(browse_undo(b), 0);
	CHECK_EQ(b->t->samples, 80);
	/* clear: the whole run; undo gives the span back */
	CHECK_EQ(browse_time_clear(b), 0);
	CHECK_EQ(b->t->samples, 400);
	CHECK_STR(b->res.spans, "");
	CHECK_STR(b->status, "time: the whole run; 400 samples");
	CHECK_EQ(browse_time_spans(b, ends, 4), 0);
	CHECK_EQ(browse_time_clear(b), 0);
	CHECK_STR(b->status, "time: the whole run already");
	CHECK_EQ(browse_undo(b), 0);
	CHECK_EQ(b->t->samples, 80);
	/* a zoom stays through a span */
	CHECK_EQ(browse_search(b, "^alpha$"), 0);
	CHECK_EQ(browse_zoom(b), 0);
	CHECK_STR(calltree_node_name(b->t, b->root, buf, sizeof buf), "alpha");
	browse_time_move(b, -25);
	CHECK_EQ(browse_time_mark(b, true), 0);
	CHECK_EQ(b->t->samples, 30);
	CHECK_STR(calltree_node_name(b->t, b->root, buf, sizeof buf), "alpha");
	browse_free(b);
	pv_profile_free(p);
}

/* A span chosen on the strip holds the samples of its columns exactly:
 * 17 columns of 3 s, the 13th starting at 2117647059 ns (in seconds,
 * 2.117647059, times 1e9 is a hair under). */
static void test_time_column_ends(void)
{
	struct pv_profile *p = make_profile();
	uint32_t a = pv_add_stack(p, &loc_of[F_A], 1), c = pv_add_stack(p, &loc_of[F_C], 1);
	struct pv_sample before = { a, 1, pv_get_thread(p, 1, PV_NONE), 0, { 1, 1 }, 2117647058 };
	struct pv_sample at = { c, 1, pv_get_thread(p, 1, PV_NONE), 0, { 1, 1 }, 2117647059 };
	struct browse *b;
	int64_t from, to;

	pv_add_sample(p, &before);
	pv_add_sample(p, &at);
	p->timed = true;
	p->duration_ns = 3000000000;
	b = browse_new(p, &all_of, 1, NULL);
	if (!b)
		return;
	CHECK_EQ(browse_time_strip(b, 17, 8), 0);
	browse_time_column(b, 12, &from, &to);
	CHECK_EQ(from, 2117647059);
	browse_time_move(b, 12);
	CHECK_EQ(browse_time_mark(b, false), 0);
	CHECK_EQ(b->t->samples, 1);
	CHECK(shows(b, "gamma") && !shows(b, "alpha"));
	browse_time_move(b, -1);
	CHECK_EQ(browse_time_clear(b), 0);
	CHECK_EQ(browse_time_mark(b, true), 0);
	CHECK_EQ(b->t->samples, 1);
	CHECK(shows(b, "alpha") && !shows(b, "gamma"));
	browse_free(b);
	pv_profile_free(p);
}

/* The command line's span is the one in force at the start; one chosen
 * takes its place. */
static void test_time_from_command_line(void)
{
	struct pv_profile *p = timed();
	struct pv_span one = { .from = 1, .to = 2, .has_from = true, .has_to = true };
	struct pv_span two[2] = { { .from = 0, .to = 10, .from_pct = true, .to_pct = true, .has_from = true,
				    .has_to = true },
				  { .from = 2.5, .has_from = true } };
	struct pv_view v = { .granularity = CT_FUNCTIONS, .spans = &one, .nspans = 1 };
	struct browse *b = browse_new(p, &v, 1, NULL);
	int64_t ends[4][2];

	if (!b)
		return;
	CHECK_EQ(b->t->samples, 100);
	CHECK(shows(b, "beta"));
	CHECK(!shows(b, "alpha"));
	CHECK_EQ(browse_time_spans(b, ends, 4), 1);
	CHECK_EQ(ends[0][0], 1000000000);
	CHECK_EQ(ends[0][1], 2000000000);
	CHECK_EQ(browse_time_strip(b, 30, 8), 0);
	/* the end moves to 1.5 s, the start stays */
	browse_time_move(b, 14);
	CHECK_EQ(browse_time_mark(b, true), 0);
	CHECK_STR(b->res.spans, "1.000-1.500 s of 3.000 s");
	CHECK_EQ(b->t->samples, 50);
	CHECK_EQ(browse_time_clear(b), 0);
	CHECK_EQ(b->t->samples, 400);
	CHECK_EQ(browse_undo(b), 0);
	CHECK_EQ(browse_undo(b), 0);
	CHECK_EQ(b->t->samples, 100);
	CHECK_EQ(browse_time_clear(b), 0);
	CHECK_EQ(b->t->samples, 400);
	browse_free(b);
	/* two spans, a share of the run and an open end */
	v.spans = two;
	v.nspans = 2;
	b = browse_new(p, &v, 1, NULL);
	if (!b)
		return;
	CHECK_EQ(b->t->samples, 30 + 100);
	CHECK_EQ(browse_time_spans(b, ends, 4), 2);
	CHECK_EQ(ends[0][0], 0);
	CHECK_EQ(ends[0][1], 300000000);
	CHECK_EQ(ends[1][0], 2500000000);
	CHECK_EQ(ends[1][1], INT64_MAX);
	/* a start: the end is the last span's */
	CHECK_EQ(browse_time_strip(b, 30, 8), 0);
	browse_time_move(b, 1);
	CHECK_EQ(browse_time_mark(b, false), 0);
	CHECK_STR(b->res.spans, "0.100-3.000 s of 3.000 s");
	browse_free(b);
	pv_profile_free(p);
}

int main(void)
{
	pv_error_set_sink(sink);
	test_time_untimed();
	test_time_strip();
	test_time_span();
	test_time_column_ends();
	test_time_from_command_line();
	return check_done("test-browse-time");
}
