/* collect-pynames.c - the run's Python names, written once (see
 * collect-pynames.h): its tables of strings, codes and parts, and their
 * records; collect-pyjoin.c rewrites each process's trace to name them
 */
#include <stdlib.h>
#include <string.h>
#include <stdint.h>

#include "collect-deflate.h"
#include "collect-pynames.h"
#include "collect-pynames-int.h"
#include "outfile.h"
#include "raw-iter.h"
#include "raw.h"
#include "raw-py.h"

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

int pyn_buf_put(struct pynames_buf *b, const void *p, size_t n)
{
	if (buf_need(b, n) < 0)
		return -1;
	memcpy(b->b + b->n, p, n);
	b->n += n;
	return 0;
}

int pyn_buf_varint(struct pynames_buf *b, uint64_t v)
{
	unsigned char t[10];

	return pyn_buf_put(b, t, raw_varint_put(t, v));
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
	if (pyn_buf_put(done, &h, sizeof(h)) < 0 || pyn_buf_put(done, cur->b, cur->n) < 0 ||
	    pyn_buf_put(done, zeros, h.size - sizeof(h) - cur->n) < 0)
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
		return pyn_buf_varint(&t->cur, (uint64_t)(e->id1 - 1) << 2 | RAW_PYCODES_SAME);
	if (e->id1)
		return pyn_buf_varint(&t->cur, (uint64_t)e->len << 2 | RAW_PYCODES_TEXT) ||
				       pyn_buf_put(&t->cur, txt, e->len)
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
		return pyn_buf_varint(&t->cur, (uint64_t)(t->strs[from - 1].id1 - 1) << 2 | RAW_PYCODES_PREFIX) ||
				       pyn_buf_varint(&t->cur, k) || pyn_buf_varint(&t->cur, e->len - k) ||
				       pyn_buf_put(&t->cur, txt + k, e->len - k)
			       ? -1
			       : 0;
	return pyn_buf_varint(&t->cur, (uint64_t)e->len << 2 | RAW_PYCODES_TEXT) ||
			       pyn_buf_put(&t->cur, txt, e->len)
		       ? -1
		       : 0;
}

/* The run's code of name and file (strs) and first line (zigzag zz):
 * its number (> 0), 0 when the table is full, -1 when out of memory. */
int64_t pyn_code_intern(struct collect_pynames *t, uint32_t name, uint32_t file, uint32_t zz)
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
	if (pyn_buf_varint(&t->cur, (uint64_t)(c - t->cur_last) << 1) < 0 || pyn_buf_varint(&t->cur, zz) < 0 ||
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
int64_t pyn_part_string(struct collect_pynames *t, const unsigned char **p, const unsigned char *end)
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
int pyn_map_set(uint32_t **m, uint32_t *n, uint32_t index, uint32_t c)
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
int pyn_pmap_set(struct collect_pynames *t, uint32_t index, uint32_t c)
{
	return pyn_map_set(&t->pmap, &t->npmap, index, c);
}

/* Closes the record begun at start in t->out (its header there), padded;
 * a record without entries is taken back.  0 or -1. */
int pyn_out_close(struct collect_pynames *t, size_t start, uint32_t type)
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
	if (pyn_buf_put(&t->out, zeros, h.size - (t->out.n - start)) < 0)
		return -1;
	memcpy(t->out.b + start, &h, sizeof(h));
	return 0;
}

int pyn_out_open(struct collect_pynames *t, size_t *start)
{
	struct raw_rec h = { 0, 0 };

	*start = t->out.n;
	return pyn_buf_put(&t->out, &h, sizeof(h));
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
int pyn_parts_intern(struct collect_pynames *t, uint32_t (*f)[2], uint32_t n, uint32_t parent,
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
	if (pyn_buf_varint(&t->pcur, k) < 0 || pyn_buf_varint(&t->pcur, raw_zigzag((int64_t)c - t->pcur_last)) < 0 ||
	    pyn_buf_varint(&t->pcur, parent ? raw_zigzag((int64_t)c - parent) + 1 : 0) < 0 ||
	    (parent == 0 && (pyn_buf_varint(&t->pcur, 0) < 0 || pyn_buf_varint(&t->pcur, 0) < 0)))
		return -1;
	t->pcur_last = c;
	for (uint32_t i = 0; i < k; i++) {
		uint32_t *e = t->nodes[c - 1 + i];

		e[0] = f[i][0];
		e[1] = f[i][1];
		e[2] = i + 1 < k ? c + i + 1 : parent;
		part[i] = c + i;
		if (pyn_buf_varint(&t->pcur, f[i][0]) < 0 || pyn_buf_varint(&t->pcur, f[i][1]) < 0)
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
int pyn_part_frames(struct collect_pynames *t, const unsigned char **p, const unsigned char *end,
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
		rc = !pv_pwrite_all(fd, z, nz, off) || !pv_pwrite_all(fd, zeros, tz.size - nz, off + nz) ||
		     !pv_pwrite_all(fd, &tz, sizeof(tz), off + tz.size);
		free(z);
		return rc ? -1 : (int64_t)(tz.size + sizeof(tz));
	}
	memcpy(tr.magic, RAW_RUN_PYNAMES_MAGIC, RAW_MAGIC_LEN);
	if (!pv_pwrite_all(fd, t->done.b, t->done.n, off) ||
	    !pv_pwrite_all(fd, t->pdone.b, t->pdone.n, off + t->done.n) ||
	    !pv_pwrite_all(fd, &tr, sizeof(tr), off + tr.size))
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
