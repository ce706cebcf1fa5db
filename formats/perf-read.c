/* perf-read.c - read `perf script` output into the profile model
 *
 * The text is read line by line.  A line that starts with a tab (or, inside
 * a call chain, with spaces and an address) is a frame; a blank line ends
 * a sample; a line of spaces and "FILE:LINE" after a frame is its source
 * line (perf script -F +srcline); anything else is a sample header.
 *
 * A header's fields come in perf's order, each optional:
 *
 *	COMM  PID[/TID]  [CPU]  SECONDS.FRACTION:  PERIOD  EVENT:  [IP SYM (DSO)]
 *
 * COMM may hold spaces and digits, so the header is matched at each of its
 * first words in turn, and the match that finds the fields of the capture's
 * first header (all headers of one perf script run have the same fields)
 * wins, else the one that finds the most.
 */
#include "perf-read.h"
#include "perf-int.h"
#include "error.h"
#include "merge.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct event {
	uint32_t name;         /* string index of the name perf printed */
	uint32_t col;          /* value index of its periods, PV_NONE: none */
};

struct preader {
	const char *name;
	struct pv_profile *p;
	size_t lineno;

	/* The capture: its header shape, events and value columns. */
	unsigned shape;
	bool shaped;
	bool periods;          /* headers carry periods */
	struct event events[PERF_MAX_EVENTS];
	unsigned nevents;
	uint32_t v_samples;
	int64_t left[PV_MAX_VALUES]; /* what each column may still add up to */
	uint64_t other_events, first_other_line;

	/* The sample being read. */
	bool open;             /* a header (or frame) was read, no blank line yet */
	bool chain;            /* its frames follow on lines of their own */
	struct header h;
	size_t start_line;
	size_t start_off;
	uint32_t *locs; size_t nlocs, cap_locs;
	bool deep;             /* frames past PERF_MAX_FRAMES were left out */
	/* The last frame, for a source line that follows it. */
	uint64_t last_addr;
	uint32_t last_map, last_fn;
	bool last_has_addr;

	/* dso string index -> mapping index, open addressing (index + 1) */
	uint32_t *map_slots; size_t nmap_slots, nmaps;
	uint32_t kernel_map;

	int64_t tmin, tmax;
	bool all_timed;
	uint64_t pid;
	bool one_pid, any_pid;

	uint64_t unknown_lines, first_unknown, no_frames;
};

static bool is_kernel_frame(const struct frame *f)
{
	return span_starts(f->dso, "[kernel") || span_starts(f->dso, "[guest.kernel") ||
	       (f->has_addr && f->addr >= PERF_KERNEL_START);
}

static uint32_t kernel_mapping(struct preader *r)
{
	if (r->kernel_map == PV_NONE) {
		struct pv_mapping m = { .kind = PV_MAP_KERNEL, .has_functions = true };
		m.file = pv_intern_str(r->p, PV_KERNEL_MAPPING_NAME);
		if (m.file == PV_NONE)
			return PV_NONE;
		r->kernel_map = pv_add_mapping(r->p, &m);
	}
	return r->kernel_map;
}

/* The mapping of the DSO named [s, s+n), added when new. */
static uint32_t dso_mapping(struct preader *r, struct span dso, bool *fail)
{
	struct pv_profile *p = r->p;
	uint32_t file = pv_intern(p, dso.s, dso.n);
	size_t mask, i;

	*fail = file == PV_NONE;
	if (*fail)
		return PV_NONE;
	if ((r->nmaps + 1) * 2 > r->nmap_slots) {
		size_t n = r->nmap_slots ? r->nmap_slots * 2 : 64;
		uint32_t *s = calloc(n, sizeof *s);
		if (!s) {
			*fail = true;
			pv_oom();
			return PV_NONE;
		}
		for (size_t j = 0; j < r->nmap_slots; j++) {
			uint32_t m = r->map_slots[j];
			if (!m)
				continue;
			size_t k = pv_mix64(p->mappings[m - 1].file) & (n - 1);
			while (s[k])
				k = (k + 1) & (n - 1);
			s[k] = m;
		}
		free(r->map_slots);
		r->map_slots = s;
		r->nmap_slots = n;
	}
	mask = r->nmap_slots - 1;
	for (i = pv_mix64(file) & mask; r->map_slots[i]; i = (i + 1) & mask)
		if (p->mappings[r->map_slots[i] - 1].file == file)
			return r->map_slots[i] - 1;
	struct pv_mapping m = { .file = file, .kind = pv_mapping_kind_of(pv_str(p, file)),
				.has_functions = true };
	uint32_t mi = pv_add_mapping(p, &m);
	if (mi == PV_NONE) {
		*fail = true;
		return PV_NONE;
	}
	r->map_slots[i] = mi + 1;
	r->nmaps++;
	return mi;
}

