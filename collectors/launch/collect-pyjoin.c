/* collect-pyjoin.c - a process's trace as the launcher joins it into the
 * run: its Python names replaced by the run's (see collect-pynames.h)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect-pynames.h"
#include "collect-pynames-int.h"
#include "outfile.h"
#include "raw-iter.h"
#include "raw.h"
#include "raw-py.h"

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
	if (pyn_buf_varint(r->b, r->n) < 0 ||
	    pyn_buf_varint(r->b, raw_zigzag((int64_t)r->index - (int64_t)r->end_index)) < 0 ||
	    pyn_buf_varint(r->b, raw_zigzag((int64_t)r->c - (int64_t)r->end_c)) < 0)
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
	if (pyn_buf_put(dst, &h, sizeof(h)) < 0 || (npre && pyn_buf_put(dst, pre, npre) < 0) ||
	    (runs->n && pyn_buf_put(dst, runs->b, runs->n) < 0) || pyn_buf_put(dst, zeros, h.size - sizeof(h) - npre - runs->n) < 0)
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

/* A process's RAW_PYPARTS record rec[0..size): each part made the run's
 * (its frames naming the run's codes, its parent the run's part of its
 * parent), its run's part in t->ppmap.  0; 1 when a part cannot be (it
 * does not decode, names a code or parent the run has not, is defined
 * twice, or of another evaluation loop than the process's first); -1
 * when out of memory. */
