/* filter.c - pprof-style filters over the profile model */
#include "filter.h"
#include "names.h"
#include "error.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static const char *const kind_names[PV_FILTER_KINDS] = {
	"focus", "ignore", "hide", "show", "show-from", "prune-from",
};

const char *pv_filter_name(enum pv_filter_kind kind)
{
	return kind < PV_FILTER_KINDS ? kind_names[kind] : "?";
}

int pv_filters_add(struct pv_filters *f, enum pv_filter_kind kind, const char *re, const char **err)
{
	static char msg[256];
	int rc;

	*err = NULL;
	if (pv_grow(&f->res[kind], &f->cap[kind], f->n[kind] + 1, sizeof *f->res[kind]) < 0)
		return -1;
	struct pv_filter_re *r = &f->res[kind][f->n[kind]];
	rc = regcomp(&r->re, re, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		regerror(rc, &r->re, msg, sizeof msg);
		*err = msg;
		return -1;
	}
	r->text = re;
	f->n[kind]++;
	return 0;
}

bool pv_filters_any(const struct pv_filters *f)
{
	for (int k = 0; k < PV_FILTER_KINDS; k++)
		if (f->n[k])
			return true;
	return false;
}

void pv_filters_free(struct pv_filters *f)
{
	for (int k = 0; k < PV_FILTER_KINDS; k++) {
		for (size_t i = 0; i < f->n[k]; i++)
			regfree(&f->res[k][i].re);
		free(f->res[k]);
		f->res[k] = NULL;
		f->n[k] = f->cap[k] = 0;
	}
}

static bool match_any(const struct pv_filters *f, int kind, const char *s)
{
	for (size_t i = 0; i < f->n[kind]; i++)
		if (regexec(&f->res[kind][i].re, s, 0, NULL, 0) == 0)
			return true;
	return false;
}

/* pprof's simplification for prune-from: the name without its parameter
 * list, cut at the first '(' that does not start "(anonymous namespace)"
 * or belong to "operator()".  Into buf (n bytes). */
static const char *simplify_name(const char *name, char *buf, size_t n)
{
	const char *s = name[0] == '.' ? name + 1 : name;

	for (const char *c = s; *c; c++) {
		if (strncmp(c, "(anonymous namespace)", 21) == 0) {
			c += 20;
			continue;
		}
		if (strncmp(c, "operator()", 10) == 0) {
			c += 9;
			continue;
		}
		if (*c == '(') {
			size_t len = (size_t)(c - s);
			if (len >= n)
				len = n - 1;
			memcpy(buf, s, len);
			buf[len] = '\0';
			return buf;
		}
	}
	return s;
}

/* Per-function and per-mapping match bits, one per kind. */
#define BIT(k) (1u << (k))

/* Per-location outcome. */
enum {
	LOC_FOCUS = 1u << 0,   /* matches focus, or no focus given, and not ignored */
	LOC_IGNORE = 1u << 1,
	LOC_HIDDEN = 1u << 2,  /* no frame left after hide/show */
	LOC_SHOW_FROM = 1u << 3,
	LOC_PRUNE_FROM = 1u << 4,
};

struct filterer {
	struct pv_profile *p;
	const struct pv_filters *f;
	struct pv_filter_stats *st;
	uint8_t *fn_bits, *map_bits, *loc_bits;
	struct pv_line *buf;
	size_t cap_buf;
};