/* The location of a frame whose function is fn (line: its source line). */
static uint32_t frame_location(struct preader *r, uint64_t addr, bool has_addr, uint32_t map,
			       uint32_t fn, int64_t line)
{
	struct pv_line l = { fn, line };

	/* Without an address each function gets a made-up one of its own. */
	if (!has_addr)
		addr = (1ULL << 62) | fn;
	return pv_location_with_lines(r->p, addr, map, &l, 1);
}

static int add_frame(struct preader *r, const struct frame *f)
{
	struct pv_profile *p = r->p;
	char buf[64];
	uint32_t name, fn, map = PV_NONE, loc;
	bool kernel = is_kernel_frame(f), fail = false;

	if (r->nlocs >= PERF_MAX_FRAMES) {
		r->deep = true;
		return 0;
	}
	if (kernel) {
		if ((map = kernel_mapping(r)) == PV_NONE)
			return -1;
	} else if (f->dso.n && !span_is(f->dso, "[unknown]")) {
		if ((map = dso_mapping(r, f->dso, &fail)) == PV_NONE && fail)
			return -1;
	}
	if (f->sym.n && !span_is(f->sym, "[unknown]")) {
		name = pv_intern(p, f->sym.s, f->sym.n);
	} else if (f->has_addr) {
		/* perf knows no symbol: the DSO and the address it printed
		 * (in a call chain, the offset into the DSO) */
		const char *base = f->dso.n && !span_is(f->dso, "[unknown]")
					   ? memrchr(f->dso.s, '/', f->dso.n) : NULL;
		struct span b = base ? (struct span){ base + 1, f->dso.n - (size_t)(base + 1 - f->dso.s) }
				     : f->dso;
		if (b.n && !span_is(b, "[unknown]")) {
			int k = snprintf(buf, sizeof buf, "+0x%" PRIx64, f->addr);
			char *full = malloc(b.n + (size_t)k + 1);
			if (!full)
				return pv_oom();
			memcpy(full, b.s, b.n);
			memcpy(full + b.n, buf, (size_t)k + 1);
			name = pv_intern(p, full, b.n + (size_t)k);
			free(full);
		} else {
			snprintf(buf, sizeof buf, "0x%" PRIx64, f->addr);
			name = pv_intern_str(p, buf);
		}
	} else {
		name = pv_intern_str(p, "[unknown]");
	}
	if (name == PV_NONE || (fn = pv_get_function(p, name, name, 0, 0)) == PV_NONE)
		return -1;
	if ((loc = frame_location(r, f->addr, f->has_addr, map, fn, 0)) == PV_NONE)
		return -1;
	if (pv_grow(&r->locs, &r->cap_locs, r->nlocs + 1, sizeof *r->locs) < 0)
		return -1;
	r->locs[r->nlocs++] = loc;
	r->last_addr = f->addr;
	r->last_has_addr = f->has_addr;
	r->last_map = map;
	r->last_fn = fn;
	return 0;
}

/* "  FILE:LINE" after a frame (perf script -F +srcline): the frame's
 * source line.  false when t is not one. */
static int source_line(struct preader *r, struct span t, bool *used)
{
	struct pv_profile *p = r->p;
	const char *colon;
	uint64_t line;

	*used = false;
	t = trim(t);
	colon = t.n ? memrchr(t.s, ':', t.n) : NULL;
	if (!colon || colon == t.s || !r->nlocs || r->deep ||
	    !parse_dec(colon + 1, (size_t)(t.s + t.n - colon - 1), &line) || memchr(t.s, ' ', t.n))
		return 0;
	*used = true;
	if (span_starts(t, "??:"))
		return 0;
	const struct pv_function *f = &p->functions[r->last_fn];
	uint32_t file = pv_intern(p, t.s, (size_t)(colon - t.s));
	if (file == PV_NONE)
		return -1;
	uint32_t fn = pv_get_function(p, f->name, f->system_name, file, 0);
	if (fn == PV_NONE)
		return -1;
	uint32_t loc = frame_location(r, r->last_addr, r->last_has_addr, r->last_map, fn,
				      line > INT32_MAX ? 0 : (int64_t)line);
	if (loc == PV_NONE)
		return -1;
	r->locs[r->nlocs - 1] = loc;
	return 0;
}

