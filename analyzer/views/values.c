/* values.c - which of a profile's values a call tree counts and weighs
 * by (--sample-index, the defaults), and how a weight is written */
#include "calltree.h"
#include "calltree-int.h"
#include "error.h"
#include "units.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sample types of the profile, "samples, cpu", into buf. */
static const char *type_list(const struct pv_profile *p, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (uint32_t i = 0; i < p->nvalues && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", i ? ", " : "",
					pv_str(p, p->sample_types[i].type));
	return p->nvalues ? buf : "none";
}

/* Index of the type named prefix + suffix ("inuse" + "_samples"), or
 * PV_NONE. */
static uint32_t find_type2(const struct pv_profile *p, const char *prefix, size_t plen, const char *suffix)
{
	char name[128];

	if (plen + strlen(suffix) >= sizeof name)
		return PV_NONE;
	memcpy(name, prefix, plen);
	strcpy(name + plen, suffix);
	return pv_find_value_type(p, name);
}

/* Is type i a count of samples ("samples", "alloc_samples")? */
static bool is_samples_type(const struct pv_profile *p, uint32_t i)
{
	const char *n = pv_str(p, p->sample_types[i].type);
	size_t l = strlen(n);

	return strcmp(n, "samples") == 0 || (l > 8 && strcmp(n + l - 8, "_samples") == 0);
}

/* The count beside value type idx (the noise is that of the count): the
 * sampled count it was estimated from ("alloc_samples" for
 * "alloc_space", else "samples"), else the objects it counts the bytes of
 * ("inuse_objects" for "inuse_space", "objects" for "space"), else the
 * tree's count as it is. */
static void companion_count(struct calltree *t, uint32_t idx)
{
	const struct pv_profile *p = t->p;
	const char *name = pv_str(p, p->sample_types[idx].type), *us = strchr(name, '_');
	size_t plen = us ? (size_t)(us - name) : 0;
	uint32_t c = PV_NONE;

	/* a perf capture's count of each event's samples */
	c = find_type2(p, name, strlen(name), "_samples");
	if (c == PV_NONE && us)
		c = find_type2(p, name, plen, "_samples");
	if (c == PV_NONE)
		c = pv_find_value_type(p, "samples");
	if (c == PV_NONE && strcmp(pv_str(p, p->sample_types[idx].unit), "bytes") == 0)
		c = us ? find_type2(p, name, plen, "_objects") : pv_find_value_type(p, "objects");
	if (c != PV_NONE && c != idx)
		t->v_count = c;
}

/* --sample-index: a type's name or index.  A count of samples weighs by
 * count; a time, a size in bytes or a count estimated from samples (a
 * heap profile's inuse_objects) by its value, the count beside it its
 * companion_count.  0, or -1 with an error. */
int ct_choose_value(struct calltree *t, const char *want)
{
	const struct pv_profile *p = t->p;
	uint32_t idx = PV_NONE;
	char *end, list[256];
	unsigned long v = strtoul(want, &end, 10);
	const char *unit;

	if (*want && !*end && v < p->nvalues)
		idx = (uint32_t)v;
	for (uint32_t i = 0; i < p->nvalues && idx == PV_NONE; i++)
		if (strcmp(pv_str(p, p->sample_types[i].type), want) == 0)
			idx = i;
	/* "cpu", as of profview's own traces, is perf's CPU time events too */
	for (uint32_t i = 0; i < p->nvalues && idx == PV_NONE && strcmp(want, "cpu") == 0; i++) {
		const char *type = pv_str(p, p->sample_types[i].type);

		if ((strcmp(type, "task-clock") == 0 || strcmp(type, "cpu-clock") == 0) &&
		    strcmp(pv_str(p, p->sample_types[i].unit), "nanoseconds") == 0)
			idx = i;
	}
	/* every profile has sample counts, named or not */
	if (idx == PV_NONE && strcmp(want, "samples") == 0) {
		t->v_value = PV_NONE;
		return 0;
	}
	if (idx == PV_NONE)
		return pv_error("the profile has no sample type '%s' (it has: %s)", want,
				type_list(p, list, sizeof list));
	unit = pv_str(p, p->sample_types[idx].unit);
	if (strcmp(unit, "nanoseconds") == 0 || strcmp(unit, "bytes") == 0 ||
	    (strcmp(unit, "count") == 0 && !is_samples_type(p, idx) &&
	     pv_find_value_type(p, "samples") != PV_NONE)) {
		t->v_value = idx;
		companion_count(t, idx);
	} else if (strcmp(unit, "count") == 0 || idx == t->v_count) {
		t->v_count = idx;
		t->v_value = PV_NONE;
	} else {
		return pv_error("sample type '%s' is in %s: profview weighs by counts, times or bytes", want,
				unit[0] ? unit : "an unknown unit");
	}
	return 0;
}

