/* control-timer.c - what a pause and a resume do in libprofview-timer.so
 * (its host.h members, control-timer.h); ../preload/control.c decides
 * when
 *
 * Each is done under the registry lock, so that it is serialized with
 * threads starting and ending:
 *
 * - pause: the generation count (control_gen) becomes odd, so a handler
 *   that starts from now on writes nothing (control_sample_ok, sample.c);
 *   the handlers already running are waited for; every thread's timer is
 *   disarmed and an exit record written with its CPU clock.  Each thread's
 *   profiled stretch ends there, as far as the trace is concerned: raw-cpu.h
 *   shares out the CPU time between its thread record and that exit record,
 *   and the CPU time used while paused is in no thread's total.
 * - resume: each thread gets a thread record with its CPU clock now (its
 *   CPU time before is not profiled), which its handler also takes as its
 *   previous sample, so its next sample weighs only the time since; the
 *   generation becomes even, and the timers are armed again.
 *
 * A thread that starts while sampling is paused gets its thread record and
 * its timer at the resume; one that ends while paused, nothing (its stretch
 * ended at the pause).  --duration is not a pause here: preload.c ends the
 * trace then.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "control-timer.h"
#include "engine.h"
#include "preload-state.h"
#include "preload.h"
#include "sample.h"
#include "sweep.h"
#include "threads.h"

#define CONTROL_QUIESCE_NS 100000000ull   /* longest wait for handlers in flight */
#define CONTROL_QUIESCE_STEP_NS 50000

_Atomic uint64_t control_gen;

static int64_t control_thread_cpu(pid_t tid)
{
	struct timespec ts;

	if (clock_gettime(preload_thread_clock(tid), &ts) != 0)
		return -1;
	return preload_ts_ns(&ts);
}

/* Waits (a little) for the handlers that started before the pause: those
 * that start after it see it and write nothing. */
static void control_quiesce(void)
{
	(void)preload_quiesce(CONTROL_QUIESCE_NS, CONTROL_QUIESCE_STEP_NS);
}

/* The threads' records and timers at a pause (pause 1) or a resume (0). */
static void control_each_thread(int pause)
{
	for (size_t i = 0; i < preload.nentries; i++) {
		struct preload_entry *e = &preload.entries[i];
		char name[16];
		int64_t cpu;

		if (e->tid == 0)
			continue;
		if (pause)
			engine_disarm(&e->timer);
		cpu = control_thread_cpu(e->tid);
		threads_read_comm(e->tid, name);
		if (name[0] != '\0' && strncmp(name, e->name, 16) != 0) {
			if (pause)
				threads_write_thread(e->tid, name, e->cpu_base); /* the new name */
			memcpy(e->name, name, 16);
		}
		if (pause) {
			threads_write_exit(e->tid, cpu);
			continue;
		}
		if (e->seen != NULL && cpu >= 0) {
			atomic_store_explicit(&e->seen->resumed_cpu, cpu, memory_order_relaxed);
			atomic_store_explicit(&e->seen->cpu, cpu, memory_order_relaxed);
		}
		threads_write_thread(e->tid, e->name, cpu);
	}
}

void control_timer_initial(int how)
{
	if (how != CONTROL_RESUME && !control_paused())
		atomic_fetch_add(&control_gen, 1);
}

/* The sweeper's thread, started when its first pass is due. */
uint64_t control_timer_deferred(uint64_t now)
{
	return sweep_launch(now);
}

int control_timer_apply(int how)
{
	int pause = how != CONTROL_RESUME, changed = 0;

	pthread_mutex_lock(&preload.registry_lock);
	if (atomic_load(&preload.state) != PRELOAD_RUNNING || control_paused() == pause)
		goto out;
	if (pause) {
		atomic_fetch_add(&control_gen, 1);
		control_quiesce();
	}
	control_each_thread(pause);
	if (!pause) {
		/* the threads' new starts are stored before the handlers can
		 * see the change (control_sample_ok, sample.c) */
		atomic_fetch_add(&control_gen, 1);
		for (size_t i = 0; i < preload.nentries; i++) {
			struct preload_entry *e = &preload.entries[i];
			int64_t cpu = control_thread_cpu(e->tid);

			if (e->tid != 0)
				engine_rearm(&e->timer, cpu >= 0 && cpu - e->cpu_base < (int64_t)preload.short_ns,
					     preload_random(preload.period_ns));
		}
	}
	changed = 1;
out:
	pthread_mutex_unlock(&preload.registry_lock);
	return changed;
}
