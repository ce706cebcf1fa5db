/* pprof-write.c - the profile model as pprof's profile.proto, through the
 * code protobuf-c generates from profile.proto, gzipped with zlib */
#include "pprof-write.h"
#include "error.h"
#include "util.h"
#include "profile.pb-c.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#ifndef PROFVIEW_VERSION
#define PROFVIEW_VERSION "(unknown version)"
#endif

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;

/* Samples with the same stack and thread, merged. */
struct group {
	uint32_t sample;       /* the first sample of the group */
	int64_t values[PV_MAX_VALUES];
};

struct writer {
	struct pv_profile *p;
	const char *default_type; /* pprof_write_options.default_sample_type */
	double base_scale, new_scale; /* a comparison's (pprof_write_options) */
	struct group *groups;
	size_t ngroups;
	uint32_t *slots;       /* group index + 1 */
	size_t nslots;
	uint64_t *map_id;      /* our mapping index -> id (the program's first) */
	/* Message storage, freed together. */
	PbValueType *vts;
	PbSample *samples;
	PbSample **sample_ptrs;
	PbLabel *labels;
	PbLabel **label_ptrs;
	uint64_t *loc_ids;
	int64_t *values;
	PbMapping *maps;
	PbMapping **map_ptrs;
	PbLocation *locs;
	PbLocation **loc_ptrs;
	PbLine *lines;
	PbLine **line_ptrs;
	PbFunction *fns;
	PbFunction **fn_ptrs;
	PbValueType **vt_ptrs;
	PbValueType period_type;
	char **strings;
	int64_t *comments;
};

static uint64_t group_hash(const struct pv_profile *p, const struct pv_sample *s)
{
	const uint32_t *l = pv_sample_locs(p, s);
	uint64_t h = pv_mix64(((uint64_t)s->thread << 32) ^ s->nlocs ^
			      (uint64_t)(s->flags & PV_SAMPLE_BASE) << 40);

	for (uint32_t i = 0; i < s->nlocs; i++)
		h = pv_mix64(h ^ l[i]);
	return h;
}

static bool group_eq(const struct pv_profile *p, const struct pv_sample *a, const struct pv_sample *b)
{
	return a->thread == b->thread && a->nlocs == b->nlocs &&
	       (a->flags & PV_SAMPLE_BASE) == (b->flags & PV_SAMPLE_BASE) &&
	       (a->loc_off == b->loc_off ||
		memcmp(pv_sample_locs(p, a), pv_sample_locs(p, b), a->nlocs * sizeof(uint32_t)) == 0);
}

static int group_samples(struct writer *w)
{
	const struct pv_profile *p = w->p;
	size_t n = 64;

	while (n < 2 * p->nsamples + 2)
		n *= 2;
	w->slots = calloc(n, sizeof *w->slots);
	w->groups = malloc((p->nsamples + 1) * sizeof *w->groups);
	if (!w->slots || !w->groups)
		return pv_oom();
	w->nslots = n;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pv_sample *s = &p->samples[i];
		size_t k = group_hash(p, s) & (n - 1);

		if (s->flags & PV_SAMPLE_LEAF_CANDIDATE)
			return pv_error("internal error: sample %zu has an unsettled leaf", i);
		while (w->slots[k] && !group_eq(p, &p->samples[w->groups[w->slots[k] - 1].sample], s))
			k = (k + 1) & (n - 1);
		if (!w->slots[k]) {
			w->groups[w->ngroups] = (struct group){ .sample = (uint32_t)i };
			w->slots[k] = (uint32_t)++w->ngroups;
		}
		struct group *g = &w->groups[w->slots[k] - 1];
		for (uint32_t v = 0; v < p->nvalues; v++) /* wraps, as pprof's int64 sums do */
			g->values[v] = (int64_t)((uint64_t)g->values[v] + (uint64_t)s->values[v]);
	}
	/* A comparison as pprof -diff_base writes one: the base's values
	 * scaled (per run, normalized) and negated, the new side's scaled. */
	for (size_t i = 0; i < w->ngroups && p->diff; i++) {
		struct group *g = &w->groups[i];
		bool base = p->samples[g->sample].flags & PV_SAMPLE_BASE;
		double f = base ? -w->base_scale : w->new_scale;
		if (f == 1)
			continue;
		for (uint32_t v = 0; v < p->nvalues; v++)
		{
			double x = (double)g->values[v] * f;
			g->values[v] = (int64_t)(x < 0 ? x - 0.5 : x + 0.5);
		}
	}
	return 0;
}

