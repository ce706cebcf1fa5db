/* segments.c - collect-timer --split: cut the program's trace into
 * self-contained segments while it is written (see segments.h) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "raw-cpu.h"
#include "raw-iter.h"
#include "raw-tail.h"
#include "raw.h"
#include "raw-py.h"
#include "segments.h"

#define SEG_OUT_BUF ((size_t)1 << 20)
#define SEG_PAGE ((uint64_t)4096)
/* Holes end on this boundary (see seg_punch). */
#define SEG_PUNCH_ALIGN ((uint64_t)2 << 20)
/* A window is cut this long after its end once nothing more has come: a
 * record reserved before the end and published after lands in the next. */
#define SEG_GRACE_NS 200000000ull
#define SEG_TID_BITS ((uint32_t)1 << 22)   /* thread ids go up to 2^22 */

struct seg_thread {
	uint32_t tid;              /* 0: a free slot */
	char name[16];
	uint64_t cpu;              /* CPU clock at its last sample, or its start */
};

struct seg_stack {
	uint32_t id;               /* 0: a free slot */
	uint32_t size;
	size_t off;                /* its record in the arena */
	uint64_t seg;              /* the segment it was last written to */
};

struct seg {
	char live[PATH_MAX];
	char stem[PATH_MAX];
	void (*say)(const char *fmt, ...);
	uint64_t split_ns;
	unsigned keep;
	int fd;                    /* the live trace, once it has a header */
	struct raw_tail tail;
	struct raw_head head;
	unsigned char *header;     /* its header_size bytes */
	uint64_t bound;            /* the end of the current segment */
	uint64_t punched;          /* given back to the file system below */
	int punch_failed;
	uint64_t last_time;        /* of the last record with one */
	uint64_t now;              /* CLOCK_MONOTONIC, as of the last call */

	/* the current segment */
	uint64_t n;                /* its number */
	uint64_t start;
	int out;                   /* its part file, -1 if it could not be made */
	char part[PATH_MAX + 64];
	unsigned char *obuf;
	size_t olen;
	int oerr;                  /* errno of a failed write */
	uint64_t samples, lost;
	struct raw_cpu *acct;      /* its CPU accounting, for the summary */
	uint64_t wall_ns;          /* its samples' weights (wall-clock traces) */

	/* what every segment needs: the threads alive, every mapping, every
	 * stack record */
	struct seg_thread *threads;
	size_t thread_slots, nthreads;
	unsigned char *maps;
	size_t maps_len, maps_cap;
	struct seg_stack *stacks;
	size_t stack_slots, nstacks;
	unsigned char *arena;
	size_t arena_len, arena_cap;

	/* numbered after the run's start (seg_align), not the trace's */
	uint64_t align_t0, min_n;
	int no_punch;

	/* the trace's RAW_EXEC and RAW_CHILD records, as they were: what
	 * the run's accounting of its processes needs (seg_procs) */
	unsigned char *procs;
	size_t procs_len, procs_cap;

	struct seg_summary sum;
	uint8_t *tids;             /* a bit per thread id seen */
	uint64_t lost_written;     /* lost counts in the segments so far */
	/* the segments that could not be written since the last one that
	 * was: the next one's segment record says so */
	uint64_t pend_missing, pend_samples;
	int pend_error;
};

/* ---- tables ---- */

static size_t seg_hash(uint32_t key, size_t slots)
{
	return (key * 0x9e3779b1u) & (slots - 1);
}

static struct seg_thread *seg_thread_find(struct seg *s, uint32_t tid)
{
	size_t i;

	if (s->thread_slots == 0)
		return NULL;
	for (i = seg_hash(tid, s->thread_slots); s->threads[i].tid != 0;
	     i = (i + 1) & (s->thread_slots - 1))
		if (s->threads[i].tid == tid)
			return &s->threads[i];
	return NULL;
}

static struct seg_thread *seg_thread_add(struct seg *s, uint32_t tid)
{
	size_t i;

