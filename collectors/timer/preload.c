/* preload.c - libprofview-timer.so: per-thread CPU-time sampling by SIGPROF
 *
 * Loaded with LD_PRELOAD by collect-timer, which sets PROFVIEW_OUTPUT,
 * PROFVIEW_FREQUENCY, PROFVIEW_UNWIND, PROFVIEW_STACK_SIZE, PROFVIEW_PID,
 * PROFVIEW_INHERIT and PROFVIEW_STOP_NS.  The process whose pid is
 * PROFVIEW_PID writes PROFVIEW_OUTPUT (the file the launcher created).
 * Every other process image writes a trace of its own (writer_open names
 * it after its pid): the child of a fork starts one in the atfork child
 * handler, a program it execs (or any program that inherited the
 * environment) in our constructor; with PROFVIEW_INHERIT=0 they do
 * nothing at all.  PROFVIEW_STOP_NS (CLOCK_MONOTONIC) is when profiling
 * stops: a thread of ours sleeps until then and finishes the trace while
 * the program runs on.
 *
 * Termination: a program that ends by a signal whose action is the default
 * (SIGINT from the terminal, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE) would leave
 * an unfinished trace, so for those signals, when the program has not set
 * an action of its own at start, a handler of ours writes the end of the
 * trace without taking locks, restores SIG_DFL and raises the signal
 * again: the program ends exactly as it would have.  sigaction() reports
 * SIG_DFL for them as long as our handler is there; a handler the program
 * installs replaces ours.  Crashes (SIGSEGV, SIGABRT...) and SIGKILL leave
 * the trace unfinished, with every record stored before.
 *
 * Two ways to record a stack.  fp: the handler walks the frame pointers and
 * stores the addresses (RAW_SAMPLE, deduplicated by stacktab.c).  dwarf (the
 * default): the handler stores the registers and a copy of the top of the
 * stack (RAW_SAMPLE_REGS) and the analyzer unwinds it with the ELF files'
 * CFI; the handler never reads DWARF.  The copy runs from the interrupted
 * stack pointer up to the thread's stack top or --stack-size bytes.  It is
 * a plain memcpy only where the bytes are known to be mapped: a thread we
 * registered ourselves, whose stack pointer is inside the bounds
 * pthread_getattr_np gave (a stack is mapped from any address in use up to
 * its top, and the kernel has just written the signal frame below the stack
 * pointer, so even the main thread's growable stack is mapped there).
 * Elsewhere (a thread found at start, whose bounds are only the mapping
 * that held its stack then; a stack pointer outside the bounds: sigaltstack,
 * coroutines) the bytes are read with process_vm_readv on our own pid,
 * which returns short instead of faulting; without it nothing is copied.
 *
 * dlopen, dlmopen and dlclose are interposed (dlhook.c) so that the
 * mappings of a library loaded later are written while it is mapped, even
 * if it is closed before the end.
 *
 * Every thread gets a POSIX timer on its own CPU clock, delivering SIGPROF
 * to that thread (SIGEV_THREAD_ID).  Threads are registered three ways: the
 * thread that runs our constructor; threads made by pthread_create, which is
 * interposed so that the new thread registers itself before running its
 * start routine; and "foreign" threads found in /proc/self/task at start,
 * whose timers are created from outside and which adopt their state in the
 * handler on their first signal.  A pthread key destructor deletes a
 * thread's timer when it exits (return, pthread_exit, cancellation).
 *
 * Signal masks: the library never changes the program's masks (except that
 * it blocks SIGPROF around its own bookkeeping and restores the mask after).
 * A thread that blocks SIGPROF is not sampled while it blocks it; since a
 * sample weighs the CPU time since the thread's previous sample, the time
 * spent blocked goes to the first sample after it unblocks.
 *
 * If the program already uses SIGPROF (a handler, or ITIMER_PROF running) at
 * start, the profiler uses a free real-time signal instead (the highest
 * one with the default action that the thread does not block), with one
 * line on stderr, and leaves SIGPROF to the program.  If the program
 * installs a handler for the profiler's signal later, sigaction() and
 * signal() are answered as if it had been installed, ours stays in place,
 * and the signals that are not from our timers (kill, setitimer) are
 * passed on to the program's handler.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "preload.h"

#define PRELOAD_EXPORT __attribute__((visibility("default")))
#define PRELOAD_FOREIGN_MAX 64
#define PRELOAD_SMALL_FRAMES 64
#define PRELOAD_RANGES_MAX 4096
#define PRELOAD_STACK_DEFAULT 8192
#define PRELOAD_STACK_MIN 512
#define PRELOAD_STACK_MAX 65536
#define PRELOAD_PAGE 4096
#define PRELOAD_QUIESCE_NS 2000000000ull

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

enum preload_state {
	PRELOAD_OFF = 0,      /* not started, or not for this process */
	PRELOAD_RUNNING,
	PRELOAD_STOPPED,      /* finished, or the child of a fork */
};

/* One entry per thread with a timer; guarded by registry_lock. */
struct preload_entry {
	pid_t tid;            /* 0: free */
	struct engine_timer timer;
	char name[16];        /* as written in its RAW_THREAD record */
	uintptr_t stack_lo, stack_hi; /* 0, 0 when unknown */
	uint64_t since_ns;    /* when it was registered */
};

/* A thread that existed before we started.  Filled at init, before any of
 * their timers is armed; afterwards the handler reads it without locks. */
struct preload_foreign {
	pid_t tid;
	int64_t last_cpu;
	uint64_t *frames;
	_Atomic int64_t seen_cpu;  /* CPU clock at its last sample */
};

struct preload_tls {
	int active;
	pid_t tid;
	int64_t last_cpu;     /* CPU time of the previous sample (may be < 0) */
	uintptr_t stack_lo, stack_hi;
	uint64_t *frames;     /* RAW_MAX_FRAMES words, or NULL */
	int foreign;          /* index + 1 into preload.foreign */
	size_t entry;         /* index into preload.entries */
};

