/* perf-read.c - read `perf script` output into the profile model
 *
 * The text is read line by line.  A line that starts with a tab (or, inside
 * a call chain, with spaces and an address) is a frame; a blank line ends
 * a sample; an indented line after a frame is its source line (perf
 * script -F +srcline: "FILE:LINE", kept, "(inlined)" after it for an
 * inlined call); perf's side band (PERF_RECORD_*) and source code
 * ("|12 ...") are skipped; a line of spaces and an address alone is a
 * sample of one frame (-F ip,sym without -g); anything else is a sample
 * header (a command alone when frames follow it).
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
	uint32_t col;          /* value index of its periods (or counts), PV_NONE: none */
	uint32_t count_col;    /* value index of its sample count, PV_NONE: none */
	bool clock;            /* cpu-clock, task-clock: periods in nanoseconds */
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
	bool comm_only;        /* its header is a command alone */
	struct header h;
	size_t start_line;
	size_t start_off;
	uint32_t *locs; size_t nlocs, cap_locs;
	bool deep;             /* frames past PERF_MAX_FRAMES were left out */
	/* Frames perf marked "(inlined)", innermost first, waiting for the
	 * frame they were inlined into. */
	struct pv_line *inl; size_t ninl, cap_inl;
	uint64_t inl_addr;
	bool inl_has_addr;
	bool last_inlined;     /* the last frame read was one of them */
	bool any_frame;        /* some sample had a frame perf printed */
	/* The last frame, for a source line that follows it. */
	uint64_t last_addr;
	uint32_t last_map;
	bool last_has_addr;

	/* dso string index -> mapping index, open addressing (index + 1) */
	uint32_t *map_slots; size_t nmap_slots, nmaps;
	uint32_t kernel_map;

	int64_t tmin, tmax;
	bool all_timed;
	uint64_t pid;
	bool one_pid, any_pid;

	uint64_t unknown_lines, first_unknown, no_frames, huge_periods, first_huge;
};

/* A DSO perf names in brackets that is the kernel's: "[kernel.kallsyms]",
 * "[guest.kernel.kallsyms]", a module ("[xfs]", "[nf_tables]"); not one of
 * user space's ("[vdso]", "[heap]", "[anon:name]", "[JIT] tid 12"). */
static bool kernel_dso(struct span d)
{
	static const char *const user[] = {
		"[unknown]", "[vdso]", "[vdso32]", "[vdsox32]", "[vsyscall]", "[vvar]", "[vvar_vclock]",
		"[heap]", "[stack]", "[anon]", "[uprobes]", "[vectors]", "[sigpage]",
	};

	if (d.n < 3 || d.s[0] != '[' || d.s[d.n - 1] != ']')
		return false;
	if (span_starts(d, "[kernel") || span_starts(d, "[guest.kernel"))
		return true;
	for (size_t i = 0; i < sizeof user / sizeof *user; i++)
		if (span_is(d, user[i]))
			return false;
	for (size_t i = 1; i + 1 < d.n; i++)
		if (!(is_digit(d.s[i]) || (d.s[i] >= 'a' && d.s[i] <= 'z') || (d.s[i] >= 'A' && d.s[i] <= 'Z') ||
		      d.s[i] == '_' || d.s[i] == '-'))
			return false;
	return true;
}

static bool is_kernel_frame(const struct frame *f)
{
	return kernel_dso(f->dso) ||
	       (f->has_addr && f->addr >= PERF_KERNEL_START && (!f->dso.n || span_is(f->dso, "[unknown]")));
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
	if (kernel_dso(dso))
		m.kind = PV_MAP_KERNEL; /* a module */
	uint32_t mi = pv_add_mapping(p, &m);
	if (mi == PV_NONE) {
		*fail = true;
		return PV_NONE;
	}
	r->map_slots[i] = mi + 1;
	r->nmaps++;
	return mi;
}

/* The location at addr in map with lines (innermost first, n >= 1). */
static uint32_t frame_location(struct preader *r, uint64_t addr, bool has_addr, uint32_t map,
			       const struct pv_line *lines, uint32_t n)
{
	/* Without an address each function gets a made-up one of its own. */
	if (!has_addr)
		addr = (1ULL << 62) | lines[n - 1].function;
	return pv_location_with_lines(r->p, addr, map, lines, n);
}

