/* control.h - whether sampling is paused, for the sampling handler
 *
 * The state is a generation count (control.c): odd while sampling is
 * paused, even while it runs, one more at each change.  Inline so that the
 * handler (sample.c) pays one load for it.
 */
#ifndef PROFVIEW_TIMER_CONTROL_H
#define PROFVIEW_TIMER_CONTROL_H

#include <stdatomic.h>
#include <stdint.h>

#include "preload-state.h"

/* In the handler, once it has read the thread's CPU clock (cpu): may the
 * thread be sampled now?  While sampling is paused, no; the clock is noted
 * as the thread's last sample, so that the time paused is in no weight.
 * The first time after a resume, the thread's previous sample becomes the
 * CPU time it had when sampling resumed (the resume's thread record), so
 * its next sample weighs the time since then.  Signal-safe. */
static inline int control_sample_ok(struct preload_tls *t, int64_t cpu)
{
	/* seq_cst: against the pause, which counts the handlers in flight
	 * after changing the generation (control.c) */
	uint64_t gen = atomic_load(&control_gen);

	if (gen & 1) {
		t->last_cpu = cpu;
		t->control_gen = gen;
		return 0;
	}
	if (t->control_gen != gen) {
		int64_t base = t->seen != NULL
				       ? atomic_load_explicit(&t->seen->resumed_cpu, memory_order_relaxed)
				       : 0;

		t->control_gen = gen;
		if (base > 0 && base <= cpu)
			t->last_cpu = base;
	}
	return 1;
}

#endif