	if ((s->nthreads + 1) * 2 > s->thread_slots) {
		size_t n = s->thread_slots ? s->thread_slots * 2 : 64;
		struct seg_thread *t = calloc(n, sizeof(*t)), *old = s->threads;

		if (t == NULL)
			return NULL;
		for (size_t k = 0; k < s->thread_slots; k++) {
			if (old[k].tid == 0)
				continue;
			for (i = seg_hash(old[k].tid, n); t[i].tid != 0; i = (i + 1) & (n - 1))
				;
			t[i] = old[k];
		}
		free(old);
		s->threads = t;
		s->thread_slots = n;
	}
	for (i = seg_hash(tid, s->thread_slots); s->threads[i].tid != 0;
	     i = (i + 1) & (s->thread_slots - 1))
		;
	memset(&s->threads[i], 0, sizeof(s->threads[i]));
	s->threads[i].tid = tid;
	s->nthreads++;
	return &s->threads[i];
}

/* Removes t, moving back the entries after it that it was in the way of. */
static void seg_thread_remove(struct seg *s, struct seg_thread *t)
{
	size_t mask = s->thread_slots - 1, i = (size_t)(t - s->threads), j = i;

	s->threads[i].tid = 0;
	s->nthreads--;
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (s->threads[j].tid == 0)
			return;
		home = seg_hash(s->threads[j].tid, s->thread_slots);
		/* j may stay where it is if its home lies cyclically in (i, j] */
		if (i <= j ? (home > i && home <= j) : (home > i || home <= j))
			continue;
		s->threads[i] = s->threads[j];
		s->threads[j].tid = 0;
		i = j;
	}
}

static struct seg_stack *seg_stack_find(struct seg *s, uint32_t id)
{
	size_t i;

	if (s->stack_slots == 0)
		return NULL;
	for (i = seg_hash(id, s->stack_slots); s->stacks[i].id != 0;
	     i = (i + 1) & (s->stack_slots - 1))
		if (s->stacks[i].id == id)
			return &s->stacks[i];
	return NULL;
}

/* Appends n bytes to a growing array.  Returns where, or NULL. */
static unsigned char *seg_append(unsigned char **a, size_t *len, size_t *cap, const void *p,
				 size_t n)
{
	if (*len + n > *cap) {
		size_t c = *cap ? *cap * 2 : 65536;
		unsigned char *b;

		while (c < *len + n)
			c *= 2;
		b = realloc(*a, c);
		if (b == NULL)
			return NULL;
		*a = b;
		*cap = c;
	}
	memcpy(*a + *len, p, n);
	*len += n;
	return *a + *len - n;
}

/* Keeps a stack record.  Returns its entry, or NULL (out of memory, or an
 * id seen before: the first is kept, as readers do). */
static struct seg_stack *seg_stack_add(struct seg *s, const struct raw_record *r)
{
	struct raw_stack st;
	size_t i;

	memcpy(&st, r->data, sizeof(st));
	if (st.id == 0 || seg_stack_find(s, st.id) != NULL)
		return NULL;
	if ((s->nstacks + 1) * 2 > s->stack_slots) {
		size_t n = s->stack_slots ? s->stack_slots * 2 : 1024;
		struct seg_stack *t = calloc(n, sizeof(*t)), *old = s->stacks;

		if (t == NULL)
			return NULL;
		for (size_t k = 0; k < s->stack_slots; k++) {
			if (old[k].id == 0)
				continue;
			for (i = seg_hash(old[k].id, n); t[i].id != 0; i = (i + 1) & (n - 1))
				;
			t[i] = old[k];
		}
		free(old);
		s->stacks = t;
		s->stack_slots = n;
	}
	if (seg_append(&s->arena, &s->arena_len, &s->arena_cap, r->data, r->size) == NULL)
		return NULL;
	for (i = seg_hash(st.id, s->stack_slots); s->stacks[i].id != 0;
	     i = (i + 1) & (s->stack_slots - 1))
		;
	s->stacks[i] = (struct seg_stack){ st.id, r->size, s->arena_len - r->size, 0 };
	s->nstacks++;
	return &s->stacks[i];
}

static void seg_put(struct seg *s, const void *p, size_t n);

/* Writes the stack st into the segment s->n, once: a RAW_STACK_PYREF
 * after the stack whose native frames it takes (a segment is read
 * alone). */
