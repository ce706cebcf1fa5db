/* legacy-lex.c - what the readers of pprof's legacy text formats share:
 * the walk of the lines, the numbers, the stacks and their samples, the
 * memory map at the end, and Java's sample lines
 */
#include "legacy-lex.h"
#include "error.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool legacy_blank_char(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

bool legacy_next(struct lreader *r, struct lline *l)
{
	size_t end = r->map_at;

	if (r->off >= end)
		return false;
	const char *s = r->buf + r->off, *nl = memchr(s, '\n', end - r->off);
	const char *e = nl ? nl : r->buf + end;
	r->off = (size_t)(e - r->buf) + (nl != NULL);
	while (s < e && legacy_blank_char(*s))
		s++;
	while (e > s && legacy_blank_char(e[-1]))
		e--;
	l->s = s;
	l->e = e;
	l->no = ++r->lineno;
	return true;
}

bool legacy_blank(const struct lline *l)
{
	return l->s == l->e || l->s[0] == '#';
}

const char *legacy_find(const char *s, const char *e, const char *what)
{
	size_t n = strlen(what);

	for (; (size_t)(e - s) >= n; s++)
		if (memcmp(s, what, n) == 0)
			return s;
	return NULL;
}

bool legacy_contains(const struct lline *l, const char *s)
{
	return legacy_find(l->s, l->e, s) != NULL;
}

bool legacy_starts(const struct lline *l, const char *s)
{
	size_t n = strlen(s);

	return (size_t)(l->e - l->s) >= n && memcmp(l->s, s, n) == 0;
}

void legacy_skip_blanks(const char **p, const char *e)
{
	while (*p < e && legacy_blank_char(**p))
		(*p)++;
}

bool legacy_number(const char **p, const char *e, bool negative, int64_t *v)
{
	const char *q = *p;
	bool neg = false;
	int64_t x = 0;

	if (negative && q < e && *q == '-') {
		neg = true;
		q++;
	}
	if (q >= e || *q < '0' || *q > '9')
		return false;
	for (; q < e && *q >= '0' && *q <= '9'; q++) {
		x = x * 10 + (*q - '0');
		if (x > LEGACY_MAX_VALUE)
			return false;
	}
	*v = neg ? -x : x;
	*p = q;
	return true;
}

bool legacy_char(const char **p, const char *e, char c)
{
	legacy_skip_blanks(p, e);
	if (*p >= e || **p != c)
		return false;
	(*p)++;
	return true;
}

int legacy_error(const struct lreader *r, size_t no, const char *what)
{
	return pv_error("'%s': line %zu: %s", r->name, no, what);
}

/* As pprof finds them: every "0x" and the lower-case hex digits after it. */
int legacy_hex_addresses(struct lreader *r, const char *s, const char *e, size_t no)
{
	for (const char *q = s; q + 2 < e; q++) {
		if (q[0] != '0' || q[1] != 'x' || pv_hexval(q[2]) < 0 || (q[2] >= 'A' && q[2] <= 'F'))
			continue;
		uint64_t a = 0;
		int digits = 0;
		q += 2;
		for (; q < e && ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f')); q++) {
			if (++digits > 16 && a >> 60)
				return legacy_error(r, no, "an address has more than 64 bits");
			a = a << 4 | (uint64_t)pv_hexval(*q);
		}
		if (r->naddrs >= PV_MAX_DEPTH) {
			r->cut = true;
			q--;
			continue;
		}
		if (pv_grow(&r->addrs, &r->cap_addrs, r->naddrs + 1, sizeof *r->addrs) < 0)
			return -1;
		r->addrs[r->naddrs++] = a;
		q--;
	}
	return 0;
}

/* Is mapping m an allocator that profiles itself, jemalloc or tcmalloc? */
static bool allocator_mapping(const struct pv_profile *p, uint32_t m)
{
	if (m >= p->nmappings)
		return false;
	const char *b = pv_base_name(pv_str(p, p->mappings[m].file));
	return strncmp(b, "libjemalloc", 11) == 0 || strncmp(b, "libtcmalloc", 11) == 0;
}

int legacy_add_sample(struct lreader *r, enum legacy_adjust adjust, const int64_t *values,
		      uint32_t nvalues)
{
	struct pv_profile *p = r->p;
	struct pv_sample ps = { .thread = PV_NONE };
	uint64_t *a = r->addrs;
	size_t n = r->naddrs;

	for (size_t i = adjust == ADJUST_ALL ? 0 : 1; i < n && adjust != ADJUST_NONE; i++)
		a[i] -= a[i] > 0;
	while (r->drop_allocator && n > 1 && allocator_mapping(p, pv_find_mapping(p, a[0]))) {
		a++;
		n--;
	}
	for (size_t i = 0; i < n; i++)
		if ((r->locs[i] = pv_get_location(p, a[i], pv_find_mapping(p, a[i]))) == PV_NONE)
			return -1;
	if (pv_add_stack_capped(p, &ps, r->locs, (uint32_t)n, r->cut) < 0)
		return -1;
	r->cut = false;
	for (uint32_t i = 0; i < nvalues && i < PV_MAX_VALUES; i++)
		ps.values[i] = values[i];
	r->naddrs = 0;
	return pv_add_sample(p, &ps);
}

