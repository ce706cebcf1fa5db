/* pyfold.c - the interpreter's own frames folded out of Python stacks
 * (see pyfold.h) */
#include "error.h"
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
	"_Py_call_instrumentation*", "builtin_next",
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

/* What location i is: its outermost line's function decides (the inlined
 * calls go with it).  interp: the mappings that hold the evaluation loop. */
static uint8_t fold_kind(const struct pv_profile *p, uint32_t i, const uint8_t *interp)
{
	const struct pv_location *l = &p->locations[i];
	const struct pv_line *lines = pv_location_lines(p, l);

	if (pv_location_is_python(p, i))
		return FOLD_PYTHON;
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

/* The stack at off, n folded into scratch: its new length. */
static uint32_t fold_stack(const struct pv_profile *p, const uint8_t *kind, uint32_t off, uint32_t n,
			   uint32_t *scratch)
{
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

struct fold_memo {
	uint32_t off, n;       /* the stack folded (n == UINT32_MAX: empty slot) */
	uint32_t new_off, new_n;
};

static uint8_t *fold_kinds(const struct pv_profile *p)
{
	uint8_t *interp = calloc(p->nmappings + 1, 1), *kind = calloc(p->nlocations + 1, 1);
	bool any = false;

	if (!interp || !kind) {
		free(interp);
		free(kind);
		return NULL;
	}
	for (size_t i = 0; i < p->nlocations; i++) {
		const struct pv_location *l = &p->locations[i];
		const struct pv_line *lines = pv_location_lines(p, l);

		any |= pv_location_is_python(p, (uint32_t)i);
		if (l->mapping >= p->nmappings || l->nlines == 0 ||
		    lines[l->nlines - 1].function >= p->nfunctions)
			continue;
		if (strncmp(pv_str(p, p->functions[lines[l->nlines - 1].function].name),
			    "_PyEval_EvalFrameDefault", 24) == 0)
			interp[l->mapping] = 1;
	}
	for (size_t i = 0; any && i < p->nlocations; i++)
		kind[i] = fold_kind(p, (uint32_t)i, interp);
	free(interp);
	if (!any)
		kind[p->nlocations] = 1; /* no Python: nothing to fold */
	return kind;
}

long pv_fold_python_frames(struct pv_profile *p)
{
	uint8_t *kind = fold_kinds(p);
	uint32_t *scratch = NULL;
	struct fold_memo *memo = NULL;
	size_t nslots = 1024, used = 0;
	long changed = 0;

	if (!kind)
		return pv_error("out of memory folding the interpreter's frames");
	if (kind[p->nlocations]) {
		free(kind);
		return 0;
	}
	while (nslots < p->nsamples * 2)
		nslots *= 2;
	scratch = malloc(PV_MAX_DEPTH * sizeof *scratch);
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
				     : fold_stack(p, kind, s->loc_off, s->nlocs, scratch);
			uint32_t off = s->loc_off, n = s->nlocs;

			if (k != UINT32_MAX) {
				off = pv_add_stack(p, scratch, k);
				if (off == UINT32_MAX)
					goto oom;
				n = k;
			}
			memo[h] = (struct fold_memo){ s->loc_off, s->nlocs, off, n };
			used++;
		}
		if (memo[h].new_off != s->loc_off || memo[h].new_n != s->nlocs) {
			s->loc_off = memo[h].new_off;
			s->nlocs = memo[h].new_n;
			changed++;
		}
	}
	(void)used;
	free(kind);
	free(scratch);
	free(memo);
	return changed;
oom:
	free(kind);
	free(scratch);
	free(memo);
	return pv_error("out of memory folding the interpreter's frames");
}
