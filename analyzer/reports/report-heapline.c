/* report-heapline.c - the heap in use along the run, of a heap profile,
 * with the flame graph of what a span dragged across it left allocated
 * (see report-strip.h)
 *
 * A heap profile's samples are blocks: allocated at time_ns, freed at
 * end_ns (0: never), of alloc_space unsampled bytes.  The time axis is
 * cut into the timeline's columns; a block goes to column a of its
 * allocation and column f of its free (STRIP_COLUMNS when it was not freed before
 * the axis ends).  It is in use in column c when a <= c < f: allocated
 * before the column's end and not freed before it.  So the height of a
 * column is the bytes in use at its end, and the blocks a span of columns
 * [c0, c1) left allocated, a in [c0, c1) and f >= c1, are exactly those
 * "profview --time=FROM,TO" keeps over the same span.  But for the column
 * of the peak: a peak between two column ends would be missed (blocks
 * freed in its column after it), so that column is the heap at the
 * instant of the peak, the blocks the trace's reader counted in
 * peak_space, and the mark says their sum: "--sample-index=peak_space"
 * of the same view, by construction.
 *
 * The run has one area, not a row per thread: a block allocated by one
 * thread may be freed by another, and the heap is the process's.  The
 * area is cut into bands, one per function holding the bytes (the
 * block's innermost frame at the tree's granularity, the one the CPU
 * timeline colours by), for the functions with the most bytes over the
 * run, the others in one grey band.
 *
 * The script gets the frames, the stacks, the blocks grouped by (a, f,
 * stack) with their sampled count and bytes, and the curve; it computes
 * the hover and the selection's flame graph from them.
 */
#include "report-strip.h"
#include "present.h"
#include "error.h"
#include "escape.h"
#include "scripts.h"
#include "units.h"
#include "util.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AREA_TOP STRIP_TOP
#define AREA_H 240        /* the area's height, px */
#define BANDS 12          /* functions with a band of their own */
#define OTHER BANDS       /* the band of the rest */
#define FILL_OTHER 0xb8b8b8u

/* Blocks alike: allocated in column a, freed in column f, of one stack. */
struct hl_block {
	uint32_t a, f, stack;
	int64_t n, bytes;      /* sampled blocks, their unsampled bytes */
	int64_t peak;          /* of the bytes, those in use at the peak */
	double sq;             /* the variance of bytes (pv_sample_var) */
};

struct hl {
	struct strip *strip;
	uint32_t v_n, v_bytes; /* alloc_samples, alloc_space */
	uint32_t v_peak;       /* peak_space, PV_NONE when the profile has none */
	int64_t peak_ns;       /* the peak's instant: its last block's allocation, -1 unknown */
	struct hl_block *b; size_t nb;
	uint32_t band[BANDS]; size_t nbands; /* the strip frame of each band */
	uint32_t *band_of;     /* strip stack -> its band */
	double *area;          /* strip frame -> bytes times columns in use */
	int64_t (*cols)[BANDS + 1]; /* STRIP_COLUMNS + 1: bytes in use per column and band */
	int64_t total[STRIP_COLUMNS], ymax, sampled;
	uint32_t peak;         /* the first column of the most bytes */
};

static int cmp_blocks(const void *x, const void *y)
{
	const struct hl_block *a = x, *b = y;

	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	if (a->f != b->f)
		return a->f < b->f ? -1 : 1;
	return a->stack < b->stack ? -1 : a->stack > b->stack;
}

/* The column of a block's free: STRIP_COLUMNS when not freed before the axis ends. */
static uint32_t free_column(const struct strip *strip, int64_t end_ns)
{
	if (end_ns == 0 || end_ns >= strip->from + strip->len)
		return STRIP_COLUMNS;
	return strip_column_of(strip, end_ns);
}

