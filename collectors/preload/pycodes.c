/* pycodes.c - Python code objects packed into RAW_PYCODES records (see
 * pycodes.h)
 *
 * A string written (a code's name or file name) is known afterwards by a
 * hash of its text in a table of the library: whole, so that a later code
 * of the same file or name (`<module>`, `__init__`) names it by number,
 * and each of its beginnings that ends where pycodes_cut says (a folder,
 * a class; the deepest PYCODES_CUTS), so that a later one names its
 * longest beginning known and writes only the rest.  The table holds a
 * string once its record is published, and a batch's own strings before,
 * for the entries after them in the record.  The lines of instructions
 * are kept in a table of words (code index, instruction, line), each
 * written whole in one of eight places of its code, a later one in its
 * place replacing it.  Both tables are looked up where a short run's
 * keys share a few pages (pyslots.h).
 */
#include "pycodes.h"
#include "pyslots.h"
#include "raw.h"
#include "raw-py.h"
#include "writer.h"

#include <stdatomic.h>
#include <string.h>

#define PYCODES_STRS 8192        /* strings and beginnings known by hash */
#define PYCODES_STRS_NEAR 2048   /* of them, looked at first (pyslots.h) */
#define PYCODES_CUTS 12          /* beginnings of one string looked up */
#define PYCODES_PROBES 32
#define PYCODES_ID_BITS 20       /* a string's number, in a word of the table */
#define PYCODES_ID_MASK ((1ull << PYCODES_ID_BITS) - 1)
#define PYCODES_LINES (1u << 13) /* lines kept */
#define PYCODES_ENTRY_MAX (2 * PYCODES_TEXT_MAX + 64)
_Static_assert(PYCODES_ENTRY_MAX <= PYCODES_BUF, "an entry fits an empty record");

/* What a hash is of: a whole string or its beginning, a name or a file
 * name (their beginnings end at different characters). */
enum { PYCODES_WHOLE = 1, PYCODES_BEGIN = 2 };

static _Atomic uint64_t pycodes_strs[PYCODES_STRS];
static _Atomic uint64_t pycodes_lines[PYCODES_LINES];
static _Atomic int pycodes_dirty;

/* The tables are written to: to be emptied at the next reset. */
static void pycodes_touch(void)
{
	if (!atomic_load_explicit(&pycodes_dirty, memory_order_relaxed))
		atomic_store_explicit(&pycodes_dirty, 1, memory_order_relaxed);
}

void pycodes_reset(void)
{
	if (!pycodes_dirty)
		return; /* (untouched: no page of them made) */
	memset(pycodes_strs, 0, sizeof(pycodes_strs));
	memset(pycodes_lines, 0, sizeof(pycodes_lines));
	pycodes_dirty = 0;
}

/* The table's word of a hash state h after n bytes of text of kind
 * (PYCODES_WHOLE or PYCODES_BEGIN, + 4 for a file name), without its
 * number. */
static uint64_t pycodes_word(uint64_t h, uint32_t n, unsigned kind)
{
	h = (h ^ kind ^ (uint64_t)n << 8) * 0x9e3779b97f4a7c15ull;
	h ^= h >> 31;
	return (h | 1ull << 63) & ~PYCODES_ID_MASK;
}

/* The number of the string whose word is h: in the batch, else in the
 * table; 0 when not known (no string is 0: code indices start at 1). */
static uint32_t pycodes_find(const struct pycodes_batch *b, uint64_t h)
{
	for (uint32_t i = 0; i < b->nlocal; i++)
		if ((b->local[i] & ~PYCODES_ID_MASK) == h)
			return (uint32_t)(b->local[i] & PYCODES_ID_MASK);
	for (uint32_t i = 0; i < PYSLOTS_NEAR_PROBES + PYCODES_PROBES; i++) {
		uint32_t s = pyslots_at(h >> 40, i, PYCODES_STRS_NEAR, PYCODES_STRS);
		uint64_t old = atomic_load_explicit(&pycodes_strs[s], memory_order_acquire);

		if (old == 0)
			return 0;
		if ((old & ~PYCODES_ID_MASK) == h)
			return (uint32_t)(old & PYCODES_ID_MASK);
	}
	return 0;
}

