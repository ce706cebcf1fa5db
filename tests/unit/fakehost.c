/* fakehost.c - the host of the preload library's files, for their unit
 * tests (see fakehost.h): a preload_host (host.h) that records what it is
 * asked */
#include "control.h"
#include "fakehost.h"
#include "host.h"
#include "preload.h"

_Atomic uint64_t fakehost_clock_skew;
_Atomic int fakehost_idle = 1;
_Atomic int fakehost_applied[FAKEHOST_CALLS];
_Atomic int fakehost_napplied;
_Atomic int fakehost_initial = -1;
_Atomic int fakehost_deferred_calls;
_Atomic int fakehost_prepared[2];
_Atomic int fakehost_exec_signal;

void fakehost_reset(void)
{
	atomic_store(&fakehost_napplied, 0);
	atomic_store(&fakehost_initial, -1);
	atomic_store(&fakehost_deferred_calls, 0);
	atomic_store(&fakehost_prepared[0], 0);
	atomic_store(&fakehost_prepared[1], 0);
}

static int fakehost_running(void)
{
	return 1;
}

static int fakehost_handlers_idle(void)
{
	return atomic_load(&fakehost_idle);
}

static _Atomic int fakehost_state = CONTROL_RESUME;

static int fakehost_control_apply(int how)
{
	int n = atomic_fetch_add(&fakehost_napplied, 1);

	if (n < FAKEHOST_CALLS)
		atomic_store(&fakehost_applied[n], how);
	return atomic_exchange(&fakehost_state, how) != how;
}

static void fakehost_control_initial(int how)
{
	atomic_store(&fakehost_initial, how);
	atomic_store(&fakehost_state, how);
}

static uint64_t fakehost_control_deferred(uint64_t now)
{
	(void)now;
	atomic_fetch_add(&fakehost_deferred_calls, 1);
	return 0;
}

static void fakehost_exec_prepare(int undo)
{
	atomic_fetch_add(&fakehost_prepared[undo != 0], 1);
}

static int fakehost_exec_signal_of(void)
{
	return atomic_load(&fakehost_exec_signal);
}

const struct preload_host preload_host = {
	.collector = "collect-timer",
	.library = "libprofview-fakehost",
	.running = fakehost_running,
	.handlers_idle = fakehost_handlers_idle,
	.control_initial = fakehost_control_initial,
	.control_apply = fakehost_control_apply,
	.control_deferred = fakehost_control_deferred,
	.exec_prepare = fakehost_exec_prepare,
	.exec_signal = fakehost_exec_signal_of,
};
