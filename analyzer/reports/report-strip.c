/* report-strip.c - what the timeline and the heap's line share: the
 * frames and the distinct stacks of the samples, their colours, the time
 * axis and the subtitle (see report-strip.h)
 */
#include "report-strip.h"
#include "present.h"
#include "error.h"
#include "escape.h"
#include "units.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t stack_hash(const void *ctx, size_t i)
{
	return ((const struct strip *)ctx)->stacks[i].hash;
}

static uint64_t lkey_hash(const void *ctx, size_t i)
{
	return ((const struct strip *)ctx)->lkeys[i].hash;
}

int strip_init(struct strip *strip, FILE *out, const struct pv_report_ctx *c)
{
	const struct pv_profile *p = c->t->p;

	if (!p->timed)
		return pv_error("--timeline: this profile does not say when its samples were taken "
				"(only collect-timer, collect-heap and collect-gdb traces do)");
	if (p->diff)
		return pv_error("--timeline shows one profile, not a comparison: leave out --diff-base");
	memset(strip, 0, sizeof *strip);
	strip->out = out;
	strip->t = c->t;
	strip->p = p;
	strip->c = c;
	if (c->span_to > c->span_from) {
		strip->from = c->span_from;
		strip->len = c->span_to - c->span_from;
	} else {
		strip->len = c->run_length;
	}
	if (strip->len <= 0)
		strip->len = 1;
	return 0;
}

