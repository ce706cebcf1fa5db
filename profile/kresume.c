/* kresume.c - the return to user code after a preemption, charged to the
 * user code (see kresume.h) */
#include "kresume.h"
#include "error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { KR_OTHER, KR_RETURN, KR_RESCHED };

/* The kernel's return to user mode, over its versions: after a system
 * call, an exception or an interrupt that came from user mode (never the
 * return from an interrupt to kernel code, whose rescheduling is a
 * preemption of the kernel's own work). */
static const char *const kr_return[] = {
	"exit_to_user_mode_loop", "exit_to_user_mode_prepare", "exit_to_user_mode",
	"irqentry_exit_to_user_mode", "syscall_exit_to_user_mode", "syscall_exit_to_user_mode_work",
	"arch_exit_to_user_mode_prepare", "exit_to_usermode_loop", "prepare_exit_to_usermode",
	"syscall_return_slowpath",
};

/* What that return calls to reschedule: the switch (whose leaf end,
 * finish_task_switch, is where the thread is switched in again), and
 * rseq's fixup of a thread that was preempted or moved. */
static const char *const kr_resched[] = {
	"schedule", "__schedule", "finish_task_switch", "__rseq_handle_notify_resume",
	"rseq_handle_notify_resume",
};

/* The class of a kernel function by its name, without the compiler's
 * suffix (".isra.0", ".constprop.0", ".cold"). */
static int kr_class(const char *name)
{
	size_t len = strcspn(name, ".");

	for (size_t i = 0; i < sizeof kr_return / sizeof kr_return[0]; i++)
		if (strlen(kr_return[i]) == len && strncmp(kr_return[i], name, len) == 0)
			return KR_RETURN;
	for (size_t i = 0; i < sizeof kr_resched / sizeof kr_resched[0]; i++)
		if (strlen(kr_resched[i]) == len && strncmp(kr_resched[i], name, len) == 0)
			return KR_RESCHED;
	return KR_OTHER;
}

/* The class of location loc: its function's (a kernel location has one
 * line); KR_OTHER when not a kernel frame or not named. */
static int kr_location_class(const struct pv_profile *p, uint32_t loc)
{
	const struct pv_location *l;
	uint32_t fi;

	if (!pv_location_is_kernel(p, loc))
		return KR_OTHER;
	l = &p->locations[loc];
	if (l->nlines == 0 || !p->lines)
		return KR_OTHER;
	fi = p->lines[l->line_off + l->nlines - 1].function;
	return fi < p->nfunctions ? kr_class(pv_str(p, p->functions[fi].name)) : KR_OTHER;
}

/* The number of kernel frames of sample s to drop: all of them when they
 * are a return to user mode that rescheduled, else 0. */
static uint32_t kr_resumption(const struct pv_profile *p, const struct pv_sample *s, const uint8_t *cls)
{
	const uint32_t *locs = pv_sample_locs(p, s);
	uint32_t nk = 0, r = UINT32_MAX;

	while (nk < s->nlocs && pv_location_is_kernel(p, locs[nk]))
		nk++;
	/* the user frames it is charged to */
	if (nk == 0 || nk == s->nlocs)
		return 0;
	for (uint32_t i = 0; i < nk && r == UINT32_MAX; i++)
		if (locs[i] < p->nlocations && cls[locs[i]] == KR_RETURN)
			r = i;
	if (r == UINT32_MAX)
		return 0;
	/* the return itself, or the rescheduling it called */
	if (r == 0 || (locs[r - 1] < p->nlocations && cls[locs[r - 1]] == KR_RESCHED))
		return nk;
	return 0;
}

long pv_charge_resumptions(struct pv_profile *p)
{
	uint32_t v = pv_find_value_type(p, "cpu");
	uint8_t *cls;
	long moved = 0;

	/* collect-timer's perf events only: the input of another profiler
	 * is shown as that profiler recorded it (perf report's view of perf
	 * script's samples) */
	if (p->nlocations == 0 || (p->sampler != PV_SAMPLER_PERF && p->sampler != PV_SAMPLER_MIXED))
		return 0;
	if ((cls = malloc(p->nlocations)) == NULL)
		return pv_error("out of memory charging the returns to user mode");
	for (uint32_t i = 0; i < p->nlocations; i++)
		cls[i] = (uint8_t)kr_location_class(p, i);
	for (size_t i = 0; i < p->nsamples; i++) {
		struct pv_sample *s = &p->samples[i];
		uint32_t nk;

		if (!(s->flags & PV_SAMPLE_KERNEL) || (nk = kr_resumption(p, s, cls)) == 0)
			continue;
		s->loc_off += nk;
		s->nlocs -= nk;
		s->flags &= ~(uint32_t)PV_SAMPLE_KERNEL;
		if (v != PV_NONE && p->system_cpu_ns > 0)
			p->system_cpu_ns -= s->values[v] < p->system_cpu_ns ? s->values[v] : p->system_cpu_ns;
		moved++;
	}
	free(cls);
	return moved;
}
