/* collect.h - what every file of the launcher shares
 *
 * collect-timer and collect-heap are one launcher built twice, the second
 * with COLLECT_HEAP: another library, its own options, and summaries in
 * bytes.  Its files:
 *
 *   collect-timer.c    main: runs the program, waits for it and the
 *                      processes it starts, passes signals on
 *   collect-options.c  the command line and --help (collect-options.h)
 *   collect-launch.c   finding the program and the library, the trace
 *                      file and the environment, the exec (collect-launch.h)
 *   collect-traces.c   reading traces back, finding the run's, joining
 *                      them into one run file (collect-traces.h)
 *   collect-summary.c  what is said at the end (collect-summary.h)
 *   collect-runseg.c   --split across the processes of a run
 *                      (collect-runseg.h)
 *   segments.c         --split of one trace (segments.h)
 */
#ifndef PROFVIEW_TIMER_COLLECT_H
#define PROFVIEW_TIMER_COLLECT_H

#ifdef COLLECT_HEAP
#define COLLECT_NAME "collect-heap"
#define COLLECT_LIB "libprofview-heap.so"
#else
#define COLLECT_NAME "collect-timer"
#define COLLECT_LIB "libprofview-timer.so"
#endif
#define COLLECT_POLL_NS 100000000 /* how often the trace is read, with --split */

enum {
	COLLECT_EXIT_USAGE = 2,
	COLLECT_EXIT_FAIL = 1,
	COLLECT_EXIT_NOEXEC = 126,
	COLLECT_EXIT_NOTFOUND = 127,
};

#endif