int strip_table_room(const void *ctx, uint32_t **slots, size_t *nslots, size_t n, strip_hash_of hash)
{
	size_t cap;
	uint32_t *s;

	if ((n + 1) * 2 <= *nslots)
		return 0;
	if (n >= UINT32_MAX - 1)
		return pv_oom();
	cap = *nslots ? *nslots * 2 : 1024;
	if (!(s = calloc(cap, sizeof *s)))
		return pv_oom();
	for (size_t i = 0; i < n; i++) {
		size_t j = hash(ctx, i) & (cap - 1);
		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(*slots);
	*slots = s;
	*nslots = cap;
	return 0;
}

/* The escaped name in strip->esc: valid UTF-8 without control characters. */
const char *strip_escaped(struct strip *strip, const char *s)
{
	return pv_escape(strip->esc, sizeof strip->esc, s);
}

/* A colour from the name, the same for the same name in every picture:
 * any hue, saturated enough to be told from the greys; a kernel frame's
 * darker than any other's, so the time in the kernel stands apart. */
static uint32_t colour_of(const char *name, bool kernel)
{
	uint32_t h = 2166136261u;
	double hue, s, l, c, x, m, r = 0, g = 0, b = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	/* names that differ in a letter get unrelated colours */
	h = (uint32_t)pv_mix64(h);
	hue = (double)(h % 360);
	s = 0.55 + (double)((h >> 9) % 30) / 100;
	l = (kernel ? 0.25 : 0.48) + (double)((h >> 17) % 16) / 100;
	c = (1 - fabs(2 * l - 1)) * s;
	x = c * (1 - fabs(fmod(hue / 60, 2) - 1));
	m = l - c / 2;
	switch ((int)(hue / 60)) {
	case 0: r = c; g = x; break;
	case 1: r = x; g = c; break;
	case 2: g = c; b = x; break;
	case 3: g = x; b = c; break;
	case 4: r = x; b = c; break;
	default: r = c; b = x; break;
	}
	return (uint32_t)lround((r + m) * 255) << 16 | (uint32_t)lround((g + m) * 255) << 8 |
	       (uint32_t)lround((b + m) * 255);
}

/* The strip's frame of tree frame id, made when new; PV_NONE when out
 * of memory. */
static uint32_t frame_of(struct strip *strip, uint32_t id)
{
	struct strip_frame *f;

	if (id >= strip->cap_frame_map) {
		size_t old = strip->cap_frame_map;
		if (pv_grow(&strip->frame_map, &strip->cap_frame_map, (size_t)id + 1, sizeof *strip->frame_map) < 0)
			return PV_NONE;
		memset(strip->frame_map + old, 0, (strip->cap_frame_map - old) * sizeof *strip->frame_map);
	}
	if (strip->frame_map[id])
		return strip->frame_map[id] - 1;
	if (pv_grow(&strip->frames, &strip->cap_frames, strip->nframes + 1, sizeof *strip->frames) < 0)
		return PV_NONE;
	f = &strip->frames[strip->nframes];
	bool kernel = calltree_frame_is_kernel(strip->t, id);
	size_t at = kernel ? CT_KERNEL_MARK_LEN : 0;
	/* the name shown, a kernel frame's marked; --highlight sees it bare */
	memcpy(strip->name, CT_KERNEL_MARK, at);
	calltree_frame_name(strip->t, id, strip->name + at, sizeof strip->name - at);
	if (!strip->name[at])
		snprintf(strip->name + at, sizeof strip->name - at, "[unknown]");
	*f = (struct strip_frame){ .id = id,
				.matched = !strip->c->o->highlight ||
					   regexec(strip->c->o->highlight, strip->name + at, 0, NULL, 0) == 0 };
	if (!(f->name = strdup(strip_escaped(strip, strip->name)))) {
		pv_oom();
		return PV_NONE;
	}
	f->rgb = colour_of(f->name + at, kernel);
	strip->frame_map[id] = (uint32_t)strip->nframes + 1;
	return (uint32_t)strip->nframes++;
}

/* Is the leaf of sample s the frame a reader made up for an off-CPU
 * sample ("[off-cpu]", "[blocked]": no mapping, one line, a bracketed
 * name)?  Then it is coloured by the frame it waited in. */
static bool made_up_leaf(const struct pv_profile *p, const struct pv_sample *s)
{
	const struct pv_location *loc;

	if (!(s->flags & PV_SAMPLE_OFFCPU) || !s->nlocs)
		return false;
	loc = &p->locations[pv_sample_locs(p, s)[0]];
	return loc->mapping == PV_NONE && loc->nlines == 1 &&
	       pv_str(p, p->functions[pv_location_lines(p, loc)[0].function].name)[0] == '[';
}

/* The stack of sample s, made when new; PV_NONE when out of memory. */
uint32_t strip_stack_of(struct strip *strip, const struct pv_sample *s)
{
	bool off = s->flags & PV_SAMPLE_OFFCPU;
	uint64_t h = pv_mix64((uint64_t)s->loc_off << 32 ^ (uint64_t)s->nlocs << 1 ^ off);
	size_t mask, i;
	const uint32_t *fr;
	struct strip_stack st = { .off_cpu = off, .colour = STRIP_NO_COLOUR };
	int n;

	if (strip_table_room(strip, &strip->lkey_slots, &strip->nlkey_slots, strip->nlkeys, lkey_hash) < 0)
		return PV_NONE;
	mask = strip->nlkey_slots - 1;
	for (i = h & mask; strip->lkey_slots[i]; i = (i + 1) & mask) {
		const struct strip_lkey *k = &strip->lkeys[strip->lkey_slots[i] - 1];
		if (k->loc_off == s->loc_off && k->nlocs == s->nlocs && k->off_cpu == off)
			return k->stack;
	}
	if (pv_grow(&strip->lkeys, &strip->cap_lkeys, strip->nlkeys + 1, sizeof *strip->lkeys) < 0)
		return PV_NONE;
	strip->lkeys[strip->nlkeys] = (struct strip_lkey){ .loc_off = s->loc_off, .nlocs = s->nlocs,
						  .off_cpu = off, .hash = h, .stack = PV_NONE };
	strip->lkey_slots[i] = (uint32_t)strip->nlkeys + 1;
	struct strip_lkey *key = &strip->lkeys[strip->nlkeys++];

	/* Its frames, as the strip's, at the end of sframes: kept if the
	 * stack is new. */
	if ((n = calltree_expand(strip->t, s, &fr)) < 0 ||
	    pv_grow(&strip->sframes, &strip->cap_sframes, strip->nsframes + (size_t)n + 1, sizeof *strip->sframes) < 0)
		return PV_NONE;
	st.off = (uint32_t)strip->nsframes;
	st.len = (uint32_t)n;
	st.hash = pv_mix64(off ? 0x6f6666 : 0x6f6e);
	for (int j = 0; j < n; j++) {
		uint32_t f = frame_of(strip, fr[j]);
		if (f == PV_NONE)
			return PV_NONE;
		strip->sframes[strip->nsframes + (size_t)j] = f;
		st.hash = pv_mix64(st.hash ^ f);
		st.matched |= strip->frames[f].matched;
	}
	if (n > 0)
		st.colour = strip->sframes[st.off + (uint32_t)n - 1];
	if (n > 1 && made_up_leaf(strip->p, s))
		st.colour = strip->sframes[st.off + (uint32_t)n - 2];

	if (strip_table_room(strip, &strip->stack_slots, &strip->nstack_slots, strip->nstacks, stack_hash) < 0)
		return PV_NONE;
	mask = strip->nstack_slots - 1;
	for (i = st.hash & mask; strip->stack_slots[i]; i = (i + 1) & mask) {
		const struct strip_stack *o = &strip->stacks[strip->stack_slots[i] - 1];
		if (o->hash == st.hash && o->len == st.len && o->off_cpu == st.off_cpu &&
		    memcmp(strip->sframes + o->off, strip->sframes + st.off, st.len * sizeof *strip->sframes) == 0)
			return key->stack = strip->stack_slots[i] - 1;
	}
	if (pv_grow(&strip->stacks, &strip->cap_stacks, strip->nstacks + 1, sizeof *strip->stacks) < 0)
		return PV_NONE;
	strip->stacks[strip->nstacks] = st;
	strip->stack_slots[i] = (uint32_t)strip->nstacks + 1;
	strip->nsframes += st.len;
	return key->stack = (uint32_t)strip->nstacks++;
}

/* The column of time t (ns from the start): column c holds the times from
 * from + ceil(c * len / STRIP_COLUMNS) on; the end of the axis is in the last. */
uint32_t strip_column_of(const struct strip *strip, int64_t t)
{
	__int128 c;

	if (t <= strip->from)
		return 0;
	c = (__int128)(t - strip->from) * STRIP_COLUMNS / strip->len;
	return c >= STRIP_COLUMNS ? STRIP_COLUMNS - 1 : (uint32_t)c;
}

/* The time axis under the rows: ticks at 1, 2 or 5 times a power of ten
 * seconds, at least 90 px apart, labelled in seconds from the start. */
void strip_put_axis(struct strip *strip, double y)
{
	FILE *out = strip->out;
	double from = (double)strip->from / 1e9, len = (double)strip->len / 1e9;
	double min = len * 90 / STRIP_COLUMNS, step = pow(10, floor(log10(min > 0 ? min : 1e-9)));
	int decimals;

	if (step < min)
		step *= step * 2 >= min ? 2 : step * 5 >= min ? 5 : 10;
	decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	fprintf(out, "<g id=\"axis\">\n<line x1=\"%d\" y1=\"%.0f\" x2=\"%d\" y2=\"%.0f\"/>\n", STRIP_LEFT, y,
		STRIP_LEFT + STRIP_COLUMNS, y);
	for (double k = ceil(from / step - 1e-9);; k++) {
		double v = k == 0 ? 0 : k * step, x = STRIP_LEFT + (v - from) / len * STRIP_COLUMNS;
		if (x > STRIP_LEFT + STRIP_COLUMNS + 0.5)
			break;
		fprintf(out, "<line x1=\"%.1f\" y1=\"%.0f\" x2=\"%.1f\" y2=\"%.0f\"/>"
			"<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%.*f</text>\n",
			x, y, x, y + 5, x, y + 17, decimals, v);
	}
	fprintf(out, "<text x=\"%d\" y=\"%.0f\" text-anchor=\"end\">s from the start</text>\n</g>\n",
		STRIP_LEFT - 24, y + 17);
}

void strip_put_view(struct strip *strip)
{
	FILE *out = strip->out;
	char d[64];

	fputs("columns of ", out);
	if (strip->len >= STRIP_COLUMNS * 1000)
		fputs(pv_format_duration(d, sizeof d, strip->len / STRIP_COLUMNS), out);
	else
		fprintf(out, "%.3g us", (double)strip->len / STRIP_COLUMNS / 1e3);
	if (strip->c->time_spans && strip->c->time_spans[0]) {
		fputs("; time ", out);
		pv_xml_put(out, strip_escaped(strip, strip->c->time_spans), SIZE_MAX, true);
	}
	if (strip->c->filters && strip->c->filters[0]) {
		fputs("; ", out);
		pv_xml_put(out, strip_escaped(strip, strip->c->filters), SIZE_MAX, true);
	}
}

/* The frames (names, colours, matched by --highlight) and the stacks
 * (frames, off-CPU) as the script's "f", "fc", "fm", "s" and "so". */
void strip_put_frames(struct strip *strip)
{
	FILE *out = strip->out;

	fputs("\"f\":[", out);
	for (size_t f = 0; f < strip->nframes; f++) {
		if (f)
			fputc(',', out);
		pv_json_put(out, strip->frames[f].name);
	}
	fputs("],\n\"fc\":\"", out);
	for (size_t f = 0; f < strip->nframes; f++)
		fprintf(out, "%06x", strip->frames[f].rgb);
	fputs("\",\n\"fm\":\"", out);
	for (size_t f = 0; f < strip->nframes; f++)
		fputc(strip->frames[f].matched ? '1' : '0', out);
	fputs("\",\n\"s\":[", out);
	for (size_t s = 0; s < strip->nstacks; s++) {
		const struct strip_stack *st = &strip->stacks[s];
		fputs(s ? ",[" : "[", out);
		for (uint32_t j = 0; j < st->len; j++)
			fprintf(out, "%s%" PRIu32, j ? "," : "", strip->sframes[st->off + j]);
		fputc(']', out);
	}
	fputs("],\n\"so\":\"", out);
	for (size_t s = 0; s < strip->nstacks; s++)
		fputc(strip->stacks[s].off_cpu ? '1' : '0', out);
	fputc('"', out);
}

void strip_free(struct strip *strip)
{
	for (size_t f = 0; f < strip->nframes; f++)
		free(strip->frames[f].name);
	free(strip->frames);
	free(strip->frame_map);
	free(strip->stacks);
	free(strip->sframes);
	free(strip->stack_slots);
	free(strip->lkeys);
	free(strip->lkey_slots);
}