static void seg_stack_use(struct seg *s, struct seg_stack *st)
{
	struct raw_stack_pyref ref;

	if (st == NULL || st->seg == s->n)
		return;
	memcpy(&ref, s->arena + st->off, sizeof(ref.h));
	if (ref.h.type == RAW_STACK_PYREF && st->size >= sizeof(ref)) {
		struct seg_stack *b;

		memcpy(&ref, s->arena + st->off, sizeof(ref));
		b = ref.base != ref.id ? seg_stack_find(s, ref.base) : NULL;
		if (b != NULL && b->seg != s->n) {
			memcpy(&ref.h, s->arena + b->off, sizeof(ref.h));
			if (ref.h.type != RAW_STACK_PYREF) {
				seg_put(s, s->arena + b->off, b->size);
				b->seg = s->n;
			}
		}
	}
	seg_put(s, s->arena + st->off, st->size);
	st->seg = s->n;
}

/* Is this mapping record one kept already (same range, offset, file)? */
static int seg_mapping_known(const struct seg *s, const struct raw_record *r)
{
	struct raw_mapping m, k;
	size_t off = 0;

	memcpy(&m, r->data, sizeof(m));
	while (off < s->maps_len) {
		struct raw_rec h;

		memcpy(&h, s->maps + off, sizeof(h));
		if (h.type != RAW_MAPPING) { /* the RAW_KERNEL record */
			off += h.size;
			continue;
		}
		memcpy(&k, s->maps + off, sizeof(k));
		if (k.start == m.start && k.end == m.end && k.pgoff == m.pgoff &&
		    k.path_len == m.path_len && k.build_id_len == m.build_id_len &&
		    memcmp(k.build_id, m.build_id, sizeof(k.build_id)) == 0 &&
		    memcmp(s->maps + off + sizeof(k), r->data + sizeof(m), m.path_len) == 0)
			return 1;
		off += h.size;
	}
	return 0;
}

static void seg_tid_seen(struct seg *s, uint32_t tid)
{
	if (tid < SEG_TID_BITS && s->tids != NULL) {
		if (!(s->tids[tid / 8] >> (tid % 8) & 1))
			s->sum.threads++;
		s->tids[tid / 8] |= (uint8_t)(1u << (tid % 8));
	} else {
		s->sum.threads++;
	}
}

/* ---- the current segment's file ---- */

const char *seg_name(const struct seg *s, uint64_t n, char *buf, size_t len)
{
	snprintf(buf, len, "%s.seg%04" PRIu64 ".raw", s->stem, n);
	return buf;
}

static void seg_flush(struct seg *s)
{
	size_t done = 0;

	while (s->out >= 0 && !s->oerr && done < s->olen) {
		ssize_t w = write(s->out, s->obuf + done, s->olen - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			s->oerr = w < 0 ? errno : EIO;
		else
			done += (size_t)w;
	}
	s->olen = 0;
}

static void seg_put(struct seg *s, const void *p, size_t n)
{
	if (s->out < 0 || s->oerr || n == 0)
		return;
	if (s->olen + n > SEG_OUT_BUF)
		seg_flush(s);
	if (n > SEG_OUT_BUF) {
		while (n > 0 && !s->oerr) {
			ssize_t w = write(s->out, p, n);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0) {
				s->oerr = w < 0 ? errno : EIO;
				break;
			}
			p = (const unsigned char *)p + w;
			n -= (size_t)w;
		}
		return;
	}
	memcpy(s->obuf + s->olen, p, n);
	s->olen += n;
}

/* Feeds a thread, exit or sample record to the segment's accounting. */
static void seg_account(struct seg *s, uint32_t type, const void *rec)
{
	if (s->acct == NULL)
		return;
	if (type == RAW_THREAD) {
		const struct raw_thread *t = rec;

		raw_cpu_thread(s->acct, t->tid, 1, t->cpu_ns);
	} else if (type == RAW_THREAD_EXIT) {
		const struct raw_thread_exit *t = rec;

		raw_cpu_exit(s->acct, t->tid, t->cpu_ns);
	}
}

static void seg_put_thread(struct seg *s, const struct seg_thread *t, uint64_t time)
{
	struct raw_thread r;

	memset(&r, 0, sizeof(r));
	r.h.type = RAW_THREAD;
	r.h.size = sizeof(r);
	r.tid = t->tid;
	r.time_ns = time;
	memcpy(r.name, t->name, sizeof(r.name));
	r.cpu_ns = t->cpu;
	seg_put(s, &r, sizeof(r));
	seg_account(s, RAW_THREAD, &r);
}

