/* helper.h - starting a thread of the library's own (helper.c), in the
 * preload library
 */
#ifndef PROFVIEW_PRELOAD_HELPER_H
#define PROFVIEW_PRELOAD_HELPER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/* Starts a thread of the library's own: not registered (no timer, no
 * samples), every signal blocked, named name; stack 0 for the default
 * size.  Returns 0, or -1 with errno set: pthread_create's error, EBUSY
 * when every start slot is taken by starts not yet begun, ENOSYS when
 * libc's pthread_create cannot be found.  Not signal-safe. */
int threads_start_helper(pthread_t *thread, void *(*fn)(void *), const char *name, size_t stack,
			 int detached);
/* The CPU time of a helper thread started (started set) and not yet
 * joined, in nanoseconds; 0 when it is not running.  Not signal-safe. */
uint64_t threads_helper_cpu_ns(pthread_t thread, int started);

#pragma GCC visibility pop

#endif
