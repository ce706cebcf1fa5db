/* heap-start.c - libprofview-heap.so's start and end: the environment,
 * the trace's header, pausing (control.c's thread, which also gives back
 * the trace's written pages; the interposed sigaction and signal), fork
 * (the child's own trace), and the end of the trace after the program's
 * exit handlers; and what the preload library (writer.c, mappings.c,
 * control.c...) asks of its host (host.h). */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "collect-env.h"
#include "control.h"
#include "heap.h"
#include "host.h"
#include "mappings.h"
#include "preload.h"
#include "pyframes.h"
#include "stacktab.h"
#include "writer.h"

/* The longest wait at the end for the threads still writing a record. */
#define HEAP_QUIESCE_NS 2000000000ull
#define HEAP_QUIESCE_STEP_NS 1000000

/* ---- what the preload library asks of its host (host.h) ---- */

static int heap_handlers_idle(void)
{
	return atomic_load(&heap.inflight) == 0;
}

static int heap_running(void)
{
	return atomic_load(&heap.state) == HEAP_RUNNING;
}

/* ---- pausing (control.c) ---- */

static void heap_control_initial(int how)
{
	atomic_store(&heap.paused, how != CONTROL_RESUME);
	atomic_store(&heap.ended, how == CONTROL_END);
}

/* Only heap.paused changes (heap.ended too at the end): heap_slow looks
 * at them when a countdown crosses zero, after control_poll.  A block
 * sampled before a pause keeps its place in the table, so that its free
 * is recorded whenever it comes.  Signal-safe. */
static int heap_control_apply(int how)
{
	int pause = how != CONTROL_RESUME;

	if (atomic_load(&heap.state) != HEAP_RUNNING || atomic_load(&heap.ended))
		return 0;
	if (how == CONTROL_END) {
		atomic_store(&heap.paused, 1);
		return !atomic_exchange(&heap.ended, 1);
	}
	return atomic_load(&heap.paused) != pause && atomic_exchange(&heap.paused, pause) != pause;
}

static void heap_quick_end(void);

/* The heap library samples with no signal, holds none of the program's
 * and needs no thread: a pause, a resume, the start and the end are looked
 * at when a countdown crosses zero (heap_slow), and the trace's memory
 * released there too. */
const struct preload_host preload_host = {
	.collector = "collect-heap",
	.library = "libprofview-heap",
	.running = heap_running,
	.handlers_idle = heap_handlers_idle,
	.control_initial = heap_control_initial,
	.control_apply = heap_control_apply,
	.control_deferred = NULL,
	.exec_prepare = NULL,
	.exec_signal = NULL,
	.quick_end = heap_quick_end,
};

/* ---- the program's actions for the control signal (control.c) ---- */

HEAP_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (control_owns(sig))
		return control_sigaction(sig, act, old);
	return control_real_sigaction(sig, act, old);
}

HEAP_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	return control_signal(sig, handler, control_owns, control_sigaction);
}

_Static_assert(RAW_VERSION == 3, "heap_start_trace writes a version 3 header");

int heap_start_trace(const char *out, int root, uint32_t flags)
{
	struct raw_header h;
	struct raw_arch arch;
	struct timespec rt, mono;
	char exe[4096];
	ssize_t n;

	if (out == NULL || writer_open(out, root) != 0) {
		preload_warn("profiling disabled: cannot create a trace next to '%s': %s",
			     out != NULL ? out : "", strerror(errno));
		return -1;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, RAW_MAGIC, RAW_MAGIC_LEN);
	h.version = RAW_VERSION;
	h.exe_len = (uint32_t)strlen(exe) + 1;
	h.header_size = raw_header_fixed_size(RAW_VERSION) + raw_pad(h.exe_len);
	h.clock = RAW_CLOCK_HEAP;
	h.unwind = RAW_UNWIND_CFI;
	h.pid = (uint32_t)getpid();
	h.ppid = (uint32_t)getppid();
	h.period_ns = (uint64_t)heap.rate;
	h.start_realtime_ns = (uint64_t)preload_ts_ns(&rt);
	h.start_monotonic_ns = (uint64_t)preload_ts_ns(&mono);
	h.heap_flags = flags;
	memset(&arch, 0, sizeof(arch));
	arch.machine = RAW_MACHINE_X86_64;
	arch.regs = RAW_REGS_DWARF;
	arch.nregs = RAW_NREGS;
	if (writer_init(&h, &arch, exe, heap.tailed) != 0) {
		preload_warn("profiling disabled: cannot map '%s': %s", writer_path(), strerror(errno));
		return -1;
	}
	/* attached: a running process's JIT code too */
	if (flags & RAW_HEAP_SINCE_ATTACH)
		mappings_write_maps();
	else
		mappings_write_start(exe);
	return 0;
}

static void heap_atfork_prepare(void)
{
	writer_flush_staged(0);
	mappings_atfork(0);
}

static void heap_atfork_parent(void)
{
	mappings_atfork(1);
}

/* The child writes a trace of its own (unless told not to), its one
 * thread the forking one. */
static void heap_atfork_child(void)
{
	struct heap_tls *t = &heap_tls;

	mappings_atfork(2);
	if (atomic_load(&heap.state) != HEAP_RUNNING)
		return;
	atomic_store(&heap.state, HEAP_STOPPED);
	writer_forget();
	atomic_store(&heap.inflight, 0);
	atomic_store(&heap.samples, 0);
	atomic_store(&heap.lost, 0);
	t->tid = 0;
	t->named = 0;
	if (!heap.inherit) {
		atomic_store(&heap.state, HEAP_DISABLED);
		return;
	}
	t->busy++;
	stacktab_reset();
	pyframes_atfork_child();
	if (heap_start_trace(getenv(COLLECT_ENV_OUTPUT), 0, 0) == 0)
		atomic_store(&heap.state, HEAP_RUNNING);
	t->busy--;
}

