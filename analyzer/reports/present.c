/* present.c - how every report writes what it shows (see present.h) */
#include "present.h"
#include "allocframes.h"
#include "escape.h"
#include "raw-cpu.h"
#include "units.h"
#include "util.h"

#include <inttypes.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pv_value_type(const struct calltree *t)
{
	return t->v_value != PV_NONE ? pv_str(t->p, t->p->sample_types[t->v_value].type) : NULL;
}

const char *pv_value_label(const char *type)
{
	return type && strcmp(type, "cpu") == 0 ? "CPU" : type;
}

bool pv_value_is_cpu(const char *type)
{
	return type && (strcmp(type, "cpu") == 0 || strcmp(type, "cpu-clock") == 0 ||
			strcmp(type, "task-clock") == 0);
}

int pv_input_problems(const struct pv_profile *p, bool shares, void (*say)(void *arg, const char *phrase),
		      void *arg)
{
	char s[512], pc[32] = "";
	const char *cause = pv_str(p, p->lost_cause);
	int n = 0;

	if (p->lost) {
		if (p->lost_whole)
			snprintf(pc, sizeof pc, " in the whole trace");
		else if (shares)
			snprintf(pc, sizeof pc, " (%.1f%%)",
				 100.0 * (double)p->lost / ((double)p->lost + (double)p->nsamples));
		snprintf(s, sizeof s, "%" PRIu64 " sample%s lost%s%s%s", p->lost, p->lost == 1 ? "" : "s", pc,
			 cause[0] ? ": the trace could not grow: " : "", cause);
		say(arg, s), n++;
	}
	if (p->truncated) {
		if (shares)
			snprintf(pc, sizeof pc, " (%.1f%%)",
				 p->nsamples ? 100.0 * (double)p->truncated / (double)p->nsamples : 0.0);
		snprintf(s, sizeof s, "%" PRIu64 " sample%s%s with incomplete stacks", p->truncated,
			 p->truncated == 1 ? "" : "s", pc);
		say(arg, s), n++;
	}
	if (p->dropped_bytes) {
		snprintf(s, sizeof s, "%" PRIu64 " bytes of damaged input dropped", p->dropped_bytes);
		say(arg, s), n++;
	}
	return n;
}

bool report_unsampled(const struct pv_profile *p, char *buf, size_t n)
{
	return p->threads_cpu_ns > 0 && p->unsampled_cpu_ns > 0 &&
	       raw_cpu_unsampled_say(buf, n, (uint64_t)p->unsampled_cpu_ns, (uint64_t)p->threads_cpu_ns,
				     p->unsampled_threads, p->nthreads, p->lost);
}

bool report_own_allocator(const struct pv_profile *p, char *buf, size_t n)
{
	char path[512];

	if (!p->own_allocator)
		return false;
	snprintf(buf, n, "'%s' defines its own malloc: its allocations never reached collect-heap's and "
		 "are not in the profile; link it with the C library's malloc to profile its heap",
		 pv_escape(path, sizeof path, pv_str(p, p->own_allocator)));
	return true;
}

bool report_since_attach(const struct pv_profile *p, char *buf, size_t n)
{
	if (!p->heap_since_attach)
		return false;
	snprintf(buf, n, "collect-heap attached to a running process: only the blocks allocated since the "
		 "attach are counted (in use means in use of those), not those allocated before");
	return true;
}

bool report_heap_value(const struct calltree *t)
{
	enum ct_unit u = calltree_value_unit(t);

	return t->v_value != PV_NONE && (u == CT_UNIT_BYTES || u == CT_UNIT_COUNT) && pv_is_heap_profile(t->p);
}

const char *report_heap_col(const struct calltree *t)
{
	return calltree_value_unit(t) == CT_UNIT_BYTES ? "bytes" : "objects";
}

const char *report_heap_cell(const struct calltree *t, int64_t v, char *buf, size_t n)
{
	char b[32];

	calltree_value_str(t, v, b, sizeof b);
	snprintf(buf, n, "%*s", REPORT_HEAP_COL, b);
	return buf;
}

bool report_collector_cpu(const struct pv_profile *p, char *buf, size_t n)
{
	/* Of the threads' CPU time; at least the samples' and its own
	 * (threads of an image that ran another program say nothing of
	 * their time). */
	double run = (double)p->threads_cpu_ns, own = (double)p->collector_cpu_ns, sampled = 0;
	char t[32];

	if (p->collector_cpu_ns <= 0)
		return false;
	for (uint32_t v = 0; v < p->nvalues; v++) {
		if (strcmp(pv_str(p, p->sample_types[v].type), "cpu") != 0)
			continue;
		for (size_t i = 0; i < p->nsamples; i++)
			sampled += (double)p->samples[i].values[v];
		break;
	}
	if (sampled + own > run)
		run = sampled + own;
	if (own * 100 <= run)
		return false;
	pv_format_duration(t, sizeof t, p->collector_cpu_ns);
	snprintf(buf, n, "%s of CPU (%.1f%%) in its own start, unwind tables, threads and end", t,
		 100.0 * own / run);
	return true;
}

bool report_collector(const struct pv_profile *p, char *buf, size_t n)
{
	char t[32];
	const char *what = p->nvalues > 1 && strcmp(pv_str(p, p->sample_types[1].type), "wall") == 0
				   ? "wall time" : "CPU";

	if (!p->collector_samples)
		return false;
	pv_format_duration(t, sizeof t, p->collector_ns);
	snprintf(buf, n, "%s of %s in %" PRIu64 " sample%s of the collector's own work (starting, ending, recording what the program loaded), not in the profile",
		 t, what, p->collector_samples, p->collector_samples == 1 ? "" : "s");
	return true;
}