static __thread struct preload_tls preload_tls
	__attribute__((tls_model("initial-exec")));

static struct {
	_Atomic int state;
	_Atomic int inflight;           /* handlers between entry and exit */
	int hooked;                     /* our SIGPROF handler is installed */
	int signo;                      /* the profiling signal: SIGPROF or SIGRTMIN+n */
	int inherit;                    /* profile the processes the program starts */
	uint64_t stop_ns;               /* CLOCK_MONOTONIC end of profiling, or 0 */
	_Atomic int ending;             /* the trace is being ended by a signal */
	uint64_t period_ns;
	int unwind;                     /* enum raw_unwind */
	uint32_t stack_size;            /* bytes of stack copied, dwarf mode */
	_Atomic int no_vm_readv;        /* process_vm_readv is refused */
	pid_t pid;
	pthread_key_t key;
	_Atomic uint64_t rng;
	_Atomic uint64_t samples, lost, lost_pending, signals, overruns;

	pthread_mutex_t registry_lock;
	struct preload_entry *entries;
	size_t nentries, capentries;

	struct preload_foreign foreign[PRELOAD_FOREIGN_MAX];
	int nforeign;
	uintptr_t ranges[PRELOAD_RANGES_MAX][2]; /* writable mappings at start */
	int nranges;

	/* The SIGPROF action the program believes it has installed. */
	struct sigaction app_action[2];
	_Atomic int app_current;
	_Atomic int app_warned;

	int (*real_pthread_create)(pthread_t *, const pthread_attr_t *,
				   void *(*)(void *), void *);
	int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
} preload = {
	.registry_lock = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_once_t preload_once = PTHREAD_ONCE_INIT;
/* --clock=wall: off-CPU samples from wall.c too; the samples it wrote */
static int preload_wall;
static uint64_t preload_wall_samples;

uint64_t preload_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int64_t preload_ts_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000ll + ts->tv_nsec;
}

void preload_warn(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n = snprintf(buf, sizeof(buf), "%s", PRELOAD_PREFIX);

	va_start(ap, fmt);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	n = (int)strlen(buf);
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, (size_t)n) < 0) {
		/* nothing to be done */
	}
}

static pid_t preload_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* The kernel's CPU clock of one thread of this process. */
static clockid_t preload_thread_clock(pid_t tid)
{
	return (clockid_t)((~(unsigned)tid << 3) | 6); /* CPUCLOCK_SCHED | PERTHREAD */
}

/* A pseudo-random number in [1, n]. */
static uint64_t preload_random(uint64_t n)
{
	uint64_t z = atomic_fetch_add(&preload.rng, 0x9e3779b97f4a7c15ull);

	z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ z >> 27) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return n > 0 ? z % n + 1 : 1;
}

/* ---- records written outside the handler ---- */

static void preload_write_thread(pid_t tid, const char name[16])
{
	struct raw_thread *rec = writer_reserve(sizeof(*rec), 1);

	if (rec == NULL)
		return;
	rec->tid = (uint32_t)tid;
	rec->time_ns = preload_now();
	memcpy(rec->name, name, sizeof(rec->name));
	writer_publish(rec, RAW_THREAD, sizeof(*rec));
}

static void preload_write_exit(pid_t tid, int64_t cpu_ns)
{
	struct raw_thread_exit *rec = writer_reserve(sizeof(*rec), 1);

	if (rec == NULL)
		return;
	rec->tid = (uint32_t)tid;
	rec->time_ns = preload_now();
	rec->cpu_ns = cpu_ns > 0 ? (uint64_t)cpu_ns : 0;
	writer_publish(rec, RAW_THREAD_EXIT, sizeof(*rec));
}

/* Writes the pending count of lost samples as a RAW_LOST record. */
static void preload_write_lost(int wait)
{
	uint64_t n = atomic_exchange(&preload.lost_pending, 0);
	struct raw_lost *rec;

	if (n == 0)
		return;
	rec = writer_reserve(sizeof(*rec), wait);
	if (rec == NULL) {
		atomic_fetch_add(&preload.lost_pending, n);
		return;
	}
	rec->count = n;
	writer_publish(rec, RAW_LOST, sizeof(*rec));
}

static void preload_read_comm(pid_t tid, char name[16])
{
	char path[64];
	ssize_t n;
	int fd;

	memset(name, 0, 16);
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, name, 15);
	close(fd);
	if (n > 0 && name[n - 1] == '\n')
		name[n - 1] = '\0';
}

/* ---- the signal handler ---- */

int preload_handlers_idle(void)
{
	return atomic_load(&preload.inflight) == 0;
}

int preload_running(void)
{
	return atomic_load(&preload.state) == PRELOAD_RUNNING;
}

/* Walks the frame-pointer chain from the interrupted context.  Only frame
 * pointers that are 8-aligned, inside [lo, hi) and strictly increasing are
 * dereferenced.
 *
 * frames[1] is the word at the stack pointer when it points into code, else
 * 0: a leaf function that has not set up a frame (gcc makes none in a leaf
 * that uses no stack, and none exists at a function's first instruction)
 * still has its return address there, and the frame-pointer chain skips
 * its caller.  The analyzer keeps the word only where the leaf's call frame
 * information says the return address is at the stack pointer. */
static uint32_t preload_unwind(const ucontext_t *uc, uintptr_t lo, uintptr_t hi,
			       uint64_t *frames, uint32_t cap, uint32_t *flags)
{
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	uintptr_t fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	uintptr_t prev;
	uint32_t n = 0;

	frames[n++] = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	if (sp < lo || sp >= hi || hi - sp < 8 || (sp & 7) != 0) {
		frames[n++] = 0;
		return n;
	}
	{
		uintptr_t top = *(const uintptr_t *)sp;
		frames[n++] = mappings_is_code(top) ? top : 0;
	}
	prev = sp - 1;
	while (fp > prev && (fp & 7) == 0 && fp >= sp && fp <= hi - 16) {
		const uintptr_t *f = (const uintptr_t *)fp;
		uintptr_t ret = f[1];

		if (ret == 0)
			break;
		if (n == cap) {
			*flags |= RAW_SAMPLE_TRUNCATED;
			break;
		}
		frames[n++] = ret;
		prev = fp;
		fp = f[0];
	}
	return n;
}

