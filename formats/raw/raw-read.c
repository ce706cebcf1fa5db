/* raw-read.c - read a profview raw trace into the profile model
 *
 * The trace is read in up to three passes over the records (raw-iter.h):
 * the first checks the framing and collects mappings, threads and the end
 * record; the second, in a trace that has them, stores the stack table;
 * the third turns samples into profile samples (a sample may refer to a
 * stack that was written after it).  Every walk stops at the first record
 * that does not fit; everything before it is kept.
 *
 * Register samples (DWARF mode) are unwound by the analyzer's unwinder.
 * Its walk, pure, takes them a batch at a time ahead of the third pass, in
 * as many threads as there are CPUs (up to WALK_THREADS), each over a fixed
 * share of the batch, into frames of its own; the pass then takes each
 * sample's frames in order, and asks the unwinder's unwind, in this
 * thread, for the samples the walk could not do.  So what a sample gets
 * does not depend on the threads.
 *
 * A sample followed by a RAW_SAMPLE_KERNEL record (raw.h) had system time.
 * Each sample stays whole and in one mode, as a perf sample is: it is a
 * kernel sample (flagged PV_SAMPLE_KERNEL; the kernel frames, or one
 * "[kernel]" frame when they are not known, on top of its user stack) when
 * its thread's system time owed to its samples is at least half its weight
 * (one_mode), else a user sample.  So counts, times and their noise go
 * together, and a thread's kernel samples add up to its system time within
 * half a sample.  The code keeps the general form, a user and a kernel
 * part of one record (the CPU time accounting, raw-cpu.h, sees the
 * record's whole weight once and splits what it settles on in the
 * record's proportion), of which one_mode leaves one.
 *
 * A trace mapped from a finished file (raw_read_mapped) gives its pages
 * back as each pass goes (MADV_DONTNEED, a window at a time): memory
 * stays bounded however large the trace.
 *
 * This file: the passes.  Each sample is added in raw-samples.c, the
 * stack table is in raw-stacks.c, the register samples and the unwind
 * check in raw-unwind.c, a heap trace's records in raw-heap.c, the walk
 * of the records and the pages given back in raw-reader.c, the processes
 * of a run in raw-run.c (raw-reader.h).
 */
#include "raw-python.h"
#include "raw-reader.h"
#include "raw-samples.h"
#include "raw-stacks.h"
#include "raw-unwind.h"
#include "error.h"
#include "merge.h"
#include "raw-cpu.h"
#include "raw-heap.h"
#include "raw-iter.h"
#include "raw.h"
#include "raw-py.h"
#include "util.h"

#include <endian.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Times past this many nanoseconds (2^62: a wall clock in the year 2116,
 * a trace of 146 years) are damage: a start is taken as unknown, a span
 * cut to it, so that sums of them cannot overflow. */
#define RD_TIME_MAX ((uint64_t)1 << 62)

#if __BYTE_ORDER != __LITTLE_ENDIAN
#error "the raw reader assumes a little-endian host"
#endif

bool raw_detect(const unsigned char *buf, size_t len)
{
	return len >= RAW_MAGIC_LEN && memcmp(buf, RAW_MAGIC, RAW_MAGIC_LEN) == 0;
}

static const char *type_name(uint32_t t)
{
	switch (t) {
	case RAW_MAPPING: return "mapping";
	case RAW_THREAD: return "thread";
	case RAW_STACK: return "stack";
	case RAW_SAMPLE: return "sample";
	case RAW_LOST: return "lost";
	case RAW_THREAD_EXIT: return "thread-exit";
	case RAW_END: return "end";
	case RAW_SAMPLE_REGS: return "sample-regs";
	case RAW_CHECK_FRAMES: return "check-frames";
	case RAW_SAMPLE_KERNEL: return "sample-kernel";
	case RAW_KERNEL: return "kernel";
	case RAW_SEGMENT: return "segment";
	case RAW_HEAP_ALLOC: return "heap-alloc";
	case RAW_HEAP_FREE: return "heap-free";
	case RAW_COLLECTOR: return "collector";
	case RAW_PYCODE: return "pycode";
	case RAW_PYSTACK: return "pystack";
	case RAW_SAMPLE_PY: return "sample-py";
	case RAW_STACK_PY: return "stack-py";
	case RAW_STACK_PYREF: return "stack-pyref";
	case RAW_PYPART: return "pypart";
	case RAW_PYCODES: return "pycodes";
	case RAW_PYRUNCODES: return "pyruncodes";
	case RAW_PYRUNPARTS: return "pyrunparts";
	case RAW_PYPARTS: return "pyparts";
	case RAW_PYTHON: return "python";
	default: return "unknown";
	}
}