/* Every sample a block, those alike as one.  0 or -1. */
static int gather_blocks(struct hl *h)
{
	struct strip *strip = h->strip;
	const struct pv_profile *p = strip->p;
	int64_t run = pv_run_length(p);
	size_t n = 0;

	if (!(h->b = pv_budget_calloc(p->nsamples ? p->nsamples : 1, sizeof *h->b)))
		return pv_oom();
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pv_sample *s = &p->samples[i];
		struct hl_block *b = &h->b[i];
		if ((b->stack = strip_stack_of(strip, s)) == PV_NONE)
			return -1;
		b->a = strip_column_of(strip, s->time_ns);
		b->f = free_column(strip, pv_block_end(p, s, run));
		if (b->f < b->a)
			b->f = b->a;
		b->n = h->v_n != PV_NONE ? s->values[h->v_n] : 1;
		b->bytes = s->values[h->v_bytes];
		b->peak = h->v_peak != PV_NONE ? s->values[h->v_peak] : 0;
		if (b->peak && s->time_ns > h->peak_ns)
			h->peak_ns = s->time_ns;
		b->sq = pv_sample_var(s, h->v_bytes, h->v_n);
		h->sampled += b->n;
	}
	if (p->nsamples > 1)
		qsort(h->b, p->nsamples, sizeof *h->b, cmp_blocks);
	for (size_t i = 0; i < p->nsamples; i++) {
		if (n && cmp_blocks(&h->b[n - 1], &h->b[i]) == 0) {
			h->b[n - 1].n += h->b[i].n;
			h->b[n - 1].bytes += h->b[i].bytes;
			h->b[n - 1].peak += h->b[i].peak;
			h->b[n - 1].sq += h->b[i].sq;
		} else {
			h->b[n++] = h->b[i];
		}
	}
	h->nb = n;
	return 0;
}

/* The frame whose band a stack's bytes are in, or STRIP_NO_COLOUR. */
static uint32_t holder(const struct strip *strip, uint32_t stack)
{
	const struct strip_stack *st = &strip->stacks[stack];

	return st->matched ? st->colour : STRIP_NO_COLOUR;
}

static int cmp_area(const void *x, const void *y, void *ctx)
{
	const struct hl *h = ctx;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	if (h->area[a] != h->area[b])
		return h->area[a] > h->area[b] ? -1 : 1;
	return strcmp(h->strip->frames[a].name, h->strip->frames[b].name);
}

/* The bands: the functions with the most bytes over the run.  0 or -1. */
static int choose_bands(struct hl *h)
{
	struct strip *strip = h->strip;
	size_t nf = strip->nframes ? strip->nframes : 1, n = 0;
	uint32_t *order = malloc(nf * sizeof *order);

	h->area = pv_budget_calloc(nf, sizeof *h->area);
	h->band_of = pv_budget_calloc(strip->nstacks ? strip->nstacks : 1, sizeof *h->band_of);
	if (!order || !h->area || !h->band_of) {
		free(order);
		return pv_oom();
	}
	for (size_t i = 0; i < h->nb; i++) {
		uint32_t f = holder(strip, h->b[i].stack);
		if (f != STRIP_NO_COLOUR)
			h->area[f] += (double)h->b[i].bytes * (h->b[i].f - h->b[i].a);
	}
	for (size_t f = 0; f < strip->nframes; f++)
		if (h->area[f] > 0)
			order[n++] = (uint32_t)f;
	qsort_r(order, n, sizeof *order, cmp_area, h);
	h->nbands = n < BANDS ? n : BANDS;
	memcpy(h->band, order, h->nbands * sizeof *order);
	for (size_t s = 0; s < strip->nstacks; s++) {
		uint32_t f = holder(strip, (uint32_t)s);
		h->band_of[s] = OTHER;
		for (size_t k = 0; k < h->nbands && f != STRIP_NO_COLOUR; k++)
			if (h->band[k] == f)
				h->band_of[s] = (uint32_t)k;
	}
	free(order);
	return 0;
}

/* The top of the y scale, at least v, and its ticks' step: multiples of
 * half a power of ten of a unit (1024^k bytes), so that they read well,
 * at most six steps. */
static int64_t scale_top(int64_t v, double *step)
{
	double unit = 1, m, half, top;

	while ((double)v / unit >= 1000)
		unit *= 1024;
	m = (double)v / unit;
	half = pow(10, floor(log10(m > 1 ? m : 1))) / 2;
	if (half < 1 && unit == 1)
		half = 1;
	top = ceil(m / half) * half;
	*step = half;
	while (top / *step > 6)
		*step *= 2;
	*step *= unit;
	return (int64_t)ceil(top * unit);
}

/* The column of the peak, when the profile says which blocks were in use
 * then (peak_space) and its instant is on the axis: the heap at that
 * instant, band by band, and the peak there. */
static void peak_column(struct hl *h)
{
	const struct strip *strip = h->strip;
	uint32_t c;

	if (h->peak_ns < 0 || h->peak_ns < strip->from || h->peak_ns >= strip->from + strip->len)
		return;
	c = strip_column_of(strip, h->peak_ns);
	memset(h->cols[c], 0, sizeof h->cols[c]);
	h->total[c] = 0;
	for (size_t i = 0; i < h->nb; i++) {
		h->cols[c][h->band_of[h->b[i].stack]] += h->b[i].peak;
		h->total[c] += h->b[i].peak;
	}
	h->peak = c;
}

