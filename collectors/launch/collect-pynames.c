/* collect-pynames.c - the run's Python names, written once (see
 * collect-pynames.h)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect-deflate.h"
#include "collect-pynames.h"
#include "raw-iter.h"
#include "raw.h"
#include "raw-py.h"

/* The entries of one of the run's records, at most: a record a reader
 * takes whole stays small. */
#define PYNAMES_RECORD_MAX 32768
/* The highest code index of a process this table follows; a trace with a
 * higher one is copied as it is. */
#define PYNAMES_MAX_INDEX (1u << 22)
/* The beginning another name must share to be written as its beginning. */
#define PYNAMES_MIN_PREFIX 4

struct pynames_str {
	uint64_t off;    /* in text */
	uint32_t len;
	uint32_t id1;    /* the run's string number + 1 it was first written as */
};

struct pynames_buf {
	unsigned char *b;
	size_t n, cap;
};

struct collect_pynames {
	char *text;                  /* every distinct string, back to back */
	size_t ntext, captext;
	struct pynames_str *strs;
	uint32_t nstrs, capstrs;
	uint32_t *str_slots;         /* hash of strs: index + 1 */
	uint32_t nstr_slots;
	uint32_t (*codes)[3];        /* the run's code i + 1: its name's and file's strs,
				      * its first line */
	uint32_t ncodes, capcodes;
	uint32_t *code_slots;
	uint32_t ncode_slots;
	struct pynames_buf done;     /* the records closed */
	struct pynames_buf cur;      /* the entries of the record open */
	uint32_t cur_last;           /* its last entry's code */
	uint32_t last[2];            /* the last entry's name and file: strs + 1 */
	uint32_t first[2][256];      /* of each kind, the last written with that first byte */
	/* of the trace being copied: its code indices' run codes, and its
	 * records rewritten */
	uint32_t *pmap;
	uint32_t npmap;
	uint64_t part_len, part_shared; /* its bytes, and those taken of strings before */
	struct pynames_buf out;
	struct pynames_buf lens;     /* the bytes of out each record became */
	struct pynames_buf runrec;   /* its RAW_PYRUNCODES record */
	char *scratch;
	size_t capscratch;
	/* the run's parts (indices 1 to nparts), a tree of frames: part i
	 * is nodes[i - 1], its frame (run code, instruction word) and the
	 * part of its outer frames, hashed; their records closed and the
	 * entries of the one open (its last part) */
	uint32_t (*nodes)[3];
	uint32_t nparts, capnodes;
	uint32_t *node_slots;
	uint32_t nnode_slots;
	struct pynames_buf pdone, pcur;
	uint32_t pcur_last;
	/* of the trace being copied: its part indices' run parts, the
	 * evaluation loop of its parts, and its RAW_PYRUNPARTS record */
	uint32_t *ppmap;
	uint32_t nppmap;
	uint32_t *pref;              /* by part index: 1 when a stack names it */
	uint32_t npref;
	uint64_t eval[2];
	int has_eval, moved;
	int words;                   /* a record of it has Python frame words */
	struct pynames_buf partrec;
};

static int buf_need(struct pynames_buf *b, size_t more)
{
	size_t c = b->cap ? b->cap : 256;
	unsigned char *nb;

	if (b->n + more <= b->cap)
		return 0;
	while (c < b->n + more)
		c *= 2;
	nb = realloc(b->b, c);
	if (nb == NULL)
		return -1;
	b->b = nb;
	b->cap = c;
	return 0;
}

static int buf_put(struct pynames_buf *b, const void *p, size_t n)
{
	if (buf_need(b, n) < 0)
		return -1;
	memcpy(b->b + b->n, p, n);
	b->n += n;
	return 0;
}

static int buf_varint(struct pynames_buf *b, uint64_t v)
{
	unsigned char t[10];

	return buf_put(b, t, raw_varint_put(t, v));
}

static uint64_t pynames_hash(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;

	h ^= 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ull;
	return h ^ h >> 29;
}

/* Grows a hash table of indices + 1 to twice its size when half full,
 * rehashing by rehash(t, index).  0 or -1. */
static int slots_grow(uint32_t **slots, uint32_t *nslots, uint32_t used,
		      const struct collect_pynames *t, uint64_t (*rehash)(const struct collect_pynames *, uint32_t))
{
	uint32_t n = *nslots ? *nslots * 2 : 1024, *s;

	if (*nslots && used < *nslots / 2)
		return 0;
	s = calloc(n, sizeof(*s));
	if (s == NULL)
		return -1;
	for (uint32_t i = 0; i < *nslots; i++) {
		uint32_t e = (*slots)[i], j;

		if (e == 0)
			continue;
		for (j = (uint32_t)rehash(t, e - 1) & (n - 1); s[j]; j = (j + 1) & (n - 1))
			;
		s[j] = e;
	}
	free(*slots);
	*slots = s;
	*nslots = n;
	return 0;
}

