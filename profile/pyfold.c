/* pyfold.c - the interpreter's own frames folded out of Python stacks
 * (see pyfold.h) */
#include "error.h"
#include "merge.h"
#include "pyfold.h"

#include <stdlib.h>
#include <string.h>

/* CPython's machinery between a Python frame and what it calls: whole
 * names, and prefixes (ending in '*'). */
static const char *const interp_names[] = {
	"_PyEval_EvalFrameDefault*", "_PyEval_EvalFrame", "_PyEval_Vector", "PyEval_EvalCode*",
	"_PyFunction_Vectorcall", "_PyObject_VectorcallTstate", "PyObject_Vectorcall*",
	"_PyObject_Vectorcall*", "_PyObject_Call*", "PyObject_Call", "PyObject_CallObject",
	"PyObject_CallOneArg", "PyObject_CallNoArgs", "_PyObject_MakeTpCall", "_PyObject_FastCall*",
	"PyVectorcall_Call", "_PyVectorcall_Call", "method_vectorcall*", "cfunction_vectorcall*",
	"cfunction_call", "vectorcall_method", "vectorcall_unbound", "slot_tp_call", "slot_tp_init",
	"type_call", "object_vacall", "call_function", "do_call_core", "function_code_fastcall",
	"_PyEval_EvalCode*", "PyIter_Next", "gen_send_ex*", "gen_iternext", "_PyGen_Send",
	"_Py_call_instrumentation*", "builtin_next", "PyIter_Send", "PyGen_am_send", "gen_send",
	/* a profile or trace function's call (sys.setprofile, sys.settrace):
	 * 3.9 to 3.11, and 3.12 on through sys.monitoring's events */
	"trace_call_function", "call_trace", "call_trace_protected", "profile_trampoline",
	"trace_trampoline", "call_trampoline", "call_instrumentation_vector*", "call_one_instrument",
	"trace_function_entry", "trace_function_exit", "sys_profile_*", "sys_trace_*",
	"call_profile_func", "call_trace_func",
};

bool pv_is_interpreter_function(const char *name)
{
	for (size_t i = 0; i < sizeof(interp_names) / sizeof(interp_names[0]); i++) {
		const char *n = interp_names[i];
		size_t len = strlen(n);

		if (n[len - 1] == '*' ? strncmp(name, n, len - 1) == 0 : strcmp(name, n) == 0)
			return true;
	}
	return false;
}

enum { FOLD_KEEP, FOLD_PYTHON, FOLD_MACHINERY, FOLD_NAMELESS };

/* Is Python location l the interpreter's own code, not the program's: a
 * shim of CPython 3.12 on, such as the one that runs after a class's
 * __init__ returns (between the caller and Class.__init__), a code object
 * whose file name is its name, on line 0. */
static bool pyfold_is_shim(const struct pv_profile *p, const struct pv_location *l,
			   const struct pv_line *lines)
{
	const struct pv_function *f;

	if (l->nlines == 0 || lines[0].function >= p->nfunctions)
		return false;
	f = &p->functions[lines[0].function];
	return f->start_line == 0 && f->name == f->filename && pv_str(p, f->name)[0] != '<' &&
	       strchr(pv_str(p, f->name), '/') == NULL;
}

/* What location i is: its outermost line's function decides (the inlined
 * calls go with it).  interp: the mappings that hold the evaluation loop. */
static uint8_t fold_kind(const struct pv_profile *p, uint32_t i, const uint8_t *interp)
{
	const struct pv_location *l = &p->locations[i];
	const struct pv_line *lines = pv_location_lines(p, l);

	if (pv_location_is_python(p, i))
		return pyfold_is_shim(p, l, lines) ? FOLD_MACHINERY : FOLD_PYTHON;
	bool interp_map = l->mapping < p->nmappings && interp[l->mapping];
	const struct pv_function *f;
	const char *name;

	if (l->nlines == 0)
		return interp_map ? FOLD_NAMELESS : FOLD_KEEP;
	if (lines[l->nlines - 1].function >= p->nfunctions)
		return FOLD_KEEP;
	f = &p->functions[lines[l->nlines - 1].function];
	name = pv_str(p, f->name);
	if (pv_is_interpreter_function(name))
		return FOLD_MACHINERY;
	/* the symbolizer's name of an address no symbol covers: FILE+0xOFF */
	if (interp_map && l->nlines == 1 && !pv_str(p, f->filename)[0] && strstr(name, "+0x"))
		return FOLD_NAMELESS;
	return FOLD_KEEP;
}

