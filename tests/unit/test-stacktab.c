/* test-stacktab.c - the stack table of the preload libraries
 * (collectors/timer/stacktab.c), in this process: one id and one RAW_STACK
 * record per distinct stack, however the stacks crowd the table's probe
 * paths; stacks that differ in one frame anywhere, or in their depth;
 * stacks of the greatest depth; a full table, a full arena and a trace
 * with no room (the promise: 0, the frames written inline by the caller,
 * never another stack's id); a stack with a Python part (RAW_STACK_PY);
 * threads interning the same stacks at once; the few pages the stacks
 * of a short process touch. */
#include <pthread.h>
#include <stdio.h>
#include <sys/resource.h>

#include "fakehost.h"
#include "raw-py.h"
#include "stacktab.h"
#include "tracetest.h"

#define SLOTS (1u << 17)             /* the table's slots */
#define ARENA_WORDS (4u << 20)       /* its arena of frames */

/* Frame i of stack s: addresses that could be code. */
static uint64_t frame(uint64_t s, uint32_t i)
{
	return 0x400000 + s * 0x10 + (uint64_t)i * 0x100000000ull;
}

static uint32_t make(uint64_t *f, uint64_t s, uint32_t d)
{
	for (uint32_t i = 0; i < d; i++)
		f[i] = frame(s, i);
	return d;
}

/* The stacks expected in a trace, by id. */
struct expect {
	uint32_t max_id;
	const uint64_t *const *frames;   /* by id */
	const uint32_t *n;               /* by id */
};

/* The RAW_STACK records of the finished trace t: each id once, with the
 * frames e has for it.  Returns the records, *bad those that are not so. */
static uint64_t check_records(const struct tt_trace *t, const struct expect *e, int *bad)
{
	struct raw_iter it;
	struct raw_record rec;
	unsigned char *seen = calloc(e->max_id + 1, 1);
	uint64_t count = 0;

	raw_iter_init(&it, t->buf, t->len, t->start, RAW_NREGS);
	while (raw_iter_next(&it, &rec) == RAW_NEXT_RECORD) {
		struct raw_stack st;

		if (rec.type != RAW_STACK)
			continue;
		memcpy(&st, rec.data, sizeof(st));
		count++;
		if (st.id == 0 || st.id > e->max_id || seen[st.id] || e->frames[st.id] == NULL ||
		    st.nframes != e->n[st.id] || rec.size != sizeof(st) + 8 * st.nframes ||
		    memcmp(rec.data + sizeof(st), e->frames[st.id], 8 * st.nframes) != 0) {
			(*bad)++;
			continue;
		}
		seen[st.id] = 1;
	}
	free(seen);
	return count;
}

/* The same stack twice: one id, one record; stacks that differ only in
 * their first, a middle or their last frame, or only in depth (one a
 * prefix of the other), each their own id: a few hundred of each, which
 * a hash that missed that difference would crowd onto one probe path
 * too long for them. */
