/* report-flame.c - the flame graph: the call tree drawn as boxes, one SVG
 *
 * Each node is a box as wide as its share of the weight (CPU time when the
 * profile has it, else samples), its children on the row above it (below
 * it with icicle) from the left, in the tree's order (heaviest first).
 * Boxes narrower than a minimum width are summed per parent in one
 * "[N narrower]" box, as FlameGraph's --minwidth does; those --mincount or
 * --maxdepth leave out, and those deeper than FLAME_MAX_DEPTH, in one
 * "[N more]" box.  The minimum width is MIN_PX, made larger (doubled
 * until the boxes fit) when the boxes would take more than
 * FLAME_MAX_BYTES: a profile of many distinct deep stacks would otherwise
 * make a file of a hundred megabytes.  A flame graph opens at its
 * root, at the bottom of the picture however high.  The file carries its own
 * style and script: a <title> per box for hover, click to zoom, a search
 * that shows the share of the matching frames.  The script reads the tree
 * back from the document order (pre-order) and the rows, so the boxes need
 * no extra attributes.
 *
 * A comparison (t->dn) is drawn as FlameGraph draws its differences: the
 * boxes as wide as the new side's values, their colours the verdicts of
 * diff.h's test of each node, red worse, blue better, stronger for a
 * larger change, grey where the change is not significant; the titles
 * give both sides, the change and its q-value.
 */
#include "report.h"
#include "present.h"
#include "error.h"
#include "escape.h"
#include "scripts.h"
#include "units.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NAME_MAX_LEN 4096

#define WIDTH 1200.0    /* image width, px */
#define PAD 10.0        /* left and right margin */
#define ROW 16.0        /* height of a row of boxes */
#define TOP 56.0        /* room for the title and the buttons */
#define DIFF_LINE 16.0  /* and for a comparison's legend */
#define BOTTOM 34.0     /* room for the details line */
#define FONT 12.0       /* px, monospace */
#define CHAR_W 7.3      /* width of one character at FONT, a little generous */
#define MIN_PX 0.1      /* narrower boxes are summed per parent, at least */
/* The boxes' bytes at most (the file: a few kB more); the minimum width
 * grows until they fit. */
#define FLAME_MAX_BYTES (1536u * 1024)
/* Rows drawn at most: a stack tens of thousands of frames deep would make
 * a picture a million pixels high, and a file that grows with its depth
 * times the boxes' text; deeper frames are summed in "[N more]" boxes. */
#define FLAME_MAX_DEPTH 1024

struct flame {
	FILE *out;                   /* NULL: only lay out (first pass) */
	const struct calltree *t;
	const struct pv_report_options *o;
	const char *label;           /* what is in force, for the subtitle, or NULL */
	bool by_value;               /* weigh by the profile's value, not counts */
	double scale;                /* px per unit of weight */
	int64_t total;               /* the root's weight */
	uint32_t maxdepth;           /* deepest row drawn */
	bool cut;                    /* the tree is deeper than FLAME_MAX_DEPTH */
	double min_px;               /* narrower boxes are summed: MIN_PX or more */
	uint64_t bytes;              /* written, while measuring */
	bool measuring;              /* out counts (stop past FLAME_MAX_BYTES) */
	double *x;                   /* left edge of each node, px */
	unsigned char *grey;         /* at or below the noise floor */
	double top;                  /* y of the top row: TOP, more for a comparison */
	const struct pv_diff_cell *cells; /* a comparison's, per node; NULL if none */
	double fdr;                  /* ... and the false discovery rate it used */
	char note[512];
	uint32_t *stack;
	char name[NAME_MAX_LEN], where[NAME_MAX_LEN], scratch[NAME_MAX_LEN];
};

static int64_t weight(const struct flame *f, const struct ct_node *n)
{
	return f->by_value ? n->value : n->count;
}

/* Write the name in buf (NAME_MAX_LEN bytes) visibly, in place, with
 * pv_escape: what is left is valid UTF-8 without a character XML forbids.
 * Returns its number of characters. */
