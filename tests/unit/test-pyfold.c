/* test-pyfold.c - the interpreter's frames in Python stacks: folded out
 * between a program's Python frames, alike in merged processes, and with
 * its native frames the evaluation loop's inlined calls put under the
 * Python frame they ran for */
#include "check.h"
#include "error.h"
#include "merge.h"
#include "pyfold.h"
#include "raw-python.h"

static void sink(enum pv_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

static const char *fn_name(const struct pv_profile *p, uint32_t loc)
{
	const struct pv_location *l = &p->locations[loc];

	return l->nlines ? pv_str(p, p->functions[pv_location_lines(p, l)[0].function].name) : "";
}

static uint32_t loc_py(struct pv_profile *p, uint64_t addr, uint32_t m, const char *name,
		       const char *file, int64_t first)
{
	uint32_t loc = pv_get_location(p, addr, m);
	struct pv_line l = { pv_get_function(p, pv_intern_str(p, name), pv_intern_str(p, name),
					     pv_intern_str(p, file), first), 0 };

	pv_set_lines(p, loc, &l, 1);
	return loc;
}

/* A location named name (none when empty), of no file. */
static uint32_t loc_of(struct pv_profile *p, uint64_t addr, uint32_t m, const char *name)
{
	return name[0] ? loc_py(p, addr, m, name, "", 0) : pv_get_location(p, addr, m);
}

/* A sample of value 1 (the profile's one value) of the n locations st,
 * innermost first. */
static void add_stack_sample(struct pv_profile *p, const uint32_t *st, uint32_t n)
{
	struct pv_sample s = { 0 };

	s.values[0] = 1;
	p->nvalues = 1;
	s.loc_off = pv_add_stack(p, st, n);
	s.nlocs = n;
	pv_add_sample(p, &s);
}

/* A profile with the interpreter's library lib (at 0x1000) in mapping
 * *ml and the Python mapping in *mp. */
static struct pv_profile *py_profile(const char *lib, uint32_t *ml, uint32_t *mp)
{
	struct pv_profile *p = pv_profile_new();
	struct pv_mapping m = { .start = 0x1000, .limit = 0x100000 };
	struct pv_mapping py = { .start = RAW_PY_TAG << 48, .limit = (RAW_PY_TAG + 1) << 48,
				 .kind = PV_MAP_PYTHON };

	m.file = pv_intern_str(p, lib);
	py.file = pv_intern_str(p, PV_PYTHON_MAPPING_NAME);
	*ml = pv_add_mapping(p, &m);
	*mp = pv_add_mapping(p, &py);
	return p;
}

static void test_fold(void)
{
	uint32_t ml, mp, mo;
	struct pv_profile *p = py_profile("/usr/lib/libpython3.12.so", &ml, &mp);
	struct pv_mapping other = { .start = 0x200000, .limit = 0x300000 };

	other.file = pv_intern_str(p, "/usr/lib/libm.so.6");
	mo = pv_add_mapping(p, &other);
	uint32_t sqrt_ = loc_of(p, 0x200010, mo, "sqrt");
	uint32_t vcall = loc_of(p, 0x1010, ml, "cfunction_vectorcall_O");
	uint32_t b = loc_of(p, RAW_PY_TAG << 48 | 2 << 24, mp, "inner");
	uint32_t eval1 = loc_of(p, 0x1020, ml, "_PyEval_EvalFrameDefault");
	uint32_t sorted = loc_of(p, 0x1030, ml, "builtin_sorted");
	uint32_t nameless = loc_of(p, 0x1040, ml, "");
	uint32_t a = loc_of(p, RAW_PY_TAG << 48 | 1 << 24, mp, "outer");
	uint32_t eval2 = loc_of(p, 0x1050, ml, "_PyEval_EvalFrameDefault");
	uint32_t main_ = loc_of(p, 0x1060, ml, "main");
	const uint32_t st[] = { sqrt_, vcall, b, eval1, sorted, nameless, a, eval2, main_ };
	const uint32_t want[] = { sqrt_, b, sorted, a, main_ };
	const uint32_t st2[] = { eval1, a, eval2, main_ }; /* the leaf and root stay */
	const uint32_t native[] = { vcall, eval1, main_ }; /* no Python: as it is */

	add_stack_sample(p, st, 9);
	add_stack_sample(p, st, 9);
	add_stack_sample(p, st2, 4);
	add_stack_sample(p, native, 3);
	CHECK_EQ(pv_fold_python_frames(p), 3);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(p->samples[i].nlocs, 5);
		CHECK(memcmp(p->stack_locs + p->samples[i].loc_off, want, sizeof want) == 0);
	}
	CHECK_EQ(p->samples[2].nlocs, 3);
	CHECK_EQ(p->samples[3].nlocs, 3);
	CHECK(pv_is_interpreter_function("_PyEval_EvalFrameDefault"));
	CHECK(pv_is_interpreter_function("method_vectorcall_NOARGS"));
	CHECK(!pv_is_interpreter_function("builtin_sorted"));
	CHECK(!pv_is_interpreter_function("PyObject_Callx"));
	pv_profile_free(p);
}