static uint64_t str_hash(const struct collect_pynames *t, uint32_t i)
{
	return pynames_hash(t->text + t->strs[i].off, t->strs[i].len, 0);
}

static uint64_t code_hash(const struct collect_pynames *t, uint32_t i)
{
	return pynames_hash(t->codes[i], sizeof(t->codes[i]), 1);
}

/* The string s[0..n) among t's: its index, or -1 when out of memory. */
static int64_t str_intern(struct collect_pynames *t, const char *s, uint32_t n)
{
	uint32_t j;

	if (slots_grow(&t->str_slots, &t->nstr_slots, t->nstrs, t, str_hash) < 0)
		return -1;
	for (j = (uint32_t)pynames_hash(s, n, 0) & (t->nstr_slots - 1); t->str_slots[j];
	     j = (j + 1) & (t->nstr_slots - 1)) {
		const struct pynames_str *e = &t->strs[t->str_slots[j] - 1];

		if (e->len == n && memcmp(t->text + e->off, s, n) == 0)
			return t->str_slots[j] - 1;
	}
	if (t->nstrs == t->capstrs) {
		uint32_t c = t->capstrs ? t->capstrs * 2 : 256;
		struct pynames_str *v = realloc(t->strs, c * sizeof(*v));

		if (v == NULL)
			return -1;
		t->strs = v;
		t->capstrs = c;
	}
	if (t->ntext + n > t->captext) {
		size_t c = t->captext ? t->captext : 4096;
		char *v;

		while (c < t->ntext + n)
			c *= 2;
		if ((v = realloc(t->text, c)) == NULL)
			return -1;
		t->text = v;
		t->captext = c;
	}
	memcpy(t->text + t->ntext, s, n);
	t->strs[t->nstrs] = (struct pynames_str){ .off = t->ntext, .len = n };
	t->ntext += n;
	t->str_slots[j] = ++t->nstrs;
	return t->nstrs - 1;
}

/* The entries of the record open, cur, onto the records done as a record
 * of type, if it has any; *last (its last entry's number) reset. */
static int entries_close(struct pynames_buf *done, struct pynames_buf *cur, uint32_t *last,
			 uint32_t type)
{
	struct raw_rec h = { type, 0 };
	static const unsigned char zeros[8];

	if (cur->n == 0)
		return 0;
	h.size = raw_pad((uint32_t)(sizeof(h) + cur->n));
	if (buf_put(done, &h, sizeof(h)) < 0 || buf_put(done, cur->b, cur->n) < 0 ||
	    buf_put(done, zeros, h.size - sizeof(h) - cur->n) < 0)
		return -1;
	cur->n = 0;
	*last = 0;
	return 0;
}

/* Closes the record of codes open, if it has entries. */
static int record_close(struct collect_pynames *t)
{
	return entries_close(&t->done, &t->cur, &t->cur_last, RAW_PYCODES);
}

/* The bytes string s (strs) and the string cand1 - 1 (0: none) begin
 * with alike. */
static uint32_t common_prefix(const struct collect_pynames *t, uint32_t s, uint32_t cand1)
{
	const struct pynames_str *e = &t->strs[s], *w;
	uint32_t k = 0;

	if (cand1 == 0)
		return 0;
	w = &t->strs[cand1 - 1];
	while (k < w->len && k < e->len && t->text[w->off + k] == t->text[e->off + k])
		k++;
	return k;
}

/* String s, the run's string id, in an entry of the run's records: by
 * number when written before, else by its beginning shared with the
 * last entry's of its kind or with the last of its kind that began with
 * the same byte (a file of the library after a frozen module's), else
 * as text. */
static int entry_string(struct collect_pynames *t, uint32_t s, uint32_t id, int kind)
{
	struct pynames_str *e = &t->strs[s];
	const char *txt = t->text + e->off;
	uint32_t *by_first = e->len ? &t->first[kind][(unsigned char)txt[0]] : NULL;
	uint32_t k = common_prefix(t, s, t->last[kind]), from = t->last[kind], k2;

	/* by number only a string of an entry before (raw-py.h): a file name
	 * that is its own code's name (CPython's shim after a class's
	 * __init__) is text again */
	if (e->id1 && (e->id1 - 1) >> 1 != id >> 1)
		return buf_varint(&t->cur, (uint64_t)(e->id1 - 1) << 2 | RAW_PYCODES_SAME);
	if (e->id1)
		return buf_varint(&t->cur, (uint64_t)e->len << 2 | RAW_PYCODES_TEXT) ||
				       buf_put(&t->cur, txt, e->len)
			       ? -1
			       : 0;
	e->id1 = id + 1;
	if (by_first && (k2 = common_prefix(t, s, *by_first)) > k) {
		k = k2;
		from = *by_first;
	}
	if (by_first)
		*by_first = s + 1;
	if (k >= PYNAMES_MIN_PREFIX)
		return buf_varint(&t->cur, (uint64_t)(t->strs[from - 1].id1 - 1) << 2 | RAW_PYCODES_PREFIX) ||
				       buf_varint(&t->cur, k) || buf_varint(&t->cur, e->len - k) ||
				       buf_put(&t->cur, txt + k, e->len - k)
			       ? -1
			       : 0;
	return buf_varint(&t->cur, (uint64_t)e->len << 2 | RAW_PYCODES_TEXT) ||
			       buf_put(&t->cur, txt, e->len)
		       ? -1
		       : 0;
}