static void seg_put_exit(struct seg *s, const struct seg_thread *t, uint64_t time)
{
	struct raw_thread_exit r;

	memset(&r, 0, sizeof(r));
	r.h.type = RAW_THREAD_EXIT;
	r.h.size = sizeof(r);
	r.tid = t->tid;
	r.time_ns = time;
	r.cpu_ns = t->cpu;
	r.system_ns = RAW_UNKNOWN;
	seg_put(s, &r, sizeof(r));
	seg_account(s, RAW_THREAD_EXIT, &r);
}

/* The start of the run's segment 1 (CLOCK_MONOTONIC). */
static uint64_t seg_t0(const struct seg *s)
{
	return s->align_t0 != 0 ? s->align_t0 : s->head.h.start_monotonic_ns;
}

/* Segment s->n, which ended at end, could not be written: its samples are
 * lost, and the next segment says so. */
static void seg_lost(struct seg *s, uint64_t end)
{
	uint64_t t0 = seg_t0(s);

	s->sum.failed++;
	s->sum.samples -= s->samples;
	s->sum.lost += s->samples;
	s->sum.failed_samples += s->samples;
	if (s->sum.failed_first == 0) {
		s->sum.failed_first = s->n;
		s->sum.failed_from_ns = s->start > t0 ? s->start - t0 : 0;
	}
	s->sum.failed_last = s->n;
	s->sum.failed_to_ns = end > t0 ? end - t0 : 0;
	s->sum.failed_error = s->oerr;
	s->pend_missing++;
	s->pend_samples += s->samples;
	s->pend_error = s->oerr;
}

/* Opens segment s->n, from start: its header, the mappings, the threads
 * alive. */
static void seg_open(struct seg *s, uint64_t start)
{
	struct raw_segment g;
	struct raw_header h;
	char why[256], name[PATH_MAX + 32];

	s->start = start;
	s->samples = s->lost = s->wall_ns = 0;
	s->olen = 0;
	s->oerr = 0;
	s->acct = raw_cpu_new(s->head.h.clock == RAW_CLOCK_HEAP ? 0 : s->head.h.short_thread_us,
			      s->head.h.period_ns);
	snprintf(s->part, sizeof(s->part), "%s.part", seg_name(s, s->n, name, sizeof(name)));
	s->out = pv_outfile_open(s->part, PV_OUTFILE_TRACE_MODE, PV_OUTFILE_NEW, why, sizeof(why));
	if (s->out < 0) {
		s->oerr = errno != 0 ? errno : EIO;
		s->say("cannot write '%s': %s; segment %" PRIu64 " is lost", s->part, why, s->n);
		return;
	}
	memcpy(&h, s->header, sizeof(h));
	h.start_realtime_ns += start - h.start_monotonic_ns;
	h.start_monotonic_ns = start;
	seg_put(s, &h, sizeof(h));
	seg_put(s, s->header + sizeof(h), s->head.h.header_size - sizeof(h));
	memset(&g, 0, sizeof(g));
	g.h.type = RAW_SEGMENT;
	g.h.size = sizeof(g);
	g.number = s->n;
	g.split_ns = s->split_ns;
	g.run_start_ns = seg_t0(s);
	g.missing = s->pend_missing;
	g.missing_samples = s->pend_samples;
	g.missing_error = (uint32_t)s->pend_error;
	seg_put(s, &g, sizeof(g));
	seg_put(s, s->maps, s->maps_len);
	for (size_t i = 0; i < s->thread_slots; i++)
		if (s->threads[i].tid != 0)
			seg_put_thread(s, &s->threads[i], start);
}

/* Ends the current segment at time end: the threads still alive, the end
 * record, then the file is renamed into place.  lost_end: the samples the
 * trace's own end record says were lost in all (final), or 0. */