/* The stack at off, n folded into scratch: its new length, UINT32_MAX
 * when it stays.  ctx: the kinds of the locations (fold_kinds). */
static uint32_t fold_stack(const struct pv_profile *p, const void *ctx, uint32_t off, uint32_t n,
			   uint32_t *scratch)
{
	const uint8_t *kind = ctx;
	uint32_t inner = n, outer = 0, k = 0, entry;

	for (uint32_t j = 0; j < n; j++) {
		if (kind[p->stack_locs[off + j]] == FOLD_PYTHON) {
			if (inner == n)
				inner = j;
			outer = j;
		}
	}
	if (inner == n)
		return UINT32_MAX;
	/* the machinery that entered the outermost Python frame from C */
	for (entry = outer + 1; entry < n - 1 && kind[p->stack_locs[off + entry]] == FOLD_MACHINERY;)
		entry++;
	for (uint32_t j = 0; j < n; j++) {
		uint32_t li = p->stack_locs[off + j];
		uint8_t kd = kind[li];

		if (j > 0 && j < outer &&
		    (kd == FOLD_MACHINERY || (kd == FOLD_NAMELESS && j > inner)))
			continue;
		if (j > outer && j < entry)
			continue;
		scratch[k++] = li;
	}
	return k == n ? UINT32_MAX : k;
}

/* The mappings that hold the evaluation loop (one byte each, plus one
 * for PV_NONE), and whether any location is a Python frame; NULL when
 * out of memory. */
static uint8_t *interp_mappings(const struct pv_profile *p, bool *any)
{
	uint8_t *interp = calloc(p->nmappings + 1, 1);

	*any = false;
	for (size_t i = 0; interp && i < p->nlocations; i++) {
		const struct pv_location *l = &p->locations[i];
		const struct pv_line *lines = pv_location_lines(p, l);

		*any |= pv_location_is_python(p, (uint32_t)i);
		if (l->mapping >= p->nmappings || l->nlines == 0 ||
		    lines[l->nlines - 1].function >= p->nfunctions)
			continue;
		if (strncmp(pv_str(p, p->functions[lines[l->nlines - 1].function].name),
			    "_PyEval_EvalFrameDefault", 24) == 0)
			interp[l->mapping] = 1;
	}
	return interp;
}

static uint8_t *fold_kinds(const struct pv_profile *p)
{
	bool any;
	uint8_t *interp = interp_mappings(p, &any), *kind = calloc(p->nlocations + 1, 1);

	if (!interp || !kind) {
		free(interp);
		free(kind);
		return NULL;
	}
	for (size_t i = 0; any && i < p->nlocations; i++)
		kind[i] = fold_kind(p, (uint32_t)i, interp);
	free(interp);
	if (!any)
		kind[p->nlocations] = 1; /* no Python: nothing to fold */
	return kind;
}

struct fold_memo {
	uint32_t off, n;       /* the stack rewritten (n == UINT32_MAX: empty slot) */
	uint32_t new_off, new_n;
};

/* Rewrites each distinct stack of p's samples with fn (its new length
 * into scratch, or UINT32_MAX to keep it): how many samples changed, or
 * -1 after saying that memory ran out doing what. */
typedef uint32_t stack_fn(const struct pv_profile *p, const void *ctx, uint32_t off, uint32_t n,
			  uint32_t *scratch);
static long rewrite_stacks(struct pv_profile *p, stack_fn *fn, const void *ctx, const char *what)
{
	uint32_t *scratch = malloc((PV_MAX_DEPTH + 2) * sizeof *scratch);
	struct fold_memo *memo = NULL;
	size_t nslots = 1024;
	long changed = 0;

	while (nslots < p->nsamples * 2)
		nslots *= 2;
	memo = malloc(nslots * sizeof *memo);
	if (!scratch || !memo)
		goto oom;
	for (size_t i = 0; i < nslots; i++)
		memo[i].n = UINT32_MAX;
	for (size_t i = 0; i < p->nsamples; i++) {
		struct pv_sample *s = &p->samples[i];
		size_t h = ((size_t)s->loc_off * 0x9e3779b1u ^ s->nlocs) & (nslots - 1);

		while (memo[h].n != UINT32_MAX && (memo[h].off != s->loc_off || memo[h].n != s->nlocs))
			h = (h + 1) & (nslots - 1);
		if (memo[h].n == UINT32_MAX) {
			uint32_t k = s->nlocs > PV_MAX_DEPTH ? UINT32_MAX
				     : fn(p, ctx, s->loc_off, s->nlocs, scratch);
			uint32_t off = s->loc_off, n = s->nlocs;

			if (k != UINT32_MAX) {
				off = pv_add_stack(p, scratch, k);
				if (off == UINT32_MAX)
					goto oom;
				n = k;
			}
			memo[h] = (struct fold_memo){ s->loc_off, s->nlocs, off, n };
		}
		if (memo[h].new_off != s->loc_off || memo[h].new_n != s->nlocs) {
			s->loc_off = memo[h].new_off;
			s->nlocs = memo[h].new_n;
			changed++;
		}
	}
	free(scratch);
	free(memo);
	return changed;
oom:
	free(scratch);
	free(memo);
	return pv_error("out of memory %s", what);
}

