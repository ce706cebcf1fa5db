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
#include "error.h"
#include "merge.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PERF_DETECT_SPAN 65536
/* Frames kept of a call chain (perf's own limit is 127 by default): a
 * deeper one keeps its innermost and counts as truncated. */
#define PERF_MAX_FRAMES 4096
/* Words a command name (at most 15 bytes in Linux) may take before the
 * pid: where a header's fields are looked for. */
#define PERF_MAX_COMM_WORDS 12
/* The kernel's half of a 64-bit address space (x86-64, arm64). */
#define PERF_KERNEL_START 0xffff800000000000ULL

/* Header fields, a bit each: a capture's shape. */
enum {
	F_PID = 1 << 0, F_TID = 1 << 1, F_CPU = 1 << 2, F_TIME = 1 << 3,
	F_PERIOD = 1 << 4, F_EVENT = 1 << 5, F_IP = 1 << 6,
};

struct span {
	const char *s;
	size_t n;
};

struct header {
	unsigned fields;
	struct span comm, event, tail;
	uint64_t pid, tid, period;
	int64_t time_ns;
};

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

/* ---- text ---- */

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static struct span trim(struct span t)
{
	while (t.n && is_space(t.s[0]))
		t.s++, t.n--;
	while (t.n && (is_space(t.s[t.n - 1]) || t.s[t.n - 1] == '\r'))
		t.n--;
	return t;
}

static bool span_is(struct span t, const char *lit)
{
	return t.n == strlen(lit) && memcmp(t.s, lit, t.n) == 0;
}

static bool span_starts(struct span t, const char *lit)
{
	return t.n >= strlen(lit) && memcmp(t.s, lit, strlen(lit)) == 0;
}

/* All of [s, s+n) decimal digits (at least one) into *v, saturating. */
static bool parse_dec(const char *s, size_t n, uint64_t *v)
{
	*v = 0;
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return false;
		unsigned d = (unsigned)(s[i] - '0');
		*v = *v > (UINT64_MAX - d) / 10 ? UINT64_MAX : *v * 10 + d;
	}
	return true;
}

/* All of [s, s+n) hex digits (1 to 16, an optional 0x) into *v. */
static bool parse_hex(const char *s, size_t n, uint64_t *v)
{
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2, n -= 2;
	*v = 0;
	if (n == 0 || n > 16)
		return false;
	for (size_t i = 0; i < n; i++) {
		int d = pv_hexval(s[i]);
		if (d < 0)
			return false;
		*v = *v << 4 | (uint64_t)d;
	}
	return true;
}

/* The first word of t: [t.s, *end). */
static struct span word(struct span t)
{
	size_t i = 0;

	while (i < t.n && !is_space(t.s[i]))
		i++;
	return (struct span){ t.s, i };
}

/* "SECONDS.FRACTION:" into nanoseconds (perf prints 6 digits, 9 with
 * --ns). */
static bool parse_time(struct span w, int64_t *ns)
{
	const char *dot;
	uint64_t sec, frac = 0;
	size_t digits = 0;

	if (w.n < 4 || w.s[w.n - 1] != ':' || !(dot = memchr(w.s, '.', w.n - 1)))
		return false;
	if (!parse_dec(w.s, (size_t)(dot - w.s), &sec) || sec > 9000000000ULL)
		return false;
	for (const char *c = dot + 1; c < w.s + w.n - 1; c++) {
		if (!is_digit(*c))
			return false;
		if (digits < 9) {
			frac = frac * 10 + (uint64_t)(*c - '0');
			digits++;
		}
	}
	if (digits == 0)
		return false;
	while (digits++ < 9)
		frac *= 10;
	*ns = (int64_t)(sec * 1000000000ULL + frac);
	return true;
}

/* "PID", "PID/TID" ("-1" for none). */
static bool parse_pid(struct span w, struct header *h)
{
	const char *slash = memchr(w.s, '/', w.n);
	struct span a = { w.s, slash ? (size_t)(slash - w.s) : w.n };
	uint64_t v;

	if (span_is(a, "-1"))
		v = UINT64_MAX;
	else if (!parse_dec(a.s, a.n, &v))
		return false;
	if (!slash) {
		/* one number: perf's default fields show the tid */
		h->tid = v;
		h->fields |= F_TID;
		return true;
	}
	struct span b = { slash + 1, w.n - a.n - 1 };
	uint64_t t;
	if (span_is(b, "-1"))
		t = UINT64_MAX;
	else if (!parse_dec(b.s, b.n, &t))
		return false;
	h->pid = v;
	h->tid = t;
	h->fields |= F_PID | F_TID;
	return true;
}

