/* folded-read.c - read folded stacks ("main;f;g 42") into the profile model */
#include "folded-read.h"
#include "error.h"
#include "merge.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Frames kept of a stack: a deeper one keeps its innermost frames (the
 * leaf's side, as a collector whose walk stops), and the sample counts as
 * truncated. */
#define FOLDED_MAX_DEPTH 65536
#define FOLDED_DETECT_SPAN 65536 /* bytes looked at to recognise the format */

/* The count at the end of line [s, e): its start, or NULL. */
static const unsigned char *count_start(const unsigned char *s, const unsigned char *e)
{
	const unsigned char *c = e;

	while (c > s && c[-1] >= '0' && c[-1] <= '9')
		c--;
	if (c == e || c == s || (c[-1] != ' ' && c[-1] != '\t'))
		return NULL;
	return c;
}

static const unsigned char *trim_end(const unsigned char *s, const unsigned char *e)
{
	while (e > s && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
		e--;
	return e;
}

/* Text with a count at the end of its first line.  A frame name may hold
 * any byte but NUL (a symbol can be renamed to anything), so control
 * characters other than tab, CR and LF are allowed too, but then every
 * complete line looked at must be a stack with its count: binary data
 * that happens to have no NUL does not pass for folded stacks. */
bool folded_detect(const unsigned char *buf, size_t len)
{
	size_t span = len < FOLDED_DETECT_SPAN ? len : FOLDED_DETECT_SPAN;
	const unsigned char *s = buf, *end = buf + span;
	bool controls = false, any = false;

	if (memchr(buf, '\0', span))
		return false;
	for (size_t i = 0; i < span && !controls; i++)
		controls = buf[i] < 0x20 && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\r';
	while (s < end) {
		const unsigned char *nl = memchr(s, '\n', (size_t)(end - s));
		const unsigned char *e = trim_end(s, nl ? nl : end);
		if (e > s) {
			bool counted = count_start(s, e) != NULL;
			if (!controls)
				return counted || !nl;
			/* A line cut by the end of the span cannot be judged. */
			if (!counted && (nl || span == len))
				return false;
			any = true;
		}
		if (!nl)
			break;
		s = nl + 1;
	}
	return any;
}

struct freader {
	struct pv_profile *p;
	uint32_t *locs;
	size_t cap_locs;
	size_t cut, first_cut;  /* stacks cut to FOLDED_MAX_DEPTH frames, the first's line */
	bool diff;             /* every line has two counts: base and new */
};

/* The location standing for the frame named [s, e): a kernel frame when
 * the name ends in FOLDED_KERNEL_SUFFIX after something. */
static uint32_t frame_location(struct freader *r, const unsigned char *s, const unsigned char *e)
{
	struct pv_profile *p = r->p;
	size_t klen = sizeof FOLDED_KERNEL_SUFFIX - 1;
	bool kernel = (size_t)(e - s) > klen && memcmp(e - klen, FOLDED_KERNEL_SUFFIX, klen) == 0;
	uint32_t mapping = PV_NONE;

	if (kernel) {
		e -= klen;
		if ((mapping = pv_kernel_mapping(p)) == PV_NONE)
			return PV_NONE;
	}
	uint32_t name = pv_intern(p, (const char *)s, (size_t)(e - s));
	if (name == PV_NONE)
		return PV_NONE;
	uint32_t fn = pv_get_function(p, name, name, 0, 0);
	if (fn == PV_NONE)
		return PV_NONE;
	struct pv_line line = { fn, 0 };
	/* A frame has no address: each function gets its own made-up one;
	 * the kernel's unknown code its own, 0 (profile.h). */
	uint64_t address = kernel && strcmp(pv_str(p, name), PV_KERNEL_FRAME_NAME) == 0 ? 0 : (uint64_t)fn + 1;
	return pv_location_with_lines(p, address, mapping, &line, 1);
}

/* Does the line [s, e) end with two counts ("stack BASE NEW")? */
static bool two_counts(const unsigned char *s, const unsigned char *e)
{
	const unsigned char *c = count_start(s, e);

	return c && count_start(s, trim_end(s, c)) != NULL;
}

/* The count at [c, e) into *out; -1 after an error naming the line. */
static int parse_count(const char *name, size_t lineno, const unsigned char *c, const unsigned char *e,
		       unsigned long long *out)
{
	char num[32];

	if ((size_t)(e - c) >= sizeof num)
		return pv_error("'%s': line %zu: count is too large", name, lineno);
	memcpy(num, c, (size_t)(e - c));
	num[e - c] = '\0';
	errno = 0;
	*out = strtoull(num, NULL, 10);
	if (errno || *out > INT64_MAX)
		return pv_error("'%s': line %zu: count %s is too large", name, lineno, num);
	return 0;
}

static int read_line(struct freader *r, const char *name, size_t lineno, const unsigned char *s,
		     const unsigned char *e)
{
	struct pv_profile *p = r->p;
	const unsigned char *c = count_start(s, e);
	struct pv_sample ps = { .thread = PV_NONE };
	unsigned long long count, base = 0;
	uint32_t n = 0;

	if (!c)
		return pv_error("'%s': line %zu: no count after the stack (folded stacks are \"frame;frame;... COUNT\")",
				name, lineno);
	if (parse_count(name, lineno, c, e, &count) < 0)
		return -1;
	const unsigned char *stack_end = trim_end(s, c);
	if (r->diff) {
		/* "stack BASE NEW": the base's count before the new one's */
		const unsigned char *b = count_start(s, stack_end);
		if (!b)
			return pv_error("'%s': line %zu: one count where every other line has two (base and new)",
					name, lineno);
		if (parse_count(name, lineno, b, stack_end, &base) < 0)
			return -1;
		stack_end = trim_end(s, b);
	}
	/* Frames, outermost first in the text; the model wants the leaf first.
	 * Past FOLDED_MAX_DEPTH the outermost are skipped. */
	size_t depth = 0, skip;
	for (const unsigned char *f = s; f < stack_end;) {
		const unsigned char *semi = memchr(f, ';', (size_t)(stack_end - f));
		const unsigned char *fe = semi ? semi : stack_end;
		depth += fe > f;
		f = semi ? semi + 1 : stack_end;
	}
	skip = depth > FOLDED_MAX_DEPTH ? depth - FOLDED_MAX_DEPTH : 0;
	for (const unsigned char *f = s; f < stack_end;) {
		const unsigned char *semi = memchr(f, ';', (size_t)(stack_end - f));
		const unsigned char *fe = semi ? semi : stack_end;
		if (fe > f && skip) {
			skip--;
		} else if (fe > f) {
			if (pv_grow(&r->locs, &r->cap_locs, n + 1, sizeof *r->locs) < 0)
				return -1;
			if ((r->locs[n++] = frame_location(r, f, fe)) == PV_NONE)
				return -1;
		}
		f = semi ? semi + 1 : stack_end;
	}
	if (n == 0)
		return pv_error("'%s': line %zu: a count with no stack", name, lineno);
	for (uint32_t i = 0; i < n / 2; i++) {
		uint32_t t = r->locs[i];
		r->locs[i] = r->locs[n - 1 - i];
		r->locs[n - 1 - i] = t;
	}
	if (count == 0 && base == 0)
		return 0;
	if (depth > FOLDED_MAX_DEPTH) {
		if (r->cut++ == 0)
			r->first_cut = lineno;
		p->truncated++;
	}
	ps.nlocs = n;
	ps.loc_off = pv_add_stack(p, r->locs, n);
	if (ps.loc_off == UINT32_MAX)
		return -1;
	if (base) {
		struct pv_sample bs = ps;
		bs.values[0] = (int64_t)base;
		bs.flags |= PV_SAMPLE_BASE;
		if (pv_add_sample(p, &bs) < 0)
			return -1;
	}
	if (count == 0)
		return 0;
	ps.values[0] = (int64_t)count;
	/* a stack cut short stays a sample of its own: one truncated */
	return depth > FOLDED_MAX_DEPTH ? pv_add_sample(p, &ps) : pv_add_sample_merged(p, &ps);
}

struct pv_profile *folded_read(const unsigned char *buf, size_t len, const char *name)
{
	struct freader r = { 0 };
	const unsigned char *s = buf, *end = buf + len;
	size_t lineno = 0;

	r.p = pv_profile_new();
	if (!r.p)
		return NULL;
	if (pv_add_value_type(r.p, "samples", "count") == PV_NONE ||
	    (r.p->source_format = pv_intern_str(r.p, "folded stacks")) == PV_NONE)
		goto fail;
	/* Two counts on every line: a comparison, as FlameGraph's
	 * difffolded.pl writes one ("stack BASE NEW"). */
	r.diff = len > 0;
	for (const unsigned char *t = s; t < end && r.diff;) {
		const unsigned char *nl = memchr(t, '\n', (size_t)(end - t));
		const unsigned char *e = trim_end(t, nl ? nl : end);
		if (e > t && !two_counts(t, e))
			r.diff = false;
		t = nl ? nl + 1 : end;
	}
	r.p->diff = r.diff;
	while (s < end) {
		const unsigned char *nl = memchr(s, '\n', (size_t)(end - s));
		const unsigned char *e = trim_end(s, nl ? nl : end);
		lineno++;
		if (e > s && memchr(s, '\0', (size_t)(e - s))) {
			pv_error("'%s': line %zu: a NUL byte: not text", name, lineno);
			goto fail;
		}
		if (e > s && read_line(&r, name, lineno, s, e) < 0)
			goto fail;
		s = nl ? nl + 1 : end;
	}
	if (r.cut)
		pv_warn("'%s': %zu stack%s deeper than %d frames (the first at line %zu) cut to %s innermost %d",
			name, r.cut, r.cut == 1 ? "" : "s", FOLDED_MAX_DEPTH, r.first_cut,
			r.cut == 1 ? "its" : "their", FOLDED_MAX_DEPTH);
	pv_flag_kernel_samples(r.p);
	r.p->finished = true;
	free(r.locs);
	return r.p;
fail:
	free(r.locs);
	pv_profile_free(r.p);
	return NULL;
}