int legacy_types(struct pv_profile *p, const char *const *types, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (pv_add_value_type(p, types[2 * i], types[2 * i + 1]) == PV_NONE)
			return -1;
	return 0;
}

/* The memory map: "name=value" lines define $name for the lines after. */
#define MAP_ATTRS 16
#define MAP_LINE_MAX 8192

struct map_attrs {
	char name[MAP_ATTRS][64], value[MAP_ATTRS][1024];
	int n;
};

/* Line [s, e) with every $name replaced, into buf; its end, or NULL when
 * too long. */
static char *substitute(const struct map_attrs *at, const char *s, const char *e, char *buf)
{
	char *o = buf;

	while (s < e) {
		int k = -1;
		if (*s == '$')
			for (int i = 0; i < at->n && k < 0; i++) {
				size_t nl = strlen(at->name[i]);
				if ((size_t)(e - s - 1) >= nl && memcmp(s + 1, at->name[i], nl) == 0)
					k = i;
			}
		if (k >= 0) {
			size_t vl = strlen(at->value[k]);
			if ((size_t)(o - buf) + vl >= MAP_LINE_MAX)
				return NULL;
			memcpy(o, at->value[k], vl);
			o += vl;
			s += 1 + strlen(at->name[k]);
			continue;
		}
		if ((size_t)(o - buf) + 1 >= MAP_LINE_MAX)
			return NULL;
		*o++ = *s++;
	}
	*o = '\0';
	return o;
}

