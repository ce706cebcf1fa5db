/* inject.h - loading a collector's library into a running process and
 * calling its attach function there (collect-timer -p)
 *
 * Through ptrace, one thread at a time: only the thread that makes the
 * calls is stopped, the others run on.  Each failure is one line on
 * stderr that says what to do, and leaves the process as it was.
 */
#ifndef PROFVIEW_LAUNCH_INJECT_H
#define PROFVIEW_LAUNCH_INJECT_H

#include <stdint.h>
#include <sys/types.h>

/* Can pid be attached to by this process?  Says why not (no such
 * process, another user, already traced, ptrace_scope, a static program)
 * and returns -1, else 0. */
int inject_check(pid_t pid);

/* Loads lib (an absolute path) into pid with dlopen and calls its
 * function func(settings) there.  Returns 0 with the function's result in
 * *ret and how long the calling thread was stopped in *stopped_ns, or -1
 * having said why (the process left as it was). */
int inject_call(pid_t pid, const char *lib, const char *func, const char *settings, long *ret,
		uint64_t *stopped_ns);

#endif