/* The run's code of name and file (strs) and first line (zigzag zz):
 * its number (> 0), 0 when the table is full, -1 when out of memory. */
static int64_t code_intern(struct collect_pynames *t, uint32_t name, uint32_t file, uint32_t zz)
{
	uint32_t key[3] = { name, file, zz }, j, c;

	if (slots_grow(&t->code_slots, &t->ncode_slots, t->ncodes, t, code_hash) < 0)
		return -1;
	for (j = (uint32_t)pynames_hash(key, sizeof(key), 1) & (t->ncode_slots - 1); t->code_slots[j];
	     j = (j + 1) & (t->ncode_slots - 1))
		if (memcmp(t->codes[t->code_slots[j] - 1], key, sizeof(key)) == 0)
			return t->code_slots[j];
	if (t->ncodes + 1 >= RAW_PY_MAX_CODES ||
	    t->done.n + t->cur.n + t->strs[name].len + t->strs[file].len + 64 > RAW_RUN_PYNAMES_MAX)
		return 0;
	if (t->ncodes == t->capcodes) {
		uint32_t cap = t->capcodes ? t->capcodes * 2 : 256;
		uint32_t (*v)[3] = realloc(t->codes, cap * sizeof(*v));

		if (v == NULL)
			return -1;
		t->codes = v;
		t->capcodes = cap;
	}
	memcpy(t->codes[t->ncodes], key, sizeof(key));
	c = ++t->ncodes;
	t->code_slots[j] = c;
	if (t->cur.n > PYNAMES_RECORD_MAX && record_close(t) < 0)
		return -1;
	/* index as a delta from the entry before */
	if (buf_varint(&t->cur, (uint64_t)(c - t->cur_last) << 1) < 0 || buf_varint(&t->cur, zz) < 0 ||
	    entry_string(t, name, 2 * c, 0) < 0 || entry_string(t, file, 2 * c + 1, 1) < 0)
		return -1;
	t->cur_last = c;
	t->last[0] = name + 1;
	t->last[1] = file + 1;
	return c;
}

/* The string of a process's RAW_PYCODES entry at *p, among t's: its
 * index, -2 when it does not decode (or names a string not known), -1
 * when out of memory. */
static int64_t part_string(struct collect_pynames *t, const unsigned char **p, const unsigned char *end)
{
	uint32_t v, id, pre, n, c;
	const struct pynames_str *was;

	if (raw_varint_get32(p, end, &v) < 0)
		return -2;
	if ((v & 3) == RAW_PYCODES_TEXT) {
		if (v >> 2 > (size_t)(end - *p))
			return -2;
		*p += v >> 2;
		return str_intern(t, (const char *)*p - (v >> 2), v >> 2);
	}
	if ((v & 3) != RAW_PYCODES_SAME && (v & 3) != RAW_PYCODES_PREFIX)
		return -2;
	id = v >> 2;
	if (id >> 1 >= t->npmap || (c = t->pmap[id >> 1]) == 0)
		return -2;
	was = &t->strs[t->codes[c - 1][id & 1]];
	if ((v & 3) == RAW_PYCODES_SAME)
		return t->codes[c - 1][id & 1];
	if (raw_varint_get32(p, end, &pre) < 0 || raw_varint_get32(p, end, &n) < 0 || n > (size_t)(end - *p))
		return -2;
	if (pre > was->len)
		pre = was->len;
	/* what a trace takes of its strings before is bounded by a multiple
	 * of its size, as the reader's is: a few bytes do not make
	 * gigabytes to hash */
	t->part_shared += pre;
	if (t->part_shared > 64 * t->part_len + 65536)
		return -2;
	if ((size_t)pre + n > t->capscratch) {
		char *s = realloc(t->scratch, (size_t)pre + n);

		if (s == NULL)
			return -1;
		t->scratch = s;
		t->capscratch = (size_t)pre + n;
	}
	memcpy(t->scratch, t->text + was->off, pre);
	memcpy(t->scratch + pre, *p, n);
	*p += n;
	return str_intern(t, t->scratch, pre + n);
}

/* (*m)[index] = c, the map of *n entries grown (zeros) to hold it. */
static int map_set(uint32_t **m, uint32_t *n, uint32_t index, uint32_t c)
{
	if (index >= *n) {
		uint32_t k = *n ? *n : 1024, *v;

		while (k <= index)
			k *= 2;
		if ((v = realloc(*m, k * sizeof(*v))) == NULL)
			return -1;
		memset(v + *n, 0, (k - *n) * sizeof(*v));
		*m = v;
		*n = k;
	}
	(*m)[index] = c;
	return 0;
}

