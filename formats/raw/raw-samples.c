/* raw-samples.c - each sample of a raw trace added to the profile: its
 * thread, its CPU time (raw-cpu.h), its kernel part and its mode, the
 * frame an off-CPU sample waited in (see raw-samples.h and raw-read.c)
 */
#include "raw-samples.h"
#include "raw-stacks.h"
#include "error.h"
#include "merge.h"
#include "raw-cpu.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t rd_thread_index(struct reader *rd, uint32_t tid)
{
	if (rd->smp.last_thread != PV_NONE && rd->smp.last_tid == tid)
		return rd->smp.last_thread;
	rd->smp.last_tid = tid;
	rd->smp.last_thread = pv_get_thread(rd->p, tid, PV_NONE);
	return rd->smp.last_thread;
}

/* A location of a frame the trace stands for but no code is at: address
 * in mapping, one line of a function named name; PV_NONE when out of
 * memory. */
static uint32_t made_up_location(struct pv_profile *p, const char *name, uint64_t address,
				 uint32_t mapping)
{
	uint32_t n = pv_intern_str(p, name), loc;
	struct pv_line line = { 0 };

	if (n == PV_NONE)
		return PV_NONE;
	line.function = pv_get_function(p, n, n, 0, 0);
	if (line.function == PV_NONE)
		return PV_NONE;
	loc = pv_get_location(p, address, mapping);
	if (loc == PV_NONE || pv_set_lines(p, loc, &line, 1) < 0)
		return PV_NONE;
	return loc;
}

/* In a wall-clock trace, a sample of a thread that was off CPU gets a
 * synthetic leaf: a location with no mapping whose one line names the
 * function "[off-cpu]", under the frame where the thread waited.  A
 * frame-pointer candidate (second location) is dropped, since it could only
 * be checked against a real leaf.  Returns 0 or -1. */
static int offcpu_leaf(struct reader *rd, struct pv_sample *ps)
{
	struct pv_profile *p = rd->p;
	uint32_t k = 0;

	if (rd->smp.offcpu_loc == PV_NONE) {
		rd->smp.offcpu_loc = made_up_location(p, "[off-cpu]", UINT64_MAX, PV_NONE);
		if (rd->smp.offcpu_loc == PV_NONE)
			return -1;
	}
	rd->locs[k++] = rd->smp.offcpu_loc;
	for (uint32_t i = 0; i < ps->nlocs && k < RAW_MAX_FRAMES; i++) {
		if (i == 1 && (ps->flags & PV_SAMPLE_LEAF_CANDIDATE))
			continue;
		rd->locs[k++] = p->stack_locs[ps->loc_off + i];
	}
	ps->flags &= ~(uint32_t)PV_SAMPLE_LEAF_CANDIDATE;
	ps->loc_off = rd_dedup_stack(rd, rd->locs, k);
	ps->nlocs = k;
	return ps->loc_off == UINT32_MAX ? -1 : 0;
}

/* The kernel mapping, made when first needed: "[kernel.kallsyms]", its
 * build id the boot id of the trace's machine (the analyzer symbolizes
 * its addresses only on that boot).  Its range is set once all its
 * addresses are known (kernel_range).  PV_NONE when out of memory. */
static uint32_t kernel_mapping(struct reader *rd)
{
	struct pv_profile *p = rd->p;
	struct pv_mapping m = { 0 };

	if (rd->smp.kernel_map != PV_NONE)
		return rd->smp.kernel_map;
	m.file = pv_intern_str(p, PV_KERNEL_MAPPING_NAME);
	m.build_id = pv_intern_str(p, rd->boot_id);
	m.kind = PV_MAP_KERNEL;
	if (m.file == PV_NONE || m.build_id == PV_NONE)
		return PV_NONE;
	rd->smp.kernel_lo = UINT64_MAX;
	rd->smp.kernel_map = pv_add_mapping(p, &m);
	return rd->smp.kernel_map;
}

void rd_kernel_range(struct reader *rd)
{
	struct pv_mapping *m;

	if (rd->smp.kernel_map == PV_NONE || rd->smp.kernel_lo > rd->smp.kernel_hi)
		return;
	m = &rd->p->mappings[rd->smp.kernel_map];
	m->start = m->offset = rd->smp.kernel_lo;
	m->limit = rd->smp.kernel_hi + 1;
}

/* Kernel frames on top of the user stack of ps: the record's addresses,
 * or the "[kernel]" location at address 0 when it has none. */
