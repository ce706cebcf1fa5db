/* fakehost.h - the host a unit test of the preload libraries' shared files
 * (writer.c, stacktab.c, mappings.c, control.c...) runs them in
 * (fakehost.c)
 *
 * Those files call back into the library they are built into (preload.h,
 * control.h's library side); a test links fakehost.c instead, which
 * stands in for it as simply as it can and records what it was asked, so
 * that the test can check it.  Nothing here is thread-safe beyond what
 * the atomics say.
 */
#ifndef PROFVIEW_FAKEHOST_H
#define PROFVIEW_FAKEHOST_H

#include <stdatomic.h>
#include <stdint.h>

/* Added to CLOCK_MONOTONIC by preload_now: a test moves time on by
 * adding to it, without sleeping. */
extern _Atomic uint64_t fakehost_clock_skew;
/* What preload_handlers_idle answers (1 unless a test says otherwise). */
extern _Atomic int fakehost_idle;

/* The library's side of control.h: how each call of control_apply asked
 * (CONTROL_*), in order, the first FAKEHOST_CALLS of them (it answers 1
 * when how differs from the state before: control_initial's, or the last
 * one applied); how control_initial was last called; the calls of
 * control_deferred and control_exec_prepare; what control_exec_signal
 * answers. */
#define FAKEHOST_CALLS 64
extern _Atomic int fakehost_applied[FAKEHOST_CALLS];
extern _Atomic int fakehost_napplied;
extern _Atomic int fakehost_initial;          /* -1 until control_initial */
extern _Atomic int fakehost_deferred_calls;
extern _Atomic int fakehost_prepared[2];      /* control_exec_prepare(0), (1) */
extern _Atomic int fakehost_exec_signal;

/* Forgets the calls recorded. */
void fakehost_reset(void);

#endif