static void seg_close(struct seg *s, uint64_t end, uint64_t lost_end)
{
	char name[PATH_MAX + 32], old[PATH_MAX + 32];
	struct raw_cpu_summary cs;
	struct raw_end e;

	for (size_t i = 0; i < s->thread_slots; i++)
		if (s->threads[i].tid != 0)
			seg_put_exit(s, &s->threads[i], end);
	if (lost_end > s->lost_written + s->lost)
		s->lost = lost_end - s->lost_written;
	memset(&e, 0, sizeof(e));
	e.h.type = RAW_END;
	e.h.size = sizeof(e);
	e.time_ns = end;
	e.samples = s->samples;
	e.lost = s->lost;
	seg_put(s, &e, sizeof(e));
	s->lost_written += s->lost;
	s->sum.lost += s->lost;
	s->sum.samples += s->samples;
	if (s->acct != NULL) {
		raw_cpu_settle(s->acct, &cs);
		s->sum.cpu_ns += cs.cpu_ns;
		s->sum.weight_ns += s->head.h.clock == RAW_CLOCK_WALL || s->head.h.clock == RAW_CLOCK_HEAP
					    ? s->wall_ns : cs.weight_ns;
		s->sum.unsampled_ns += cs.unsampled_cpu_ns;
		s->sum.unsampled_threads += cs.unsampled_threads;
		s->sum.stretches += cs.threads;
		raw_cpu_free(s->acct);
		s->acct = NULL;
	} else {
		s->sum.weight_ns += s->wall_ns;
	}
	if (s->out >= 0) {
		seg_flush(s);
		if (close(s->out) != 0 && !s->oerr)
			s->oerr = errno;
		s->out = -1;
		seg_name(s, s->n, name, sizeof(name));
		if (!s->oerr && rename(s->part, name) != 0)
			s->oerr = errno;
		if (s->oerr) {
			s->say("cannot write '%s': %s; segment %" PRIu64 " is lost", name,
			       strerror(s->oerr), s->n);
			unlink(s->part);
		}
	}
	if (s->oerr) {
		seg_lost(s, end);
		return;
	}
	s->pend_missing = s->pend_samples = 0;
	s->pend_error = 0;
	s->sum.segments++;
	if (s->sum.first == 0)
		s->sum.first = s->n;
	s->sum.last = s->n;
	if (s->keep != 0 && s->n > s->keep) {
		unlink(seg_name(s, s->n - s->keep, old, sizeof(old)));
		if (s->sum.first < s->n - s->keep + 1)
			s->sum.first = s->n - s->keep + 1;
	}
}

/* The current segment is over at end: the next one starts there. */
static void seg_cut(struct seg *s, uint64_t end)
{
	seg_close(s, end, 0);
	s->n++;
	s->bound += s->split_ns;
	seg_open(s, end);
}

/* ---- the records ---- */

/* The time a record carries, if its type has one. */
static int seg_record_time(const struct raw_record *r, uint64_t *t)
{
	size_t off;

	switch (r->type) {
	case RAW_MAPPING: off = offsetof(struct raw_mapping, time_ns); break;
	case RAW_THREAD: off = offsetof(struct raw_thread, time_ns); break;
	case RAW_THREAD_EXIT: off = offsetof(struct raw_thread_exit, time_ns); break;
	case RAW_SAMPLE: off = offsetof(struct raw_sample, time_ns); break;
	case RAW_SAMPLE_REGS: off = offsetof(struct raw_sample_regs, time_ns); break;
	case RAW_SAMPLE_KERNEL: off = offsetof(struct raw_sample_kernel, time_ns); break;
	case RAW_END: off = offsetof(struct raw_end, time_ns); break;
	case RAW_HEAP_ALLOC: off = offsetof(struct raw_heap_alloc, time_ns); break;
	case RAW_HEAP_FREE: off = offsetof(struct raw_heap_free, time_ns); break;
	default: return 0;
	}
	memcpy(t, r->data + off, sizeof(*t));
	return 1;
}

/* A sample of thread tid that weighs weight (CPU time when running). */
static void seg_sample(struct seg *s, uint32_t tid, uint64_t weight, uint32_t flags)
{
	struct seg_thread *t = seg_thread_find(s, tid);

	if (t != NULL && (flags & RAW_SAMPLE_RUNNING))
		t->cpu += weight;
	if (s->acct != NULL && raw_cpu_sample(s->acct, tid, weight) < 0) {
		raw_cpu_free(s->acct);
		s->acct = NULL;
	}
	s->wall_ns += weight;
	s->samples++;
	seg_tid_seen(s, tid);
}

