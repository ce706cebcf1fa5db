/* raw-cpu.h - the CPU time each sample of a raw trace stands for, and the
 * words for what no sample carries
 *
 * A sample's recorded weight is the CPU time its thread used since its
 * previous sample.  Summed over a thread's samples, that misses the time
 * after the thread's last sample, and all of the time of a thread that was
 * never sampled.  The trace also says how much CPU time each thread used
 * while profiled (its thread record gives the CPU time it had used before
 * profiling started for it, its exit record the CPU time in all), so the
 * reader can do better:
 *
 * - A thread that used at least the header's short_thread_us: its samples
 *   share its CPU time in proportion to their recorded weights (the time
 *   after its last sample is spread over them).  Its total is exact.
 * - The threads that used less (a thread per task, a pool that spawns per
 *   request): one by one they are too short to be measured, since most get
 *   no sample or one.  But the collector samples each at a rate in
 *   proportion to the CPU time it uses, so together they are measured like
 *   one long thread: their samples share the CPU time of all of them
 *   equally.
 * - A thread with no exit record (the trace was cut short): its samples
 *   weigh what they recorded.
 * - A thread that used at least short_thread_us with no sample at all, and
 *   the short threads when none of them has a sample: that CPU time is in
 *   no sample.  It is said to be (the threads blocked the signal, or the
 *   timers missed them) only when so much CPU time with no sample is
 *   improbable: at one sample a period on average, no sample in CPU time
 *   T has probability at most exp(-T / period), and T must make that less
 *   than 10^-4 divided by the number of groups tested (each
 *   thread above the threshold, and the short ones together), so that a
 *   trace is wrongly said to miss a thread less than once in 10,000.
 *   Below that the time is brief: a thread of 0.4 ms at a 10 ms period
 *   gets no sample 96 times in 100, and that is no sign of anything.
 *
 * Traces of older collectors (short_thread_us 0) keep their recorded
 * weights.  Thread ids are reused: a thread record that comes after the
 * exit record of the same id starts a new thread.  So does one that comes
 * after sampling was paused (the collector ends every thread's record when
 * it pauses and starts it again when it resumes, so that the CPU time used
 * while paused is in no thread's total): to this accounting, each stretch
 * between a thread record and its exit record is a thread of its own.
 *
 * Only libc: the analyzer's raw reader and collect-timer's summary both use
 * it.  Feed the thread, exit and sample records in file order, settle, then
 * ask for each sample's CPU time in the same order as the samples were fed.
 */
#ifndef PROFVIEW_RAW_CPU_H
#define PROFVIEW_RAW_CPU_H

#include <stddef.h>
#include <stdint.h>

struct raw_cpu;

struct raw_cpu_summary {
	uint64_t threads;           /* threads seen (a reused id counts again) */
	uint64_t tids;              /* distinct thread ids among them */
	uint64_t measured_threads;  /* with a known CPU time */
	uint64_t cpu_ns;            /* their CPU time while profiled */
	uint64_t short_threads;     /* measured threads under the threshold */
	uint64_t short_cpu_ns;
	uint64_t unsampled_threads; /* measured threads whose time is in no sample */
	uint64_t unsampled_cpu_ns;  /* (improbably: blocked or missed) */
	uint64_t brief_threads;     /* in no sample, too brief to expect one */
	uint64_t brief_cpu_ns;
	uint64_t weight_ns;         /* the CPU time all samples stand for */
	int legacy;                 /* an older trace: recorded weights kept */
};

/* A new accounting for a trace whose header says short_thread_us (0 for an
 * older trace) and period_ns (0 when unknown: any thread with no sample
 * is then said to be unsampled).  NULL when out of memory. */
struct raw_cpu *raw_cpu_new(uint32_t short_thread_us, uint64_t period_ns);
void raw_cpu_free(struct raw_cpu *c);

/* A thread record: thread tid, with the CPU time it had used before
 * profiling started for it (has_base 0: the record does not say).  0, or
 * -1 when out of memory. */
int raw_cpu_thread(struct raw_cpu *c, uint32_t tid, int has_base, uint64_t base_ns);
/* An exit record: thread tid's CPU clock at its end.  0 or -1. */
int raw_cpu_exit(struct raw_cpu *c, uint32_t tid, uint64_t cpu_ns);
/* A sample of thread tid with its recorded weight.  Returns a handle for
 * raw_cpu_weight (>= 0), or -1 when out of memory. */
int64_t raw_cpu_sample(struct raw_cpu *c, uint32_t tid, uint64_t weight_ns);

/* Decides every thread's share once all records are in; fills *s. */
void raw_cpu_settle(struct raw_cpu *c, struct raw_cpu_summary *s);
/* The CPU time the sample with this handle and recorded weight stands
 * for.  Call once per sample, in the order raw_cpu_sample saw them: the
 * CPU times of a thread then add up exactly. */
uint64_t raw_cpu_weight(struct raw_cpu *c, int64_t handle, uint64_t weight_ns);

/* Is the CPU time in no sample worth a word: more than a hundredth of the
 * threads' (within the noise of a short run otherwise)?  Then the one
 * sentence every tool says it with, into buf; lost is the samples the
 * collector could not store, one cause of it. */
int raw_cpu_unsampled_say(char *buf, size_t n, uint64_t unsampled_ns, uint64_t cpu_ns,
			  uint64_t unsampled_threads, uint64_t threads, uint64_t lost);

/* Why a collector could not store samples, from the error of its last
 * failed attempt to grow the trace (a lost record's error), to follow
 * "the trace could not grow: ": "the disk was full", "it reached the file
 * size limit (ulimit -f)"...; NULL when the error is 0 (not known). */
const char *raw_lost_cause(uint32_t error);

/* The threads, in the order they were seen: for i < summary.threads, its
 * id, and its CPU time while profiled (-1 when not known). */
void raw_cpu_thread_at(const struct raw_cpu *c, uint64_t i, uint32_t *tid, int64_t *cpu_ns);

#endif