/* An event name and its colon: "cpu-clock:", "cycles:u:", "sched:sched_switch:". */
static bool is_event(struct span w)
{
	bool letter = false;

	if (w.n < 2 || w.s[w.n - 1] != ':' || is_digit(w.s[0]))
		return false;
	for (size_t i = 0; i + 1 < w.n; i++)
		letter = letter || (w.s[i] >= 'a' && w.s[i] <= 'z') || (w.s[i] >= 'A' && w.s[i] <= 'Z');
	return letter;
}

/* Is t an address and what follows it: "7ff0 sym", "ffff81 ", "1a34"? */
static bool starts_with_address(struct span t)
{
	struct span w = word(t);
	uint64_t v;

	return w.n && parse_hex(w.s, w.n, &v);
}

/* Is t a frame: an address, then nothing or a symbol?  "(dso)" right
 * after the word means the word was the symbol (a function named "add"
 * or "cafe"), not an address. */
static bool frame_follows(struct span t)
{
	struct span w = word(t), r;

	if (!starts_with_address(t))
		return false;
	r = trim((struct span){ w.s + w.n, t.n - w.n });
	return r.n == 0 || r.s[0] != '(';
}

/* The fields of a header whose first field is at t (the command name is
 * what came before). */
static void match_fields(struct span t, struct header *h)
{
	struct span w;

	t = trim(t);
	w = word(t);
	if (w.n && parse_pid(w, h))
		t = trim((struct span){ w.s + w.n, t.n - w.n }), w = word(t);
	if (w.n > 2 && w.s[0] == '[' && w.s[w.n - 1] == ']') {
		uint64_t cpu;
		if (parse_dec(w.s + 1, w.n - 2, &cpu)) {
			h->fields |= F_CPU;
			t = trim((struct span){ w.s + w.n, t.n - w.n }), w = word(t);
		}
	}
	if (w.n && parse_time(w, &h->time_ns)) {
		h->fields |= F_TIME;
		t = trim((struct span){ w.s + w.n, t.n - w.n }), w = word(t);
	}
	if (w.n && parse_dec(w.s, w.n, &h->period)) {
		/* a period needs an event, a frame's address (-F period,ip
		 * without an event) or the end after it: else it is the
		 * address of a frame that looks decimal */
		struct span r = trim((struct span){ w.s + w.n, t.n - w.n });
		if (r.n == 0 || is_event(word(r)) || frame_follows(r)) {
			h->fields |= F_PERIOD;
			t = r, w = word(t);
		}
	}
	if (w.n && is_event(w)) {
		h->event = (struct span){ w.s, w.n - 1 };
		h->fields |= F_EVENT;
		t = trim((struct span){ w.s + w.n, t.n - w.n });
	}
	h->tail = t;
	if (t.n && starts_with_address(t))
		h->fields |= F_IP;
}

static unsigned nfields(unsigned f)
{
	unsigned n = 0;

	for (; f; f &= f - 1)
		n++;
	return n;
}

/* Parse line t as a header; shape: the fields the capture's headers have
 * (0: not known yet).  false when it is none. */
static bool parse_header(struct span t, unsigned shape, struct header *out)
{
	struct span line = trim(t), rest = line;
	bool found = false;

	for (int k = 0; k <= PERF_MAX_COMM_WORDS && rest.n; k++) {
		struct header h = { 0 };
		match_fields(rest, &h);
		/* a tail that is no address is the event's own output
		 * (tracepoint fields), and needs an event before it */
		bool ok = (h.fields & (F_PID | F_TID | F_TIME | F_EVENT)) &&
			  (h.tail.n == 0 || (h.fields & (F_IP | F_EVENT)));
		if (ok) {
			h.comm = trim((struct span){ line.s, (size_t)(rest.s - line.s) });
			if (shape && (h.fields & ~F_IP) == (shape & ~F_IP)) {
				*out = h;
				return true;
			}
			if (!found || nfields(h.fields) > nfields(out->fields)) {
				*out = h;
				found = true;
			}
		}
		struct span w = word(rest);
		rest = trim((struct span){ w.s + w.n, rest.n - w.n });
	}
	return found;
}

/* ---- frames ---- */