/* Notes the string id with the word h in the table (first one kept). */
static void pycodes_know(uint64_t w)
{
	uint64_t h = w & ~PYCODES_ID_MASK;

	pycodes_touch();
	for (uint32_t i = 0; i < PYSLOTS_NEAR_PROBES + PYCODES_PROBES; i++) {
		uint32_t s = pyslots_at(h >> 40, i, PYCODES_STRS_NEAR, PYCODES_STRS);
		uint64_t old = atomic_load_explicit(&pycodes_strs[s], memory_order_acquire);

		if (old == 0 && atomic_compare_exchange_strong(&pycodes_strs[s], &old, w))
			return;
		if ((old & ~PYCODES_ID_MASK) == h)
			return;
	}
}

/* Notes the string id with the word h as one of b's (a number that does
 * not fit the table's word is not shared: the strings of code index 2^19
 * on are written whole). */
static void pycodes_local(struct pycodes_batch *b, uint64_t h, uint32_t id)
{
	if (b->nlocal < PYCODES_LOCAL && id <= PYCODES_ID_MASK)
		b->local[b->nlocal++] = h | id;
}

/* Where a string may be cut: a name after a '.' (a class, a function
 * whose locals a name is of), a file name after a '/' (a folder), a '.'
 * or a ' ' ("<frozen importlib.") */
static int pycodes_cut(char c, int file)
{
	return c == '.' || (file && (c == '/' || c == ' '));
}

/* The string s[0..n), number id, a name (file 0) or a file name, at p:
 * by number when written before, else its longest beginning that was by
 * number and the rest, else its text; its bytes.  It and its beginnings
 * are known to the entries after it. */
static uint32_t pycodes_string(struct pycodes_batch *b, unsigned char *p, const char *s, uint32_t n,
			       uint32_t id, int file)
{
	unsigned kind = file ? 4u : 0u;
	uint64_t h = 0xcbf29ce484222325ull, whole, cuth[PYCODES_CUTS];
	uint32_t cut[PYCODES_CUTS], ncut = 0, at = 0, same = 0, plen = 0, k;

	for (uint32_t i = 0; i < n; i++) {
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
		if (i + 1 >= 4 && i + 1 < n && pycodes_cut(s[i], file)) {
			if (ncut == PYCODES_CUTS) { /* (the deepest kept) */
				memmove(cut, cut + 1, sizeof(cut) - sizeof(*cut));
				memmove(cuth, cuth + 1, sizeof(cuth) - sizeof(*cuth));
				ncut--;
			}
			cut[ncut] = i + 1;
			cuth[ncut++] = pycodes_word(h, i + 1, kind | PYCODES_BEGIN);
		}
	}
	whole = pycodes_word(h, n, kind | PYCODES_WHOLE);
	same = pycodes_find(b, whole);
	if (same != 0)
		return raw_varint_put(p, (uint64_t)same << 2 | RAW_PYCODES_SAME);
	pycodes_local(b, whole, id);
	for (k = ncut; k-- > 0;) {
		same = pycodes_find(b, cuth[k]);
		if (same != 0) {
			plen = cut[k];
			break;
		}
	}
	/* the beginnings deeper than the one named (all when none was:
	 * k wrapped to UINT32_MAX) */
	for (uint32_t j = k + 1; j < ncut; j++)
		pycodes_local(b, cuth[j], id);
	if (same != 0) {
		at = raw_varint_put(p, (uint64_t)same << 2 | RAW_PYCODES_PREFIX);
		at += raw_varint_put(p + at, plen);
		at += raw_varint_put(p + at, n - plen);
		memcpy(p + at, s + plen, n - plen);
		return at + n - plen;
	}
	at = raw_varint_put(p, (uint64_t)n << 2 | RAW_PYCODES_TEXT);
	memcpy(p + at, s, n);
	return at + n;
}

