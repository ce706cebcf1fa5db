/* raw-run.c - a file collect-timer wrote of a run of several processes:
 * each read as a trace, and merged (see raw-read.h) */
#include "budget.h"
#include "error.h"
#include "merge.h"
#include "raw-iter.h"
#include "raw-python.h"
#include "raw-reader.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* The trace p of one process becomes that process's: its threads in a
 * process of its pid and program.  0, or -1 when out of memory (p freed). */
static int own_process(struct pv_profile *p)
{
	struct pv_process pr = { .pid = p->pid };
	const char *base = strrchr(pv_str(p, p->program), '/');

	pr.program = p->program;
	pr.name = pv_intern_str(p, base ? base + 1 : pv_str(p, p->program));
	pr.end_ns = p->duration_ns;
	if (pr.name == PV_NONE || pv_add_process(p, &pr) == PV_NONE) {
		pv_profile_free(p);
		return -1;
	}
	pv_threads_in_process(p, 0);
	return 0;
}

/* One process of a run: its part of the file, read as a trace. */
static struct pv_profile *read_part(const unsigned char *buf, const char *name,
				    const struct raw_unwinder *uw, bool mapped,
				    const struct raw_run_part *part, const struct rd_run_names *names)
{
	char pname[512];
	struct pv_profile *p;

	snprintf(pname, sizeof pname, "%s, pid %" PRIu32, name, part->pid);
	/* a process that ended by exit, with or without its exit handlers,
	 * left a whole trace */
	p = rd_read_trace(buf + part->offset, (size_t)part->length, pname, uw, mapped,
		       part->flags & (RAW_RUN_EXECD | RAW_RUN_EXITED),
		       (part->flags & RAW_RUN_KILLED) && part->end_code < 128 ? (int)part->end_code : 0,
		       names);
	if (!p || own_process(p) < 0)
		return NULL;
	return p;
}

/* A "before" list longer than this ends in ", ..." (a process that ran
 * programs by the thousand would make strings by the megabyte). */
#define RUN_BEFORE_MAX 200

/* The commands q ran before and its last, for its "before" list. */
static int run_add_before(struct pv_profile *d, struct pv_process *q)
{
	const char *was = pv_str(d, q->before), *name = pv_str(d, q->name);
	size_t wl = strlen(was), n = wl + strlen(name) + 8;
	char *buf;
	uint32_t s;

	if (wl >= 5 && strcmp(was + wl - 5, ", ...") == 0)
		return 0;
	if (!(buf = malloc(n)))
		return -1;
	if (wl > RUN_BEFORE_MAX)
		snprintf(buf, n, "%s, ...", was);
	else
		snprintf(buf, n, "%s%s%s", was, was[0] ? ", " : "", name);
	s = pv_intern_str(d, buf);
	free(buf);
	if (s == PV_NONE)
		return -1;
	q->before = s;
	return 0;
}

/* The images of one process (a pid before and after an exec, in the order
 * they started) made one process, named by its last image, the others in
 * its "before" list; its threads of the same tid one thread.  Returns 0,
 * or -1 when out of memory. */
static int run_join_images(struct pv_profile *d)
{
	size_t np = d->nprocesses, nt = d->nthreads, kept = 0;
	uint32_t *pmap = malloc((np + 1) * sizeof *pmap), *tmap = malloc((nt + 1) * sizeof *tmap);
	int ret = -1;

	if (!pmap || !tmap)
		goto out;
	for (size_t i = 0; i < np; i++) {
		struct pv_process pr = d->processes[i];
		size_t j = 0;

		while (j < kept && d->processes[j].pid != pr.pid)
			j++;
		pmap[i] = (uint32_t)j;
		if (j == kept) {
			d->processes[kept++] = pr;
			continue;
		}
		struct pv_process *q = &d->processes[j];
		if (run_add_before(d, q) < 0)
			goto out;
		q->name = pr.name;
		q->program = pr.program;
		q->start_ns = pr.start_ns < q->start_ns ? pr.start_ns : q->start_ns;
		q->end_ns = pr.end_ns > q->end_ns ? pr.end_ns : q->end_ns;
	}
	d->nprocesses = kept;
	kept = 0;
	for (size_t i = 0; i < nt; i++) {
		struct pv_thread th = d->threads[i];
		size_t j = 0;

		if (th.process < np)
			th.process = pmap[th.process];
		while (j < kept && !(d->threads[j].process == th.process && d->threads[j].tid == th.tid))
			j++;
		tmap[i] = (uint32_t)j;
		if (j == kept) {
			d->threads[kept++] = th;
			continue;
		}
		/* the thread goes on in the new image, under its new name */
		struct pv_thread *o = &d->threads[j];
		if (th.cpu_ns >= 0)
			o->cpu_ns = o->cpu_ns >= 0 ? o->cpu_ns + th.cpu_ns : th.cpu_ns;
		o->name = th.name;
	}
	d->nthreads = kept;
	for (size_t i = 0; i < d->nsamples; i++)
		if (d->samples[i].thread < nt)
			d->samples[i].thread = tmap[d->samples[i].thread];
	/* (the look-up by thread is made again when next needed) */
	free(d->thr_slots);
	d->thr_slots = NULL;
	d->nthr_slots = 0;
	ret = 0;
out:
	free(pmap);
	free(tmap);
	return ret ? pv_oom() : 0;
}

