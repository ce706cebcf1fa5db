/* perf-parse.c - the lines of `perf script` output: a sample header's
 * fields, a frame, and whether a buffer is perf script text at all */
#include "perf-int.h"
#include "perf-read.h"

#include <string.h>

/* ---- a header ---- */

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
bool perf_starts_with_address(struct span t)
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

	if (!perf_starts_with_address(t))
		return false;
	r = trim((struct span){ w.s + w.n, t.n - w.n });
	return r.n == 0 || r.s[0] != '(';
}

/* Does t start with an address as perf prints a sample's ip: 6 to 16 hex
 * digits, no "0x"? */
static bool sample_ip(struct span t)
{
	struct span w = word(t);

	return w.n >= 6 && !(w.s[0] == '0' && (w.s[1] == 'x' || w.s[1] == 'X')) && perf_starts_with_address(t);
}

/* The fields of a header whose first field is at t (the command name is
 * what came before); lead: the column t starts at when no command comes
 * before it, else SIZE_MAX. */
static void match_fields(struct span t, struct header *h, size_t lead)
{
	struct span w;
	uint64_t v;

	t = trim(t);
	w = word(t);
	/* perf prints a pid or tid 7 wide, a period 10: a number that ends
	 * past column 7 at the start of the line is a period */
	bool period = lead != SIZE_MAX && lead + w.n > 7 && parse_dec(w.s, w.n, &v);
	if (w.n && !period && parse_pid(w, h))
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
	if (t.n && perf_starts_with_address(t))
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
bool perf_parse_header(struct span t, unsigned shape, struct header *out)
{
	struct span line = trim(t), rest = line;
	bool found = false;

	for (int k = 0; k <= PERF_MAX_COMM_WORDS && rest.n; k++) {
		struct header h = { 0 };
		match_fields(rest, &h, k == 0 ? (size_t)(line.s - t.s) : SIZE_MAX);
		/* a tail that is no address is the event's own output
		 * (tracepoint fields), and needs an event before it */
		bool ok = (h.fields & (F_PID | F_TID | F_TIME | F_EVENT | F_PERIOD)) &&
			  (h.tail.n == 0 || (h.fields & (F_IP | F_EVENT)));
		/* a command and a frame (-F comm,ip,sym): the command no
		 * address (else the line is a frame, -F ip,sym), the frame's
		 * address as perf prints a sample's, 6 to 16 digits, no 0x */
		ok = ok || (k > 0 && h.fields == F_IP && !perf_starts_with_address(line) && sample_ip(h.tail));
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


/* The "(DSO)" of a frame's text t: the balanced parentheses after a space
 * that end t, or that are followed by a space and further columns perf
 * prints after a frame (brstack, srcline); its offset or t.n when none. */
static size_t dso_start(struct span t, size_t *close)
{
	size_t end = t.n;

	for (int tries = 0; tries < 8 && end > 0; tries++) {
		size_t i = end;
		while (i > 0 && t.s[i - 1] != ')')
			i--;
		if (i == 0)
			break;
		int depth = 0;
		for (size_t j = i; j-- > 0;) {
			depth += t.s[j] == ')' ? 1 : t.s[j] == '(' ? -1 : 0;
			if (depth == 0) {
				if ((j == 0 || is_space(t.s[j - 1])) && (i == t.n || is_space(t.s[i]))) {
					*close = i;
					return j;
				}
				break;
			}
		}
		end = i - 1;
	}
	return t.n;
}

bool perf_parse_frame(struct span t, struct frame *f)
{
	struct span w;
	size_t open, close;

	t = trim(t);
	memset(f, 0, sizeof *f);
	if (t.n == 0)
		return false;
	w = word(t);
	if (parse_hex(w.s, w.n, &f->addr)) {
		f->has_addr = true;
		t = trim((struct span){ w.s + w.n, t.n - w.n });
	}
	if ((open = dso_start(t, &close)) < t.n) {
		f->dso = (struct span){ t.s + open + 1, close - open - 2 };
		t = trim((struct span){ t.s, open });
		/* a frame perf read from the inline info of the next one */
		if (span_is(f->dso, "inlined")) {
			f->inlined = true;
			f->dso = (struct span){ NULL, 0 };
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

bool perf_comm_header(struct span t)
{
	struct span c = trim(t);

	/* perf prints a command of at most 15 bytes right-aligned in 16 */
	return c.n && c.n <= 16 && t.s[0] != '\t' && c.s[0] != '#' && !memchr(c.s, '(', c.n);
}

bool perf_side_band(struct span t)
{
	static const char mark[] = "PERF_RECORD_";
	const char *at = t.n >= sizeof mark ? memmem(t.s, t.n, mark, sizeof mark - 1) : NULL;

	/* "COMM PID TIME: PERF_RECORD_MMAP2 ...", "...: PERF_RECORD_EXIT(1:1):(0:0)",
	 * "PERF_RECORD_FINISHED_ROUND" */
	return at && (at == t.s || is_space(at[-1]));
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

/* A sample that is one frame with no header: " ADDR [SYM] [(DSO)]", spaces
 * before it (perf script -F ip,sym of a capture without call chains). */
static bool detect_one_frame(struct span t)
{
	struct frame f;

	return t.n && t.s[0] == ' ' && perf_starts_with_address(trim(t)) && perf_parse_frame(t, &f) &&
	       !f.inlined;
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

/* The next line after the source line of a frame (-F +srcline:
 * "  file.c:12", "  [kernel.kallsyms][ffff81..]") when there is one. */
static bool next_sample_line(const char *s, size_t span, size_t len, size_t *off, struct span *t)
{
	struct span w;

	if (!next_line(s, span, len, off, t))
		return false;
	w = trim(*t);
	if (t->n && t->s[0] == ' ' && w.n && word(w).n == w.n && !perf_starts_with_address(w))
		return next_line(s, span, len, off, t);
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
	} while (!trim(t).n || t.s[0] == '#' || perf_side_band(t));
	if (detect_one_frame(t)) {
		/* the next line must be one too (else it may be a header of a
		 * number alone, -F period,ip,sym, before its call chain) */
		size_t at = off;
		if (next_sample_line(s, span, len, &at, &next) && detect_one_frame(next))
			return true;
	}
	if (detect_frame(t)) {
		/* frames without a header (perf script -F ip,sym): another
		 * frame or the blank line that ends the sample must follow */
		return next_sample_line(s, span, len, &off, &next) && (detect_frame(next) || !trim(next).n);
	}
	if (!perf_parse_header(t, 0, &h)) {
		/* a command alone (-F comm,ip,sym), its call chain after it */
		return perf_comm_header(t) && next_line(s, span, len, &off, &next) && detect_frame(next);
	}
	if ((h.fields & F_IP) && (h.fields & (F_TIME | F_EVENT)))
		return true;
	if (h.fields & F_IP) {
		/* a command, a tid and a frame (-F comm,tid,ip,sym): the next
		 * line must be one too, with the same fields */
		struct header h2;
		return next_sample_line(s, span, len, &off, &next) && perf_parse_header(next, h.fields, &h2) &&
		       h2.fields == h.fields;
	}
	/* a header alone: its call chain must follow */
	return !h.tail.n && next_line(s, span, len, &off, &next) && detect_frame(next);
}

bool perf_data_detect(const unsigned char *buf, size_t len)
{
	return len >= 8 && memcmp(buf, "PERFILE2", 8) == 0;
}
