/* preload-state.h - libprofview-timer.so's state, shared by preload.c,
 * sample.c, threads.c, sigs.c, control-timer.c and ids.c
 *
 * The timer's other files (engine.c, wall.c, sweep.c) see only their own
 * headers, and the preload library (../preload) never sees this: it
 * reaches the timer only through host.h (preload_host, defined in
 * preload.c).  Everything declared here is hidden, so the handler reaches
 * the state as directly as when it was static to one file; the TLS block
 * stays initial-exec.
 */
#ifndef PROFVIEW_TIMER_PRELOAD_STATE_H
#define PROFVIEW_TIMER_PRELOAD_STATE_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "collect-env.h"
#include "engine.h"
#include "preload.h"

/* Threads found running, at the start or (attached) later */
#define PRELOAD_FOREIGN_MAX 1024
/* Bytes below a found thread's stack pointer its stack copy also holds:
 * the x86-64 red zone, which its walk may read (cfi.c). */
#define PRELOAD_COPY_BELOW 128
/* What a found thread's walk reads of its stack first (its copy_cap at
 * most); more, up to copy_cap, only when the walk needs it. */
#define PRELOAD_COPY_FIRST 4096
/* A nudge (sweep.c) whose signal comes more than this after it was due
 * found its thread waiting for a CPU; the handler turns down so many in a
 * row before it takes one wherever it comes. */
#define PRELOAD_SWEEP_LATE_NS 100000
#define PRELOAD_SWEEP_DECLINE 3
#define PRELOAD_RANGES_MAX 4096
#define PRELOAD_CFI_REASONS 5
#define PRELOAD_HIST_NS 25
#define PRELOAD_HIST_BUCKETS 800 /* 20 us; the last bucket holds the rest */

enum preload_state {
	PRELOAD_OFF = 0,      /* not started, or not for this process */
	PRELOAD_RUNNING,
	PRELOAD_STOPPED,      /* finished, or the child of a fork */
};

/* What the sweeper (sweep.c) and a thread's handler share about it. */
struct preload_seen {
	_Atomic int64_t cpu;       /* its CPU clock at its last signal */
	/* CLOCK_MONOTONIC when its nudge timer is due, or 0 */
	_Atomic uint64_t due_ns;
	timer_t nudge;             /* made by the sweeper when first needed */
	_Atomic int has_nudge;
	/* Its profiled stretch is open: its RAW_THREAD record written, its
	 * RAW_THREAD_EXIT not yet.  A pause closes it, a resume opens it
	 * again, each at the thread's next sample (control-timer.c); the one
	 * that changes it (atomic_exchange) writes the record. */
	_Atomic int open;
	/* Its perf event was moved to a POSIX timer by its handler
	 * (engine_move, sample.c): the timer, then moved set (release).
	 * The registry's copy of its timer is settled under the lock
	 * (threads_settle). */
	timer_t moved_timer;
	_Atomic int moved;
};

/* One entry per thread with a timer; guarded by registry_lock. */
struct preload_entry {
	pid_t tid;            /* 0: free */
	struct engine_timer timer;
	char name[16];        /* as written in its RAW_THREAD record */
	int64_t cpu_base;     /* its CPU time when profiling started for it */
	uintptr_t stack_lo, stack_hi; /* 0, 0 when unknown */
	uint64_t since_ns;    /* when it was registered */
	uintptr_t pthread;    /* its pthread_t, 0 when unknown (found running) */
	struct preload_seen *seen; /* shared with its handler (sweep.c) */
	/* the sweeper's last look at it: the pass, and the thread's
	 * voluntary context switches then */
	uint64_t sweep_pass, sweep_vcsw;
};

/* A thread that existed before we started.  Filled at init, before any of
 * their timers is armed; afterwards the handler reads it without locks. */
struct preload_foreign {
	pid_t tid;
	int64_t cpu_base;     /* its CPU clock when its timer was made */
	int young;            /* its POSIX timer is in tick mode */
	struct engine_timer timer; /* a copy, for the handler */
	uint64_t *frames;
	/* cfi and check modes: room for a copy of its stack, which its
	 * walk reads (its bounds are not known), copy_cap bytes */
	unsigned char *copy;
	uint32_t copy_cap;
	struct preload_seen seen;
};