void pycodes_add(struct pycodes_batch *b, uint32_t idx, int32_t first, const char *name,
		 uint32_t nname, const char *file, uint32_t nfile)
{
	unsigned char e[PYCODES_ENTRY_MAX];
	uint32_t n = 0, had;

	if (nname > PYCODES_TEXT_MAX)
		nname = PYCODES_TEXT_MAX;
	if (nfile > PYCODES_TEXT_MAX)
		nfile = PYCODES_TEXT_MAX;
	if (b->nlocal + 2 * (PYCODES_CUTS + 1) > PYCODES_LOCAL)
		pycodes_flush(b); /* (its strings all known to the next) */
	had = b->nlocal;
	n += raw_varint_put(e + n, (uint32_t)(idx - b->last) << 1 ^ (uint32_t)((int32_t)(idx - b->last) >> 31));
	n += raw_varint_put(e + n, (uint32_t)first << 1 ^ (uint32_t)(first >> 31));
	n += pycodes_string(b, e + n, name, nname, 2 * idx, 0);
	n += pycodes_string(b, e + n, file, nfile, 2 * idx + 1, 1);
	if (b->len + n > PYCODES_BUF) {
		/* made again for the next record (once: it fits an
		 * empty one), where what it named may be known otherwise */
		b->nlocal = had;
		pycodes_flush(b);
		pycodes_add(b, idx, first, name, nname, file, nfile);
		return;
	}
	memcpy(b->buf + b->len, e, n);
	b->len += n;
	b->last = idx;
}

void pycodes_flush(struct pycodes_batch *b)
{
	uint32_t size = (uint32_t)sizeof(struct raw_pycodes) + raw_pad(b->len);
	struct raw_pycodes *rec;

	if (b->len == 0)
		return;
	writer_need_file();
	rec = writer_reserve(size, 0);
	if (rec != NULL) {
		memset(rec, 0, size);
		memcpy(rec + 1, b->buf, b->len);
		writer_publish(rec, RAW_PYCODES, size);
		for (uint32_t i = 0; i < b->nlocal; i++)
			pycodes_know(b->local[i]);
	}
	b->len = 0;
	b->nlocal = 0;
	b->last = 0;
}

/* The slot of the line of instruction instr of code idx: one of 8 of the
 * code's own, so that a short run's lines, of codes numbered from 1, share
 * a few pages of the table (each page it touches first is a page fault in
 * the handler). */
static uint32_t pycodes_line_slot(uint32_t idx, uint32_t instr)
{
	uint64_t k = (uint64_t)instr * 0x9e3779b97f4a7c15ull;

	return (idx << 3 | (uint32_t)(k >> 61)) & (PYCODES_LINES - 1);
}

int pycodes_line_get(uint32_t idx, uint32_t instr, uint32_t *line)
{
	uint64_t e = atomic_load_explicit(&pycodes_lines[pycodes_line_slot(idx, instr)],
					  memory_order_relaxed);

	if (e == 0 || e >> 23 != ((uint64_t)idx << 24 | instr))
		return 0;
	*line = (uint32_t)(e & ((1u << 23) - 1));
	return 1;
}

void pycodes_line_keep(uint32_t idx, uint32_t instr, uint32_t line)
{
	if (idx == 0 || idx >= 1u << 17 || instr >= 1u << 24 || line >= 1u << 23)
		return;
	pycodes_touch();
	atomic_store_explicit(&pycodes_lines[pycodes_line_slot(idx, instr)],
			      (uint64_t)idx << 47 | (uint64_t)instr << 23 | line, memory_order_relaxed);
}