static void test_distinct(void)
{
	enum { PER = 300, DEPTH = 12 };
	static uint64_t stacks[4 * PER + 1][DEPTH + PER];
	static uint32_t depth[4 * PER + 1];
	static const uint64_t *byid[4 * PER + 2];
	static uint32_t nbyid[4 * PER + 2];
	uint32_t ids[4 * PER + 1], max = 0;
	struct tt_trace t;
	struct expect e;
	int bad = 0, zero = 0, dup = 0;
	uint64_t f[DEPTH];

	CHECK(tt_start(&t, 0) == 0);
	stacktab_reset();
	for (int k = 0; k < PER; k++) {
		/* first frame, a middle one, the last one differ */
		for (int where = 0; where < 3; where++) {
			uint64_t *s = stacks[where * PER + k];

			make(s, 7, DEPTH);
			s[where == 0 ? 0 : where == 1 ? DEPTH / 2 : DEPTH - 1] += 0x1000 * (uint64_t)(k + 1);
			depth[where * PER + k] = DEPTH;
		}
		/* depth k + 1 of one long stack: each a prefix of the next */
		make(stacks[3 * PER + k], 9, (uint32_t)k + 1);
		depth[3 * PER + k] = (uint32_t)k + 1;
	}
	for (int i = 0; i < 4 * PER; i++) {
		ids[i] = stacktab_intern(stacks[i], depth[i]);
		zero += ids[i] == 0;
		if (ids[i] > max)
			max = ids[i];
		if (ids[i] != 0 && ids[i] < 4 * PER + 2) {
			dup += byid[ids[i]] != NULL;
			byid[ids[i]] = stacks[i];
			nbyid[ids[i]] = depth[i];
		}
	}
	CHECK_EQ(zero, 0);
	CHECK_EQ(dup, 0);
	CHECK_EQ(max, 4 * PER);
	/* again: the same ids, nothing written */
	for (int i = 0; i < 4 * PER; i++)
		if (stacktab_intern(stacks[i], depth[i]) != ids[i])
			bad++;
	CHECK_EQ(bad, 0);
	/* a copy of the frames, not the same memory, is the same stack */
	make(f, 9, 5);
	CHECK_EQ(stacktab_intern(f, 5), ids[3 * PER + 4]);
	/* no frames: no stack */
	CHECK_EQ(stacktab_intern(f, 0), 0);
	CHECK(tt_finish(&t) == 0);
	e.max_id = 4 * PER + 1;
	e.frames = byid;
	e.n = nbyid;
	CHECK_EQ(check_records(&t, &e, &bad), 4 * PER);
	CHECK_EQ(bad, 0);
	tt_remove(&t);
}

/* More stacks than the table has slots: their probe paths meet all
 * over.  Each stack stored gets its own id and keeps it; one turned away
 * (its probe path full) gets 0 now and later, never another's id; the
 * table takes at least most of its slots before it turns stacks away;
 * one record per stored stack. */
static void test_crowded(void)
{
	enum { N = 200000 };
	uint32_t *ids = calloc(N, sizeof(*ids));
	const uint64_t **byid = calloc(N + 2, sizeof(*byid));
	uint32_t *nbyid = calloc(N + 2, sizeof(*nbyid));
	uint64_t *frames = calloc((size_t)N * 4, sizeof(*frames));
	uint64_t stored = 0, changed = 0, dup = 0, out_of_range = 0;
	struct tt_trace t;
	struct expect e;
	int bad = 0;

	CHECK(tt_start(&t, 0) == 0);
	stacktab_reset();
	for (uint32_t s = 0; s < N; s++) {
		uint32_t d = 1 + s % 4;

		make(frames + (size_t)s * 4, s, d);
		ids[s] = stacktab_intern(frames + (size_t)s * 4, d);
		if (ids[s] == 0)
			continue;
		stored++;
		if (ids[s] > N + 1) {
			out_of_range++;
			continue;
		}
		dup += byid[ids[s]] != NULL;
		byid[ids[s]] = frames + (size_t)s * 4;
		nbyid[ids[s]] = d;
	}
	for (uint32_t s = 0; s < N; s++)
		changed += stacktab_intern(frames + (size_t)s * 4, 1 + s % 4) != ids[s];
	CHECK_EQ(dup, 0);
	CHECK_EQ(out_of_range, 0);
	CHECK_EQ(changed, 0);
	CHECK(stored <= SLOTS);
	CHECK(stored >= SLOTS * 3 / 4);
	/* the premise: some were turned away */
	CHECK(stored < N);
	printf("stacktab: %llu of %d stacks stored in %u slots\n", (unsigned long long)stored, N, SLOTS);
	CHECK(tt_finish(&t) == 0);
	e.max_id = N + 1;
	e.frames = byid;
	e.n = nbyid;
	CHECK_EQ(check_records(&t, &e, &bad), stored);
	CHECK_EQ(bad, 0);
	tt_remove(&t);
	free(ids);
	free(byid);
	free(nbyid);
	free(frames);
}

