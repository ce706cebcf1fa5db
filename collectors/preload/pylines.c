/* pylines.c - a CPython line table as compact runs (see pylines.h) */
#include "pylines.h"

/* A line table read a piece at a time.  Signal-safe. */
struct pylines_src {
	pylines_read_fn *read;
	uintptr_t at;
	uint64_t left;
	uint32_t i, n, npre;
	const unsigned char *p, *pre; /* the piece read; the caller's first */
	unsigned char buf[256];
};

/* The next byte, -1 at the end or when not readable. */
static int pylines_byte(struct pylines_src *s)
{
	if (s->i == s->n) {
		uint32_t n = s->left < sizeof(s->buf) ? (uint32_t)s->left : (uint32_t)sizeof(s->buf);

		s->p = s->buf;
		if (s->npre > 0) { /* the bytes the caller has */
			n = s->npre < s->left ? s->npre : (uint32_t)s->left;
			s->p = s->pre;
			s->npre = 0;
		}
		if (n == 0 || (s->p == s->buf && s->read(s->buf, s->at, n) != 0))
			return -1;
		s->at += n;
		s->left -= n;
		s->i = 0;
		s->n = n;
	}
	return s->p[s->i++];
}

/* A 3.11+ location table's varint (6 bits a byte, bit 6: more). */
static uint64_t pylines_cvarint(struct pylines_src *s)
{
	uint64_t v = 0;
	int b;

	for (unsigned shift = 0; shift < 64 && (b = pylines_byte(s)) >= 0; shift += 6) {
		v |= (uint64_t)(b & 63) << shift;
		if (!(b & 64))
			break;
	}
	return v;
}

static void pylines_varint(struct pylines *t, uint64_t v)
{
	do {
		if (t->len == t->cap) {
			t->over = 1;
			return;
		}
		t->out[t->len++] = (unsigned char)((v & 127) | (v > 127 ? 128 : 0));
		v >>= 7;
	} while (v != 0);
}

/* Writes the run being grown (units 0: every later instruction). */
static void pylines_flush(struct pylines *t)
{
	int64_t d = t->none ? 0 : t->line - t->written;

	pylines_varint(t, t->units);
	pylines_varint(t, ((uint64_t)d << 1 ^ (uint64_t)(d >> 63)) << 1 | (uint64_t)t->none);
	if (!t->none)
		t->written = t->line;
	t->units = 0;
}

/* units more instructions on line (none: on no line). */
static void pylines_add(struct pylines *t, uint64_t units, int64_t line, int none)
{
	if (units == 0 || t->done)
		return;
	if (t->find) {
		if (t->target < t->at + units) {
			t->done = 1;
			t->found = none || line <= 0 ? 0 : line;
		}
		t->at += units;
		return;
	}
	if (t->units > 0 && none == t->none && (none || line == t->line)) {
		t->units += units;
		return;
	}
	if (t->units > 0)
		pylines_flush(t);
	t->units = units;
	t->line = line;
	t->none = none;
}

/* The interpreter's line table (its version's format: see raw-python.c)
 * that s reads, as runs of instructions on one line into t (or, with
 * t->find, the line of t->target).  Signal-safe. */
static void pylines_walk(struct pylines *t, struct pylines_src *s, uint32_t version, int64_t first)
{
	int64_t line = first;
	uint64_t at = 0, start = 0;
	int b, d;

	t->written = first;
	if (version >= 0x030b) {
		while (!t->done && (b = pylines_byte(s)) >= 0 && (b & 128)) {
			unsigned code = ((unsigned)b >> 3) & 15;

			if (code == 14 || code == 13) {
				uint64_t u = pylines_cvarint(s);

				line += u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
				for (int k = 0; code == 14 && k < 3; k++)
					pylines_cvarint(s);
			} else if (code >= 10 && code < 15) {
				line += code - 10;
				pylines_byte(s);
				pylines_byte(s);
			} else if (code < 10) {
				pylines_byte(s);
			}
			pylines_add(t, (b & 7) + 1u, line, code == 15);
		}
	} else if (version == 0x030a) {
		/* pairs of a byte count and a line delta, -128: no line */
		while (!t->done && (b = pylines_byte(s)) >= 0 && (d = pylines_byte(s)) >= 0) {
			if ((int8_t)d != -128)
				line += (int8_t)d;
			pylines_add(t, (uint64_t)b / 2, line, (int8_t)d == -128);
		}
	} else {
		/* 3.9's co_lnotab: the line changes where the bytes reach */
		while (!t->done && (b = pylines_byte(s)) >= 0 && (d = pylines_byte(s)) >= 0) {
			at += (uint64_t)b;
			if (at > start)
				pylines_add(t, (at - start) / 2, line, 0);
			start = at;
			line += (int8_t)d;
		}
		if (t->find) { /* the last line runs to the end */
			if (!t->done)
				t->found = line <= 0 ? 0 : line;
			t->done = 1;
			return;
		}
		if (t->units > 0)
			pylines_flush(t);
		t->line = line; /* the last line runs to the end: 0 units */
		t->none = 0;
		pylines_flush(t);
		return;
	}
	if (t->units > 0 && !t->find)
		pylines_flush(t);
}

void pylines_convert(struct pylines *t, pylines_read_fn *read, uint32_t version, uintptr_t table,
		     uint64_t tlen, int64_t first)
{
	struct pylines_src s = { .read = read, .at = table, .left = tlen };

	pylines_walk(t, &s, version, first);
}

int64_t pylines_find(pylines_read_fn *read, uint32_t version, uintptr_t table, uint64_t tlen,
		     int64_t first, uint64_t instr)
{
	return pylines_find_from(read, version, table, tlen, first, instr, NULL, 0);
}

int64_t pylines_find_from(pylines_read_fn *read, uint32_t version, uintptr_t table, uint64_t tlen,
			  int64_t first, uint64_t instr, const unsigned char *have, uint32_t nhave)
{
	struct pylines t = { .find = 1, .target = instr };
	struct pylines_src s = { .read = read, .at = table, .left = tlen, .pre = have, .npre = nhave };

	pylines_walk(&t, &s, version, first);
	return t.done ? t.found : 0;
}