static bool all_zero(const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return false;
	return true;
}

static int first_record(struct reader *rd, const struct raw_record *rec);

/* Walk the framing; counts the whole records, says in cut why reading
 * stopped early, if it did, and how many bytes that drops.  Each whole
 * record is one of the first pass too (first_record). */
static int check_framing(struct reader *rd)
{
	struct raw_iter it;
	struct raw_record r;
	enum raw_next next;

	rd_records(rd, &it);
	while ((next = raw_iter_next(&it, &r)) == RAW_NEXT_RECORD) {
		if (first_record(rd, &r) < 0)
			return -1;
		if ((it.nrecords & 4095) == 0)
			rd_release(rd, it.off);
	}
	rd_release(rd, rd->len);
	rd->nrecords = it.nrecords;
	switch (next) {
	case RAW_NEXT_RECORD:
	case RAW_NEXT_DONE:
		break;
	case RAW_NEXT_CUT_HEADER:
		snprintf(rd->cut, sizeof rd->cut, "cut off at byte %zu inside a record header", r.off);
		break;
	case RAW_NEXT_ZEROS:
		/* End of the written data of a trace that was not finished,
		 * or a record reserved but never published. */
		snprintf(rd->cut, sizeof rd->cut, "unpublished record at byte %zu", r.off);
		break;
	case RAW_NEXT_BAD_SIZE:
		snprintf(rd->cut, sizeof rd->cut, "record %" PRIu64 " at byte %zu has a bad size (%u)",
			 rd->nrecords + 1, r.off, r.size);
		break;
	case RAW_NEXT_CUT:
		snprintf(rd->cut, sizeof rd->cut,
			 "cut off at byte %zu: record %" PRIu64 " (%s) needs %u bytes, %zu are left",
			 r.off, rd->nrecords + 1, type_name(r.type), r.size, rd->len - r.off);
		break;
	case RAW_NEXT_MALFORMED:
		snprintf(rd->cut, sizeof rd->cut, "record %" PRIu64 " (%s) at byte %zu is malformed",
			 rd->nrecords + 1, type_name(r.type), r.off);
		break;
	case RAW_NEXT_ENDED:
		rd->have_end = true;
		snprintf(rd->cut, sizeof rd->cut, "data after the end record at byte %zu", r.off);
		break;
	}
	rd->p->dropped_bytes = all_zero(rd->buf + it.off, rd->len - it.off) ? 0 : rd->len - it.off;
	return 0;
}