/* A process's code index: its run code is c. */
static int pmap_set(struct collect_pynames *t, uint32_t index, uint32_t c)
{
	return map_set(&t->pmap, &t->npmap, index, c);
}

/* Closes the record begun at start in t->out (its header there), padded;
 * a record without entries is taken back.  0 or -1. */
static int out_close(struct collect_pynames *t, size_t start, uint32_t type)
{
	struct raw_rec h = { type, 0 };
	static const unsigned char zeros[8];

	if (t->out.n == start + sizeof(h)) {
		t->out.n = start;
		return 0;
	}
	if (t->out.n - start > RAW_MAX_RECORD - 8)
		return -2;
	h.size = raw_pad((uint32_t)(t->out.n - start));
	if (buf_put(&t->out, zeros, h.size - (t->out.n - start)) < 0)
		return -1;
	memcpy(t->out.b + start, &h, sizeof(h));
	return 0;
}

static int out_open(struct collect_pynames *t, size_t *start)
{
	struct raw_rec h = { 0, 0 };

	*start = t->out.n;
	return buf_put(&t->out, &h, sizeof(h));
}

/* Ranges of a process's codes that are the run's (RAW_PYRUNCODES). */
struct ranges {
	struct pynames_buf *b;
	uint32_t index, c, n;        /* the range open */
	uint32_t end_index, end_c;   /* the end of the range before */
};

static int range_flush(struct ranges *r)
{
	if (r->n == 0)
		return 0;
	if (buf_varint(r->b, r->n) < 0 ||
	    buf_varint(r->b, raw_zigzag((int64_t)r->index - (int64_t)r->end_index)) < 0 ||
	    buf_varint(r->b, raw_zigzag((int64_t)r->c - (int64_t)r->end_c)) < 0)
		return -1;
	r->end_index = r->index + r->n;
	r->end_c = r->c + r->n;
	r->n = 0;
	return 0;
}

/* A record of type onto dst: the bytes pre[0..npre), then the ranges
 * runs, padded.  0; 1 when too long; -1 when out of memory. */
static int ranges_record(struct pynames_buf *dst, uint32_t type, const unsigned char *pre, uint32_t npre,
			 const struct pynames_buf *runs)
{
	struct raw_rec h = { type, 0 };
	static const unsigned char zeros[8];

	if (runs->n > RAW_MAX_RECORD / 2)
		return 1;
	h.size = raw_pad((uint32_t)(sizeof(h) + npre + runs->n));
	if (buf_put(dst, &h, sizeof(h)) < 0 || (npre && buf_put(dst, pre, npre) < 0) ||
	    buf_put(dst, runs->b, runs->n) < 0 || buf_put(dst, zeros, h.size - sizeof(h) - npre - runs->n) < 0)
		return -1;
	return 0;
}

static int range_add(struct ranges *r, uint32_t index, uint32_t c)
{
	if (r->n > 0 && index == r->index + r->n && c == r->c + r->n) {
		r->n++;
		return 0;
	}
	if (range_flush(r) < 0)
		return -1;
	r->index = index;
	r->c = c;
	r->n = 1;
	return 0;
}

static uint64_t node_hash(const struct collect_pynames *t, uint32_t i)
{
	return pynames_hash(t->nodes[i], sizeof(t->nodes[i]), 2);
}

/* Closes the run's record of parts open, if it has entries. */
static int parts_close(struct collect_pynames *t)
{
	return entries_close(&t->pdone, &t->pcur, &t->pcur_last, RAW_PYPARTS);
}

/* The run's part of the one frame key (run code, instruction word,
 * parent part): its number, 0 when there is none; *slot where it goes. */
static uint32_t node_find(const struct collect_pynames *t, const uint32_t key[3], uint32_t *slot)
{
	uint32_t j;

	for (j = (uint32_t)pynames_hash(key, 3 * sizeof(*key), 2) & (t->nnode_slots - 1); t->node_slots[j];
	     j = (j + 1) & (t->nnode_slots - 1))
		if (memcmp(t->nodes[t->node_slots[j] - 1], key, 3 * sizeof(*key)) == 0)
			return t->node_slots[j];
	*slot = j;
	return 0;
}

/* The frames f[0..n) (innermost first: run code, instruction word) of a
 * part whose outer frames are the run's part parent (0: none) made the
 * run's: into part[i] the run's part of frames i on.  The frames the
 * run has already (from the outside in) are its; the others a new part
 * of the run's, its record entry written as the collector packs them
 * (raw.h), of the evaluation loop 0.  0; 1 when the table is full; -1
 * when out of memory. */