/* Mapping ids: the program's mappings first, as pprof takes the first
 * mapping for the main binary, and the kernel's last, never taken for
 * it. */
static int number_mappings(struct writer *w)
{
	const struct pv_profile *p = w->p;
	uint64_t next = 1;

	w->map_id = calloc(p->nmappings + 1, sizeof *w->map_id);
	if (!w->map_id)
		return pv_oom();
	for (int pass = 0; pass < 3; pass++)
		for (size_t i = 0; i < p->nmappings; i++) {
			bool prog = p->program && p->mappings[i].file == p->program;
			bool kernel = p->mappings[i].kind == PV_MAP_KERNEL;
			if (!w->map_id[i] && (pass == 2 || (!kernel && (pass == 1 || prog))))
				w->map_id[i] = next++;
		}
	return 0;
}

static bool mapping_has_inlines(const struct pv_profile *p, uint32_t mi)
{
	for (size_t i = 0; i < p->nlocations; i++)
		if (p->locations[i].mapping == mi && p->locations[i].nlines > 1)
			return true;
	return false;
}

static void *xcalloc(size_t n, size_t size)
{
	void *q = calloc(n ? n : 1, size);
	if (!q)
		pv_oom();
	return q;
}

/* The labels' keys and values, as strings of the profile: interned
 * before the table is copied. */
struct label_strs {
	uint32_t k_thread, k_tname, k_base, v_true, k_pid, k_comm;
	uint32_t *tid_str;            /* by thread */
	uint32_t *pid_str;            /* by process */
};

static int label_strs(struct pv_profile *p, struct label_strs *k)
{
	k->k_thread = pv_intern_str(p, "thread");
	k->k_tname = pv_intern_str(p, "thread_name");
	k->k_base = pv_intern_str(p, "pprof::base");
	k->v_true = pv_intern_str(p, "true");
	k->k_pid = pv_intern_str(p, "pid");
	k->k_comm = pv_intern_str(p, "comm");
	if (k->k_thread == PV_NONE || k->k_tname == PV_NONE || k->k_base == PV_NONE ||
	    k->v_true == PV_NONE || k->k_pid == PV_NONE || k->k_comm == PV_NONE)
		return -1;
	/* The tids as strings */
	k->tid_str = xcalloc(p->nthreads, sizeof *k->tid_str);
	if (!k->tid_str)
		return -1;
	for (size_t i = 0; i < p->nthreads; i++) {
		char b[16];
		snprintf(b, sizeof b, "%u", p->threads[i].tid);
		if ((k->tid_str[i] = pv_intern_str(p, b)) == PV_NONE)
			return -1;
	}
	/* and the processes' pids, for the labels of a run's samples */
	k->pid_str = xcalloc(p->nprocesses + 1, sizeof *k->pid_str);
	if (!k->pid_str)
		return -1;
	for (size_t i = 0; i < p->nprocesses; i++) {
		char b[16];
		snprintf(b, sizeof b, "%u", p->processes[i].pid);
		if ((k->pid_str[i] = pv_intern_str(p, b)) == PV_NONE)
			return -1;
	}
	return 0;
}

/* Sample types, period, the default type, time and duration. */
static int build_types(struct writer *w, PbProfile *pb)
{
	struct pv_profile *p = w->p;
	/* what every report of profview weighs by, pprof's too */
	const char *want = w->default_type;

	w->vts = xcalloc(p->nvalues, sizeof *w->vts);
	w->vt_ptrs = xcalloc(p->nvalues, sizeof *w->vt_ptrs);
	if (!w->vts || !w->vt_ptrs)
		return -1;
	for (uint32_t i = 0; i < p->nvalues; i++) {
		perftools__profiles__value_type__init(&w->vts[i]);
		w->vts[i].type = p->sample_types[i].type;
		w->vts[i].unit = p->sample_types[i].unit;
		w->vt_ptrs[i] = &w->vts[i];
	}
	pb->n_sample_type = p->nvalues;
	pb->sample_type = w->vt_ptrs;
	perftools__profiles__value_type__init(&w->period_type);
	w->period_type.type = p->period_type.type;
	w->period_type.unit = p->period_type.unit;
	if (p->period_type.type || p->period_type.unit)
		pb->period_type = &w->period_type;
	pb->period = p->period;
	/* else the profile's own (a perf capture's periods) */
	if (!want && p->default_type)
		want = pv_str(p, p->default_type);
	for (uint32_t i = 0; i < p->nvalues && !want; i++)
		if (strcmp(pv_str(p, p->sample_types[i].unit), "nanoseconds") == 0)
			want = pv_str(p, p->sample_types[i].type);
	for (uint32_t i = 0; i < p->nvalues && want; i++)
		if (strcmp(pv_str(p, p->sample_types[i].type), want) == 0)
			pb->default_sample_type = p->sample_types[i].type;
	pb->time_nanos = p->time_ns;
	pb->duration_nanos = p->duration_ns;
	return 0;
}

