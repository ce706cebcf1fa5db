/* profbuild.h - the hand-built profile the unit tests of the call tree and
 * the browser share: main calls alpha (which recurses) and beta (which
 * calls gamma, and has a helper inlined), in two threads, each sample
 * weighing 1 ms of CPU time */
#ifndef PROFVIEW_PROFBUILD_H
#define PROFVIEW_PROFBUILD_H

#include "profile.h"

enum { F_MAIN, F_A, F_B, F_C, F_INL, NF };
static const char *const fnames[NF] = { "main", "alpha", "beta", "gamma", "inlined_helper" };
static uint32_t fn[NF];
static uint32_t loc_of[NF];

static inline struct pv_profile *make_profile(void)
{
	struct pv_profile *p = pv_profile_new();
	uint32_t file = pv_intern_str(p, "prog.c");

	pv_add_value_type(p, "samples", "count");
	pv_add_value_type(p, "cpu", "nanoseconds");
	for (int i = 0; i < NF; i++) {
		uint32_t n = pv_intern_str(p, fnames[i]);
		fn[i] = pv_get_function(p, n, n, file, 10 * (i + 1) - 2);
		loc_of[i] = pv_get_location(p, 0x1000 + 0x100 * (uint64_t)i, PV_NONE);
		struct pv_line l = { fn[i], 10 * (i + 1) };
		pv_set_lines(p, loc_of[i], &l, 1);
	}
	/* One location holding an inlined call: gamma inlined into beta. */
	uint32_t inl = pv_get_location(p, 0x9000, PV_NONE);
	struct pv_line two[2] = { { fn[F_INL], 99 }, { fn[F_B], 25 } };
	pv_set_lines(p, inl, two, 2);
	loc_of[F_INL] = inl;
	pv_get_thread(p, 1, pv_intern_str(p, "main"));
	pv_get_thread(p, 2, pv_intern_str(p, "worker"));
	return p;
}

/* Add count samples of a stack given outermost first, each weighing 1 ms. */
static inline void add(struct pv_profile *p, uint32_t tid, int count, int n, const int *frames)
{
	uint32_t locs[16];
	for (int i = 0; i < n; i++)
		locs[i] = loc_of[frames[n - 1 - i]]; /* leaf first */
	uint32_t off = pv_add_stack(p, locs, (uint32_t)n);
	for (int i = 0; i < count; i++) {
		struct pv_sample s = { off, (uint32_t)n, pv_get_thread(p, tid, PV_NONE), 0,
				       { 1, 1000000 } };
		pv_add_sample(p, &s);
	}
}

/* 100 samples: main 4 self, alpha 60 (+6 recursing in thread 2), beta 9
 * self and gamma 20 under it, the inlined helper 1 (thread 2). */
static inline struct pv_profile *standard(void)
{
	struct pv_profile *p = make_profile();
	add(p, 1, 60, 2, (int[]){ F_MAIN, F_A });
	add(p, 1, 20, 3, (int[]){ F_MAIN, F_B, F_C });
	add(p, 1, 9, 2, (int[]){ F_MAIN, F_B });
	add(p, 1, 4, 1, (int[]){ F_MAIN });
	/* Recursion: alpha calls itself. */
	add(p, 2, 6, 3, (int[]){ F_MAIN, F_A, F_A });
	/* beta with gamma inlined: two frames from one location. */
	add(p, 2, 1, 2, (int[]){ F_MAIN, F_INL });
	return p;
}

#endif