static int kernel_stack(struct reader *rd, const struct pv_sample *user,
			const struct raw_sample_kernel *k, struct pv_sample *ps)
{
	struct pv_profile *p = rd->p;
	const unsigned char *frames = k ? (const unsigned char *)(k + 1) : NULL;
	uint32_t map = kernel_mapping(rd), n = 0, nk = k ? k->nframes : 0;

	if (map == PV_NONE)
		return -1;
	for (uint32_t i = 0; i < nk && n < RAW_MAX_FRAMES; i++) {
		uint64_t a;
		memcpy(&a, frames + 8 * (size_t)i, 8);
		if (a == 0)
			continue;
		/* return addresses: step back into the call */
		if (i > 0)
			a--;
		if (a < rd->smp.kernel_lo)
			rd->smp.kernel_lo = a;
		if (a > rd->smp.kernel_hi)
			rd->smp.kernel_hi = a;
		if ((rd->locs[n++] = pv_get_location(p, a, map)) == PV_NONE)
			return -1;
	}
	if (n == 0) {
		if (rd->smp.kernel_loc == PV_NONE &&
		    (rd->smp.kernel_loc = made_up_location(p, PV_KERNEL_FRAME_NAME, 0, map)) == PV_NONE)
			return -1;
		rd->locs[n++] = rd->smp.kernel_loc;
	}
	for (uint32_t i = 0; i < user->nlocs && n < RAW_MAX_FRAMES; i++)
		rd->locs[n++] = p->stack_locs[user->loc_off + i];
	*ps = *user;
	ps->flags |= PV_SAMPLE_KERNEL;
	ps->loc_off = rd_dedup_stack(rd, rd->locs, n);
	ps->nlocs = n;
	return ps->loc_off == UINT32_MAX ? -1 : 0;
}

/* Adds ps with count and CPU time; its accounting handle, and its split
 * in a trace with kernel records. */
static int push_sample(struct reader *rd, struct pv_sample *ps, int64_t count, uint64_t cpu,
		       int64_t handle, const struct split *sp)
{
	size_t i = rd->p->nsamples;

	ps->values[rd->v_count] = count;
	ps->values[rd->v_cpu] = cpu > INT64_MAX ? INT64_MAX : (int64_t)cpu;
	if (rd->cpu) {
		if (pv_grow(&rd->handles, &rd->cap_handles, i + 1, sizeof *rd->handles) < 0)
			return pv_oom();
		rd->handles[i] = handle;
	}
	if (rd->nkernel) {
		if (pv_grow(&rd->smp.splits, &rd->smp.cap_splits, i + 1, sizeof *rd->smp.splits) < 0)
			return pv_oom();
		rd->smp.splits[i] = *sp;
	}
	return pv_add_sample(rd->p, ps);
}

/* The system part of a sample of weight w, of thread index th, in whole
 * samples: w when it is a kernel sample, else 0.  A sample is in one mode,
 * as a perf sample is, so that its count, its time and the noise of both
 * go together (a part of a sample is no sample: a node made of slivers of
 * system time would look far surer than it is).  The collector measures
 * the system part of each sample's weight (getrusage); it is given out as
 * it accrues: a thread's samples are owed their system time, and a sample
 * is the kernel's when at least half its weight is owed, or half a period
 * when its instant was in a system call (in_call).  A thread's kernel
 * samples so add up to its system time within a sample.  (A perf engine
 * sample is already all one or the other.) */
static int one_mode(struct reader *rd, uint32_t th, uint64_t sys, uint64_t w, bool in_call,
		    uint64_t *part)
{
	int64_t *o;

	*part = 0;
	if (th >= rd->smp.nowed) {
		size_t n = rd->smp.nowed;
		if (sys == 0)
			return 0;
		if (pv_grow(&rd->smp.owed, &n, (size_t)th + 1, sizeof *rd->smp.owed) < 0)
			return -1;
		memset(rd->smp.owed + rd->smp.nowed, 0, (n - rd->smp.nowed) * sizeof *rd->smp.owed);
		rd->smp.nowed = n;
	}
	o = &rd->smp.owed[th];
	if (sys > (uint64_t)INT64_MAX - (uint64_t)(*o > 0 ? *o : 0) || w > INT64_MAX / 2)
		return 0;
	*o += (int64_t)sys;
	/* A sample whose instant was in a system call (RAW_SAMPLE_IN_CALL) is
	 * the kernel's once half a period is owed, however heavy it is: the
	 * rest of its weight is owed by the thread's later system time (a
	 * debt of at most its weight: no sample is the kernel's while the
	 * thread is in debt), so that the kernel samples are where the samples found the
	 * thread in the kernel and still add up to its system time.  Under
	 * contention for the CPU a tick's samples weigh several periods, and
	 * the wrapper of a system call would otherwise keep those. */
	uint64_t need = w;
	if (in_call && rd->p->period > 0 && (uint64_t)rd->p->period < w)
		need = (uint64_t)rd->p->period;
	if (w > 0 && *o > 0 && (uint64_t)*o * 2 >= need) {
		*o -= (int64_t)w;
		*part = w;
	}
	return 0;
}