bool report_python_unread(const struct pv_profile *p, char *buf, size_t n)
{
	char v[32] = "of a version not known", in[48] = "";

	if (!p->python_unread)
		return false;
	if (p->python_unread_version)
		snprintf(v, sizeof v, "%u.%u", p->python_unread_version >> 8, p->python_unread_version & 0xff);
	if (p->python_unread > 1)
		snprintf(in, sizeof in, " in %u processes", p->python_unread);
	snprintf(buf, n, "python %s: its frames are not read%s (a version whose layout is not known)", v,
		 in);
	return true;
}

bool report_python_read(const struct pv_profile *p, char *buf, size_t n)
{
	static const char *const from[] = {
		"", " (offsets from the interpreter)", " (offsets from its debug information)",
		" (offsets from the collector's table of its version)",
	};
	uint32_t v = p->python_read_version, src = p->python_read_offsets;
	char micro[16] = "", in[48] = "";

	if (!p->python_read)
		return false;
	if (p->python_read_micro)
		snprintf(micro, sizeof micro, ".%u", p->python_read_micro - 1);
	if (p->python_read > 1)
		snprintf(in, sizeof in, " (the first of %u processes)", p->python_read);
	snprintf(buf, n, "python %u.%u%s: frames read%s%s", v >> 8 & 0xff, v & 0xff, micro,
		 src < sizeof from / sizeof from[0] ? from[src] : "", in);
	return true;
}

const char *pv_fixed(char *buf, double v, int dec, bool plus)
{
	static const double scale[] = { 1, 10, 100, 1000 };
	char tmp[32], *p = tmp + sizeof tmp, *o = buf;
	int64_t r;

	if (!(fabs(v) < 1e15) || dec < 0 || dec > 3) {
		snprintf(buf, PV_FIXED_LEN, plus ? "%+.*f" : "%.*f", dec, v);
		return buf;
	}
	double x = v * scale[dec];
	r = (int64_t)(x < 0 ? x - 0.5 : x + 0.5);
	if (r < 0)
		*o++ = '-';
	else if (plus && r > 0)
		*o++ = '+';
	uint64_t u = r < 0 ? (uint64_t)0 - (uint64_t)r : (uint64_t)r;
	for (int i = 0; i < dec; i++) {
		*--p = (char)('0' + u % 10);
		u /= 10;
	}
	if (dec)
		*--p = '.';
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	memcpy(o, p, (size_t)(tmp + sizeof tmp - p));
	o[tmp + sizeof tmp - p] = '\0';
	return buf;
}

const char *pv_weight_text(const struct calltree *t, char *buf, double v, bool sign)
{
	v += 0.0; /* no "-0" */
	if (fabs(v) < (t->v_value != PV_NONE ? ct_value_div(t) / 20 : 0.05))
		v = 0;
	if (t->v_value != PV_NONE)
		return pv_fixed(buf, v / ct_value_div(t), 1, sign);
	return pv_fixed(buf, v, v == floor(v) ? 0 : 1, sign);
}

/* The call graph's: "1.23ms", "+3", "2.5". */
static void amount_compact(const struct calltree *t, char *buf, size_t n, double v, bool sign)
{
	if (t->v_value != PV_NONE) {
		char d[32];
		int64_t ns = (int64_t)llround(v);
		calltree_value_compact(t, ns, d, sizeof d);
		snprintf(buf, n, "%s%s", sign && ns > 0 ? "+" : "", d);
	} else if (v == floor(v) && fabs(v) < 1e15) {
		snprintf(buf, n, "%s%.0f", sign && v > 0 ? "+" : "", v + 0.0);
	} else {
		snprintf(buf, n, "%+.1f", v);
		if (!sign && v >= 0)
			memmove(buf, buf + 1, strlen(buf));
	}
}

const char *pv_amount_text(const struct calltree *t, char *buf, size_t n, double v, unsigned flags)
{
	bool sign = flags & PV_AMOUNT_SIGN;
	double a = fabs(v);

	if (flags & PV_AMOUNT_COMPACT) {
		amount_compact(t, buf, n, v, sign);
	} else if (t->v_value != PV_NONE) {
		char d[32];
		int64_t ns = (int64_t)llround(a);
		calltree_value_str(t, ns, d, sizeof d);
		snprintf(buf, n, "%s%s", ns == 0 ? "" : v < 0 ? "-" : sign ? "+" : "", d);
	} else if (a == floor(a) && a < 1e15) {
		snprintf(buf, n, "%s%.0f sample%s", a == 0 ? "" : v < 0 ? "-" : sign ? "+" : "", a,
			 a == 1 ? "" : "s");
	} else {
		snprintf(buf, n, "%s%.1f samples", a < 0.05 ? "" : v < 0 ? "-" : sign ? "+" : "", a);
	}
	return buf;
}

const char *pv_change_text(char *buf, size_t n, const struct pv_diff_cell *c)
{
	char t[32];

	if (isinf(c->pct))
		snprintf(buf, n, "not in the base");
	else
		snprintf(buf, n, "%s%%", pv_diff_pct_text(t, sizeof t, c->pct));
	return buf;
}

void pv_ramp_rgb(const struct pv_ramp *r, const struct pv_diff_cell *c, int rgb[3])
{
	const int (*ramp)[3] = c->verdict == PV_VERDICT_WORSE ? r->worse : r->better;
	double s = pv_diff_strength(c);

	for (int k = 0; k < 3; k++)
		rgb[k] = c->verdict == PV_VERDICT_NONE ? r->none[k]
						       : (int)lround(ramp[0][k] + (ramp[1][k] - ramp[0][k]) * s);
}