/* The function perf named in frame f: its symbol, else the DSO and the
 * address it printed (in a call chain, the offset into the DSO).
 * PV_NONE when out of memory. */
static uint32_t frame_function(struct preader *r, const struct frame *f)
{
	struct pv_profile *p = r->p;
	char buf[64];
	uint32_t name;

	if (f->sym.n && !span_is(f->sym, "[unknown]")) {
		name = pv_intern(p, f->sym.s, f->sym.n);
	} else if (f->has_addr) {
		const char *base = f->dso.n && !span_is(f->dso, "[unknown]")
					   ? memrchr(f->dso.s, '/', f->dso.n) : NULL;
		struct span b = base ? (struct span){ base + 1, f->dso.n - (size_t)(base + 1 - f->dso.s) }
				     : f->dso;
		if (b.n && !span_is(b, "[unknown]")) {
			int k = snprintf(buf, sizeof buf, "+0x%" PRIx64, f->addr);
			char *full = malloc(b.n + (size_t)k + 1);
			if (!full) {
				pv_oom();
				return PV_NONE;
			}
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
	return name == PV_NONE ? PV_NONE : pv_get_function(p, name, name, 0, 0);
}

static int push_location(struct preader *r, uint32_t loc)
{
	if (loc == PV_NONE || pv_grow(&r->locs, &r->cap_locs, r->nlocs + 1, sizeof *r->locs) < 0)
		return -1;
	r->locs[r->nlocs++] = loc;
	return 0;
}

/* Inlined frames that no frame of theirs followed (the end of the call
 * chain, or a frame at another address): a location of their own, the
 * outermost of them the function they are in. */
static int flush_inlined(struct preader *r)
{
	uint32_t loc;

	if (!r->ninl)
		return 0;
	loc = frame_location(r, r->inl_addr, r->inl_has_addr, PV_NONE, r->inl, (uint32_t)r->ninl);
	r->ninl = 0;
	return push_location(r, loc);
}

static int add_frame(struct preader *r, const struct frame *f)
{
	uint32_t fn, map = PV_NONE, loc;
	bool fail = false;

	if (r->nlocs >= PERF_MAX_FRAMES) {
		r->deep = true;
		return 0;
	}
	r->any_frame = true;
	if ((fn = frame_function(r, f)) == PV_NONE)
		return -1;
	r->last_inlined = f->inlined;
	if (f->inlined && r->ninl >= PERF_MAX_FRAMES) {
		r->deep = true;
		return 0;
	}
	if (f->inlined) {
		/* perf prints the functions inlined at an address before the
		 * frame of the function they were inlined into, at the same
		 * address: lines of that frame's location */
		if (r->ninl && (r->inl_has_addr != f->has_addr || r->inl_addr != f->addr) &&
		    flush_inlined(r) < 0)
			return -1;
		if (pv_grow(&r->inl, &r->cap_inl, r->ninl + 1, sizeof *r->inl) < 0)
			return -1;
		r->inl[r->ninl++] = (struct pv_line){ fn, 0 };
		r->inl_addr = f->addr;
		r->inl_has_addr = f->has_addr;
		return 0;
	}
	if (r->ninl && (r->inl_has_addr != f->has_addr || r->inl_addr != f->addr) && flush_inlined(r) < 0)
		return -1;
	if (is_kernel_frame(f)) {
		if ((map = kernel_mapping(r)) == PV_NONE)
			return -1;
	} else if (f->dso.n && !span_is(f->dso, "[unknown]")) {
		if ((map = dso_mapping(r, f->dso, &fail)) == PV_NONE && fail)
			return -1;
	}
	if (pv_grow(&r->inl, &r->cap_inl, r->ninl + 1, sizeof *r->inl) < 0)
		return -1;
	r->inl[r->ninl++] = (struct pv_line){ fn, 0 };
	loc = frame_location(r, f->addr, f->has_addr, map, r->inl, (uint32_t)r->ninl);
	r->ninl = 0;
	if (push_location(r, loc) < 0)
		return -1;
	r->last_addr = f->addr;
	r->last_has_addr = f->has_addr;
	r->last_map = map;
	return 0;
}

/* The source line t ("FILE:LINE", else nothing) of the frame before,
 * which "(inlined)" after it says perf read from inline info: the frame's
 * location taken back, its lines waiting for the frame they were inlined
 * into.  0, or -1 when out of memory. */
static int reopen_inlined(struct preader *r, struct span t)
{
	struct pv_profile *p = r->p;
	const struct pv_location *l = &p->locations[r->locs[r->nlocs - 1]];
	const char *colon = t.n ? memrchr(t.s, ':', t.n) : NULL;
	uint64_t line;

	if (pv_grow(&r->inl, &r->cap_inl, l->nlines, sizeof *r->inl) < 0)
		return -1;
	memcpy(r->inl, pv_location_lines(p, l), l->nlines * sizeof *r->inl);
	r->ninl = l->nlines;
	r->inl_addr = r->last_addr;
	r->inl_has_addr = r->last_has_addr;
	r->last_inlined = true;
	r->nlocs--;
	if (r->ninl && colon && colon > t.s && !span_starts(t, "??:") &&
	    parse_dec(colon + 1, (size_t)(t.s + t.n - colon - 1), &line)) {
		const struct pv_function *f = &p->functions[r->inl[r->ninl - 1].function];
		uint32_t file = pv_intern(p, t.s, (size_t)(colon - t.s));
		uint32_t fn = file == PV_NONE ? PV_NONE : pv_get_function(p, f->name, f->system_name, file, 0);
		if (fn == PV_NONE)
			return -1;
		r->inl[r->ninl - 1] = (struct pv_line){ fn, line > INT32_MAX ? 0 : (int64_t)line };
	}
	return 0;
}

/* An indented line after a frame (perf script -F +srcline): the frame's
 * source line when it is "FILE:LINE", else ("??:0", "[kernel.kallsyms][ffff81..]")
 * nothing to keep.  *used is false when t is no such line. */
static int source_line(struct preader *r, struct span t, bool *used)
{
	struct pv_profile *p = r->p;
	const char *colon;
	uint64_t line;

	t = trim(t);
	*used = r->nlocs || r->ninl;
	if (word(t).n < t.n) {
		/* "FILE:LINE (inlined)": the frame before is an inlined call */
		struct span w = word(t);
		if (*used && !r->last_inlined && !r->deep && r->nlocs &&
		    span_is(trim((struct span){ w.s + w.n, t.n - w.n }), "(inlined)"))
			return reopen_inlined(r, w);
		return 0;
	}
	colon = t.n ? memrchr(t.s, ':', t.n) : NULL;
	if (!*used || r->deep || r->last_inlined || !colon || colon == t.s || span_starts(t, "??:") ||
	    !parse_dec(colon + 1, (size_t)(t.s + t.n - colon - 1), &line) || memchr(t.s, ' ', t.n))
		return 0;
	/* the outermost line of the frame's location is the frame's own */
	uint32_t last = r->locs[r->nlocs - 1];
	const struct pv_location *l = &p->locations[last];
	uint32_t n = l->nlines;
	if (n == 0 || pv_grow(&r->inl, &r->cap_inl, n, sizeof *r->inl) < 0)
		return n == 0 ? 0 : -1;
	memcpy(r->inl, pv_location_lines(p, l), n * sizeof *r->inl);
	const struct pv_function *f = &p->functions[r->inl[n - 1].function];
	uint32_t file = pv_intern(p, t.s, (size_t)(colon - t.s));
	if (file == PV_NONE)
		return -1;
	uint32_t fn = pv_get_function(p, f->name, f->system_name, file, 0);
	if (fn == PV_NONE)
		return -1;
	r->inl[n - 1] = (struct pv_line){ fn, line > INT32_MAX ? 0 : (int64_t)line };
	uint32_t loc = frame_location(r, r->last_addr, r->last_has_addr, r->last_map, r->inl, n);
	if (loc == PV_NONE)
		return -1;
	/* the address is the frame's without its source line: the new
	 * location's made-up one stays in the frame's DSO (the kernel's) */
	if (p->locations[loc].mapping == PV_NONE)
		p->locations[loc].mapping = r->last_map;
	r->locs[r->nlocs - 1] = loc;
	return 0;
}

/* ---- samples ---- */

/* Is c one of perf's event modifiers ("cycles:upp", "cpu-clock:ppp")? */
static bool event_modifier(char c)
{
	return c && strchr("ukhIGHpPSDWebR", c);
}

/* Does the term of a "pmu/terms/" event leave the event as it is (how
 * often it is sampled, what is recorded with it)? */
static bool setting_term(struct span t)
{
	static const char *const settings[] = {
		"period=", "freq=", "call-graph=", "stack-size=", "max-stack=", "time", "inherit",
		"no-inherit", "overwrite", "no-overwrite", "percore", "aux-output", "metric-id=",
	};

	for (size_t i = 0; i < sizeof settings / sizeof *settings; i++)
		if (span_starts(t, settings[i]))
			return true;
	return false;
}

/* Event ev's name as a sample type: without the modifiers and settings
 * that do not change what is counted ("cycles:u" is "cycles",
 * "task-clock/period=1000/" is "task-clock"), the one given by name=
 * ("cpu/event=0x3c,name=ticks/" is "ticks"); else (a tracepoint
 * "sched:sched_switch", a raw "cpu/event=0x3c/") the whole. */
static struct span event_base(struct span ev)
{
	const char *slash = ev.n ? memchr(ev.s, '/', ev.n) : NULL;

	if (slash) {
		const char *end = memchr(slash + 1, '/', (size_t)(ev.s + ev.n - slash - 1));
		bool settings = true;
		if (!end || slash == ev.s)
			return ev;
		for (const char *t = slash + 1; t < end;) {
			const char *comma = memchr(t, ',', (size_t)(end - t));
			struct span term = { t, (size_t)((comma ? comma : end) - t) };
			if (span_starts(term, "name=") && term.n > 5)
				return (struct span){ term.s + 5, term.n - 5 };
			settings = settings && setting_term(term);
			t = comma ? comma + 1 : end;
		}
		return settings ? (struct span){ ev.s, (size_t)(slash - ev.s) }
				: (struct span){ ev.s, (size_t)(end + 1 - ev.s) };
	}
	const char *colon = ev.n ? memrchr(ev.s, ':', ev.n) : NULL;
	if (colon && colon > ev.s && colon + 1 < ev.s + ev.n) {
		for (const char *c = colon + 1; c < ev.s + ev.n; c++)
			if (!event_modifier(*c))
				return ev;
		return (struct span){ ev.s, (size_t)(colon - ev.s) };
	}
	return ev;
}

/* A clock event counts nanoseconds (of CPU time, as perf report shows). */
static bool clock_event(struct span base)
{
	return span_is(base, "cpu-clock") || span_is(base, "task-clock");
}

/* A new value column named name; PV_NONE when out of memory. */
static uint32_t add_column(struct preader *r, const char *name, const char *unit)
{
	uint32_t col = pv_add_value_type(r->p, name, unit);

	if (col != PV_NONE)
		r->left[col] = INT64_MAX;
	return col;
}

/* A new column holding, of every sample read so far (all of the first
 * event), its count of samples. */
static uint32_t add_first_counts(struct preader *r, const char *name)
{
	struct pv_profile *p = r->p;
	uint32_t col = add_column(r, name, "count");

	for (size_t i = 0; col != PV_NONE && i < p->nsamples; i++) {
		p->samples[i].values[col] = p->samples[i].values[r->v_samples];
		r->left[col] -= p->samples[i].values[col];
	}
	return col;
}

/* The name of event ev's column: its base name, else the name perf
 * printed, else either with "#N", when another column has it. */
static void column_name(const struct preader *r, struct span ev, char *buf, size_t n)
{
	struct span base = event_base(ev);

	snprintf(buf, n, "%.*s", (int)(base.n > 200 ? 200 : base.n), base.s);
	if (base.n == 0)
		snprintf(buf, n, "events");
	if (pv_find_value_type(r->p, buf) != PV_NONE || strcmp(buf, "samples") == 0)
		snprintf(buf, n, "%.*s", (int)(ev.n > 200 ? 200 : ev.n), ev.s);
	if (pv_find_value_type(r->p, buf) != PV_NONE || strcmp(buf, "samples") == 0)
		snprintf(buf, n, "%.*s#%u", (int)(base.n > 200 ? 200 : base.n), base.s, r->nevents + 1);
}

/* Columns of a new event e: its periods (or, without periods, its
 * counts), and when the capture has several events, each event's count of
 * samples ("page-faults_samples"), the first event's made when the second
 * one is seen.  0, or -1 when out of memory. */
static int event_columns(struct preader *r, struct event *e, struct span ev)
{
	struct pv_profile *p = r->p;
	char tname[256], cname[300];

	e->col = e->count_col = PV_NONE;
	e->clock = clock_event(event_base(ev));
	if (r->nevents == 1) {
		struct event *first = &r->events[0];
		if (first->col == PV_NONE) {
			const char *n0 = pv_str(p, first->name);
			column_name(r, (struct span){ n0, strlen(n0) }, tname, sizeof tname);
			if ((first->col = add_first_counts(r, tname)) == PV_NONE)
				return -1;
		}
		snprintf(cname, sizeof cname, "%s_samples", pv_str(p, p->sample_types[first->col].type));
		if ((first->count_col = add_first_counts(r, cname)) == PV_NONE)
			return -1;
	}
	column_name(r, ev, tname, sizeof tname);
	if (r->periods || r->nevents > 0) {
		/* without periods the first event's samples are "samples"
		 * already: it needs no column of its own until a second
		 * event comes */
		e->col = add_column(r, tname, r->periods && e->clock ? "nanoseconds" : "count");
		if (e->col == PV_NONE)
			return -1;
	}
	if (r->nevents > 0) {
		snprintf(cname, sizeof cname, "%s_samples", tname);
		if ((e->count_col = add_column(r, cname, "count")) == PV_NONE)
			return -1;
	}
	return 0;
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
	if (event_columns(r, e, ev) < 0)
		return -1;
	if (r->nevents == 0 && e->col != PV_NONE) {
		/* what reports weigh by unless told: the periods, as perf
		 * report; a clock's period is the profile's sampling period */
		p->default_type = p->sample_types[e->col].type;
		if (e->clock) {
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
	r->comm_only = false;
	r->nlocs = 0;
	r->ninl = 0;
	r->last_inlined = false;
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
	if (flush_inlined(r) < 0)
		return -1;
	if (r->nlocs == 0 && r->comm_only) {
		/* a line that looked like a command alone, no frame after it */
		if (r->unknown_lines++ == 0)
			r->first_unknown = r->start_line;
		reset_sample(r);
		return 0;
	}
	if (r->nlocs == 0) {
		/* perf printed no frame: the sample is kept, where it was is
		 * unknown */
		static const struct frame unknown = { .sym = { "[unknown]", 9 } };
		bool any = r->any_frame;
		r->no_frames++;
		if (add_frame(r, &unknown) < 0)
			return -1;
		r->any_frame = any;
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
	s.values[r->v_samples] = 1;
	uint32_t col = r->events[ev].col;
	if (col != PV_NONE) {
		int64_t v = 1;
		if (r->periods && !(h->fields & F_PERIOD)) {
			v = 0;
		} else if (r->periods && h->period > INT64_MAX) {
			/* no sum of them could be held: counted as the most one can */
			if (r->huge_periods++ == 0)
				r->first_huge = r->start_line;
			v = INT64_MAX;
		} else if (r->periods) {
			v = (int64_t)h->period;
		}
		if (v > r->left[col])
			v = r->left[col];
		r->left[col] -= v;
		s.values[col] = v;
	}
	if (r->events[ev].count_col != PV_NONE)
		s.values[r->events[ev].count_col] = 1;
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
	/* cut at PERF_MAX_FRAMES, or at PV_MAX_DEPTH with the inlined lines */
	if (pv_add_stack_capped(p, &s, r->locs, (uint32_t)r->nlocs, r->deep) < 0 ||
	    pv_add_sample_merged(p, &s) < 0)
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

/* A sample of one frame and no header, spaces before it (perf script
 * -F ip,sym of a capture without call chains): in a capture whose
 * samples are such, or as its first line when that is no header. */
static bool one_frame_line(const struct preader *r, struct span t)
{
	struct header h;

	if (!t.n || t.s[0] != ' ' || (r->open && r->chain) || !perf_starts_with_address(trim(t)))
		return false;
	return r->shaped ? r->shape == F_IP : !perf_parse_header(t, 0, &h);
}

/* The source line perf prints after a frame (-F +srcline): indented, one
 * word that is no address ("file.c:12", "??:0", "[kernel.kallsyms][ffff81..]"),
 * " (inlined)" after it when the frame is an inlined call. */
static bool source_line_text(const struct preader *r, struct span t)
{
	struct span w = trim(t), first = word(w);

	if (!r->open || !(r->nlocs || r->ninl) || !t.n || t.s[0] != ' ' || !w.n || perf_starts_with_address(w))
		return false;
	/* in a call chain, before the blank line that ends it, every such
	 * line is one ("[JIT] tid 26710[7f96ed4c566c]") */
	if (r->chain)
		return true;
	if (first.n < w.n && span_is(trim((struct span){ w.s + first.n, w.n - first.n }), "(inlined)"))
		w = first;
	return word(w).n == w.n;
}

/* perf script -F +srccode: "|LINE  source text" after a frame. */
static bool source_code_text(struct span t)
{
	return t.n > 1 && t.s[0] == '|' && is_digit(t.s[1]);
}

static void open_sample(struct preader *r, size_t off, bool chain)
{
	r->open = true;
	r->chain = chain;
	r->start_line = r->lineno;
	r->start_off = off;
}

static int read_line(struct preader *r, struct span t, size_t off)
{
	struct frame f;
	struct header h;
	bool used;

	if (trim(t).n == 0)
		return end_sample(r);
	if (frame_line(r, t)) {
		if (!r->open) {
			/* frames with no header (perf script -F ip,sym) */
			reset_sample(r);
			open_sample(r, off, true);
		}
		if (!perf_parse_frame(t, &f)) {
			unknown_line(r);
			return 0;
		}
		return add_frame(r, &f);
	}
	if (source_line_text(r, t)) {
		if (source_line(r, t, &used) < 0)
			return -1;
		if (used)
			return 0;
	}
	if ((t.s[0] == '#' && !r->open) || source_code_text(t))
		return 0; /* perf script --header, -F +srccode */
	if (end_sample(r) < 0)
		return -1;
	if (perf_side_band(t))
		return 0; /* --show-task-events, --show-mmap-events and the like */
	if (one_frame_line(r, t)) {
		open_sample(r, off, false);
		r->h.fields = F_IP;
		return perf_parse_frame(t, &f) ? add_frame(r, &f) : 0;
	}
	if (!perf_parse_header(t, r->shape, &h)) {
		if (perf_comm_header(t) && (!r->shaped || r->shape == 0)) {
			/* a command alone: a header when frames follow */
			memset(&r->h, 0, sizeof r->h);
			r->h.comm = trim(t);
			r->comm_only = true;
			open_sample(r, off, true);
			return 0;
		}
		unknown_line(r);
		return 0;
	}
	r->h = h;
	/* recorded without -g, the one frame ends the header; a source line
	 * may follow it */
	open_sample(r, off, !(h.fields & F_IP));
	if ((h.fields & F_IP) && perf_parse_frame(h.tail, &f) && add_frame(r, &f) < 0)
		return -1;
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
	uint32_t cpu = r->nevents && r->events[0].clock && r->periods ? r->events[0].col : PV_NONE;
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
	if (r->huge_periods)
		pv_warn("'%s': %" PRIu64 " samples with a period of 2^63 or more (the first at line %" PRIu64 "), each counted as 2^63-1",
			r->name, r->huge_periods, r->first_huge);
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
			/* the last line is cut: so is its sample (a sample of
			 * one line before it is whole) */
			cut = true;
			if (r.open && !r.chain && end_sample(&r) < 0)
				goto fail;
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
	if (r.p->nsamples && !r.any_frame) {
		pv_error("'%s': no sample has an address or a symbol: give perf script the fields ip and sym (-F ...,ip,sym,dso)",
			 name);
		goto fail;
	}
	if (r.p->nsamples == 0) {
		if (r.no_frames && !r.any_frame)
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
	free(r.inl);
	free(r.map_slots);
	return r.p;
fail:
	free(r.locs);
	free(r.inl);
	free(r.map_slots);
	pv_profile_free(r.p);
	return NULL;
}