/* The run's processes that were not profiled (raw.h, raw_run_others)
 * into d.  Returns 0, or -1 when out of memory. */
static int run_read_others(struct pv_profile *d, const unsigned char *buf, size_t len,
			   const struct raw_run_footer *f, const char *name)
{
	struct raw_run_other o;
	const char *pname;
	uint64_t pos = 0;
	int r;

	while ((r = raw_run_other_next(buf, len, f, &pos, &o, &pname)) == 1) {
		struct pv_unprofiled u = { .pid = o.pid, .cpu_ns = -1 };
		char *prog = strndup(pname, o.name_len);

		if (!prog)
			return pv_oom();
		/* (a name with a NUL in it stops there) */
		u.program = pv_intern_str(d, prog);
		free(prog);
		u.why = pv_intern_str(d, raw_why_say(o.why));
		if (o.cpu_ns != RAW_UNKNOWN && o.cpu_ns <= INT64_MAX)
			u.cpu_ns = (int64_t)o.cpu_ns;
		if (o.end == RAW_RUN_KILLED)
			u.killed_by = o.end_code < 128 ? (int)o.end_code : 0;
		if (u.program == PV_NONE || u.why == PV_NONE || pv_add_unprofiled(d, &u) < 0)
			return pv_oom();
	}
	if (r < 0)
		pv_warn("'%s': the table of the run's processes that were not profiled is damaged: "
			"read up to entry %zu", name, d->nunprofiled);
	return 0;
}

/* The run's names deflated (raw.h, raw_run_pynamez): z[0..zlen), which
 * raw_run_pynames found, inflated to exactly want bytes (at most
 * RAW_RUN_PYNAMES_MAX), into *out (freed by the caller).  The room grows
 * with what the stream makes, so that a trailer's lie costs nothing.  1;
 * 0 when the stream is damaged (said: the names are lost, the samples
 * are not); -1 when out of memory or over the budget. */
static int run_names_inflate(const unsigned char *z, uint64_t zlen, uint64_t want, const char *name,
			     unsigned char **out)
{
	z_stream zs = { 0 };
	size_t cap = 0;
	const char *why = NULL;
	int zr = Z_OK;

	*out = NULL;
	if (inflateInit(&zs) != Z_OK)
		return pv_oom();
	/* (both at most RAW_RUN_PYNAMES_MAX: uInt counts them) */
	zs.next_in = (unsigned char *)z;
	zs.avail_in = (uInt)zlen;
	while (zr == Z_OK) {
		size_t more = cap ? cap : (size_t)(zlen * 4 > 65536 ? zlen * 4 : 65536);
		unsigned char *o;

		if (more > want - cap)
			more = (size_t)(want - cap);
		if (pv_budget_charge(more) < 0 || (o = realloc(*out, cap + more)) == NULL) {
			zr = Z_MEM_ERROR;
			break;
		}
		*out = o;
		zs.next_out = o + cap;
		zs.avail_out = (uInt)more;
		cap += more;
		zr = inflate(&zs, Z_FINISH);
		/* (a full room that may grow: on) */
		if (zr == Z_BUF_ERROR && zs.avail_out == 0 && cap < want)
			zr = Z_OK;
	}
	if (zr == Z_STREAM_END && zs.total_out != want)
		why = "makes fewer bytes than its trailer says";
	else if (zr == Z_DATA_ERROR)
		why = zs.msg ? zs.msg : "is corrupt";
	else if (zr == Z_BUF_ERROR && zs.avail_out == 0 && zs.avail_in > 0)
		why = "makes more bytes than its trailer says";
	else if (zr == Z_BUF_ERROR)
		why = "is cut short";
	else if (zr != Z_STREAM_END && zr != Z_MEM_ERROR)
		why = "does not inflate";
	inflateEnd(&zs);
	if (zr == Z_STREAM_END && !why)
		return 1;
	free(*out);
	*out = NULL;
	if (zr == Z_MEM_ERROR)
		return pv_oom();
	pv_warn("'%s': the run's Python names are damaged (their deflated stream: %s): the "
		"processes' names that are among them are read as empty", name, why);
	return 0;
}