/* ---- samples ---- */

/* The value column of event ev of a clock that counts nanoseconds of CPU
 * time: "cpu", as every CPU-time profile's. */
static bool clock_event(struct span ev)
{
	const char *colon = memchr(ev.s, ':', ev.n);
	struct span base = { ev.s, colon ? (size_t)(colon - ev.s) : ev.n };

	return span_is(base, "cpu-clock") || span_is(base, "task-clock");
}

/* The index of the sample's event among the capture's, added when new;
 * PERF_MAX_EVENTS when there is no room, -1 after an error. */
static int event_of(struct preader *r, const struct header *h)
{
	struct pv_profile *p = r->p;
	struct span ev = (h->fields & F_EVENT) ? h->event : (struct span){ "", 0 };
	uint32_t name = pv_intern(p, ev.s, ev.n);
	struct event *e;

	if (name == PV_NONE)
		return -1;
	for (unsigned i = 0; i < r->nevents; i++)
		if (r->events[i].name == name)
			return (int)i;
	if (r->nevents == PERF_MAX_EVENTS)
		return PERF_MAX_EVENTS;
	e = &r->events[r->nevents];
	e->name = name;
	e->col = PV_NONE;
	if (r->periods || r->nevents > 0) {
		/* the first event's samples are "samples" already: without
		 * periods it needs no column of its own */
		bool cpu = r->periods && clock_event(ev) && pv_find_value_type(p, "cpu") == PV_NONE;
		char tname[256];
		snprintf(tname, sizeof tname, "%.*s", (int)(ev.n ? ev.n : 6), ev.n ? ev.s : "events");
		if (pv_find_value_type(p, tname) != PV_NONE || strcmp(tname, "samples") == 0)
			snprintf(tname, sizeof tname, "%.*s#%u", (int)(ev.n > 200 ? 200 : ev.n), ev.s,
				 r->nevents + 1);
		e->col = pv_add_value_type(p, cpu ? "cpu" : tname,
					   cpu || (r->periods && clock_event(ev)) ? "nanoseconds" : "count");
		if (e->col == PV_NONE)
			return -1;
		r->left[e->col] = INT64_MAX;
		/* the sampling period, when it is a time (reports take
		 * the profile's period for one) */
		if (r->nevents == 0 && r->periods &&
		    strcmp(pv_str(p, p->sample_types[e->col].unit), "nanoseconds") == 0) {
			p->period_type = p->sample_types[e->col];
			p->period = h->period <= INT64_MAX ? (int64_t)h->period : 0;
		}
	}
	return (int)r->nevents++;
}

static void reset_sample(struct preader *r)
{
	r->open = false;
	r->chain = false;
	r->nlocs = 0;
	r->deep = false;
	memset(&r->h, 0, sizeof r->h);
}

