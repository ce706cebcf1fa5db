/* collect-attach.h - collect-timer -p: profiling a process that runs
 * (collect-attach.c; the injection is inject.h's)
 */
#ifndef PROFVIEW_LAUNCH_COLLECT_ATTACH_H
#define PROFVIEW_LAUNCH_COLLECT_ATTACH_H

#include <sys/types.h>

#include "collect-options.h"

/* Profiles process pid, running, until --duration, ^C, SIGINT, SIGTERM or
 * SIGHUP, or its end, then leaves it as it was.  Returns the exit
 * status, having said what went wrong. */
int collect_attach(struct collect_opts *o, pid_t pid);

#endif
