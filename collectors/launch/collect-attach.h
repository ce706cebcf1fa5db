/* collect-attach.h - collect-timer -p: profiling a process that runs
 * (collect-attach.c; the injection is inject.h's)
 */
#ifndef PROFVIEW_LAUNCH_COLLECT_ATTACH_H
#define PROFVIEW_LAUNCH_COLLECT_ATTACH_H

#include <sys/types.h>

#include "collect-options.h"

/* Profiles the running processes of o (-p's, or those --all-matching
 * names), each attached to on its own, until --duration, ^C, SIGINT,
 * SIGTERM or SIGHUP, or their ends, then leaves each as it was; several
 * make one run file.  One that cannot be profiled is said and the others
 * go on.  Returns the exit status (failure when any could not be),
 * having said what went wrong. */
int collect_attach(struct collect_opts *o);

#endif