/* One process's profile: main -> the evaluation loop -> Python function
 * name (its code number 1, on line 7) -> sqrt. */
static struct pv_profile *one_process(const char *name)
{
	uint32_t ml, mp;
	struct pv_profile *p = py_profile("/usr/lib/libpython3.12.so", &ml, &mp);
	const uint32_t st[] = { loc_of(p, 0x1070, ml, "sqrt"),
				loc_py(p, RAW_PY_TAG << 48 | 1 << 24 | 7, mp, name, "/a.py", 5),
				loc_of(p, 0x1020, ml, "_PyEval_EvalFrameDefault"),
				loc_of(p, 0x1010, ml, "PyEval_EvalCode"), loc_of(p, 0x1060, ml, "main") };

	add_stack_sample(p, st, 5);
	return p;
}

/* Two processes whose code number 1 are different functions (a Python
 * frame's address is its process's number of its code): merged, each is
 * still a Python frame of its name, and the interpreter's frames around
 * each are folded alike. */
static void test_merge_python(void)
{
	struct pv_profile *a = one_process("first"), *b = one_process("second");
	const char *want[2][3] = { { "sqrt", "first", "main" }, { "sqrt", "second", "main" } };

	CHECK(pv_merge(a, b, "b") == 0);
	CHECK_EQ(a->nsamples, 2);
	CHECK_EQ(pv_fold_python_frames(a), 2);
	for (size_t i = 0; i < a->nsamples && i < 2; i++) {
		const uint32_t *l = a->stack_locs + a->samples[i].loc_off;

		CHECK_EQ(a->samples[i].nlocs, 3);
		if (a->samples[i].nlocs != 3)
			continue;
		CHECK(pv_location_is_python(a, l[1]));
		for (int k = 0; k < 3; k++)
			CHECK_STR(fn_name(a, l[k]), want[i][k]);
	}
	pv_profile_free(a);
	pv_profile_free(b);
}

/* CPython's shim after a class's __init__ (a code object whose file name
 * is its name, on line 0) is folded out between the caller and
 * Class.__init__; a function of the program named __init__ stays. */
static void test_fold_shim(void)
{
	uint32_t ml, mp;
	struct pv_profile *p = py_profile("/usr/lib/libpython3.13.so", &ml, &mp);

	uint32_t init = loc_py(p, RAW_PY_TAG << 48 | 3 << 24, mp, "Tokenizer.__init__", "/lib/re/_parser.py", 224);
	uint32_t shim = loc_py(p, RAW_PY_TAG << 48 | 2 << 24, mp, "__init__", "__init__", 0);
	uint32_t parse = loc_py(p, RAW_PY_TAG << 48 | 1 << 24, mp, "parse", "/lib/re/_parser.py", 970);
	uint32_t own = loc_py(p, RAW_PY_TAG << 48 | 4 << 24, mp, "__init__", "/app/own.py", 3);
	uint32_t eval = loc_of(p, 0x1050, ml, "_PyEval_EvalFrameDefault");
	uint32_t main_ = loc_of(p, 0x1060, ml, "main");
	const uint32_t st[] = { init, shim, parse, eval, main_ };
	const uint32_t want[] = { init, parse, main_ };
	const uint32_t st2[] = { init, own, parse, eval, main_ };
	const uint32_t want2[] = { init, own, parse, main_ };

	add_stack_sample(p, st, 5);
	add_stack_sample(p, st2, 5);
	CHECK_EQ(pv_fold_python_frames(p), 2);
	CHECK_EQ(p->samples[0].nlocs, 3);
	CHECK(memcmp(p->stack_locs + p->samples[0].loc_off, want, sizeof want) == 0);
	CHECK_EQ(p->samples[1].nlocs, 4);
	CHECK(memcmp(p->stack_locs + p->samples[1].loc_off, want2, sizeof want2) == 0);
	pv_profile_free(p);
}

