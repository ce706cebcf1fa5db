/* fakehost.c - the host of the preload libraries' shared files, for their
 * unit tests (see fakehost.h) */
#include <time.h>

#include "control.h"
#include "fakehost.h"
#include "preload-state.h"
#include "preload.h"

const char preload_collector[] = "collect-timer";
const char preload_library[] = "libprofview-fakehost";

__thread struct preload_tls preload_tls __attribute__((tls_model("initial-exec")));

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

uint64_t preload_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec +
	       atomic_load(&fakehost_clock_skew);
}

int preload_handlers_idle(void)
{
	return atomic_load(&fakehost_idle);
}

/* ---- control.h, the library's side ---- */

static _Atomic int fakehost_state = CONTROL_RESUME;

int control_apply(int how)
{
	int n = atomic_fetch_add(&fakehost_napplied, 1);

	if (n < FAKEHOST_CALLS)
		atomic_store(&fakehost_applied[n], how);
	return atomic_exchange(&fakehost_state, how) != how;
}

void control_initial(int how)
{
	atomic_store(&fakehost_initial, how);
	atomic_store(&fakehost_state, how);
}

uint64_t control_deferred(uint64_t now)
{
	(void)now;
	atomic_fetch_add(&fakehost_deferred_calls, 1);
	return 0;
}

void control_exec_prepare(int undo)
{
	atomic_fetch_add(&fakehost_prepared[undo != 0], 1);
}

int control_exec_signal(void)
{
	return atomic_load(&fakehost_exec_signal);
}