long pv_fold_python_frames(struct pv_profile *p)
{
	uint8_t *kind = fold_kinds(p);
	long changed;

	if (!kind)
		return pv_error("out of memory folding the interpreter's frames");
	changed = kind[p->nlocations] ? 0
		  : rewrite_stacks(p, fold_stack, kind, "folding the interpreter's frames");
	free(kind);
	return changed;
}

/* ---- the evaluation loop's inlined calls put under its Python frames ---- */

/* A location of the evaluation loop that runs Python frames is where the
 * loop called out (or, at the leaf, the instruction it was at), and its
 * inlined lines are the helpers the loop ran for the innermost of those
 * frames (import_name, a vectorcall at the call site, a frame's clearing).
 * Shown with its native frames, a stack has them as calls inlined into
 * that Python frame (its location's inner lines: --noinlines folds them
 * into it, as any inlined call), and the loop's own line alone above the
 * outermost.  Both are new locations with those lines. */
/* (a loop location with more inlined lines than this is left whole) */
#define SPLIT_MAX_LINES 256

struct split_pair {
	uint32_t py, loop;       /* the innermost Python frame, the loop's location */
	uint32_t merged;         /* PV_NONE: an empty slot */
};

struct split_ctx {
	const uint8_t *kind;     /* 1: a Python frame; 2: a loop location with inlined lines */
	const uint32_t *outer;   /* of each loop location: its line alone, PV_NONE: not made */
	const struct split_pair *pairs;
	size_t npairs;           /* slots, a power of 2 */
	size_t used;             /* at most half of them */
};

static size_t pair_slot(const struct split_pair *pairs, size_t npairs, uint32_t py, uint32_t loop)
{
	size_t h = ((size_t)py * 0x9e3779b1u ^ (size_t)loop * 0x85ebca6bu) & (npairs - 1);

	while (pairs[h].merged != PV_NONE && (pairs[h].py != py || pairs[h].loop != loop))
		h = (h + 1) & (npairs - 1);
	return h;
}

/* Is location i the evaluation loop's, with lines inlined into it? */
static bool loop_with_inlines(const struct pv_profile *p, uint32_t i)
{
	const struct pv_location *l = &p->locations[i];
	const struct pv_line *lines = pv_location_lines(p, l);
	uint32_t f;

	if (l->nlines < 2 || l->nlines > SPLIT_MAX_LINES || pv_location_is_python(p, i))
		return false;
	f = lines[l->nlines - 1].function;
	return f < p->nfunctions &&
	       strncmp(pv_str(p, p->functions[f].name), "_PyEval_EvalFrameDefault", 24) == 0;
}

/* The stack at off, n with each loop location right above a run of Python
 * frames split: its new length, UINT32_MAX when it stays. */
static uint32_t split_stack(const struct pv_profile *p, const void *ctx, uint32_t off, uint32_t n,
			    uint32_t *scratch)
{
	const struct split_ctx *c = ctx;
	const uint32_t *locs;
	uint32_t k = 0;
	bool changed = false;

	/* (an empty stack: a profile may have no frames at all) */
	if (n == 0)
		return UINT32_MAX;
	locs = p->stack_locs + off;
	for (uint32_t j = 0; j < n;) {
		uint32_t end = j, loop;

		if (c->kind[locs[j]] != 1) {
			scratch[k++] = locs[j++];
			continue;
		}
		while (end < n && c->kind[locs[end]] == 1)
			end++;
		/* locs[j..end) are Python frames; locs[end] the loop that runs
		 * them (a run at the leaf: the loop was running the innermost's
		 * bytecode, its own time, and the helper it was in is not a
		 * call: the loop alone its caller) */
		loop = end < n && c->kind[locs[end]] == 2 ? locs[end] : PV_NONE;
		if (loop == PV_NONE || c->outer[loop] == PV_NONE) {
			while (j < end)
				scratch[k++] = locs[j++];
			continue;
		}
		if (j > 0) {
			const struct split_pair *sp = &c->pairs[pair_slot(c->pairs, c->npairs, locs[j], loop)];

			scratch[k++] = sp->merged != PV_NONE ? sp->merged : locs[j];
			j++;
		}
		while (j < end)
			scratch[k++] = locs[j++];
		scratch[k++] = c->outer[loop];
		j = end + 1;
		changed = true;
	}
	return changed ? k : UINT32_MAX;
}

