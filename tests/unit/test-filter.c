/* test-filter.c - focus, ignore, hide, show, show-from and prune-from on
 * hand-built profiles, with pprof's meanings */
#include "check.h"
#include "error.h"
#include "filter.h"
#include "util.h"

enum { L_MAIN, L_ALPHA, L_BETA, L_GAMMA, L_INL, L_MEMCPY, L_CPP, NL };
static uint32_t loc[NL];

/* main (main.c), alpha (a.c), beta (b.c), gamma (c.c); one location with
 * helper (h.h) inlined into beta; memcpy in /lib/libc.so.6 with no source
 * file; a C++ function with its parameter list. */
static struct pv_profile *make_profile(void)
{
	struct pv_profile *p = pv_profile_new();
	const char *names[] = { "main", "alpha", "beta", "gamma", "helper", "memcpy", "ns::f(int)" };
	const char *files[] = { "main.c", "a.c", "b.c", "c.c", "h.h", "", "f.cc" };
	uint32_t fn[NL];
	struct pv_mapping m = { .start = 0x7f0000000000, .limit = 0x7f0000100000,
				.file = pv_intern_str(p, "/lib/libc.so.6") };
	uint32_t libc = pv_add_mapping(p, &m);

	pv_add_value_type(p, "samples", "count");
	pv_add_value_type(p, "cpu", "nanoseconds");
	for (int i = 0; i < NL; i++) {
		uint32_t n = pv_intern_str(p, names[i]);
		fn[i] = pv_get_function(p, n, n, pv_intern_str(p, files[i]), 1);
	}
	for (int i = 0; i < NL; i++) {
		if (i == L_INL)
			continue;
		loc[i] = pv_get_location(p, i == L_MEMCPY ? 0x7f0000000100 : 0x1000 + 0x10 * (uint64_t)i,
					 i == L_MEMCPY ? libc : PV_NONE);
		struct pv_line l = { fn[i], 10 + i };
		pv_set_lines(p, loc[i], &l, 1);
	}
	loc[L_INL] = pv_get_location(p, 0x2000, PV_NONE);
	struct pv_line two[2] = { { fn[L_INL], 7 }, { fn[L_BETA], 22 } };
	pv_set_lines(p, loc[L_INL], two, 2);
	return p;
}

/* count samples sharing one stored stack, given outermost first. */
static void add(struct pv_profile *p, int count, uint32_t flags, int n, const int *frames)
{
	uint32_t locs[16];
	for (int i = 0; i < n; i++)
		locs[i] = loc[frames[n - 1 - i]];
	uint32_t off = pv_add_stack(p, locs, (uint32_t)n);
	for (int i = 0; i < count; i++) {
		struct pv_sample s = { off, (uint32_t)n, PV_NONE, flags, { 1, 1000 } };
		pv_add_sample(p, &s);
	}
}

static struct pv_profile *standard(void)
{
	struct pv_profile *p = make_profile();
	add(p, 5, 0, 2, (int[]){ L_MAIN, L_ALPHA });
	add(p, 3, 0, 3, (int[]){ L_MAIN, L_BETA, L_GAMMA });
	add(p, 2, 0, 3, (int[]){ L_MAIN, L_INL, L_GAMMA });
	add(p, 4, PV_SAMPLE_TRUNCATED, 3, (int[]){ L_MAIN, L_ALPHA, L_MEMCPY });
	add(p, 1, 0, 4, (int[]){ L_MAIN, L_ALPHA, L_ALPHA, L_GAMMA });
	add(p, 1, 0, 2, (int[]){ L_MAIN, L_CPP });
	return p;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The profile as sorted folded stacks ("main;beta;helper 2\n"), frames
 * outermost first, identical stacks summed. */
static char *folded(const struct pv_profile *p)
{
	char **rows = calloc(p->nsamples + 1, sizeof *rows);
	size_t cap = 64, len = 0;
	char *out = calloc(cap, 1);

	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pv_sample *s = &p->samples[i];
		const uint32_t *sl = pv_sample_locs(p, s);
		char buf[512] = "";
		for (uint32_t j = s->nlocs; j-- > 0;) {
			const struct pv_location *l = &p->locations[sl[j]];
			const struct pv_line *ln = pv_location_lines(p, l);
			for (uint32_t k = l->nlines; k-- > 0;)
				snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s",
					 buf[0] ? ";" : "", pv_str(p, p->functions[ln[k].function].name));
		}
		rows[i] = strdup(buf);
	}
	qsort(rows, p->nsamples, sizeof *rows, cmp_str);
	for (size_t i = 0; i < p->nsamples;) {
		size_t j = i;
		while (j < p->nsamples && strcmp(rows[i], rows[j]) == 0)
			j++;
		char line[600];
		snprintf(line, sizeof line, "%s %zu\n", rows[i], j - i);
		if (len + strlen(line) + 1 > cap) {
			cap = 2 * (len + strlen(line) + 1);
			out = realloc(out, cap);
		}
		memcpy(out + len, line, strlen(line) + 1);
		len += strlen(line);
		i = j;
	}
	for (size_t i = 0; i < p->nsamples; i++)
		free(rows[i]);
	free(rows);
	return out;
}