static size_t escape_name(struct flame *f, char *buf)
{
	size_t chars = 0;

	pv_escape(f->scratch, sizeof f->scratch, buf);
	memcpy(buf, f->scratch, strlen(f->scratch) + 1);
	for (const unsigned char *c = (const unsigned char *)buf; *c; c++)
		chars += (*c & 0xc0) != 0x80;
	return chars;
}

/* A warm colour from the name, the same for the same name in every run. */
static void warm_colour(const char *name, int rgb[3])
{
	uint32_t h = 2166136261u;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = (h ^ *c) * 16777619u;
	rgb[0] = 205 + (int)(h % 51);
	rgb[1] = (int)((h >> 8) % 231);
	rgb[2] = (int)((h >> 20) % 56);
}

/* A kernel frame's colour: a cool one, from a band of teal and blue no
 * user frame's warm colour comes near (FlameGraph, too, gives the kernel
 * frames a hue of their own). */
static void kernel_colour(const char *name, int rgb[3])
{
	uint32_t h = 2166136261u;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = (h ^ *c) * 16777619u;
	rgb[0] = 40 + (int)(h % 60);
	rgb[1] = 150 + (int)((h >> 8) % 56);
	rgb[2] = 170 + (int)((h >> 20) % 71);
}

static void label(struct flame *f, const struct ct_node *nd)
{
	f->where[0] = '\0';
	if (nd->kind == CT_ROOT) {
		/* FlameGraph's name for the root */
		snprintf(f->name, sizeof f->name, "all");
	} else if (ct_is_group(nd->kind)) {
		calltree_node_name(f->t, (uint32_t)(nd - f->t->nodes), f->name, sizeof f->name);
	} else {
		bool kernel = calltree_frame_is_kernel(f->t, nd->frame);
		size_t at = kernel ? CT_KERNEL_MARK_LEN : 0;
		memcpy(f->name, CT_KERNEL_MARK, at);
		calltree_frame_name(f->t, nd->frame, f->name + at, sizeof f->name - at);
		calltree_frame_where(f->t, nd->frame, f->where, sizeof f->where);
		if (!f->name[at])
			snprintf(f->name + at, sizeof f->name - at, "[unknown]");
	}
}

static double row_y(const struct flame *f, uint32_t depth)
{
	return f->o->icicle ? f->top + depth * ROW : f->top + (double)(f->maxdepth - depth) * ROW;
}

/* One box: f->name holds its name, f->where its location (both escaped here). */
static void put_box(struct flame *f, const char *cls, double x, double w, uint32_t depth,
		    int64_t count, int64_t wt, int64_t value, double sq, const char *fill, const char *note)
{
	FILE *out = f->out;
	size_t nchars = escape_name(f, f->name);
	double share = f->total > 0 ? 100.0 * (double)wt / (double)f->total : 0.0;
	double y = row_y(f, depth);
	const char *vname = pv_value_label(pv_value_type(f->t));
	size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;

	fprintf(out, "<g class=\"%s\"><title>", cls);
	pv_xml_put(out, f->name, nchars, false);
	/* the noise: one standard error, of the count and of the share */
	fprintf(out, "\n%" PRId64 " sample%s (\u00b1%.0f), %.2f%% (\u00b1%.2f%%)", count,
		count == 1 ? "" : "s", ct_noise_samples(f->t, count, wt, sq), share,
		f->total > 0 ? 100.0 * sqrt(ct_var(f->t, wt, sq)) / (double)f->total : 0.0);
	if (vname) {
		char d[32];
		calltree_value_str(f->t, value, d, sizeof d);
		fprintf(out, ", %s %s", vname, d);
	}
	if (f->where[0]) {
		size_t wc = escape_name(f, f->where);
		fputc('\n', out);
		pv_xml_put(out, f->where, wc, false);
	}
	if (note) {
		fputc('\n', out);
		pv_xml_put(out, note, (size_t)-1, false);
	}
	fprintf(out, "</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%.0f\" fill=\"%s\"/>",
		x, y, w, ROW - 1, fill);
	if (fit >= 3) {
		fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + ROW - 4.5);
		if (nchars <= fit) {
			pv_xml_put(out, f->name, nchars, false);
		} else {
			pv_xml_put(out, f->name, fit - 2, false);
			fputs("..", out);
		}
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
}

