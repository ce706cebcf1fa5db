/* profile.c - the profile model: storage, interning and lookups */
#include "profile.h"
#include "error.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const void *data, size_t len, uint64_t h)
{
	const unsigned char *s = data;

	for (size_t i = 0; i < len; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define HASH_SEED 0xcbf29ce484222325ULL

/* An open-addressing table of index+1 values; callers supply the hash and
 * an equality test.  Grows at 50% load. */
typedef bool (*slot_eq)(const struct pv_profile *p, uint32_t idx, const void *key);
typedef uint64_t (*slot_hash)(const struct pv_profile *p, uint32_t idx);

static uint32_t slot_find(const struct pv_profile *p, uint32_t *slots, size_t nslots,
			  uint64_t h, slot_eq eq, const void *key, size_t *where)
{
	size_t mask = nslots - 1, i = h & mask;

	while (slots[i]) {
		if (eq(p, slots[i] - 1, key)) {
			*where = i;
			return slots[i] - 1;
		}
		i = (i + 1) & mask;
	}
	*where = i;
	return PV_NONE;
}

static int slot_rehash(struct pv_profile *p, uint32_t **slots, size_t *nslots, size_t count,
		       slot_hash hf)
{
	size_t n = *nslots ? *nslots : 64;
	uint32_t *ns;

	if (*nslots && (count + 1) * 2 <= *nslots)
		return 0;
	while ((count + 1) * 2 > n)
		n *= 2;
	if (pv_budget_charge((n - *nslots) * sizeof *ns) < 0)
		return -1;
	ns = calloc(n, sizeof *ns);
	if (!ns)
		return pv_oom();
	for (size_t i = 0; i < count; i++) {
		size_t j = hf(p, (uint32_t)i) & (n - 1);
		while (ns[j])
			j = (j + 1) & (n - 1);
		ns[j] = (uint32_t)i + 1;
	}
	free(*slots);
	*slots = ns;
	*nslots = n;
	return 0;
}

/* Strings */

struct strkey {
	const char *s;
	size_t len;
};

static uint64_t str_hash_idx(const struct pv_profile *p, uint32_t i)
{
	const char *s = p->strings.strs[i];
	return hash_bytes(s, strlen(s), HASH_SEED);
}

static bool str_eq(const struct pv_profile *p, uint32_t i, const void *key)
{
	const struct strkey *k = key;
	const char *s = p->strings.strs[i];
	return strncmp(s, k->s, k->len) == 0 && s[k->len] == '\0';
}

uint32_t pv_intern(struct pv_profile *p, const char *s, size_t len)
{
	struct pv_strtab *t = &p->strings;
	struct strkey key = { s, len };
	uint64_t h = hash_bytes(s, len, HASH_SEED);
	size_t where;
	uint32_t idx;
	char *copy;

	/* A string may not contain NUL: cut it there. */
	const char *nul = memchr(s, '\0', len);
	if (nul) {
		len = (size_t)(nul - s);
		key.len = len;
		h = hash_bytes(s, len, HASH_SEED);
	}
	if (slot_rehash(p, &t->slots, &t->nslots, t->n, str_hash_idx) < 0)
		return PV_NONE;
	idx = slot_find(p, t->slots, t->nslots, h, str_eq, &key, &where);
	if (idx != PV_NONE)
		return idx;
	if (t->n >= UINT32_MAX - 1 || pv_grow(&t->strs, &t->cap, t->n + 1, sizeof *t->strs) < 0)
		return PV_NONE;
	/* malloc's own 16 bytes a block with it */
	if (pv_budget_charge(len + 1 + 16) < 0)
		return PV_NONE;
	copy = malloc(len + 1);
	if (!copy) {
		pv_oom();
		return PV_NONE;
	}
	memcpy(copy, s, len);
	copy[len] = '\0';
	t->strs[t->n] = copy;
	t->slots[where] = (uint32_t)t->n + 1;
	return (uint32_t)t->n++;
}

uint32_t pv_intern_str(struct pv_profile *p, const char *s)
{
	return pv_intern(p, s ? s : "", s ? strlen(s) : 0);
}

struct pv_profile *pv_profile_new(void)
{
	struct pv_profile *p = calloc(1, sizeof *p);

	if (!p) {
		pv_oom();
		return NULL;
	}
	if (pv_intern(p, "", 0) != 0) {
		pv_profile_free(p);
		return NULL;
	}
	p->program = 0;
	p->source_format = 0;
	p->system_cpu_ns = -1;
	return p;
}

void pv_profile_free(struct pv_profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->strings.n; i++)
		free(p->strings.strs[i]);
	free(p->strings.strs);
	free(p->strings.slots);
	free(p->mappings);
	free(p->functions);
	free(p->locations);
	free(p->lines);
	free(p->samples);
	free(p->stack_locs);
	free(p->threads);
	free(p->processes);
	free(p->segments);
	free(p->unprofiled);
	free(p->loc_slots);
	free(p->fn_slots);
	free(p->thr_slots);
	free(p);
}

/* Value types */

uint32_t pv_add_value_type(struct pv_profile *p, const char *type, const char *unit)
{
	uint32_t t, u;

	if (p->nvalues >= PV_MAX_VALUES) {
		pv_error("too many sample value types (at most %d)", PV_MAX_VALUES);
		return PV_NONE;
	}
	t = pv_intern_str(p, type);
	u = pv_intern_str(p, unit);
	if (t == PV_NONE || u == PV_NONE)
		return PV_NONE;
	p->sample_types[p->nvalues].type = t;
	p->sample_types[p->nvalues].unit = u;
	return p->nvalues++;
}

uint32_t pv_find_value_type(const struct pv_profile *p, const char *type)
{
	for (uint32_t i = 0; i < p->nvalues; i++)
		if (strcmp(pv_str(p, p->sample_types[i].type), type) == 0)
			return i;
	return PV_NONE;
}

/* Mappings */

uint32_t pv_add_mapping(struct pv_profile *p, const struct pv_mapping *m)
{
	if (pv_grow(&p->mappings, &p->cap_mappings, p->nmappings + 1, sizeof *m) < 0)
		return PV_NONE;
	p->mappings[p->nmappings] = *m;
	return (uint32_t)p->nmappings++;
}

uint8_t pv_mapping_kind_of(const char *path)
{
	if (strcmp(path, "[vdso]") == 0)
		return PV_MAP_VDSO;
	if (strcmp(path, PV_KERNEL_MAPPING_NAME) == 0 || strncmp(path, "[kernel", 7) == 0)
		return PV_MAP_KERNEL;
	if (path[0] == '\0' || strncmp(path, "//anon", 6) == 0 || strncmp(path, "[anon", 5) == 0)
		return PV_MAP_ANON;
	if (strcmp(path, PV_PYTHON_MAPPING_NAME) == 0)
		return PV_MAP_PYTHON;
	if (path[0] == '[')
		return PV_MAP_SPECIAL;
	return PV_MAP_FILE;
}

uint32_t pv_find_mapping(const struct pv_profile *p, uint64_t addr)
{
	/* The newest mapping wins: a later record describes the address space
	 * as it was later (a library loaded where another was unloaded). */
	for (size_t i = p->nmappings; i-- > 0;)
		if (addr >= p->mappings[i].start && addr < p->mappings[i].limit)
			return (uint32_t)i;
	return PV_NONE;
}

/* Functions */

struct fnkey {
	uint32_t name, system_name, filename;
};

static uint64_t fn_hash3(uint32_t a, uint32_t b, uint32_t c)
{
	return pv_mix64(((uint64_t)a << 32 | b) ^ pv_mix64(c + 0x9e3779b97f4a7c15ULL));
}

static uint64_t fn_hash_idx(const struct pv_profile *p, uint32_t i)
{
	const struct pv_function *f = &p->functions[i];
	return fn_hash3(f->name, f->system_name, f->filename);
}

static bool fn_eq(const struct pv_profile *p, uint32_t i, const void *key)
{
	const struct fnkey *k = key;
	const struct pv_function *f = &p->functions[i];
	return f->name == k->name && f->system_name == k->system_name && f->filename == k->filename;
}

uint32_t pv_get_function(struct pv_profile *p, uint32_t name, uint32_t system_name,
			 uint32_t filename, int64_t start_line)
{
	struct fnkey key = { name, system_name, filename };
	size_t where;
	uint32_t idx;

	if (slot_rehash(p, &p->fn_slots, &p->nfn_slots, p->nfunctions, fn_hash_idx) < 0)
		return PV_NONE;
	idx = slot_find(p, p->fn_slots, p->nfn_slots, fn_hash3(name, system_name, filename),
			fn_eq, &key, &where);
	if (idx != PV_NONE)
		return idx;
	if (pv_grow(&p->functions, &p->cap_functions, p->nfunctions + 1, sizeof *p->functions) < 0)
		return PV_NONE;
	p->functions[p->nfunctions] = (struct pv_function){ name, system_name, filename, start_line };
	p->fn_slots[where] = (uint32_t)p->nfunctions + 1;
	return (uint32_t)p->nfunctions++;
}

/* Locations */

struct lockey {
	uint64_t address;
	uint32_t mapping;
};

static uint64_t loc_hash(uint64_t address, uint32_t mapping)
{
	return pv_mix64(address ^ ((uint64_t)mapping << 48));
}

static uint64_t loc_hash_idx(const struct pv_profile *p, uint32_t i)
{
	return loc_hash(p->locations[i].address, p->locations[i].mapping);
}

static bool loc_eq(const struct pv_profile *p, uint32_t i, const void *key)
{
	const struct lockey *k = key;
	return p->locations[i].address == k->address && p->locations[i].mapping == k->mapping;
}

uint32_t pv_get_location(struct pv_profile *p, uint64_t address, uint32_t mapping)
{
	struct lockey key = { address, mapping };
	size_t where;
	uint32_t idx;

	if (slot_rehash(p, &p->loc_slots, &p->nloc_slots, p->nlocations, loc_hash_idx) < 0)
		return PV_NONE;
	idx = slot_find(p, p->loc_slots, p->nloc_slots, loc_hash(address, mapping), loc_eq, &key,
			&where);
	if (idx != PV_NONE)
		return idx;
	if (pv_grow(&p->locations, &p->cap_locations, p->nlocations + 1, sizeof *p->locations) < 0)
		return PV_NONE;
	p->locations[p->nlocations] = (struct pv_location){ address, mapping, 0, 0 };
	p->loc_slots[where] = (uint32_t)p->nlocations + 1;
	return (uint32_t)p->nlocations++;
}

bool pv_location_has_lines(const struct pv_profile *p, uint32_t loc, const struct pv_line *lines,
			   uint32_t n)
{
	const struct pv_location *l = &p->locations[loc];
	const struct pv_line *have = pv_location_lines(p, l);

	if (l->nlines != n)
		return false;
	for (uint32_t i = 0; i < n; i++)
		if (have[i].function != lines[i].function || have[i].line != lines[i].line)
			return false;
	return true;
}

int pv_set_lines(struct pv_profile *p, uint32_t loc, const struct pv_line *lines, uint32_t n)
{
	struct pv_location *l;

	if (loc >= p->nlocations)
		return pv_error("internal error: location %u out of range", loc);
	if (n > PV_MAX_DEPTH)
		n = PV_MAX_DEPTH; /* the innermost: what a stack may hold */
	if (p->nlines + n > UINT32_MAX)
		return pv_error("too many source lines in the profile");
	if (pv_grow(&p->lines, &p->cap_lines, p->nlines + n, sizeof *p->lines) < 0)
		return -1;
	l = &p->locations[loc];
	memcpy(p->lines + p->nlines, lines, n * sizeof *lines);
	l->line_off = (uint32_t)p->nlines;
	l->nlines = n;
	p->nlines += n;
	return 0;
}

/* Samples */

uint32_t pv_add_stack(struct pv_profile *p, const uint32_t *locs, uint32_t n)
{
	size_t off = p->nstack_locs;

	if (off + n >= UINT32_MAX) {
		pv_error("too many stack frames in the profile");
		return UINT32_MAX;
	}
	if (pv_grow(&p->stack_locs, &p->cap_stack_locs, off + n, sizeof *locs) < 0)
		return UINT32_MAX;
	if (n)
		memcpy(p->stack_locs + off, locs, n * sizeof *locs);
	p->nstack_locs += n;
	return (uint32_t)off;
}

int pv_add_stack_capped(struct pv_profile *p, struct pv_sample *s, const uint32_t *locs,
			uint32_t n, bool cut)
{
	size_t frames = 0;
	uint32_t keep = 0;

	/* the innermost locations whose lines fit; the first always does
	 * (a location has at most PV_MAX_DEPTH lines: pv_location_with_lines) */
	for (; keep < n; keep++) {
		uint32_t l = locs[keep];
		uint32_t nl = l < p->nlocations ? p->locations[l].nlines : 0;
		frames += nl ? nl : 1;
		if (frames > PV_MAX_DEPTH && keep > 0)
			break;
	}
	if (keep < n || cut) {
		s->flags |= PV_SAMPLE_TRUNCATED;
		p->stacks_cut++;
	}
	s->nlocs = keep;
	s->loc_off = pv_add_stack(p, locs, keep);
	return s->loc_off == UINT32_MAX ? -1 : 0;
}

int pv_add_sample(struct pv_profile *p, const struct pv_sample *s)
{
	if (pv_grow(&p->samples, &p->cap_samples, p->nsamples + 1, sizeof *s) < 0)
		return -1;
	p->samples[p->nsamples++] = *s;
	if (s->flags & PV_SAMPLE_TRUNCATED)
		p->truncated++;
	return 0;
}

/* Is sample b the same as a in all but its values? */
static bool same_but_values(const struct pv_profile *p, const struct pv_sample *a,
			    const struct pv_sample *b)
{
	if (a->nlocs != b->nlocs || a->thread != b->thread || a->flags != b->flags ||
	    a->time_ns != b->time_ns || a->end_ns != b->end_ns)
		return false;
	return a->loc_off == b->loc_off || a->nlocs == 0 ||
	       memcmp(p->stack_locs + a->loc_off, p->stack_locs + b->loc_off,
		      a->nlocs * sizeof *p->stack_locs) == 0;
}

int pv_add_sample_merged(struct pv_profile *p, const struct pv_sample *s)
{
	struct pv_sample *last = p->nsamples ? &p->samples[p->nsamples - 1] : NULL;
	int64_t sum[PV_MAX_VALUES];

	/* A sample counted as truncated stays one, so that the count of
	 * those is one of samples. */
	if (!last || (s->flags & (PV_SAMPLE_TRUNCATED | PV_SAMPLE_LEAF_CANDIDATE)) ||
	    !same_but_values(p, last, s))
		return pv_add_sample(p, s);
	for (uint32_t v = 0; v < p->nvalues; v++)
		if (__builtin_add_overflow(last->values[v], s->values[v], &sum[v]))
			return pv_add_sample(p, s);
	memcpy(last->values, sum, p->nvalues * sizeof *sum);
	/* (the flags are the same: both carry variances or neither) */
	if (s->flags & PV_SAMPLE_VAR)
		for (uint32_t v = 0; v < p->nvalues; v++)
			last->var[v] += s->var[v];
	/* its stack back, when it was the last stored */
	if (s->loc_off != last->loc_off && (size_t)s->loc_off + s->nlocs == p->nstack_locs) {
		p->nstack_locs -= s->nlocs;
	}
	return 0;
}

double pv_sample_var(const struct pv_sample *s, uint32_t v, uint32_t vc)
{
	int64_t c = vc < PV_MAX_VALUES ? s->values[vc] : 1;
	double x;

	if (v >= PV_MAX_VALUES)
		return c > 0 ? (double)c : vc < PV_MAX_VALUES ? 0 : 1;
	if (s->flags & PV_SAMPLE_VAR)
		return s->var[v];
	x = (double)s->values[v];
	return c > 1 ? x * x / (double)c : x * x;
}

static uint64_t thr_key(uint32_t process, uint32_t tid)
{
	return pv_mix64((uint64_t)process << 32 | tid);
}

static uint64_t thr_hash_idx(const struct pv_profile *p, uint32_t i)
{
	return thr_key(p->threads[i].process, p->threads[i].tid);
}

static bool thr_eq(const struct pv_profile *p, uint32_t i, const void *key)
{
	const uint32_t *k = key;

	return p->threads[i].tid == k[0] && p->threads[i].process == k[1];
}

uint32_t pv_get_process_thread(struct pv_profile *p, uint32_t process, uint32_t tid, uint32_t name)
{
	uint32_t key[2] = { tid, process };
	size_t where;
	uint32_t idx;

	if (slot_rehash(p, &p->thr_slots, &p->nthr_slots, p->nthreads, thr_hash_idx) < 0)
		return PV_NONE;
	idx = slot_find(p, p->thr_slots, p->nthr_slots, thr_key(process, tid), thr_eq, key, &where);
	if (idx != PV_NONE) {
		if (name != PV_NONE && name != 0)
			p->threads[idx].name = name;
		return idx;
	}
	if (pv_grow(&p->threads, &p->cap_threads, p->nthreads + 1, sizeof *p->threads) < 0)
		return PV_NONE;
	p->threads[p->nthreads] = (struct pv_thread){ .tid = tid, .name = name == PV_NONE ? 0 : name,
						      .cpu_ns = -1, .process = process };
	p->thr_slots[where] = (uint32_t)p->nthreads + 1;
	return (uint32_t)p->nthreads++;
}

uint32_t pv_get_thread(struct pv_profile *p, uint32_t tid, uint32_t name)
{
	return pv_get_process_thread(p, PV_NONE, tid, name);
}

void pv_threads_in_process(struct pv_profile *p, uint32_t process)
{
	for (size_t i = 0; i < p->nthreads; i++)
		p->threads[i].process = process;
	/* hashed by process too: made again at the next look-up */
	free(p->thr_slots);
	p->thr_slots = NULL;
	p->nthr_slots = 0;
}

int pv_add_segment(struct pv_profile *p, const struct pv_segment *seg)
{
	for (size_t i = 0; i < p->nsegments; i++) {
		struct pv_segment *g = &p->segments[i];
		if (g->run_key == seg->run_key && g->split_ns == seg->split_ns &&
		    g->number == seg->number) {
			/* another process's part of the same window */
			if (seg->missing > g->missing)
				g->missing = seg->missing;
			if (__builtin_add_overflow(g->missing_samples, seg->missing_samples,
						   &g->missing_samples))
				g->missing_samples = UINT64_MAX;
			if (!g->missing_cause)
				g->missing_cause = seg->missing_cause;
			return 0;
		}
	}
	if (pv_grow(&p->segments, &p->cap_segments, p->nsegments + 1, sizeof *p->segments) < 0)
		return -1;
	p->segments[p->nsegments++] = *seg;
	return 0;
}

uint32_t pv_add_process(struct pv_profile *p, const struct pv_process *proc)
{
	if (p->nprocesses >= UINT32_MAX - 1 ||
	    pv_grow(&p->processes, &p->cap_processes, p->nprocesses + 1, sizeof *p->processes) < 0)
		return PV_NONE;
	p->processes[p->nprocesses] = *proc;
	return (uint32_t)p->nprocesses++;
}

void pv_python_unread_add(struct pv_profile *p, uint32_t pid, bool same)
{
	uint32_t listed = p->python_unread < PV_PY_UNREAD_PIDS ? p->python_unread : PV_PY_UNREAD_PIDS;

	for (uint32_t i = 0; same && pid != 0 && i < listed; i++)
		if (p->python_unread_pids[i] == pid)
			return;
	if (p->python_unread < PV_PY_UNREAD_PIDS)
		p->python_unread_pids[p->python_unread] = pid;
	p->python_unread++;
}

int pv_add_unprofiled(struct pv_profile *p, const struct pv_unprofiled *u)
{
	if (pv_grow(&p->unprofiled, &p->cap_unprofiled, p->nunprofiled + 1, sizeof *p->unprofiled) < 0)
		return -1;
	p->unprofiled[p->nunprofiled++] = *u;
	return 0;
}

const char *pv_thread_process_name(const struct pv_profile *p, uint32_t th, char *buf, size_t n)
{
	const struct pv_process *pr;

	buf[0] = '\0';
	if (th >= p->nthreads || p->threads[th].process >= p->nprocesses)
		return buf;
	pr = &p->processes[p->threads[th].process];
	snprintf(buf, n, "pid %" PRIu32 " (%s)", pr->pid, pv_str(p, pr->name));
	return buf;
}

bool pv_profile_has_lifetimes(const struct pv_profile *p)
{
	return p->timed && pv_find_value_type(p, "alloc_space") != PV_NONE;
}

int64_t pv_total(const struct pv_profile *p, uint32_t v)
{
	int64_t t = 0;

	if (v >= p->nvalues)
		return 0;
	for (size_t i = 0; i < p->nsamples; i++)
		t += p->samples[i].values[v];
	return t;
}

int pv_profile_check_sums(const struct pv_profile *p, const char *what)
{
	for (uint32_t v = 0; v < p->nvalues; v++) {
		int64_t sum = 0;
		for (size_t i = 0; i < p->nsamples; i++) {
			int64_t x = p->samples[i].values[v];
			if (x < 0)
				return pv_error("'%s': sample %zu has a negative '%s' value", what, i + 1,
						pv_str(p, p->sample_types[v].type));
			if (__builtin_add_overflow(sum, x, &sum))
				return pv_error("'%s': the samples' '%s' values add up to more than %" PRId64 ", which profview cannot count",
						what, pv_str(p, p->sample_types[v].type), INT64_MAX);
		}
	}
	return 0;
}

int pv_profile_check_indices(const struct pv_profile *p, const char *what)
{
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pv_sample *s = &p->samples[i];
		if ((size_t)s->loc_off + s->nlocs > p->nstack_locs)
			return pv_error("%s: sample %zu: stack out of range", what, i);
		for (uint32_t j = 0; j < s->nlocs; j++)
			if (p->stack_locs[s->loc_off + j] >= p->nlocations)
				return pv_error("%s: sample %zu: location out of range", what, i);
		if (s->thread != PV_NONE && s->thread >= p->nthreads)
			return pv_error("%s: sample %zu: thread out of range", what, i);
	}
	for (size_t i = 0; i < p->nsegments; i++)
		if (p->segments[i].missing_cause >= p->strings.n)
			return pv_error("%s: segment %zu: string out of range", what, i);
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].process != PV_NONE && p->threads[i].process >= p->nprocesses)
			return pv_error("%s: thread %zu: process out of range", what, i);
	for (size_t i = 0; i < p->nprocesses; i++)
		if (p->processes[i].name >= p->strings.n || p->processes[i].program >= p->strings.n)
			return pv_error("%s: process %zu: string out of range", what, i);
	for (size_t i = 0; i < p->nlocations; i++) {
		const struct pv_location *l = &p->locations[i];
		if (l->mapping != PV_NONE && l->mapping >= p->nmappings)
			return pv_error("%s: location %zu: mapping out of range", what, i);
		if ((size_t)l->line_off + l->nlines > p->nlines)
			return pv_error("%s: location %zu: lines out of range", what, i);
		for (uint32_t j = 0; j < l->nlines; j++)
			if (p->lines[l->line_off + j].function >= p->nfunctions)
				return pv_error("%s: location %zu: function out of range", what, i);
	}
	for (size_t i = 0; i < p->nfunctions; i++) {
		const struct pv_function *f = &p->functions[i];
		if (f->name >= p->strings.n || f->system_name >= p->strings.n ||
		    f->filename >= p->strings.n)
			return pv_error("%s: function %zu: string out of range", what, i);
	}
	return 0;
}

int pv_profile_validate(const struct pv_profile *p, const char *what)
{
	if (pv_profile_check_indices(p, what) < 0)
		return -1;
	return pv_profile_check_sums(p, what);
}