static void hex(char *out, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

static int add_mapping(struct reader *rd, const struct raw_mapping *m)
{
	struct pv_profile *p = rd->p;
	struct pv_mapping pm = { 0 };
	char id[2 * sizeof m->build_id + 1];
	const char *path = (const char *)(m + 1);
	size_t plen = strnlen(path, m->path_len);

	pm.start = m->start;
	pm.limit = m->end;
	pm.offset = m->pgoff;
	pm.file = pv_intern(p, path, plen);
	hex(id, m->build_id, m->build_id_len);
	pm.build_id = pv_intern_str(p, id);
	if (pm.file == PV_NONE || pm.build_id == PV_NONE)
		return -1;
	pm.kind = pv_mapping_kind_of(pv_str(p, pm.file));
	if (pm.start >= pm.limit)
		return 0; /* nothing to map */
	/* The collector lists mappings at start and again at the end. */
	for (size_t i = 0; i < p->nmappings; i++) {
		const struct pv_mapping *o = &p->mappings[i];
		if (o->start == pm.start && o->limit == pm.limit && o->offset == pm.offset &&
		    o->file == pm.file)
			return 0;
	}
	return pv_add_mapping(p, &pm) == PV_NONE ? -1 : 0;
}

/* The first pass's look at one record. */
static int first_record(struct reader *rd, const struct raw_record *recp)
{
	struct pv_profile *p = rd->p;
	const struct raw_record rec = *recp;
	const unsigned char *r = rec.data;

	switch (rec.type) {
	case RAW_SAMPLE_REGS:
		rd->regs_samples++;
		break;
	case RAW_STACK:
	case RAW_STACK_PY:
	case RAW_STACK_PYREF:
		rd->nstack_records++;
		break;
	case RAW_SAMPLE_KERNEL:
		rd->nkernel++;
		break;
	case RAW_PYCODE:
		if (rd_python_code(rd, r, rec.size, rec.off) < 0)
			return -1;
		break;
	case RAW_PYCODES:
		if (rd_python_codes(rd, r, rec.size, rec.off) < 0)
			return -1;
		break;
	case RAW_PYRUNCODES:
		if (rd_python_run_codes(rd, r, rec.size, rec.off) < 0)
			return -1;
		break;
	case RAW_PYRUNPARTS:
		if (rd_python_run_parts(rd, r, rec.size, rec.off) < 0)
			return -1;
		break;
	case RAW_PYSTACK:
		if (rd_python_stack(rd, r, rec.off) < 0)
			return -1;
		break;
	case RAW_PYPART:
		if (rd_python_part(rd, r, rec.off) < 0)
			return -1;
		break;
	case RAW_PYPARTS:
		if (rd_python_parts(rd, r, rec.size, rec.off) < 0)
			return -1;
		break;
	case RAW_KERNEL: {
		const struct raw_kernel *k = (const void *)r;
		rd->system_known = true;
		p->sampler = k->engine == RAW_ENGINE_PERF    ? PV_SAMPLER_PERF
			     : k->engine == RAW_ENGINE_POSIX ? PV_SAMPLER_POSIX
							     : PV_SAMPLER_UNKNOWN;
		memcpy(rd->boot_id, k->boot_id, sizeof k->boot_id);
		rd->boot_id[sizeof k->boot_id] = '\0';
		break;
	}
	case RAW_MAPPING:
		if (add_mapping(rd, (const void *)r) < 0)
			return -1;
		break;
	case RAW_THREAD: {
		const struct raw_thread *t = (const void *)r;
		uint32_t name = pv_intern(p, t->name, strnlen(t->name, sizeof t->name));
		if (name == PV_NONE || pv_get_thread(p, t->tid, name) == PV_NONE)
			return -1;
		break;
	}
	case RAW_THREAD_EXIT: {
		const struct raw_thread_exit *t = (const void *)r;
		uint32_t i = rd_thread_index(rd, t->tid);
		if (i == PV_NONE)
			return -1;
		p->threads[i].cpu_ns = (int64_t)t->cpu_ns;
		break;
	}
	case RAW_LOST: {
		struct raw_lost l = { 0 };
		memcpy(&l, r, rec.size < sizeof l ? rec.size : sizeof l);
		/* a damaged count must not wrap the sum: it saturates */
		if (__builtin_add_overflow(rd->lost_records, l.count, &rd->lost_records))
			rd->lost_records = UINT64_MAX;
		if (l.error && raw_lost_cause(l.error) &&
		    (p->lost_cause = pv_intern_str(p, raw_lost_cause(l.error))) == PV_NONE)
			return -1;
		break;
	}
	case RAW_SEGMENT: {
		const struct raw_segment *g = (const void *)r;
		struct pv_segment seg = { .run_key = g->run_start_ns, .split_ns = g->split_ns,
					  .number = g->number, .missing = g->missing,
					  .missing_samples = g->missing_samples };
		const char *why = raw_lost_cause(g->missing_error);
		if (g->number == 0 || g->split_ns == 0 || g->missing >= g->number)
			break; /* not a segment that can be placed: ignored */
		/* a sample weighs the CPU time since its thread's previous
		 * one, which may be in an earlier segment of the run */
		if (g->run_start_ns < rd->began)
			rd->began = g->run_start_ns;
		if (why && (seg.missing_cause = pv_intern_str(p, why)) == PV_NONE)
			return -1;
		if (pv_add_segment(p, &seg) < 0) {
			pv_oom();
			return -1;
		}
		break;
	}
	case RAW_PYTHON: {
		const struct raw_python *py = (const void *)r;

		if (py->frames == RAW_PYTHON_UNREAD) {
			if (!p->python_unread)
				p->python_unread_version = py->version;
			pv_python_unread_add(p, p->pid, true);
		}
		if (py->frames == RAW_PYTHON_READ && p->python_read++ == 0) {
			p->python_read_version = py->version;
			p->python_read_micro = py->micro;
			p->python_read_offsets = py->offsets;
		}
		break;
	}
	case RAW_COLLECTOR: {
		const struct raw_collector *c = (const void *)r;
		uint64_t ns = raw_collector_ns(c);

		if (c->start_ns > INT64_MAX || c->tables_ns > INT64_MAX || c->handler_ns > INT64_MAX ||
		    c->end_ns > INT64_MAX || c->helpers_ns > INT64_MAX || ns > INT64_MAX ||
		    __builtin_add_overflow(p->collector_cpu_ns, (int64_t)ns, &p->collector_cpu_ns))
			p->collector_cpu_ns = INT64_MAX;
		break;
	}
	case RAW_END: {
		const struct raw_end *e = (const void *)r;
		rd->end_time = e->time_ns;
		rd->lost_end = e->lost;
		break;
	}
	default:
		break;
	}
	return 0;
}

/* Walks samples [lo, hi) of the batch into pool k. */
/* A frame-pointer sample: its stack stored by id, or inline. */
static int fp_sample(struct reader *rd, const unsigned char *r, uint32_t size,
		     const struct raw_sample_kernel *k)
{
	struct pv_sample ps = { 0 };
	bool cand = false;
	struct raw_sample sample;
	const struct raw_sample *s = &sample;

	raw_sample_get(r, size, &sample);
	if (s->stack_id) {
		const struct stack_ref *ref = rd_stack_slot(rd, s->stack_id);
		if (!ref || !ref->id) {
			rd->unresolved++;
			return 0;
		}
		ps.loc_off = ref->off;
		ps.nlocs = ref->n;
		cand = ref->candidate;
	} else {
		ps.loc_off = rd_store_frames(rd, r + sizeof *s, s->nframes, &cand);
		if (ps.loc_off == UINT32_MAX)
			return -1;
		ps.nlocs = rd->nlocs;
	}
	if (cand)
		ps.flags |= PV_SAMPLE_LEAF_CANDIDATE;
	return rd_add_sample(rd, &ps, s->tid, s->flags, s->weight_ns, s->time_ns, k);
}

/* A thread record, for the CPU time accounting: the thread's CPU time
 * before profiling started for it, where the record says. */
static int thread_record(struct reader *rd, const unsigned char *r, uint32_t size)
{
	struct raw_thread t = { 0 };

	memcpy(&t, r, size < sizeof t ? size : sizeof t);
	if (raw_cpu_thread(rd->cpu, t.tid, size >= sizeof t, t.cpu_ns) < 0)
		return pv_oom();
	return 0;
}

/* The kernel record of the sample of thread tid at time that it has just
 * read (the record right after it: raw.h), or NULL. */
static const struct raw_sample_kernel *kernel_record(const struct reader *rd,
						     const struct raw_iter *it, uint32_t tid,
						     uint64_t time)
{
	struct raw_iter ahead = *it;
	struct raw_record next;
	struct raw_sample_kernel k;

	if (rd->nkernel == 0 || raw_iter_next(&ahead, &next) != RAW_NEXT_RECORD ||
	    next.type != RAW_SAMPLE_KERNEL)
		return NULL;
	memcpy(&k, next.data, sizeof k);
	return k.tid == tid && k.time_ns == time ? (const void *)next.data : NULL;
}

static int sample_pass(struct reader *rd)
{
	struct raw_iter it;
	struct raw_record rec;

	rd_records(rd, &it);
	while (raw_iter_next(&it, &rec) == RAW_NEXT_RECORD) {
		const unsigned char *r = rec.data;
		int ret = 0;

		/* behind the walks ahead (walk_fill), which read up to a
		 * batch further */
		if ((it.nrecords & 4095) == 0)
			rd_release(rd, rec.off > RELEASE_WINDOW ? rec.off - RELEASE_WINDOW : 0);
		rd->rec_size = rec.size;
		if (rd->heap) {
			ret = rd_heap_record(rd, &rec);
		} else if (rec.type == RAW_SAMPLE_REGS) {
			const struct raw_sample_regs *s = (const void *)r;
			ret = rd_regs_sample(rd, s, &it, &rec, kernel_record(rd, &it, s->tid, s->time_ns));
		} else if (rec.type == RAW_SAMPLE) {
			struct raw_sample s;
			raw_sample_get(r, rec.size, &s);
			ret = fp_sample(rd, r, rec.size, kernel_record(rd, &it, s.tid, s.time_ns));
		}
		else if (rec.type == RAW_CHECK_FRAMES)
			rd_check_record(rd, (const void *)r);
		else if (rec.type == RAW_THREAD && rd->cpu)
			ret = thread_record(rd, r, rec.size);
		else if (rec.type == RAW_THREAD_EXIT && rd->cpu)
			ret = raw_cpu_exit(rd->cpu, ((const struct raw_thread_exit *)r)->tid,
					   ((const struct raw_thread_exit *)r)->cpu_ns) < 0 ? pv_oom() : 0;
		if (ret < 0)
			return -1;
	}
	rd_release(rd, rd->len);
	return 0;
}

/* rd->who: the file, and the process by its pid and program.  A process
 * of a run is named "RUN, pid PID" (raw-run.c): the pid is said once. */
static void rd_set_who(struct reader *rd, uint32_t pid)
{
	const char *exe = pv_str(rd->p, rd->p->program), *base = strrchr(exe, '/');
	char tail[32];
	size_t n = strlen(rd->name), k = (size_t)snprintf(tail, sizeof tail, ", pid %" PRIu32, pid);

	if (n > k && strcmp(rd->name + n - k, tail) == 0)
		n -= k;
	snprintf(rd->who, sizeof rd->who, "'%.*s': pid %" PRIu32 " (%.64s)", (int)(n < 256 ? n : 256),
		 rd->name, pid, base ? base + 1 : exe);
}

static int read_header(struct reader *rd)
{
	const struct raw_header *h = &rd->head.h;
	const struct raw_arch *a = &rd->head.arch;
	struct pv_profile *p = rd->p;
	char say[160];

	switch (raw_iter_head(rd->buf, rd->len, &rd->head)) {
	case RAW_HEAD_OK:
		break;
	case RAW_HEAD_NOT_RAW:
		return pv_error("'%s': not a profview raw trace (bad magic)", rd->name);
	case RAW_HEAD_SHORT:
		return pv_error("'%s': trace is cut off inside its %u-byte header (%zu bytes)",
				rd->name, rd->head.fixed_size, rd->len);
	case RAW_HEAD_VERSION:
		return pv_error("'%s': raw trace format version %u is not supported (this profview reads versions %d to %d)%s",
				rd->name, h->version, RAW_VERSION_MIN, RAW_VERSION,
				h->version > RAW_VERSION ? "; use a newer profview" : "");
	case RAW_HEAD_MACHINE:
		return pv_error("'%s': %s", rd->name, raw_iter_machine_say(say, sizeof say, a->machine));
	case RAW_HEAD_REGS:
		if (a->regs != RAW_REGS_DWARF)
			return pv_error("'%s': registers in a numbering this profview does not know (%u); use a newer profview",
					rd->name, a->regs);
		return pv_error("'%s': corrupt header (%u registers a sample, expected %d to %d)", rd->name,
				a->nregs, RAW_NREGS, RAW_MAX_REGS);
	case RAW_HEAD_CORRUPT:
		return pv_error("'%s': corrupt header (header size %u, path length %u)", rd->name,
				h->header_size, h->exe_len);
	case RAW_HEAD_CUT:
		return pv_error("'%s': trace is cut off inside its header (%zu of %u bytes)", rd->name,
				rd->len, h->header_size);
	}
	rd->data_start = h->header_size;
	p->program = pv_intern(p, (const char *)rd->buf + rd->head.fixed_size,
			       strnlen((const char *)rd->buf + rd->head.fixed_size, h->exe_len));
	p->source_format = pv_intern_str(p, "profview raw trace");
	p->pid = h->pid;
	/* (a start past 2^62 ns, the year 2116, is damage: unknown) */
	p->time_ns = h->start_realtime_ns < RD_TIME_MAX ? (int64_t)h->start_realtime_ns : 0;
	p->timed = true;
	p->period = (int64_t)h->period_ns;
	rd->short_us = h->short_thread_us;
	rd_set_who(rd, h->pid);
	rd->start_mono = rd->began = h->start_monotonic_ns;
	rd->fp_candidate = h->unwind == RAW_UNWIND_FP;
	rd->wall = h->clock == RAW_CLOCK_WALL;
	if (h->clock == RAW_CLOCK_HEAP) {
		/* (0 in the traces of collectors before the flags) */
		p->heap_since_attach = (h->heap_flags & RAW_HEAP_SINCE_ATTACH) != 0;
		if (!(rd->heap = raw_heap_new(p, h->period_ns)))
			return -1;
		rd->v_count = 0;
		return p->program == PV_NONE ? -1 : 0;
	}
	rd->v_count = pv_add_value_type(p, "samples", "count");
	rd->v_cpu = pv_add_value_type(p, h->clock == RAW_CLOCK_WALL ? "wall" : "cpu", "nanoseconds");
	p->period_type.type = pv_intern_str(p, h->clock == RAW_CLOCK_WALL ? "wall" : "cpu");
	p->period_type.unit = pv_intern_str(p, "nanoseconds");
	if (p->program == PV_NONE || rd->v_count == PV_NONE || rd->v_cpu == PV_NONE)
		return -1;
	return 0;
}

/* Gives every sample the CPU time it stands for (raw-cpu.h) and the
 * profile the CPU time its threads used and how much of it is in no
 * sample. */
static int settle_cpu(struct reader *rd)
{
	struct pv_profile *p = rd->p;
	struct raw_cpu_summary s;

	raw_cpu_settle(rd->cpu, &s);
	for (size_t i = 0; i < p->nsamples; i++) {
		int64_t *v = &p->samples[i].values[rd->v_cpu];
		const struct split *sp = rd_sample_split(rd, i);
		uint64_t w, k;

		if (!sp || sp->part == PART_WHOLE) {
			w = raw_cpu_weight(rd->cpu, rd->handles[i], (uint64_t)*v);
			*v = w > INT64_MAX ? INT64_MAX : (int64_t)w;
			continue;
		}
		/* the record's settled time, split as it says: the kernel
		 * part alone, or the user part and the kernel part after it */
		w = raw_cpu_weight(rd->cpu, rd->handles[i], sp->w);
		k = sp->s >= sp->w ? w : (uint64_t)((long double)w * sp->s / sp->w + 0.5L);
		if (k > w)
			k = w;
		if (sp->part == PART_USER && i + 1 < p->nsamples) {
			*v = w - k > INT64_MAX ? INT64_MAX : (int64_t)(w - k);
			v = &p->samples[++i].values[rd->v_cpu];
		}
		*v = k > INT64_MAX ? INT64_MAX : (int64_t)k;
	}
	/* The threads' CPU time, by id (a reused id sums its threads). */
	for (size_t i = 0; i < p->nthreads; i++)
		p->threads[i].cpu_ns = -1;
	for (uint64_t i = 0; i < s.threads; i++) {
		uint32_t tid, th;
		int64_t cpu;

		raw_cpu_thread_at(rd->cpu, i, &tid, &cpu);
		if (cpu < 0)
			continue;
		th = rd_thread_index(rd, tid);
		if (th == PV_NONE)
			return -1;
		if (p->threads[th].cpu_ns < 0)
			p->threads[th].cpu_ns = cpu;
		else if (__builtin_add_overflow(p->threads[th].cpu_ns, cpu, &p->threads[th].cpu_ns))
			p->threads[th].cpu_ns = INT64_MAX;
	}
	p->threads_cpu_ns = s.cpu_ns > INT64_MAX ? INT64_MAX : (int64_t)s.cpu_ns;
	p->cpu_exact = !s.legacy && s.threads > 0 && s.measured_threads == s.threads && !rd->wall;
	p->unsampled_cpu_ns = s.unsampled_cpu_ns > INT64_MAX ? INT64_MAX : (int64_t)s.unsampled_cpu_ns;
	p->unsampled_threads = s.unsampled_threads;
	/* An older collector's samples miss the time after each thread's
	 * last sample: only much more than that is worth a word. */
	if (s.legacy && !((double)s.unsampled_cpu_ns * 10 > (double)s.cpu_ns &&
			  (double)s.unsampled_cpu_ns > 5.0 * (double)p->period)) {
		p->unsampled_cpu_ns = 0;
		p->unsampled_threads = 0;
	}
	return 0;
}

/* Takes the samples of the collector's own work out of the profile, with
 * the time they stand for (their CPU time, once settle_cpu has given it)
 * in p->collector_ns: that work is not the program's. */
static void drop_own_samples(struct reader *rd)
{
	struct pv_profile *p = rd->p;
	size_t k = 0, o = 0;

	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pv_sample *s = &p->samples[i];
		if (o < rd->nown && rd->own[o] == i) {
			o++;
			if (__builtin_add_overflow(p->collector_ns, s->values[rd->v_cpu], &p->collector_ns))
				p->collector_ns = INT64_MAX;
			/* a sample split in a user and a kernel part counts
			 * once, in the part that has its count */
			if (s->values[rd->v_count] <= 0)
				continue;
			p->collector_samples++;
			if (s->flags & PV_SAMPLE_TRUNCATED)
				p->truncated--;
			continue;
		}
		p->samples[k++] = *s;
	}
	p->nsamples = k;
}