struct frame {
	uint64_t addr;
	bool has_addr;
	struct span sym, dso;
};

/* "ADDR SYM+0xOFF (DSO)", any part but one missing. */
static bool parse_frame(struct span t, struct frame *f)
{
	struct span w;

	t = trim(t);
	memset(f, 0, sizeof *f);
	if (t.n == 0)
		return false;
	w = word(t);
	if (parse_hex(w.s, w.n, &f->addr)) {
		f->has_addr = true;
		t = trim((struct span){ w.s + w.n, t.n - w.n });
	}
	/* the DSO: the balanced parentheses that end the line, after a space */
	if (t.n && t.s[t.n - 1] == ')') {
		int depth = 0;
		for (size_t i = t.n; i-- > 0;) {
			depth += t.s[i] == ')' ? 1 : t.s[i] == '(' ? -1 : 0;
			if (depth == 0) {
				if (i == 0 || is_space(t.s[i - 1])) {
					f->dso = (struct span){ t.s + i + 1, t.n - i - 2 };
					t = trim((struct span){ t.s, i });
				}
				break;
			}
		}
	}
	/* "+0x1f" after the symbol: perf's offset into it */
	for (size_t i = t.n; i-- > 0;) {
		if (pv_hexval(t.s[i]) >= 0)
			continue;
		if (t.s[i] == 'x' && i >= 2 && t.s[i - 1] == '0' && t.s[i - 2] == '+' && i + 1 < t.n)
			t.n = i - 2;
		break;
	}
	f->sym = t;
	return f->has_addr || f->sym.n || f->dso.n;
}

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
	return r->open && r->chain && t.n && t.s[0] == ' ' && starts_with_address(trim(t));
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
		if (!parse_frame(t, &f)) {
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
	if (!parse_header(t, r->shape, &h)) {
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
		if (parse_frame(h.tail, &f) && add_frame(r, &f) < 0)
			return -1;
		return end_sample(r);
	}
	r->chain = true;
	return 0;
}

/* ---- detection ---- */

static bool detect_frame(struct span t)
{
	struct span w;
	uint64_t v;

	if (!t.n || t.s[0] != '\t')
		return false;
	w = word(trim(t));
	return w.n && parse_hex(w.s, w.n, &v);
}

/* The next line of s[0, span) at *off, without its newline and CR; false
 * at the end, or at a line the span cuts. */
static bool next_line(const char *s, size_t span, size_t len, size_t *off, struct span *t)
{
	const char *nl;

	if (*off >= span)
		return false;
	nl = memchr(s + *off, '\n', span - *off);
	if (!nl && span < len)
		return false;
	*t = (struct span){ s + *off, (nl ? (size_t)(nl - s) : span) - *off };
	*off = nl ? (size_t)(nl - s) + 1 : span;
	if (t->n && t->s[t->n - 1] == '\r')
		t->n--;
	return true;
}

bool perf_detect(const unsigned char *buf, size_t len)
{
	const char *s = (const char *)buf;
	size_t span = len < PERF_DETECT_SPAN ? len : PERF_DETECT_SPAN, off = 0;
	struct span t, next;
	struct header h;

	if (memchr(s, '\0', span))
		return false;
	do {
		if (!next_line(s, span, len, &off, &t))
			return false;
	} while (!trim(t).n || t.s[0] == '#');
	if (detect_frame(t)) {
		/* frames without a header (perf script -F ip,sym): another
		 * frame or the blank line that ends the sample must follow */
		return next_line(s, span, len, &off, &next) && (detect_frame(next) || !trim(next).n);
	}
	if (!parse_header(t, 0, &h))
		return false;
	if ((h.fields & F_EVENT) && span_starts(h.event, "PERF_RECORD_"))
		return true;
	if ((h.fields & F_IP) && (h.fields & (F_TIME | F_EVENT)))
		return true;
	if (h.fields & F_IP) {
		/* a command, a tid and a frame (-F comm,tid,ip,sym): the next
		 * line must be one too, with the same fields */
		struct header h2;
		return next_line(s, span, len, &off, &next) && parse_header(next, h.fields, &h2) &&
		       h2.fields == h.fields;
	}
	/* a header alone: its call chain must follow */
	return !h.tail.n && next_line(s, span, len, &off, &next) && detect_frame(next);
}

bool perf_data_detect(const unsigned char *buf, size_t len)
{
	return len >= 8 && memcmp(buf, "PERFILE2", 8) == 0;
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
