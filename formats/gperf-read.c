/* gperf-read.c - read a gperftools CPU profile into the profile model
 *
 * The file is a sequence of machine words (32 or 64 bits, the byte order
 * of the machine that wrote it): a header of five words (0, 3, 0, period
 * in microseconds, 0), samples of (count, n, n addresses, the first the
 * interrupted program counter and the others return addresses), a
 * trailer (0, 1, 0), then the text of /proc/self/maps.
 */
#include "gperf-read.h"
#include "error.h"
#include "java-read.h"
#include "merge.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct greader {
	const unsigned char *buf;
	size_t len;
	const char *name;
	unsigned word;          /* 4 or 8 */
	bool big;
	/* Java's (format version 1): the addresses are ids, named by the
	 * text after the samples. */
	bool java;
	struct pv_profile *p;
	uint64_t *addrs;
	uint32_t *locs;
};

static uint64_t word_at(const struct greader *g, size_t off)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < g->word; i++) {
		unsigned b = g->big ? i : g->word - 1 - i;
		v = v << 8 | g->buf[off + b];
	}
	return v;
}

/* Which of the four layouts the header is in; false if none. */
static bool find_layout(struct greader *g)
{
	static const struct { unsigned word; bool big; } layouts[] = {
		{ 8, false }, { 4, false }, { 8, true }, { 4, true },
	};

	for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
		g->word = layouts[i].word;
		g->big = layouts[i].big;
		if (g->len >= 2 * g->word && word_at(g, 0) == 0 && word_at(g, g->word) == 3)
			return true;
	}
	return false;
}

/* The header's first two words, 0 and 3, in one of the four layouts: four
 * zero bytes alone would take /dev/zero for a profile. */
bool gperf_detect(const unsigned char *buf, size_t len)
{
	struct greader g = { .buf = buf, .len = len };

	return find_layout(&g);
}

static int header(struct greader *g, size_t *off)
{
	if (!find_layout(g)) {
		size_t n = g->len < 16 ? g->len : 16;
		char hexb[3 * 16 + 1] = "";
		for (size_t i = 0; i < n; i++)
			snprintf(hexb + 3 * i, 4, "%02x ", g->buf[i]);
		if (n)
			hexb[3 * n - 1] = '\0';
		return pv_error("'%s': not a gperftools CPU profile: its header should be the words 0, 3, 0, period, 0 but it starts %s",
				g->name, hexb);
	}
	if (g->len < 5 * (size_t)g->word)
		return pv_error("'%s': gperftools CPU profile is cut off inside its %u-byte header (%zu bytes)",
				g->name, 5 * g->word, g->len);
	uint64_t version = word_at(g, 2 * g->word), period = word_at(g, 3 * g->word);
	uint64_t pad = word_at(g, 4 * g->word);
	g->java = version == 1;
	if (version > 1)
		return pv_error("'%s': gperftools profile header at byte %u: format version %" PRIu64 " is not supported (versions 0 and 1, Java's, are)",
				g->name, 2 * g->word, version);
	if (period == 0 || period > 60ULL * 1000000)
		return pv_error("'%s': gperftools profile header at byte %u: sampling period %" PRIu64 " microseconds is not plausible",
				g->name, 3 * g->word, period);
	if (pad != 0)
		return pv_error("'%s': gperftools profile header at byte %u: padding word is %" PRIu64 ", not 0",
				g->name, 4 * g->word, pad);
	g->p->period = (int64_t)period * 1000;
	*off = 5 * (size_t)g->word;
	return 0;
}