static void seg_record(struct seg *s, const struct raw_record *r)
{
	uint64_t time;

	if (seg_record_time(r, &time)) {
		/* (a time from the future, which only a corrupt record could
		 * hold, cuts nothing) */
		if (r->type != RAW_END && time <= s->now + SEG_GRACE_NS)
			while (time >= s->bound)
				seg_cut(s, s->bound);
		if (time > s->last_time)
			s->last_time = time;
	}
	switch (r->type) {
	case RAW_MAPPING:
		if (seg_mapping_known(s, r))
			return;
		seg_append(&s->maps, &s->maps_len, &s->maps_cap, r->data, r->size);
		break;
	case RAW_KERNEL:
		/* every segment says how its system time was measured */
		seg_append(&s->maps, &s->maps_len, &s->maps_cap, r->data, r->size);
		break;
	case RAW_PYTHON: {
		/* and which Python interpreter the process runs, whether its
		 * frames are read */
		struct raw_python py = { 0 };

		memcpy(&py, r->data, r->size < sizeof(py) ? r->size : sizeof(py));
		s->sum.python_unread = py.frames == RAW_PYTHON_UNREAD;
		s->sum.python_version = py.version;
		seg_append(&s->maps, &s->maps_len, &s->maps_cap, r->data, r->size);
		break;
	}
	case RAW_PYCODE:
	case RAW_PYCODES:
	case RAW_PYSTACK:
	case RAW_PYPART:
	case RAW_PYPARTS:
		/* written once per trace, each Python code object and list of
		 * frames: every later segment's stacks may name them (at most
		 * 2^16 of each, pyframes.c) */
		seg_append(&s->maps, &s->maps_len, &s->maps_cap, r->data, r->size);
		break;
	case RAW_THREAD: {
		struct raw_thread rec = { 0 };
		struct seg_thread *t;

		memcpy(&rec, r->data, r->size < sizeof(rec) ? r->size : sizeof(rec));
		t = seg_thread_find(s, rec.tid);
		if (t == NULL && (t = seg_thread_add(s, rec.tid)) != NULL)
			t->cpu = rec.cpu_ns;
		if (t != NULL)
			memcpy(t->name, rec.name, sizeof(t->name));
		seg_tid_seen(s, rec.tid);
		/* a new name of a thread alive keeps its start */
		seg_account(s, RAW_THREAD, &rec);
		break;
	}
	case RAW_THREAD_EXIT: {
		struct raw_thread_exit rec = { 0 };
		struct seg_thread *t;

		memcpy(&rec, r->data, r->size < sizeof(rec) ? r->size : sizeof(rec));
		t = seg_thread_find(s, rec.tid);
		if (t != NULL)
			seg_thread_remove(s, t);
		seg_account(s, RAW_THREAD_EXIT, &rec);
		break;
	}
	case RAW_STACK:
	case RAW_STACK_PY:
	case RAW_STACK_PYREF: { /* (its id where a RAW_STACK's is) */
		struct seg_stack *st = seg_stack_add(s, r);

		if (st != NULL)
			st->seg = s->n;
		break;
	}
	case RAW_SAMPLE: {
		struct raw_sample rec;
		struct seg_stack *st;

		raw_sample_get(r->data, r->size, &rec);
		st = rec.stack_id ? seg_stack_find(s, rec.stack_id) : NULL;
		seg_stack_use(s, st);
		seg_sample(s, rec.tid, rec.weight_ns, rec.flags);
		break;
	}
	case RAW_SAMPLE_REGS: {
		struct raw_sample_regs rec;

		memcpy(&rec, r->data, sizeof(rec));
		seg_sample(s, rec.tid, rec.weight_ns, rec.flags);
		break;
	}
	case RAW_HEAP_ALLOC: {
		/* a heap trace: its stack as a sample's, its weight the bytes
		 * it stands for (raw.h).  A block freed in a later segment is
		 * in use at the end of its own. */
		struct raw_heap_alloc rec;
		double rate = s->head.h.period_ns > 1 ? (double)s->head.h.period_ns : 1;
		struct seg_stack *st;

		memcpy(&rec, r->data, sizeof(rec));
		st = rec.stack_id ? seg_stack_find(s, rec.stack_id) : NULL;
		seg_stack_use(s, st);
		seg_sample(s, rec.tid, rate > 1 && rec.size > 0 && rec.size < (1ull << 53)
			   ? (uint64_t)((double)rec.size / -expm1(-(double)rec.size / rate)) : rec.size, 0);
		break;
	}
	case RAW_LOST: {
		struct raw_lost rec = { 0 };

		memcpy(&rec, r->data, r->size < sizeof(rec) ? r->size : sizeof(rec));
		s->lost += rec.count;
		if (rec.error)
			s->sum.lost_error = rec.error;
		break;
	}
	case RAW_EXEC:
	case RAW_CHILD:
		seg_append(&s->procs, &s->procs_len, &s->procs_cap, r->data, r->size);
		break;
	case RAW_END: {
		struct raw_end rec;

		memcpy(&rec, r->data, sizeof(rec));
		/* the segment's own end record, below */
		seg_close(s, rec.time_ns > s->start ? rec.time_ns : s->start, rec.lost);
		s->sum.ended = s->sum.finished = 1;
		return;
	}
	default:
		break;
	}
	seg_put(s, r->data, r->size);
}

