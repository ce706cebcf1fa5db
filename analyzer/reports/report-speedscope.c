/* report-speedscope.c - the samples as a speedscope file (report-speedscope.h)
 *
 * Three steps: the samples kept are grouped by profile (thread) and put in
 * time order; a first pass writes each stored stack they use once, as
 * text, numbering the frames in the order they are first used, and gathers
 * runs of samples of one stack; the second writes the frames, then each
 * profile's runs.  Output goes through a buffer of the report's own: a
 * million samples are tens of megabytes of small numbers.
 */
#include "report.h"
#include "report-speedscope.h"
#include "error.h"
#include "escape.h"
#include "util.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 4096
#define SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* Output, buffered. */
struct jw {
	FILE *f;
	size_t n;
	char buf[1 << 16];
};

static void jw_flush(struct jw *w)
{
	if (w->n)
		fwrite(w->buf, 1, w->n, w->f);
	w->n = 0;
}

/* Room for len more bytes (len <= sizeof buf). */
static char *jw_room(struct jw *w, size_t len)
{
	if (w->n + len > sizeof w->buf)
		jw_flush(w);
	return w->buf + w->n;
}

static void jw_raw(struct jw *w, const char *s, size_t len)
{
	while (len) {
		size_t k = len < sizeof w->buf ? len : sizeof w->buf;
		memcpy(jw_room(w, k), s, k);
		w->n += k;
		s += k;
		len -= k;
	}
}

static void jw_str(struct jw *w, const char *s)
{
	jw_raw(w, s, strlen(s));
}

static void jw_char(struct jw *w, char c)
{
	*jw_room(w, 1) = c;
	w->n++;
}