/* Parse one line of /proc/self/maps: "start-end perms offset dev inode path". */
static int maps_line(struct greader *g, const char *line, size_t n)
{
	char buf[4096 + 256], perms[8];
	unsigned long long start, end, offset;
	int pathat = 0;

	if (n >= sizeof buf)
		n = sizeof buf - 1;
	memcpy(buf, line, n);
	buf[n] = '\0';
	if (sscanf(buf, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &offset, &pathat) < 4 ||
	    !pathat)
		return 0; /* not a mapping line: pprof skips those too */
	if (!strchr(perms, 'x') || start >= end)
		return 0;
	const char *path = buf + pathat;
	size_t plen = strlen(path);
	while (plen && (path[plen - 1] == ' ' || path[plen - 1] == '\r'))
		plen--;
	struct pv_mapping m = { .start = start, .limit = end, .offset = offset };
	m.file = pv_intern(g->p, path, plen);
	if (m.file == PV_NONE)
		return -1;
	m.kind = pv_mapping_kind_of(pv_str(g->p, m.file));
	if (!g->p->program && m.kind == PV_MAP_FILE)
		g->p->program = m.file;
	return pv_add_mapping(g->p, &m) == PV_NONE ? -1 : 0;
}

static int read_maps(struct greader *g, size_t off)
{
	while (off < g->len) {
		const unsigned char *nl = memchr(g->buf + off, '\n', g->len - off);
		size_t n = nl ? (size_t)(nl - (g->buf + off)) : g->len - off;
		if (maps_line(g, (const char *)g->buf + off, n) < 0)
			return -1;
		off += n + 1;
	}
	return 0;
}

struct raw_sample {
	uint64_t count;
	uint32_t off, n;   /* into the address list */
	bool cut;          /* outer frames past PV_MAX_DEPTH left out */
};

/* pprof's clean-up of the legacy format, done the same way so that both
 * read the same stacks: when nearly every sample (all but one in 32) has
 * the same second frame, that frame was pushed by the signal handler and
 * is dropped (at most twice); and a leaf repeated as its own caller (the
 * program counter seen both in the signal context and on the stack) is
 * dropped once. */
static void drop_handler_frames(struct raw_sample *ss, size_t ns, uint64_t *a)
{
	size_t margin = ns / 32;

	for (int iter = 0; iter < 2; iter++) {
		/* Majority vote for the second frame (Boyer-Moore), then count. */
		uint64_t cand = 0;
		size_t votes = 0, with = 0, same = 0;
		for (size_t i = 0; i < ns; i++) {
			if (ss[i].n < 2)
				continue;
			with++;
			uint64_t x = a[ss[i].off + 1];
			if (votes == 0)
				cand = x;
			votes += x == cand ? 1 : (size_t)-1;
		}
		if (!with)
			return;
		for (size_t i = 0; i < ns; i++)
			same += ss[i].n >= 2 && a[ss[i].off + 1] == cand;
		if (same + margin < ns)
			return;
		for (size_t i = 0; i < ns; i++) {
			if (ss[i].n < 2 || a[ss[i].off + 1] != cand)
				continue;
			memmove(&a[ss[i].off + 1], &a[ss[i].off + 2], (ss[i].n - 2) * sizeof *a);
			ss[i].n--;
		}
	}
}