static int match_functions(struct filterer *x)
{
	struct pv_profile *p = x->p;
	const struct pv_filters *f = x->f;
	char simple[1024];

	x->fn_bits = pv_budget_calloc(p->nfunctions + 1, 1);
	x->map_bits = pv_budget_calloc(p->nmappings + 1, 1);
	if (!x->fn_bits || !x->map_bits)
		return pv_oom();
	for (size_t i = 0; i < p->nfunctions; i++) {
		const char *name = pv_str(p, p->functions[i].name);
		const char *file = pv_str(p, p->functions[i].filename);
		/* the name as reports show it, too: "std::vector::push_back" */
		char *shown = names_shorten(name, NAMES_SHORT);
		if (!shown)
			return -1;
		for (int k = 0; k < PV_FILTER_PRUNE_FROM; k++)
			if (f->n[k] && (match_any(f, k, name) || match_any(f, k, file) ||
					(strcmp(shown, name) != 0 && match_any(f, k, shown))))
				x->fn_bits[i] |= BIT(k);
		free(shown);
		if (f->n[PV_FILTER_PRUNE_FROM] && name[0] &&
		    match_any(f, PV_FILTER_PRUNE_FROM, simplify_name(name, simple, sizeof simple)))
			x->fn_bits[i] |= BIT(PV_FILTER_PRUNE_FROM);
	}
	for (size_t i = 0; i < p->nmappings; i++) {
		const char *file = pv_str(p, p->mappings[i].file);
		for (int k = 0; k < PV_FILTER_PRUNE_FROM; k++)
			if (f->n[k] && match_any(f, k, file))
				x->map_bits[i] |= BIT(k);
	}
	return 0;
}

/* Decide what each location is, and rewrite its lines as hide, show,
 * show-from and prune-from say (as pprof does, per location: a location's
 * frames are the same in every stack it is part of). */
static int judge_locations(struct filterer *x)
{
	struct pv_profile *p = x->p;
	const struct pv_filters *f = x->f;
	bool *matched = x->st->matched;

	x->loc_bits = pv_budget_calloc(p->nlocations + 1, 1);
	if (!x->loc_bits)
		return pv_oom();
	for (size_t li = 0; li < p->nlocations; li++) {
		const struct pv_location *l = &p->locations[li];
		uint8_t mb = l->mapping == PV_NONE ? 0 : x->map_bits[l->mapping];
		uint8_t any = mb, bits = 0;
		uint32_t n = l->nlines;
		bool changed = false;

		if (pv_grow(&x->buf, &x->cap_buf, n + 1, sizeof *x->buf) < 0)
			return -1;
		memcpy(x->buf, pv_location_lines(p, l), n * sizeof *x->buf);
		for (uint32_t j = 0; j < n; j++)
			any |= x->fn_bits[x->buf[j].function];

		if (f->n[PV_FILTER_IGNORE] && (any & BIT(PV_FILTER_IGNORE))) {
			bits |= LOC_IGNORE;
			matched[PV_FILTER_IGNORE] = true;
		} else if (!f->n[PV_FILTER_FOCUS] || (any & BIT(PV_FILTER_FOCUS))) {
			bits |= LOC_FOCUS;
			matched[PV_FILTER_FOCUS] = true;
		}
		if (f->n[PV_FILTER_HIDE] && (any & BIT(PV_FILTER_HIDE))) {
			uint32_t k = 0;
			matched[PV_FILTER_HIDE] = true;
			if (!(mb & BIT(PV_FILTER_HIDE)))
				for (uint32_t j = 0; j < n; j++)
					if (!(x->fn_bits[x->buf[j].function] & BIT(PV_FILTER_HIDE)))
						x->buf[k++] = x->buf[j];
			n = k;
			changed = true;
			if (n == 0)
				bits |= LOC_HIDDEN;
		}
		if (f->n[PV_FILTER_SHOW]) {
			uint32_t k = n;
			if (!(mb & BIT(PV_FILTER_SHOW))) {
				k = 0;
				for (uint32_t j = 0; j < n; j++)
					if (x->fn_bits[x->buf[j].function] & BIT(PV_FILTER_SHOW))
						x->buf[k++] = x->buf[j];
			}
			changed |= k != n;
			n = k;
			if (n == 0)
				bits |= LOC_HIDDEN;
			else
				matched[PV_FILTER_SHOW] = true;
		}
		if (f->n[PV_FILTER_SHOW_FROM]) {
			if (mb & BIT(PV_FILTER_SHOW_FROM)) {
				bits |= LOC_SHOW_FROM;
			} else {
				/* Keep the frames up to the outermost match. */
				for (uint32_t j = n; j-- > 0;)
					if (x->fn_bits[x->buf[j].function] & BIT(PV_FILTER_SHOW_FROM)) {
						bits |= LOC_SHOW_FROM;
						changed |= j + 1 != n;
						n = j + 1;
						break;
					}
			}
			if (bits & LOC_SHOW_FROM)
				matched[PV_FILTER_SHOW_FROM] = true;
		}
		if (f->n[PV_FILTER_PRUNE_FROM]) {
			/* Drop the frames inside the innermost match. */
			for (uint32_t j = 0; j < n; j++)
				if (x->fn_bits[x->buf[j].function] & BIT(PV_FILTER_PRUNE_FROM)) {
					bits |= LOC_PRUNE_FROM;
					matched[PV_FILTER_PRUNE_FROM] = true;
					if (j) {
						memmove(x->buf, x->buf + j, (n - j) * sizeof *x->buf);
						n -= j;
						changed = true;
					}
					break;
				}
		}
		x->loc_bits[li] = bits;
		if (changed && pv_set_lines(p, (uint32_t)li, x->buf, n) < 0)
			return -1;
	}
	return 0;
}