static int parts_intern(struct collect_pynames *t, uint32_t (*f)[2], uint32_t n, uint32_t parent,
			uint32_t *part)
{
	uint32_t c, slot = 0, k = n;

	for (; k > 0; k--) {
		uint32_t key[3] = { f[k - 1][0], f[k - 1][1], parent };

		if (slots_grow(&t->node_slots, &t->nnode_slots, t->nparts, t, node_hash) < 0)
			return -1;
		if ((c = node_find(t, key, &slot)) == 0)
			break;
		parent = part[k - 1] = c;
	}
	if (k == 0)
		return 0;
	/* frames 0 to k - 1 are new: one part, k - 1 its outermost */
	if (t->nparts + k > RAW_PY_MAX_PARTS ||
	    t->done.n + t->cur.n + t->pdone.n + t->pcur.n + 24 * k + 64 > RAW_RUN_PYNAMES_MAX)
		return 1;
	if (t->nparts + k > t->capnodes) {
		uint32_t cap = t->capnodes ? t->capnodes : 256;
		uint32_t (*v)[3];

		while (cap < t->nparts + k)
			cap *= 2;
		if ((v = realloc(t->nodes, cap * sizeof(*v))) == NULL)
			return -1;
		t->nodes = v;
		t->capnodes = cap;
	}
	c = t->nparts + 1;
	if (t->pcur.n > PYNAMES_RECORD_MAX && parts_close(t) < 0)
		return -1;
	if (buf_varint(&t->pcur, k) < 0 || buf_varint(&t->pcur, raw_zigzag((int64_t)c - t->pcur_last)) < 0 ||
	    buf_varint(&t->pcur, parent ? raw_zigzag((int64_t)c - parent) + 1 : 0) < 0 ||
	    (parent == 0 && (buf_varint(&t->pcur, 0) < 0 || buf_varint(&t->pcur, 0) < 0)))
		return -1;
	t->pcur_last = c;
	for (uint32_t i = 0; i < k; i++) {
		uint32_t *e = t->nodes[c - 1 + i];

		e[0] = f[i][0];
		e[1] = f[i][1];
		e[2] = i + 1 < k ? c + i + 1 : parent;
		part[i] = c + i;
		if (buf_varint(&t->pcur, f[i][0]) < 0 || buf_varint(&t->pcur, f[i][1]) < 0)
			return -1;
	}
	/* (in the slots from the outside in, each after its parent) */
	for (uint32_t i = k; i-- > 0;) {
		if (slots_grow(&t->node_slots, &t->nnode_slots, t->nparts, t, node_hash) < 0)
			return -1;
		if (node_find(t, t->nodes[c - 1 + i], &slot) == 0)
			t->node_slots[slot] = c + i;
		t->nparts++;
	}
	return 0;
}

/* The nwords frames of a part at *p into f, their codes the run's: 0, or
 * 1 when one is not a code of the run's (or does not decode). */
static int part_frames(struct collect_pynames *t, const unsigned char **p, const unsigned char *end,
		       uint32_t nwords, uint32_t (*f)[2])
{
	for (uint32_t i = 0; i < nwords; i++) {
		uint32_t code, at, rc = 0;

		if (raw_varint_get32(p, end, &code) < 0 || raw_varint_get32(p, end, &at) < 0 ||
		    (at >> 1) > RAW_PY_NO_INSTR)
			return 1;
		/* (code 0 is the marker of a walk that stopped, the same in every process) */
		if (code != 0 && (code >= t->npmap || (rc = t->pmap[code]) == 0))
			return 1;
		f[i][0] = rc;
		f[i][1] = at;
	}
	return 0;
}

/* A process's RAW_PYPARTS record rec[0..size): each part made the run's
 * (its frames naming the run's codes, its parent the run's part of its
 * parent), into the ranges r.  0; 1 when a part cannot be (it does not
 * decode, names a code or parent the run has not, is defined twice, or
 * of another evaluation loop than the process's first); -1 when out of
 * memory. */
static int part_parts(struct collect_pynames *t, const unsigned char *rec, uint32_t size,
		      struct ranges *r)
{
	const unsigned char *p = rec + sizeof(struct raw_pyparts), *end = rec + size;
	uint32_t index = 0;

	while (p < end && *p != 0) {
		uint32_t nwords, di, par, parent = 0, rparent = 0, f[RAW_PY_MAX_STACK][2];
		uint32_t part[RAW_PY_MAX_STACK];
		uint64_t ev[2] = { 0, 0 };
		int rc;

		if (raw_varint_get32(&p, end, &nwords) < 0 || raw_varint_get32(&p, end, &di) < 0 ||
		    raw_varint_get32(&p, end, &par) < 0 ||
		    (par == 0 && (raw_varint_get(&p, end, 10, &ev[0]) < 0 ||
				  raw_varint_get(&p, end, 10, &ev[1]) < 0)))
			return 1;
		index += di >> 1 ^ -(di & 1);
		if (par != 0)
			parent = index - ((par - 1) >> 1 ^ -((par - 1) & 1));
		if (nwords == 0 || nwords > RAW_PY_MAX_STACK || index == 0 ||
		    index > RAW_PY_MAX_PARTS - nwords + 1)
			return 1;
		if (par == 0 && !t->has_eval) {
			memcpy(t->eval, ev, sizeof(ev));
			t->has_eval = 1;
		} else if (par == 0 && memcmp(t->eval, ev, sizeof(ev)) != 0) {
			return 1;
		}
		if (par != 0 && (parent >= t->nppmap || (rparent = t->ppmap[parent]) == 0))
			return 1;
		for (uint32_t j = 0; j < nwords; j++)
			if (index + j < t->nppmap && t->ppmap[index + j] != 0)
				return 1;
		if ((rc = part_frames(t, &p, end, nwords, f)) != 0 ||
		    (rc = parts_intern(t, f, nwords, rparent, part)) != 0)
			return rc;
		for (uint32_t j = 0; j < nwords; j++)
			if (map_set(&t->ppmap, &t->nppmap, index + j, part[j]) < 0 ||
			    (index + j < t->npref && t->pref[index + j] && range_add(r, index + j, part[j]) < 0))
				return -1;
	}
	return 0;
}

