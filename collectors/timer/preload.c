/* preload.c - libprofview-timer.so: per-thread CPU-time sampling by SIGPROF
 *
 * Loaded with LD_PRELOAD by collect-timer, which sets PROFVIEW_OUTPUT,
 * PROFVIEW_FREQUENCY, PROFVIEW_UNWIND, PROFVIEW_STACK_SIZE, PROFVIEW_ENGINE,
 * PROFVIEW_CLOCK, PROFVIEW_PID, PROFVIEW_INHERIT, PROFVIEW_STOP_NS,
 * PROFVIEW_STATS and PROFVIEW_BOOT_ID.  The process whose pid is
 * PROFVIEW_PID writes PROFVIEW_OUTPUT (the file the launcher created).
 * Every other process image writes a trace of its own (writer_open names
 * it after its pid): the child of a fork starts one in the atfork child
 * handler, a program it execs (or any program that inherited the
 * environment) in our constructor; with PROFVIEW_INHERIT=0 they do
 * nothing at all.  PROFVIEW_STOP_NS (CLOCK_MONOTONIC) is when profiling
 * stops: a thread of ours sleeps until then and finishes the trace while
 * the program runs on.  PROFVIEW_START_NS (--delay) and
 * PROFVIEW_CONTROL_SIGNAL are control.c's (pausing and resuming sampling);
 * PROFVIEW_SPLIT tells the writer that collect-timer reads the trace as it
 * is written.  collect-env.h names them all, with the defaults
 * and limits the launcher checks too: a value out of them is taken as the
 * default.
 *
 * dlopen, dlmopen and dlclose are interposed (dlhook.c) so that the
 * mappings of a library loaded later are written while it is mapped, even
 * if it is closed before the end.
 *
 * Signal masks: the library never changes the program's masks (except that
 * it blocks SIGPROF around its own bookkeeping and restores the mask after).
 * A thread that blocks SIGPROF is not sampled while it blocks it; since a
 * sample weighs the CPU time since the thread's previous sample, the time
 * spent blocked goes to the first sample after it unblocks.
 *
 * This file: the start (environment, signal choice, trace header, the
 * helper threads), fork, and the end of the trace at exit or --duration.
 * The sampling handler is in sample.c, the thread registry and
 * pthread_create in threads.c, the profiler's signal, sigaction/signal and
 * the termination signals in sigs.c; preload-state.h holds what they share.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cfi.h"
#include "collect-env.h"
#include "control-timer.h"
#include "engine.h"
#include "lost.h"
#include "host.h"
#include "mappings.h"
#include "preload-state.h"
#include "pyframes.h"
#include "sample.h"
#include "sigs.h"
#include "stacktab.h"
#include "sweep.h"
#include "threads.h"
#include "wall.h"
#include "writer.h"

#define PRELOAD_QUIESCE_NS 2000000000ull
#define PRELOAD_QUIESCE_STEP_NS 1000000

/* (its few fields a start writes are its first page; what follows them,
 * the foreign threads and the ranges, is written later or never) */