/* The filtered stack of locs[0..n) into out (leaf first); its length, or
 * -1 when the sample is dropped. */
static int64_t filter_stack(const struct filterer *x, const uint32_t *locs, uint32_t n, uint32_t *out)
{
	const struct pv_filters *f = x->f;
	bool by_name = f->n[PV_FILTER_FOCUS] || f->n[PV_FILTER_IGNORE] || f->n[PV_FILTER_HIDE] ||
		       f->n[PV_FILTER_SHOW];
	uint32_t k = 0;

	if (by_name) {
		bool focused = false;
		for (uint32_t i = 0; i < n; i++) {
			uint8_t b = x->loc_bits[locs[i]];
			if (b & LOC_IGNORE)
				return -1;
			focused |= (b & LOC_FOCUS) != 0;
		}
		if (!focused)
			return -1;
		for (uint32_t i = 0; i < n; i++)
			if (!(x->loc_bits[locs[i]] & LOC_HIDDEN))
				out[k++] = locs[i];
		if (k == 0)
			return -1;
	} else if (n) {
		memcpy(out, locs, n * sizeof *out);
		k = n;
	}
	if (f->n[PV_FILTER_SHOW_FROM]) {
		uint32_t i = k;
		while (i-- > 0 && !(x->loc_bits[out[i]] & LOC_SHOW_FROM))
			;
		if (i == UINT32_MAX)
			return -1;
		k = i + 1;
	}
	if (f->n[PV_FILTER_PRUNE_FROM]) {
		for (uint32_t i = 0; i < k; i++)
			if (x->loc_bits[out[i]] & LOC_PRUNE_FROM) {
				memmove(out, out + i, (k - i) * sizeof *out);
				k -= i;
				break;
			}
	}
	return k;
}

struct memo {
	uint32_t old_n, new_off, new_n; /* new_off PV_NONE: not known; DROPPED */
};
#define DROPPED (UINT32_MAX - 1)

