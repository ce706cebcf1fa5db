/* collect.h - what every file of the launcher shares
 *
 * collect-timer and collect-heap are one launcher (this folder, a static
 * library built once) run for one collector each: a struct collect_tool
 * says what tells them apart (the name, the preload library, the options
 * of its own and --help, its settings in the environment), and each one's
 * main (collectors/timer/collect-timer.c, collectors/heap/collect-heap.c)
 * passes its own to collect_main.  Summaries follow the trace (a heap
 * trace's in bytes), not the tool.  The launcher's files:
 *
 *   collect-main.c     collect_main: runs the program, waits for it and
 *                      the processes it starts, passes signals on
 *   collect-options.c  the command line (collect-options.h), the tool
 *                      run and its lines on stderr (collect_say)
 *   collect-launch.c   finding the program and the library, the trace
 *                      file and the environment, the exec (collect-launch.h)
 *   collect-traces.c   reading traces back, finding the run's, joining
 *                      them into one run file (collect-traces.h)
 *   collect-pynames.c  the run's Python names, written once as they are
 *                      joined (collect-pynames.h), each trace rewritten
 *                      to name them by collect-pyjoin.c
 *                      (collect-pynames-int.h), deflated by
 *                      collect-deflate.c (collect-deflate.h;
 *                      collect-deflate-none.c in a build without zlib)
 *   collect-procs.c    every process of the run accounted for
 *                      (collect-procs.h)
 *   collect-summary.c  what is said at the end (collect-summary.h)
 *   collect-runseg.c   --split across the processes of a run
 *                      (collect-runseg.h)
 *   segments.c         --split of one trace (segments.h)
 *   collect-attach.c   -p: a running process, for either tool
 *                      (collect-attach.h), over inject.c (inject.h)
 */
#ifndef PROFVIEW_LAUNCH_COLLECT_H
#define PROFVIEW_LAUNCH_COLLECT_H

#include <stdio.h>

#include "cli.h"

struct collect_opts;
struct option;

/* What -p PID and --all-matching need of a tool (collect-attach.c): the
 * function of its library that starts it in a running process, called as
 * int entry(const char *settings) with the settings one a line (the
 * launcher's own: the trace, the pid, the pipes; then the tool's), and
 * the tool's settings, which a launched run passes in the environment. */
struct collect_attach_desc {
	const char *entry;      /* "profview_timer_attach" */
	/* Writes the tool's settings, "NAME=value\n" each (collect-env.h's
	 * names), into buf of cap bytes: returns how many characters, or -1
	 * when they do not fit or cannot be made. */
	int (*settings)(const struct collect_opts *o, char *buf, size_t cap);
};

/* One collector the launcher runs.  A constant of its main's file. */
struct collect_tool {
	const char *name;       /* "collect-timer": its messages, --version */
	const char *library;    /* its preload library's file, "libprofview-timer.so" */
	/* Its own options, added to those every collector takes (-o,
	 * --no-inherit, --delay, --control-signal, --split, --keep-segments,
	 * --duration, -q, -v, -h, -V): getopt's short letters ("F:") and the
	 * long ones, ended by a zero entry. */
	const char *short_opts;
	const struct option *long_opts;
	/* Prints --help on f. */
	void (*usage)(FILE *f);
	/* One of its own options (getopt's c) with its value into o: -1 to
	 * go on, else an exit status, having said what is wrong. */
	int (*option)(int c, const char *arg, struct collect_opts *o);
	/* After the command line is read: what it warns of (NULL: nothing). */
	void (*parsed)(const struct collect_opts *o);
	/* In the child, before the exec: its own settings in the environment
	 * (collect-env.h); 0 or -1 (NULL: none). */
	int (*set_env)(const struct collect_opts *o);
	/* A program that defines its own malloc escapes it (collect-heap):
	 * the launcher says so at the end. */
	int misses_own_malloc;
	/* -p and --all-matching (NULL: the tool cannot attach). */
	const struct collect_attach_desc *attach;
};

/* The collector being run (collect_main sets it first; collect-options.c). */
extern const struct collect_tool *collect_tool;

/* The launcher, as the main of tool: returns the exit status
 * (collect-main.c). */
int collect_main(int argc, char **argv, const struct collect_tool *tool);

#define COLLECT_POLL_NS 100000000 /* how often the trace is read, with --split */

enum {
	COLLECT_EXIT_USAGE = 2,
	COLLECT_EXIT_FAIL = 1,
	COLLECT_EXIT_NOEXEC = 126,
	COLLECT_EXIT_NOTFOUND = 127,
};

/* Prints "collect-timer: " and the formatted text, which has its own
 * newline, on stderr in one write (collect-options.c). */
void collect_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