/* Turn the sample read into one of the profile. */
static int end_sample(struct preader *r)
{
	struct pv_profile *p = r->p;
	struct pv_sample s = { .thread = PV_NONE };
	const struct header *h = &r->h;
	int ev;

	if (!r->open)
		return 0;
	if (r->nlocs == 0) {
		r->no_frames++;
		reset_sample(r);
		return 0;
	}
	if (!r->shaped) {
		r->shape = h->fields;
		r->shaped = true;
		r->periods = h->fields & F_PERIOD;
		r->all_timed = true;
	}
	if ((ev = event_of(r, h)) < 0)
		return -1;
	if (ev == PERF_MAX_EVENTS) {
		if (r->other_events++ == 0)
			r->first_other_line = r->start_line;
		reset_sample(r);
		return 0;
	}
	if (ev == 0)
		s.values[r->v_samples] = 1;
	uint32_t col = r->events[ev].col;
	if (col != PV_NONE) {
		int64_t v = r->periods ? (h->fields & F_PERIOD) && h->period < INT64_MAX
						 ? (int64_t)h->period : 0
				       : 1;
		if (v > r->left[col])
			v = r->left[col];
		r->left[col] -= v;
		s.values[col] = v;
	}
	if (h->fields & F_TID) {
		uint32_t name = h->comm.n ? pv_intern(p, h->comm.s, h->comm.n) : PV_NONE;
		if (h->comm.n && name == PV_NONE)
			return -1;
		s.thread = pv_get_thread(p, h->tid <= UINT32_MAX ? (uint32_t)h->tid : UINT32_MAX, name);
		if (s.thread == PV_NONE)
			return -1;
		/* the program: the command of the first main thread seen */
		if (!p->program && name != PV_NONE && (!(h->fields & F_PID) || h->pid == h->tid))
			p->program = name;
	}
	if (h->fields & F_PID && h->pid <= UINT32_MAX) {
		if (!r->any_pid)
			r->pid = h->pid, r->one_pid = true;
		else if (r->pid != h->pid)
			r->one_pid = false;
		r->any_pid = true;
	}
	if (h->fields & F_TIME) {
		s.time_ns = h->time_ns;
		if (p->nsamples == 0 || h->time_ns < r->tmin)
			r->tmin = h->time_ns;
		if (p->nsamples == 0 || h->time_ns > r->tmax)
			r->tmax = h->time_ns;
	} else {
		r->all_timed = false;
	}
	if (pv_location_is_kernel(p, r->locs[0]))
		s.flags |= PV_SAMPLE_KERNEL;
	if (r->deep)
		s.flags |= PV_SAMPLE_TRUNCATED; /* counted by pv_add_sample */
	s.nlocs = (uint32_t)r->nlocs;
	s.loc_off = pv_add_stack(p, r->locs, s.nlocs);
	if (s.loc_off == UINT32_MAX || pv_add_sample_merged(p, &s) < 0)
		return -1;
	reset_sample(r);
	return 0;
}

static void unknown_line(struct preader *r)
{
	if (r->unknown_lines++ == 0)
		r->first_unknown = r->lineno;
}

/* A frame line: starts with a tab, or inside a call chain with spaces and
 * an address. */
static bool frame_line(const struct preader *r, struct span t)
{
	if (t.n && t.s[0] == '\t')
		return true;
	return r->open && r->chain && t.n && t.s[0] == ' ' && perf_starts_with_address(trim(t));
}

static int read_line(struct preader *r, struct span t, size_t off)
{
	struct frame f;
	bool used;

	if (trim(t).n == 0)
		return end_sample(r);
	if (frame_line(r, t)) {
		if (!r->open) {
			/* frames with no header (perf script -F ip,sym) */
			reset_sample(r);
			r->open = r->chain = true;
			r->start_line = r->lineno;
			r->start_off = off;
		}
		if (!perf_parse_frame(t, &f)) {
			unknown_line(r);
			return 0;
		}
		return add_frame(r, &f);
	}
	if (t.s[0] == ' ' && r->open && r->chain) {
		if (source_line(r, t, &used) < 0)
			return -1;
		if (used)
			return 0;
	}
	if (t.s[0] == '#' && !r->open)
		return 0; /* perf script --header */
	if (end_sample(r) < 0)
		return -1;
	struct header h;
	if (!perf_parse_header(t, r->shape, &h)) {
		unknown_line(r);
		return 0;
	}
	if ((h.fields & F_EVENT) && span_starts(h.event, "PERF_RECORD_"))
		return 0; /* --show-task-events and the like */
	r->h = h;
	r->open = true;
	r->start_line = r->lineno;
	r->start_off = off;
	if (h.fields & F_IP) {
		/* recorded without -g: the one frame ends the header */
		if (perf_parse_frame(h.tail, &f) && add_frame(r, &f) < 0)
			return -1;
		return end_sample(r);
	}
	r->chain = true;
	return 0;
}

/* ---- the reader ---- */