/* Sets up the TLS state of a thread found in /proc/self/task at start, on
 * its first signal.  Returns 0 when the thread is not one of ours. */
static int preload_adopt(struct preload_tls *t, const ucontext_t *uc)
{
	pid_t tid = preload_gettid();
	uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];

	for (int i = 0; i < preload.nforeign; i++) {
		struct preload_foreign *f = &preload.foreign[i];

		if (f->tid != tid)
			continue;
		t->tid = tid;
		t->last_cpu = f->last_cpu;
		t->frames = f->frames;
		t->foreign = i + 1;
		/* Its stack bounds are unknown: take the writable mapping
		 * that holds its stack pointer, as seen at start. */
		t->stack_lo = t->stack_hi = 0;
		for (int r = 0; r < preload.nranges; r++) {
			if (sp >= preload.ranges[r][0] && sp < preload.ranges[r][1]) {
				t->stack_lo = preload.ranges[r][0];
				t->stack_hi = preload.ranges[r][1];
				break;
			}
		}
		t->active = 1;
		return 1;
	}
	return 0;
}

/* Counts a sample that could not be stored.  Its CPU time is lost with it,
 * not moved to the next sample.  Signal-safe. */
static void preload_sample_lost(struct preload_tls *t, int64_t cpu)
{
	t->last_cpu = cpu;
	atomic_fetch_add_explicit(&preload.lost, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&preload.lost_pending, 1, memory_order_relaxed);
}

/* After a sample was published.  Signal-safe. */
static void preload_sample_done(struct preload_tls *t, int64_t cpu)
{
	t->last_cpu = cpu;
	atomic_fetch_add_explicit(&preload.samples, 1, memory_order_relaxed);
	if (atomic_load_explicit(&preload.lost_pending, memory_order_relaxed) != 0)
		preload_write_lost(0);
}

/* Reads len bytes at addr of our own memory into dst with process_vm_readv,
 * which stops at the first unmapped byte instead of faulting.  With dst NULL
 * it only probes: one byte of every page.  Returns the bytes readable from
 * addr (page-granular when probing), 0 when the call is refused.
 * Signal-safe. */
static uint32_t preload_read_self(void *dst, uintptr_t addr, uint32_t len)
{
	struct iovec local, remote[PRELOAD_STACK_MAX / PRELOAD_PAGE + 2];
	char probe[PRELOAD_STACK_MAX / PRELOAD_PAGE + 2];
	uintptr_t page, end = addr + len;
	unsigned long n = 0;
	ssize_t got;

	if (len == 0 || atomic_load_explicit(&preload.no_vm_readv, memory_order_relaxed))
		return 0;
	if (dst != NULL) {
		local.iov_base = dst;
		local.iov_len = len;
		remote[0].iov_base = (void *)addr;
		remote[0].iov_len = len;
		n = 1;
	} else {
		for (page = addr; page < end; page = (page & ~(uintptr_t)(PRELOAD_PAGE - 1)) +
						      PRELOAD_PAGE) {
			remote[n].iov_base = (void *)page;
			remote[n].iov_len = 1;
			n++;
		}
		local.iov_base = probe;
		local.iov_len = n;
	}
	got = syscall(SYS_process_vm_readv, (long)preload.pid, &local, 1UL, remote, n, 0UL);
	if (got < 0) {
		if (errno == ENOSYS || errno == EPERM)
			atomic_store_explicit(&preload.no_vm_readv, 1, memory_order_relaxed);
		return 0;
	}
	if (dst != NULL)
		return (uint32_t)got;
	if ((unsigned long)got == n)
		return len;
	/* got whole pages are readable, the first one starting at addr */
	return got == 0 ? 0
			: (uint32_t)(((addr & ~(uintptr_t)(PRELOAD_PAGE - 1)) +
				      (uintptr_t)got * PRELOAD_PAGE) - addr);
}

uint32_t preload_read_memory(void *dst, uintptr_t addr, uint32_t len)
{
	uint32_t ok = preload_read_self(NULL, addr, len);

	return ok > 0 ? preload_read_self(dst, addr, ok) : 0;
}

/* dwarf mode: a RAW_SAMPLE_REGS record with the registers and a copy of
 * the stack from the stack pointer up.  Signal-safe. */