struct preload_global preload PRELOAD_COLD = {
	.registry_lock = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t preload_once = PTHREAD_ONCE_INIT;
/* --clock=wall: off-CPU samples from wall.c too; the samples it wrote */
static int preload_wall;
static uint64_t preload_wall_samples;
/* collect-timer --split reads the trace as it is written */
static int preload_tailed;

/* The library's own CPU time in this process image (RAW_COLLECTOR): in
 * its start and end, and what the last record said of each part. */
static struct {
	uint64_t start_ns, end_ns, helpers_ns;
	uint64_t said_start, said_end, said_tables, said_handler, said_rows, said_helpers;
} preload_cost;

static uint64_t preload_thread_ns(void)
{
	struct timespec ts;

	return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0 ? (uint64_t)preload_ts_ns(&ts) : 0;
}

/* The handler's time the --stats histogram holds (the middle of each
 * bucket); 0 without --stats. */
static uint64_t preload_handler_ns(void)
{
	uint64_t ns = 0;

	for (int b = 0; preload.stats && b < PRELOAD_HIST_BUCKETS; b++)
		ns += atomic_load(&preload.hist[b]) * ((uint64_t)b * PRELOAD_HIST_NS + PRELOAD_HIST_NS / 2);
	return ns;
}

/* mode: writer_reserve's (WRITER_FINAL at the end by _exit) */
static void preload_cost_record(int mode)
{
	struct raw_collector *rec;
	uint64_t chunks, rows, tables, handler = preload_handler_ns();

	cfi_cost(&chunks, &rows, &tables);
	rec = writer_reserve(sizeof(*rec), mode);
	if (rec == NULL)
		return;
	rec->start_ns = preload_cost.start_ns - preload_cost.said_start;
	rec->end_ns = preload_cost.end_ns - preload_cost.said_end;
	rec->tables_ns = tables - preload_cost.said_tables;
	rec->handler_ns = handler - preload_cost.said_handler;
	rec->table_rows = rows - preload_cost.said_rows;
	rec->helpers_ns = preload_cost.helpers_ns - preload_cost.said_helpers;
	writer_publish(rec, RAW_COLLECTOR, sizeof(*rec));
	preload_cost.said_start = preload_cost.start_ns;
	preload_cost.said_end = preload_cost.end_ns;
	preload_cost.said_tables = tables;
	preload_cost.said_handler = handler;
	preload_cost.said_rows = rows;
	preload_cost.said_helpers = preload_cost.helpers_ns;
}

void preload_counters_reset(void)
{
	atomic_store(&preload.inflight, 0);
	atomic_store(&preload.ending, 0);
	atomic_store(&preload.samples, 0);
	atomic_store(&preload.lost, 0);
	atomic_store(&preload.lost_pending, 0);
	atomic_store(&preload.signals, 0);
	atomic_store(&preload.overruns, 0);
	atomic_store(&preload.moved, 0);
}

void preload_write_end(int mode, uint64_t more_samples)
{
	struct raw_end *end = writer_reserve(sizeof(*end), mode);

	if (end == NULL)
		return;
	end->time_ns = preload_now();
	end->samples = atomic_load(&preload.samples) + more_samples;
	end->lost = atomic_load(&preload.lost);
	end->signals = atomic_load(&preload.signals);
	end->overruns = atomic_load(&preload.overruns);
	writer_publish(end, RAW_END, sizeof(*end));
}

void preload_write_cost(void)
{
	if (atomic_load(&preload.state) != PRELOAD_RUNNING)
		return;
	preload_own_begin();
	preload_cost.helpers_ns = control_cpu_ns() + sweep_cpu_ns();
	preload_cost_record(WRITER_WAIT);
	preload_own_end();
}

void preload_exec_end_threads(void)
{
	sigset_t block, old;

	/* (a vfork child runs on its parent's memory: its exec ends none
	 * of the parent's threads) */
	if (atomic_load(&preload.state) != PRELOAD_RUNNING || getpid() != preload.pid)
		return;
	preload_own_begin();
	sigemptyset(&block);
	sigaddset(&block, preload.signo);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	pthread_mutex_lock(&preload.registry_lock);
	for (size_t i = 0; i < preload.nentries; i++) {
		struct preload_entry *e = &preload.entries[i];
		struct timespec ts;

		if (e->tid == 0 || clock_gettime(preload_thread_clock(e->tid), &ts) != 0)
			continue;
		threads_settle(e);
		if (control_thread_close(e->seen))
			threads_write_exit(e->tid, e->seen, preload_ts_ns(&ts));
	}
	pthread_mutex_unlock(&preload.registry_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	preload_own_end();
}

/* The end of the trace when the image ends by _exit (host.h: quick_end):
 * what preload_fini_run writes, without its locks and waits for space
 * (signal-safe, but for a try of the registry's lock): samples stop, a
 * handler still running gets a moment to finish, then each thread's CPU
 * time, the lost count, the collector's
 * cost and the end record go into the space kept for them.  The helper
 * threads end with the process. */
static void preload_quick_end(void)
{
	struct timespec ms = { 0, 1000000 };
	int expected = PRELOAD_RUNNING, locked;

	if (getpid() != preload.pid || atomic_exchange(&preload.ending, 1))
		return;
	if (!atomic_compare_exchange_strong(&preload.state, &expected, PRELOAD_STOPPED))
		return;
	for (int i = 0; i < 200 && atomic_load(&preload.inflight) != 0; i++)
		nanosleep(&ms, NULL);
	/* the registry as it is, unless this thread was interrupted while
	 * changing it (then the threads' ends are left out) */
	locked = pthread_mutex_trylock(&preload.registry_lock) == 0;
	for (size_t i = 0; locked && i < preload.nentries; i++) {
		pid_t tid = preload.entries[i].tid;
		struct timespec ts;

		/* (closed: its record ended with a pause) */
		if (tid != 0 && control_thread_close(preload.entries[i].seen) &&
		    clock_gettime(preload_thread_clock(tid), &ts) == 0)
			threads_write_exit_final(tid, preload.entries[i].seen, preload_ts_ns(&ts));
	}
	if (locked)
		pthread_mutex_unlock(&preload.registry_lock);
	lost_write(WRITER_FINAL);
	preload_cost.helpers_ns = control_cpu_ns() + sweep_cpu_ns();
	preload_cost_record(WRITER_FINAL);
	preload_write_end(WRITER_FINAL, 0);
}

/* A new trace's costs start from nothing (a fork's child, an attach
 * after an earlier one). */
static void preload_cost_reset(void)
{
	uint64_t chunks;

	preload_cost.start_ns = preload_cost.end_ns = 0;
	preload_cost.helpers_ns = preload_cost.said_helpers = 0;
	cfi_cost(&chunks, &preload_cost.said_rows, &preload_cost.said_tables);
	preload_cost.said_start = preload_cost.said_end = 0;
	preload_cost.said_handler = preload_handler_ns();
}

/* What the preload library asks of this one. */
const struct preload_host preload_host = {
	.collector = "collect-timer",
	.library = "libprofview-timer",
	.running = sample_running,
	.handlers_idle = sample_handlers_idle,
	.control_initial = control_timer_initial,
	.control_apply = control_timer_apply,
	.control_deferred = control_timer_deferred,
	.exec_prepare = sigs_exec_prepare,
	.exec_signal = sigs_exec_signal,
	.quick_end = preload_quick_end,
};

/* ---- start and end ---- */

static void preload_atfork_prepare(void)
{
	writer_flush_staged(0);
	pthread_mutex_lock(&preload.registry_lock);
	mappings_atfork(0);
}

static void preload_atfork_parent(void)
{
	mappings_atfork(1);
	pthread_mutex_unlock(&preload.registry_lock);
}

static int preload_start_trace(const char *out, int root);
static void preload_start_threads(void);
static void preload_write_kernel(void);
static int preload_engine_wanted(void);
static void preload_fini(void);

/* The child never writes into the parent's trace: POSIX timers are not
 * inherited, and the trace mapping is dropped.  Unless told not to, the
 * child starts a trace of its own, with the forking thread (the only one
 * it has) as its first thread. */
static void preload_atfork_child_start(void);

/* (the clock is read inside the own work: a sample in its system call
 * is the collector's too) */
static void preload_atfork_child(void)
{
	uint64_t t0;

	preload_own_begin();
	t0 = preload_thread_ns();
	preload_atfork_child_start();
	preload_cost.start_ns += preload_thread_ns() - t0;
	preload_own_end();
}

static void preload_atfork_child_start(void)
{
	struct preload_tls *t = &preload_tls;

	/* the parent's costs were the parent's */
	preload_cost_reset();
	pthread_mutex_init(&preload.registry_lock, NULL);
	mappings_atfork(2);
	if (atomic_load(&preload.state) != PRELOAD_RUNNING)
		return;
	atomic_store(&preload.state, PRELOAD_STOPPED);
	t->active = 0;
	writer_forget();
	engine_forget();
	if (!preload.inherit || (preload.stop_ns != 0 && preload_now() >= preload.stop_ns))
		return;
	/* Nothing of the parent's threads is valid here: they do not exist. */
	control_forget();
	atomic_store(&preload.helpers_ready, 0);
	preload.nentries = 0;
	for (int i = 0; i < preload.nforeign; i++) {
		free(preload.foreign[i].frames);
		preload.foreign[i].frames = NULL;
	}
	preload.nforeign = 0;
	preload.nranges = 0;
	threads_frames_free(t->frames);
	t->frames = NULL;
	preload_counters_reset();
	preload.pid = getpid();
	atomic_store(&preload.rng, preload_now() ^ (uint64_t)preload.pid << 32);
	if (preload.unwind != RAW_UNWIND_DWARF)
		stacktab_reset();
	if (preload_start_trace(preload_setting(COLLECT_ENV_OUTPUT), 0) != 0)
		return;
	pyframes_atfork_child(); /* (its record goes to the new trace) */
	/* its own trace says how its samples' system time is known too */
	preload_write_kernel();
	atomic_store(&preload.state, PRELOAD_RUNNING);
	threads_register();
	preload_start_threads();
}

/* ---- --duration ---- */

static void *preload_stopper(void *unused)
{
	struct timespec ts;

	(void)unused;
	ts.tv_sec = (time_t)(preload.stop_ns / 1000000000ull);
	ts.tv_nsec = (long)(preload.stop_ns % 1000000000ull);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	preload_fini();
	return NULL;
}

/* Starts the thread that ends profiling at stop_ns: not registered, every
 * signal blocked, a small stack. */
static void preload_start_stopper(void)
{
	pthread_t thread;

	if (preload.stop_ns == 0)
		return;
	if (threads_start_helper(&thread, preload_stopper, "profview-stop", 64 << 10, 1) != 0)
		preload_warn("--duration ignored: cannot start a thread: %s", strerror(errno));
}

void preload_control_need(void)
{
	/* Not in the child of a vfork (a program's subprocess module
	 * closes its descriptors there before the exec): it runs on the
	 * parent's memory, where a thread it started would leave the
	 * sweeper's lock held for ever once the exec ends it. */
	if (getpid() != preload.pid)
		return;
	if (atomic_load(&preload.state) != PRELOAD_RUNNING || !atomic_load(&preload.helpers_ready) ||
	    atomic_exchange(&preload.control_asked, 1))
		return;
	if (control_start() != 0) {
		preload_warn("cannot start the control thread (%s): the sweeper's thread starts now",
			     strerror(errno));
		sweep_start_now();
	}
}

/* The helper threads of a process that starts profiling. */
static void preload_start_threads(void)
{
	preload_start_stopper();
	/* CPU timers fire on the tick and can miss a running thread
	 * (sweep.c), with either clock; with --engine=perf, a thread that
	 * could not get a perf event has one.  Its thread is started by the
	 * control thread when its first pass is due. */
	sweep_start(preload.period_ns);
	atomic_store(&preload.control_asked, 0);
	atomic_store(&preload.helpers_ready, 1);
	if (preload.attached || preload.nentries > 1 || threads_sweep_wanted())
		preload_control_need();
	if (preload_wall && wall_start(preload.period_ns, preload.stack_size) != 0)
		preload_warn("no off-CPU samples: cannot start the wall-clock sampler thread: %s",
			     strerror(errno));
}

/* How much CPU time makes a thread no longer young (raw-cpu.h, engine.c):
 * two periods, and four scheduler ticks, so that a thread that reaches it
 * has been found running at a tick a few times in tick mode. */
static uint64_t preload_tick_ns(void)
{
	struct timespec res;

	/* the coarse clocks advance once a tick */
	if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0 && res.tv_sec == 0 && res.tv_nsec > 0)
		return (uint64_t)res.tv_nsec;
	return 4000000;
}

static uint64_t preload_short_ns(uint64_t period_ns)
{
	uint64_t tick = preload_tick_ns(), ns = 2 * period_ns;

	if (ns < 4 * tick)
		ns = 4 * tick;
	/* the header holds it in microseconds, 32 bits */
	return ns > 4000000000000ull ? 4000000000000ull : ns;
}

_Static_assert(RAW_VERSION == 3, "preload_header writes a version 3 header");

/* Fills the header and what follows it in version 2, the program's
 * architecture and the registers of its samples (sample.c, wall.c);
 * returns the exe path in exe (NUL-terminated). */
static void preload_header(struct raw_header *h, struct raw_arch *arch, char *exe, size_t cap)
{
	struct timespec rt, mono;
	ssize_t n = readlink("/proc/self/exe", exe, cap - 1);

	exe[n > 0 ? n : 0] = '\0';
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, RAW_MAGIC, RAW_MAGIC_LEN);
	h->version = RAW_VERSION;
	h->exe_len = (uint32_t)strlen(exe) + 1;
	h->header_size = raw_header_fixed_size(RAW_VERSION) + raw_pad(h->exe_len);
	h->clock = preload_wall ? RAW_CLOCK_WALL : RAW_CLOCK_CPU;
	h->unwind = (uint32_t)preload.unwind;
	h->pid = (uint32_t)preload.pid;
	h->ppid = (uint32_t)getppid();
	h->period_ns = preload.period_ns;
	h->short_thread_us = (uint32_t)(preload.short_ns / 1000);
	h->start_realtime_ns = (uint64_t)preload_ts_ns(&rt);
	h->start_monotonic_ns = (uint64_t)preload_ts_ns(&mono);
	memset(arch, 0, sizeof(*arch));
	arch->machine = RAW_MACHINE_X86_64;
	arch->regs = RAW_REGS_DWARF;
	arch->nregs = RAW_NREGS;
}

