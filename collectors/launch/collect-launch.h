/* collect-launch.h - starting the program under the preload library
 *
 * What happens before the program runs: finding it the way a shell would,
 * refusing what LD_PRELOAD cannot work for, finding the library, and in
 * the forked child, creating the trace file, setting the environment the
 * library reads (collect-env.h), and the exec.
 */
#ifndef PROFVIEW_LAUNCH_COLLECT_LAUNCH_H
#define PROFVIEW_LAUNCH_COLLECT_LAUNCH_H

#include <stddef.h>

#include "collect-options.h"

/* Finds the program the way a shell would: out gets its path.  Returns
 * 0, or 126 or 127 having said why. */
int collect_resolve(const char *name, char *out, size_t cap);

/* Refuses programs for which the dynamic loader would ignore LD_PRELOAD or
 * could not load a 64-bit library.  Returns 0 or -1 (message printed). */
int collect_check_binary(const char *path);
/* Does the program (an ELF file; 0 for a script) define its own malloc,
 * so that no allocation reaches the preloaded library's, and does that
 * matter to the tool (collect-heap: misses_own_malloc)?  1 or 0. */
int collect_own_allocator(const char *path);

/* Finds the preload library: out gets its path.  Returns 0 or -1
 * (message printed). */
int collect_find_preload(char *out, size_t cap);
/* Refuses an -o that is a file the run reads: the program (prog, resolved),
 * the interpreter of a script, or a file the command line names (an
 * argument, or the value of NAME=VALUE), which the trace would replace.
 * Returns 0, or -1 with one line on stderr. */
int collect_check_output(const struct collect_opts *o, const char *prog);
/* With -o: refuses a file another run is writing (it holds a lock on it),
 * else creates the trace file in its place (a new file, mode 0600) and
 * holds it with an open file description lock until this process ends,
 * so that a run started meanwhile with the same -o is refused; sets
 * o->output_held.  Returns 0, or -1 with one line on stderr.  (A run
 * that starts in the instant between another's creating the file and
 * locking it is not caught.) */
int collect_claim_output(struct collect_opts *o);

/* In the forked child: creates the trace, sets the environment, writes
 * the trace's name and its NUL to pipefd, and runs prog.  When the exec
 * fails, writes one more byte and exits 126 or 127.  Never returns. */
void collect_child(const struct collect_opts *o, const char *prog, const char *lib, int pipefd)
	__attribute__((noreturn));

#endif