/* The names of location loc's lines, innermost first, joined by '/'. */
static const char *loc_names(const struct pv_profile *p, uint32_t loc, char *buf, size_t size)
{
	const struct pv_location *l = &p->locations[loc];
	size_t at = 0;

	buf[0] = '\0';
	for (uint32_t k = 0; k < l->nlines && at < size; k++)
		at += (size_t)snprintf(buf + at, size - at, "%s%s", k ? "/" : "",
				       pv_str(p, p->functions[pv_location_lines(p, l)[k].function].name));
	return buf;
}

/* With its native frames, the evaluation loop's location above a run of
 * Python frames is split: the loop's line alone above the run, the helper
 * inlined into it (here import_name) inlined into the run's innermost
 * frame, a Python frame still; at the leaf, where the loop ran the
 * innermost frame's bytecode (its own time), the loop alone above the
 * run. */
static void test_split_loop(void)
{
	uint32_t ml, mp;
	struct pv_profile *p = py_profile("/usr/lib/libpython3.11.so", &ml, &mp);

	uint32_t callee = loc_of(p, 0x1070, ml, "PyImport_ImportModuleLevelObject");
	uint32_t in = loc_of(p, RAW_PY_TAG << 48 | 2 << 24, mp, "inner");
	uint32_t out = loc_of(p, RAW_PY_TAG << 48 | 1 << 24, mp, "outer");
	uint32_t loop = pv_get_location(p, 0x1020, ml), plain = loc_of(p, 0x1030, ml, "_PyEval_EvalFrameDefault");
	uint32_t main_ = loc_of(p, 0x1060, ml, "main");
	const char *names[] = { "import_name", "_PyEval_EvalFrameDefault" };
	struct pv_line lines[2];
	char buf[128];

	for (int i = 0; i < 2; i++)
		lines[i] = (struct pv_line){ pv_get_function(p, pv_intern_str(p, names[i]),
							     pv_intern_str(p, names[i]), 0, 0), 0 };
	pv_set_lines(p, loop, lines, 2);
	const uint32_t st[][5] = { { callee, in, out, loop, main_ }, { in, out, loop, main_ },
				   { callee, loop, main_ }, { callee, in, out, plain, main_ } };
	const uint32_t n[] = { 5, 4, 3, 5 };
	const char *want[][5] = { { "PyImport_ImportModuleLevelObject", "import_name/inner", "outer",
				    "_PyEval_EvalFrameDefault", "main" },
				  { "inner", "outer", "_PyEval_EvalFrameDefault", "main" } };

	for (int i = 0; i < 4; i++)
		add_stack_sample(p, st[i], n[i]);
	CHECK_EQ(pv_split_python_loops(p), 2);
	for (uint32_t i = 0; i < 2; i++) {
		const uint32_t *l = p->stack_locs + p->samples[i].loc_off;

		CHECK_EQ(p->samples[i].nlocs, n[i]);
		for (uint32_t k = 0; k < p->samples[i].nlocs && k < n[i]; k++)
			CHECK_STR(loc_names(p, l[k], buf, sizeof buf), want[i][k]);
		CHECK(pv_location_is_python(p, l[1 - i]));
	}
	/* no Python frame under the loop, a loop with nothing inlined: as
	 * they were */
	for (uint32_t i = 2; i < 4; i++)
		CHECK(p->samples[i].nlocs == n[i] &&
		      memcmp(p->stack_locs + p->samples[i].loc_off, st[i], n[i] * sizeof(uint32_t)) == 0);
	pv_profile_free(p);
}

int main(void)
{
	pv_error_set_sink(sink);
	test_fold();
	test_fold_shim();
	test_merge_python();
	test_split_loop();
	return check_done("test-pyfold");
}
