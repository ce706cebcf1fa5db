/* perf-int.h - what the perf script reader's files share: the text of a
 * line and the parts of a header and a frame line (see perf-read.c) */
#ifndef PROFVIEW_PERF_INT_H
#define PROFVIEW_PERF_INT_H

#include "util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/* ---- text ---- */

static inline bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static inline struct span trim(struct span t)
{
	while (t.n && is_space(t.s[0]))
		t.s++, t.n--;
	while (t.n && (is_space(t.s[t.n - 1]) || t.s[t.n - 1] == '\r'))
		t.n--;
	return t;
}

static inline bool span_is(struct span t, const char *lit)
{
	return t.n == strlen(lit) && memcmp(t.s, lit, t.n) == 0;
}

static inline bool span_starts(struct span t, const char *lit)
{
	return t.n >= strlen(lit) && memcmp(t.s, lit, strlen(lit)) == 0;
}

/* All of [s, s+n) decimal digits (at least one) into *v, saturating. */
static inline bool parse_dec(const char *s, size_t n, uint64_t *v)
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
static inline bool parse_hex(const char *s, size_t n, uint64_t *v)
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

/* The first word of t. */
static inline struct span word(struct span t)
{
	size_t i = 0;

	while (i < t.n && !is_space(t.s[i]))
		i++;
	return (struct span){ t.s, i };
}

/* ---- lines ---- */

/* A frame line's parts; sym and dso empty when missing. */
struct frame {
	uint64_t addr;
	bool has_addr;
	struct span sym, dso;
	bool inlined;          /* perf's "(inlined)" in place of the DSO */
};

/* Parse line t as a header; shape: the fields the capture's headers have
 * (0: not known yet).  false when it is none. */
bool perf_parse_header(struct span t, unsigned shape, struct header *out);
/* "ADDR SYM+0xOFF (DSO)", any part but one missing, into *f; false when
 * t holds none of them.  "(inlined)" in place of the DSO sets f->inlined;
 * columns after the DSO are left out. */
bool perf_parse_frame(struct span t, struct frame *f);
/* Can t be a header of a command alone, as perf prints one with
 * -F comm,ip,sym and a call chain? */
bool perf_comm_header(struct span t);
/* Is t a line of perf's side band (--show-task-events, --show-mmap-events
 * ...), no sample: "... PERF_RECORD_COMM: ...". */
bool perf_side_band(struct span t);
/* Is t an address and what follows it: "7ff0 sym", "ffff81 ", "1a34"? */
bool perf_starts_with_address(struct span t);

#endif
