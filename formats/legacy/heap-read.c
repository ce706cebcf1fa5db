/* heap-read.c - heap profiles: jemalloc's heap_v2 dumps, gperftools' and
 * tcmalloc's "heap profile:" ones (and their growth and fragmentation
 * profiles), Java's heapz
 *
 * A line counts, for one stack, the blocks in use and their bytes, and
 * the blocks allocated since the start and their bytes:
 *
 *     heap profile: INUSE: BYTES [ALLOCS: BYTES] @ TYPE[/RATE]
 *     INUSE: BYTES [ALLOCS: BYTES] @ 0xADDR 0xADDR ...
 *
 * and jemalloc puts the stack first and the counts on the next lines,
 * the whole process's ("t*:") and each thread's ("t0:"...):
 *
 *     heap_v2/RATE
 *       t*: INUSE: BYTES [ALLOCS: BYTES]
 *     @ 0xADDR 0xADDR ...
 *       t*: INUSE: BYTES [ALLOCS: BYTES]
 *       t0: INUSE: BYTES [ALLOCS: BYTES]
 *
 * A sampled profile (heap_v2/RATE, heapz_v2/RATE, heap/2RATE) counts the
 * blocks that were sampled, each byte allocated with the probability
 * 1/RATE (a Poisson process: a block of S bytes is sampled with the
 * probability 1-exp(-S/RATE)).  The counts of a stack are unsampled as
 * jeprof and pprof do, divided by that probability at the stack's mean
 * block size; the sampled counts are kept beside the estimates, as the
 * "samples" that the reports give the noise of (±√n) and the comparisons
 * their variance.
 */
#include "heap-read.h"
#include "legacy-lex.h"
#include "error.h"
#include "units.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* Java's heapz profiles sample every 512 KiB on average. */
#define JAVA_HEAPZ_RATE 524288

struct heap_kind {
	int64_t rate;          /* > 1: sampled, unsampled by it */
	bool alloc;            /* the allocation counts are kept */
	bool growth;           /* a growth or fragmentation profile: "objects", "space" */
	uint32_t nvalues;
	/* The blocks in use and their bytes, as sampled, that the header
	 * counts (promised) and that the records read add up to. */
	bool promised;
	int64_t header[2], read[2];
};

/* Is the line just read the input's last, with no end of line (and no
 * memory map after it)?  Every record of a dump ends with one: such a
 * line is a record cut short, whose counts or stack may be wrong. */
static bool heap_line_cut(const struct lreader *r)
{
	return r->off == r->len && r->map_at == r->len && r->len > 0 && r->buf[r->len - 1] != '\n';
}

/* The records from offset at on were not read: counted as dropped. */
static void heap_drop_from(struct lreader *r, size_t at)
{
	r->p->dropped_bytes += r->len - at;
}

/* Says when the records read do not add up to the header's totals: a
 * dump cut short (a record that holds more than its share is no
 * truncation, but the counts still disagree). */
static void heap_check_totals(const struct lreader *r, const struct heap_kind *k)
{
	char hb[32], rb[32], drop[96] = "";

	if (!k->promised || (k->read[0] == k->header[0] && k->read[1] == k->header[1]))
		return;
	pv_format_bytes(hb, sizeof hb, (double)k->header[1]);
	pv_format_bytes(rb, sizeof rb, (double)k->read[1]);
	if (r->p->dropped_bytes)
		snprintf(drop, sizeof drop, "; the %" PRIu64 " bytes of its last, cut record dropped",
			 r->p->dropped_bytes);
	if (k->read[0] <= k->header[0] && k->read[1] <= k->header[1])
		pv_warn("'%s': heap dump truncated: its header promises %" PRId64 " blocks / %s in use, "
			"read %" PRId64 " / %s (%.1f%% of the bytes)%s: the rest of the file is missing",
			r->name, k->header[0], hb, k->read[0], rb,
			k->header[1] > 0 ? 100.0 * (double)k->read[1] / (double)k->header[1] : 0.0, drop);
	else
		pv_warn("'%s': the heap dump's records add up to %" PRId64 " blocks / %s in use, its "
			"header to %" PRId64 " / %s: the file is damaged", r->name, k->read[0], rb,
			k->header[0], hb);
}

/* Unsample a count and its bytes, as pprof does (truncated).  false when
 * the result cannot be real. */
static bool unsample(int64_t *n, int64_t *s, int64_t rate)
{
	if (*n == 0 || *s == 0) {
		*n = *s = 0;
		return true;
	}
	if (rate <= 1)
		return true;
	double mean = (double)*s / (double)*n, scale = 1 / (1 - exp(-mean / (double)rate));
	double en = (double)*n * scale, es = (double)*s * scale;
	if (!isfinite(en) || !isfinite(es) || fabs(en) > 0x1p62 || fabs(es) > 0x1p62)
		return false;
	*n = (int64_t)en;
	*s = (int64_t)es;
	return true;
}