/* The unwind mode PROFVIEW_UNWIND names: cfi unless another is named. */
static int preload_unwind_mode(const char *name)
{
	if (name != NULL && strcmp(name, "fp") == 0)
		return RAW_UNWIND_FP;
	if (name != NULL && strcmp(name, "dwarf") == 0)
		return RAW_UNWIND_DWARF;
	if (name != NULL && strcmp(name, "check") == 0)
		return RAW_UNWIND_CHECK;
	return RAW_UNWIND_CFI;
}

static void preload_init(void)
{
	const char *pid_env = preload_setting(COLLECT_ENV_PID);
	const char *out = preload_setting(COLLECT_ENV_OUTPUT);
	const char *freq_env = preload_setting(COLLECT_ENV_FREQUENCY);
	const char *unwind_env = preload_setting(COLLECT_ENV_UNWIND);
	const char *stack_env = preload_setting(COLLECT_ENV_STACK_SIZE);
	const char *inherit_env = preload_setting(COLLECT_ENV_INHERIT);
	const char *stop_env = preload_setting(COLLECT_ENV_STOP_NS);
	struct sigaction sa;
	long freq, stack;
	int root;

	if (pid_env == NULL || out == NULL || out[0] != '/')
		return;
	if (mappings_own_code(&preload.own_lo, &preload.own_hi) != 0)
		preload.own_lo = preload.own_hi = 0;
	preload.pid = getpid(); /* (a system call: glibc keeps no copy) */
	root = atol(pid_env) == (long)preload.pid;
	preload.inherit = inherit_env == NULL || strcmp(inherit_env, "0") != 0;
	if (!root && !preload.inherit)
		return;
	preload.stop_ns = stop_env != NULL ? strtoull(stop_env, NULL, 10) : 0;
	if (preload.stop_ns != 0 && preload_now() >= preload.stop_ns)
		return;
	preload_tailed = preload_setting(COLLECT_ENV_SPLIT) != NULL && strcmp(preload_setting(COLLECT_ENV_SPLIT), "1") == 0;
	/* (pthread_create's is looked up by its wrapper at the program's
	 * first call, or ours: a symbol lookup a process that makes no
	 * thread never pays) */
	preload.real_sigaction = dlsym(RTLD_NEXT, "sigaction");
	if (preload.real_sigaction == NULL)
		return;
	freq = freq_env != NULL ? atol(freq_env) : 0;
	if (!collect_env_frequency_ok(freq))
		freq = COLLECT_HZ_DEFAULT;
	preload.period_ns = 1000000000ull / (uint64_t)freq;
	preload.short_ns = preload_short_ns(preload.period_ns);
	preload.unwind = preload_unwind_mode(unwind_env);
	preload.stats = preload_setting(COLLECT_ENV_STATS) != NULL && strcmp(preload_setting(COLLECT_ENV_STATS), "1") == 0;
	stack = stack_env != NULL ? atol(stack_env) : 0;
	if (!collect_env_stack_size_ok(stack))
		stack = COLLECT_STACK_DEFAULT;
	preload.stack_size = (uint32_t)stack;
	preload_wall = preload_setting(COLLECT_ENV_CLOCK) != NULL && strcmp(preload_setting(COLLECT_ENV_CLOCK), "wall") == 0;
	atomic_store(&preload.rng, preload_now() ^ (uint64_t)preload.pid << 32);
	preload.signo = sigs_pick_signal();
	if (preload.signo == 0)
		return;
	if (preload.unwind == RAW_UNWIND_CFI || preload.unwind == RAW_UNWIND_CHECK) {
		/* the tables are made with the mappings, from here on */
		mappings_use_cfi();
	}
	if (preload_start_trace(out, root) != 0)
		return;
	if (preload.unwind != RAW_UNWIND_DWARF)
		stacktab_init(); /* without it every stack is written inline */
	pyframes_init();
	/* attached: nothing that outlives the detach (a fork's child is not
	 * followed); the key is made once */
	if ((!preload.key_made && pthread_key_create(&preload.key, threads_exit) != 0) ||
	    (!preload.attached && pthread_atfork(preload_atfork_prepare, preload_atfork_parent,
						  preload_atfork_child) != 0)) {
		writer_forget();
		return;
	}
	preload.key_made = 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sample_on_sigprof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	/* so that the end of the trace never interrupts a sample */
	for (size_t i = 0; i < sizeof(sigs_term_signals) / sizeof(sigs_term_signals[0]); i++)
		sigaddset(&sa.sa_mask, sigs_term_signals[i]);
	if (preload.real_sigaction(preload.signo, &sa, &preload.prior_action) != 0) {
		writer_forget();
		return;
	}
	control_init(preload.signo, 0);
	engine_init(preload_engine_wanted(), preload.period_ns, &preload);
	preload_write_kernel();
	preload.hooked = 1;
	atomic_store(&preload.state, PRELOAD_RUNNING);
	if (preload.attached) {
		engine_drop_spare();
		return; /* the rest in attach.c's thread: preload_adopt_attached */
	}
	/* (its timer is the event engine_init opened, when it could) */
	threads_register();
	engine_drop_spare();
	threads_adopt_existing();
	sigs_hook_term();
	preload_start_threads();
}

