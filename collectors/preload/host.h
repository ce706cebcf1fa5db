/* host.h - what the preload library (libprofview-preload.a) asks of the
 * collector it is linked into: the only way it reaches its host
 *
 * libprofview-timer.so (collectors/timer) and libprofview-heap.so
 * (collectors/heap) each define one preload_host, a constant of this
 * struct; the library's files (writer.c, mappings.c, control.c, notice.c,
 * dlhook.c...) call the host through it and through nothing else, and the
 * host keeps its state to itself.  A host that links the library whole
 * but defines no preload_host fails to link.
 *
 * A member marked "signal-safe" may be called from a signal handler (the
 * host's own, or the library's control signal) and from a thread that
 * interrupted another in the host's code: it takes no locks, allocates
 * nothing and never blocks.  A member that may be NULL says what the
 * library does without it.
 */
#ifndef PROFVIEW_PRELOAD_HOST_H
#define PROFVIEW_PRELOAD_HOST_H

#include <stdint.h>

struct preload_host {
	/* The launcher's name ("collect-timer"), which begins every line
	 * the library writes on stderr (notice.c). */
	const char *collector;
	/* The library's file name without ".so" ("libprofview-timer"):
	 * an exec whose LD_PRELOAD names it loads the library again
	 * (control.c). */
	const char *library;

	/* Is this process being profiled right now?  dlopen and dlclose
	 * record mappings only then.  Signal-safe. */
	int (*running)(void);
	/* Is none of the host's handlers (or hooks) using the library's
	 * tables right now?  One that starts after this returned 1 sees
	 * every pointer published (seq_cst) before the call: the library
	 * frees retired tables only then (mappings.c), and
	 * preload_quiesce waits for it.  Signal-safe. */
	int (*handlers_idle)(void);

	/* At control_init, before the first thread is registered or the
	 * first event recorded: how sampling starts (enum control_how,
	 * control.h).  Not signal-safe. */
	void (*control_initial)(int how);
	/* Makes sampling be as how says (enum control_how) if it is not so
	 * already and the process is being profiled; returns 1 if it
	 * changed.  Called by control_poll, from the host's sampling, the
	 * control signal's handler or the control thread, at once in several
	 * threads too: what it changes it changes with one atomic operation.
	 * A change may take effect in each thread at its next sample.
	 * Signal-safe. */
	int (*control_apply)(int how);
	/* The host's work that needs the control thread (control_start,
	 * which the host calls only then): called by that thread as it
	 * starts and as it wakes, with the time (preload_now); does what is
	 * due and returns when it is next wanted, 0 for never.  NULL: the
	 * host puts nothing off.  Not signal-safe. */
	uint64_t (*control_deferred)(uint64_t now);

	/* Before an exec (undo 0), and after one that failed (undo 1): what
	 * the host does to the program's signals so that the new image
	 * inherits them as it would have without the library.  NULL: the
	 * host holds none of the program's signals.  Not signal-safe. */
	void (*exec_prepare)(int undo);
	/* The signal the host samples with, held (blocked) across an exec
	 * of an image that loads the library again; 0 for none.  NULL: the
	 * host samples with no signal.  Signal-safe. */
	int (*exec_signal)(void);
	/* The image ends now without its destructors (_exit or _Exit
	 * called in the process whose trace it is, not in a vfork child):
	 * the end of the trace as far as it can be written without locks
	 * (each thread's CPU time, what was lost, the end).  NULL: the
	 * trace ends without them.  Signal-safe. */
	void (*quick_end)(void);
};

#pragma GCC visibility push(hidden)

/* Defined by the host. */
extern const struct preload_host preload_host;

#pragma GCC visibility pop

#endif
