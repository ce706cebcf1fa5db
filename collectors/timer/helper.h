/* helper.h - starting a thread of the library's own (helper.c), in either
 * preload library
 */
#ifndef PROFVIEW_TIMER_HELPER_H
#define PROFVIEW_TIMER_HELPER_H

#include <pthread.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

/* Starts a thread of the library's own: not registered (no timer, no
 * samples), every signal blocked, named name; stack 0 for the default
 * size.  Returns 0 or -1.  Not signal-safe. */
int threads_start_helper(pthread_t *thread, void *(*fn)(void *), const char *name, size_t stack,
			 int detached);

#pragma GCC visibility pop

#endif