/* ---- reading the trace ---- */

/* Opens the trace once the program has written its header.  Returns 1
 * then, 0 while it has not. */
static int seg_begin(struct seg *s)
{
	unsigned char buf[16384];
	ssize_t got;

	if (s->fd < 0)
		s->fd = open(s->live, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (s->fd < 0)
		return 0;
	got = pread(s->fd, buf, sizeof(buf), 0);
	if (got <= 0 || raw_iter_head(buf, (size_t)got, &s->head) != RAW_HEAD_OK)
		return 0;
	s->header = malloc(s->head.h.header_size);
	if (s->header == NULL ||
	    raw_tail_init(&s->tail, s->fd, s->head.h.header_size, s->head.arch.nregs, 1) != 0) {
		free(s->header);
		s->header = NULL;
		return 0;
	}
	memcpy(s->header, buf, s->head.h.header_size);
	s->sum.started = 1;
	s->sum.clock = s->head.h.clock;
	s->punched = (s->head.h.header_size + SEG_PAGE - 1) / SEG_PAGE * SEG_PAGE;
	s->n = 1;
	s->bound = s->head.h.start_monotonic_ns + s->split_ns;
	if (s->align_t0 != 0) {
		uint64_t start = s->head.h.start_monotonic_ns;

		s->n = start > s->align_t0 ? (start - s->align_t0) / s->split_ns + 1 : 1;
		if (s->n < s->min_n)
			s->n = s->min_n;
		s->bound = s->align_t0 + s->n * s->split_ns;
	}
	seg_open(s, s->head.h.start_monotonic_ns);
	return 1;
}

/* Gives back the disk space of what was copied.  The hole ends on a 2 MiB
 * boundary, not at the last page copied: the page cache holds a file in
 * folios of up to 2 MiB, and a hole that ends inside a folio the program
 * is still writing leaves that folio in place; the program's next write
 * to it allocates its punched blocks again, zeros, a few pages left on
 * disk at every hole (measured: 14 MB in ten minutes). */
static void seg_punch(struct seg *s)
{
	uint64_t to = raw_tail_offset(&s->tail) / SEG_PUNCH_ALIGN * SEG_PUNCH_ALIGN;

	if (to <= s->punched || s->punch_failed || s->no_punch)
		return;
	if (fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)s->punched,
		      (off_t)(to - s->punched)) != 0) {
		s->punch_failed = 1;
		s->say("cannot free the disk space of '%s' as it is cut (%s): it keeps all of the "
		       "trace until the end", s->live, strerror(errno));
		return;
	}
	s->punched = to;
}

/* Reads every record there is now.  Returns the walk's stop. */
static int seg_read(struct seg *s)
{
	struct raw_record r;
	int next;

	while (!s->sum.ended && (next = raw_tail_next(&s->tail, &r)) == RAW_NEXT_RECORD)
		seg_record(s, &r);
	return s->sum.ended ? RAW_NEXT_ENDED : next;
}