static int heap_types(struct pv_profile *p, struct heap_kind *k, const char *unit)
{
	bool sampled = k->rate > 1;

	k->nvalues = 0;
	if (sampled) {
		if (pv_add_value_type(p, "samples", "count") == PV_NONE ||
		    (k->alloc && pv_add_value_type(p, "alloc_samples", "count") == PV_NONE))
			return -1;
	}
	if (k->alloc && (pv_add_value_type(p, "alloc_objects", "count") == PV_NONE ||
			 pv_add_value_type(p, "alloc_space", unit) == PV_NONE))
		return -1;
	if (pv_add_value_type(p, k->growth ? "objects" : "inuse_objects", "count") == PV_NONE ||
	    pv_add_value_type(p, k->growth ? "space" : "inuse_space", unit) == PV_NONE)
		return -1;
	k->nvalues = p->nvalues;
	p->period_type.type = pv_intern_str(p, "space");
	p->period_type.unit = pv_intern_str(p, unit);
	p->period = k->rate > 1 ? k->rate : 1;
	return p->period_type.type == PV_NONE || p->period_type.unit == PV_NONE ? -1 : 0;
}

/* The values of a stack's counts, in the order of heap_types. */
static int heap_values(struct lreader *r, size_t no, const struct heap_kind *k, int64_t n1, int64_t s1,
		       int64_t n2, int64_t s2, int64_t *v)
{
	uint32_t i = 0;

	if (n1 == 0 && s1 != 0)
		return legacy_error(r, no, "no blocks in use, but bytes in use");
	if (k->alloc && n2 == 0 && s2 != 0)
		return legacy_error(r, no, "no blocks allocated, but bytes allocated");
	if (k->rate > 1) {
		v[i++] = n1;
		if (k->alloc)
			v[i++] = n2;
	}
	if (!unsample(&n1, &s1, k->rate) || (k->alloc && !unsample(&n2, &s2, k->rate)))
		return legacy_error(r, no, "counts that cannot be unsampled to anything real");
	if (k->alloc) {
		v[i++] = n2;
		v[i++] = s2;
	}
	v[i++] = n1;
	v[i++] = s1;
	return 0;
}

/* "INUSE: BYTES [ALLOCS: BYTES]" at *q. */
static bool counts(const char **q, const char *e, bool negative, int64_t *c)
{
	legacy_skip_blanks(q, e);
	if (!legacy_number(q, e, negative, &c[0]) || !legacy_char(q, e, ':'))
		return false;
	legacy_skip_blanks(q, e);
	if (!legacy_number(q, e, negative, &c[1]) || !legacy_char(q, e, '['))
		return false;
	legacy_skip_blanks(q, e);
	if (!legacy_number(q, e, false, &c[2]) || !legacy_char(q, e, ':'))
		return false;
	legacy_skip_blanks(q, e);
	return legacy_number(q, e, false, &c[3]) && legacy_char(q, e, ']');
}

static bool word_is(const char *s, const char *e, const char *w)
{
	return (size_t)(e - s) == strlen(w) && memcmp(s, w, (size_t)(e - s)) == 0;
}