static int part_parts(struct collect_pynames *t, const unsigned char *rec, uint32_t size)
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
		if ((rc = pyn_part_frames(t, &p, end, nwords, f)) != 0 ||
		    (rc = pyn_parts_intern(t, f, nwords, rparent, part)) != 0)
			return rc;
		for (uint32_t j = 0; j < nwords; j++)
			if (pyn_map_set(&t->ppmap, &t->nppmap, index + j, part[j]) < 0)
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
 * can be (and it has no RAW_PYPART, whose indices share theirs) and a
 * stack names one: its RAW_PYRUNPARTS record into t->partrec, without
 * ranges (its stacks are rewritten to name the run's parts: part_write),
 * t->moved set.  0, or -1 when out of memory. */
static int part_moves(struct collect_pynames *t, const unsigned char *b, size_t len,
		      const struct raw_head *head)
{
	static const struct pynames_buf none = { 0 };
	struct raw_iter it;
	struct raw_record r;
	unsigned char ev[20];
	uint32_t nev;
	int rc = 0, any = 0, named = 0;

	t->moved = 0;
	t->has_eval = 0;
	t->partrec.n = 0;
	if (t->nppmap)
		memset(t->ppmap, 0, t->nppmap * sizeof(*t->ppmap));
	if (t->npref)
		memset(t->pref, 0, t->npref * sizeof(*t->pref));
	t->words = 0;
	/* the parts its stacks name; whether other records name its codes */
	raw_iter_init(&it, b, len, head->h.header_size, head->arch.nregs);
	while (rc == 0 && raw_iter_next(&it, &r) == RAW_NEXT_RECORD) {
		struct raw_stack_py sp;

		t->words |= record_words(&r);
		if (r.type != RAW_STACK_PY && r.type != RAW_STACK_PYREF)
			continue;
		memcpy(&sp, r.data, sizeof(sp)); /* (the part where a RAW_STACK_PY has it) */
		if (sp.py <= RAW_PY_MAX_PARTS && pyn_map_set(&t->pref, &t->npref, sp.py, 1) < 0)
			rc = -1;
	}
	raw_iter_init(&it, b, len, head->h.header_size, head->arch.nregs);
	while (rc == 0 && raw_iter_next(&it, &r) == RAW_NEXT_RECORD) {
		if (r.type == RAW_PYPART)
			rc = 1;
		else if (r.type == RAW_PYPARTS)
			rc = part_parts(t, r.data, r.size);
		any |= r.type == RAW_PYPARTS;
	}
	for (uint32_t i = 1; rc == 0 && i < t->npref && i < t->nppmap && !named; i++)
		named = t->pref[i] && t->ppmap[i];
	if (rc == 0 && any && t->has_eval && named) {
		nev = raw_varint_put(ev, t->eval[0]);
		nev += raw_varint_put(ev + nev, t->eval[1]);
		if ((rc = ranges_record(&t->partrec, RAW_PYRUNPARTS, ev, nev, &none)) == 0)
			t->moved = 1;
	}
	return rc < 0 ? -1 : 0;
}

/* An entry the run's table could not take, onto the RAW_PYCODES record
 * at t->out: its strings as text. */
static int entry_alone(struct collect_pynames *t, uint32_t index, uint32_t *last, uint32_t zz,
		       uint32_t name, uint32_t file)
{
	if (pyn_buf_varint(&t->out, raw_zigzag((int64_t)index - (int64_t)*last)) < 0 ||
	    pyn_buf_varint(&t->out, zz) < 0)
		return -1;
	*last = index;
	for (int k = 0; k < 2; k++) {
		const struct pynames_str *s = &t->strs[k ? file : name];

		if (pyn_buf_varint(&t->out, (uint64_t)s->len << 2 | RAW_PYCODES_TEXT) < 0 ||
		    pyn_buf_put(&t->out, t->text + s->off, s->len) < 0)
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

	if (pyn_out_open(t, &start) < 0)
		return -1;
	while (p < end && *p != 0) {
		int64_t name, file = 0, c;

		if (raw_varint_get32(&p, end, &delta) < 0 || raw_varint_get32(&p, end, &zz) < 0)
			return -2;
		index += delta >> 1 ^ -(delta & 1);
		if (index == 0 || index >= PYNAMES_MAX_INDEX)
			return -2;
		if ((name = pyn_part_string(t, &p, end)) < 0 || (file = pyn_part_string(t, &p, end)) < 0)
			return (int)(name < 0 ? name : file);
		c = pyn_code_intern(t, (uint32_t)name, (uint32_t)file, zz);
		if (c < 0 || pyn_pmap_set(t, index, (uint32_t)c) < 0)
			return -1;
		if ((c == 0 ? entry_alone(t, index, &last, zz, (uint32_t)name, (uint32_t)file)
			    : range_add(r, index, (uint32_t)c)) < 0)
			return -1;
	}
	return pyn_out_close(t, start, RAW_PYCODES);
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
		rc = pyn_buf_put(&t->lens, &was, sizeof(was));
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

/* Bytes written through a buffer: into fd from offset to on. */
struct part_out {
	int fd;
	uint64_t to;
	size_t n;
	unsigned char b[65536];
};

static int out_flush(struct part_out *o)
{
	if (o->n > 0 && !pv_pwrite_all(o->fd, o->b, o->n, o->to))
		return -1;
	o->to += o->n;
	o->n = 0;
	return 0;
}

static int out_put(struct part_out *o, const void *p, size_t n)
{
	if (o->n + n > sizeof(o->b) && out_flush(o) < 0)
		return -1;
	if (n >= sizeof(o->b)) {
		if (!pv_pwrite_all(o->fd, p, n, o->to))
			return -1;
		o->to += n;
		return 0;
	}
	memcpy(o->b + o->n, p, n);
	o->n += n;
	return 0;
}

/* The trace b[0..len) into fd at off, its RAW_PYCODES records replaced by
 * those of t->out, in order, the first by its RAW_PYRUNCODES and
 * RAW_PYRUNPARTS records before them; when the run took its parts, its
 * RAW_PYPARTS records left out and each stack's part (RAW_STACK_PY,
 * RAW_STACK_PYREF) the run's (0, which no part is, for one it had not).
 * The bytes written, or -1. */
static int64_t part_write(struct collect_pynames *t, const unsigned char *b, size_t len, int fd,
			  uint64_t off)
{
	struct raw_head head;
	struct raw_iter it;
	struct raw_record r;
	size_t from = 0, o = 0;
	struct part_out *w = malloc(sizeof(*w));
	int64_t rc = -1;

	if (w == NULL)
		return -1;
	w->fd = fd;
	w->to = off;
	w->n = 0;
	if (raw_iter_head(b, len, &head) != RAW_HEAD_OK)
		goto out;
	raw_iter_init(&it, b, len, head.h.header_size, head.arch.nregs);
	for (size_t k = 0; raw_iter_next(&it, &r) == RAW_NEXT_RECORD;) {
		int stack = t->moved && (r.type == RAW_STACK_PY || r.type == RAW_STACK_PYREF);
		uint64_t n;

		if (r.type != RAW_PYCODES && !(r.type == RAW_PYPARTS && t->moved) && !stack)
			continue;
		if (stack) {
			struct raw_stack_py sp;

			memcpy(&sp, r.data, sizeof(sp));
			sp.py = sp.py < t->nppmap ? t->ppmap[sp.py] : 0;
			if (out_put(w, b + from, r.off - from) < 0 || out_put(w, &sp, sizeof(sp)) < 0)
				goto out;
			from = r.off + sizeof(sp);
			continue;
		}
		if (out_put(w, b + from, r.off - from) < 0)
			goto out;
		from = r.off + r.size;
		if (r.type == RAW_PYPARTS)
			continue;
		/* the codes and parts of the run's, in place of the first */
		if (k == 0 && (out_put(w, t->runrec.b, t->runrec.n) < 0 ||
			       (t->moved && out_put(w, t->partrec.b, t->partrec.n) < 0)))
			goto out;
		/* (the trace read again as the first read counted it: one
		 * changed since gives up rather than read past what was made) */
		if ((k + 1) * sizeof(n) > t->lens.n)
			goto out;
		memcpy(&n, t->lens.b + k++ * sizeof(n), sizeof(n));
		if (n > t->out.n - o || out_put(w, t->out.b + o, n) < 0)
			goto out;
		o += n;
	}
	if (out_put(w, b + from, len - from) == 0 && out_flush(w) == 0)
		rc = (int64_t)(w->to - off);
out:
	free(w);
	return rc;
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
	else if (n != -1 && pv_pwrite_all(fd, m + (at - base), (size_t)len, off))
		w = (int64_t)len; /* none, or not decoded: as it is */
	else if (n == -1)
		errno = ENOMEM;
	munmap(m, (size_t)(at - base + len));
	return w;
}

