/* merge.c - merge profiles, name the program, shared reader helpers */
#include "merge.h"
#include "error.h"
#include "units.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t pv_location_with_lines(struct pv_profile *p, uint64_t address, uint32_t mapping,
				const struct pv_line *lines, uint32_t n)
{
	uint64_t synthetic = (1ULL << 63) | ((uint64_t)p->nlocations << 16);
	/* (below 2^24: within the mapping's range, past every code's word) */
	uint64_t synth_py = ((uint64_t)p->nlocations << 4) & 0xffffffull;
	bool python = mapping < p->nmappings && p->mappings[mapping].kind == PV_MAP_PYTHON &&
		      p->mappings[mapping].limit - p->mappings[mapping].start > 0xffffffffffffull;

	for (unsigned tries = 0;; tries++) {
		size_t before = p->nlocations;
		uint32_t li = pv_get_location(p, address, mapping);

		if (li == PV_NONE)
			return PV_NONE;
		if (p->nlocations != before || p->locations[li].nlines == 0) {
			/* New, or known by address only: these are its lines. */
			if (n && pv_set_lines(p, li, lines, n) < 0)
				return PV_NONE;
			return li;
		}
		if (pv_location_has_lines(p, li, lines, n))
			return li;
		if (tries > 1000) {
			pv_error("internal error: no free synthetic location address");
			return PV_NONE;
		}
		if (python) {
			/* A Python frame's address is its process's number of
			 * its code: another process's may be the same.  It
			 * stays a Python frame, at an address of the code
			 * number 2^24 - 1, which the reader gives only to its
			 * markers (a walk cut short, a code past the table),
			 * and only until the lines differ: each try that
			 * finds a location with other lines takes the next. */
			address = p->mappings[mapping].start | 0xffffff000000ull |
				  ((synth_py + tries) & 0xffffffull);
			continue;
		}
		address = synthetic + tries;
		mapping = PV_NONE;
	}
}

uint32_t pv_kernel_mapping(struct pv_profile *p)
{
	struct pv_mapping m = { .kind = PV_MAP_KERNEL, .has_functions = true };

	for (size_t i = 0; i < p->nmappings; i++)
		if (p->mappings[i].kind == PV_MAP_KERNEL)
			return (uint32_t)i;
	if ((m.file = pv_intern_str(p, PV_KERNEL_MAPPING_NAME)) == PV_NONE)
		return PV_NONE;
	return pv_add_mapping(p, &m);
}

void pv_flag_kernel_samples(struct pv_profile *p)
{
	for (size_t i = 0; i < p->nsamples; i++) {
		struct pv_sample *s = &p->samples[i];
		if (s->nlocs && pv_location_is_kernel(p, pv_sample_locs(p, s)[0]))
			s->flags |= PV_SAMPLE_KERNEL;
	}
}

/* Merging */

struct merger {
	struct pv_profile *d;
	const struct pv_profile *s;
	uint32_t *str, *map, *fn, *loc, *thr, *proc;
	struct pv_line *lines;
	uint32_t *locs;
	size_t cap_lines, cap_locs;
	int64_t time_shift;    /* added to the source's sample times */
};

/* Times and durations from a hostile profile can be anything: a sum past
 * the int64 range is held at its end, never wrapped. */