/* The bytes in use per column and band, their total, the peak.  0 or -1. */
static int count_columns(struct hl *h)
{
	int64_t best = -1;

	if (!(h->cols = calloc(STRIP_COLUMNS + 1, sizeof *h->cols)))
		return pv_oom();
	for (size_t i = 0; i < h->nb; i++) {
		const struct hl_block *b = &h->b[i];
		uint32_t k = h->band_of[b->stack];
		h->cols[b->a][k] += b->bytes;
		h->cols[b->f][k] -= b->bytes;
	}
	for (uint32_t c = 0; c < STRIP_COLUMNS; c++) {
		h->total[c] = 0;
		for (int k = 0; k <= BANDS; k++) {
			if (c)
				h->cols[c][k] += h->cols[c - 1][k];
			h->total[c] += h->cols[c][k];
		}
		if (h->total[c] > best) {
			best = h->total[c];
			h->peak = c;
		}
	}
	peak_column(h);
	return 0;
}

/* Bytes for people: "12.3 MiB". */
static const char *bytes_str(char *buf, size_t n, double v)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;

	while (fabs(v) >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%.0f B", v);
	else
		snprintf(buf, n, "%.*f %s", fabs(v) >= 100 || v == floor(v) ? 0 : 1, v, units[u]);
	return buf;
}

static double y_of(const struct hl *h, int64_t v)
{
	return AREA_TOP + AREA_H - (double)AREA_H * (double)v / (double)h->ymax;
}

/* Band k: its top along the columns left to right, its bottom back, as
 * steps, runs of one height as one line. */
static void put_band(struct hl *h, int k, uint32_t rgb)
{
	FILE *out = h->strip->out;
	int64_t below[STRIP_COLUMNS], above[STRIP_COLUMNS];
	bool any = false;

	for (uint32_t c = 0; c < STRIP_COLUMNS; c++) {
		below[c] = 0;
		for (int j = 0; j < k; j++)
			below[c] += h->cols[c][j];
		above[c] = below[c] + h->cols[c][k];
		any |= h->cols[c][k] > 0;
	}
	if (!any)
		return;
	fprintf(out, "<path fill=\"#%06x\" d=\"M%d %.1f", rgb, STRIP_LEFT, y_of(h, above[0]));
	for (uint32_t c = 1; c < STRIP_COLUMNS; c++)
		if (above[c] != above[c - 1])
			fprintf(out, "H%u V%.1f", STRIP_LEFT + c, y_of(h, above[c]));
	fprintf(out, "H%d V%.1f", STRIP_LEFT + STRIP_COLUMNS, y_of(h, below[STRIP_COLUMNS - 1]));
	for (uint32_t c = STRIP_COLUMNS - 1; c > 0; c--)
		if (below[c - 1] != below[c])
			fprintf(out, "H%u V%.1f", STRIP_LEFT + c, y_of(h, below[c - 1]));
	fprintf(out, "H%d Z\"/>\n", STRIP_LEFT);
}

/* The y scale (ticks in bytes), the bands, the peak marked. */
static void put_area(struct hl *h)
{
	struct strip *strip = h->strip;
	FILE *out = strip->out;
	double step, px;
	int64_t most = 1, top;
	char b[64], t[32];

	/* the peak is the most but where the trace's times disagree with
	 * its order (threads' clocks): the scale holds every column */
	for (uint32_t c = 0; c < STRIP_COLUMNS; c++)
		most = h->total[c] > most ? h->total[c] : most;
	top = scale_top(most, &step);

	h->ymax = top;
	fprintf(out, "<g id=\"area\"><rect class=\"bg\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>\n",
		STRIP_LEFT, AREA_TOP, STRIP_COLUMNS, AREA_H);
	for (int k = 0; k * step <= (double)top * (1 + 1e-9); k++) {
		double v = k * step, y = AREA_TOP + AREA_H - (double)AREA_H * v / (double)top;
		fprintf(out, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
			"<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			STRIP_LEFT - 4, y, STRIP_LEFT + STRIP_COLUMNS, y, STRIP_LEFT - 8, y + 4, bytes_str(b, sizeof b, v));
	}
	fprintf(out, "<text x=\"10\" y=\"%d\">in use</text>\n", AREA_TOP + 12);
	for (size_t k = 0; k < h->nbands; k++)
		put_band(h, (int)k, strip->frames[h->band[k]].rgb);
	put_band(h, OTHER, FILL_OTHER);
	px = STRIP_LEFT + h->peak + 0.5;
	fprintf(out, "<g id=\"peak\" data-bytes=\"%" PRId64 "\" data-time=\"%.6f\" data-column=\"%u\">"
		"<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>",
		h->total[h->peak], (double)(strip->from + (int64_t)ceil((double)(h->peak + 1) * (double)strip->len / STRIP_COLUMNS)) / 1e9,
		h->peak, px, AREA_TOP, px, AREA_TOP + AREA_H);
	fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">peak %s at %s</text></g>\n</g>\n",
		px + (h->peak < STRIP_COLUMNS / 2 ? 4 : -4), AREA_TOP + 12, h->peak < STRIP_COLUMNS / 2 ? "start" : "end",
		bytes_str(b, sizeof b, (double)h->total[h->peak]),
		pv_format_duration(t, sizeof t, strip->from + (int64_t)((double)(h->peak + 1) * (double)strip->len / STRIP_COLUMNS)));
}

