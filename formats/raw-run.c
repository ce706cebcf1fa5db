/* raw-run.c - a file collect-timer wrote of a run of several processes:
 * each read as a trace, and merged (see raw-read.h) */
#include "error.h"
#include "merge.h"
#include "raw-reader.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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
				    const struct raw_run_part *part)
{
	char pname[512];
	struct pv_profile *p;

	snprintf(pname, sizeof pname, "%s, pid %" PRIu32, name, part->pid);
	p = rd_read_trace(buf + part->offset, (size_t)part->length, pname, uw, mapped,
		       part->flags & RAW_RUN_EXECD);
	if (!p || own_process(p) < 0)
		return NULL;
	return p;
}

struct pv_profile *raw_read_run(const unsigned char *buf, size_t len, const char *name,
				const struct raw_unwinder *uw, bool mapped)
{
	struct raw_run_footer f;
	struct raw_run_part part;
	struct pv_profile *d = NULL;
	long n = raw_run_index(buf, len, &f);
	int64_t first = INT64_MAX, last = INT64_MIN;
	uint32_t pid = 0;
	size_t nread = 0;

	if (n == 0) {
		/* a segment of one process (collect-timer --split) is that
		 * process's too, so that the segments merged make one */
		struct pv_profile *p = rd_read_trace(buf, len, name, uw, mapped, false);

		if (p && p->nsegments > 0 && own_process(p) < 0)
			return NULL;
		return p;
	}
	if (n < 0) {
		pv_warn("'%s': the index of the run's processes is damaged: only the first process is read",
			name);
		return rd_read_trace(buf, len, name, uw, mapped, false);
	}
	for (uint32_t i = 0; i < (uint32_t)n; i++) {
		struct pv_profile *p;

		if (raw_run_part_get(buf, len, &f, i, &part) < 0) {
			pv_warn("'%s': entry %" PRIu32 " of the run's index is damaged: that process is left out",
				name, i);
			continue;
		}
		p = read_part(buf, name, uw, mapped, &part);
		if (!p)
			continue; /* (said why) */
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
			return NULL;
		}
		if (p->time_ns < first)
			first = p->time_ns;
		if (p->time_ns + p->duration_ns > last)
			last = p->time_ns + p->duration_ns;
		pv_profile_free(p);
		nread++;
	}
	if (!d) {
		pv_error("'%s': no process of the run could be read", name);
		return NULL;
	}
	/* one run: its span, not the sum of its processes' */
	d->duration_ns = last > first ? last - first : 0;
	d->time_ns = first;
	d->pid = pid;
	return d;
}