/* A node's comparison, for its title, into f->note. */
static void diff_note(struct flame *f, const struct pv_diff_cell *c)
{
	char b[64], n[64], d[64], pct[32], q[32];

	pv_amount_text(f->t, b, sizeof b, c->base, 0);
	pv_amount_text(f->t, n, sizeof n, c->new_, 0);
	pv_amount_text(f->t, d, sizeof d, c->delta, PV_AMOUNT_SIGN);
	pv_change_text(pct, sizeof pct, c);
	pv_diff_q_text(q, sizeof q, c->q);
	snprintf(f->note, sizeof f->note, "base %s, new %s, delta %s (%s), q %s, %s", b, n, d, pct, q,
		 c->verdict == PV_VERDICT_NONE ? "not significant" : pv_verdict_name(c->verdict));
}

/* A comparison's colour (present.h): the titles' red and blue. */
static void diff_color(const struct pv_diff_cell *c, char *fill, size_t n)
{
	static const struct pv_ramp ramp = {
		.none = { 221, 221, 221 },
		.worse = { { 250, 205, 195 }, { 225, 45, 35 } },
		.better = { { 205, 218, 250 }, { 70, 120, 235 } },
	};
	int rgb[3];

	pv_ramp_rgb(&ramp, c, rgb);
	snprintf(fill, n, "rgb(%d,%d,%d)", rgb[0], rgb[1], rgb[2]);
}

static void put_node(struct flame *f, uint32_t id)
{
	const struct ct_node *nd = &f->t->nodes[id];
	char fill[32];
	const char *cls = "f", *note = NULL;

	label(f, nd);
	if (f->cells) {
		diff_note(f, &f->cells[id]);
		note = f->note;
	}
	if (f->grey[id]) {
		snprintf(fill, sizeof fill, "rgb(200,200,200)");
		cls = "f nf";
		if (note)
			snprintf(f->note + strlen(f->note), sizeof f->note - strlen(f->note),
				 "\nat or below the noise floor");
		else
			note = "at or below the noise floor";
	} else if (f->cells) {
		const struct pv_diff_cell *c = &f->cells[id];
		diff_color(c, fill, sizeof fill);
		cls = c->verdict == PV_VERDICT_WORSE ? "f worse" :
		      c->verdict == PV_VERDICT_BETTER ? "f better" : "f insignificant";
	} else if (nd->kind == CT_ROOT) {
		snprintf(fill, sizeof fill, "rgb(225,185,140)");
	} else if (ct_is_group(nd->kind)) {
		snprintf(fill, sizeof fill, "rgb(150,190,230)");
	} else if (calltree_node_is_kernel(f->t, id)) {
		int rgb[3];
		kernel_colour(f->name, rgb);
		snprintf(fill, sizeof fill, "rgb(%d,%d,%d)", rgb[0], rgb[1], rgb[2]);
		cls = "f k";
	} else {
		int rgb[3];
		warm_colour(f->name, rgb);
		snprintf(fill, sizeof fill, "rgb(%d,%d,%d)", rgb[0], rgb[1], rgb[2]);
	}
	put_box(f, cls, f->x[id], (double)weight(f, nd) * f->scale, nd->depth, nd->count,
		weight(f, nd), nd->value, nd->sq, fill, note);
}

enum flame_hidden { FLAME_DRAWN, FLAME_NARROW, FLAME_LEFT_OUT };

/* Is child c of nd drawn as a box of its own, or why not? */
static enum flame_hidden hidden(const struct flame *f, const struct ct_node *c)
{
	if (f->o->mincount > 0 && c->count < f->o->mincount)
		return FLAME_LEFT_OUT;
	if (f->o->maxdepth > 0 && c->depth > (uint32_t)f->o->maxdepth)
		return FLAME_LEFT_OUT;
	if (c->depth > FLAME_MAX_DEPTH)
		return FLAME_LEFT_OUT;
	return (double)weight(f, c) * f->scale >= f->min_px ? FLAME_DRAWN : FLAME_NARROW;
}

static bool drawn(const struct flame *f, const struct ct_node *c)
{
	return hidden(f, c) == FLAME_DRAWN;
}