/* Stacks of the greatest depth a walk makes (RAW_MAX_FRAMES) until their
 * frames fill the arena: each stored whole; then every new stack, a short
 * one too, gets 0, and the stored ones keep their ids. */
static void test_arena_full(void)
{
	enum { N = ARENA_WORDS / RAW_MAX_FRAMES + 50 };
	uint64_t *frames = malloc((size_t)N * RAW_MAX_FRAMES * sizeof(*frames));
	const uint64_t **byid = calloc(N + 2, sizeof(*byid));
	uint32_t *nbyid = calloc(N + 2, sizeof(*nbyid));
	uint32_t *ids = calloc(N, sizeof(*ids));
	uint64_t stored = 0, changed = 0, f[1];
	struct tt_trace t;
	struct expect e;
	int bad = 0;

	CHECK(tt_start(&t, 0) == 0);
	stacktab_reset();
	for (uint32_t s = 0; s < N; s++) {
		uint64_t *st = frames + (size_t)s * RAW_MAX_FRAMES;

		make(st, s, RAW_MAX_FRAMES);
		ids[s] = stacktab_intern(st, RAW_MAX_FRAMES);
		if (ids[s] != 0 && ids[s] <= N) {
			stored++;
			byid[ids[s]] = st;
			nbyid[ids[s]] = RAW_MAX_FRAMES;
		}
	}
	CHECK_EQ(stored, ARENA_WORDS / RAW_MAX_FRAMES);
	for (uint32_t s = 0; s < N; s++)
		changed += stacktab_intern(frames + (size_t)s * RAW_MAX_FRAMES, RAW_MAX_FRAMES) != ids[s];
	CHECK_EQ(changed, 0);
	f[0] = 0x1234560;
	CHECK_EQ(stacktab_intern(f, 1), 0);
	CHECK(tt_finish(&t) == 0);
	e.max_id = N + 1;
	e.frames = byid;
	e.n = nbyid;
	CHECK_EQ(check_records(&t, &e, &bad), stored);
	CHECK_EQ(bad, 0);
	tt_remove(&t);
	free(frames);
	free(byid);
	free(nbyid);
	free(ids);
}

/* No room in the trace: 0, and the slot is free again, so the stack is
 * stored once there is room. */
static void test_no_room(void)
{
	struct tt_trace t;
	uint64_t f[3];
	uint32_t id;
	int bad = 0;
	const uint64_t *byid[2] = { NULL, f };
	uint32_t nbyid[2] = { 0, 3 };
	struct expect e = { 1, byid, nbyid };

	stacktab_reset();
	make(f, 42, 3);
	/* no trace at all: the writer has no room */
	CHECK_EQ(stacktab_intern(f, 3), 0);
	CHECK_EQ(stacktab_intern(f, 3), 0);
	CHECK(tt_start(&t, 0) == 0);
	id = stacktab_intern(f, 3);
	CHECK_EQ(id, 1);
	CHECK_EQ(stacktab_intern(f, 3), id);
	CHECK(tt_finish(&t) == 0);
	CHECK_EQ(check_records(&t, &e, &bad), 1);
	CHECK_EQ(bad, 0);
	tt_remove(&t);
}

/* A stack with a Python part as its last frame: a RAW_STACK_PY of the
 * other frames naming the part, one id for it however often it comes;
 * the same native frames with another part a RAW_STACK_PYREF naming the
 * first (its frames not repeated), and without one a RAW_STACK of their
 * own, which no stack with a part takes for its base.  Native frames of
 * one frame are repeated (a reference would be no smaller). */