/* Is the process that writes an unfinished trace still running: process
 * pid runs program exe, and started before the trace did (start_mono,
 * CLOCK_MONOTONIC; a pid used again since would have started later)? */
static bool still_running(uint32_t pid, const char *exe, uint64_t start_mono)
{
	char path[64], link[4096], stat[1024], *end;
	unsigned long long started = 0;
	long ticks = sysconf(_SC_CLK_TCK);
	ssize_t n;
	FILE *f;

	if (pid == 0 || !exe[0] || ticks <= 0)
		return false;
	snprintf(path, sizeof path, "/proc/%u/exe", pid);
	n = readlink(path, link, sizeof link - 1);
	if (n <= 0)
		return false;
	link[n] = '\0';
	if (strcmp(link, exe) != 0)
		return false;
	snprintf(path, sizeof path, "/proc/%u/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = (ssize_t)fread(stat, 1, sizeof stat - 1, f);
	fclose(f);
	stat[n > 0 ? n : 0] = '\0';
	/* the name may hold anything: the fields start after its ')' */
	end = strrchr(stat, ')');
	if (!end)
		return false;
	for (int field = 3; field < 22 && end; field++)
		end = strchr(end + 1, ' ');
	if (!end || sscanf(end + 1, "%llu", &started) != 1)
		return false;
	/* (the boot clock runs ahead of CLOCK_MONOTONIC after a suspend:
	 * then a running process may be taken for gone, never the reverse) */
	return (double)started * 1e9 / (double)ticks <= (double)start_mono + 1e9;
}

/* What the reading holds besides the profile. */
static void reader_free(struct reader *rd)
{
	free(rd->locs);
	free(rd->handles);
	free(rd->own);
	raw_cpu_free(rd->cpu);
	raw_heap_delete(rd->heap);
	rd_stacks_free(&rd->stk);
	rd_unwind_free(&rd->unw);
	rd_samples_free(&rd->smp);
	rd_python_free(&rd->py);
}

/* The walks ahead, when the unwinder can walk: NULL, or -1 (reported). */
struct pv_profile *rd_read_trace(const unsigned char *buf, size_t len, const char *name,
				 const struct raw_unwinder *uw, bool mapped, bool execd, int killed_by,
				 const struct rd_run_names *names)
{
	struct reader rd = { .buf = buf, .len = len, .name = name, .mapped = mapped,
			     .run_names = names,
			     .stk = { .own_map = PV_NONE }, .unw = { .uw = uw },
			     .smp = { .last_thread = PV_NONE, .offcpu_loc = PV_NONE, .kernel_map = PV_NONE,
				      .kernel_loc = PV_NONE } };
	struct pv_profile *p = pv_profile_new();

	if (!p)
		return NULL;
	rd.p = p;
	rd.locs = malloc(RAW_MAX_FRAMES * sizeof *rd.locs);
	if (!rd.locs || rd_unwind_init(&rd.unw) < 0) {
		pv_oom();
		goto fail;
	}
	if (read_header(&rd) < 0 || check_framing(&rd) < 0)
		goto fail;
	if (uw && uw->prepare && uw->prepare(uw->ctx, p) < 0)
		goto fail;
	if (!rd.wall && !rd.heap && !(rd.cpu = raw_cpu_new(rd.short_us, rd.p->period > 0 ? (uint64_t)rd.p->period : 0))) {
		pv_oom();
		goto fail;
	}
	if (uw && uw->ahead && rd.regs_samples)
		uw->ahead(uw->ctx, rd.regs_samples);
	if (rd_batch_new(&rd) < 0 || rd_stack_pass(&rd) < 0 || sample_pass(&rd) < 0)
		goto fail;
	if (rd.cpu && settle_cpu(&rd) < 0)
		goto fail;
	if (rd.heap) {
		int64_t peak_ns, peak_bytes;
		raw_heap_finish(rd.heap, &peak_ns, &peak_bytes);
	}
	if (rd.nown)
		drop_own_samples(&rd);
	rd_kernel_range(&rd);
	if (rd.system_known || rd.nkernel) {
		p->system_cpu_ns = 0;
		for (size_t i = 0; i < p->nsamples; i++)
			if ((p->samples[i].flags & PV_SAMPLE_KERNEL) &&
			    __builtin_add_overflow(p->system_cpu_ns, p->samples[i].values[rd.v_cpu],
						   &p->system_cpu_ns))
				p->system_cpu_ns = INT64_MAX;
	}
	/* an image that ran another program ends without its end record */
	p->finished = rd.have_end || execd;
	p->lost = rd.have_end ? rd.lost_end : rd.lost_records;
	if (rd.lost_records > p->lost)
		p->lost = rd.lost_records;
	{
		uint64_t end = rd.have_end ? rd.end_time : rd.last_time;
		p->duration_ns = end <= rd.start_mono ? 0
				 : end - rd.start_mono < RD_TIME_MAX ? (int64_t)(end - rd.start_mono)
								     : (int64_t)RD_TIME_MAX;
	}
	rd_unwind_report(&rd);
	if (rd.damaged)
		pv_warn("%s: %" PRIu64 " sample%s weigh%s more than the time since profiling began (the trace is damaged); not counted",
			rd.who, rd.damaged, rd.damaged == 1 ? "" : "s", rd.damaged == 1 ? "s" : "");
	if (rd.unresolved) {
		pv_warn("%s: %" PRIu64 " samples refer to stacks missing from the trace; they are not counted",
			rd.who, rd.unresolved);
		if (__builtin_add_overflow(p->lost, rd.unresolved, &p->lost))
			p->lost = UINT64_MAX;
	}
	if (p->dropped_bytes)
		pv_warn("%s: %s: read %" PRIu64 " whole records (%zu samples), dropped %" PRIu64 " bytes",
			rd.who, rd.cut, rd.nrecords, p->nsamples, p->dropped_bytes);
	else if (!rd.have_end && !execd && (p->live = still_running(p->pid, pv_str(p, p->program), rd.start_mono)))
		pv_warn("%s: the program is still running: read %zu samples up to %.3f s; read the trace again for what came since",
			rd.who, p->nsamples, p->duration_ns / 1e9);
	/* (one without samples lost none: the header says it was not finished) */
	else if (!rd.have_end && !execd && p->nsamples > 0 && killed_by > 0)
		pv_warn("%s: trace was not finished: the process was killed by signal %d (%s); read %zu samples up to %.3f s",
			rd.who, killed_by, strsignal(killed_by), p->nsamples, p->duration_ns / 1e9);
	else if (!rd.have_end && !execd && p->nsamples > 0)
		pv_warn("%s: trace was not finished (the program was killed or left without running its exit handlers); read %zu samples up to %.3f s",
			rd.who, p->nsamples, p->duration_ns / 1e9);
	/* said above; in the report with the rest of what was damaged */
	p->dropped_bytes += rd.damaged_bytes;
	reader_free(&rd);
	return p;
fail:
	reader_free(&rd);
	pv_profile_free(p);
	return NULL;
}

struct pv_profile *raw_read(const unsigned char *buf, size_t len, const char *name,
			   const struct raw_unwinder *uw)
{
	return rd_read_trace(buf, len, name, uw, false, false, 0, NULL);
}

struct pv_profile *raw_read_mapped(const unsigned char *buf, size_t len, const char *name,
				   const struct raw_unwinder *uw)
{
	return rd_read_trace(buf, len, name, uw, true, false, 0, NULL);
}
