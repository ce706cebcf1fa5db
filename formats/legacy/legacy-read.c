/* legacy-read.c - read pprof's legacy text profiles into the profile model
 *
 * Each of them is lines of text: a first line that names the format, the
 * samples, one a line ("COUNTS @ 0xADDR 0xADDR ...", the leaf first) or a
 * block of lines (a thread's stack), and at the end the memory map of the
 * process after a sentinel line ("MAPPED_LIBRARIES:", "--- Memory map:
 * ---"), from which the addresses are symbolized.  The addresses are
 * return addresses: each is moved back by one into its call instruction,
 * as pprof and jeprof do.  What each format's values are, and their
 * names, is pprof's.
 */
#include "legacy-read.h"
#include "legacy-lex.h"
#include "heap-read.h"
#include "java-read.h"
#include "error.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DETECT_SPAN 65536

enum legacy_kind {
	LK_NONE, LK_HEAP, LK_JEMALLOC, LK_COUNT, LK_THREAD, LK_CONTENTION, LK_JAVA_HEAP,
};

/* "TYPE profile: total N", the whole line */
static bool count_header(const struct lline *l)
{
	const char *q = l->s, *sp;

	while (q < l->e && !legacy_blank_char(*q))
		q++;
	if (q == l->s)
		return false;
	sp = q;
	legacy_skip_blanks(&q, l->e);
	if (q == sp || (size_t)(l->e - q) < 16 || memcmp(q, "profile: total ", 15) != 0)
		return false;
	q += 15;
	int64_t n;
	return legacy_number(&q, l->e, false, &n) && q == l->e;
}

static enum legacy_kind kind_of(const struct lline *l)
{
	if (legacy_starts(l, "heap_v2/"))
		return LK_JEMALLOC;
	const char *h = legacy_find(l->s, l->e, "heap profile:");
	if (h) {
		/* its counts follow: a folded stack of a frame so named does not pass */
		h += 13;
		legacy_skip_blanks(&h, l->e);
		if (h < l->e && *h >= '0' && *h <= '9')
			return LK_HEAP;
	}
	if (legacy_starts(l, "--- threadz ") || legacy_starts(l, "--- Thread "))
		return LK_THREAD;
	if (legacy_starts(l, "--- contentionz ") || legacy_starts(l, "--- mutex:") ||
	    legacy_starts(l, "--- contention:"))
		return LK_CONTENTION;
	if (legacy_starts(l, "--- heapz 1 ---"))
		return LK_JAVA_HEAP;
	if (count_header(l))
		return LK_COUNT;
	return LK_NONE;
}

/* The first line that is not blank or a comment. */
static bool first_line(struct lreader *r, struct lline *l)
{
	while (legacy_next(r, l))
		if (!legacy_blank(l))
			return true;
	return false;
}

bool legacy_detect(const unsigned char *buf, size_t len)
{
	struct lreader r = { .buf = (const char *)buf, .len = len };
	struct lline l;

	r.map_at = len < DETECT_SPAN ? len : DETECT_SPAN;
	if (memchr(buf, '\0', r.map_at))
		return false;
	/* a line cut by the span is judged as far as it goes */
	return first_line(&r, &l) && kind_of(&l) != LK_NONE;
}

/* "N @ 0xADDR ...": the Go runtime's goroutine and threadcreate profiles. */
static int read_count(struct lreader *r, const struct lline *first)
{
	struct pv_profile *p = r->p;
	const char *sp = first->s;
	struct lline l;

	while (sp < first->e && !legacy_blank_char(*sp))
		sp++;
	uint32_t type = pv_intern(p, first->s, (size_t)(sp - first->s));
	if (type == PV_NONE || pv_add_value_type(p, pv_str(p, type), "count") == PV_NONE)
		return -1;
	p->period_type = p->sample_types[0];
	p->period = 1;
	while (legacy_next(r, &l)) {
		const char *q = l.s;
		int64_t n;
		if (legacy_blank(&l))
			continue;
		if (legacy_starts(&l, "---"))
			break;
		if (!legacy_number(&q, l.e, false, &n) || !legacy_char(&q, l.e, '@'))
			return legacy_error(r, l.no, "not a sample (\"COUNT @ 0xADDRESS ...\")");
		if (legacy_hex_addresses(r, q, l.e, l.no) < 0)
			return -1;
		if (r->naddrs == 0)
			return legacy_error(r, l.no, "a sample with no addresses");
		if (legacy_add_sample(r, ADJUST_ALL, &n, 1) < 0)
			return -1;
	}
	return 0;
}