static void test_py(void)
{
	struct tt_trace t;
	uint64_t f[4], g[4], h[4], k[2], l[2];
	uint32_t a, b, c, d, e, x, y, nrec = 0, nplain = 0, nref = 0;
	struct raw_iter it;
	struct raw_record rec;

	stacktab_reset();
	make(f, 7, 3);
	memcpy(g, f, sizeof(f));
	memcpy(h, f, sizeof(f));
	f[3] = stacktab_py_word(5);
	g[3] = stacktab_py_word(6);
	h[3] = stacktab_py_word(7);
	k[0] = l[0] = f[0];
	k[1] = stacktab_py_word(8);
	l[1] = stacktab_py_word(9);
	CHECK(tt_start(&t, 0) == 0);
	c = stacktab_intern(f, 3);  /* (the native frames alone first) */
	a = stacktab_intern(f, 4);
	b = stacktab_intern(g, 4);
	d = stacktab_intern(h, 4);
	x = stacktab_intern(k, 2);
	y = stacktab_intern(l, 2);
	CHECK(a != 0 && b != 0 && c != 0 && d != 0 && a != b && b != c && a != c && d != a &&
	      d != b && d != c);
	CHECK_EQ(stacktab_intern(f, 4), a);
	CHECK_EQ(stacktab_intern(g, 4), b);
	CHECK_EQ(stacktab_intern(f, 3), c);
	e = stacktab_intern(f, 2);  /* a prefix of them: its own */
	CHECK(e != 0 && e != a && e != c);
	CHECK(tt_finish(&t) == 0);
	raw_iter_init(&it, t.buf, t.len, t.start, RAW_NREGS);
	while (raw_iter_next(&it, &rec) == RAW_NEXT_RECORD) {
		struct raw_stack_py sp;
		struct raw_stack_pyref r;

		nplain += rec.type == RAW_STACK;
		if (rec.type == RAW_STACK_PYREF) {
			memcpy(&r, rec.data, sizeof(r));
			nref++;
			CHECK_EQ(rec.size, sizeof(r));
			CHECK((r.id == b && r.py == 6) || (r.id == d && r.py == 7));
			CHECK_EQ(r.base, a);
			CHECK_EQ(r.reserved, 0);
		}
		if (rec.type != RAW_STACK_PY)
			continue;
		memcpy(&sp, rec.data, sizeof(sp));
		nrec++;
		if (sp.id == x || sp.id == y) {
			CHECK_EQ(rec.size, sizeof(sp) + 8);
			CHECK(sp.py == (sp.id == x ? 8u : 9u));
			continue;
		}
		CHECK_EQ(rec.size, sizeof(sp) + 3 * 8);
		CHECK(memcmp(rec.data + sizeof(sp), f, 3 * 8) == 0);
		CHECK(sp.id == a && sp.py == 5);
	}
	CHECK_EQ(nrec, 3);
	CHECK_EQ(nref, 2);
	CHECK_EQ(nplain, 2);
	tt_remove(&t);
}

/* ---- threads ---- */

#define THREADS 4
#define SHARED 5000

static uint64_t shared_frames[SHARED][6];
static uint32_t shared_ids[THREADS][SHARED];

static void *intern_thread(void *arg)
{
	uint32_t who = (uint32_t)(uintptr_t)arg;

	/* the same stacks, each thread in its own order */
	for (uint32_t k = 0; k < SHARED; k++) {
		uint32_t s = (k * (2 * who + 1) + who * 977) % SHARED;

		shared_ids[who][s] = stacktab_intern(shared_frames[s], 1 + s % 6);
	}
	return NULL;
}

/* Threads interning the same stacks at once: a stack has one id,
 * whichever thread got it first; a thread that met a slot being filled
 * got 0, never a different id; one record per stack. */