static void preload_sample_regs(struct preload_tls *t, const ucontext_t *uc, int64_t cpu)
{
	/* DWARF x86-64 register numbers 0..16 in ucontext order */
	static const int regs[RAW_NREGS] = {
		REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
		REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
		REG_RIP,
	};
	const greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t sp = (uintptr_t)g[REG_RSP];
	uint32_t len, size, flags = RAW_SAMPLE_RUNNING;
	struct raw_sample_regs *rec;
	uint64_t *words;
	unsigned char *copy;
	int safe;

	if (sp >= t->stack_lo && sp < t->stack_hi) {
		uintptr_t avail = t->stack_hi - sp;

		len = avail < preload.stack_size ? (uint32_t)avail : preload.stack_size;
		if (avail > preload.stack_size)
			flags |= RAW_SAMPLE_STACK_PARTIAL;
		/* A thread found at start: its bounds are the writable mapping
		 * that held its stack pointer then, which may have changed. */
		safe = !t->foreign;
	} else {
		/* Not on its known stack: where the stack ends is unknown. */
		len = preload.stack_size;
		flags |= RAW_SAMPLE_STACK_PARTIAL;
		safe = 0;
	}
	if (!safe) {
		uint32_t readable = preload_read_self(NULL, sp, len);

		if (readable < len) {
			len = readable;
			flags |= RAW_SAMPLE_STACK_PARTIAL;
		}
	}
	size = (uint32_t)sizeof(*rec) + RAW_NREGS * 8 + raw_pad(len);
	rec = writer_reserve(size, 0);
	if (rec == NULL) {
		preload_sample_lost(t, cpu);
		return;
	}
	rec->tid = (uint32_t)t->tid;
	rec->time_ns = preload_now();
	rec->weight_ns = cpu > t->last_cpu ? (uint64_t)(cpu - t->last_cpu) : 0;
	rec->nregs = RAW_NREGS;
	words = (uint64_t *)(rec + 1);
	for (int i = 0; i < RAW_NREGS; i++)
		words[i] = (uint64_t)g[regs[i]];
	copy = (unsigned char *)(words + RAW_NREGS);
	if (safe) {
		memcpy(copy, (const void *)sp, len);
	} else {
		uint32_t got = preload_read_self(copy, sp, len);

		if (got < len) {
			/* unmapped since the probe: keep the bytes we have */
			memset(copy + got, 0, len - got);
			len = got;
			flags |= RAW_SAMPLE_STACK_PARTIAL;
		}
	}
	/* the file is zero-filled, but say so rather than rely on it */
	memset(copy + len, 0, size - sizeof(*rec) - RAW_NREGS * 8 - len);
	rec->stack_len = len;
	rec->flags = flags;
	writer_publish(rec, RAW_SAMPLE_REGS, size);
	preload_sample_done(t, cpu);
}

static void preload_sample(const siginfo_t *si, const ucontext_t *uc)
{
	struct preload_tls *t = &preload_tls;
	uint64_t small[PRELOAD_SMALL_FRAMES], *frames;
	uint32_t n, cap, flags = RAW_SAMPLE_RUNNING, stack_id, size;
	struct raw_sample *rec;
	struct timespec ts;
	int64_t cpu;

	if (!t->active && !preload_adopt(t, uc))
		return;
	atomic_fetch_add_explicit(&preload.signals, 1, memory_order_relaxed);
	if (si->si_code == SI_TIMER && si->si_overrun > 0)
		atomic_fetch_add_explicit(&preload.overruns, (uint64_t)si->si_overrun,
					  memory_order_relaxed);
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return;
	cpu = preload_ts_ns(&ts);
	if (t->foreign)
		atomic_store_explicit(&preload.foreign[t->foreign - 1].seen_cpu, cpu,
				      memory_order_relaxed);
	if (preload.unwind == RAW_UNWIND_DWARF) {
		preload_sample_regs(t, uc, cpu);
		return;
	}
	frames = t->frames;
	cap = RAW_MAX_FRAMES;
	if (frames == NULL) {
		frames = small;
		cap = PRELOAD_SMALL_FRAMES;
	}
	n = preload_unwind(uc, t->stack_lo, t->stack_hi, frames, cap, &flags);
	stack_id = stacktab_intern(frames, n);
	size = (uint32_t)sizeof(*rec) + (stack_id ? 0 : n * 8);
	rec = writer_reserve(size, 0);
	if (rec == NULL) {
		preload_sample_lost(t, cpu);
		return;
	}
	rec->tid = (uint32_t)t->tid;
	rec->stack_id = stack_id;
	rec->time_ns = preload_now();
	rec->weight_ns = cpu > t->last_cpu ? (uint64_t)(cpu - t->last_cpu) : 0;
	rec->flags = flags;
	rec->nframes = stack_id ? 0 : n;
	if (!stack_id)
		memcpy(rec + 1, frames, n * 8);
	writer_publish(rec, RAW_SAMPLE, size);
	preload_sample_done(t, cpu);
}

/* Passes a SIGPROF that is not from our timers to the program's handler. */
static void preload_forward(int sig, siginfo_t *si, void *uc)
{
	const struct sigaction *act =
		&preload.app_action[atomic_load_explicit(&preload.app_current, memory_order_acquire)];

	if (act->sa_flags & SA_SIGINFO) {
		if (act->sa_sigaction != NULL)
			act->sa_sigaction(sig, si, uc);
	} else if (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN) {
		act->sa_handler(sig);
	}
	/* SIG_DFL would end the process: we ignore instead. */
}

static void preload_on_sigprof(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;

	if (!engine_signal(si)) {
		preload_forward(sig, si, uc);
	} else {
		atomic_fetch_add(&preload.inflight, 1);
		if (atomic_load(&preload.state) == PRELOAD_RUNNING)
			preload_sample(si, uc);
		atomic_fetch_sub(&preload.inflight, 1);
	}
	errno = saved_errno;
}

/* ---- threads ---- */

/* Creates a timer delivering SIGPROF to tid when its CPU clock advances
 * (engine.c). */
static int preload_timer_create(clockid_t clock, pid_t tid, struct engine_timer *timer)
{
	return engine_create(clock, tid, timer);
}

/* Arms a timer: the first expiry after first_ns (random within one period),
 * then every period. */
static void preload_timer_arm(struct engine_timer *timer, uint64_t first_ns)
{
	engine_arm(timer, first_ns);
}

size_t preload_threads(struct preload_thread_view *v, size_t cap)
{
	size_t n = 0;

	pthread_mutex_lock(&preload.registry_lock);
	for (size_t i = 0; i < preload.nentries && n < cap; i++) {
		const struct preload_entry *e = &preload.entries[i];

		if (e->tid == 0)
			continue;
		v[n].tid = e->tid;
		v[n].stack_lo = e->stack_lo;
		v[n].stack_hi = e->stack_hi;
		v[n].since_ns = e->since_ns;
		n++;
	}
	pthread_mutex_unlock(&preload.registry_lock);
	return n;
}

