/* java-read.c - Java's legacy profiles: heapz and contentionz text, and
 * the names of the ids of Java's CPU profiles
 *
 *     --- heapz 1 ---                  --- contentionz 1 ---
 *     format = java                    format = java
 *     resolution = bytes               resolution = microseconds
 *       BYTES OBJECTS @ 0xID ...       sampling period = 100
 *                                        DELAY COUNT @ 0xID ...
 *      0xID function (File.java:LINE)
 *
 * The ids are no addresses: nothing is moved, no mapping placed; the lines
 * after the samples name them.
 */
#include "java-read.h"
#include "heap-read.h"
#include "legacy-lex.h"
#include "error.h"

#include <stdlib.h>
#include <string.h>

/* Java's profiles: "name = value" lines, samples "A B @ ID ...", then
 * what the ids are, " 0xID function (File.java:LINE)". */
static int java_attributes(struct lreader *r, bool heap, int64_t *period, char *unit, size_t nunit)
{
	struct pv_profile *p = r->p;
	struct lline l;
	size_t back;

	for (;;) {
		back = r->off;
		size_t backno = r->lineno;
		if (!legacy_next(r, &l))
			return 0;
		if (l.s == l.e)
			continue;
		const char *eq = memchr(l.s, '=', (size_t)(l.e - l.s));
		if (!eq) {
			r->off = back;
			r->lineno = backno;
			return 0;
		}
		const char *ke = eq, *v = eq + 1;
		while (ke > l.s && legacy_blank_char(ke[-1]))
			ke--;
		legacy_skip_blanks(&v, l.e);
		size_t kl = (size_t)(ke - l.s), vl = (size_t)(l.e - v);
		int64_t x;
		const char *q = v;
#define KEY(w) (kl == sizeof(w) - 1 && memcmp(l.s, w, kl) == 0)
		if (KEY("format")) {
			if (vl != 4 || memcmp(v, "java", 4) != 0)
				return legacy_error(r, l.no, "a Java profile whose format is not java");
		} else if (KEY("resolution")) {
			if (vl == 0 || vl >= nunit)
				return legacy_error(r, l.no, "a resolution that is no unit");
			memcpy(unit, v, vl);
			unit[vl] = '\0';
		} else if (!heap && (KEY("sampling period") || KEY("ms since reset"))) {
			if (!legacy_number(&q, l.e, false, &x) || q != l.e)
				return legacy_error(r, l.no, "an attribute's value is not a number");
			if (KEY("sampling period"))
				*period = x;
			else
				p->duration_ns = x > INT64_MAX / 1000000 ? 0 : x * 1000000;
		} else {
			return legacy_error(r, l.no, "an attribute Java profiles do not have");
		}
#undef KEY
	}
}

