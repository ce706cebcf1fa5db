/* procs.h - the other processes of a run, as this image sees them: the
 * programs it runs (exec) and the children it waits for (procs.c)
 *
 * In the preload library, which libprofview-timer.so and
 * libprofview-heap.so link.  collect-timer
 * reads these records to account for every process of the run, the ones
 * the library never ran in too (collect-traces.h).
 */
#ifndef PROFVIEW_TIMER_PROCS_H
#define PROFVIEW_TIMER_PROCS_H

#pragma GCC visibility push(hidden)

/* Right before an exec of file (a path, or a name looked up in PATH as
 * execvp does) with the environment env: writes a RAW_EXEC record with
 * what would keep the library out of the new image (raw.h, enum raw_why):
 * a static program, a set-user-ID or set-group-ID one that changes the
 * ids, an environment whose LD_PRELOAD does not name the library
 * (preloads is 0).  Nothing when this image has no trace; a vfork child
 * writes it to its parent's, with its own pid.  Signal-safe
 * (open, read, stat; no allocation), as exec is. */
void procs_note_exec(const char *file, char *const env[], int preloads);

#pragma GCC visibility pop

/* The wait functions (wait, waitpid, wait3, wait4) are interposed: each
 * child reaped is written as a RAW_CHILD record (its wait status and CPU
 * time), without waiting for space (signal-safe, as the functions are). */

#endif