/* Adds a registry entry; returns its index or (size_t)-1.  Lock held. */
static size_t preload_entry_add(pid_t tid, const char name[16])
{
	size_t i;

	for (i = 0; i < preload.nentries; i++)
		if (preload.entries[i].tid == 0)
			break;
	if (i == preload.nentries) {
		if (preload.nentries == preload.capentries) {
			size_t cap = preload.capentries ? preload.capentries * 2 : 64;
			struct preload_entry *v = realloc(preload.entries, cap * sizeof(*v));

			if (v == NULL)
				return (size_t)-1;
			preload.entries = v;
			preload.capentries = cap;
		}
		preload.nentries++;
	}
	preload.entries[i].tid = tid;
	memcpy(preload.entries[i].name, name, 16);
	preload.entries[i].stack_lo = preload.entries[i].stack_hi = 0;
	preload.entries[i].since_ns = preload_now();
	return i;
}

/* Registers the calling thread: stack bounds, frame buffer, RAW_THREAD
 * record, timer, and the key whose destructor unregisters it. */
static void preload_thread_register(void)
{
	struct preload_tls *t = &preload_tls;
	pthread_attr_t attr;
	struct timespec ts;
	char name[16] = { 0 };
	void *addr;
	size_t size, idx;
	uint64_t first;

	if (atomic_load(&preload.state) != PRELOAD_RUNNING || t->active)
		return;
	t->tid = preload_gettid();
	t->foreign = 0;
	if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
			t->stack_lo = (uintptr_t)addr;
			t->stack_hi = (uintptr_t)addr + size;
		}
		pthread_attr_destroy(&attr);
	}
	t->frames = preload.unwind == RAW_UNWIND_FP ? malloc(RAW_MAX_FRAMES * sizeof(uint64_t))
						    : NULL;
	prctl(PR_GET_NAME, name, 0, 0, 0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	first = engine_first(preload_random(preload.period_ns));
	/* As if the previous sample had been one period before the first
	 * expiry, so a thread that ends before its first sample is not
	 * under-weighted on average. */
	t->last_cpu = preload_ts_ns(&ts) + (int64_t)first - (int64_t)preload.period_ns;

	pthread_mutex_lock(&preload.registry_lock);
	if (atomic_load(&preload.state) != PRELOAD_RUNNING)
		goto fail;
	idx = preload_entry_add(t->tid, name);
	if (idx == (size_t)-1)
		goto fail;
	if (preload_timer_create(CLOCK_THREAD_CPUTIME_ID, t->tid,
				 &preload.entries[idx].timer) != 0) {
		preload.entries[idx].tid = 0;
		goto fail;
	}
	preload_write_thread(t->tid, name);
	preload.entries[idx].stack_lo = t->stack_lo;
	preload.entries[idx].stack_hi = t->stack_hi;
	t->entry = idx;
	t->active = 1;
	atomic_signal_fence(memory_order_seq_cst);
	preload_timer_arm(&preload.entries[idx].timer, first);
	pthread_mutex_unlock(&preload.registry_lock);
	pthread_setspecific(preload.key, (void *)1);
	return;
fail:
	pthread_mutex_unlock(&preload.registry_lock);
	free(t->frames);
	t->frames = NULL;
}

/* The key destructor: runs when a registered thread exits. */
static void preload_thread_exit(void *unused)
{
	struct preload_tls *t = &preload_tls;
	struct preload_entry *e;
	sigset_t block, old;
	struct timespec ts;
	char name[16] = { 0 };

	(void)unused;
	if (!t->active || t->foreign)
		return;
	sigemptyset(&block);
	sigaddset(&block, preload.signo);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	pthread_mutex_lock(&preload.registry_lock);
	if (atomic_load(&preload.state) == PRELOAD_RUNNING) {
		e = &preload.entries[t->entry];
		engine_delete(&e->timer);
		e->tid = 0;
		prctl(PR_GET_NAME, name, 0, 0, 0);
		if (strncmp(name, e->name, 16) != 0)
			preload_write_thread(t->tid, name);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		preload_write_exit(t->tid, preload_ts_ns(&ts));
	}
	t->active = 0;
	pthread_mutex_unlock(&preload.registry_lock);
	free(t->frames);
	t->frames = NULL;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

struct preload_start {
	void *(*fn)(void *);
	void *arg;
};

static void *preload_trampoline(void *p)
{
	struct preload_start s = *(struct preload_start *)p;

	free(p);
	preload_thread_register();
	return s.fn(s.arg);
}

/* Timers for the threads that were running before we started. */
static void preload_adopt_existing(void)
{
	DIR *d = opendir("/proc/self/task");
	pid_t self = preload_gettid();
	struct dirent *de;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL && preload.nforeign < PRELOAD_FOREIGN_MAX) {
		pid_t tid = (pid_t)atoi(de->d_name);
		struct preload_foreign *f = &preload.foreign[preload.nforeign];
		struct timespec ts;
		char name[16];
		uint64_t first;
		size_t idx;

		if (tid <= 0 || tid == self)
			continue;
		if (preload.nforeign == 0 && preload.nranges == 0)
			preload.nranges = mappings_ranges(preload.ranges, PRELOAD_RANGES_MAX, 0);
		if (clock_gettime(preload_thread_clock(tid), &ts) != 0)
			continue;
		first = engine_first(preload_random(preload.period_ns));
		f->tid = tid;
		f->last_cpu = preload_ts_ns(&ts) + (int64_t)first - (int64_t)preload.period_ns;
		atomic_store(&f->seen_cpu, preload_ts_ns(&ts));
		f->frames = preload.unwind == RAW_UNWIND_FP
				    ? malloc(RAW_MAX_FRAMES * sizeof(uint64_t)) : NULL;
		preload_read_comm(tid, name);
		pthread_mutex_lock(&preload.registry_lock);
		idx = preload_entry_add(tid, name);
		if (idx != (size_t)-1) {
			if (preload_timer_create(preload_thread_clock(tid), tid,
						 &preload.entries[idx].timer) == 0) {
				preload.nforeign++;
				preload_write_thread(tid, name);
				preload_timer_arm(&preload.entries[idx].timer, first);
			} else {
				preload.entries[idx].tid = 0;
			}
		}
		pthread_mutex_unlock(&preload.registry_lock);
	}
	closedir(d);
}