void preload_adopt_attached(void)
{
	preload_own_begin();
	threads_adopt_existing();
	preload_start_threads();
	preload_own_end();
}

int preload_start_attached(void)
{
	uint64_t t0;

	preload_own_begin();
	preload_cost_reset();
	t0 = preload_thread_ns();
	preload_init();
	preload_cost.start_ns += preload_thread_ns() - t0;
	preload_own_end();
	return atomic_load(&preload.state) == PRELOAD_RUNNING ? 0 : -1;
}

void preload_end_attached(void)
{
	preload_fini();
}

/* The engine the launcher asks for (collect-options.c): auto when it
 * says nothing. */
static int preload_engine_wanted(void)
{
	const char *e = preload_setting(COLLECT_ENV_ENGINE);

	if (e != NULL && strcmp(e, "perf") == 0)
		return ENGINE_PERF;
	if (e != NULL && strcmp(e, "posix") == 0)
		return ENGINE_POSIX;
	return ENGINE_AUTO;
}

/* The boot's id, as /proc/sys/kernel/random/boot_id says it (36
 * characters, hex digits and dashes): read once in a process and kept for
 * its fork children; taken from PROFVIEW_BOOT_ID, which the launcher read
 * once for the run, when that has the form of one.  An empty string when
 * neither can say it. */