/* Does the record r hold Python frame words (or code indices) other than
 * those of its parts: a stack's or a sample's frames with one, a
 * RAW_SAMPLE_PY, RAW_PYSTACK, RAW_PYCODE or RAW_PYPART? */
static int record_words(const struct raw_record *r)
{
	const unsigned char *w = NULL;
	uint32_t n = 0;

	switch (r->type) {
	case RAW_SAMPLE_PY:
	case RAW_PYSTACK:
	case RAW_PYCODE:
	case RAW_PYPART:
		return 1;
	case RAW_STACK:
		w = r->data + sizeof(struct raw_stack);
		n = (r->size - (uint32_t)sizeof(struct raw_stack)) / 8;
		break;
	case RAW_SAMPLE:
		if (r->size > sizeof(struct raw_sample)) {
			w = r->data + sizeof(struct raw_sample);
			n = (r->size - (uint32_t)sizeof(struct raw_sample)) / 8;
		}
		break;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t v;

		memcpy(&v, w + 8 * i, sizeof(v));
		if (raw_py_is(v) || raw_pystack_is(v))
			return 1;
	}
	return 0;
}

/* The process's parts the run's, if every one of its RAW_PYPARTS records
 * can be (and it has no RAW_PYPART, whose indices share theirs): its
 * RAW_PYRUNPARTS record into t->partrec, t->moved set.  0, or -1 when
 * out of memory. */
static int part_moves(struct collect_pynames *t, const unsigned char *b, size_t len,
		      const struct raw_head *head)
{
	struct pynames_buf runs = { 0 };
	struct ranges rg = { .b = &runs };
	struct raw_iter it;
	struct raw_record r;
	unsigned char ev[20];
	uint32_t nev;
	int rc = 0, any = 0;

	t->moved = 0;
	t->has_eval = 0;
	t->partrec.n = 0;
	if (t->nppmap)
		memset(t->ppmap, 0, t->nppmap * sizeof(*t->ppmap));
	if (t->npref)
		memset(t->pref, 0, t->npref * sizeof(*t->pref));
	t->words = 0;
	/* the parts its stacks name, which alone the ranges need; whether
	 * other records name its codes */
	raw_iter_init(&it, b, len, head->h.header_size, head->arch.nregs);
	while (rc == 0 && raw_iter_next(&it, &r) == RAW_NEXT_RECORD) {
		struct raw_stack_py sp;

		t->words |= record_words(&r);
		if (r.type != RAW_STACK_PY && r.type != RAW_STACK_PYREF)
			continue;
		memcpy(&sp, r.data, sizeof(sp)); /* (the part where a RAW_STACK_PY has it) */
		if (sp.py <= RAW_PY_MAX_PARTS && map_set(&t->pref, &t->npref, sp.py, 1) < 0)
			rc = -1;
	}
	raw_iter_init(&it, b, len, head->h.header_size, head->arch.nregs);
	while (rc == 0 && raw_iter_next(&it, &r) == RAW_NEXT_RECORD) {
		if (r.type == RAW_PYPART)
			rc = 1;
		else if (r.type == RAW_PYPARTS)
			rc = part_parts(t, r.data, r.size, &rg);
		any |= r.type == RAW_PYPARTS;
	}
	if (rc == 0 && any && t->has_eval && (rc = range_flush(&rg)) == 0 && runs.n > 0) {
		nev = raw_varint_put(ev, t->eval[0]);
		nev += raw_varint_put(ev + nev, t->eval[1]);
		if ((rc = ranges_record(&t->partrec, RAW_PYRUNPARTS, ev, nev, &runs)) == 0)
			t->moved = 1;
	}
	free(runs.b);
	return rc < 0 ? -1 : 0;
}

/* An entry the run's table could not take, onto the RAW_PYCODES record
 * at t->out: its strings as text. */