static uint64_t seg_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int seg_poll(struct seg *s, uint64_t now)
{
	s->now = now;
	if (s->sum.ended)
		return 1;
	if (!s->sum.started && !seg_begin(s))
		return 0;
	seg_read(s);
	/* the window is over and nothing more came: a quiet program still
	 * gets its segments */
	while (!s->sum.ended && now >= s->bound + SEG_GRACE_NS)
		seg_cut(s, s->bound);
	seg_flush(s);
	seg_punch(s);
	return s->sum.ended;
}

void seg_finish(struct seg *s)
{
	int next;

	s->now = seg_clock();
	if (s->sum.ended || (!s->sum.started && !seg_begin(s)))
		return;
	next = seg_read(s);
	if (!s->sum.ended) {
		/* the program could not finish its trace: the last segment
		 * ends at its last record */
		if (next != RAW_NEXT_ZEROS && next != RAW_NEXT_DONE)
			s->sum.bad = 1;
		seg_close(s, s->last_time > s->start ? s->last_time : s->start, 0);
		s->sum.ended = 1;
	}
	seg_punch(s);
}

void seg_clear_old(const struct seg *s)
{
	const char *slash = strrchr(s->stem, '/'), *base = slash ? slash + 1 : s->stem;
	char dir[PATH_MAX], path[PATH_MAX * 2];
	size_t blen = strlen(base);
	struct dirent *de;
	struct stat st;
	DIR *d;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - s->stem + (slash == s->stem)) : 1,
		 slash ? s->stem : ".");
	d = opendir(dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		const char *p = de->d_name + blen;

		/* "<base>.seg<digits>.raw", and ".part" after it */
		if (strncmp(de->d_name, base, blen) != 0 || strncmp(p, ".seg", 4) != 0)
			continue;
		p += 4;
		if (*p < '0' || *p > '9')
			continue;
		while (*p >= '0' && *p <= '9')
			p++;
		if (strcmp(p, ".raw") != 0 && strcmp(p, ".raw.part") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
			unlink(path);
	}
	closedir(d);
}

void seg_align(struct seg *s, uint64_t t0, uint64_t min_n, int punch)
{
	s->align_t0 = t0;
	s->min_n = min_n;
	s->no_punch = !punch;
}

int seg_where(const struct seg *s, uint64_t *t0, uint64_t *n)
{
	if (!s->sum.started)
		return 0;
	*t0 = s->align_t0 != 0 ? s->align_t0 : s->head.h.start_monotonic_ns;
	*n = s->n;
	return 1;
}

const char *seg_program(const struct seg *s)
{
	return s->header != NULL ? (const char *)s->header + s->head.fixed_size : "";
}

void seg_summary(const struct seg *s, struct seg_summary *out)
{
	*out = s->sum;
}

struct seg *seg_new(const char *live, uint64_t split_ns, unsigned keep,
		    void (*say)(const char *fmt, ...))
{
	struct seg *s = calloc(1, sizeof(*s));
	size_t len = strlen(live);

	if (s == NULL)
		return NULL;
	s->obuf = malloc(SEG_OUT_BUF);
	s->tids = calloc(SEG_TID_BITS / 8, 1);
	if (s->obuf == NULL) {
		seg_free(s);
		return NULL;
	}
	snprintf(s->live, sizeof(s->live), "%s", live);
	if (len > 4 && strcmp(live + len - 4, ".raw") == 0)
		len -= 4;
	snprintf(s->stem, sizeof(s->stem), "%.*s", (int)len, live);
	s->split_ns = split_ns;
	s->keep = keep;
	s->say = say;
	s->fd = -1;
	s->out = -1;
	return s;
}

void seg_free(struct seg *s)
{
	if (s == NULL)
		return;
	if (s->out >= 0) {
		close(s->out);
		unlink(s->part);
	}
	if (s->sum.started)
		raw_tail_free(&s->tail);
	if (s->fd >= 0)
		close(s->fd);
	raw_cpu_free(s->acct);
	free(s->header);
	free(s->obuf);
	free(s->threads);
	free(s->maps);
	free(s->procs);
	free(s->stacks);
	free(s->arena);
	free(s->tids);
	free(s);
}

const unsigned char *seg_procs(const struct seg *s, size_t *len)
{
	*len = s->procs_len;
	return s->procs;
}