/* The legend: the bands' functions, then the rest.  Returns its height. */
static int put_legend(struct hl *h, double y, bool draw)
{
	struct strip *strip = h->strip;
	FILE *out = strip->out;
	size_t fit = (size_t)((STRIP_LEGEND_W - 24) / STRIP_CHAR_W), items = h->nbands + 1;

	for (size_t item = 0; item < items && draw; item++) {
		double x = STRIP_LEFT + (double)(item % STRIP_LEGEND_COLS) * STRIP_LEGEND_W;
		double iy = y + (double)(item / STRIP_LEGEND_COLS) * STRIP_LEGEND_ROW;
		const char *name = item < h->nbands ? strip->frames[h->band[item]].name :
				   strip->c->o->highlight ? "other functions, or no frame matches --highlight" :
				   "other functions";
		fprintf(out, "<g class=\"item\"><rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"12\" fill=\"#%06x\"/>"
			"<text x=\"%.0f\" y=\"%.0f\">", x, iy,
			item < h->nbands ? strip->frames[h->band[item]].rgb : FILL_OTHER, x + 20, iy + 10);
		pv_xml_put(out, name, fit, true);
		fputs("</text><title>", out);
		pv_xml_put(out, name, SIZE_MAX, true);
		fputs("</title></g>\n", out);
	}
	return (int)((items + STRIP_LEGEND_COLS - 1) / STRIP_LEGEND_COLS) * STRIP_LEGEND_ROW;
}

static void put_head(struct hl *h, double height)
{
	struct strip *strip = h->strip;
	FILE *out = strip->out;
	const char *prog = pv_str(strip->p, strip->p->program);
	char b[64];

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" id=\"heapline\" width=\"%d\" "
		"height=\"%.0f\" viewBox=\"0 0 %d %.0f\">\n", STRIP_WIDTH, height, STRIP_WIDTH, height);
	fprintf(out, "<style>\n"
		"#heapline text { font-family: monospace; font-size: %dpx; fill: #000; }\n"
		"#heapline .title { font-size: 17px; font-weight: bold; }\n"
		"#heapline .bg { fill: #f0eee8; }\n"
		"#area { cursor: crosshair; }\n"
		"#area .grid, #axis line { stroke: #bbb; }\n"
		"#area path { stroke: none; shape-rendering: crispEdges; }\n"
		"#peak line { stroke: #c01c28; stroke-dasharray: 4 3; }\n"
		"#sel-box { fill: #3584e4; fill-opacity: 0.18; stroke: #1a5fb4; pointer-events: none; }\n"
		"#flame text { pointer-events: none; }\n"
		"#flame rect { stroke: #fff; stroke-width: 0.5; }\n"
		"#flame g:hover rect { stroke: #000; stroke-width: 1; }\n"
		"#tip { pointer-events: none; }\n"
		"#tip rect { fill: #fffff0; stroke: #777; }\n"
		"</style>\n", STRIP_FONT);
	fprintf(out, "<rect id=\"background\" x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#fbfaf7\"/>\n",
		STRIP_WIDTH, height);
	fprintf(out, "<text class=\"title\" x=\"%d\" y=\"22\" text-anchor=\"middle\">", STRIP_WIDTH / 2);
	pv_xml_put(out, strip_escaped(strip, prog[0] ? prog : "profile"), SIZE_MAX, true);
	fprintf(out, " \u2014 heap in use</text>\n<text x=\"%d\" y=\"40\" text-anchor=\"middle\">%" PRId64
		" sampled blocks (a sample every %s on average); ", STRIP_WIDTH / 2, h->sampled,
		bytes_str(b, sizeof b, (double)strip->p->period));
	strip_put_view(strip);
	if (strip->p->heap_since_attach)
		fputs("; only the blocks allocated since collect-heap attached", out);
	fputs("</text>\n", out);
}