/* Pre-order walk: lay out every drawn node's children as it is reached and,
 * on the second pass, write it.  The "[N more]" box of a node comes after
 * its subtree (a marker on the stack), where the script expects a child. */
static void walk(struct flame *f)
{
	const struct ct_node *nodes = f->t->nodes;
	size_t sp = 0;

	f->x[0] = PAD;
	f->grey[0] = 0;
	f->stack[sp++] = 0;
	while (sp && !(f->measuring && f->bytes > FLAME_MAX_BYTES)) {
		uint32_t id = f->stack[--sp];

		if (id & 0x80000000u) {
			const struct ct_node *par = &nodes[id & 0x7fffffffu];
			int64_t hc = 0, hw = 0, hv = 0;
			double hs = 0;
			uint32_t hn = 0, narrow = 0;
			double x = f->x[id & 0x7fffffffu];

			for (uint32_t c = par->first_child; c != PV_NONE; c = nodes[c].next_sibling) {
				enum flame_hidden why = hidden(f, &nodes[c]);
				if (why == FLAME_DRAWN) {
					x += (double)weight(f, &nodes[c]) * f->scale;
					continue;
				}
				narrow += why == FLAME_NARROW;
				/* a comparison's node of the base alone is in no box */
				if (f->cells && nodes[c].count == 0 && nodes[c].value == 0)
					continue;
				hc += nodes[c].count;
				hw += weight(f, &nodes[c]);
				hv += nodes[c].value;
				hs += nodes[c].sq;
				hn++;
			}
			if (f->out) {
				char fill[32];
				snprintf(fill, sizeof fill, "%s",
					 f->grey[id & 0x7fffffffu] ? "rgb(215,215,215)" : "rgb(238,238,238)");
				snprintf(f->name, sizeof f->name, narrow == hn ? "[%u narrower]" : "[%u more]", hn);
				snprintf(f->note, sizeof f->note, narrow == hn ?
					 "frames narrower than %.1f px, summed" :
					 "frames narrower than %.1f px, or left out, summed", f->min_px);
				f->where[0] = '\0';
				put_box(f, "f more", x, (double)hw * f->scale, par->depth + 1, hc, hw, hv, hs, fill,
					f->note);
			} else if (par->depth + 1 > f->maxdepth) {
				f->maxdepth = par->depth + 1;
			}
			continue;
		}

		const struct ct_node *nd = &nodes[id];
		if (f->out)
			put_node(f, id);
		else if (nd->depth > f->maxdepth)
			f->maxdepth = nd->depth;

		/* Children from the left in the tree's order; those not drawn
		 * are summed in one box after the drawn ones. */
		double x = f->x[id];
		int64_t hidden_w = 0;
		size_t first = sp;
		for (uint32_t c = nd->first_child; c != PV_NONE; c = nodes[c].next_sibling) {
			const struct ct_node *cn = &nodes[c];
			if (!drawn(f, cn)) {
				hidden_w += weight(f, cn);
				continue;
			}
			f->x[c] = x;
			x += (double)weight(f, cn) * f->scale;
			f->grey[c] = f->grey[id] ||
				     ct_node_below_floor(f->t, c, f->o->noisefloor);
			f->stack[sp++] = c;
		}
		/* (a box for what is summed even narrower than min_px: the
		 * row adds up to its parent to MIN_PX) */
		if ((double)hidden_w * f->scale >= MIN_PX) {
			/* Below the drawn children on the stack: written last. */
			memmove(f->stack + first + 1, f->stack + first, (sp - first) * sizeof *f->stack);
			f->stack[first] = id | 0x80000000u;
			sp++;
		}
		/* Pop the leftmost first. */
		size_t lo = first + ((double)hidden_w * f->scale >= MIN_PX ? 1 : 0);
		for (size_t i = lo, j = sp; j > i + 1; i++, j--) {
			uint32_t tmp = f->stack[i];
			f->stack[i] = f->stack[j - 1];
			f->stack[j - 1] = tmp;
		}
	}
}

/* A comparison's line under the subtitle: what the widths and the colours
 * mean, and how much of the base is in no box (in frames the new side
 * never reached). */