/* Labels a value of a key and points the next label of the sample at it. */
static void add_label(struct writer *w, PbSample *ps, size_t *lab, uint32_t key, uint32_t str)
{
	PbLabel *l = &w->labels[*lab];

	perftools__profiles__label__init(l);
	l->key = key;
	l->str = str;
	w->label_ptrs[(*lab)++] = l;
	ps->n_label++;
}

/* The labels of sample s (ps->label points at the first): pprof's mark of
 * a comparison's base, its thread, and the process of a run's thread. */
static void sample_labels(struct writer *w, const struct label_strs *k, const struct pv_sample *s,
			  PbSample *ps, size_t *lab)
{
	const struct pv_profile *p = w->p;
	const struct pv_thread *t;

	if (s->flags & PV_SAMPLE_BASE)
		add_label(w, ps, lab, k->k_base, k->v_true);
	if (s->thread == PV_NONE)
		return;
	t = &p->threads[s->thread];
	add_label(w, ps, lab, k->k_thread, k->tid_str[s->thread]);
	if (t->name)
		add_label(w, ps, lab, k->k_tname, t->name);
	if (t->process < p->nprocesses) {
		/* as perf names it */
		add_label(w, ps, lab, k->k_pid, k->pid_str[t->process]);
		add_label(w, ps, lab, k->k_comm, p->processes[t->process].name);
	}
}

/* The samples, one a group, their stacks sharing the stored arrays. */
static int build_samples(struct writer *w, PbProfile *pb, const struct label_strs *k)
{
	struct pv_profile *p = w->p;
	size_t nlabels = w->ngroups * 5, lab = 0;

	w->samples = xcalloc(w->ngroups, sizeof *w->samples);
	w->sample_ptrs = xcalloc(w->ngroups, sizeof *w->sample_ptrs);
	w->labels = xcalloc(nlabels, sizeof *w->labels);
	w->label_ptrs = xcalloc(nlabels, sizeof *w->label_ptrs);
	w->values = xcalloc(w->ngroups * (p->nvalues ? p->nvalues : 1), sizeof *w->values);
	w->loc_ids = xcalloc(p->nstack_locs, sizeof *w->loc_ids);
	if (!w->samples || !w->sample_ptrs || !w->labels || !w->label_ptrs || !w->values ||
	    !w->loc_ids)
		return -1;
	/* Location ids are indices + 1. */
	for (size_t i = 0; i < p->nstack_locs; i++)
		w->loc_ids[i] = (uint64_t)p->stack_locs[i] + 1;
	for (size_t g = 0; g < w->ngroups; g++) {
		const struct pv_sample *s = &p->samples[w->groups[g].sample];
		PbSample *ps = &w->samples[g];
		perftools__profiles__sample__init(ps);
		ps->n_location_id = s->nlocs;
		ps->location_id = w->loc_ids + s->loc_off;
		ps->n_value = p->nvalues;
		ps->value = w->values + g * p->nvalues;
		memcpy(ps->value, w->groups[g].values, p->nvalues * sizeof *ps->value);
		ps->label = &w->label_ptrs[lab];
		sample_labels(w, k, s, ps, &lab);
		w->sample_ptrs[g] = ps;
	}
	pb->n_sample = w->ngroups;
	pb->sample = w->sample_ptrs;
	return 0;
}