static int64_t add_sat(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static int64_t sub_sat(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static uint32_t mstr(struct merger *m, uint32_t i)
{
	if (i >= m->s->strings.n)
		return 0;
	if (m->str[i] == PV_NONE)
		m->str[i] = pv_intern_str(m->d, m->s->strings.strs[i]);
	return m->str[i];
}

bool pv_same_types(const struct pv_profile *d, const struct pv_profile *s)
{
	bool same = d->nvalues == s->nvalues;

	for (uint32_t i = 0; same && i < d->nvalues; i++)
		same = strcmp(pv_str(d, d->sample_types[i].type), pv_str(s, s->sample_types[i].type)) == 0 &&
		       strcmp(pv_str(d, d->sample_types[i].unit), pv_str(s, s->sample_types[i].unit)) == 0;
	return same;
}

const char *pv_type_list(const struct pv_profile *p, char *buf, size_t n)
{
	buf[0] = '\0';
	for (uint32_t i = 0; i < p->nvalues; i++)
		snprintf(buf + strlen(buf), n - strlen(buf), "%s%s/%s", i ? ", " : "",
			 pv_str(p, p->sample_types[i].type), pv_str(p, p->sample_types[i].unit));
	return buf[0] ? buf : "nothing";
}

static int check_types(const struct pv_profile *d, const struct pv_profile *s, const char *name)
{
	char a[256], b[256];

	if (pv_same_types(d, s))
		return 0;
	return pv_error("cannot merge '%s': its samples count %s, the profiles before it %s",
			name, pv_type_list(s, b, sizeof b), pv_type_list(d, a, sizeof a));
}

static int merge_mappings(struct merger *m)
{
	struct pv_profile *d = m->d;
	const struct pv_profile *s = m->s;

	for (size_t i = 0; i < s->nmappings; i++) {
		struct pv_mapping pm = s->mappings[i];
		pm.file = mstr(m, pm.file);
		pm.build_id = mstr(m, pm.build_id);
		if (pm.file == PV_NONE || pm.build_id == PV_NONE)
			return -1;
		m->map[i] = PV_NONE;
		for (size_t j = 0; j < d->nmappings; j++) {
			const struct pv_mapping *o = &d->mappings[j];
			if (o->start == pm.start && o->limit == pm.limit && o->offset == pm.offset &&
			    o->file == pm.file && o->build_id == pm.build_id) {
				m->map[i] = (uint32_t)j;
				d->mappings[j].has_functions |= pm.has_functions;
				d->mappings[j].has_filenames |= pm.has_filenames;
				d->mappings[j].has_line_numbers |= pm.has_line_numbers;
				break;
			}
		}
		if (m->map[i] == PV_NONE && (m->map[i] = pv_add_mapping(d, &pm)) == PV_NONE)
			return -1;
	}
	return 0;
}

static int merge_locations(struct merger *m)
{
	struct pv_profile *d = m->d;
	const struct pv_profile *s = m->s;

	for (size_t i = 0; i < s->nfunctions; i++) {
		const struct pv_function *f = &s->functions[i];
		uint32_t nm = mstr(m, f->name), sn = mstr(m, f->system_name), fi = mstr(m, f->filename);
		if (nm == PV_NONE || sn == PV_NONE || fi == PV_NONE)
			return -1;
		if ((m->fn[i] = pv_get_function(d, nm, sn, fi, f->start_line)) == PV_NONE)
			return -1;
	}
	for (size_t i = 0; i < s->nlocations; i++) {
		const struct pv_location *l = &s->locations[i];
		const struct pv_line *src = pv_location_lines(s, l);
		uint32_t mi = l->mapping == PV_NONE ? PV_NONE : m->map[l->mapping];

		if (pv_grow(&m->lines, &m->cap_lines, l->nlines + 1, sizeof *m->lines) < 0)
			return -1;
		for (uint32_t j = 0; j < l->nlines; j++)
			m->lines[j] = (struct pv_line){ m->fn[src[j].function], src[j].line };
		if ((m->loc[i] = pv_location_with_lines(d, l->address, mi, m->lines, l->nlines)) == PV_NONE)
			return -1;
	}
	return 0;
}

/* Do d and s hold segments of one run (collect-timer --split)? */
static bool same_run(const struct pv_profile *d, const struct pv_profile *s)
{
	for (size_t i = 0; i < s->nsegments; i++)
		for (size_t j = 0; j < d->nsegments; j++)
			if (s->segments[i].run_key == d->segments[j].run_key)
				return true;
	return false;
}

/* The processes of s whose Python frames were not read counted into d's,
 * a pid d has already counted once when both are of one run (segments of
 * it). */
static void merge_python_unread(struct pv_profile *d, const struct pv_profile *s, bool run)
{
	uint32_t listed = s->python_unread < PV_PY_UNREAD_PIDS ? s->python_unread : PV_PY_UNREAD_PIDS;

	if (s->python_unread && !d->python_unread)
		d->python_unread_version = s->python_unread_version;
	for (uint32_t i = 0; i < listed; i++)
		pv_python_unread_add(d, s->python_unread_pids[i], run);
	d->python_unread += s->python_unread - listed;
}

/* The source's processes: the same one (pid, program, start) is one, and
 * so is one (pid, program) in segments of one run, whose time then spans
 * both. */
static int merge_processes(struct merger *m)
{
	struct pv_profile *d = m->d;
	const struct pv_profile *s = m->s;
	bool run = same_run(d, s);

	for (size_t i = 0; i < s->nprocesses; i++) {
		struct pv_process pr = s->processes[i];
		pr.name = mstr(m, pr.name);
		pr.program = mstr(m, pr.program);
		pr.before = mstr(m, pr.before);
		if (pr.name == PV_NONE || pr.program == PV_NONE || pr.before == PV_NONE)
			return -1;
		pr.start_ns = add_sat(pr.start_ns, m->time_shift);
		pr.end_ns = add_sat(pr.end_ns, m->time_shift);
		m->proc[i] = PV_NONE;
		for (size_t j = 0; j < d->nprocesses && m->proc[i] == PV_NONE; j++) {
			struct pv_process *o = &d->processes[j];
			if (o->pid != pr.pid || o->name != pr.name || o->program != pr.program ||
			    (o->start_ns != pr.start_ns && !run))
				continue;
			m->proc[i] = (uint32_t)j;
			if (pr.start_ns < o->start_ns)
				o->start_ns = pr.start_ns;
			if (pr.end_ns > o->end_ns)
				o->end_ns = pr.end_ns;
		}
		if (m->proc[i] == PV_NONE && (m->proc[i] = pv_add_process(d, &pr)) == PV_NONE)
			return -1;
	}
	return 0;
}

static int merge_samples(struct merger *m)
{
	struct pv_profile *d = m->d;
	const struct pv_profile *s = m->s;

	for (size_t i = 0; i < s->nthreads; i++) {
		const struct pv_thread *t = &s->threads[i];
		uint32_t name = mstr(m, t->name);
		uint32_t pr = t->process < s->nprocesses ? m->proc[t->process] : PV_NONE;
		if (name == PV_NONE ||
		    (m->thr[i] = pv_get_process_thread(d, pr, t->tid, name)) == PV_NONE)
			return -1;
		struct pv_thread *dt = &d->threads[m->thr[i]];
		if (t->cpu_ns >= 0)
			dt->cpu_ns = dt->cpu_ns >= 0 ? add_sat(dt->cpu_ns, t->cpu_ns) : t->cpu_ns;
	}
	for (size_t i = 0; i < s->nsamples; i++) {
		struct pv_sample ps = s->samples[i];
		const uint32_t *sl = pv_sample_locs(s, &s->samples[i]);

		if (pv_grow(&m->locs, &m->cap_locs, ps.nlocs + 1, sizeof *m->locs) < 0)
			return -1;
		for (uint32_t j = 0; j < ps.nlocs; j++)
			m->locs[j] = m->loc[sl[j]];
		ps.loc_off = pv_add_stack(d, m->locs, ps.nlocs);
		if (ps.loc_off == UINT32_MAX)
			return -1;
		ps.thread = ps.thread == PV_NONE ? PV_NONE : m->thr[ps.thread];
		ps.time_ns = add_sat(ps.time_ns, m->time_shift);
		if (ps.end_ns)
			ps.end_ns = add_sat(ps.end_ns, m->time_shift);
		/* pv_add_sample counts truncated samples: the source's count is
		 * added below instead. */
		uint64_t trunc = d->truncated;
		if (pv_add_sample(d, &ps) < 0)
			return -1;
		d->truncated = trunc;
	}
	return 0;
}

int pv_merge(struct pv_profile *d, const struct pv_profile *s, const char *src_name)
{
	struct merger m = { .d = d, .s = s };
	int ret = -1;

	if (check_types(d, s, src_name) < 0)
		return -1;
	/* exact only when every profile merged is */
	d->cpu_exact = s->cpu_exact && (d->cpu_exact || (d->nsamples == 0 && d->threads_cpu_ns == 0));
	m.str = malloc((s->strings.n + 1) * sizeof *m.str);
	m.map = malloc((s->nmappings + 1) * sizeof *m.map);
	m.fn = malloc((s->nfunctions + 1) * sizeof *m.fn);
	m.loc = malloc((s->nlocations + 1) * sizeof *m.loc);
	m.thr = malloc((s->nthreads + 1) * sizeof *m.thr);
	m.proc = malloc((s->nprocesses + 1) * sizeof *m.proc);
	if (!m.str || !m.map || !m.fn || !m.loc || !m.thr || !m.proc) {
		pv_oom();
		goto out;
	}
	memset(m.str, 0xff, s->strings.n * sizeof *m.str);
	/* Sample times count from the earlier start of the two. */
	bool empty = d->nsamples == 0 && !d->timed;
	int64_t start = d->time_ns;
	if (s->time_ns && (!start || s->time_ns < start))
		start = s->time_ns;
	size_t old_n = d->nsamples, old_np = d->nprocesses;
	m.time_shift = s->time_ns && start && s->time_ns > start ? sub_sat(s->time_ns, start) : 0;
	if (merge_mappings(&m) < 0 || merge_locations(&m) < 0 || merge_processes(&m) < 0 ||
	    merge_samples(&m) < 0)
		goto out;
	if (!empty && d->time_ns && start < d->time_ns) {
		int64_t shift = sub_sat(d->time_ns, start);
		for (size_t i = 0; i < old_n; i++) {
			d->samples[i].time_ns = add_sat(d->samples[i].time_ns, shift);
			if (d->samples[i].end_ns)
				d->samples[i].end_ns = add_sat(d->samples[i].end_ns, shift);
		}
		for (size_t i = 0; i < old_np; i++) {
			d->processes[i].start_ns = add_sat(d->processes[i].start_ns, shift);
			d->processes[i].end_ns = add_sat(d->processes[i].end_ns, shift);
		}
	}
	d->timed = empty ? s->timed : d->timed && s->timed;
	d->time_ns = start;
	d->duration_ns = add_sat(d->duration_ns, s->duration_ns);
	if (s->period > d->period) {
		d->period = s->period;
		d->period_type.type = mstr(&m, s->period_type.type);
		d->period_type.unit = mstr(&m, s->period_type.unit);
	}
	if (!d->program && s->program)
		d->program = mstr(&m, s->program);
	if (!d->default_type && s->default_type && (d->default_type = mstr(&m, s->default_type)) == PV_NONE)
		d->default_type = 0;
	if (d->pid != s->pid)
		d->pid = 0;
	d->run_processes += s->run_processes;
	if (__builtin_add_overflow(d->lost, s->lost, &d->lost))
		d->lost = UINT64_MAX;
	if (!d->lost_cause && s->lost_cause)
		d->lost_cause = mstr(&m, s->lost_cause);
	if (d->sampler == PV_SAMPLER_UNKNOWN)
		d->sampler = s->sampler;
	else if (s->sampler != PV_SAMPLER_UNKNOWN && s->sampler != d->sampler)
		d->sampler = PV_SAMPLER_MIXED;
	d->truncated += s->truncated;
	d->heap_since_attach |= s->heap_since_attach;
	d->dropped_bytes += s->dropped_bytes;
	if (__builtin_add_overflow(d->threads_cpu_ns, s->threads_cpu_ns, &d->threads_cpu_ns))
		d->threads_cpu_ns = INT64_MAX;
	if (__builtin_add_overflow(d->unsampled_cpu_ns, s->unsampled_cpu_ns, &d->unsampled_cpu_ns))
		d->unsampled_cpu_ns = INT64_MAX;
	d->unsampled_threads += s->unsampled_threads;
	d->collector_samples += s->collector_samples;
	if (__builtin_add_overflow(d->collector_ns, s->collector_ns, &d->collector_ns))
		d->collector_ns = INT64_MAX;
	if (__builtin_add_overflow(d->collector_cpu_ns, s->collector_cpu_ns, &d->collector_cpu_ns))
		d->collector_cpu_ns = INT64_MAX;
	merge_python_unread(d, s, same_run(d, s));
	if (s->python_read && !d->python_read) {
		d->python_read_version = s->python_read_version;
		d->python_read_micro = s->python_read_micro;
		d->python_read_offsets = s->python_read_offsets;
	}
	d->python_read += s->python_read;
	if (s->system_cpu_ns >= 0) {
		int64_t have = d->system_cpu_ns > 0 ? d->system_cpu_ns : 0;
		if (__builtin_add_overflow(have, s->system_cpu_ns, &d->system_cpu_ns))
			d->system_cpu_ns = INT64_MAX;
	}
	for (size_t i = 0; i < s->nsegments; i++) {
		struct pv_segment g = s->segments[i];
		g.missing_cause = mstr(&m, g.missing_cause);
		if (g.missing_cause == PV_NONE)
			g.missing_cause = 0;
		if (pv_add_segment(d, &g) < 0) {
			pv_oom();
			goto out;
		}
	}
	for (size_t i = 0; i < s->nunprofiled; i++) {
		struct pv_unprofiled u = s->unprofiled[i];
		u.program = mstr(&m, u.program);
		u.why = mstr(&m, u.why);
		if (u.program == PV_NONE || u.why == PV_NONE || pv_add_unprofiled(d, &u) < 0) {
			pv_oom();
			goto out;
		}
	}
	d->finished = d->finished && s->finished;
	d->diff = d->diff || s->diff;
	if (s->source_format != 0 && strcmp(pv_str(d, d->source_format), pv_str(s, s->source_format)))
		d->source_format = pv_intern_str(d, "several formats");
	ret = pv_profile_check_sums(d, src_name);
out:
	free(m.str);
	free(m.map);
	free(m.fn);
	free(m.loc);
	free(m.thr);
	free(m.proc);
	free(m.lines);
	free(m.locs);
	return ret;
}

static int segment_order(const void *a, const void *b)
{
	const struct pv_segment *x = a, *y = b;

	if (x->run_key != y->run_key)
		return x->run_key < y->run_key ? -1 : 1;
	if (x->split_ns != y->split_ns)
		return x->split_ns < y->split_ns ? -1 : 1;
	return x->number < y->number ? -1 : x->number > y->number;
}

/* The time from a run's start to the start of its segment n. */
static char *segment_time(char *buf, size_t n, const struct pv_segment *g, uint64_t number)
{
	uint64_t ns;

	if (__builtin_mul_overflow(number - 1, g->split_ns, &ns) || ns > INT64_MAX)
		ns = INT64_MAX;
	return pv_format_duration(buf, n, (int64_t)ns);
}

#define PV_SEGMENT_GAPS_SAID 5

/* Says that segments first..last of b's run, just before b, are missing:
 * the last b->missing of them could not be written (b says so), the
 * others are not among the profiles read. */
static void segment_gap_say(const struct pv_profile *p, const struct pv_segment *b, uint64_t first,
			    uint64_t last, const char *how)
{
	uint64_t count = last - first + 1, unwritten = b->missing < count ? b->missing : count;
	const char *cause = b->missing_cause ? pv_str(p, b->missing_cause) : NULL;
	char from[32], to[32], why[320] = "", range[64], lost[288] = "";

	segment_time(from, sizeof from, b, first);
	segment_time(to, sizeof to, b, last + 1);
	if (unwritten > 0)
		snprintf(lost, sizeof lost, "could not be written%s%s%s, %" PRIu64 " sample%s lost",
			 cause ? " (" : "", cause ? cause : "", cause ? ")" : "", b->missing_samples,
			 b->missing_samples == 1 ? "" : "s");
	if (unwritten == count)
		snprintf(why, sizeof why, "%s %s", count == 1 ? "it" : "they", lost);
	else if (unwritten == 0)
		snprintf(why, sizeof why, "%s not among the profiles given", count == 1 ? "it is" : "they are");
	else
		snprintf(why, sizeof why, "they are not among the profiles given, and the last %" PRIu64
			 " %s", unwritten, lost);
	if (first == last)
		snprintf(range, sizeof range, "segment %" PRIu64 " of the run", first);
	else
		snprintf(range, sizeof range, "segments %" PRIu64 " to %" PRIu64 " of the run", first, last);
	pv_warn("%s: %s, %s to %s, %s missing: %s", how, range, from, to, first == last ? "is" : "are",
		why);
}

int pv_warn_segment_gaps(const struct pv_profile *p)
{
	struct pv_segment *g;
	int gaps = 0;

	if (p->nsegments < 1)
		return 0;
	g = malloc(p->nsegments * sizeof *g);
	if (!g)
		return 0; /* only a warning */
	memcpy(g, p->segments, p->nsegments * sizeof *g);
	qsort(g, p->nsegments, sizeof *g, segment_order);
	for (size_t i = 0; i < p->nsegments; i++) {
		const struct pv_segment *a = i ? &g[i - 1] : NULL, *b = &g[i];
		bool first_of_run = !a || a->run_key != b->run_key || a->split_ns != b->split_ns;
		uint64_t first = first_of_run ? 1 : a->number + 1, last = b->number - 1;

		/* the first segments of the run left out, none of them lost:
		 * the header says which were read (a run's last few kept by
		 * --keep-segments are read so, routinely) */
		if (b->number <= first || (first_of_run && b->missing == 0))
			continue;
		if (++gaps > PV_SEGMENT_GAPS_SAID)
			continue;
		segment_gap_say(p, b, first, last,
				first_of_run ? "the segments read start after the run's start"
					     : "the segments merged leave a gap");
	}
	if (gaps > PV_SEGMENT_GAPS_SAID)
		pv_warn("and %d more gaps between the segments merged", gaps - PV_SEGMENT_GAPS_SAID);
	free(g);
	return gaps;
}

struct pv_profile *pv_profile_copy(const struct pv_profile *src)
{
	struct pv_profile *p = pv_profile_new();

	if (!p)
		return NULL;
	for (uint32_t i = 0; i < src->nvalues; i++)
		if (pv_add_value_type(p, pv_str(src, src->sample_types[i].type),
				      pv_str(src, src->sample_types[i].unit)) == PV_NONE)
			goto fail;
	if (pv_merge(p, src, "the profile") < 0)
		goto fail;
	/* What merging takes as "several profiles" is the source's own. */
	p->program = pv_intern_str(p, pv_str(src, src->program));
	p->source_format = pv_intern_str(p, pv_str(src, src->source_format));
	p->pid = src->pid;
	p->time_ns = src->time_ns;
	p->duration_ns = src->duration_ns;
	p->finished = src->finished;
	p->live = src->live;
	p->diff = src->diff;
	p->diff_base_runs = src->diff_base_runs;
	p->diff_new_runs = src->diff_new_runs;
	p->diff_base_duration_ns = src->diff_base_duration_ns;
	if (p->program == PV_NONE || p->source_format == PV_NONE)
		goto fail;
	return p;
fail:
	pv_profile_free(p);
	return NULL;
}

/* Naming the program */

int pv_use_program(struct pv_profile *p, const char *path)
{
	const char *base = pv_base_name(path);
	uint32_t want = PV_NONE, file = pv_intern_str(p, path);
	int n = 0;

	if (file == PV_NONE)
		return -1;
	/* Which file stands for the program: the one the profile names... */
	for (size_t i = 0; want == PV_NONE && p->program && i < p->nmappings; i++)
		if (p->mappings[i].file == p->program)
			want = p->program;
	/* ...else one with the same base name... */
	for (size_t i = 0; want == PV_NONE && i < p->nmappings; i++)
		if (p->mappings[i].kind == PV_MAP_FILE &&
		    strcmp(pv_base_name(pv_str(p, p->mappings[i].file)), base) == 0)
			want = p->mappings[i].file;
	/* ...else the first file mapped, where loaders put the program. */
	for (size_t i = 0; want == PV_NONE && i < p->nmappings; i++)
		if (p->mappings[i].kind == PV_MAP_FILE)
			want = p->mappings[i].file;
	for (size_t i = 0; want != PV_NONE && i < p->nmappings; i++) {
		struct pv_mapping *m = &p->mappings[i];
		if (m->file != want)
			continue;
		m->file = file;
		n++;
	}
	p->program = file;
	return n;
}

int pv_reverse_stacks(struct pv_profile *p)
{
	size_t cap = p->nstack_locs + 1, n = 0, cap_lines = 0;
	uint32_t *stack = malloc(cap * sizeof *stack);
	/* by old offset: the new offset and the length reversed there */
	uint32_t *moved = malloc(2 * cap * sizeof *moved);
	struct pv_line *lines = NULL;

	if (!stack || !moved) {
		pv_oom();
		goto fail;
	}
	for (size_t i = 0; i < cap; i++)
		moved[2 * i] = PV_NONE;
	for (size_t i = 0; i < p->nsamples; i++) {
		struct pv_sample *s = &p->samples[i];
		uint32_t *m = &moved[2 * (size_t)s->loc_off];
		if (m[0] != PV_NONE && m[1] == s->nlocs) {
			s->loc_off = m[0];
			continue;
		}
		if (pv_grow(&stack, &cap, n + s->nlocs, sizeof *stack) < 0)
			goto fail;
		const uint32_t *locs = pv_sample_locs(p, s);
		uint32_t off = (uint32_t)n;
		for (uint32_t j = s->nlocs; j-- > 0;)
			stack[n++] = locs[j];
		if (m[0] == PV_NONE) {
			m[0] = off;
			m[1] = s->nlocs;
		}
		s->loc_off = off;
	}
	free(p->stack_locs);
	p->stack_locs = stack;
	p->nstack_locs = n;
	p->cap_stack_locs = cap;
	stack = NULL;
	free(moved);
	moved = NULL;
	for (size_t li = 0; li < p->nlocations; li++) {
		uint32_t k = p->locations[li].nlines;
		if (k < 2)
			continue;
		if (pv_grow(&lines, &cap_lines, k, sizeof *lines) < 0)
			goto fail;
		const struct pv_line *l = pv_location_lines(p, &p->locations[li]);
		for (uint32_t j = 0; j < k; j++)
			lines[j] = l[k - 1 - j];
		if (pv_set_lines(p, (uint32_t)li, lines, k) < 0)
			goto fail;
	}
	free(lines);
	return 0;
fail: /* reported */
	free(stack);
	free(moved);
	free(lines);
	return -1;
}

void pv_drop_inlines(struct pv_profile *p, bool outermost_first)
{
	for (size_t li = 0; li < p->nlocations; li++) {
		struct pv_location *l = &p->locations[li];
		if (l->nlines < 2)
			continue;
		if (!outermost_first)
			l->line_off += l->nlines - 1;
		l->nlines = 1;
	}
}