/* The script's data: the layout, frames, stacks, blocks (a, f, stack,
 * sampled, bytes, the variance of bytes) and the curve. */
static void put_data(struct hl *h, double flame_top)
{
	struct strip *strip = h->strip;
	FILE *out = strip->out;

	fprintf(out, "var HL = {\"a\":%" PRId64 ",\"l\":%" PRId64 ",\"n\":%d,\"x0\":%d,\"y0\":%d,\"h\":%d,"
		"\"ymax\":%" PRId64 ",\"w\":%d,\"ft\":%.0f,\"fr\":%d,\"cw\":%.2f,\"peak\":[%u,%" PRId64 "],\n",
		strip->from, strip->len, STRIP_COLUMNS, STRIP_LEFT, AREA_TOP, AREA_H, h->ymax, STRIP_WIDTH, flame_top, STRIP_FLAME_ROW, STRIP_CHAR_W,
		h->peak, h->total[h->peak]);
	strip_put_frames(strip);
	fputs(",\n\"b\":[", out);
	for (size_t i = 0; i < h->nb; i++)
		fprintf(out, "%s%u,%u,%u,%" PRId64 ",%" PRId64 ",%.6g", i ? "," : "", h->b[i].a, h->b[i].f,
			h->b[i].stack, h->b[i].n, h->b[i].bytes, h->b[i].sq);
	fputs("],\n\"u\":[", out);
	for (uint32_t c = 0; c < STRIP_COLUMNS; c++)
		fprintf(out, "%s%" PRId64, c ? "," : "", h->total[c]);
	fputs("]};\n", out);
}

static void put_tail(struct hl *h, double sel_y, double flame_top, double height)
{
	FILE *out = h->strip->out;

	fprintf(out, "<rect id=\"sel-box\" x=\"%d\" y=\"%d\" width=\"0\" height=\"%d\" style=\"display: none\"/>\n",
		STRIP_LEFT, AREA_TOP, AREA_H);
	fprintf(out, "<text id=\"selection\" x=\"10\" y=\"%.0f\">the whole run</text>\n", sel_y);
	fputs("<g id=\"flame\"></g>\n", out);
	fprintf(out, "<text id=\"details\" x=\"10\" y=\"%.0f\"></text>\n", height - 10);
	fputs("<g id=\"tip\" display=\"none\"><rect x=\"0\" y=\"0\" width=\"0\" height=\"0\" rx=\"3\"/><text></text></g>\n",
	      out);
	fputs("<script><![CDATA[\n", out);
	put_data(h, flame_top);
	fputs(pv_script_spansel, out);
	fputs(pv_script_heapline, out);
	fputs("]]></script>\n</svg>\n", out);
}

static void hl_free(struct hl *h)
{
	free(h->b);
	free(h->band_of);
	free(h->area);
	free(h->cols);
}

int report_heapline(FILE *out, const struct pv_report_ctx *c)
{
	struct strip s, *strip = &s;
	struct hl h = { .strip = strip };
	double axis_y = AREA_TOP + AREA_H + 2, sel_y, flame_top, height;
	int ret = -1;

	if (strip_init(strip, out, c) < 0)
		return -1;
	h.v_n = pv_find_value_type(strip->p, "alloc_samples");
	h.v_bytes = pv_find_value_type(strip->p, "alloc_space");
	h.v_peak = pv_find_value_type(strip->p, "peak_space");
	h.peak_ns = -1;
	if (gather_blocks(&h) < 0 || choose_bands(&h) < 0 || count_columns(&h) < 0)
		goto out;
	sel_y = axis_y + STRIP_AXIS + put_legend(&h, 0, false) + 16;
	flame_top = sel_y + 10;
	height = flame_top + 2 * STRIP_FLAME_ROW + STRIP_BOTTOM;
	put_head(&h, height);
	put_area(&h);
	strip_put_axis(strip, axis_y);
	fputs("<g id=\"legend\">\n", strip->out);
	put_legend(&h, axis_y + STRIP_AXIS, true);
	fputs("</g>\n", strip->out);
	put_tail(&h, sel_y, flame_top, height);
	ret = 0;
out:
	hl_free(&h);
	strip_free(strip);
	return ret;
}
