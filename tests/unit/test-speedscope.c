/* test-speedscope.c - the speedscope file of hand-built profiles: the
 * samples' order, the runs, the weights, the names */
#include "calltree.h"
#include "check.h"
#include "profbuild.h"
#include "report.h"

/* One sample of a stack (outermost first) at time ns, in thread tid. */
static void add_at(struct pv_profile *p, uint32_t tid, int64_t ns, int64_t cpu, int n, const int *frames)
{
	uint32_t locs[16];

	for (int i = 0; i < n; i++)
		locs[i] = loc_of[frames[n - 1 - i]];
	struct pv_sample s = { pv_add_stack(p, locs, (uint32_t)n), (uint32_t)n, pv_get_thread(p, tid, PV_NONE), 0,
			       { 1, cpu }, ns };
	pv_add_sample(p, &s);
}

/* The report of p weighed by sample_index (NULL: the default), malloc'd. */
static char *speedscope_of(struct pv_profile *p, const char *sample_index, const char *name)
{
	struct ct_options o = { .sample_index = sample_index, .paths_only = true };
	struct calltree *t = calltree_build(p, &o);
	struct pv_report_options ro = PV_REPORT_OPTIONS_DEFAULT;
	struct pv_report_ctx c = { .o = &ro, .p = p, .t = t };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(t != NULL && f != NULL);
	snprintf(c.title, sizeof c.title, "%s", name ? name : "");
	CHECK_EQ(pv_report_write(f, PV_REPORT_SPEEDSCOPE, &c), 0);
	fclose(f);
	calltree_free(t);
	return buf;
}

/* Samples out of time order, interleaved between threads: each thread's
 * profile has them sorted, equal neighbours merged into one. */
static void test_order(void)
{
	struct pv_profile *p = make_profile();
	char *s;

	p->timed = true;
	add_at(p, 2, 500, 7, 2, (int[]){ F_MAIN, F_B });
	add_at(p, 1, 300, 3, 2, (int[]){ F_MAIN, F_B });
	add_at(p, 1, 100, 1, 2, (int[]){ F_MAIN, F_A });
	add_at(p, 2, 400, 5, 3, (int[]){ F_MAIN, F_B, F_C });
	add_at(p, 1, 200, 2, 2, (int[]){ F_MAIN, F_A });
	add_at(p, 1, 250, 0, 1, (int[]){ F_MAIN });      /* no CPU time: left out */
	add_at(p, 1, 400, 4, 2, (int[]){ F_MAIN, F_A });
	s = speedscope_of(p, NULL, "prog");
	/* frames numbered as first met: thread 1 in time order first */
	CHECK_CONTAINS(s, "\"shared\":{\"frames\":[\n{\"name\":\"main\",\"file\":\"prog.c\",\"line\":8},\n"
			  "{\"name\":\"alpha\",\"file\":\"prog.c\",\"line\":18},\n"
			  "{\"name\":\"beta\",\"file\":\"prog.c\",\"line\":28},\n"
			  "{\"name\":\"gamma\",\"file\":\"prog.c\",\"line\":38}]}");
	CHECK_CONTAINS(s, "{\"type\":\"sampled\",\"name\":\"thread main (1)\",\"unit\":\"nanoseconds\","
			  "\"startValue\":0,\"endValue\":10,\n\"samples\":[\n[0,1],\n[0,2],\n[0,1]],\n"
			  "\"weights\":[3,3,4]}");
	CHECK_CONTAINS(s, "{\"type\":\"sampled\",\"name\":\"thread worker (2)\",\"unit\":\"nanoseconds\","
			  "\"startValue\":0,\"endValue\":12,\n\"samples\":[\n[0,2,3],\n[0,2]],\n"
			  "\"weights\":[5,7]}");
	CHECK_CONTAINS(s, "\"name\":\"prog\"");
	CHECK_CONTAINS(s, "\"activeProfileIndex\":0");
	CHECK(strncmp(s, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\"", 62) == 0);
	free(s);

	/* counted in samples: unit "none", the zero-CPU sample counts */
	s = speedscope_of(p, "samples", NULL);
	CHECK_CONTAINS(s, "\"name\":\"thread main (1)\",\"unit\":\"none\",\"startValue\":0,\"endValue\":5,\n"
			  "\"samples\":[\n[0,1],\n[0],\n[0,2],\n[0,1]],\n\"weights\":[2,1,1,1]}");
	CHECK_CONTAINS(s, "\"name\":\"profile\"");
	free(s);
	pv_profile_free(p);
}

/* Untimed: one profile, the samples as the profile holds them. */
static void test_untimed(void)
{
	struct pv_profile *p = make_profile();
	char *s;

	add_at(p, 2, 0, 7, 2, (int[]){ F_MAIN, F_B });
	add_at(p, 1, 0, 3, 2, (int[]){ F_MAIN, F_A });
	add_at(p, 2, 0, 7, 2, (int[]){ F_MAIN, F_B });
	s = speedscope_of(p, NULL, "x");
	CHECK_CONTAINS(s, "\"profiles\":[{\"type\":\"sampled\",\"name\":\"all samples\",\"unit\":\"nanoseconds\","
			  "\"startValue\":0,\"endValue\":17,\n\"samples\":[\n[0,1],\n[0,2],\n[0,1]],\n"
			  "\"weights\":[7,3,7]}]}\n");
	free(s);
	pv_profile_free(p);

	/* nothing at all: an empty profile all the same */
	p = make_profile();
	s = speedscope_of(p, NULL, "x");
	CHECK_CONTAINS(s, "\"profiles\":[{\"type\":\"sampled\",\"name\":\"no samples\",\"unit\":\"none\","
			  "\"startValue\":0,\"endValue\":0,\"samples\":[],\"weights\":[]}]}\n");
	CHECK_CONTAINS(s, "\"frames\":[]");
	free(s);
	pv_profile_free(p);
}

/* Names with quotes, backslashes, control characters and bytes that are
 * not UTF-8 come out as valid JSON strings; a thread without a name. */
static void test_names(void)
{
	struct pv_profile *p = pv_profile_new();
	uint32_t name = pv_intern_str(p, "a\"b\\c\x1b]0;d\x07\xff\xc3\xa9");
	uint32_t file = pv_intern_str(p, "dir\\\"f.c");
	uint32_t f, loc;
	char *s;

	pv_add_value_type(p, "samples", "count");
	f = pv_get_function(p, name, name, file, 0);
	loc = pv_get_location(p, 0x10, PV_NONE);
	pv_set_lines(p, loc, &(struct pv_line){ f, 0 }, 1);
	p->timed = true;
	struct pv_sample smp = { pv_add_stack(p, &loc, 1), 1, pv_get_thread(p, 42, PV_NONE), 0, { 2 }, 5 };
	pv_add_sample(p, &smp);
	smp.thread = PV_NONE;
	pv_add_sample(p, &smp);
	s = speedscope_of(p, NULL, "t\"\n");
	CHECK_CONTAINS(s, "{\"name\":\"a\\\"b\\\\c^[]0;d^G\\\\xff\xc3\xa9\",\"file\":\"dir\\\\\\\"f.c\"}");
	CHECK_CONTAINS(s, "\"name\":\"thread 42\",\"unit\":\"none\"");
	CHECK_CONTAINS(s, "\"name\":\"unknown thread\",\"unit\":\"none\"");
	CHECK_CONTAINS(s, "\"name\":\"t\\\"^J\"");
	free(s);
	pv_profile_free(p);
}

int main(void)
{
	test_order();
	test_untimed();
	test_names();
	return check_done("speedscope");
}
