/* sample.h - the sampling handler and what it shares (sample.c)
 *
 * sample.c also defines the host's running and handlers_idle (host.h).
 * Functions marked signal-safe may run in the handler: they take no lock,
 * allocate nothing and never block.
 */
#ifndef PROFVIEW_TIMER_SAMPLE_H
#define PROFVIEW_TIMER_SAMPLE_H

#include <signal.h>
#include <stdint.h>

/* Reads len bytes at addr of our own memory without faulting; returns the
 * bytes read.  Signal-safe. */
uint32_t preload_read_memory(void *dst, uintptr_t addr, uint32_t len);

#pragma GCC visibility push(hidden)

/* Is this process being profiled right now?  Signal-safe. */
int sample_running(void);
/* Is no sampling handler running right now?  One that starts after this
 * returned 1 sees every pointer published (seq_cst) before the call.
 * Signal-safe. */
int sample_handlers_idle(void);
/* The handler of the profiler's signal. */
void sample_on_sigprof(int sig, siginfo_t *si, void *uc);

#pragma GCC visibility pop

#endif