struct preload_tls {
	int active;
	pid_t tid;
	int64_t last_cpu;     /* CPU time of the previous sample */
	int64_t cpu_base;     /* CPU time when its timer was armed */
	/* Its POSIX timer is still in tick mode (engine.c): switched by the
	 * handler once the thread used preload.short_ns. */
	int young;
	struct engine_timer timer; /* a copy of its timer, for the handler */
	uintptr_t stack_lo, stack_hi;
	uint64_t *frames;     /* RAW_MAX_FRAMES words, or NULL */
	int foreign;          /* index + 1 into preload.foreign */
	unsigned attach_gen;  /* preload.attach_gen when it was adopted */
	size_t entry;         /* index into preload.entries */
	struct preload_seen *seen; /* shared with the sweeper, or NULL */
	/* requests it turned down in a row: they came late (sweep.c) */
	int declined;
	/* The system part of its samples' weights (sample.c): its user and
	 * system time (getrusage) at the last reading, and the system time
	 * given to samples so far; stale when the next split cannot go on
	 * from sys_done (a pause, a thread found at start, a sample whose
	 * split came from its perf record), and is made in proportion. */
	int64_t user_read, sys_read, sys_done;
	int sys_stale;
	/* auto engine (sample.c, preload_switches): its perf samples since
	 * the last look at its context switches, and its switches and CPU
	 * time (getrusage) then; move_cpu 0 before the first look */
	unsigned move_samples;
	int64_t move_switches, move_cpu;
};

struct preload_global {
	_Atomic int state;
	_Atomic int inflight;           /* handlers between entry and exit */
	int hooked;                     /* our SIGPROF handler is installed */
	/* Loaded into a running process (collect-timer -p, attach.c): no
	 * function is interposed, every thread is one found running, the
	 * end leaves the process as it was.  attach_gen counts the attaches,
	 * so that a thread's state of an earlier one is not taken. */
	int attached;
	_Atomic unsigned attach_gen;
	struct sigaction prior_action;  /* the signal's action before ours */
	int signo;                      /* the profiling signal: SIGPROF or SIGRTMIN+n */
	int inherit;                    /* profile the processes the program starts */
	uint64_t stop_ns;               /* CLOCK_MONOTONIC end of profiling, or 0 */
	_Atomic int ending;             /* the trace is being ended by a signal */
	/* preload_start_threads ran; the control thread was asked for */
	_Atomic int helpers_ready, control_asked;
	uint64_t period_ns;
	/* Threads younger than this (CPU time) are sampled at every tick;
	 * those that end younger are measured together (raw-cpu.h). */
	uint64_t short_ns;
	int unwind;                     /* enum raw_unwind */
	uint32_t stack_size;            /* bytes of stack copied, dwarf mode */
	_Atomic int no_vm_readv;        /* process_vm_readv is refused */
	pid_t pid;
	/* The collector library's own code: a sample whose interrupted
	 * program counter is in it is the collector's work, whatever the
	 * thread was doing (its wrappers' first and last instructions are
	 * outside preload_own_begin/end). */
	uintptr_t own_lo, own_hi;
	pthread_key_t key;
	int key_made;
	_Atomic uint64_t rng;
	_Atomic uint64_t samples, lost, lost_pending, signals, overruns;
	/* threads moved from their perf event to a POSIX timer (sample.c) */
	_Atomic uint64_t moved;
	/* cfi mode: samples unwound in the handler, and those written as a
	 * stack copy instead, by reason (enum cfi_failure; 0: the thread's
	 * stack bounds are unknown) */
	_Atomic uint64_t cfi_unwound, cfi_copied[PRELOAD_CFI_REASONS];
	int stats;                      /* --stats: hist below */

	pthread_mutex_t registry_lock;
	struct preload_entry *entries;
	size_t nentries, capentries;

	/* entries [0, nforeign) of foreign are complete (written before
	 * the count, by the start or attach.c's thread; a tid of 0 is a
	 * thread gone) */
	_Atomic int nforeign;
	int nranges;

	/* The SIGPROF action the program believes it has installed. */
	struct sigaction app_action[2];
	_Atomic int app_current;
	_Atomic int app_warned;