static void finish(struct preader *r, bool cut, size_t dropped_from, size_t len)
{
	struct pv_profile *p = r->p;

	if (r->all_timed && p->nsamples) {
		for (size_t i = 0; i < p->nsamples; i++)
			p->samples[i].time_ns -= r->tmin;
		p->timed = true;
		p->duration_ns = r->tmax - r->tmin;
		if (r->nevents && r->events[0].col != PV_NONE &&
		    strcmp(pv_str(p, p->sample_types[r->events[0].col].unit), "nanoseconds") == 0 &&
		    p->period > 0 && p->duration_ns <= INT64_MAX - p->period)
			p->duration_ns += p->period;
	} else {
		for (size_t i = 0; i < p->nsamples; i++)
			p->samples[i].time_ns = 0;
	}
	/* A clock's sample in the kernel is the kernel's CPU time: system
	 * time, when the capture shows kernel frames at all. */
	uint32_t cpu = pv_find_value_type(p, "cpu");
	if (cpu != PV_NONE && r->kernel_map != PV_NONE) {
		p->system_cpu_ns = 0;
		for (size_t i = 0; i < p->nsamples; i++)
			if (p->samples[i].flags & PV_SAMPLE_KERNEL)
				p->system_cpu_ns += p->samples[i].values[cpu];
	}
	if (r->one_pid)
		p->pid = (uint32_t)r->pid;
	p->finished = !cut;
	if (cut) {
		p->dropped_bytes = len - dropped_from;
		pv_warn("'%s': input is cut off in the sample at line %zu; read %zu samples, left out its last %zu bytes",
			r->name, r->start_line, p->nsamples, len - dropped_from);
	}
	if (r->other_events) {
		char buf[512];
		size_t n = 0;
		for (unsigned i = 0; i < r->nevents && n < sizeof buf; i++)
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? ", " : "",
					      pv_str(p, r->events[i].name));
		pv_warn("'%s': %" PRIu64 " samples of events past the first %d (%s), the first at line %" PRIu64 ", left out",
			r->name, r->other_events, PERF_MAX_EVENTS, buf, r->first_other_line);
	}
	if (r->unknown_lines)
		pv_warn("'%s': %" PRIu64 " line%s not understood (the first at line %" PRIu64 ") skipped",
			r->name, r->unknown_lines, r->unknown_lines == 1 ? "" : "s", r->first_unknown);
}

struct pv_profile *perf_read(const unsigned char *buf, size_t len, const char *name)
{
	struct preader r = { .name = name, .kernel_map = PV_NONE };
	const char *s = (const char *)buf;
	bool cut = false;
	size_t dropped_from = len;

	if ((r.p = pv_profile_new()) == NULL)
		return NULL;
	r.p->source_format = pv_intern_str(r.p, "perf script output");
	r.v_samples = pv_add_value_type(r.p, "samples", "count");
	if (r.p->source_format == PV_NONE || r.v_samples == PV_NONE)
		goto fail;
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(s + off, '\n', len - off);
		struct span t = { s + off, (nl ? (size_t)(nl - s) : len) - off };
		r.lineno++;
		if (memchr(t.s, '\0', t.n)) {
			pv_error("'%s': line %zu: a NUL byte: not perf script text", name, r.lineno);
			goto fail;
		}
		if (!nl) {
			/* the last line is cut: so is its sample */
			cut = true;
			if (!r.open)
				r.start_line = r.lineno, r.start_off = off;
			break;
		}
		if (read_line(&r, t, off) < 0)
			goto fail;
		off = (size_t)(nl - s) + 1;
	}
	if (r.open && r.chain) {
		/* perf ends every call chain with a blank line */
		cut = true;
	} else if (r.open) {
		if (end_sample(&r) < 0)
			goto fail;
	}
	if (cut) {
		dropped_from = r.start_off;
		r.nlocs = 0;
	}
	if (r.p->nsamples == 0) {
		if (r.no_frames)
			pv_error("'%s': no sample has an address or a symbol: give perf script the fields ip and sym (-F ...,ip,sym,dso)",
				 name);
		else if (cut)
			pv_error("'%s': no whole sample: the input is cut off in the sample at line %zu (perf script ends each call chain with a blank line)",
				 name, r.start_line);
		else
			pv_error("'%s': no sample in the perf script output", name);
		goto fail;
	}
	finish(&r, cut, dropped_from, len);
	free(r.locs);
	free(r.map_slots);
	return r.p;
fail:
	free(r.locs);
	free(r.map_slots);
	pv_profile_free(r.p);
	return NULL;
}