/* The new locations of a run of Python frames whose innermost is py (PV_NONE
 * at the leaf) and whose loop is loop: the loop's line alone, and py with
 * the loop's inlined lines inside it.  0, or -1 when out of memory. */
static int split_make(struct pv_profile *p, struct split_ctx *c, uint32_t *outer,
		      struct split_pair *pairs, uint32_t py, uint32_t loop)
{
	struct pv_line lines[SPLIT_MAX_LINES];
	const struct pv_location *l = &p->locations[loop];
	uint32_t n = l->nlines;
	size_t h;

	/* (copied: a new location may move the profile's lines) */
	memcpy(lines, pv_location_lines(p, l), n * sizeof lines[0]);
	if (outer[loop] == PV_NONE) {
		outer[loop] = pv_location_with_lines(p, l->address, l->mapping, lines + n - 1, 1);
		if (outer[loop] == PV_NONE)
			return -1;
	}
	if (py == PV_NONE)
		return 0;
	h = pair_slot(pairs, c->npairs, py, loop);
	/* (a Python frame has one line) */
	if (pairs[h].merged != PV_NONE || 2 * (c->used + 1) > c->npairs || p->locations[py].nlines != 1)
		return 0;
	c->used++;
	const struct pv_location *f = &p->locations[py];

	lines[n - 1] = pv_location_lines(p, f)[0];
	pairs[h] = (struct split_pair){ py, loop, pv_location_with_lines(p, f->address, f->mapping,
									   lines, n) };
	return pairs[h].merged == PV_NONE ? -1 : 0;
}

long pv_split_python_loops(struct pv_profile *p)
{
	size_t nlocs = p->nlocations, npairs = 64;
	uint8_t *kind = calloc(nlocs + 1, 1);
	uint32_t *outer = malloc((nlocs + 1) * sizeof *outer);
	struct split_pair *pairs = NULL;
	struct split_ctx c = { 0 };
	bool any = false;
	long changed = 0;

	while (npairs < 2 * nlocs)
		npairs *= 2;
	pairs = malloc(npairs * sizeof *pairs);
	if (!kind || !outer || !pairs)
		goto oom;
	for (size_t i = 0; i < npairs; i++)
		pairs[i].merged = PV_NONE;
	for (size_t i = 0; i < nlocs; i++) {
		kind[i] = pv_location_is_python(p, (uint32_t)i) ? 1 : loop_with_inlines(p, (uint32_t)i) ? 2 : 0;
		any |= kind[i] == 1;
		outer[i] = PV_NONE;
	}
	c = (struct split_ctx){ kind, outer, pairs, npairs, 0 };
	/* the new locations: of each loop right above a run of Python frames,
	 * with the run's innermost frame (none at the leaf); past a pair per
	 * location, a pair's frame is left as it is (its loop's inlined lines
	 * not shown) rather than the table grown */
	for (size_t s = 0; any && s < p->nsamples; s++) {
		uint32_t n = p->samples[s].nlocs;
		/* (a profile may have no frames at all) */
		const uint32_t *locs = n ? p->stack_locs + p->samples[s].loc_off : NULL;

		for (uint32_t j = 0, start = 0; j + 1 < n; j++) {
			if (kind[locs[j]] != 1) {
				start = j + 1;
				continue;
			}
			if (kind[locs[j + 1]] == 2 &&
			    split_make(p, &c, outer, pairs, start > 0 ? locs[start] : PV_NONE, locs[j + 1]) < 0)
				goto oom;
		}
	}
	/* (the new locations are in no stack yet: kind and outer cover every
	 * location the stacks hold) */
	if (any)
		changed = rewrite_stacks(p, split_stack, &c, "showing the evaluation loop's inlined calls");
	free(kind);
	free(outer);
	free(pairs);
	return changed;
oom:
	free(kind);
	free(outer);
	free(pairs);
	return pv_error("out of memory showing the evaluation loop's inlined calls");
}