static void put_diff_legend(struct flame *f)
{
	const struct calltree *t = f->t;
	double gone = 0;
	char g[64];

	for (size_t i = 1; i < t->nnodes; i++) {
		const struct ct_node *nd = &t->nodes[i];
		if (nd->count == 0 && nd->value == 0 && t->nodes[nd->parent].count > 0)
			gone += f->cells[i].base;
	}
	snprintf(f->note, sizeof f->note,
		 "Against the base: red slower, blue faster (deeper: larger), "
		 "grey not significant (FDR %g); widths: new", f->fdr);
	if (gone > 0) {
		pv_amount_text(t, g, sizeof g, gone, 0);
		snprintf(f->note + strlen(f->note), sizeof f->note - strlen(f->note),
			 "; base in no box %s", g);
	}
	fprintf(f->out, "<text id=\"comparison\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">", WIDTH / 2,
		40 + DIFF_LINE);
	pv_xml_put(f->out, f->note, (size_t)-1, false);
	fputs("</text>\n", f->out);
}

static void put_header(struct flame *f, double height)
{
	FILE *out = f->out;
	const struct calltree *t = f->t;
	const struct pv_profile *p = t->p;
	const char *vname = pv_value_label(pv_value_type(t));
	const char *prog = pv_str(p, p->program);
	char d[32];

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\">\n", WIDTH, height, WIDTH, height);
	fprintf(out, "<style>\n"
		"text { font-family: monospace; font-size: %.0fpx; fill: #000; }\n"
		"#frames text { pointer-events: none; }\n"
		"#frames g { cursor: pointer; }\n"
		"#frames rect { stroke: #fff; stroke-width: 0.5; }\n"
		"#frames g:hover rect { stroke: #000; stroke-width: 1; }\n"
		"#frames g.nf text { fill: #555; }\n"
		"#frames g.more text { fill: #666; font-style: italic; }\n"
		"#frames g.faded { opacity: 0.5; }\n"
		".title { font-size: 17px; font-weight: bold; }\n"
		".btn { fill: #1a5fb4; cursor: pointer; text-decoration: underline; }\n"
		"</style>\n", FONT);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#fbfaf7\"/>\n", WIDTH, height);
	fprintf(out, "<text class=\"title\" x=\"%.0f\" y=\"22\" text-anchor=\"middle\">", WIDTH / 2);
	snprintf(f->name, sizeof f->name, "%s", prog[0] ? prog : "profile");
	pv_xml_put(out, f->name, escape_name(f, f->name), false);
	fputs(f->o->icicle ? " \u2014 icicle graph" : " \u2014 flame graph", out);
	fprintf(out, "</text>\n<text x=\"%.0f\" y=\"40\" text-anchor=\"middle\">%" PRId64 " samples",
		WIDTH / 2, t->samples);
	if (vname) {
		calltree_value_str(t, t->nodes[0].value, d, sizeof d);
		fprintf(out, ", %s %s", vname, d);
	}
	fprintf(out, "; box widths are shares of %s", f->by_value ? vname : "samples");
	if (f->label && f->label[0]) {
		snprintf(f->name, sizeof f->name, "%s", f->label);
		fputs("; ", out);
		pv_xml_put(out, f->name, escape_name(f, f->name), false);
	}
	if (t->kernel_frames)
		fputs(f->cells ? "; [k]: kernel frames" : "; [k]: kernel frames, in blues", out);
	if (f->o->noisefloor > 0)
		fprintf(out, "; grey: at or below the noise floor (K=%g)", f->o->noisefloor);
	if (f->cut)
		fprintf(out, "; frames deeper than %d are summed in [N more] boxes", FLAME_MAX_DEPTH);
	if (f->min_px > MIN_PX)
		fprintf(out, "; frames narrower than %.1f px are summed in [N narrower] boxes", f->min_px);
	fputs("</text>\n", out);
	if (f->cells)
		put_diff_legend(f);
	fprintf(out, "<text id=\"reset\" class=\"btn\" x=\"%.0f\" y=\"22\">Reset zoom</text>\n", PAD);
	fprintf(out, "<text id=\"search\" class=\"btn\" x=\"%.0f\" y=\"22\" text-anchor=\"end\">Search</text>\n",
		WIDTH - PAD);
	fprintf(out, "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"></text>\n", WIDTH - PAD,
		height - 12);
	fprintf(out, "<text id=\"details\" x=\"%.0f\" y=\"%.0f\"></text>\n", PAD, height - 12);
}