/* The header: "heap profile: N: S [N: S] @ TYPE/RATE". */
static int heap_header(struct lreader *r, const struct lline *l, struct heap_kind *k)
{
	const char *q = l->s, *ts;
	int64_t c[4], rate = 0;

	while (q < l->e && !(l->e - q >= 13 && memcmp(q, "heap profile:", 13) == 0))
		q++;
	q += 13;
	if (!counts(&q, l->e, false, c) || !legacy_char(&q, l->e, '@'))
		return legacy_error(r, l->no, "a heap profile's header is \"heap profile: N: BYTES [N: BYTES] @ TYPE/RATE\"");
	legacy_skip_blanks(&q, l->e);
	ts = q;
	while (q < l->e && ((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_'))
		q++;
	const char *te = q;
	if (q < l->e && *q == '/') {
		q++;
		if (q < l->e && !legacy_number(&q, l->e, false, &rate))
			return legacy_error(r, l->no, "a heap profile's sampling rate is not a number");
	}
	if (word_is(ts, te, "heap_v2") || word_is(ts, te, "heapz_v2")) {
		k->rate = rate;
	} else if (word_is(ts, te, "heapprofile")) {
		k->rate = 1;
	} else if (word_is(ts, te, "heap")) {
		/* the old header gives twice the mean sampling interval */
		k->rate = rate / 2;
	} else if (word_is(ts, te, "growth") || word_is(ts, te, "growthz") ||
		   word_is(ts, te, "fragmentation") || word_is(ts, te, "fragmentationz")) {
		k->rate = 1;
		k->growth = true;
	} else {
		return legacy_error(r, l->no, "a heap profile of a type profview does not know (it reads heap_v2, heapz_v2, heap, heapprofile, growthz and fragmentationz)");
	}
	/* allocation counts that are not the in-use ones again */
	k->alloc = !k->growth && ((c[2] != c[0] && c[2] != 0) || (c[3] != c[1] && c[3] != 0));
	k->promised = !k->growth;
	k->header[0] = c[0];
	k->header[1] = c[1];
	return 0;
}

int heap_read_legacy(struct lreader *r, const struct lline *first)
{
	struct heap_kind k = { 0 };
	struct lline l;
	int64_t v[PV_MAX_VALUES], c[4];

	if (heap_header(r, first, &k) < 0 || heap_types(r->p, &k, "bytes") < 0)
		return -1;
	for (size_t at = r->off; legacy_next(r, &l); at = r->off) {
		const char *q = l.s;
		if (legacy_blank(&l))
			continue;
		if (heap_line_cut(r)) {
			heap_drop_from(r, at);
			break;
		}
		if (!counts(&q, l.e, true, c) || !legacy_char(&q, l.e, '@'))
			return legacy_error(r, l.no, "not a sample (\"N: BYTES [N: BYTES] @ 0xADDRESS ...\")");
		if (heap_values(r, l.no, &k, c[0], c[1], c[2], c[3], v) < 0 ||
		    legacy_hex_addresses(r, q, l.e, l.no) < 0 || legacy_add_sample(r, ADJUST_ALL, v, k.nvalues) < 0)
			return -1;
		k.read[0] += c[0];
		k.read[1] += c[1];
	}
	heap_check_totals(r, &k);
	return 0;
}

/* "t*: N: S [N: S]" or "tID: ...": is it the process's? */
static bool thread_counts(const struct lline *l, bool *all, int64_t *c)
{
	const char *q = l->s + 1;
	int64_t id;

	if (l->e - l->s < 3 || l->s[0] != 't')
		return false;
	if (*q == '*') {
		*all = true;
		q++;
	} else if (legacy_number(&q, l->e, false, &id)) {
		*all = false;
	} else {
		return false;
	}
	return legacy_char(&q, l->e, ':') && counts(&q, l->e, false, c) && q == l->e;
}

int heap_read_jemalloc(struct lreader *r, const struct lline *first)
{
	struct heap_kind k = { 0 };
	struct lline l;
	const char *q = first->s + 8;
	int64_t v[PV_MAX_VALUES], c[4];
	bool typed = false, pending = false, all;
	size_t stack_at = 0, stack_off = 0;

	if (!legacy_number(&q, first->e, false, &k.rate) || q != first->e || k.rate < 1)
		return legacy_error(r, first->no, "a jemalloc heap profile's header is \"heap_v2/RATE\", RATE a number of bytes");
	for (size_t at = r->off; legacy_next(r, &l); at = r->off) {
		if (l.s == l.e)
			continue;
		if (heap_line_cut(r)) {
			heap_drop_from(r, pending ? stack_off : at);
			pending = false;
			break;
		}
		if (l.s[0] == '@') {
			if (pending)
				return legacy_error(r, stack_at, "a stack without the process's counts (\"t*: ...\")");
			if (!typed && heap_types(r->p, &k, "bytes") < 0)
				return -1;
			typed = true;
			if (legacy_hex_addresses(r, l.s + 1, l.e, l.no) < 0)
				return -1;
			pending = true;
			stack_at = l.no;
			stack_off = at;
			continue;
		}
		if (!thread_counts(&l, &all, c))
			return legacy_error(r, l.no, "neither a stack (\"@ 0xADDRESS ...\") nor its counts (\"t*: N: BYTES [N: BYTES]\")");
		if (!typed && all) {
			/* the header's totals: are allocations counted? */
			k.alloc = c[2] != 0 || c[3] != 0;
			k.promised = true;
			k.header[0] = c[0];
			k.header[1] = c[1];
		} else if (pending && all) {
			if (heap_values(r, l.no, &k, c[0], c[1], c[2], c[3], v) < 0 ||
			    legacy_add_sample(r, ADJUST_ALL, v, k.nvalues) < 0)
				return -1;
			k.read[0] += c[0];
			k.read[1] += c[1];
			pending = false;
		}
	}
	/* a stack whose counts were cut off: not read */
	if (pending && r->map_at == r->len)
		heap_drop_from(r, stack_off);
	else if (pending)
		return pv_error("'%s': line %zu: a stack without the process's counts before the memory map",
				r->name, stack_at);
	if (!typed && heap_types(r->p, &k, "bytes") < 0)
		return -1;
	heap_check_totals(r, &k);
	return 0;
}

static int java_heap_add(struct lreader *r, int64_t bytes, int64_t objects, size_t no)
{
	int64_t v[PV_MAX_VALUES];

	if (objects == 0)
		return legacy_error(r, no, "a sample of no objects");
	if (heap_values(r, no, r->heap, objects, bytes, 0, 0, v) < 0)
		return -1;
	/* ids, not return addresses */
	return legacy_add_sample(r, ADJUST_NONE, v, r->heap->nvalues);
}

int heap_read_java(struct lreader *r, const struct lline *unit)
{
	struct heap_kind k = { .rate = JAVA_HEAPZ_RATE };
	char u[64];
	int ret;
	size_t n = (size_t)(unit->e - unit->s) < sizeof u - 1 ? (size_t)(unit->e - unit->s) : sizeof u - 1;

	memcpy(u, unit->s, n);
	u[n] = '\0';
	if (heap_types(r->p, &k, u) < 0)
		return -1;
	r->heap = &k;
	ret = java_samples(r, java_heap_add);
	r->heap = NULL;
	return ret;
}