struct spec {
	enum pv_filter_kind kind;
	const char *re;
};

/* Apply the filters to the standard profile and compare the folded stacks. */
static void expect(int line, const struct spec *specs, int n, const char *want, int64_t kept)
{
	struct pv_profile *p = standard();
	struct pv_filters f = { 0 };
	struct pv_filter_stats st;
	const char *err;

	for (int i = 0; i < n; i++)
		CHECK(pv_filters_add(&f, specs[i].kind, specs[i].re, &err) == 0);
	CHECK(pv_filters_apply(p, &f, &st) == 0);
	CHECK(pv_profile_validate(p, "filtered") == 0);
	char *got = folded(p);
	if (strcmp(got, want) != 0)
		fprintf(stderr, "line %d: got:\n%swant:\n%s", line, got, want);
	CHECK_STR(got, want);
	CHECK_EQ(st.before, 16);
	CHECK_EQ(st.after, kept);
	CHECK_EQ((int64_t)p->nsamples, kept);
	free(got);
	pv_filters_free(&f);
	pv_profile_free(p);
}

#define F(k, r) { PV_FILTER_##k, r }
#define EXPECT(want, kept, ...)                                                        \
	expect(__LINE__, (const struct spec[]){ __VA_ARGS__ },                          \
	       (int)(sizeof((const struct spec[]){ __VA_ARGS__ }) / sizeof(struct spec)), \
	       want, kept)

static const char *all = "main;alpha 5\n"
			 "main;alpha;alpha;gamma 1\n"
			 "main;alpha;memcpy 4\n"
			 "main;beta;gamma 3\n"
			 "main;beta;helper;gamma 2\n"
			 "main;ns::f(int) 1\n";

static void test_each(void)
{
	/* No filter: the folded rendering itself. */
	EXPECT(all, 16, F(HIDE, "^nothing-matches-this$"));

	/* focus: a sample with any matching location; an inlined frame
	 * selects its whole location; files and mapped files match too. */
	EXPECT("main;alpha;alpha;gamma 1\nmain;beta;gamma 3\nmain;beta;helper;gamma 2\n", 6,
	       F(FOCUS, "gamma"));
	EXPECT("main;beta;helper;gamma 2\n", 2, F(FOCUS, "^helper$"));
	EXPECT("main;beta;gamma 3\nmain;beta;helper;gamma 2\n", 5, F(FOCUS, "^b\\.c$"));
	EXPECT("main;alpha;memcpy 4\n", 4, F(FOCUS, "libc"));
	EXPECT("", 0, F(FOCUS, "^nowhere$"));

	/* ignore */
	EXPECT("main;alpha 5\nmain;alpha;alpha;gamma 1\nmain;beta;gamma 3\n"
	       "main;beta;helper;gamma 2\nmain;ns::f(int) 1\n", 12, F(IGNORE, "memcpy"));
	EXPECT("main;ns::f(int) 1\n", 1, F(IGNORE, "^(alpha|beta)$"));

	/* hide: the frames go, the samples stay; an inlined frame goes alone. */
	EXPECT("main 5\nmain;beta;gamma 3\nmain;beta;helper;gamma 2\nmain;gamma 1\n"
	       "main;memcpy 4\nmain;ns::f(int) 1\n", 16, F(HIDE, "alpha"));
	EXPECT("main;alpha 5\nmain;alpha;alpha;gamma 1\nmain;alpha;memcpy 4\n"
	       "main;beta;gamma 5\nmain;ns::f(int) 1\n", 16, F(HIDE, "helper"));
	EXPECT("main;alpha 5\nmain;alpha;alpha;gamma 1\nmain;alpha;memcpy 4\n"
	       "main;gamma 3\nmain;helper;gamma 2\nmain;ns::f(int) 1\n", 16, F(HIDE, "^beta$"));
	/* A sample with every frame hidden is gone. */
	EXPECT("alpha 5\nalpha;alpha;gamma 1\nalpha;memcpy 4\nbeta;gamma 3\n"
	       "beta;helper;gamma 2\n", 15, F(HIDE, "main|ns::"));

	/* show: only the matching frames. */
	EXPECT("main 10\nmain;gamma 6\n", 16,
	       F(SHOW, "main|gamma"));
	EXPECT("alpha 5\nalpha;alpha 1\nalpha;memcpy 4\nbeta 3\nbeta;helper 2\n", 15,
	       F(SHOW, "^(alpha|beta|helper)$|libc"));

	/* show-from: re-rooted at the outermost match; the rest dropped. */
	EXPECT("beta;gamma 3\nbeta;helper;gamma 2\n", 5, F(SHOW_FROM, "^beta$"));
	EXPECT("helper;gamma 2\n", 2, F(SHOW_FROM, "helper"));
	EXPECT("alpha 5\nalpha;alpha;gamma 1\nalpha;memcpy 4\n", 10, F(SHOW_FROM, "alpha"));

	/* prune-from: cut below the innermost match; nothing dropped. */
	EXPECT("main;alpha 9\nmain;alpha;alpha 1\nmain;beta;gamma 3\n"
	       "main;beta;helper;gamma 2\nmain;ns::f(int) 1\n", 16, F(PRUNE_FROM, "^alpha$"));
	EXPECT("main;alpha 5\nmain;alpha;alpha;gamma 1\nmain;alpha;memcpy 4\n"
	       "main;beta 5\nmain;ns::f(int) 1\n", 16, F(PRUNE_FROM, "^beta$"));
	/* It matches the name without its parameters, and not files. */
	EXPECT("main;alpha 5\nmain;alpha;alpha;gamma 1\nmain;alpha;memcpy 4\n"
	       "main;beta;gamma 3\nmain;beta;helper;gamma 2\nmain;ns::f(int) 1\n", 16,
	       F(PRUNE_FROM, "^ns::f$|int|c\\.c"));
	EXPECT("main 16\n", 16, F(PRUNE_FROM, "^main$"));
}

