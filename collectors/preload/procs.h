/* procs.h - the other processes of a run, as this image sees them: the
 * programs it runs (exec) and the children it waits for (procs.c)
 *
 * In the preload library, which libprofview-timer.so and
 * libprofview-heap.so link.  collect-timer
 * reads these records to account for every process of the run, the ones
 * the library never ran in too (collect-traces.h).
 */
#ifndef PROFVIEW_PRELOAD_PROCS_H
#define PROFVIEW_PRELOAD_PROCS_H

#pragma GCC visibility push(hidden)

/* Right before an exec of file (a path, or with search a name looked up
 * in PATH as execvp does): writes a RAW_EXEC record with what would keep
 * the library out of the new image (raw.h, enum raw_why): a static
 * program, a set-user-ID or set-group-ID one that changes the ids, an
 * environment whose LD_PRELOAD does not name the library (preloads is 0:
 * procs_env_preloads).  Nothing when this image has no trace; a vfork
 * child writes it to its parent's, with its own pid.  Signal-safe (open,
 * read, stat; no allocation), as exec is. */
void procs_note_exec(const char *file, int search, int preloads);
/* Does the environment env load this library (its LD_PRELOAD names it)?
 * Signal-safe. */
int procs_env_preloads(char *const env[]);

#pragma GCC visibility pop

/* The wait functions (wait, waitpid, wait3, wait4) are interposed: each
 * child reaped is written as a RAW_CHILD record (its wait status and CPU
 * time), without waiting for space (signal-safe, as the functions are).
 * So are posix_spawn and posix_spawnp, whose exec happens inside the C
 * library: the child's RAW_EXEC record is written once it has started. */

#endif
