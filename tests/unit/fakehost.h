/* fakehost.h - the host a unit test of the preload library's files
 * (writer.c, stacktab.c, mappings.c, control.c...) runs them in
 * (fakehost.c)
 *
 * Those files reach the library they are built into only through its
 * preload_host (host.h); a test links fakehost.c, whose preload_host
 * stands in for it as simply as it can and records what it was asked, so
 * that the test can check it.  The files are built for the tests with
 * PRELOAD_CLOCK_SKEW naming fakehost_clock_skew (preload.h).  Nothing
 * here is thread-safe beyond what the atomics say.
 */
#ifndef PROFVIEW_FAKEHOST_H
#define PROFVIEW_FAKEHOST_H

#include <stdatomic.h>
#include <stdint.h>

/* Added to CLOCK_MONOTONIC by preload_now (PRELOAD_CLOCK_SKEW): a test
 * moves time on by adding to it, without sleeping. */
extern _Atomic uint64_t fakehost_clock_skew;
/* What the host's handlers_idle answers (1 unless a test says otherwise). */
extern _Atomic int fakehost_idle;

/* The host's control members: how each call of control_apply asked
 * (CONTROL_*), in order, the first FAKEHOST_CALLS of them (it answers 1
 * when how differs from the state before: control_initial's, or the last
 * one applied); how control_initial was last called; the calls of
 * control_deferred and exec_prepare; what exec_signal answers. */
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