static void test_threads(void)
{
	static const uint64_t *byid[SHARED + 2];
	static uint32_t nbyid[SHARED + 2];
	pthread_t th[THREADS];
	uint32_t final[SHARED];
	uint64_t disagree = 0, missing = 0;
	struct tt_trace t;
	struct expect e;
	int bad = 0;

	CHECK(tt_start(&t, 0) == 0);
	stacktab_reset();
	for (uint32_t s = 0; s < SHARED; s++)
		make(shared_frames[s], s, 1 + s % 6);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, intern_thread, (void *)(uintptr_t)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	for (uint32_t s = 0; s < SHARED; s++) {
		final[s] = stacktab_intern(shared_frames[s], 1 + s % 6);
		missing += final[s] == 0 || final[s] > SHARED;
		for (int i = 0; i < THREADS; i++)
			disagree += shared_ids[i][s] != 0 && shared_ids[i][s] != final[s];
		if (final[s] != 0 && final[s] <= SHARED) {
			byid[final[s]] = shared_frames[s];
			nbyid[final[s]] = 1 + s % 6;
		}
	}
	CHECK_EQ(missing, 0);
	CHECK_EQ(disagree, 0);
	CHECK(tt_finish(&t) == 0);
	e.max_id = SHARED + 1;
	e.frames = byid;
	e.n = nbyid;
	CHECK_EQ(check_records(&t, &e, &bad), SHARED);
	CHECK_EQ(bad, 0);
	tt_remove(&t);
}

/* The ids of known walks (stacktab_know): found by their serial only;
 * another serial of the same slot replaces it; serial 0 or id 0 is never
 * known; a reset forgets them all. */
static void test_known(void)
{
	uint32_t word = 0;

	stacktab_reset();
	CHECK_EQ(stacktab_known(5, &word), 0);
	stacktab_know(5, 17, 99);
	CHECK_EQ(stacktab_known(5, &word), 17);
	CHECK_EQ(word, 99);
	CHECK_EQ(stacktab_known(6, &word), 0);
	/* a serial of the same slot, later: the earlier is gone */
	stacktab_know(5 + 64, 18, 3);
	CHECK_EQ(stacktab_known(5, &word), 0);
	CHECK_EQ(stacktab_known(5 + 64, &word), 18);
	CHECK_EQ(word, 3);
	stacktab_know(0, 19, 1);
	CHECK_EQ(stacktab_known(0, &word), 0);
	stacktab_know(7, 0, 1);
	CHECK_EQ(stacktab_known(7, &word), 0);
	stacktab_reset();
	CHECK_EQ(stacktab_known(5 + 64, &word), 0);
}

/* The stacks of a short process touch few of the table's pages: 200
 * distinct stacks, in a table just reset (its pages given back), take a
 * few page faults for the slots, the arena and the trace's records, not
 * one each for slots all over the table (some 180 of its 768 pages). */
static void test_few_pages(void)
{
	enum { N = 200, DEPTH = 8 };
	struct rusage before, after;
	struct tt_trace t;
	uint64_t f[DEPTH];
	long faults;
	int zero = 0;

	CHECK(tt_start(&t, 0) == 0);
	stacktab_reset();
	/* the code and the stack this uses, faulted in first */
	make(f, 1u << 20, DEPTH);
	zero += stacktab_intern(f, DEPTH) == 0;
	getrusage(RUSAGE_SELF, &before);
	getrusage(RUSAGE_SELF, &before);
	for (uint64_t k = 0; k < N; k++) {
		make(f, k * 7919 + 3, DEPTH);
		zero += stacktab_intern(f, DEPTH) == 0;
	}
	getrusage(RUSAGE_SELF, &after);
	faults = after.ru_minflt - before.ru_minflt;
	printf("%d stacks: %ld page faults\n", N, faults);
	CHECK_EQ(zero, 0);
	/* slots 3 pages, frames 4, records 4 */
	CHECK(faults < 40);
	CHECK(tt_finish(&t) == 0);
	tt_remove(&t);
}

int main(void)
{
	CHECK(stacktab_init() == 0);
	test_distinct();
	test_crowded();
	test_arena_full();
	test_no_room();
	test_py();
	test_threads();
	test_known();
	test_few_pages();
	return check_done("stacktab");
}