/* What a tree weighs by unless told: the type the profile names, else a
 * time (CPU, wall), else the size in use of a heap profile
 * ("inuse_space", as pprof's default), else the sample count. */
void ct_default_value(struct calltree *t)
{
	const struct pv_profile *p = t->p;
	uint32_t i;

	/* the one the profile names (perf's periods, pprof's default), when
	 * in a unit a tree weighs by and not the count it has already */
	const char *unit = NULL;
	if (p->default_type && (i = pv_find_value_type(p, pv_str(p, p->default_type))) != PV_NONE)
		unit = pv_str(p, p->sample_types[i].unit);
	if (unit && i != t->v_count && !is_samples_type(p, i) &&
	    (strcmp(unit, "nanoseconds") == 0 || strcmp(unit, "bytes") == 0 || strcmp(unit, "count") == 0)) {
		t->v_value = i;
		companion_count(t, i);
		return;
	}
	for (i = 0; i < p->nvalues; i++)
		if (i != t->v_count && strcmp(pv_str(p, p->sample_types[i].unit), "nanoseconds") == 0) {
			t->v_value = i;
			return;
		}
	if ((i = pv_find_value_type(p, "inuse_space")) == PV_NONE)
		i = pv_find_value_type(p, "space");
	if (i != PV_NONE && strcmp(pv_str(p, p->sample_types[i].unit), "bytes") == 0) {
		t->v_value = i;
		companion_count(t, i);
	}
}

double ct_value_div(const struct calltree *t)
{
	switch (calltree_value_unit(t)) {
	case CT_UNIT_NS: return 1e6;
	case CT_UNIT_BYTES: return 1024;
	default: return 1;
	}
}

const char *ct_value_col(const struct calltree *t)
{
	switch (calltree_value_unit(t)) {
	case CT_UNIT_NS: return "ms";
	case CT_UNIT_BYTES: return "KiB";
	default: return "n";
	}
}

const char *calltree_value_str(const struct calltree *t, int64_t v, char *buf, size_t n)
{
	double x = (double)v, a = fabs(x);

	switch (calltree_value_unit(t)) {
	case CT_UNIT_NS:
		pv_format_duration(buf, n, v);
		break;
	case CT_UNIT_BYTES:
		if (a >= 1024.0 * 1024 * 1024)
			snprintf(buf, n, "%.2f GiB", x / (1024.0 * 1024 * 1024));
		else if (a >= 1024.0 * 1024)
			snprintf(buf, n, "%.1f MiB", x / (1024.0 * 1024));
		else if (a >= 1024)
			snprintf(buf, n, "%.1f KiB", x / 1024);
		else
			snprintf(buf, n, "%" PRId64 " B", v);
		break;
	default:
		snprintf(buf, n, "%" PRId64, v);
	}
	return buf;
}

const char *calltree_value_compact(const struct calltree *t, int64_t v, char *buf, size_t n)
{
	double x = (double)v, a = fabs(x);

	switch (calltree_value_unit(t)) {
	case CT_UNIT_NS:
		pv_format_duration_compact(buf, n, v);
		break;
	case CT_UNIT_BYTES:
		if (a >= 1024.0 * 1024 * 1024)
			snprintf(buf, n, "%.2fGiB", x / (1024.0 * 1024 * 1024));
		else if (a >= 1024.0 * 1024)
			snprintf(buf, n, "%.2fMiB", x / (1024.0 * 1024));
		else if (a >= 1024)
			snprintf(buf, n, "%.2fKiB", x / 1024);
		else
			snprintf(buf, n, "%" PRId64 "B", v);
		break;
	default:
		snprintf(buf, n, "%" PRId64, v);
	}
	return buf;
}

enum ct_unit calltree_value_unit(const struct calltree *t)
{
	const char *u;

	if (t->v_value == PV_NONE)
		return CT_UNIT_SAMPLES;
	u = pv_str(t->p, t->p->sample_types[t->v_value].unit);
	if (strcmp(u, "nanoseconds") == 0)
		return CT_UNIT_NS;
	return strcmp(u, "bytes") == 0 ? CT_UNIT_BYTES : CT_UNIT_COUNT;
}

const char *calltree_weight_name(const struct calltree *t)
{
	return t->v_value != PV_NONE ? pv_str(t->p, t->p->sample_types[t->v_value].type) : "samples";
}