static int samples(struct greader *g, size_t *offp)
{
	struct pv_profile *p = g->p;
	size_t off = *offp, ns = 0, cap_s = 0, na = 0, cap_a = 0;
	struct raw_sample *ss = NULL;
	uint64_t *a = NULL;
	bool trailer = false;
	int ret = -1;

	while (off < g->len) {
		size_t at = off;
		if (g->len - off < 2 * (size_t)g->word)
			break;
		uint64_t count = word_at(g, off), n = word_at(g, off + g->word);
		off += 2 * (size_t)g->word;
		if ((g->len - off) / g->word < n) {
			pv_error("'%s': gperftools profile is cut off at byte %zu: the sample there needs %" PRIu64 " more bytes, %zu are left",
				 g->name, at, n * g->word, g->len - off);
			goto out;
		}
		if (count == 0 && n == 1 && word_at(g, off) == 0) {
			off += g->word;
			trailer = true;
			break;
		}
		if (count > (uint64_t)(INT64_MAX / (p->period ? p->period : 1))) {
			pv_error("'%s': gperftools sample at byte %zu has an impossible count %" PRIu64,
				 g->name, at, count);
			goto out;
		}
		/* The innermost frames of a deeper stack than any report shows
		 * (the file's length bounds n, checked above). */
		uint32_t keep = n > PV_MAX_DEPTH ? PV_MAX_DEPTH : (uint32_t)n;
		if (pv_grow(&ss, &cap_s, ns + 1, sizeof *ss) < 0 || pv_grow(&a, &cap_a, na + keep + 1, sizeof *a) < 0)
			goto out;
		for (uint32_t i = 0; i < keep; i++)
			a[na + i] = word_at(g, off + i * g->word);
		off += n * g->word;
		/* Return addresses: step back into the call (Java's are ids). */
		for (uint32_t i = 1; i < keep && !g->java; i++)
			a[na + i]--;
		ss[ns++] = (struct raw_sample){ count, (uint32_t)na, keep, keep < n };
		na += keep;
	}
	if (!trailer) {
		pv_error("'%s': gperftools profile is cut off at byte %zu: its samples do not end with the trailer (words 0, 1, 0)",
			 g->name, off);
		goto out;
	}
	if (!g->java)
		drop_handler_frames(ss, ns, a);
	for (size_t i = 0; i < ns; i++) {
		struct pv_sample ps = { .thread = PV_NONE };
		uint64_t *s = a + ss[i].off;
		if (!g->java && ss[i].n > 1 && s[0] == s[1] + 1) {
			memmove(&s[1], &s[2], (ss[i].n - 2) * sizeof *s);
			ss[i].n--;
		}
		for (uint32_t j = 0; j < ss[i].n; j++)
			if ((g->locs[j] = pv_get_location(p, s[j], pv_find_mapping(p, s[j]))) == PV_NONE)
				goto out;
		if (pv_add_stack_capped(p, &ps, g->locs, ss[i].n, ss[i].cut) < 0)
			goto out;
		ps.values[0] = (int64_t)ss[i].count;
		ps.values[1] = (int64_t)ss[i].count * p->period;
		if (pv_add_sample_merged(p, &ps) < 0)
			goto out;
	}
	*offp = off;
	ret = 0;
out:
	free(ss);
	free(a);
	return ret;
}

struct pv_profile *gperf_read(const unsigned char *buf, size_t len, const char *name)
{
	struct greader g = { .buf = buf, .len = len, .name = name };
	size_t off = 0;

	g.p = pv_profile_new();
	g.locs = malloc(PV_MAX_DEPTH * sizeof *g.locs);
	if (!g.p || !g.locs) {
		if (g.p)
			pv_oom();
		goto fail;
	}
	struct pv_profile *p = g.p;
	if (header(&g, &off) < 0)
		goto fail;
	if (pv_add_value_type(p, "samples", "count") == PV_NONE ||
	    pv_add_value_type(p, "cpu", "nanoseconds") == PV_NONE)
		goto fail;
	p->period_type.type = pv_intern_str(p, "cpu");
	p->period_type.unit = pv_intern_str(p, "nanoseconds");
	p->source_format = pv_intern_str(p, "gperftools CPU profile");
	if (p->period_type.type == PV_NONE || p->period_type.unit == PV_NONE ||
	    p->source_format == PV_NONE)
		goto fail;
	/* The maps come after the samples, but locations need them: find the
	 * trailer first by walking the samples' framing. */
	{
		size_t o = off;
		while (o < len && len - o >= 2 * (size_t)g.word) {
			uint64_t c = word_at(&g, o), n = word_at(&g, o + g.word);
			if ((len - o - 2 * (size_t)g.word) / g.word < n)
				break;
			o += (2 + n) * g.word;
			if (c == 0 && n == 1 && word_at(&g, o - g.word) == 0) {
				if (g.java)
					break;
				if (read_maps(&g, o) < 0)
					goto fail;
				break;
			}
		}
	}
	if (samples(&g, &off) < 0)
		goto fail;
	if (g.java) {
		if (legacy_java_locations(p, buf + off, len - off, name) < 0)
			goto fail;
		if ((p->source_format = pv_intern_str(p, "Java CPU profile")) == PV_NONE)
			goto fail;
	}
	p->finished = true;
	if (p->nmappings == 0 && !g.java)
		pv_warn("'%s': gperftools profile has no memory map after its samples; frames show as addresses",
			name);
	free(g.locs);
	return p;
fail:
	free(g.locs);
	pv_profile_free(g.p);
	return NULL;
}