/* "--- threadz N ---", then per thread "--- Thread ID (name: NAME/TID)
 * stack: ---" and the lines of its stack (every 0x number in them, the
 * program counter first); "same as previous thread" counts the thread
 * with the stack before. */
static int read_thread(struct lreader *r, const struct lline *first)
{
	static const char *const types[] = { "thread", "count" };
	struct pv_profile *p = r->p;
	struct lline l = *first;
	bool more = true;

	if (legacy_types(p, types, 1) < 0)
		return -1;
	p->period_type = p->sample_types[0];
	p->period = 1;
	if (legacy_starts(first, "--- threadz ")) {
		while ((more = legacy_next(r, &l)) && !legacy_starts(&l, "-"))
			;
	}
	while (more) {
		bool same = false;
		if (legacy_starts(&l, "---- no stack trace for"))
			break;
		if (!legacy_starts(&l, "--- Thread "))
			return legacy_error(r, l.no, "not the start of a thread's stack (\"--- Thread ...\")");
		while ((more = legacy_next(r, &l))) {
			if (l.s == l.e)
				continue;
			if (legacy_starts(&l, "---"))
				break;
			if (legacy_contains(&l, "same as previous thread"))
				same = true;
			else if (legacy_hex_addresses(r, l.s, l.e, l.no) < 0)
				return -1;
		}
		if (same || r->naddrs == 0) {
			r->naddrs = 0;
			r->cut = false;
			if (p->nsamples)
				p->samples[p->nsamples - 1].values[0]++;
			continue;
		}
		/* the leaf twice, from the signal context and on the stack (its
		 * caller, moved back by one, one before it): kept once, as pprof
		 * does */
		int64_t one = 1;
		if (r->naddrs > 1 && r->addrs[0] == r->addrs[1]) {
			memmove(r->addrs + 1, r->addrs + 2, (r->naddrs - 2) * sizeof *r->addrs);
			r->naddrs--;
		}
		if (legacy_add_sample(r, ADJUST_CALLERS, &one, 1) < 0)
			return -1;
	}
	return 0;
}

/* "--- contentionz 1 ---" (or Go's "--- mutex:", "--- contention:"),
 * "name = value" lines, then "DELAY COUNT @ 0xADDR ..." per stack: the
 * delay in cycles, scaled to nanoseconds by cycles/second, both by the
 * sampling period. */
static int read_contention(struct lreader *r, const struct lline *first, bool *java)
{
	static const char *const types[] = { "contentions", "count", "delay", "nanoseconds" };
	struct pv_profile *p = r->p;
	struct lline l;
	int64_t hz = 0, period = 1;
	bool more;

	(void)first;
	if (legacy_types(p, types, 2) < 0)
		return -1;
	p->period_type = p->sample_types[0];
	while ((more = legacy_next(r, &l))) {
		if (legacy_blank(&l))
			continue;
		if (legacy_starts(&l, "---"))
			break;
		const char *eq = memchr(l.s, '=', (size_t)(l.e - l.s));
		if (!eq)
			break;
		const char *ke = eq, *v = eq + 1;
		while (ke > l.s && legacy_blank_char(ke[-1]))
			ke--;
		legacy_skip_blanks(&v, l.e);
		size_t kl = (size_t)(ke - l.s);
		int64_t x = 0;
		const char *q = v;
#define KEY(w) (kl == sizeof(w) - 1 && memcmp(l.s, w, kl) == 0)
		if (KEY("format") || KEY("resolution")) {
			*java = true;
			return 0;
		}
		if (!KEY("discarded samples") &&
		    (!legacy_number(&q, l.e, false, &x) || q != l.e))
			return legacy_error(r, l.no, "an attribute's value is not a number");
		if (KEY("cycles/second"))
			hz = x;
		else if (KEY("sampling period"))
			period = x;
		else if (KEY("ms since reset"))
			p->duration_ns = x > INT64_MAX / 1000000 ? 0 : x * 1000000;
		else if (!KEY("discarded samples"))
			return legacy_error(r, l.no, "an attribute contention profiles do not have");
#undef KEY
	}
	p->period = period;
	for (; more; more = legacy_next(r, &l)) {
		const char *q = l.s;
		int64_t delay, count, v[2];
		if (legacy_starts(&l, "---"))
			break;
		if (legacy_blank(&l))
			continue;
		if (!legacy_number(&q, l.e, false, &delay) || !(legacy_skip_blanks(&q, l.e), true) ||
		    !legacy_number(&q, l.e, false, &count) || !legacy_char(&q, l.e, '@'))
			return legacy_error(r, l.no, "not a sample (\"DELAY COUNT @ 0xADDRESS ...\")");
		if (period > 0) {
			double d = hz > 0 ? (double)delay * (double)period / ((double)hz / 1e9) : (double)delay;
			if (!(d < (double)LEGACY_MAX_VALUE * 1024) || count > LEGACY_MAX_VALUE / (period > 1 ? period : 1))
				return legacy_error(r, l.no, "a delay or count too large to be real");
			delay = (int64_t)d;
			count *= period;
		}
		v[0] = count;
		v[1] = delay;
		if (legacy_hex_addresses(r, q, l.e, l.no) < 0 || legacy_add_sample(r, ADJUST_ALL, v, 2) < 0)
			return -1;
	}
	return 0;
}