static ssize_t count_write(void *cookie, const char *buf, size_t n)
{
	struct flame *f = cookie;

	(void)buf;
	f->bytes += n;
	return (ssize_t)n;
}

/* Lay the boxes out with the smallest minimum width, from MIN_PX up, whose
 * boxes take at most FLAME_MAX_BYTES (written to a stream that counts).
 * 0, or -1 when out of memory. */
static int fit_width(struct flame *f)
{
	cookie_io_functions_t io = { .write = count_write };

	for (f->min_px = MIN_PX;; f->min_px *= 2) {
		FILE *counter;

		f->out = NULL;
		f->maxdepth = 0;
		walk(f);
		/* the whole picture's width: the root's children are at least
		 * summed in one box */
		if (f->min_px >= WIDTH)
			return 0;
		counter = fopencookie(f, "w", io);
		if (!counter)
			return pv_oom();
		f->out = counter;
		f->bytes = 0;
		f->measuring = true;
		walk(f);
		fclose(counter);
		f->measuring = false;
		if (f->bytes <= FLAME_MAX_BYTES)
			return 0;
	}
}

int report_flame(FILE *out, const struct pv_report_ctx *c)
{
	const struct calltree *t = c->t;
	const struct pv_report_options *o = c->o;
	struct flame *f = calloc(1, sizeof *f);
	size_t n = t->nnodes ? t->nnodes : 1;
	int ret = -1;

	if (!f)
		return pv_oom();
	f->t = t;
	f->o = o;
	f->label = c->label;
	f->top = TOP;
	if (t->dn && c->cells) {
		struct pv_diff_scale sc;

		/* widths stay the new side's, colours show the verdicts */
		f->cells = c->cells;
		pv_diff_scale_of(t, c->diff, &sc);
		f->fdr = sc.fdr;
		f->top = TOP + DIFF_LINE;
	}
	f->by_value = t->v_value != PV_NONE && t->nodes[0].value > 0;
	f->total = weight(f, &t->nodes[0]);
	f->x = pv_budget_calloc(n, sizeof *f->x);
	f->grey = pv_budget_calloc(n, 1);
	f->stack = pv_budget_calloc((n + 1) * 2, sizeof *f->stack);
	if (!f->x || !f->grey || !f->stack) {
		pv_oom();
		goto out;
	}
	if (f->total <= 0) {
		f->out = out;
		f->maxdepth = 0;
		put_header(f, f->top + BOTTOM + ROW);
		fprintf(out, "<g id=\"frames\"/>\n<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">no samples</text>\n",
			WIDTH / 2, f->top + ROW - 3);
		fputs("</svg>\n", out);
		ret = 0;
		goto out;
	}
	f->scale = (WIDTH - 2 * PAD) / (double)f->total;
	for (size_t i = 0; i < t->nnodes && !f->cut; i++)
		f->cut = t->nodes[i].depth > FLAME_MAX_DEPTH;
	if (fit_width(f) < 0)
		goto out;
	f->out = out;
	put_header(f, f->top + (f->maxdepth + 1) * ROW + BOTTOM);
	fputs("<g id=\"frames\">\n", out);
	walk(f);
	fputs("</g>\n<script><![CDATA[\n", out);
	fprintf(out, "var WIDTH = %.0f, PAD = %.0f, ROW = %.0f, TOP = %.0f, CHAR_W = %.2f, MAXD = %u, ICICLE = %s;\n",
		WIDTH, PAD, ROW, f->top, CHAR_W, f->maxdepth, o->icicle ? "true" : "false");
	fputs(pv_script_flame, out);
	fputs("]]></script>\n</svg>\n", out);
	ret = 0;
out:
	free(f->x);
	free(f->grey);
	free(f->stack);
	free(f);
	return ret;
}