static char preload_boot[40];

static int preload_boot_id_ok(const char *s)
{
	size_t n = 0;

	for (; s[n] != '\0'; n++)
		if (!((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f') || s[n] == '-'))
			return 0;
	return n == 36;
}

static const char *preload_boot_id(void)
{
	const char *env = preload_setting(COLLECT_ENV_BOOT_ID);
	char id[64] = "";
	int fd;

	if (preload_boot[0] != '\0')
		return preload_boot;
	if (env != NULL && preload_boot_id_ok(env)) {
		memcpy(preload_boot, env, 37);
		return preload_boot;
	}
	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t got = read(fd, id, sizeof(id) - 1);

		id[got > 0 ? got : 0] = '\0';
		close(fd);
	}
	id[strcspn(id, "\n")] = '\0';
	if (preload_boot_id_ok(id))
		memcpy(preload_boot, id, 37);
	return preload_boot;
}

/* The RAW_KERNEL record: how the samples' system time is measured, and
 * the boot their kernel addresses belong to. */
static void preload_write_kernel(void)
{
	struct raw_kernel *rec = writer_reserve(sizeof(*rec), WRITER_WAIT);
	const char *id;
	size_t n;

	if (rec == NULL)
		return;
	id = preload_boot_id();
	n = strlen(id);
	memset(rec->boot_id, 0, sizeof(rec->boot_id));
	memcpy(rec->boot_id, id, n < sizeof(rec->boot_id) - 1 ? n : sizeof(rec->boot_id) - 1);
	rec->source = (uint32_t)engine_system_source();
	rec->engine = engine_kind() == ENGINE_PERF ? RAW_ENGINE_PERF : RAW_ENGINE_POSIX;
	writer_publish(rec, RAW_KERNEL, sizeof(*rec));
}

/* Opens this process image's trace (see writer_open), writes its header
 * and every executable mapping.  Returns 0, or -1 with a line on stderr. */
static int preload_start_trace(const char *out, int root)
{
	struct raw_header header;
	struct raw_arch arch;
	char exe[PATH_MAX];

	if (out == NULL || writer_open(out, root) != 0) {
		preload_warn("profiling disabled: cannot create a trace next to '%s': %s",
			     out != NULL ? out : "", strerror(errno));
		return -1;
	}
	preload_header(&header, &arch, exe, sizeof(exe));
	if (writer_init(&header, &arch, exe, preload_tailed) != 0) {
		preload_warn("profiling disabled: cannot map '%s': %s", writer_path(),
			     strerror(errno));
		return -1;
	}
	/* attached: a running process's JIT code too */
	if (preload.attached)
		mappings_write_maps();
	else
		mappings_write_start(exe);
	return 0;
}

void preload_init_once(void)
{
	uint64_t t0;

	/* samples of the start are the collector's, not the program's */
	preload_own_begin();
	t0 = preload_thread_ns();
	pthread_once(&preload_once, preload_init);
	preload_cost.start_ns += preload_thread_ns() - t0;
	preload_own_end();
}

__attribute__((constructor)) static void preload_constructor(void)
{
	preload_init_once();
	control_unhold();
}

/* --stats: one line with the handler's time per sample (the middle of
 * its bucket) and, in cfi mode, how the samples were unwound. */
static void preload_print_stats(void)
{
	uint64_t total = 0, seen = 0, at[3] = { 0, 0, 0 }, copied = 0;
	const double q[3] = { 0.5, 0.9, 0.99 };
	int k = 0;

	for (int b = 0; b < PRELOAD_HIST_BUCKETS; b++)
		total += atomic_load(&preload.hist[b]);
	for (int b = 0; b < PRELOAD_HIST_BUCKETS && k < 3; b++) {
		seen += atomic_load(&preload.hist[b]);
		while (k < 3 && total > 0 && (double)seen >= q[k] * (double)total)
			at[k++] = (uint64_t)b * PRELOAD_HIST_NS + PRELOAD_HIST_NS / 2;
	}
	for (int r = 0; r < PRELOAD_CFI_REASONS; r++)
		copied += atomic_load(&preload.cfi_copied[r]);
	pyframes_print_stats();
	if (preload.unwind == RAW_UNWIND_CFI)
		preload_warn("handler: %llu samples, median %llu ns, p90 %llu ns, p99 %llu ns; "
			     "cfi unwound %llu, fell back to the stack copy %llu",
			     (unsigned long long)total, (unsigned long long)at[0],
			     (unsigned long long)at[1], (unsigned long long)at[2],
			     (unsigned long long)atomic_load(&preload.cfi_unwound),
			     (unsigned long long)copied);
	else
		preload_warn("handler: %llu samples, median %llu ns, p90 %llu ns, p99 %llu ns",
			     (unsigned long long)total, (unsigned long long)at[0],
			     (unsigned long long)at[1], (unsigned long long)at[2]);
	if (engine_adaptive())
		preload_warn("engine: %llu threads moved from their perf event to a POSIX timer "
			     "(they switched context often)",
			     (unsigned long long)atomic_load(&preload.moved));
}

/* Waits for handlers that are still between entry and exit. */

static void preload_fini_run(uint64_t t0);

/* The end: its samples are the collector's, and its CPU time measured. */
__attribute__((destructor)) static void preload_fini(void)
{
	if (atomic_load(&preload.state) != PRELOAD_RUNNING)
		return;
	/* once: the --duration thread and the exit may race, or a signal */
	if (atomic_exchange(&preload.ending, 1))
		return;
	preload_own_begin();
	preload_fini_run(preload_thread_ns());
	preload_own_end();
}

static void preload_fini_run(uint64_t t0)
{
	sigset_t block, old;
	char name[16];
	int quiet;

	if (preload_wall)
		preload_wall_samples = wall_stop();
	preload_cost.helpers_ns = control_cpu_ns() + sweep_cpu_ns();
	sweep_stop();
	control_stop();
	sigemptyset(&block);
	sigaddset(&block, preload.signo);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	pthread_mutex_lock(&preload.registry_lock);
	if (atomic_load(&preload.state) != PRELOAD_RUNNING) {
		/* stopped meanwhile (--duration, a signal) */
		pthread_mutex_unlock(&preload.registry_lock);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return;
	}
	atomic_store(&preload.state, PRELOAD_STOPPED);
	for (size_t i = 0; i < preload.nentries; i++) {
		struct preload_entry *e = &preload.entries[i];
		struct timespec ts;
		int64_t cpu = -1;

		if (e->tid == 0)
			continue;
		threads_settle(e);
		engine_delete(&e->timer);
		if (e->seen != NULL && atomic_exchange(&e->seen->has_nudge, 0))
			timer_delete(e->seen->nudge);
		if (clock_gettime(preload_thread_clock(e->tid), &ts) == 0)
			cpu = preload_ts_ns(&ts);
		for (int f = 0; f < preload.nforeign && cpu < 0; f++)
			if (preload.foreign[f].tid == e->tid)
				cpu = atomic_load(&preload.foreign[f].seen.cpu);
		threads_read_comm(e->tid, name);
		/* closed: its record ended with a pause */
		if (control_thread_close(e->seen)) {
			if (name[0] != '\0' && strncmp(name, e->name, 16) != 0)
				threads_write_thread(e->tid, name, e->cpu_base);
			threads_write_exit(e->tid, e->seen, cpu);
		}
		e->tid = 0;
	}
	quiet = preload_quiesce(PRELOAD_QUIESCE_NS, PRELOAD_QUIESCE_STEP_NS) == 0;
	/* The lines of the maps the start did not write, for the samples: a
	 * staged trace has none, and a sample whose every address was in a
	 * mapping written already (the loader's objects at the start, those
	 * it loaded since) needs none. */
	if (!writer_staged() && mappings_unknown())
		mappings_write(0);
	lost_write(WRITER_WAIT);
	preload_cost.end_ns += preload_thread_ns() - t0;
	preload_cost_record(WRITER_WAIT);
	preload_write_end(WRITER_WAIT, preload_wall_samples);
	/* A handler still running after 2 s could write past the end: then
	 * leave the file at its mapped size (zeros after the last record). */
	if (quiet)
		writer_finish();
	if (preload.stats)
		preload_print_stats();
	preload_tls.active = 0;
	pthread_mutex_unlock(&preload.registry_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}