static int rewrite_samples(struct filterer *x)
{
	struct pv_profile *p = x->p;
	uint32_t vc = pv_find_value_type(p, "samples");
	struct memo *memo = NULL;
	uint32_t *stack = NULL, *tmp = NULL;
	size_t nstack = 0, cap_stack = 0, cap_tmp = 0, kept = 0;
	uint64_t flagged_before = 0, flagged_after = 0;
	int ret = -1;

	if (vc == PV_NONE && p->nvalues)
		vc = 0;
	memo = malloc((p->nstack_locs + 1) * sizeof *memo);
	if (!memo) {
		pv_oom();
		goto out;
	}
	for (size_t i = 0; i <= p->nstack_locs; i++)
		memo[i].new_off = PV_NONE;
	for (size_t si = 0; si < p->nsamples; si++) {
		struct pv_sample s = p->samples[si];
		int64_t c = vc == PV_NONE ? 1 : s.values[vc];
		struct memo *m = s.loc_off <= p->nstack_locs ? &memo[s.loc_off] : NULL;
		struct memo mine;

		x->st->before += c;
		flagged_before += (s.flags & PV_SAMPLE_TRUNCATED) != 0;
		if (!m || m->new_off == PV_NONE || m->old_n != s.nlocs) {
			if (pv_grow(&tmp, &cap_tmp, s.nlocs + 1, sizeof *tmp) < 0)
				goto out;
			int64_t k = filter_stack(x, pv_sample_locs(p, &s), s.nlocs, tmp);
			mine = (struct memo){ s.nlocs, DROPPED, 0 };
			if (k >= 0) {
				if (nstack + (size_t)k >= UINT32_MAX - 2) {
					pv_error("too many stack frames in the profile");
					goto out;
				}
				if (pv_grow(&stack, &cap_stack, nstack + (size_t)k + 1, sizeof *stack) < 0)
					goto out;
				memcpy(stack + nstack, tmp, (size_t)k * sizeof *stack);
				mine.new_off = (uint32_t)nstack;
				mine.new_n = (uint32_t)k;
				nstack += (size_t)k;
			}
			if (m && m->new_off == PV_NONE)
				*m = mine;
		} else {
			mine = *m;
		}
		if (mine.new_off == DROPPED)
			continue;
		s.loc_off = mine.new_off;
		s.nlocs = mine.new_n;
		p->samples[kept++] = s;
		x->st->after += c;
		flagged_after += (s.flags & PV_SAMPLE_TRUNCATED) != 0;
	}
	free(p->stack_locs);
	p->stack_locs = stack;
	p->nstack_locs = nstack;
	p->cap_stack_locs = cap_stack;
	stack = NULL;
	p->nsamples = kept;
	/* The incomplete stacks the reports warn about: those still here. */
	if (p->truncated == flagged_before)
		p->truncated = flagged_after;
	else if (p->truncated > kept)
		p->truncated = kept;
	ret = 0;
out:
	free(memo);
	free(stack);
	free(tmp);
	return ret;
}

int pv_filters_apply(struct pv_profile *p, const struct pv_filters *f, struct pv_filter_stats *st)
{
	struct pv_filter_stats dummy;
	struct filterer x = { .p = p, .f = f, .st = st ? st : &dummy };
	int ret = -1;

	memset(x.st, 0, sizeof *x.st);
	if (!pv_filters_any(f)) {
		int64_t total = 0;
		uint32_t vc = pv_find_value_type(p, "samples");
		if (vc == PV_NONE && p->nvalues)
			vc = 0;
		for (size_t i = 0; i < p->nsamples; i++)
			total += vc == PV_NONE ? 1 : p->samples[i].values[vc];
		x.st->before = x.st->after = total;
		return 0;
	}
	if (match_functions(&x) < 0 || judge_locations(&x) < 0 || rewrite_samples(&x) < 0)
		goto out;
	ret = 0;
out:
	free(x.fn_bits);
	free(x.map_bits);
	free(x.loc_bits);
	free(x.buf);
	return ret;
}

void pv_filters_warn(const struct pv_filters *f, const struct pv_filter_stats *st)
{
	for (int k = 0; k < PV_FILTER_KINDS; k++)
		if (f->n[k] && !st->matched[k])
			pv_warn("--%s expression%s matched no frames", kind_names[k],
				f->n[k] > 1 ? "s" : "");
}