/* ---- the waits of Python threads marked ---- */

enum {
	WAIT_NONE,
	WAIT_GIL,      /* taking (or handing over) the GIL */
	WAIT_SLEEP,    /* a sleep the program asked for */
	WAIT_IDLE,     /* select, poll, a lock, a condition: waiting for work */
	WAIT_COND,     /* a condition wait: the GIL's when the interpreter calls it */
	WAIT_CLASS = 7,
	WAIT_PYTHON = 8,   /* a Python frame */
	WAIT_INTERP = 16,  /* in a mapping of the interpreter */
	WAIT_MADE_UP = 32, /* a frame no code is at ("[off-cpu]") */
};

static const char *const wait_labels[] = {
	[WAIT_GIL] = "[waiting for the GIL]", [WAIT_SLEEP] = "[sleeping]", [WAIT_IDLE] = "[idle]",
};

/* The functions of each kind of wait: whole names, and prefixes (ending
 * in '*'): CPython's own (named in a build with symbols) and the C
 * library's. */
static const struct {
	uint8_t wait;
	const char *name;
} wait_names[] = {
	{ WAIT_GIL, "take_gil" }, { WAIT_GIL, "drop_gil" }, { WAIT_GIL, "PyEval_RestoreThread" },
	{ WAIT_GIL, "_PyEval_RestoreThread" }, { WAIT_GIL, "PyEval_AcquireThread" },
	{ WAIT_GIL, "PyEval_AcquireLock" }, { WAIT_GIL, "_PyThreadState_Attach" },
	{ WAIT_GIL, "PyGILState_Ensure" }, { WAIT_GIL, "_PyEval_ReInitThreads" },
	{ WAIT_SLEEP, "clock_nanosleep*" }, { WAIT_SLEEP, "__clock_nanosleep*" },
	{ WAIT_SLEEP, "nanosleep" }, { WAIT_SLEEP, "__nanosleep*" }, { WAIT_SLEEP, "usleep" },
	{ WAIT_SLEEP, "sleep" }, { WAIT_SLEEP, "time_sleep" }, { WAIT_SLEEP, "pysleep" },
	{ WAIT_COND, "pthread_cond_*" }, { WAIT_COND, "__pthread_cond_*" },
	{ WAIT_COND, "___pthread_cond_*" },
	{ WAIT_IDLE, "select" }, { WAIT_IDLE, "__select*" }, { WAIT_IDLE, "pselect*" },
	{ WAIT_IDLE, "__pselect*" }, { WAIT_IDLE, "poll" }, { WAIT_IDLE, "__poll*" },
	{ WAIT_IDLE, "ppoll*" }, { WAIT_IDLE, "__ppoll*" }, { WAIT_IDLE, "epoll_wait*" },
	{ WAIT_IDLE, "epoll_pwait*" }, { WAIT_IDLE, "sem_wait" }, { WAIT_IDLE, "sem_timedwait" },
	{ WAIT_IDLE, "sem_clockwait" }, { WAIT_IDLE, "__new_sem_wait*" },
	{ WAIT_IDLE, "do_futex_wait*" }, { WAIT_IDLE, "PyThread_acquire_lock*" },
	{ WAIT_IDLE, "accept" }, { WAIT_IDLE, "accept4" }, { WAIT_IDLE, "__libc_accept*" },
	{ WAIT_IDLE, "wait4" }, { WAIT_IDLE, "__wait4*" }, { WAIT_IDLE, "waitpid" },
	{ WAIT_IDLE, "__waitpid*" }, { WAIT_IDLE, "waitid" }, { WAIT_IDLE, "pause" },
	{ WAIT_IDLE, "sigtimedwait" }, { WAIT_IDLE, "__sigtimedwait*" },
	{ WAIT_IDLE, "sigwaitinfo" }, { WAIT_IDLE, "sigwait" },
};

static uint8_t wait_of_name(const char *name)
{
	for (size_t i = 0; i < sizeof(wait_names) / sizeof(wait_names[0]); i++) {
		const char *n = wait_names[i].name;
		size_t len = strlen(n);

		if (n[len - 1] == '*' ? strncmp(name, n, len - 1) == 0 : strcmp(name, n) == 0)
			return wait_names[i].wait;
	}
	return WAIT_NONE;
}

/* What each location is for the waits (WAIT_*), and the locations of the
 * three marks after the last one; NULL after saying memory ran out.  The
 * marks are new locations: the array has one entry for each location
 * there was before them, and one more, set when there is no Python. */