/* Where the memory map starts: the first line holding a sentinel. */
static size_t find_map(const char *buf, size_t len)
{
	static const char *const sentinels[] = { "MAPPED_LIBRARIES:", "--- Memory map: ---" };
	size_t best = len;

	for (size_t i = 0; i < 2; i++) {
		const char *s = legacy_find(buf, buf + len, sentinels[i]);
		if (s && (size_t)(s - buf) < best) {
			while (s > buf && s[-1] != '\n')
				s--;
			best = (size_t)(s - buf);
		}
	}
	return best;
}

struct pv_profile *legacy_read(const unsigned char *buf, size_t len, const char *name)
{
	struct lreader r = { .buf = (const char *)buf, .len = len, .name = name };
	struct lline first;
	enum legacy_kind kind;
	int ret = -1;
	static const char *const formats[] = {
		[LK_HEAP] = "heap profile", [LK_JEMALLOC] = "jemalloc heap profile",
		[LK_COUNT] = "Go count profile", [LK_THREAD] = "thread profile",
		[LK_CONTENTION] = "contention profile", [LK_JAVA_HEAP] = "Java heap profile",
	};

	r.p = pv_profile_new();
	r.locs = malloc(PV_MAX_DEPTH * sizeof *r.locs);
	if (!r.p || !r.locs) {
		pv_oom();
		goto out;
	}
	if (memchr(buf, '\0', len)) {
		pv_error("'%s': a text profile with a NUL byte in it: the file is damaged", name);
		goto out;
	}
	r.map_at = len;
	if (!first_line(&r, &first) || (kind = kind_of(&first)) == LK_NONE) {
		pv_error("'%s' is not a profile profview can read", name);
		goto out;
	}
	bool java = kind == LK_JAVA_HEAP;
	if (!java) {
		size_t off = r.off, no = r.lineno;
		r.map_at = find_map(r.buf, len);
		if (r.map_at < off) {
			pv_error("'%s': line %zu: the memory map starts on the first line", name, first.no);
			goto out;
		}
		if (legacy_read_map(&r) < 0)
			goto out;
		r.off = off;
		r.lineno = no;
	}
	switch (kind) {
	case LK_HEAP:
		r.drop_allocator = true;
		ret = heap_read_legacy(&r, &first);
		break;
	case LK_JEMALLOC:
		r.drop_allocator = true;
		ret = heap_read_jemalloc(&r, &first);
		break;
	case LK_COUNT:
		ret = read_count(&r, &first);
		break;
	case LK_THREAD:
		ret = read_thread(&r, &first);
		break;
	case LK_CONTENTION: {
		size_t off = r.off, no = r.lineno;
		ret = read_contention(&r, &first, &java);
		if (ret == 0 && java) {
			/* Java's: read again, without the memory map */
			struct pv_profile *q = pv_profile_new();
			if (!q) {
				ret = pv_oom();
				break;
			}
			pv_profile_free(r.p);
			r.p = q;
			r.off = off;
			r.lineno = no;
			r.map_at = len;
			r.naddrs = 0;
			r.cut = false;
			ret = java_read_contention(&r);
		}
		break;
	}
	case LK_JAVA_HEAP:
		ret = java_read_heap(&r, &first);
		break;
	default:
		break;
	}
	if (ret == 0) {
		r.p->source_format = pv_intern_str(r.p, java ? (kind == LK_JAVA_HEAP ? "Java heap profile"
										    : "Java contention profile")
							     : formats[kind]);
		ret = r.p->source_format == PV_NONE ? -1 : 0;
	}
	if (ret == 0 && r.p->nsamples == 0)
		pv_warn("'%s': the profile has no samples", name);
	if (ret == 0)
		r.p->finished = true;
out:
	free(r.addrs);
	free(r.locs);
	if (ret < 0) {
		pv_profile_free(r.p);
		return NULL;
	}
	return r.p;
}