/* Mappings, in id order. */
static int build_mappings(struct writer *w, PbProfile *pb)
{
	struct pv_profile *p = w->p;

	w->maps = xcalloc(p->nmappings, sizeof *w->maps);
	w->map_ptrs = xcalloc(p->nmappings, sizeof *w->map_ptrs);
	if (!w->maps || !w->map_ptrs)
		return -1;
	for (size_t i = 0; i < p->nmappings; i++) {
		const struct pv_mapping *m = &p->mappings[i];
		PbMapping *pm = &w->maps[w->map_id[i] - 1];
		perftools__profiles__mapping__init(pm);
		pm->id = w->map_id[i];
		pm->memory_start = m->start;
		pm->memory_limit = m->limit;
		pm->file_offset = m->offset;
		pm->filename = m->file;
		if (m->kind == PV_MAP_KERNEL &&
		    (pm->filename = pv_intern_str(p, PV_KERNEL_MAPPING_NAME)) == PV_NONE)
			return -1;
		/* a kernel mapping's build_id is the boot id of the machine
		 * the trace was taken on (profile.h), no build id */
		pm->build_id = m->kind == PV_MAP_KERNEL ? 0 : m->build_id;
		pm->has_functions = m->has_functions;
		pm->has_filenames = m->has_filenames;
		pm->has_line_numbers = m->has_line_numbers;
		pm->has_inline_frames = m->has_functions && mapping_has_inlines(p, (uint32_t)i);
		w->map_ptrs[w->map_id[i] - 1] = pm;
	}
	pb->n_mapping = p->nmappings;
	pb->mapping = w->map_ptrs;
	return 0;
}

/* Locations and their lines. */
static int build_locations(struct writer *w, PbProfile *pb)
{
	struct pv_profile *p = w->p;

	w->locs = xcalloc(p->nlocations, sizeof *w->locs);
	w->loc_ptrs = xcalloc(p->nlocations, sizeof *w->loc_ptrs);
	w->lines = xcalloc(p->nlines, sizeof *w->lines);
	w->line_ptrs = xcalloc(p->nlines, sizeof *w->line_ptrs);
	if (!w->locs || !w->loc_ptrs || !w->lines || !w->line_ptrs)
		return -1;
	for (size_t i = 0; i < p->nlines; i++) {
		perftools__profiles__line__init(&w->lines[i]);
		w->lines[i].function_id = (uint64_t)p->lines[i].function + 1;
		w->lines[i].line = p->lines[i].line;
		w->line_ptrs[i] = &w->lines[i];
	}
	for (size_t i = 0; i < p->nlocations; i++) {
		const struct pv_location *l = &p->locations[i];
		PbLocation *pl = &w->locs[i];
		perftools__profiles__location__init(pl);
		pl->id = i + 1;
		pl->mapping_id = l->mapping == PV_NONE ? 0 : w->map_id[l->mapping];
		pl->address = l->address;
		pl->n_line = l->nlines;
		pl->line = w->line_ptrs + l->line_off;
		w->loc_ptrs[i] = pl;
	}
	pb->n_location = p->nlocations;
	pb->location = w->loc_ptrs;
	return 0;
}

static int build_functions(struct writer *w, PbProfile *pb)
{
	struct pv_profile *p = w->p;

	w->fns = xcalloc(p->nfunctions, sizeof *w->fns);
	w->fn_ptrs = xcalloc(p->nfunctions, sizeof *w->fn_ptrs);
	if (!w->fns || !w->fn_ptrs)
		return -1;
	for (size_t i = 0; i < p->nfunctions; i++) {
		const struct pv_function *f = &p->functions[i];
		PbFunction *pf = &w->fns[i];
		perftools__profiles__function__init(pf);
		pf->id = i + 1;
		pf->name = f->name;
		pf->system_name = f->system_name;
		pf->filename = f->filename;
		pf->start_line = f->start_line;
		w->fn_ptrs[i] = pf;
	}
	pb->n_function = p->nfunctions;
	pb->function = w->fn_ptrs;
	return 0;
}