int heap_table_make(void)
{
	struct heap_slot *t;
	int log = HEAP_SLOTS_MIN_LOG;

	if (heap.table != NULL)
		return 0;
	while (log < HEAP_SLOTS_MAX_LOG &&
	       heap.rate * (double)(1 << (log - HEAP_SLOTS_MIN_LOG + 1)) <= COLLECT_RATE_DEFAULT)
		log++;
	t = mmap(NULL, sizeof(struct heap_slot) << log, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t == MAP_FAILED) {
		preload_warn("profiling disabled: no memory for the table of sampled blocks");
		return -1;
	}
	heap.slots_log = log;
	heap.table = t;
	return 0;
}

static void heap_start(void)
{
	const char *pid_env = getenv(COLLECT_ENV_PID), *out = getenv(COLLECT_ENV_OUTPUT);
	const char *inherit_env = getenv(COLLECT_ENV_INHERIT), *rate_env = getenv(COLLECT_ENV_HEAP_RATE);
	const char *stop_env = getenv(COLLECT_ENV_STOP_NS);
	long long rate = rate_env != NULL ? atoll(rate_env) : 0;
	uint64_t stop_ns = stop_env != NULL ? strtoull(stop_env, NULL, 10) : 0;
	int root;

	if (heap_resolve() != 0 || pid_env == NULL || out == NULL || out[0] != '/')
		return;
	root = atol(pid_env) == (long)getpid();
	heap.inherit = inherit_env == NULL || strcmp(inherit_env, "0") != 0;
	/* an image started after --duration has nothing to sample */
	if ((!root && !heap.inherit) || (stop_ns != 0 && preload_now() >= stop_ns))
		return;
	heap.rate = (double)(collect_env_rate_ok(rate) ? rate : COLLECT_RATE_DEFAULT);
	/* collect-heap --split reads the trace as it is written */
	heap.tailed = getenv(COLLECT_ENV_SPLIT) != NULL && strcmp(getenv(COLLECT_ENV_SPLIT), "1") == 0;
	if (mappings_own_code(&heap.own_lo, &heap.own_hi) != 0)
		heap.own_lo = heap.own_hi = 0;
	if (heap_table_make() != 0)
		return;
	mappings_use_cfi();
	if (heap_start_trace(out, root, 0) != 0)
		return;
	stacktab_init(); /* without it every stack is written inline */
	pyframes_init(); /* a CPython program's frames in its stacks */
	if (pthread_atfork(heap_atfork_prepare, heap_atfork_parent, heap_atfork_child) != 0) {
		writer_forget();
		return;
	}
	control_init(0, stop_ns);
	atomic_store(&heap.state, HEAP_RUNNING);
}

__attribute__((constructor)) static void heap_constructor(void)
{
	heap_tls.busy++;
	heap_start();
	if (atomic_load(&heap.state) != HEAP_RUNNING)
		atomic_store(&heap.state, HEAP_DISABLED);
	control_unhold();
	heap_tls.busy--;
}

/* The lost count and the end record, in space reserved as mode says
 * (writer.h). */
static void heap_write_end(int mode)
{
	struct raw_end *end;
	uint64_t lost = atomic_load(&heap.lost);

	if (lost != 0) {
		struct raw_lost *rec = writer_reserve(sizeof(*rec), mode);

		if (rec != NULL) {
			rec->count = lost;
			rec->error = (uint32_t)writer_error();
			rec->reserved = 0;
			writer_publish(rec, RAW_LOST, sizeof(*rec));
		}
	}
	end = writer_reserve(sizeof(*end), mode);
	if (end != NULL) {
		end->time_ns = preload_now();
		end->samples = atomic_load(&heap.samples);
		end->lost = lost;
		end->signals = 0;
		end->overruns = 0;
		writer_publish(end, RAW_END, sizeof(*end));
	}
}

/* The end when the image ends by _exit (host.h: quick_end): sampling
 * stops, a hook still writing gets a moment, then the end record in the
 * space kept for it.  Signal-safe. */
static void heap_quick_end(void)
{
	struct timespec ms = { 0, 1000000 };
	int running = HEAP_RUNNING;

	if (!atomic_compare_exchange_strong(&heap.state, &running, HEAP_STOPPED))
		return;
	for (int i = 0; i < 200 && !heap_handlers_idle(); i++)
		nanosleep(&ms, NULL);
	heap_write_end(WRITER_FINAL);
}

/* After the program's exit handlers: the blocks without a free record
 * are the ones still allocated. */
__attribute__((destructor)) static void heap_fini(void)
{
	int running = HEAP_RUNNING;

	if (!atomic_compare_exchange_strong(&heap.state, &running, HEAP_STOPPED))
		return;
	heap_tls.busy++;
	heap_end_trace();
	heap_tls.busy--;
}

void heap_end_trace(void)
{
	int quiet = preload_quiesce(HEAP_QUIESCE_NS, HEAP_QUIESCE_STEP_NS) == 0;

	/* the lines of the maps the start did not write, for the stacks
	 * that hold an address in none written (a JIT's anonymous code, a
	 * file mapped by hand), as collect-timer's end does */
	if (!writer_staged() && mappings_unknown())
		mappings_write(0);
	heap_write_end(WRITER_WAIT);
	if (quiet)
		writer_finish();
}