/* A whole number, in decimal, at q; returns its end. */
static char *put_int(char *q, int64_t v)
{
	char tmp[24], *e = tmp + sizeof tmp, *d = e;
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;

	do {
		*--d = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--d = '-';
	memcpy(q, d, (size_t)(e - d));
	return q + (e - d);
}

static void jw_int(struct jw *w, int64_t v)
{
	char *q = jw_room(w, 24);

	w->n += (size_t)(put_int(q, v) - q);
}

/* A JSON string of s: first made printable UTF-8 (pv_escape: control
 * characters in caret notation, bytes that are not UTF-8 as "\xHH"), then
 * with quotes and backslashes escaped as JSON wants them (pv_json_escape). */
static void jw_string(struct jw *w, const char *s)
{
	char esc[NAME_MAX_LEN], json[PV_JSON_GROWTH * NAME_MAX_LEN];
	size_t n;

	pv_escape(esc, sizeof esc, s);
	n = pv_json_escape(json, sizeof json, esc, false);
	jw_char(w, '"');
	jw_raw(w, json, n);
	jw_char(w, '"');
}

/* A run: consecutive samples of one profile with the same stack. */
struct run {
	size_t text;           /* the stack as written, in sp.text */
	uint32_t len;
	int64_t weight;        /* all of theirs */
};

/* A stored stack of the profile (pv_sample.loc_off, nlocs) as written:
 * "[0,4,7]" in sp.text.  Samples share stored stacks, and a million
 * samples may have a few thousand: each is expanded and written once. */
struct stack_text {
	uint32_t loc_off, nlocs;
	size_t text;
	uint32_t len;
	bool used;
};

/* A profile: its runs (into the runs array) and its total weight. */
struct group {
	size_t first, nruns;
	int64_t total;
};

struct sp {
	struct calltree *t;
	const struct pv_profile *p;
	bool timed;
	size_t ngroups;        /* a profile per thread and one for no thread; one when untimed */
	size_t *order;         /* the kept samples, by group then time */
	size_t *group_at;      /* where each group starts in order (ngroups + 1) */
	struct run *runs; size_t nruns;
	struct group *groups;
	uint32_t *map; size_t cap_map; /* tree frame -> frame written, PV_NONE unused */
	uint32_t *used; size_t nused, cap_used; /* frames written, in order */
	struct stack_text *stacks; size_t nstacks, nslots; /* open addressing */
	char *text; size_t ntext, cap_text;
};

/* The profile sample i goes to, or SIZE_MAX when it is left out. */
static size_t group_of(const struct sp *sp, size_t i)
{
	const struct pv_sample *s = &sp->p->samples[i];

	if ((s->flags & PV_SAMPLE_BASE) || ct_sample_weight(sp->t, s) <= 0)
		return SIZE_MAX;
	if (!sp->timed)
		return 0;
	return s->thread < sp->p->nthreads ? s->thread : sp->p->nthreads;
}

static int cmp_time(const void *a, const void *b, void *ctx)
{
	const struct pv_profile *p = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int64_t ti = p->samples[i].time_ns, tj = p->samples[j].time_ns;

	if (ti != tj)
		return ti < tj ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* The kept samples, grouped (a counting sort keeps the profile's order
 * within a group), each group sorted by time (stable: ties stay in the
 * profile's order). */
static int sort_samples(struct sp *sp)
{
	const struct pv_profile *p = sp->p;
	size_t *fill;

	sp->ngroups = sp->timed ? p->nthreads + 1 : 1;
	sp->group_at = pv_budget_calloc(sp->ngroups + 1, sizeof *sp->group_at);
	fill = calloc(sp->ngroups + 1, sizeof *fill);
	if (!sp->group_at || !fill) {
		free(fill);
		return pv_oom();
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		size_t g = group_of(sp, i);
		if (g != SIZE_MAX)
			sp->group_at[g + 1]++;
	}
	for (size_t g = 0; g < sp->ngroups; g++)
		sp->group_at[g + 1] += sp->group_at[g];
	sp->order = pv_budget_calloc(sp->group_at[sp->ngroups] ? sp->group_at[sp->ngroups] : 1, sizeof *sp->order);
	if (!sp->order) {
		free(fill);
		return pv_oom();
	}
	memcpy(fill, sp->group_at, sp->ngroups * sizeof *fill);
	for (size_t i = 0; i < p->nsamples; i++) {
		size_t g = group_of(sp, i);
		if (g != SIZE_MAX)
			sp->order[fill[g]++] = i;
	}
	free(fill);
	if (!sp->timed)
		return 0;
	for (size_t g = 0; g < sp->ngroups; g++) {
		size_t a = sp->group_at[g], b = sp->group_at[g + 1];
		bool sorted = true;
		/* collectors mostly write a thread's samples in order already */
		for (size_t k = a + 1; k < b && sorted; k++)
			sorted = p->samples[sp->order[k - 1]].time_ns <= p->samples[sp->order[k]].time_ns;
		if (!sorted)
			qsort_r(sp->order + a, b - a, sizeof *sp->order, cmp_time, (void *)p);
	}
	return 0;
}

/* The tree's frames fr[0..n) get a number each, in the order they are
 * first used.  0 or -1 (reported). */
static int use_frames(struct sp *sp, const uint32_t *fr, int n)
{
	size_t have = sp->cap_map;

	if (sp->t->nframes > have) {
		if (pv_grow(&sp->map, &sp->cap_map, sp->t->nframes, sizeof *sp->map) < 0 ||
		    pv_grow(&sp->used, &sp->cap_used, sp->t->nframes, sizeof *sp->used) < 0)
			return -1;
		memset(sp->map + have, 0xff, (sp->cap_map - have) * sizeof *sp->map);
	}
	for (int k = 0; k < n; k++)
		if (sp->map[fr[k]] == PV_NONE) {
			sp->map[fr[k]] = (uint32_t)sp->nused;
			sp->used[sp->nused++] = fr[k];
		}
	return 0;
}

/* The stored stack of sample s as written; NULL after an error (reported). */
static const struct stack_text *stack_of(struct sp *sp, const struct pv_sample *s)
{
	struct stack_text *st;
	const uint32_t *fr;
	size_t mask, i;
	int n;

	if ((sp->nstacks + 1) * 2 > sp->nslots) {
		size_t nn = sp->nslots ? sp->nslots * 2 : 1024;
		struct stack_text *ns = calloc(nn, sizeof *ns);
		if (!ns)
			return pv_oom(), NULL;
		for (size_t k = 0; k < sp->nslots; k++) {
			if (!sp->stacks[k].used)
				continue;
			for (i = pv_mix64(sp->stacks[k].loc_off) & (nn - 1); ns[i].used; i = (i + 1) & (nn - 1))
				;
			ns[i] = sp->stacks[k];
		}
		free(sp->stacks);
		sp->stacks = ns;
		sp->nslots = nn;
	}
	mask = sp->nslots - 1;
	for (i = pv_mix64(s->loc_off) & mask; sp->stacks[i].used; i = (i + 1) & mask)
		if (sp->stacks[i].loc_off == s->loc_off && sp->stacks[i].nlocs == s->nlocs)
			return &sp->stacks[i];
	if ((n = calltree_expand(sp->t, s, &fr)) < 0 || use_frames(sp, fr, n) < 0 ||
	    pv_grow(&sp->text, &sp->cap_text, sp->ntext + 12 * (size_t)n + 2, 1) < 0)
		return NULL;
	st = &sp->stacks[i];
	*st = (struct stack_text){ s->loc_off, s->nlocs, sp->ntext, 0, true };
	{
		char *q = sp->text + sp->ntext;
		*q++ = '[';
		for (int k = 0; k < n; k++) {
			if (k)
				*q++ = ',';
			q = put_int(q, sp->map[fr[k]]);
		}
		*q++ = ']';
		st->len = (uint32_t)(q - (sp->text + sp->ntext));
		sp->ntext += st->len;
	}
	sp->nstacks++;
	return st;
}

/* The first pass: the runs of each group, its total, the frames used.
 * 0 or -1 (reported). */
static int gather(struct sp *sp)
{
	const struct pv_profile *p = sp->p;
	size_t nkept = sp->group_at[sp->ngroups];

	sp->runs = pv_budget_calloc(nkept ? nkept : 1, sizeof *sp->runs);
	sp->groups = pv_budget_calloc(sp->ngroups, sizeof *sp->groups);
	if (!sp->runs || !sp->groups)
		return pv_oom();
	for (size_t g = 0; g < sp->ngroups; g++) {
		struct run *last = NULL;
		sp->groups[g].first = sp->nruns;
		for (size_t k = sp->group_at[g]; k < sp->group_at[g + 1]; k++) {
			const struct pv_sample *s = &p->samples[sp->order[k]];
			const struct stack_text *st = stack_of(sp, s);
			int64_t w = ct_sample_weight(sp->t, s);

			if (!st)
				return -1;
			/* the same frames, from the same stored stack or not; a
			 * run whose weight would overflow is cut */
			if (last && last->len == st->len &&
			    (last->text == st->text || memcmp(sp->text + last->text, sp->text + st->text, st->len) == 0) &&
			    !__builtin_add_overflow(last->weight, w, &last->weight))
				;
			else
				*(last = &sp->runs[sp->nruns++]) = (struct run){ st->text, st->len, w };
			if (__builtin_add_overflow(sp->groups[g].total, w, &sp->groups[g].total))
				sp->groups[g].total = INT64_MAX;
		}
		sp->groups[g].nruns = sp->nruns - sp->groups[g].first;
	}
	return 0;
}

static void write_frames(struct jw *w, struct sp *sp)
{
	char raw[NAME_MAX_LEN];

	jw_str(w, "\"shared\":{\"frames\":[");
	for (size_t k = 0; k < sp->nused; k++) {
		int64_t line;
		const char *file;

		if (k)
			jw_char(w, ',');
		bool kernel = calltree_frame_is_kernel(sp->t, sp->used[k]);
		size_t at = kernel ? CT_KERNEL_MARK_LEN : 0;

		/* a kernel frame marked as the text reports mark it, and its
		 * file, when none is known, the kernel's (as perf names it) */
		memcpy(raw, CT_KERNEL_MARK, at);
		calltree_frame_name(sp->t, sp->used[k], raw + at, sizeof raw - at);
		jw_str(w, "\n{\"name\":");
		jw_string(w, raw);
		file = calltree_frame_file(sp->t, sp->used[k], &line);
		if (kernel && !file[0])
			file = PV_KERNEL_MAPPING_NAME;
		if (file[0]) {
			jw_str(w, ",\"file\":");
			jw_string(w, file);
			if (line > 0) {
				jw_str(w, ",\"line\":");
				jw_int(w, line);
			}
		}
		jw_char(w, '}');
	}
	jw_str(w, "]},\n");
}

/* Profile g's name: its thread's. */
static void write_profile_name(struct jw *w, const struct sp *sp, size_t g)
{
	const struct pv_profile *p = sp->p;
	char buf[NAME_MAX_LEN];

	if (!sp->timed) {
		snprintf(buf, sizeof buf, "all samples");
	} else if (g >= p->nthreads) {
		snprintf(buf, sizeof buf, "unknown thread");
	} else {
		const struct pv_thread *th = &p->threads[g];
		if (pv_str(p, th->name)[0])
			snprintf(buf, sizeof buf, "thread %s (%" PRIu32 ")", pv_str(p, th->name), th->tid);
		else
			snprintf(buf, sizeof buf, "thread %" PRIu32, th->tid);
	}
	jw_string(w, buf);
}

static void write_profile(struct jw *w, struct sp *sp, size_t g)
{
	const struct group *gr = &sp->groups[g];

	jw_str(w, "{\"type\":\"sampled\",\"name\":");
	write_profile_name(w, sp, g);
	jw_str(w, ",\"unit\":");
	jw_str(w, calltree_value_unit(sp->t) == CT_UNIT_NS ? "\"nanoseconds\""
		  : calltree_value_unit(sp->t) == CT_UNIT_BYTES ? "\"bytes\"" : "\"none\"");
	jw_str(w, ",\"startValue\":0,\"endValue\":");
	jw_int(w, gr->total);
	jw_str(w, ",\n\"samples\":[");
	for (size_t r = gr->first; r < gr->first + gr->nruns; r++) {
		jw_str(w, r > gr->first ? ",\n" : "\n");
		jw_raw(w, sp->text + sp->runs[r].text, sp->runs[r].len);
	}
	jw_str(w, "],\n\"weights\":[");
	for (size_t r = gr->first; r < gr->first + gr->nruns; r++) {
		if (r > gr->first)
			jw_str(w, (r - gr->first) % 16 ? "," : ",\n");
		jw_int(w, sp->runs[r].weight);
	}
	jw_str(w, "]}");
}

int report_speedscope(FILE *out, const struct pv_report_ctx *c)
{
	struct calltree *t = c->t;
	struct sp sp = { .t = t, .p = t->p, .timed = t->p->timed };
	struct jw *w = malloc(sizeof *w);
	size_t written = 0;
	int ret = -1;

	if (!w)
		return pv_oom();
	w->f = out;
	w->n = 0;
	if (sort_samples(&sp) < 0 || gather(&sp) < 0)
		goto out;

	jw_str(w, "{\"$schema\":\"" SCHEMA "\",\n\"exporter\":\"profview " PROFVIEW_VERSION "\",\n\"name\":");
	jw_string(w, c->title[0] ? c->title : "profile");
	jw_str(w, ",\n\"activeProfileIndex\":0,\n");
	write_frames(w, &sp);
	jw_str(w, "\"profiles\":[");
	for (size_t g = 0; g < sp.ngroups; g++) {
		/* threads without samples have no profile */
		if (!sp.groups[g].nruns)
			continue;
		if (written++)
			jw_str(w, ",\n");
		write_profile(w, &sp, g);
	}
	/* no samples at all: an empty profile, so that the file still opens */
	if (!written)
		jw_str(w, "{\"type\":\"sampled\",\"name\":\"no samples\",\"unit\":\"none\","
			  "\"startValue\":0,\"endValue\":0,\"samples\":[],\"weights\":[]}");
	jw_str(w, "]}\n");
	ret = 0;
out:
	jw_flush(w);
	free(w);
	free(sp.order);
	free(sp.group_at);
	free(sp.runs);
	free(sp.groups);
	free(sp.map);
	free(sp.used);
	free(sp.stacks);
	free(sp.text);
	return ret;
}
