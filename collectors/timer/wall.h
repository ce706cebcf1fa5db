/* wall.h - off-CPU samples for --clock=wall: a thread of the library's
 * own that samples the threads that are off CPU (wall.c)
 */
#ifndef PROFVIEW_TIMER_WALL_H
#define PROFVIEW_TIMER_WALL_H

#include <stdint.h>

/* Starts the thread that samples the registered threads that are off CPU
 * every period of wall-clock time.  Returns 0 or -1.  Not signal-safe. */
int wall_start(uint64_t period_ns, uint32_t stack_size);
/* Stops it and waits for it.  Returns the samples it wrote.  Not
 * signal-safe. */
uint64_t wall_stop(void);

#endif