char *pv_filters_describe(const struct pv_filters *f, char *buf, size_t n)
{
	size_t len = 0;

	if (n == 0)
		return buf;
	buf[0] = '\0';
	for (int k = 0; k < PV_FILTER_KINDS; k++)
		for (size_t i = 0; i < f->n[k]; i++) {
			int w = snprintf(buf + len, n - len, "%s%s=%s", len ? " " : "", kind_names[k],
					 f->res[k][i].text);
			if (w < 0 || (size_t)w >= n - len)
				return buf;
			len += (size_t)w;
		}
	return buf;
}

void pv_keep_threads(struct pv_profile *p, const uint32_t *tids, size_t ntids)
{
	size_t k = 0;

	for (size_t i = 0; i < p->nsamples; i++) {
		uint32_t th = p->samples[i].thread;
		bool keep = false;
		for (size_t j = 0; j < ntids && th < p->nthreads && !keep; j++)
			keep = p->threads[th].tid == tids[j];
		if (keep)
			p->samples[k++] = p->samples[i];
	}
	p->nsamples = k;
}

void pv_keep_processes(struct pv_profile *p, const uint32_t *pids, size_t npids)
{
	size_t k = 0;

	for (size_t i = 0; i < p->nsamples; i++) {
		uint32_t th = p->samples[i].thread;
		uint32_t pr = th < p->nthreads ? p->threads[th].process : PV_NONE;
		uint32_t pid = p->nprocesses == 0 ? p->pid : pr < p->nprocesses ? p->processes[pr].pid : 0;
		bool keep = false;
		for (size_t j = 0; j < npids && pid && !keep; j++)
			keep = pid == pids[j];
		if (keep)
			p->samples[k++] = p->samples[i];
	}
	p->nsamples = k;
}

/* Has p a kernel mapping? */
static bool has_kernel(const struct pv_profile *p)
{
	for (size_t i = 0; i < p->nmappings; i++)
		if (p->mappings[i].kind == PV_MAP_KERNEL)
			return true;
	return false;
}

int64_t pv_hide_kernel(struct pv_profile *p)
{
	uint32_t *tmp = NULL;
	size_t cap_tmp = 0;
	int64_t changed = 0;
	/* the last stack made anew, for the samples that share its old one */
	uint32_t was_off = UINT32_MAX, was_n = 0, made_off = 0, made_n = 0;

	if (!has_kernel(p))
		return 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		struct pv_sample *s = &p->samples[i];
		const uint32_t *locs = pv_sample_locs(p, s);
		uint32_t lead = 0, k = 0;

		s->flags &= ~(uint32_t)PV_SAMPLE_KERNEL;
		while (lead < s->nlocs && pv_location_is_kernel(p, locs[lead]))
			lead++;
		/* The kernel frames are the innermost ones: the stack goes on
		 * where they end.  Elsewhere too, the stack is made anew. */
		for (uint32_t j = lead; j < s->nlocs; j++)
			k += !pv_location_is_kernel(p, locs[j]);
		if (k == s->nlocs)
			continue;
		changed++;
		if (k == s->nlocs - lead) {
			s->loc_off += lead;
			s->nlocs -= lead;
			continue;
		}
		if (s->loc_off == was_off && s->nlocs == was_n) {
			s->loc_off = made_off;
			s->nlocs = made_n;
			continue;
		}
		if (pv_grow(&tmp, &cap_tmp, s->nlocs + 1, sizeof *tmp) < 0)
			goto fail;
		k = 0;
		for (uint32_t j = lead; j < s->nlocs; j++)
			if (!pv_location_is_kernel(p, locs[j]))
				tmp[k++] = locs[j];
		uint32_t off = pv_add_stack(p, tmp, k);
		if (off == UINT32_MAX)
			goto fail;
		was_off = s->loc_off;
		was_n = s->nlocs;
		s->loc_off = made_off = off;
		s->nlocs = made_n = k;
	}
	free(tmp);
	return changed;
fail:
	free(tmp);
	return -1;
}