/* The kernel samples a RAW_SAMPLE_MISSED record stands for: the overflows
 * its perf event dropped in the kernel, each a period of the system part
 * sys (the periods are drawn around the profile's, so this is their
 * number within rounding), at least one. */
static int64_t missed_count(const struct reader *rd, uint64_t sys)
{
	uint64_t period = rd->p->period > 0 ? (uint64_t)rd->p->period : 0;
	uint64_t n = period ? (sys + period / 2) / period : 1;

	return n < 1 ? 1 : n > INT32_MAX ? INT32_MAX : (int64_t)n;
}

/* Finish and add a sample whose stack is stored: the parts every sample
 * record has in common.  k: its kernel record, or NULL.  A sample after
 * overflows dropped in the kernel (RAW_SAMPLE_MISSED) is two: its user
 * part, one sample, and its system part under the same user stack, a
 * sample for each dropped overflow, so that its noise (pv_sample_var:
 * x^2 / count) is of that many kernel samples of a period, as perf's. */
int rd_add_sample(struct reader *rd, struct pv_sample *ps, uint32_t tid, uint32_t raw_flags,
		  uint64_t weight_ns, uint64_t time_ns, const struct raw_sample_kernel *k)
{
	uint64_t sys = k ? (k->system_ns < weight_ns ? k->system_ns : weight_ns) : 0;
	int64_t handle = 0, missed = 0;
	size_t first;

	ps->thread = rd_thread_index(rd, tid);
	if (ps->thread == PV_NONE)
		return -1;
	if (rd->wall && !(raw_flags & RAW_SAMPLE_RUNNING)) {
		if (offcpu_leaf(rd, ps) < 0)
			return -1;
		ps->flags |= PV_SAMPLE_OFFCPU;
	}
	ps->time_ns = time_ns > rd->start_mono ? (int64_t)(time_ns - rd->start_mono) : 0;
	if (raw_flags & RAW_SAMPLE_TRUNCATED)
		ps->flags |= PV_SAMPLE_TRUNCATED;
	/* A thread cannot have used more CPU time (nor a wall-clock sample
	 * stand for more time) than passed since profiling began: a weight
	 * past that is damage, not time, and would swamp every sum. */
	if (time_ns > rd->began &&
	    (unsigned __int128)weight_ns > (unsigned __int128)(time_ns - rd->began) +
						   2 * (unsigned __int128)(uint64_t)rd->p->period +
						   RAW_WEIGHT_SLACK_NS) {
		rd->damaged++;
		rd->damaged_bytes += rd->rec_size;
		return 0;
	}
	if (rd->cpu && (handle = raw_cpu_sample(rd->cpu, tid, weight_ns)) < 0)
		return pv_oom();
	if ((raw_flags & RAW_SAMPLE_MISSED) && sys > 0 && sys < weight_ns)
		missed = missed_count(rd, sys);
	else if (one_mode(rd, ps->thread, sys, weight_ns, (raw_flags & RAW_SAMPLE_IN_CALL) != 0, &sys) < 0)
		return -1;
	first = rd->p->nsamples;
	if (sys == 0) {
		if (push_sample(rd, ps, 1, weight_ns, handle,
				&(struct split){ weight_ns, 0, PART_WHOLE }) < 0)
			return -1;
	} else {
		struct pv_sample kp;
		uint64_t user = weight_ns - sys;
		bool count_kernel = sys > user && !missed;

		if (kernel_stack(rd, ps, k, &kp) < 0)
			return -1;
		if ((user > 0 || !count_kernel) &&
		    push_sample(rd, ps, !count_kernel, user, handle,
				&(struct split){ weight_ns, sys, PART_USER }) < 0)
			return -1;
		if (push_sample(rd, &kp, missed ? missed : count_kernel, sys, handle,
				&(struct split){ weight_ns, sys, PART_KERNEL }) < 0)
			return -1;
		/* one sample with an incomplete stack, in two parts */
		if ((ps->flags & PV_SAMPLE_TRUNCATED) && (user > 0 || !count_kernel))
			rd->p->truncated--;
	}
	/* the collector's own work: all its parts, dropped once settled */
	for (size_t i = first; (raw_flags & RAW_SAMPLE_COLLECTOR) && i < rd->p->nsamples; i++) {
		if (pv_grow(&rd->own, &rd->cap_own, rd->nown + 1, sizeof *rd->own) < 0)
			return -1;
		rd->own[rd->nown++] = i;
	}
	if (time_ns > rd->last_time)
		rd->last_time = time_ns;
	return 0;
}

const struct split *rd_sample_split(const struct reader *rd, size_t i)
{
	return rd->smp.splits ? &rd->smp.splits[i] : NULL;
}

void rd_samples_free(struct rd_samples *s)
{
	free(s->splits);
	free(s->owed);
}