/* The run's names of the run file buf[0..len) (NULL when it has none, or
 * when they are damaged: said) into *names.  0, or -1 when out of memory. */
static int run_names(const unsigned char *buf, size_t len, const struct raw_run_footer *f, const char *name,
		     struct rd_run_names **names)
{
	uint64_t off = 0, size = 0, inflated = 0;
	unsigned char *plain = NULL;
	int r;

	*names = NULL;
	switch (raw_run_pynames(buf, len, f, &off, &size, &inflated)) {
	case 1:
		if (inflated && (r = run_names_inflate(buf + off, size, inflated, name, &plain)) <= 0)
			return r;
		*names = rd_run_names_read(plain ? plain : buf + off, (size_t)(plain ? inflated : size), name);
		free(plain);
		return *names ? 0 : -1;
	case -1:
		pv_warn("'%s': the run's Python names are damaged: the processes' names that "
			"are among them are read as empty", name);
		break;
	}
	return 0;
}

struct pv_profile *raw_read_run(const unsigned char *buf, size_t len, const char *name,
				const struct raw_unwinder *uw, bool mapped)
{
	struct raw_run_footer f;
	struct raw_run_part part;
	struct pv_profile *d = NULL;
	long n = raw_run_index(buf, len, &f);
	int64_t first = INT64_MAX, last = INT64_MIN, end;
	uint32_t pid = 0, root = 0;
	bool has_root = false;
	size_t nread = 0;
	struct rd_run_names *names = NULL;

	if (n == 0) {
		/* a segment of one process (collect-timer --split) is that
		 * process's too, so that the segments merged make one */
		struct pv_profile *p = rd_read_trace(buf, len, name, uw, mapped, false, 0, NULL);

		if (p && p->nsegments > 0 && own_process(p) < 0)
			return NULL;
		return p;
	}
	if (n < 0) {
		pv_warn("'%s': the index of the run's processes is damaged: only the first process is read",
			name);
		return rd_read_trace(buf, len, name, uw, mapped, false, 0, NULL);
	}
	if (run_names(buf, len, &f, name, &names) < 0)
		return NULL;
	for (uint32_t i = 0; i < (uint32_t)n; i++) {
		struct pv_profile *p;

		if (raw_run_part_get(buf, len, &f, i, &part) < 0) {
			pv_warn("'%s': entry %" PRIu32 " of the run's index is damaged: that process is left out",
				name, i);
			continue;
		}
		p = read_part(buf, name, uw, mapped, &part, names);
		if (!p)
			continue; /* (said why) */
		if ((part.flags & RAW_RUN_ROOT) && !has_root) {
			has_root = true;
			root = part.pid;
		}
		if (!d) {
			d = pv_profile_new();
			for (uint32_t v = 0; d && v < p->nvalues; v++)
				if (pv_add_value_type(d, pv_str(p, p->sample_types[v].type),
						      pv_str(p, p->sample_types[v].unit)) == PV_NONE) {
					pv_profile_free(d);
					d = NULL;
				}
			if (!d) {
				pv_profile_free(p);
				rd_run_names_free(names);
				pv_oom();
				return NULL;
			}
			pid = p->pid;
			d->finished = true;
			d->source_format = pv_intern_str(d, pv_str(p, p->source_format));
		}
		if (pv_merge(d, p, name) < 0) {
			pv_profile_free(p);
			pv_profile_free(d);
			rd_run_names_free(names);
			return NULL;
		}
		if (p->time_ns < first)
			first = p->time_ns;
		/* (the times are the file's: a damaged one may be anything) */
		if (__builtin_add_overflow(p->time_ns, p->duration_ns, &end))
			end = p->duration_ns > 0 ? INT64_MAX : INT64_MIN;
		if (end > last)
			last = end;
		pv_profile_free(p);
		nread++;
	}
	rd_run_names_free(names);
	if (!d) {
		pv_error("'%s': no process of the run could be read", name);
		return NULL;
	}
	/* one run: its span, not the sum of its processes' */
	if (last <= first || __builtin_sub_overflow(last, first, &d->duration_ns))
		d->duration_ns = last > first ? INT64_MAX : 0;
	d->time_ns = first;
	d->pid = has_root ? root : pid;
	d->run_processes = f.nprocesses;
	if (run_join_images(d) < 0 || run_read_others(d, buf, len, &f, name) < 0) {
		pv_profile_free(d);
		return NULL;
	}
	/* the run is the program the user launched: its process, by what it
	 * became (older files: the first process read) */
	for (size_t i = 0; i < d->nprocesses; i++)
		if (d->processes[i].pid == d->pid) {
			d->program = d->processes[i].program;
			break;
		}
	return d;
}