static void test_combined(void)
{
	/* focus and ignore together: focused and not ignored. */
	EXPECT("main;alpha 5\nmain;alpha;memcpy 4\n", 9, F(FOCUS, "alpha"), F(IGNORE, "gamma"));
	/* Several of one kind: any of them. */
	EXPECT("main;alpha;memcpy 4\nmain;beta;helper;gamma 2\n", 6, F(FOCUS, "memcpy"),
	       F(FOCUS, "helper"));
	EXPECT("main;alpha 5\nmain;ns::f(int) 1\n", 6, F(IGNORE, "memcpy"), F(IGNORE, "gamma"));
	/* focus looks at the stacks before hide removes frames. */
	EXPECT("alpha;alpha 1\nbeta 3\nbeta;helper 2\n", 6, F(FOCUS, "gamma"), F(HIDE, "main|gamma"));
	/* hide and show: a frame must be shown and not hidden. */
	EXPECT("main 10\nmain;gamma 6\n", 16, F(HIDE, "alpha"), F(SHOW, "main|gamma|alpha"));
	/* show-from after hide: the match among the frames left. */
	EXPECT("gamma 6\n", 6, F(HIDE, "helper"), F(SHOW_FROM, "gamma"));
	/* show-from, then prune-from. */
	EXPECT("beta;gamma 3\nbeta;helper 2\n", 5, F(SHOW_FROM, "^beta$"), F(PRUNE_FROM, "helper"));
	/* Everything at once. */
	EXPECT("alpha 9\n", 9, F(FOCUS, "alpha|beta"), F(IGNORE, "gamma"), F(HIDE, "^main$"),
	       F(SHOW, "alpha|memcpy"), F(SHOW_FROM, "alpha"), F(PRUNE_FROM, "alpha"));
}

