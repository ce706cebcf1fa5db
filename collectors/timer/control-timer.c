/* control-timer.c - what a pause and a resume do in libprofview-timer.so
 * (its host.h members, control-timer.h); ../preload/control.c decides
 * when
 *
 * No thread of ours stops or starts the others: each thread's handler
 * looks at the control word at each sample (control_poll, from
 * control_sample_ok in sample.c), and the first to see a change moves the
 * process's generation count (control_gen: odd while paused) with one
 * compare-and-swap, so that the threads made meanwhile, the wall-clock
 * and the sweeper's threads see it too.  Each thread then acts for itself,
 * at its next sample:
 *
 * - pause: its handler writes nothing more; its profiled stretch ends with
 *   an exit record with the CPU time of its last sample, so that the time
 *   since (up to one period) and the time paused are in no thread's total
 *   (raw-cpu.h shares out the CPU time between a thread record and the
 *   exit record after it).
 * - resume: its handler writes a thread record with its CPU clock now and
 *   takes it as its previous sample, so that its next sample weighs only
 *   the time since.
 *
 * The timers stay armed while paused, so that each thread's handler sees
 * the resume at the thread's next period of CPU time: a thread that does
 * not run misses nothing, and nothing has to arm the timers of threads
 * that would otherwise never sample again.  (The other way, disarming
 * each timer at the pause, needs a thread of ours to arm them all again
 * at the resume: one that every process would have to start, which in a
 * short process costs more than all its handlers' looks while paused, a
 * few microseconds per period of CPU time.)
 *
 * A thread that starts while sampling is paused gets its thread record at
 * its first sample after the resume; one that ends while its stretch is
 * closed, nothing.  --duration is not a pause here: preload.c ends the
 * trace then.
 */
#include <stdatomic.h>

#include "control-timer.h"
#include "preload-state.h"
#include "preload.h"
#include "sweep.h"
#include "threads.h"

_Atomic uint64_t control_gen;

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
	int pause = how != CONTROL_RESUME;
	uint64_t gen = atomic_load(&control_gen);

	if (atomic_load(&preload.state) != PRELOAD_RUNNING)
		return 0;
	while ((int)(gen & 1) != pause)
		if (atomic_compare_exchange_weak(&control_gen, &gen, gen + 1))
			return 1;
	return 0;
}

int control_timer_thread(struct preload_seen *seen, int64_t *last_cpu, int64_t cpu, int how)
{
	/* (the flag read first: at nearly every sample it is as it should
	 * be, and nothing need be written to the thread's shared line) */
	if (how != CONTROL_RESUME) {
		if (seen != NULL && atomic_load(&seen->open) && atomic_exchange(&seen->open, 0))
			threads_write_own(0, *last_cpu);
		*last_cpu = cpu;
		return 0;
	}
	if (seen != NULL && !atomic_load(&seen->open) && !atomic_exchange(&seen->open, 1)) {
		threads_write_own(1, cpu);
		*last_cpu = cpu;
		return 0;
	}
	return 1;
}