static int entry_alone(struct collect_pynames *t, uint32_t index, uint32_t *last, uint32_t zz,
		       uint32_t name, uint32_t file)
{
	if (buf_varint(&t->out, raw_zigzag((int64_t)index - (int64_t)*last)) < 0 ||
	    buf_varint(&t->out, zz) < 0)
		return -1;
	*last = index;
	for (int k = 0; k < 2; k++) {
		const struct pynames_str *s = &t->strs[k ? file : name];

		if (buf_varint(&t->out, (uint64_t)s->len << 2 | RAW_PYCODES_TEXT) < 0 ||
		    buf_put(&t->out, t->text + s->off, s->len) < 0)
			return -1;
	}
	return 0;
}

/* A process's RAW_PYCODES record rec[0..size) rewritten: the entries the
 * run's table took into the ranges r, the others (a full table) as a
 * RAW_PYCODES record onto t->out.  0, -2 when it does not decode, -1
 * when out of memory. */
static int part_record(struct collect_pynames *t, const unsigned char *rec, uint32_t size,
		       struct ranges *r)
{
	const unsigned char *p = rec + sizeof(struct raw_pycodes), *end = rec + size;
	uint32_t index = 0, delta, zz, last = 0;
	size_t start;

	if (out_open(t, &start) < 0)
		return -1;
	while (p < end && *p != 0) {
		int64_t name, file = 0, c;

		if (raw_varint_get32(&p, end, &delta) < 0 || raw_varint_get32(&p, end, &zz) < 0)
			return -2;
		index += delta >> 1 ^ -(delta & 1);
		if (index == 0 || index >= PYNAMES_MAX_INDEX)
			return -2;
		if ((name = part_string(t, &p, end)) < 0 || (file = part_string(t, &p, end)) < 0)
			return (int)(name < 0 ? name : file);
		c = code_intern(t, (uint32_t)name, (uint32_t)file, zz);
		if (c < 0 || pmap_set(t, index, (uint32_t)c) < 0)
			return -1;
		if ((c == 0 ? entry_alone(t, index, &last, zz, (uint32_t)name, (uint32_t)file)
			    : range_add(r, index, (uint32_t)c)) < 0)
			return -1;
	}
	return out_close(t, start, RAW_PYCODES);
}

/* The trace b[0..len) with its RAW_PYCODES records rewritten: its codes
 * the run's table took as one RAW_PYRUNCODES record in t->runrec, which
 * takes the place of the first, the others onto t->out (t->lens: the
 * bytes each record became).  The number of records, -2 when one does
 * not decode, -1 when out of memory. */
static int64_t part_rewrite(struct collect_pynames *t, const unsigned char *b, size_t len)
{
	struct pynames_buf runs = { 0 };
	struct ranges rg = { .b = &runs };
	struct raw_head head;
	struct raw_iter it;
	struct raw_record r;
	int64_t n = 0;
	int rc = 0;

	t->out.n = 0;
	t->lens.n = 0;
	t->runrec.n = 0;
	t->moved = 0;
	t->part_len = len;
	t->part_shared = 0;
	if (t->npmap)
		memset(t->pmap, 0, t->npmap * sizeof(*t->pmap));
	if (raw_iter_head(b, len, &head) != RAW_HEAD_OK)
		return 0;
	raw_iter_init(&it, b, len, head.h.header_size, head.arch.nregs);
	while (rc == 0 && raw_iter_next(&it, &r) == RAW_NEXT_RECORD) {
		uint64_t was = t->out.n;

		if (r.type != RAW_PYCODES)
			continue;
		if ((rc = part_record(t, r.data, r.size, &rg)) < 0)
			break;
		was = t->out.n - was;
		rc = buf_put(&t->lens, &was, sizeof(was));
		n++;
	}
	if (rc == 0 && (rc = range_flush(&rg)) == 0 && runs.n > 0 &&
	    (rc = ranges_record(&t->runrec, RAW_PYRUNCODES, NULL, 0, &runs)) == 1)
		rc = -2;
	free(runs.b);
	if (rc == 0 && n > 0 && part_moves(t, b, len, &head) < 0)
		rc = -1;
	/* codes only the run's parts name need no ranges: the reader names
	 * their frames from the run's codes */
	if (rc == 0 && t->moved && !t->words)
		t->runrec.n = 0;
	return rc < 0 ? rc : n;
}

