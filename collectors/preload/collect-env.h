/* collect-env.h - what the launcher (collect-timer, collect-heap) tells
 * the preload libraries, and the limits both hold to
 *
 * The launcher (collectors/launch, collect-options.c and each tool's own
 * options) checks its options, then passes them to the library (the
 * timer's preload.c, the heap's heap-start.c, control.c here) in the
 * environment of the program it runs; the library reads them back in
 * every process that inherits them.  Both take the names, the defaults
 * and the limits from here, so the two cannot disagree.  Macros and
 * inline functions only: the library links nothing of the launcher's.
 * The checks below are pure functions of their argument: signal-safe.
 */
#ifndef PROFVIEW_PRELOAD_COLLECT_ENV_H
#define PROFVIEW_PRELOAD_COLLECT_ENV_H

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The variables, and what they hold. */
#define COLLECT_ENV_OUTPUT "PROFVIEW_OUTPUT"       /* absolute path of the trace */
#define COLLECT_ENV_FREQUENCY "PROFVIEW_FREQUENCY" /* samples a second, in Hz */
#define COLLECT_ENV_UNWIND "PROFVIEW_UNWIND"       /* "cfi", "dwarf", "fp" or "check" */
#define COLLECT_ENV_STACK_SIZE "PROFVIEW_STACK_SIZE" /* bytes of stack a sample, dwarf */
#define COLLECT_ENV_ENGINE "PROFVIEW_ENGINE"       /* "auto", "posix" or "perf" */
#define COLLECT_ENV_CLOCK "PROFVIEW_CLOCK"         /* "cpu" or "wall" */
/* The signal number that pauses and resumes sampling, "0" for none; unset,
 * COLLECT_CONTROL_DEFAULT. */
#define COLLECT_ENV_CONTROL "PROFVIEW_CONTROL_SIGNAL"
/* "1": the control signal was blocked from the program's start until the
 * library's handler takes it (collect-timer blocks it before its fork, an
 * exec in the run before the exec), so that it never meets its default
 * action, which kills; the library's constructor unblocks it */
#define COLLECT_ENV_HELD "PROFVIEW_CONTROL_HELD"
/* The run's control word (struct collect_control): a path to open and map
 * shared, "/proc/<collect-timer's pid>/fd/<n>" */
#define COLLECT_ENV_CONTROL_WORD "PROFVIEW_CONTROL_WORD"
#define COLLECT_ENV_START_NS "PROFVIEW_START_NS"   /* CLOCK_MONOTONIC ns to start at */
/* "1": collect-timer cuts the trace into segments as it is written, and
 * frees what it has read of it */
#define COLLECT_ENV_SPLIT "PROFVIEW_SPLIT"
/* For tests: the most address space a trace is written through, in bytes
 * (a power of two from 16 MiB), so that a short run goes round it */
#define COLLECT_ENV_TEST_RING "PROFVIEW_TEST_RING"
/* The run's file of short process images (raw.h, struct raw_short),
 * absolute: an image that has written no sample yet keeps its trace in
 * memory, and appends it there if it ends so */
#define COLLECT_ENV_SHORT "PROFVIEW_SHORT"
#define COLLECT_ENV_PID "PROFVIEW_PID"             /* the process that writes OUTPUT */
#define COLLECT_ENV_INHERIT "PROFVIEW_INHERIT"     /* "0": the other processes do nothing */
#define COLLECT_ENV_STOP_NS "PROFVIEW_STOP_NS"     /* CLOCK_MONOTONIC ns to stop at */
#define COLLECT_ENV_STATS "PROFVIEW_STATS"         /* "1": the handler's figures at exit */
#define COLLECT_ENV_HEAP_RATE "PROFVIEW_HEAP_RATE" /* collect-heap: mean bytes between samples */
#define COLLECT_ENV_PYTHON "PROFVIEW_PYTHON"       /* "0": no Python frames read */
/* The boot's id (/proc/sys/kernel/random/boot_id), read once by the
 * launcher rather than by every process image the run starts */
#define COLLECT_ENV_BOOT_ID "PROFVIEW_BOOT_ID"

/* Sampling frequency: the default and the largest (samples a second). */
#define COLLECT_HZ_DEFAULT 250
#define COLLECT_HZ_MAX 100000

/* Bytes of stack copied per sample in dwarf mode: the default and the
 * range (a multiple of 8 within it). */
#define COLLECT_STACK_DEFAULT 8192
#define COLLECT_STACK_MIN 512
#define COLLECT_STACK_MAX 65536

/* The control signal unless told otherwise. */
#define COLLECT_CONTROL_DEFAULT SIGUSR2

/* The control word: one for the run, in memory collect-timer shares with
 * every process of it.  A pause or resume asked for, by the control signal
 * sent to collect-timer or to any process of the run whose library takes
 * it, adds one to requests and wakes (futex) every process's control
 * thread, which pauses while requests is odd: so a request reaches the
 * whole process tree, and a process that starts later starts as the run
 * is.  said and taken make the lines about it one for the run. */
struct collect_control {
	_Atomic uint32_t requests; /* the futex word */
	_Atomic uint32_t said;     /* the last request announced on stderr */
	_Atomic uint32_t taken;    /* 1: a program's own handler was announced */
};
#define COLLECT_CONTROL_SIZE 4096
/* After the control word's page, in the same memory, the run's share of
 * unwind rows (trace/ehcfi-share.h): made by collect-timer or collect-heap
 * with the word, zero (an empty share), of this many bytes of address
 * space, which take memory only as the processes' rows fill them. */
#define COLLECT_SHARE_SIZE ((size_t)256 << 20)

/* May sig be the control signal?  Not one that cannot be caught, nor the
 * profiler's own, nor one the kernel sends for a fault. */
static inline bool collect_env_control_ok(int sig)
{
	return sig > 0 && sig < NSIG && sig != SIGKILL && sig != SIGSTOP && sig != SIGPROF &&
	       sig != SIGSEGV && sig != SIGBUS && sig != SIGILL && sig != SIGFPE && sig != SIGTRAP &&
	       sig != SIGSYS;
}

static inline bool collect_env_frequency_ok(long hz)
{
	return hz >= 1 && hz <= COLLECT_HZ_MAX;
}

/* collect-heap's mean sampling interval, in bytes: the default (as
 * gperftools' and Go's) and the range; 1 samples every allocation. */
#define COLLECT_RATE_DEFAULT 524288
#define COLLECT_RATE_MAX (1ll << 40)

static inline bool collect_env_rate_ok(long long bytes)
{
	return bytes >= 1 && bytes <= COLLECT_RATE_MAX;
}

static inline bool collect_env_stack_size_ok(long bytes)
{
	return bytes >= COLLECT_STACK_MIN && bytes <= COLLECT_STACK_MAX && bytes % 8 == 0;
}

/* The run's file of short process images for the trace at out:
 * "<out>.short".  Returns 0, or -1 when it does not fit in cap. */
static inline int collect_env_short_path(const char *out, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "%s.short", out);

	return n >= 0 && (size_t)n < cap ? 0 : -1;
}

#endif
