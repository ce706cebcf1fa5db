/* rawbuild.h - build raw traces in memory for the tests */
#ifndef PROFVIEW_RAWBUILD_H
#define PROFVIEW_RAWBUILD_H

#include "raw-py.h"

#include <stdlib.h>
#include <string.h>

struct rawbuf {
	unsigned char *b;
	size_t len, cap;
};

static inline void rb_put(struct rawbuf *r, const void *d, size_t n)
{
	if (r->len + n > r->cap) {
		r->cap = (r->len + n) * 2 + 256;
		r->b = realloc(r->b, r->cap);
		if (!r->b)
			abort();
	}
	if (n)
		memcpy(r->b + r->len, d, n);
	r->len += n;
}

static inline void rb_zero(struct rawbuf *r, size_t n)
{
	static const unsigned char z[64];
	while (n) {
		size_t k = n < sizeof z ? n : sizeof z;
		rb_put(r, z, k);
		n -= k;
	}
}

/* A header of version 1, or of version 2 when arch is not NULL (what
 * follows the header there); short_us is the short-thread threshold (0: an
 * older trace). */
static inline void rb_header_arch(struct rawbuf *r, const struct raw_arch *arch, const char *exe,
				  uint64_t period_ns, uint32_t short_us)
{
	struct raw_header h = { 0 };
	uint32_t elen = (uint32_t)strlen(exe) + 1;

	memcpy(h.magic, RAW_MAGIC, RAW_MAGIC_LEN);
	h.version = arch ? 2 : 1;
	h.header_size = raw_header_fixed_size(h.version) + raw_pad(elen);
	h.clock = RAW_CLOCK_CPU;
	h.unwind = RAW_UNWIND_FP;
	h.pid = 4242;
	h.ppid = 1;
	h.period_ns = period_ns;
	h.start_realtime_ns = 1700000000000000000ULL;
	h.start_monotonic_ns = 1000000000ULL;
	h.exe_len = elen;
	h.short_thread_us = short_us;
	rb_put(r, &h, sizeof h);
	if (arch)
		rb_put(r, arch, sizeof *arch);
	rb_put(r, exe, elen);
	rb_zero(r, raw_pad(elen) - elen);
}

/* Version 1 headers: an x86-64 program. */
static inline void rb_header_short(struct rawbuf *r, const char *exe, uint64_t period_ns,
				   uint32_t short_us)
{
	rb_header_arch(r, NULL, exe, period_ns, short_us);
}

static inline void rb_header(struct rawbuf *r, const char *exe, uint64_t period_ns)
{
	rb_header_short(r, exe, period_ns, 0);
}

/* A version 2 header: a program of ELF machine machine, nregs registers
 * in DWARF numbering in each sample-regs record. */
static inline void rb_header_v2(struct rawbuf *r, const char *exe, uint64_t period_ns,
				uint32_t short_us, uint32_t machine, uint32_t nregs)
{
	struct raw_arch a = { machine, RAW_REGS_DWARF, nregs, 0 };

	rb_header_arch(r, &a, exe, period_ns, short_us);
}

/* Sets the unwinding mode of the header at the start of r. */
static inline void rb_set_unwind(struct rawbuf *r, uint32_t unwind)
{
	struct raw_header h;

	memcpy(&h, r->b, sizeof h);
	h.unwind = unwind;
	memcpy(r->b, &h, sizeof h);
}

static inline void rb_mapping(struct rawbuf *r, uint64_t start, uint64_t end, uint64_t pgoff,
		       const char *path)
{
	struct raw_mapping m = { 0 };
	uint32_t plen = (uint32_t)strlen(path) + 1;

	m.h.type = RAW_MAPPING;
	m.h.size = (uint32_t)sizeof m + raw_pad(plen);
	m.start = start;
	m.end = end;
	m.pgoff = pgoff;
	m.path_len = plen;
	rb_put(r, &m, sizeof m);
	rb_put(r, path, plen);
	rb_zero(r, raw_pad(plen) - plen);
}

/* A thread record; cpu_ns is the CPU time the thread had used before
 * profiling started for it.  rb_thread_v1 writes the 40-byte record of
 * older collectors, without it. */
static inline void rb_thread_cpu(struct rawbuf *r, uint32_t tid, const char *name, uint64_t cpu_ns)
{
	struct raw_thread t = { 0 };

	t.h.type = RAW_THREAD;
	t.h.size = sizeof t;
	t.tid = tid;
	memcpy(t.name, name, strnlen(name, sizeof t.name));
	t.cpu_ns = cpu_ns;
	rb_put(r, &t, sizeof t);
}

static inline void rb_thread(struct rawbuf *r, uint32_t tid, const char *name)
{
	rb_thread_cpu(r, tid, name, 0);
}

static inline void rb_thread_v1(struct rawbuf *r, uint32_t tid, const char *name)
{
	struct raw_thread t = { 0 };

	t.h.type = RAW_THREAD;
	t.h.size = RAW_THREAD_MIN_SIZE;
	t.tid = tid;
	memcpy(t.name, name, strnlen(name, sizeof t.name));
	rb_put(r, &t, RAW_THREAD_MIN_SIZE);
}

static inline void rb_stack(struct rawbuf *r, uint32_t id, const uint64_t *frames, uint32_t n)
{
	struct raw_stack s = { 0 };

	s.h.type = RAW_STACK;
	s.h.size = (uint32_t)(sizeof s + 8 * n);
	s.id = id;
	s.nframes = n;
	rb_put(r, &s, sizeof s);
	rb_put(r, frames, 8 * n);
}