/* A comment saying where it came from, and the system time. */
static int build_comments(struct writer *w, PbProfile *pb)
{
	struct pv_profile *p = w->p;

	w->comments = xcalloc(2, sizeof *w->comments);
	if (!w->comments)
		return -1;
	pb->comment = w->comments;
	if (p->source_format) {
		char b[256];
		snprintf(b, sizeof b, "profview %s from a %s", PROFVIEW_VERSION, pv_str(p, p->source_format));
		if ((w->comments[pb->n_comment++] = pv_intern_str(p, b)) == PV_NONE)
			return -1;
	}
	if (p->system_cpu_ns >= 0) {
		char b[96];
		snprintf(b, sizeof b, PPROF_SYSTEM_COMMENT "%" PRId64, p->system_cpu_ns);
		if ((w->comments[pb->n_comment++] = pv_intern_str(p, b)) == PV_NONE)
			return -1;
	}
	return 0;
}

static int build(struct writer *w, PbProfile *pb)
{
	struct label_strs k = { 0 };
	int ret = -1;

	if (label_strs(w->p, &k) == 0 && build_types(w, pb) == 0 && build_samples(w, pb, &k) == 0 &&
	    build_mappings(w, pb) == 0 && build_locations(w, pb) == 0 &&
	    build_functions(w, pb) == 0 && build_comments(w, pb) == 0) {
		/* the strings last, all interned: index 0 "" */
		pb->n_string_table = w->p->strings.n;
		pb->string_table = w->p->strings.strs;
		ret = 0;
	}
	free(k.tid_str);
	free(k.pid_str);
	return ret;
}

static int write_all(FILE *out, const char *name, const void *data, size_t len)
{
	if (fwrite(data, 1, len, out) != len)
		return pv_error("cannot write '%s': %s", name, strerror(errno));
	return 0;
}

static int write_gzip(FILE *out, const char *name, const unsigned char *data, size_t len)
{
	z_stream zs = { 0 };
	unsigned char buf[1 << 16];
	int zr, ret = 0;

	/* 15 + 16: a gzip header and trailer around the deflate stream. */
	if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return pv_oom();
	zs.next_in = (unsigned char *)data;
	do {
		size_t done = (size_t)(zs.next_in - data);
		if (zs.avail_in == 0 && done < len)
			zs.avail_in = (uInt)(len - done > (1u << 30) ? (1u << 30) : len - done);
		bool last = done + zs.avail_in >= len;
		zs.next_out = buf;
		zs.avail_out = sizeof buf;
		zr = deflate(&zs, last ? Z_FINISH : Z_NO_FLUSH);
		if (zr == Z_STREAM_ERROR) {
			ret = pv_error("cannot compress '%s'", name);
			break;
		}
		if (write_all(out, name, buf, sizeof buf - zs.avail_out) < 0) {
			ret = -1;
			break;
		}
	} while (zr != Z_STREAM_END);
	deflateEnd(&zs);
	return ret;
}

int pprof_write(FILE *out, const char *name, struct pv_profile *p,
		const struct pprof_write_options *opt)
{
	struct writer w = { .p = p, .default_type = opt ? opt->default_sample_type : NULL,
			    .base_scale = opt && opt->base_scale > 0 ? opt->base_scale : 1,
			    .new_scale = opt && opt->new_scale > 0 ? opt->new_scale : 1 };
	PbProfile pb;
	unsigned char *data = NULL;
	int ret = -1;

	perftools__profiles__profile__init(&pb);
	if (group_samples(&w) < 0 || number_mappings(&w) < 0 || build(&w, &pb) < 0)
		goto out;
	size_t len = perftools__profiles__profile__get_packed_size(&pb);
	data = malloc(len ? len : 1);
	if (!data) {
		pv_oom();
		goto out;
	}
	if (perftools__profiles__profile__pack(&pb, data) != len) {
		pv_error("internal error: profile.proto encoding of '%s' has the wrong size", name);
		goto out;
	}
	ret = opt && opt->uncompressed ? write_all(out, name, data, len) : write_gzip(out, name, data, len);
out:
	free(data);
	free(w.groups);
	free(w.slots);
	free(w.map_id);
	free(w.vts);
	free(w.vt_ptrs);
	free(w.samples);
	free(w.sample_ptrs);
	free(w.labels);
	free(w.label_ptrs);
	free(w.values);
	free(w.loc_ids);
	free(w.maps);
	free(w.map_ptrs);
	free(w.locs);
	free(w.loc_ptrs);
	free(w.lines);
	free(w.line_ptrs);
	free(w.fns);
	free(w.fn_ptrs);
	free(w.comments);
	return ret;
}