static void test_api(void)
{
	struct pv_filters f = { 0 };
	struct pv_filter_stats st;
	const char *err = NULL;
	char buf[128];

	CHECK(pv_filters_add(&f, PV_FILTER_FOCUS, "(unclosed", &err) < 0);
	CHECK(err && err[0]);
	CHECK(!pv_filters_any(&f));
	CHECK(pv_filters_add(&f, PV_FILTER_FOCUS, "alpha", &err) == 0);
	CHECK(pv_filters_add(&f, PV_FILTER_PRUNE_FROM, "x+", &err) == 0);
	CHECK(pv_filters_add(&f, PV_FILTER_IGNORE, "nothing-here", &err) == 0);
	CHECK_STR(pv_filters_describe(&f, buf, sizeof buf), "focus=alpha ignore=nothing-here prune-from=x+");
	CHECK_STR(pv_filters_describe(&f, buf, 8), "focus=a");
	CHECK_STR(pv_filter_name(PV_FILTER_SHOW_FROM), "show-from");

	/* What matched, and the incomplete stacks still counted. */
	struct pv_profile *p = standard();
	CHECK_EQ(p->truncated, 4);
	CHECK(pv_filters_apply(p, &f, &st) == 0);
	CHECK(st.matched[PV_FILTER_FOCUS]);
	CHECK(!st.matched[PV_FILTER_IGNORE]);
	CHECK(!st.matched[PV_FILTER_PRUNE_FROM]);
	CHECK_EQ(st.after, 10);
	CHECK_EQ(p->truncated, 4);
	pv_profile_free(p);
	pv_filters_free(&f);

	p = standard();
	CHECK(pv_filters_add(&f, PV_FILTER_IGNORE, "memcpy", &err) == 0);
	CHECK(pv_filters_apply(p, &f, &st) == 0);
	CHECK_EQ(p->truncated, 0);
	CHECK(st.matched[PV_FILTER_IGNORE]);
	pv_profile_free(p);
	pv_filters_free(&f);
	pv_filters_free(&f); /* twice is harmless */

	/* prune-from sees C++ names without their parameter lists. */
	p = standard();
	CHECK(pv_filters_add(&f, PV_FILTER_PRUNE_FROM, "^ns::f$", &err) == 0);
	CHECK(pv_filters_apply(p, &f, &st) == 0);
	CHECK(st.matched[PV_FILTER_PRUNE_FROM]);
	pv_profile_free(p);
	pv_filters_free(&f);
	p = standard();
	CHECK(pv_filters_add(&f, PV_FILTER_PRUNE_FROM, "\\(int", &err) == 0);
	CHECK(pv_filters_apply(p, &f, &st) == 0);
	CHECK(!st.matched[PV_FILTER_PRUNE_FROM]);
	pv_profile_free(p);
	pv_filters_free(&f);

	/* No filters: nothing changes, the totals are counted. */
	p = standard();
	CHECK(pv_filters_apply(p, &f, &st) == 0);
	CHECK_EQ(st.before, 16);
	CHECK_EQ(st.after, 16);
	CHECK_EQ((int64_t)p->nsamples, 16);
	pv_profile_free(p);
}

/* Many samples on a few shared stacks, and as many unshared: the same result. */
static void test_many(void)
{
	struct pv_profile *a = standard(), *b = make_profile();
	struct pv_filters f = { 0 };
	const char *err;

	for (int i = 0; i < 2000; i++) {
		add(a, 1, 0, 3, (int[]){ L_MAIN, L_INL, L_GAMMA });
		add(b, 1, 0, 3, (int[]){ L_MAIN, L_INL, L_GAMMA });
	}
	add(b, 5, 0, 2, (int[]){ L_MAIN, L_ALPHA });
	add(b, 3, 0, 3, (int[]){ L_MAIN, L_BETA, L_GAMMA });
	add(b, 2, 0, 3, (int[]){ L_MAIN, L_INL, L_GAMMA });
	add(b, 4, PV_SAMPLE_TRUNCATED, 3, (int[]){ L_MAIN, L_ALPHA, L_MEMCPY });
	add(b, 1, 0, 4, (int[]){ L_MAIN, L_ALPHA, L_ALPHA, L_GAMMA });
	add(b, 1, 0, 2, (int[]){ L_MAIN, L_CPP });
	CHECK(pv_filters_add(&f, PV_FILTER_HIDE, "^beta$", &err) == 0);
	CHECK(pv_filters_add(&f, PV_FILTER_SHOW_FROM, "helper|alpha", &err) == 0);
	CHECK(pv_filters_apply(a, &f, NULL) == 0);
	CHECK(pv_filters_apply(b, &f, NULL) == 0);
	char *fa = folded(a), *fb = folded(b);
	CHECK_STR(fa, fb);
	CHECK_STR(fa, "alpha 5\nalpha;alpha;gamma 1\nalpha;memcpy 4\nhelper;gamma 2002\n");
	free(fa);
	free(fb);
	pv_filters_free(&f);
	pv_profile_free(a);
	pv_profile_free(b);
}

int main(void)
{
	pv_error_set_progname("test-filter");
	test_each();
	test_combined();
	test_api();
	test_many();
	return check_done("test-filter");
}