bool legacy_hex_number(const char **p, const char *e, uint64_t *v)
{
	const char *q = *p;
	uint64_t x = 0;

	if (e - q > 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
		q += 2;
	const char *d = q;
	for (; q < e && pv_hexval(*q) >= 0; q++) {
		if (x >> 60)
			return false;
		x = x << 4 | (uint64_t)pv_hexval(*q);
	}
	if (q == d)
		return false;
	*v = x;
	*p = q;
	return true;
}

/* The next blank-separated token of [*p, e): its bounds. */
static bool token(const char **p, const char *e, const char **ts, const char **te)
{
	legacy_skip_blanks(p, e);
	if (*p >= e)
		return false;
	*ts = *p;
	while (*p < e && !legacy_blank_char(**p))
		(*p)++;
	*te = *p;
	return true;
}

static bool all_of(const char *s, const char *e, const char *set)
{
	if (s == e)
		return false;
	for (; s < e; s++)
		if (!strchr(set, *s))
			return false;
	return true;
}

/* One line of the map: "START-END [PERMS] [OFFSET DEV INODE] [FILE]" as
 * /proc/PID/maps has it, or "START-END: FILE [(@OFFSET)] [BUILDID]".  0
 * when it is a mapping or not one (skipped, as pprof skips them), -1
 * when out of memory. */
static int map_line(struct lreader *r, const char *s, const char *e)
{
	struct pv_profile *p = r->p;
	struct pv_mapping m = { 0 };
	const char *q = s, *ts, *te, *file = NULL, *file_end = NULL, *build = NULL, *build_end = NULL;
	bool exec = true;

	legacy_skip_blanks(&q, e);
	if (!legacy_hex_number(&q, e, &m.start))
		return 0;
	if (q < e && (*q == '-' || legacy_blank_char(*q)))
		q++;
	legacy_skip_blanks(&q, e);
	if (!legacy_hex_number(&q, e, &m.limit))
		return 0;
	if (q < e && *q == ':')
		q++;
	if (q < e && !legacy_blank_char(*q))
		return 0;
	const char *rest = q;
	if (token(&q, e, &ts, &te) && all_of(ts, te, "-rwxps")) {
		exec = memchr(ts, 'x', (size_t)(te - ts)) != NULL;
		rest = q;
	}
	/* /proc/PID/maps: offset, device, inode, then the path (spaces and all) */
	const char *o = rest, *os, *oe, *ds, *de, *is, *ie;
	if (token(&o, e, &os, &oe) && all_of(os, oe, "0123456789abcdefABCDEF") &&
	    token(&o, e, &ds, &de) && memchr(ds, ':', (size_t)(de - ds)) &&
	    token(&o, e, &is, &ie) && all_of(is, ie, "0123456789")) {
		legacy_hex_number(&os, oe, &m.offset);
		legacy_skip_blanks(&o, e);
		file = o;
		file_end = e;
	} else if (token(&rest, e, &ts, &te)) {
		file = ts;
		file_end = te;
		if (token(&rest, e, &ts, &te) && te - ts > 3 && ts[0] == '(' && ts[1] == '@' && te[-1] == ')') {
			const char *h = ts + 2;
			legacy_hex_number(&h, te - 1, &m.offset);
			token(&rest, e, &ts, &te) ? (void)0 : (void)(ts = te = NULL);
		}
		if (ts && ts != te && all_of(ts, te, "0123456789abcdefABCDEF")) {
			build = ts;
			build_end = te;
		}
	}
	if (!exec || m.start >= m.limit)
		return 0;
	m.file = file ? pv_intern(p, file, (size_t)(file_end - file)) : 0;
	if (m.file == PV_NONE)
		return -1;
	if (build) {
		char lower[256];
		size_t n = (size_t)(build_end - build) < sizeof lower - 1 ? (size_t)(build_end - build)
									 : sizeof lower - 1;
		for (size_t i = 0; i < n; i++)
			lower[i] = (char)(build[i] >= 'A' && build[i] <= 'F' ? build[i] - 'A' + 'a' : build[i]);
		if ((m.build_id = pv_intern(p, lower, n)) == PV_NONE)
			return -1;
	}
	m.kind = pv_mapping_kind_of(pv_str(p, m.file));
	if (!p->program && m.kind == PV_MAP_FILE && m.file)
		p->program = m.file;
	return pv_add_mapping(p, &m) == PV_NONE ? -1 : 0;
}

int legacy_read_map(struct lreader *r)
{
	struct map_attrs *at = NULL;
	char *buf = NULL;
	size_t off = r->map_at;
	int ret = -1;

	if (off >= r->len)
		return 0;
	at = calloc(1, sizeof *at);
	buf = malloc(MAP_LINE_MAX);
	if (!at || !buf) {
		pv_oom();
		goto out;
	}
	/* the sentinel line itself */
	const char *nl = memchr(r->buf + off, '\n', r->len - off);
	off = nl ? (size_t)(nl - r->buf) + 1 : r->len;
	while (off < r->len) {
		const char *s = r->buf + off;
		nl = memchr(s, '\n', r->len - off);
		const char *e = nl ? nl : r->buf + r->len;
		off = (size_t)(e - r->buf) + 1;
		char *end = substitute(at, s, e, buf);
		if (!end)
			continue;
		if (map_line(r, buf, end) < 0)
			goto out;
		/* "name = value": a value for $name */
		char *eq = strchr(buf, '=');
		if (eq && at->n < MAP_ATTRS && !(buf[0] >= '0' && buf[0] <= '9')) {
			char *ns = buf, *ne = eq, *vs = eq + 1, *ve = end;
			while (ns < ne && legacy_blank_char(*ns))
				ns++;
			while (ne > ns && legacy_blank_char(ne[-1]))
				ne--;
			while (vs < ve && legacy_blank_char(*vs))
				vs++;
			while (ve > vs && legacy_blank_char(ve[-1]))
				ve--;
			if (ne > ns && (size_t)(ne - ns) < sizeof at->name[0] &&
			    (size_t)(ve - vs) < sizeof at->value[0]) {
				memcpy(at->name[at->n], ns, (size_t)(ne - ns));
				memcpy(at->value[at->n], vs, (size_t)(ve - vs));
				at->n++;
			}
		}
	}
	ret = 0;
out:
	free(at);
	free(buf);
	return ret;
}

/* Java's samples: "A B @ ID ..." until the first line that is not one,
 * each handed to add. */
int java_samples(struct lreader *r, int (*add)(struct lreader *, int64_t, int64_t, size_t))
{
	struct lline l;

	for (;;) {
		size_t back = r->off, backno = r->lineno;
		if (!legacy_next(r, &l))
			return 0;
		if (l.s == l.e)
			continue;
		const char *q = l.s;
		int64_t a, b;
		if (!legacy_number(&q, l.e, false, &a) || !(legacy_skip_blanks(&q, l.e), true) ||
		    !legacy_number(&q, l.e, false, &b) || !legacy_char(&q, l.e, '@')) {
			r->off = back;
			r->lineno = backno;
			return 0;
		}
		/* ids, not return addresses: none is moved */
		if (legacy_hex_addresses(r, q, l.e, l.no) < 0 || add(r, a, b, l.no) < 0)
			return -1;
	}
}