static int write_all(int fd, const void *p, size_t n, uint64_t off)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = pwrite(fd, c, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

/* The trace b[0..len) into fd at off, its RAW_PYCODES records replaced by
 * those of t->out, in order, the first by its RAW_PYRUNCODES and
 * RAW_PYRUNPARTS records before them; its RAW_PYPARTS records left out
 * when the run took its parts.  The bytes written, or -1. */
static int64_t part_write(struct collect_pynames *t, const unsigned char *b, size_t len, int fd,
			  uint64_t off)
{
	struct raw_head head;
	struct raw_iter it;
	struct raw_record r;
	size_t from = 0, o = 0;
	uint64_t to = off;

	raw_iter_head(b, len, &head);
	raw_iter_init(&it, b, len, head.h.header_size, head.arch.nregs);
	for (size_t k = 0; raw_iter_next(&it, &r) == RAW_NEXT_RECORD;) {
		uint64_t n;

		if (r.type != RAW_PYCODES && !(r.type == RAW_PYPARTS && t->moved))
			continue;
		if (write_all(fd, b + from, r.off - from, to) < 0)
			return -1;
		to += r.off - from;
		from = r.off + r.size;
		if (r.type == RAW_PYPARTS)
			continue;
		if (k == 0) {
			/* the codes and parts of the run's, in place of the first */
			if (write_all(fd, t->runrec.b, t->runrec.n, to) < 0 ||
			    (t->moved && write_all(fd, t->partrec.b, t->partrec.n, to + t->runrec.n) < 0))
				return -1;
			to += t->runrec.n + (t->moved ? t->partrec.n : 0);
		}
		memcpy(&n, t->lens.b + k++ * sizeof(n), sizeof(n));
		if (write_all(fd, t->out.b + o, n, to) < 0)
			return -1;
		to += n;
		o += n;
	}
	if (write_all(fd, b + from, len - from, to) < 0)
		return -1;
	return (int64_t)(to + (len - from) - off);
}

int64_t collect_pynames_copy(struct collect_pynames *t, int fd, uint64_t off, const char *path,
			     uint64_t at, uint64_t len)
{
	int in = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t base = at & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
	unsigned char *m;
	struct stat sb;
	int64_t n, w = -1;

	if (in < 0)
		return -1;
	if (fstat(in, &sb) < 0 || (uint64_t)sb.st_size < at || (uint64_t)sb.st_size - at < len ||
	    len == 0 || len > SIZE_MAX / 2) {
		/* shorter than it was */
		close(in);
		errno = EIO;
		return len == 0 ? 0 : -1;
	}
	m = mmap(NULL, (size_t)(at - base + len), PROT_READ, MAP_PRIVATE, in, (off_t)base);
	close(in);
	if (m == MAP_FAILED)
		return -1;
	n = part_rewrite(t, m + (at - base), (size_t)len);
	if (n > 0)
		w = part_write(t, m + (at - base), (size_t)len, fd, off);
	else if (n != -1 && write_all(fd, m + (at - base), (size_t)len, off) == 0)
		w = (int64_t)len; /* none, or not decoded: as it is */
	else if (n == -1)
		errno = ENOMEM;
	munmap(m, (size_t)(at - base + len));
	return w;
}

int64_t collect_pynames_write(struct collect_pynames *t, int fd, uint64_t off)
{
	static const unsigned char zeros[8];
	struct raw_run_pynames tr = { 0 };
	struct raw_run_pynamez tz = { 0 };
	const void *in[2];
	size_t lens[2], nz = 0;
	unsigned char *z = NULL;
	int rc;

	if (record_close(t) < 0 || parts_close(t) < 0)
		return -1;
	if (t->done.n == 0)
		return 0;
	tr.size = t->done.n + t->pdone.n;
	/* deflated when that is smaller, its padding and its trailer's 8
	 * bytes more counted (out of memory for it: as they are) */
	in[0] = t->done.b;
	in[1] = t->pdone.b;
	lens[0] = t->done.n;
	lens[1] = t->pdone.n;
	rc = collect_deflate(in, lens, 2, tr.size > 15 ? tr.size - 15 : 0, &z, &nz);
	if (rc == 1) {
		tz.size = raw_pad((uint32_t)nz);
		tz.inflated = tr.size;
		memcpy(tz.magic, RAW_RUN_PYNAMEZ_MAGIC, RAW_MAGIC_LEN);
		rc = write_all(fd, z, nz, off) < 0 || write_all(fd, zeros, tz.size - nz, off + nz) < 0 ||
		     write_all(fd, &tz, sizeof(tz), off + tz.size) < 0;
		free(z);
		return rc ? -1 : (int64_t)(tz.size + sizeof(tz));
	}
	memcpy(tr.magic, RAW_RUN_PYNAMES_MAGIC, RAW_MAGIC_LEN);
	if (write_all(fd, t->done.b, t->done.n, off) < 0 ||
	    write_all(fd, t->pdone.b, t->pdone.n, off + t->done.n) < 0 ||
	    write_all(fd, &tr, sizeof(tr), off + tr.size) < 0)
		return -1;
	return (int64_t)(tr.size + sizeof(tr));
}

struct collect_pynames *collect_pynames_new(void)
{
	return calloc(1, sizeof(struct collect_pynames));
}

void collect_pynames_free(struct collect_pynames *t)
{
	if (t == NULL)
		return;
	free(t->text);
	free(t->strs);
	free(t->str_slots);
	free(t->codes);
	free(t->code_slots);
	free(t->done.b);
	free(t->cur.b);
	free(t->pmap);
	free(t->out.b);
	free(t->lens.b);
	free(t->runrec.b);
	free(t->scratch);
	free(t->pdone.b);
	free(t->pcur.b);
	free(t->nodes);
	free(t->node_slots);
	free(t->ppmap);
	free(t->pref);
	free(t->partrec.b);
	free(t);
}