/* ---- start and end ---- */

static void preload_atfork_prepare(void)
{
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
static void preload_fini(void);

/* The child never writes into the parent's trace: POSIX timers are not
 * inherited, and the trace mapping is dropped.  Unless told not to, the
 * child starts a trace of its own, with the forking thread (the only one
 * it has) as its first thread. */
static void preload_atfork_child(void)
{
	struct preload_tls *t = &preload_tls;

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
	preload.nentries = 0;
	for (int i = 0; i < preload.nforeign; i++)
		free(preload.foreign[i].frames);
	preload.nforeign = 0;
	preload.nranges = 0;
	free(t->frames);
	t->frames = NULL;
	atomic_store(&preload.inflight, 0);
	atomic_store(&preload.ending, 0);
	atomic_store(&preload.samples, 0);
	atomic_store(&preload.lost, 0);
	atomic_store(&preload.lost_pending, 0);
	atomic_store(&preload.signals, 0);
	atomic_store(&preload.overruns, 0);
	preload.pid = getpid();
	atomic_store(&preload.rng, preload_now() ^ (uint64_t)getpid() << 32);
	if (preload.unwind == RAW_UNWIND_FP)
		stacktab_reset();
	if (preload_start_trace(getenv("PROFVIEW_OUTPUT"), 0) != 0)
		return;
	atomic_store(&preload.state, PRELOAD_RUNNING);
	preload_thread_register();
	preload_start_threads();
}

static int preload_sigprof_in_use(const char **why)
{
	struct sigaction old;
	struct itimerval it;

	if (preload.real_sigaction(SIGPROF, NULL, &old) == 0 &&
	    ((old.sa_flags & SA_SIGINFO) ||
	     (old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN))) {
		*why = "the program already has a SIGPROF handler";
		return 1;
	}
	if (getitimer(ITIMER_PROF, &it) == 0 &&
	    (it.it_value.tv_sec || it.it_value.tv_usec)) {
		*why = "the program already runs an ITIMER_PROF timer";
		return 1;
	}
	preload.app_action[0] = old;
	return 0;
}

/* The signal to sample with: SIGPROF, or when the program uses it, the
 * highest real-time signal whose action is the default and that this
 * thread does not block.  Returns 0 when there is none. */
static int preload_pick_signal(void)
{
	struct sigaction old;
	sigset_t mask;
	const char *why;

	if (!preload_sigprof_in_use(&why))
		return SIGPROF;
	pthread_sigmask(SIG_BLOCK, NULL, &mask);
	for (int sig = SIGRTMAX; sig >= SIGRTMIN; sig--) {
		if (sigismember(&mask, sig) == 1 || preload.real_sigaction(sig, NULL, &old) != 0 ||
		    (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		preload.app_action[0] = old;
		preload_warn("%s: sampling with signal %d (SIGRTMIN+%d) instead of SIGPROF",
			     why, sig, sig - SIGRTMIN);
		return sig;
	}
	preload_warn("profiling disabled: %s and no real-time signal is free", why);
	return 0;
}

int preload_signal(void)
{
	return preload.signo != 0 ? preload.signo : SIGPROF;
}

/* ---- the end of the trace from a signal handler ---- */

static const int preload_term_signals[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE };
/* Which of them carry our handler (bit per signal number). */
static _Atomic unsigned long preload_term_hooked;

/* Writes the end of the trace without locks: samples stop, handlers still
 * running get a moment to finish, then the lost count and the end record
 * go into the space kept for them.  The file is not cut to size (a thread
 * could still be writing a record): the reader ignores the zeros after the
 * end, and collect-timer cuts them.  Signal-safe. */
static void preload_end_from_signal(void)
{
	struct timespec ms = { 0, 1000000 };
	struct raw_end *end;
	int expected = PRELOAD_RUNNING;

	if (atomic_exchange(&preload.ending, 1))
		return;
	if (!atomic_compare_exchange_strong(&preload.state, &expected, PRELOAD_STOPPED))
		return;
	for (int i = 0; i < 200 && atomic_load(&preload.inflight) != 0; i++)
		nanosleep(&ms, NULL);
	preload_write_lost(WRITER_FINAL);
	end = writer_reserve(sizeof(*end), WRITER_FINAL);
	if (end != NULL) {
		end->time_ns = preload_now();
		end->samples = atomic_load(&preload.samples);
		end->lost = atomic_load(&preload.lost);
		end->signals = atomic_load(&preload.signals);
		end->overruns = atomic_load(&preload.overruns);
		writer_publish(end, RAW_END, sizeof(*end));
	}
}

static void preload_on_term(int sig)
{
	struct sigaction dfl;
	int saved_errno = errno;

	if (atomic_load(&preload.state) == PRELOAD_RUNNING)
		preload_end_from_signal();
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	atomic_fetch_and(&preload_term_hooked, ~(1ul << sig));
	preload.real_sigaction(sig, &dfl, NULL);
	/* Pending until this handler returns (the signal is blocked in it),
	 * then the default action. */
	syscall(SYS_tgkill, (long)getpid(), (long)preload_gettid(), (long)sig);
	errno = saved_errno;
}

/* Our handler for each termination signal whose action is the default. */
static void preload_hook_term(void)
{
	struct sigaction sa, old;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = preload_on_term;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, preload.signo);
	for (size_t i = 0; i < sizeof(preload_term_signals) / sizeof(preload_term_signals[0]); i++) {
		int sig = preload_term_signals[i];

		if (preload.real_sigaction(sig, NULL, &old) != 0)
			continue;
		if (old.sa_handler == preload_on_term && !(old.sa_flags & SA_SIGINFO)) {
			/* inherited through fork */
			atomic_fetch_or(&preload_term_hooked, 1ul << sig);
			continue;
		}
		if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
			continue;
		if (preload.real_sigaction(sig, &sa, NULL) == 0)
			atomic_fetch_or(&preload_term_hooked, 1ul << sig);
	}
}

/* Is our termination handler the action of sig? */
static int preload_term_is_ours(int sig)
{
	return sig > 0 && sig < 64 && (atomic_load(&preload_term_hooked) >> sig & 1);
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
	pthread_attr_t attr;
	pthread_t thread;
	sigset_t all, old;

	if (preload.stop_ns == 0)
		return;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (preload.real_pthread_create(&thread, &attr, preload_stopper, NULL) != 0)
		preload_warn("--duration ignored: cannot start a thread");
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The helper threads of a process that starts profiling. */
static void preload_start_threads(void)
{
	preload_start_stopper();
	if (preload_wall && wall_start(preload.period_ns, preload.stack_size) != 0)
		preload_warn("no off-CPU samples: cannot start the wall-clock sampler thread");
}

/* Fills the header; returns the exe path in exe (NUL-terminated). */
static void preload_header(struct raw_header *h, char *exe, size_t cap)
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
	h->header_size = (uint32_t)sizeof(*h) + raw_pad(h->exe_len);
	h->clock = preload_wall ? RAW_CLOCK_WALL : RAW_CLOCK_CPU;
	h->unwind = (uint32_t)preload.unwind;
	h->pid = (uint32_t)getpid();
	h->ppid = (uint32_t)getppid();
	h->period_ns = preload.period_ns;
	h->start_realtime_ns = (uint64_t)preload_ts_ns(&rt);
	h->start_monotonic_ns = (uint64_t)preload_ts_ns(&mono);
}

static void preload_init(void)
{
	const char *pid_env = getenv("PROFVIEW_PID");
	const char *out = getenv("PROFVIEW_OUTPUT");
	const char *freq_env = getenv("PROFVIEW_FREQUENCY");
	const char *unwind_env = getenv("PROFVIEW_UNWIND");
	const char *stack_env = getenv("PROFVIEW_STACK_SIZE");
	const char *inherit_env = getenv("PROFVIEW_INHERIT");
	const char *stop_env = getenv("PROFVIEW_STOP_NS");
	struct sigaction sa;
	long freq, stack;
	int root;

	if (pid_env == NULL || out == NULL || out[0] != '/')
		return;
	root = atol(pid_env) == (long)getpid();
	preload.inherit = inherit_env == NULL || strcmp(inherit_env, "0") != 0;
	if (!root && !preload.inherit)
		return;
	preload.stop_ns = stop_env != NULL ? strtoull(stop_env, NULL, 10) : 0;
	if (preload.stop_ns != 0 && preload_now() >= preload.stop_ns)
		return;
	preload.real_pthread_create = dlsym(RTLD_NEXT, "pthread_create");
	preload.real_sigaction = dlsym(RTLD_NEXT, "sigaction");
	if (preload.real_pthread_create == NULL || preload.real_sigaction == NULL)
		return;
	freq = freq_env != NULL ? atol(freq_env) : 0;
	if (freq <= 0 || freq > 1000000)
		freq = 250;
	preload.period_ns = 1000000000ull / (uint64_t)freq;
	preload.unwind = unwind_env != NULL && strcmp(unwind_env, "fp") == 0 ? RAW_UNWIND_FP
									    : RAW_UNWIND_DWARF;
	stack = stack_env != NULL ? atol(stack_env) : 0;
	if (stack < PRELOAD_STACK_MIN || stack > PRELOAD_STACK_MAX || stack % 8 != 0)
		stack = PRELOAD_STACK_DEFAULT;
	preload.stack_size = (uint32_t)stack;
	preload_wall = getenv("PROFVIEW_CLOCK") != NULL && strcmp(getenv("PROFVIEW_CLOCK"), "wall") == 0;
	preload.pid = getpid();
	atomic_store(&preload.rng, preload_now() ^ (uint64_t)getpid() << 32);
	preload.signo = preload_pick_signal();
	if (preload.signo == 0)
		return;
	if (preload_start_trace(out, root) != 0)
		return;
	if (preload.unwind == RAW_UNWIND_FP)
		stacktab_init(); /* without it every stack is written inline */
	if (pthread_key_create(&preload.key, preload_thread_exit) != 0 ||
	    pthread_atfork(preload_atfork_prepare, preload_atfork_parent,
			   preload_atfork_child) != 0) {
		writer_forget();
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = preload_on_sigprof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	/* so that the end of the trace never interrupts a sample */
	for (size_t i = 0; i < sizeof(preload_term_signals) / sizeof(preload_term_signals[0]); i++)
		sigaddset(&sa.sa_mask, preload_term_signals[i]);
	if (preload.real_sigaction(preload.signo, &sa, NULL) != 0) {
		writer_forget();
		return;
	}
	engine_init(getenv("PROFVIEW_ENGINE") != NULL && strcmp(getenv("PROFVIEW_ENGINE"), "perf") == 0
			    ? ENGINE_PERF : ENGINE_POSIX, preload.period_ns, &preload);
	preload.hooked = 1;
	atomic_store(&preload.state, PRELOAD_RUNNING);
	preload_thread_register();
	preload_adopt_existing();
	preload_hook_term();
	preload_start_threads();
}

/* Opens this process image's trace (see writer_open), writes its header
 * and every executable mapping.  Returns 0, or -1 with a line on stderr. */
static int preload_start_trace(const char *out, int root)
{
	struct raw_header header;
	char exe[PATH_MAX];

	if (out == NULL || writer_open(out, root) != 0) {
		preload_warn("profiling disabled: cannot create a trace next to '%s': %s",
			     out != NULL ? out : "", strerror(errno));
		return -1;
	}
	preload_header(&header, exe, sizeof(exe));
	if (writer_init(&header, exe) != 0) {
		preload_warn("profiling disabled: cannot map '%s': %s", writer_path(),
			     strerror(errno));
		return -1;
	}
	mappings_write(0);
	return 0;
}

static void preload_init_once(void)
{
	pthread_once(&preload_once, preload_init);
}

__attribute__((constructor)) static void preload_constructor(void)
{
	preload_init_once();
}

/* Waits for handlers that are still between entry and exit. */
static int preload_quiesce(void)
{
	uint64_t deadline = preload_now() + PRELOAD_QUIESCE_NS;
	struct timespec ms = { 0, 1000000 };

	while (atomic_load(&preload.inflight) != 0) {
		if (preload_now() > deadline)
			return -1;
		nanosleep(&ms, NULL);
	}
	return 0;
}

__attribute__((destructor)) static void preload_fini(void)
{
	struct raw_end *end;
	sigset_t block, old;
	char name[16];
	int quiet;

	if (atomic_load(&preload.state) != PRELOAD_RUNNING)
		return;
	/* once: the --duration thread and the exit may race, or a signal */
	if (atomic_exchange(&preload.ending, 1))
		return;
	if (preload_wall)
		preload_wall_samples = wall_stop();
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
		engine_delete(&e->timer);
		if (clock_gettime(preload_thread_clock(e->tid), &ts) == 0)
			cpu = preload_ts_ns(&ts);
		for (int f = 0; f < preload.nforeign && cpu < 0; f++)
			if (preload.foreign[f].tid == e->tid)
				cpu = atomic_load(&preload.foreign[f].seen_cpu);
		preload_read_comm(e->tid, name);
		if (name[0] != '\0' && strncmp(name, e->name, 16) != 0)
			preload_write_thread(e->tid, name);
		preload_write_exit(e->tid, cpu);
		e->tid = 0;
	}
	quiet = preload_quiesce() == 0;
	mappings_write(0);
	preload_write_lost(WRITER_WAIT);
	end = writer_reserve(sizeof(*end), WRITER_WAIT);
	if (end != NULL) {
		end->time_ns = preload_now();
		end->samples = atomic_load(&preload.samples) + preload_wall_samples;
		end->lost = atomic_load(&preload.lost);
		end->signals = atomic_load(&preload.signals);
		end->overruns = atomic_load(&preload.overruns);
		writer_publish(end, RAW_END, sizeof(*end));
	}
	/* A handler still running after 2 s could write past the end: then
	 * leave the file at its mapped size (zeros after the last record). */
	if (quiet)
		writer_finish();
	preload_tls.active = 0;
	pthread_mutex_unlock(&preload.registry_lock);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* ---- interposed functions ---- */

PRELOAD_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
				  void *(*fn)(void *), void *arg)
{
	struct preload_start *s;
	int rc;

	preload_init_once();
	if (preload.real_pthread_create == NULL) {
		preload.real_pthread_create = dlsym(RTLD_NEXT, "pthread_create");
		if (preload.real_pthread_create == NULL)
			return EAGAIN;
	}
	if (atomic_load(&preload.state) != PRELOAD_RUNNING ||
	    (s = malloc(sizeof(*s))) == NULL)
		return preload.real_pthread_create(thread, attr, fn, arg);
	/* Catches objects loaded without our dlopen (libc's own, or a
	 * dlopen that had to keep its caller). */
	mappings_refresh();
	s->fn = fn;
	s->arg = arg;
	rc = preload.real_pthread_create(thread, attr, preload_trampoline, s);
	if (rc != 0)
		free(s);
	return rc;
}

static int preload_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	if (preload.real_sigaction == NULL)
		preload.real_sigaction = dlsym(RTLD_NEXT, "sigaction");
	if (preload.real_sigaction == NULL) {
		errno = ENOSYS;
		return -1;
	}
	return preload.real_sigaction(sig, act, old);
}

/* For SIGPROF while we profile: remembers the program's action instead of
 * installing it (ours stays), and answers with the one it set last.  No
 * lock, since sigaction may be called from a signal handler: two threads
 * racing to set SIGPROF actions may see each other's old action. */
PRELOAD_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	static const char note[] = PRELOAD_PREFIX "the program installed its own handler "
		"for the profiler's signal while profiled: it gets only the signals the "
		"profiler did not send\n";
	int cur;

	if (preload_term_is_ours(sig)) {
		int rc = preload_real_sigaction(sig, act, old);

		if (rc == 0 && old != NULL && !(old->sa_flags & SA_SIGINFO) &&
		    old->sa_handler == preload_on_term) {
			old->sa_handler = SIG_DFL;
			old->sa_flags = 0;
			sigemptyset(&old->sa_mask);
		}
		if (rc == 0 && act != NULL)
			atomic_fetch_and(&preload_term_hooked, ~(1ul << sig));
		return rc;
	}
	if (sig != preload.signo || !preload.hooked)
		return preload_real_sigaction(sig, act, old);
	cur = atomic_load(&preload.app_current);
	if (old != NULL)
		*old = preload.app_action[cur];
	if (act != NULL) {
		preload.app_action[!cur] = *act;
		atomic_store_explicit(&preload.app_current, !cur, memory_order_release);
		if ((act->sa_flags & SA_SIGINFO) ||
		    (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN)) {
			if (!atomic_exchange(&preload.app_warned, 1) &&
			    write(STDERR_FILENO, note, sizeof(note) - 1) < 0) {
				/* nothing to be done */
			}
		}
	}
	return 0;
}

PRELOAD_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	static sighandler_t (*real_signal)(int, sighandler_t);
	struct sigaction act, old;

	if ((sig == preload.signo && preload.hooked) || preload_term_is_ours(sig)) {
		memset(&act, 0, sizeof(act));
		act.sa_handler = handler;
		act.sa_flags = SA_RESTART;
		sigemptyset(&act.sa_mask);
		sigaction(sig, &act, &old);
		return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void *)old.sa_sigaction
						   : old.sa_handler;
	}
	if (real_signal == NULL)
		real_signal = (sighandler_t(*)(int, sighandler_t))dlsym(RTLD_NEXT, "signal");
	if (real_signal == NULL) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	return real_signal(sig, handler);
}