/* The function named in a Java location line's text [s, e). */
static int java_location(struct lreader *r, uint64_t id, const char *s, const char *e)
{
	struct pv_profile *p = r->p;
	const char *name = s, *name_end = e, *file = NULL, *file_end = NULL;
	int64_t line = 0;

	if (e > s && e[-1] == ')') {
		const char *open = NULL;
		for (const char *q = e - 1; q > s; q--)
			if (*q == '(' && legacy_blank_char(q[-1])) {
				open = q;
				break;
			}
		if (open) {
			const char *in = open + 1, *in_end = e - 1, *colon = NULL;
			for (const char *q = in_end; q > in; q--)
				if (q[-1] == ':') {
					colon = q - 1;
					break;
				}
			const char *num = colon ? colon + 1 : NULL;
			int64_t ln;
			bool neg = num && num < in_end && *num == '-';
			if (colon && legacy_number(&num, in_end, true, &ln) && num == in_end) {
				file = in;
				file_end = colon;
				line = ln > 0 && !neg ? ln : 0;
			} else {
				file = in;
				file_end = in_end;
				for (const char *q = in; q < in_end; q++)
					if (*q == '/')
						file = q + 1;
			}
			name_end = open;
			while (name_end > name && legacy_blank_char(name_end[-1]))
				name_end--;
		}
	}
	if (!file && legacy_find(s, e, "generated stub/JIT")) {
		name = "STUB";
		name_end = name + 4;
	}
	uint32_t nm = pv_intern(p, name, (size_t)(name_end - name));
	uint32_t fl = file ? pv_intern(p, file, (size_t)(file_end - file)) : 0;
	if (nm == PV_NONE || fl == PV_NONE)
		return -1;
	uint32_t fn = pv_get_function(p, nm, nm, fl, 0);
	uint32_t loc = pv_get_location(p, id, PV_NONE);
	if (fn == PV_NONE || loc == PV_NONE)
		return -1;
	struct pv_line ln = { .function = fn, .line = line };
	return pv_set_lines(p, loc, &ln, 1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int java_locations(struct lreader *r)
{
	struct pv_profile *p = r->p;
	size_t n = p->nlocations;
	uint64_t *ids = malloc((n ? n : 1) * sizeof *ids);
	struct lline l;
	int ret = -1;

	if (!ids)
		return pv_oom();
	/* only the ids the samples use are named */
	for (size_t i = 0; i < n; i++)
		ids[i] = p->locations[i].address;
	qsort(ids, n, sizeof *ids, cmp_u64);
	while (legacy_next(r, &l)) {
		const char *q = l.s;
		uint64_t id;
		if (l.e - q < 3 || q[0] != '0' || q[1] != 'x' || !legacy_hex_number(&q, l.e, &id))
			continue;
		if (q < l.e && !legacy_blank_char(*q))
			continue;
		legacy_skip_blanks(&q, l.e);
		if (bsearch(&id, ids, n, sizeof *ids, cmp_u64) && java_location(r, id, q, l.e) < 0)
			goto out;
	}
	ret = 0;
out:
	free(ids);
	return ret;
}

static int java_contention_add(struct lreader *r, int64_t a, int64_t b, size_t no)
{
	int64_t v[2] = { b, a };
	int64_t period = r->p->period;

	if (period > 0) {
		if (v[0] > LEGACY_MAX_VALUE / period || v[1] > LEGACY_MAX_VALUE / period)
			return legacy_error(r, no, "a count too large to be real");
		v[0] *= period;
		v[1] *= period;
	}
	return legacy_add_sample(r, ADJUST_NONE, v, 2);
}

int legacy_java_locations(struct pv_profile *p, const unsigned char *buf, size_t len, const char *name)
{
	struct lreader r = { .buf = (const char *)buf, .len = len, .map_at = len, .name = name, .p = p };

	if (memchr(buf, '\0', len))
		return pv_error("'%s': the names after the samples hold a NUL byte: the file is damaged", name);
	return java_locations(&r);
}

/* Java's contentionz: "DELAY COUNT @ ID ..." with the delay in the
 * resolution's unit, both scaled by the sampling period. */
int java_read_contention(struct lreader *r)
{
	struct pv_profile *p = r->p;
	char unit[64] = "";
	int64_t period = 0;
	int64_t mult = 1;

	if (java_attributes(r, false, &period, unit, sizeof unit) < 0)
		return -1;
	if (strcmp(unit, "microseconds") == 0)
		mult = 1000;
	else if (strcmp(unit, "milliseconds") == 0)
		mult = 1000000;
	const char *types[] = { "contentions", "count", "delay",
				mult > 1 || strcmp(unit, "nanoseconds") == 0 ? "nanoseconds" : unit };
	if (legacy_types(p, types, 2) < 0)
		return -1;
	if (period) {
		p->period_type = p->sample_types[0];
		p->period = period;
	}
	size_t first = p->nsamples;
	if (java_samples(r, java_contention_add) < 0)
		return -1;
	for (size_t i = first; i < p->nsamples; i++) {
		if (p->samples[i].values[1] > LEGACY_MAX_VALUE / mult)
			return pv_error("'%s': a delay too large to be real", r->name);
		p->samples[i].values[1] *= mult;
	}
	return java_locations(r);
}

int java_read_heap(struct lreader *r, const struct lline *first)
{
	char unit[64] = "bytes";
	int64_t period = 0;

	if (java_attributes(r, true, &period, unit, sizeof unit) < 0)
		return -1;
	struct lline u = { .s = unit, .e = unit + strlen(unit), .no = first->no };
	if (heap_read_java(r, &u) < 0)
		return -1;
	return java_locations(r);
}

