/* kresume.h - a thread's return to user code after a preemption, charged
 * to the user code it was preempted in
 *
 * A thread preempted on its way back to user code (at the end of a system
 * call, a page fault or an interrupt that found another thread due to run)
 * is switched out there, and switched in there again later: the kernel
 * then finishes the switch (finish_task_switch, which also starts the
 * thread's perf events again, a profiler's own among them) and returns to
 * the user code.  A CPU-time sampler whose timer is a perf event of the
 * thread finds many of its samples there under contention: the event's
 * timer, stopped at the switch-out, is started again in that path and
 * fires as it ends, where interrupts are enabled again.  Neither perf's
 * own sampling of the same thread nor the kernel's accounting of its
 * system time (getrusage) finds that time: the samples stand for the
 * thread's user code, which is what the time was spent between.
 */
#ifndef PROFVIEW_KRESUME_H
#define PROFVIEW_KRESUME_H
#include "profile.h"

/* Charges to their user frames the samples of the symbolized profile p,
 * when its samples are collect-timer's perf events' (p->sampler), that were
 * taken in a return to user mode that rescheduled (their kernel frames,
 * from the leaf: the scheduler's or rseq's, called from the return to
 * user mode, or that return itself), when they have user frames: the
 * kernel frames are dropped, the kernel flag cleared, and their CPU time
 * taken from p->system_cpu_ns.  A system call or page fault preempted
 * while it works (cond_resched, or preempted in the kernel) keeps its
 * kernel frames.  Returns how many samples were charged so, or -1 after
 * reporting that memory ran out (p is then unchanged). */
long pv_charge_resumptions(struct pv_profile *p);

#endif