/* A stack of native frames[0..n) with the Python part part. */
static inline void rb_stack_py(struct rawbuf *r, uint32_t id, uint32_t part, const uint64_t *frames,
			       uint32_t n)
{
	struct raw_stack_py s = { { RAW_STACK_PY, (uint32_t)(sizeof s + 8 * n) }, id, part };

	rb_put(r, &s, sizeof s);
	rb_put(r, frames, 8 * n);
}

/* A stack of the native frames of stack base with the Python part part. */
static inline void rb_stack_pyref(struct rawbuf *r, uint32_t id, uint32_t part, uint32_t base)
{
	struct raw_stack_pyref s = { { RAW_STACK_PYREF, sizeof s }, id, part, base, 0 };

	rb_put(r, &s, sizeof s);
}

static inline void rb_sample(struct rawbuf *r, uint32_t tid, uint32_t stack_id, const uint64_t *frames,
		      uint32_t n, uint64_t time_ns, uint64_t weight_ns)
{
	struct raw_sample s = { 0 };

	s.h.type = RAW_SAMPLE;
	s.h.size = (uint32_t)(sizeof s + (stack_id ? 0 : 8 * n));
	s.tid = tid;
	s.stack_id = stack_id;
	s.time_ns = time_ns;
	s.weight_ns = weight_ns;
	s.flags = RAW_SAMPLE_RUNNING;
	s.nframes = stack_id ? 0 : n;
	rb_put(r, &s, sizeof s);
	if (!stack_id)
		rb_put(r, frames, 8 * n);
}

/* A sample in the short form of version 3 (raw.h): running, its stack by
 * id. */
static inline void rb_sample_short(struct rawbuf *r, uint32_t tid, uint32_t stack_id,
				   uint64_t time_ns, uint64_t weight_ns)
{
	struct raw_sample s = { 0 };

	s.h.type = RAW_SAMPLE;
	s.h.size = RAW_SAMPLE_SHORT_SIZE;
	s.tid = tid;
	s.stack_id = stack_id;
	s.time_ns = time_ns;
	s.weight_ns = weight_ns;
	rb_put(r, &s, RAW_SAMPLE_SHORT_SIZE);
}

/* A sample with nregs registers and a stack copy. */
static inline void rb_sample_nregs(struct rawbuf *r, uint32_t tid, const uint64_t *regs,
				   uint32_t nregs, const unsigned char *stack, uint32_t stack_len,
				   uint64_t weight_ns)
{
	struct raw_sample_regs s = { 0 };

	s.h.type = RAW_SAMPLE_REGS;
	s.h.size = (uint32_t)sizeof s + 8 * nregs + raw_pad(stack_len);
	s.tid = tid;
	s.flags = RAW_SAMPLE_RUNNING;
	s.time_ns = 1;
	s.weight_ns = weight_ns;
	s.nregs = nregs;
	s.stack_len = stack_len;
	rb_put(r, &s, sizeof s);
	rb_put(r, regs, 8 * (size_t)nregs);
	rb_put(r, stack, stack_len);
	rb_zero(r, raw_pad(stack_len) - stack_len);
}

static inline void rb_sample_regs(struct rawbuf *r, uint32_t tid, const uint64_t *regs,
				  const unsigned char *stack, uint32_t stack_len, uint64_t weight_ns)
{
	rb_sample_nregs(r, tid, regs, RAW_NREGS, stack, stack_len, weight_ns);
}

static inline void rb_thread_exit(struct rawbuf *r, uint32_t tid, uint64_t time_ns, uint64_t cpu_ns)
{
	struct raw_thread_exit t = { 0 };

	t.h.type = RAW_THREAD_EXIT;
	t.h.size = sizeof t;
	t.tid = tid;
	t.time_ns = time_ns;
	t.cpu_ns = cpu_ns;
	t.system_ns = RAW_UNKNOWN;
	rb_put(r, &t, sizeof t);
}

/* The trace says how its system time was measured, on boot boot_id. */
static inline void rb_kernel_info(struct rawbuf *r, uint32_t source, const char *boot_id)
{
	struct raw_kernel k = { 0 };

	k.h.type = RAW_KERNEL;
	k.h.size = sizeof k;
	k.source = source;
	memcpy(k.boot_id, boot_id, strnlen(boot_id, sizeof k.boot_id - 1));
	rb_put(r, &k, sizeof k);
}

/* The system part of the sample of tid at time_ns, with n kernel frames. */
static inline void rb_sample_kernel(struct rawbuf *r, uint32_t tid, uint64_t time_ns,
				    uint64_t system_ns, const uint64_t *frames, uint32_t n)
{
	struct raw_sample_kernel k = { 0 };

	k.h.type = RAW_SAMPLE_KERNEL;
	k.h.size = (uint32_t)(sizeof k + 8 * n);
	k.tid = tid;
	k.nframes = n;
	k.time_ns = time_ns;
	k.system_ns = system_ns;
	rb_put(r, &k, sizeof k);
	rb_put(r, frames, 8 * n);
}

static inline void rb_lost(struct rawbuf *r, uint64_t count)
{
	struct raw_lost l = { { RAW_LOST, sizeof l }, count };
	rb_put(r, &l, sizeof l);
}

static inline void rb_end(struct rawbuf *r, uint64_t time_ns, uint64_t samples, uint64_t lost)
{
	struct raw_end e = { 0 };

	e.h.type = RAW_END;
	e.h.size = sizeof e;
	e.time_ns = time_ns;
	e.samples = samples;
	e.lost = lost;
	rb_put(r, &e, sizeof e);
}

#endif