	int (*real_pthread_create)(pthread_t *, const pthread_attr_t *,
				   void *(*)(void *), void *);
	int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

	/* last, the large arrays, so that the fields before them share a
	 * page or two (a start writes those, and of these little) */
	struct preload_foreign foreign[PRELOAD_FOREIGN_MAX];
	uintptr_t ranges[PRELOAD_RANGES_MAX][2]; /* writable mappings at start */
	/* --stats: how long the handler took, in PRELOAD_HIST_NS buckets */
	_Atomic uint64_t hist[PRELOAD_HIST_BUCKETS];
};

#pragma GCC visibility push(hidden)

/* The state (preload.c). */
extern struct preload_global preload;
/* This thread's sampling state (sample.c). */
extern __thread struct preload_tls preload_tls
	__attribute__((tls_model("initial-exec")));

/* Attached (attach.c): starts profiling as preload.c's constructor does
 * with the settings in preload_settings, but for the threads' timers, 0
 * or -1; and ends it as the exit does.  Not signal-safe. */
int preload_start_attached(void);
void preload_end_attached(void);
/* Attached, in attach.c's thread, once the thread that started it is let
 * go: every thread's timer, the helper threads.  Not signal-safe. */
void preload_adopt_attached(void);

/* The kernel's CPU clock of one thread of this process. */
static inline clockid_t preload_thread_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 6); /* CPUCLOCK_SCHED | PERTHREAD */
}

/* The pause state (control-timer.c writes it): a generation count, odd
 * while sampling is paused, one more at each change. */
extern _Atomic uint64_t control_gen;

/* Is sampling paused?  Inline, so that the handler pays one load for it.
 * Signal-safe. */
static inline int control_paused(void)
{
	return (int)(atomic_load(&control_gen) & 1);
}

/* The signal the timers send: SIGPROF, or a real-time signal when the
 * program uses SIGPROF (sigs.c picks it).  Signal-safe. */
static inline int preload_signal(void)
{
	return preload.signo != 0 ? preload.signo : SIGPROF;
}

/* A pseudo-random number in [1, n] (splitmix64 over one shared counter).
 * Signal-safe. */
static inline uint64_t preload_random(uint64_t n)
{
	uint64_t z = atomic_fetch_add(&preload.rng, 0x9e3779b97f4a7c15ull);

	z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ z >> 27) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return n > 0 ? z % n + 1 : 1;
}

/* preload.c */

/* Runs the initialization once (from the constructor, or from the first
 * pthread_create if that comes first). */
void preload_init_once(void);
/* The control thread (control.h), started once the process needs it: for
 * the sweeper, whose thread it starts when its first pass is due
 * (sweep.c), in a process with a thread of the program's own besides the
 * first (any thread may lose its perf event: closefrom), one with a POSIX
 * timer, an attached one, or one whose program closed descriptors by the
 * range (sweep.c).  A process of one thread with its perf event,
 * most short ones, makes none: pausing, resuming and releasing the
 * trace's memory need no thread.  Once; not before preload_start_threads.
 * Not signal-safe. */
void preload_control_need(void);
/* Writes a RAW_COLLECTOR record: the library's CPU time since the last
 * one (its start and end, making unwind rows, the handler with --stats).
 * At the end and before an exec.  Not signal-safe. */
void preload_write_cost(void);
/* Before an exec: each thread's profiled stretch ends with an exit record
 * of its CPU clock now, as the image's end would write it (no destructor
 * runs), so that the CPU time of an image that ran another program is
 * known.  Its timer stays armed: were the exec to fail, a thread's next
 * sample starts a new stretch (control-timer.c).  Nothing in a vfork
 * child.  Not signal-safe. */
void preload_exec_end_threads(void);
/* Zeroes the counts of a trace (samples, lost, signals, overruns, the
 * handlers in flight, the end's flag): a fork's child, a new attach.
 * Not signal-safe. */
void preload_counters_reset(void);
/* Writes the RAW_END record with the counts so far, more_samples added
 * (the wall-clock sampler's), in space reserved as mode says (writer.h):
 * signal-safe with WRITER_FINAL. */
void preload_write_end(int mode, uint64_t more_samples);

#pragma GCC visibility pop

#endif