static uint8_t *wait_kinds(struct pv_profile *p, uint32_t marks[4])
{
	bool any;
	uint32_t nlocs = (uint32_t)p->nlocations;
	uint8_t *interp = interp_mappings(p, &any), *kind = calloc(nlocs + 1, 1);

	if (!interp || !kind) {
		free(interp);
		free(kind);
		return NULL;
	}
	kind[nlocs] = !any; /* no Python: nothing to mark */
	for (uint32_t i = 0; i < nlocs && any; i++) {
		const struct pv_location *l = &p->locations[i];
		const struct pv_line *lines = pv_location_lines(p, l);

		if (pv_location_is_python(p, i)) {
			kind[i] = WAIT_PYTHON;
			continue;
		}
		if (l->mapping >= p->nmappings) {
			kind[i] = WAIT_MADE_UP;
			continue;
		}
		kind[i] = interp[l->mapping] ? WAIT_INTERP : 0;
		for (uint32_t k = 0; k < l->nlines && (kind[i] & WAIT_CLASS) == 0; k++)
			if (lines[k].function < p->nfunctions)
				kind[i] |= wait_of_name(pv_str(p, p->functions[lines[k].function].name));
	}
	free(interp);
	for (uint32_t w = WAIT_GIL; w <= WAIT_IDLE && !kind[nlocs]; w++) {
		struct pv_line line = { 0 };
		uint32_t name = pv_intern_str(p, wait_labels[w]);

		line.function = name == PV_NONE ? PV_NONE : pv_get_function(p, name, name, 0, 0);
		marks[w] = line.function == PV_NONE ? PV_NONE
			   : pv_get_location(p, UINT64_MAX - 16 - w, PV_NONE);
		if (marks[w] == PV_NONE || pv_set_lines(p, marks[w], &line, 1) < 0) {
			free(kind);
			return NULL;
		}
	}
	return kind;
}

struct wait_ctx {
	const uint8_t *kind;
	uint32_t marks[4];
	bool fold;
};

/* The stack at off, n with the mark of its wait (the frames leafward of
 * its innermost Python frame say which) right under that frame, and with
 * fold the wait's native frames dropped (a made-up leaf, "[off-cpu]",
 * kept): its new length, UINT32_MAX when it has no wait.  A condition
 * wait that the interpreter's own code called is the GIL's. */
static uint32_t mark_stack(const struct pv_profile *p, const void *ctx, uint32_t off, uint32_t n,
			   uint32_t *scratch)
{
	const struct wait_ctx *c = ctx;
	const uint32_t *locs;
	uint32_t inner = 0, k = 0;
	uint8_t w = WAIT_NONE;

	/* (an empty stack: a profile may have no frames at all) */
	if (n == 0)
		return UINT32_MAX;
	locs = p->stack_locs + off;
	while (inner < n && !(c->kind[locs[inner]] & WAIT_PYTHON))
		inner++;
	if (inner == n)
		return UINT32_MAX;
	for (uint32_t j = 0; j < inner; j++) {
		uint8_t cl = c->kind[locs[j]] & WAIT_CLASS;

		if (cl == WAIT_COND)
			cl = (c->kind[locs[j + 1]] & WAIT_INTERP) &&
					     (c->kind[locs[j + 1]] & WAIT_CLASS) != WAIT_COND
				     ? WAIT_GIL : WAIT_IDLE;
		if (cl != WAIT_NONE && (w == WAIT_NONE || cl < w))
			w = cl;
	}
	if (w == WAIT_NONE)
		return UINT32_MAX;
	for (uint32_t j = 0; j < inner; j++)
		if (!c->fold || (c->kind[locs[j]] & WAIT_MADE_UP))
			scratch[k++] = locs[j];
	scratch[k++] = c->marks[w];
	memcpy(scratch + k, locs + inner, (n - inner) * sizeof *scratch);
	return k + n - inner;
}

long pv_mark_python_waits(struct pv_profile *p, bool fold)
{
	struct wait_ctx c = { .fold = fold };
	/* (the marks are locations wait_kinds adds after these) */
	size_t nlocs = p->nlocations;
	uint8_t *kind = wait_kinds(p, c.marks);
	long changed;

	if (!kind)
		return pv_error("out of memory marking the waits of Python threads");
	c.kind = kind;
	changed = kind[nlocs] ? 0
		  : rewrite_stacks(p, mark_stack, &c, "marking the waits of Python threads");
	free(kind);
	return changed;
}
