/* sample.c - the SIGPROF handler: one sample per signal from our timers
 *
 * Three ways to record a stack.  cfi (the default): the handler walks the
 * stack with the unwind tables cfi.c made of the objects' .eh_frame and
 * stores the addresses (RAW_SAMPLE, each distinct stack written once by
 * stacktab.c); a sample it cannot walk (an object without CFI, a rule the
 * tables do not express, a thread whose stack bounds are unknown) is
 * written as in dwarf mode instead, and counted.  fp: the handler walks
 * the frame pointers.  dwarf: the handler stores the registers and a copy
 * of the top of the stack (RAW_SAMPLE_REGS) and the analyzer unwinds it
 * with the ELF files' CFI.  The copy runs from the interrupted stack
 * pointer up to the thread's stack top or --stack-size bytes.  It is
 * a plain memcpy only where the bytes are known to be mapped: a thread we
 * registered ourselves, whose stack pointer is inside the bounds
 * pthread_getattr_np gave (a stack is mapped from any address in use up to
 * its top, and the kernel has just written the signal frame below the stack
 * pointer, so even the main thread's growable stack is mapped there).
 * Elsewhere (a thread found at start, whose bounds are only the mapping
 * that held its stack then; a stack pointer outside the bounds: sigaltstack,
 * coroutines) the bytes are read with process_vm_readv on our own pid,
 * which returns short instead of faulting; without it nothing is copied.
 * The cfi walk reads the stack only where a memcpy would.  check mode
 * writes both, the copy and what the walk found, for the analyzer to
 * compare.
 *
 * Each sample also says how much of its weight was system time (time in
 * the kernel on the thread's behalf: system calls, page faults), in a
 * RAW_SAMPLE_KERNEL record right after it when there was some.  From a
 * perf event that counts system time, the overflow's own record says in
 * which mode it came, with its kernel call chain (engine.c): the whole
 * weight is then one or the other.  Otherwise getrusage(RUSAGE_THREAD)
 * says: the system time the kernel accounted to the thread since its
 * previous sample.  The kernel takes its user/system samples on the
 * scheduler tick and scales them to the thread's precise runtime, which
 * is the CPU clock the weights come from; a POSIX CPU timer fires on that
 * same tick, so the tick that brought the sample is in its split.  The
 * system time is given out as it comes (at most a sample's weight; the
 * rest goes to the next), so a thread's samples carry the system time it
 * had by its last one; except that a sample whose tick found the thread in
 * a system call (the signal interrupts it right after the `syscall`
 * instruction) is all system time, as perf would count it, so that the
 * time of a loop of system calls goes to the kernel and not to the
 * wrappers' user code.  The interrupted user stack is where the thread
 * entered the kernel: the signal is delivered on the way back.
 *
 * A signal that is not from our timers (kill, setitimer) is passed on to
 * the handler the program installed, or, when the program left it at
 * its default action, ends the process as that action would (see
 * sigs.c).  Everything reached from
 * the handler is signal-safe: no locks, no allocation, nothing that blocks;
 * its helpers are in this file so that they inline into it.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "cfi.h"
#include "control-timer.h"
#include "engine.h"
#include "lost.h"
#include "mappings.h"
#include "preload-state.h"
#include "pyframes.h"
#include "sample.h"
#include "sigs.h"
#include "stacktab.h"
#include "threads.h"
#include "writer.h"

#define PRELOAD_SMALL_FRAMES 64
#define PRELOAD_PAGE 4096
/* Kernel frames kept of a sample (the kernel's own limit is 127). */
#define PRELOAD_KERNEL_FRAMES 128

__thread struct preload_tls preload_tls
	__attribute__((tls_model("initial-exec")));

/* ---- the signal handler ---- */

int sample_handlers_idle(void)
{
	return atomic_load(&preload.inflight) == 0;
}

int sample_running(void)
{
	return atomic_load(&preload.state) == PRELOAD_RUNNING;
}

/* Writes the pending count of lost samples as a RAW_LOST record. */
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

	int nforeign = atomic_load_explicit(&preload.nforeign, memory_order_acquire);

	for (int i = 0; i < nforeign; i++) {
		struct preload_foreign *f = &preload.foreign[i];

		if (f->tid != tid)
			continue;
		t->tid = tid;
		t->cpu_base = t->last_cpu = f->cpu_base;
		t->timer = f->timer;
		t->young = f->young;
		t->frames = f->frames;
		t->foreign = i + 1;
		t->attach_gen = atomic_load(&preload.attach_gen);
		t->seen = &f->seen;
		t->declined = 0;
		/* its system time before its timer is not known: the first
		 * split is in proportion to its whole life's */
		t->user_read = t->sys_read = 0;
		t->sys_stale = 1;
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

/* While samples are lost (the trace cannot grow: a full disk), their
 * count goes into the trace as they are lost, not only once a sample is
 * stored again: a RAW_LOST record in the space kept for the end records,
 * at most one every PRELOAD_LOST_EVERY_NS and PRELOAD_LOST_TAIL_MAX in
 * all (a few KiB of that space), so that each part of the run, each
 * segment with --split, holds the losses of its own time. */
#define PRELOAD_LOST_EVERY_NS 20000000ull
#define PRELOAD_LOST_TAIL_MAX 4096u
static _Atomic uint64_t preload_lost_said_ns;
static _Atomic uint32_t preload_lost_tail;

/* Counts a sample that could not be stored.  Its CPU time is lost with it,
 * not moved to the next sample.  Signal-safe. */
static void preload_sample_lost(struct preload_tls *t, int64_t cpu)
{
	uint64_t now, said;

	t->last_cpu = cpu;
	atomic_fetch_add_explicit(&preload.lost, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&preload.lost_pending, 1, memory_order_relaxed);
	now = preload_now();
	said = atomic_load_explicit(&preload_lost_said_ns, memory_order_relaxed);
	if (now - said >= PRELOAD_LOST_EVERY_NS &&
	    atomic_compare_exchange_strong(&preload_lost_said_ns, &said, now) &&
	    atomic_fetch_add(&preload_lost_tail, 1) < PRELOAD_LOST_TAIL_MAX)
		lost_write(WRITER_FINAL);
}

/* After a sample was published.  Signal-safe. */
static void preload_sample_done(struct preload_tls *t, int64_t cpu)
{
	t->last_cpu = cpu;
	atomic_fetch_add_explicit(&preload.samples, 1, memory_order_relaxed);
	if (atomic_load_explicit(&preload.lost_pending, memory_order_relaxed) != 0)
		lost_write(0);
}

/* Reads len bytes at addr of our own memory into dst with process_vm_readv,
 * which stops at the first unmapped page instead of faulting (a piece of the
 * remote side a page: the call's partial reads are whole pieces).  With dst
 * NULL it only probes: one byte of every page.  Returns the bytes readable
 * from addr (page-granular when probing), 0 when the call is refused.
 * Signal-safe. */
static uint32_t preload_read_self(void *dst, uintptr_t addr, uint32_t len)
{
	struct iovec local, remote[COLLECT_STACK_MAX / PRELOAD_PAGE + 2];
	char probe[COLLECT_STACK_MAX / PRELOAD_PAGE + 2];
	uintptr_t page, end;
	unsigned long n = 0;
	ssize_t got;

	if (len > COLLECT_STACK_MAX + PRELOAD_PAGE)
		len = COLLECT_STACK_MAX + PRELOAD_PAGE; /* as many pages as remote holds */
	end = addr + len;
	if (len == 0 || atomic_load_explicit(&preload.no_vm_readv, memory_order_relaxed))
		return 0;
	if (dst != NULL) {
		local.iov_base = dst;
		local.iov_len = len;
		for (page = addr; page < end; page = remote[n - 1].iov_len + page) {
			uintptr_t next = (page & ~(uintptr_t)(PRELOAD_PAGE - 1)) + PRELOAD_PAGE;

			remote[n].iov_base = (void *)page;
			remote[n++].iov_len = (next < end ? next : end) - page;
		}
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
	return preload_read_self(dst, addr, len);
}

/* Is a sample of this thread, interrupted at pc, the collector's own work:
 * inside preload_own_begin/end, or in the library's code?  Signal-safe. */
static int preload_own_work(uint64_t pc)
{
	return preload_own_depth > 0 || (pc >= preload.own_lo && pc < preload.own_hi);
}

/* The system part of a sample's weight, and its kernel frames. */
struct preload_kernel {
	uint64_t system_ns;    /* 0: no RAW_SAMPLE_KERNEL record */
	uint32_t n;
	uint64_t *frames;
	uint32_t flags;        /* for the sample record: RAW_SAMPLE_MISSED */
};

/* The bytes of the RAW_SAMPLE_KERNEL record of k, 0 when it has none. */
static uint32_t preload_kernel_size(const struct preload_kernel *k)
{
	return k->system_ns ? (uint32_t)sizeof(struct raw_sample_kernel) + k->n * 8 : 0;
}

/* Writes k's record at rec (preload_kernel_size bytes) for the sample of
 * thread tid at time and publishes it.  Signal-safe. */
static void preload_kernel_write(void *rec, const struct preload_kernel *k, uint32_t tid,
				 uint64_t time)
{
	struct raw_sample_kernel *r = rec;

	r->tid = tid;
	r->nframes = k->n;
	r->time_ns = time;
	r->system_ns = k->system_ns;
	memcpy(r + 1, k->frames, k->n * 8);
	writer_publish(r, RAW_SAMPLE_KERNEL, preload_kernel_size(k));
}

/* Was the thread in a system call when its sampling signal came?  The
 * kernel checks a POSIX CPU timer at the tick; one that found the thread
 * in the kernel delivers the signal as the call returns, where the
 * interrupted program counter is right after the call's `syscall`
 * instruction (0f 05), or on it when the call is to be restarted.  A tick
 * that found the thread in user mode interrupts it anywhere: next to a
 * `syscall` only by the chance of one instruction in thousands.  The same
 * holds for the sweeper's signals, sent to a thread found on a CPU, and
 * its nudges, taken only when on time (sweep.c).  (A page fault's time
 * cannot be told this way: the faulting instruction is any load or
 * store.)  Signal-safe. */
static int preload_in_syscall(const ucontext_t *uc)
{
	uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	unsigned char b[4];

	if (pc < 2)
		return 0;
	if (preload_read_self(b, pc - 2, sizeof(b)) != sizeof(b))
		return 0;
	return (b[0] == 0x0f && b[1] == 0x05) || (b[2] == 0x0f && b[3] == 0x05);
}

/* The system part of weight w from getrusage: the system time since the
 * part given out so far, at most w; stale (see preload-state.h), w in
 * proportion to the system share since the last reading.  Of a sample
 * whose period ended in a system call (in_call, preload_in_syscall), the
 * last period (or the whole weight, if less) is system time, whatever is
 * owed; it takes that from what is owed, at most a period ahead of the
 * reading (which counts the same tick as system time, so the sum stays
 * the reading's), and the rest of its weight is split as any other's.  (A
 * sample that weighs several periods is one whose ticks missed the thread:
 * under load, mostly as it was preempted in a system call, so taking its
 * whole weight as system time would count too much of it.)  Signal-safe. */
static uint64_t preload_rusage_part(struct preload_tls *t, uint64_t w, int in_call)
{
	int64_t user, sys, du, ds, owed;
	/* the part known to be system time: the period that ended in a call */
	uint64_t last = !in_call ? 0 : w < preload.period_ns ? w : preload.period_ns, s;

	if (threads_rusage(&user, &sys) != 0)
		return last;
	if (t->sys_stale) {
		du = user - t->user_read;
		ds = sys - t->sys_read;
		s = ds > 0 && du >= 0 ? (uint64_t)((double)(w - last) * (double)ds / (double)(du + ds)) : 0;
		s += last;
		t->sys_done = sys;
		t->sys_stale = 0;
	} else if (in_call) {
		owed = sys - t->sys_done - (int64_t)last;
		s = last + (owed <= 0 ? 0 : (uint64_t)owed > w - last ? w - last : (uint64_t)owed);
		t->sys_done += (int64_t)s;
		if (t->sys_done - sys > (int64_t)preload.period_ns)
			t->sys_done = sys + (int64_t)preload.period_ns;
	} else {
		owed = sys - t->sys_done;
		s = owed <= 0 ? 0 : (uint64_t)owed > w ? w : (uint64_t)owed;
		t->sys_done += (int64_t)s;
		/* not more than a period owed: a reading that ran ahead of
		 * the CPU clock is not carried on for long */
		if (sys - t->sys_done > (int64_t)preload.period_ns)
			t->sys_done = sys - (int64_t)preload.period_ns;
	}
	t->user_read = user;
	t->sys_read = sys;
	return s > w ? w : s;
}

/* Fills k for the sample of weight w: from the perf event's record of a
 * perf signal when there is one.  Of a perf event that counts user time
 * only, from the overflows it dropped since it was armed: each found the
 * thread in the kernel, the kernel's own sample of its mode, as the one
 * that signalled found it in user mode; so the periods before the last are
 * system time and the last user time (RAW_SAMPLE_MISSED: the reader makes
 * the system part a kernel sample for each period, under this sample's
 * user stack), and a sample after none is all user time.  That is every
 * instant the event sampled, in place of getrusage's split, which is
 * sampled on the scheduler's tick and under contention for the CPU is
 * wrong (collect-timer(1), KERNEL TIME): its reading is left for a
 * sample whose count is not known.  Else from getrusage (in_call: see
 * preload_rusage_part).  Signal-safe. */
static void preload_system(struct preload_tls *t, const siginfo_t *si, int perf, int in_call,
			   uint64_t w, struct preload_kernel *k)
{
	int mode = perf ? engine_perf_sample(&t->timer, k->frames, PRELOAD_KERNEL_FRAMES, &k->n) : -1;
	uint64_t missed, period;

	k->flags = 0;
	if (mode >= 0) {
		k->system_ns = mode ? w : 0;
		t->sys_stale = 1;
		return;
	}
	k->n = 0;
	if (perf && engine_perf_missed(si, &missed, &period) == 0) {
		/* (at least the last period is user time, whatever the
		 * thread's clock says) */
		uint64_t user = w < period ? w : period;

		k->system_ns = missed * period < w - user ? missed * period : w - user;
		k->flags = k->system_ns ? RAW_SAMPLE_MISSED : 0;
		t->sys_stale = 1;
		return;
	}
	k->system_ns = preload_rusage_part(t, w, in_call);
	/* (the sample's instant was in the call: the reader makes it the
	 * kernel's once half a period of system time is owed, however heavy) */
	k->flags = in_call ? RAW_SAMPLE_IN_CALL : 0;
}

/* What the cfi walk found, for check mode. */
struct preload_check {
	const uint64_t *frames;
	uint32_t n;
	uint32_t result, reason;
};

/* dwarf mode: a RAW_SAMPLE_REGS record with the registers and a copy of
 * the stack from the stack pointer up; with check, a RAW_CHECK_FRAMES
 * record right after it.  Signal-safe. */
static void preload_sample_regs(struct preload_tls *t, const ucontext_t *uc, int64_t cpu,
				const struct preload_check *check, const struct preload_kernel *k)
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
	struct raw_unwind_check *chk = NULL;
	uint32_t chk_size = 0, pysize = 0;
	struct pyframes_thread py;
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
	/* unwound later, from the copy: the end reads the maps */
	mappings_note_unknown();
	if (!safe) {
		uint32_t readable = preload_read_self(NULL, sp, len);

		if (readable < len) {
			len = readable;
			flags |= RAW_SAMPLE_STACK_PARTIAL;
		}
	}
	size = (uint32_t)sizeof(*rec) + RAW_NREGS * 8 + raw_pad(len);
	if (check != NULL)
		chk_size = (uint32_t)sizeof(*chk) + check->n * 8;
	else /* its Python frames, right after its kernel record */
		pysize = pyframes_read_self(&py);
	writer_need_file();
	rec = writer_reserve(size + preload_kernel_size(k) + chk_size + pysize, 0);
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
	rec->flags = flags | k->flags |
		     (preload_own_work((uint64_t)uc->uc_mcontext.gregs[REG_RIP]) ? RAW_SAMPLE_COLLECTOR : 0);
	/* the records after the sample are published first: a reader that
	 * sees the sample sees them */
	if (k->system_ns)
		preload_kernel_write((char *)rec + size, k, rec->tid, rec->time_ns);
	if (pysize > 0)
		pyframes_put_thread((char *)rec + size + preload_kernel_size(k), pysize, &py, rec->tid,
				    rec->time_ns);
	if (check != NULL) {
		chk = (struct raw_unwind_check *)((char *)rec + size + preload_kernel_size(k));
		chk->tid = rec->tid;
		chk->result = check->result;
		chk->time_ns = rec->time_ns;
		chk->nframes = check->n;
		chk->reason = check->reason;
		memcpy(chk + 1, check->frames, check->n * 8);
		writer_publish(chk, RAW_CHECK_FRAMES, chk_size);
	}
	writer_publish(rec, RAW_SAMPLE_REGS, size);
	preload_sample_done(t, cpu);
}

/* A RAW_SAMPLE record of frames[0..n) with the thread's Python frames,
 * its stack stored once (pyframes_stack).  Signal-safe. */
static void preload_sample_frames(struct preload_tls *t, uint64_t *frames, uint32_t n,
				  uint32_t cap, uint32_t flags, int64_t cpu,
				  const struct preload_kernel *k)
{
	uint32_t stack_id, size;
	struct raw_sample *rec;

	/* an address in no mapping written yet: the end reads the maps
	 * (the native frames, before the Python ones join them) */
	mappings_note_frames(frames, n);
	stack_id = pyframes_stack(frames, &n, cap);
	if (preload_own_work(n > 0 ? frames[0] : 0))
		flags |= RAW_SAMPLE_COLLECTOR;
	flags |= k->flags;
	/* the short form where it says all (raw.h) */
	if (stack_id != 0 && flags == RAW_SAMPLE_RUNNING)
		size = RAW_SAMPLE_SHORT_SIZE;
	else
		size = (uint32_t)sizeof(*rec) + (stack_id ? 0 : n * 8);
	writer_need_file();
	rec = writer_reserve(size + preload_kernel_size(k), 0);
	if (rec == NULL) {
		preload_sample_lost(t, cpu);
		return;
	}
	rec->tid = (uint32_t)t->tid;
	rec->stack_id = stack_id;
	rec->time_ns = preload_now();
	rec->weight_ns = cpu > t->last_cpu ? (uint64_t)(cpu - t->last_cpu) : 0;
	if (size > RAW_SAMPLE_SHORT_SIZE) {
		rec->flags = flags;
		rec->nframes = stack_id ? 0 : n;
		if (!stack_id)
			memcpy(rec + 1, frames, n * 8);
	}
	if (k->system_ns) /* first: see preload_sample_regs */
		preload_kernel_write((char *)rec + size, k, rec->tid, rec->time_ns);
	writer_publish(rec, RAW_SAMPLE, size);
	preload_sample_done(t, cpu);
}

/* The walk of a thread found running (its stack's bounds not known):
 * over a copy of its stack, from its red zone up, read without faulting
 * into the room kept for it.  Signal-safe. */
static enum cfi_result preload_walk_copy(const struct preload_tls *t, const ucontext_t *uc,
					 uint64_t *frames, uint32_t cap, uint32_t *n,
					 enum cfi_failure *why)
{
	const struct preload_foreign *f = &preload.foreign[t->foreign - 1];
	uintptr_t from = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP] - PRELOAD_COPY_BELOW;
	uint32_t want = f->copy_cap < PRELOAD_COPY_FIRST ? f->copy_cap : PRELOAD_COPY_FIRST;
	uint32_t got = f->copy != NULL ? preload_read_memory(f->copy, from, want) : 0;
	enum cfi_result r;

	if (got <= PRELOAD_COPY_BELOW) {
		*n = 0;
		*why = CFI_FAIL_STACK;
		return CFI_FAILED;
	}
	/* most stacks end within the first read; a walk that needs more (a
	 * word beyond the copy, which was not cut short by the end of the
	 * stack's mapping) gets the rest, after what was read: the frames
	 * above the handler's do not change meanwhile */
	for (;;) {
		r = cfi_unwind_copy(uc, from, from + got, f->copy, frames, cap, n, why);
		if (r != CFI_FAILED || *why != CFI_FAIL_STACK || got < want || want == f->copy_cap)
			return r;
		want = f->copy_cap / 4 > want ? want * 4 : f->copy_cap;
		got += preload_read_memory(f->copy + got, from + got, want - got);
	}
}

/* cfi and check modes: the walk over the unwind tables, else (or also,
 * checking) the stack copy.  Signal-safe. */
static void preload_sample_cfi(struct preload_tls *t, const ucontext_t *uc, int64_t cpu,
			       uint64_t *frames, uint32_t cap, const struct preload_kernel *k)
{
	enum cfi_failure why = CFI_FAIL_NONE;
	enum cfi_result r = CFI_FAILED;
	uint32_t n = 0;

	/* A thread found at start has no known stack bounds: its walk reads
	 * a copy of its stack made with process_vm_readv. */
	if (!t->foreign && t->stack_hi != 0)
		r = cfi_unwind(uc, t->stack_lo, t->stack_hi, frames, cap, &n, &why);
	else if (t->foreign)
		r = preload_walk_copy(t, uc, frames, cap, &n, &why);
	if (preload.unwind == RAW_UNWIND_CHECK) {
		struct preload_check c = {
			frames, n,
			r == CFI_COMPLETE ? RAW_CHECK_COMPLETE
			: r == CFI_TRUNCATED ? RAW_CHECK_TRUNCATED : RAW_CHECK_FAILED,
			r != CFI_FAILED ? 0 : why != CFI_FAIL_NONE ? (uint32_t)why : RAW_CHECK_NOT_TRIED,
		};

		preload_sample_regs(t, uc, cpu, &c, k);
		return;
	}
	if (r == CFI_FAILED) {
		atomic_fetch_add_explicit(&preload.cfi_copied[why < PRELOAD_CFI_REASONS ? why : 0], 1,
					  memory_order_relaxed);
		preload_sample_regs(t, uc, cpu, NULL, k);
		return;
	}
	atomic_fetch_add_explicit(&preload.cfi_unwound, 1, memory_order_relaxed);
	preload_sample_frames(t, frames, n, cap,
			      RAW_SAMPLE_RUNNING | (r == CFI_TRUNCATED ? RAW_SAMPLE_TRUNCATED : 0), cpu, k);
}

/* In the handler, once it has read the thread's CPU clock (cpu): may the
 * thread be sampled now?  Not while sampling is paused, nor at the first
 * sample after a resume (control-timer.c: control_timer_thread, after
 * control_poll looked at the control word).  Once the trace has grown
 * enough, its written memory is released.  Signal-safe. */
static inline int control_sample_ok(struct preload_tls *t, int64_t cpu)
{
	if (!control_timer_thread(t->seen, &t->last_cpu, cpu, control_poll()))
		return 0;
	control_release_due();
	return 1;
}

static void preload_sample(const siginfo_t *si, const ucontext_t *uc, int perf)
{
	struct preload_tls *t = &preload_tls;
	uint64_t small[PRELOAD_SMALL_FRAMES], *frames, kframes[PRELOAD_KERNEL_FRAMES];
	struct preload_kernel k = { 0, 0, kframes, 0 };
	uint32_t n, cap, flags = RAW_SAMPLE_RUNNING;
	struct timespec ts;
	int64_t cpu;

	/* a thread adopted by an earlier attach is adopted again */
	if (t->active && t->foreign && t->attach_gen != atomic_load(&preload.attach_gen))
		t->active = 0;
	if (!t->active && !preload_adopt(t, uc))
		return;
	atomic_fetch_add_explicit(&preload.signals, 1, memory_order_relaxed);
	/* (in tick mode every tick is an overrun of the microsecond timer) */
	if (si->si_code == SI_TIMER && si->si_overrun > 0 && !t->young)
		atomic_fetch_add_explicit(&preload.overruns, (uint64_t)si->si_overrun,
					  memory_order_relaxed);
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
		return;
	cpu = preload_ts_ns(&ts);
	if (!control_sample_ok(t, cpu)) {
		t->sys_stale = 1;
		if (perf) /* its record: of a time in no sample */
			engine_perf_sample(&t->timer, kframes, PRELOAD_KERNEL_FRAMES, &k.n);
		return;
	}
	if (t->seen != NULL) {
		/* The sweeper's nudge (sweep.c) found the thread on a CPU if
		 * its signal came at once.  One that comes late found it
		 * waiting for a CPU: the thread takes it where it resumes,
		 * which for a thread preempted at the end of its slice is a
		 * system call.  So it is turned down, and the nudge set again
		 * at another random moment, a few times in a row. */
		uint64_t due = engine_is_nudge(si) ? atomic_exchange_explicit(
							    &t->seen->due_ns, 0, memory_order_relaxed)
						    : 0;

		if (due != 0 && preload_now() > due + PRELOAD_SWEEP_LATE_NS &&
		    t->declined < PRELOAD_SWEEP_DECLINE &&
		    atomic_load_explicit(&t->seen->has_nudge, memory_order_acquire)) {
			uint64_t delay = preload_random(preload.period_ns);

			t->declined++;
			atomic_store_explicit(&t->seen->due_ns, preload_now() + delay,
					      memory_order_relaxed);
			engine_nudge(t->seen->nudge, delay);
			return;
		}
		t->declined = 0;
		atomic_store_explicit(&t->seen->cpu, cpu, memory_order_relaxed);
	}
	/* A thread no longer young: from tick mode to a period, from a
	 * random phase (engine.c). */
	if (t->young && cpu - t->cpu_base >= (int64_t)preload.short_ns) {
		t->young = 0;
		engine_mature(&t->timer, preload_random(preload.period_ns));
	}
	preload_system(t, si, perf, !perf && preload_in_syscall(uc),
		       cpu > t->last_cpu ? (uint64_t)(cpu - t->last_cpu) : 0, &k);
	if (preload.unwind == RAW_UNWIND_DWARF) {
		preload_sample_regs(t, uc, cpu, NULL, &k);
		return;
	}
	frames = t->frames;
	cap = RAW_MAX_FRAMES;
	if (frames == NULL) {
		frames = small;
		cap = PRELOAD_SMALL_FRAMES;
	}
	if (preload.unwind != RAW_UNWIND_FP) {
		preload_sample_cfi(t, uc, cpu, frames, cap, &k);
		return;
	}
	n = preload_unwind(uc, t->stack_lo, t->stack_hi, frames, cap, &flags);
	preload_sample_frames(t, frames, n, cap, flags, cpu, &k);
}

/* The auto engine: a thread's perf event is a high-resolution timer the
 * scheduler stops and starts at each of its context switches, some
 * microseconds each where timers are slow to program (a virtual machine's
 * trap to its hypervisor: 5.5 us a switch, scripts/bench/switchcost);
 * past one switch per PRELOAD_MOVE_CPU_NS of the thread's CPU time that
 * is about 3% of its time, and the thread moves to a POSIX timer on its
 * CPU clock, which costs nothing at a switch (engine_move).  Looked at
 * every PRELOAD_MOVE_LOOK of its perf samples, so that a look spans a few
 * periods of its CPU time (at least two: a period is drawn from half of
 * one up): its CPU clock and one getrusage, the first look only a
 * reading.
 * A CPU-bound thread beside busy ones is switched out at most once a
 * scheduler tick, some thousands of microseconds. */
#define PRELOAD_MOVE_LOOK 4
#define PRELOAD_MOVE_CPU_NS 200000

/* In the handler of a perf signal, after its sample: does the thread move
 * (see above)?  The handler only decides and makes the timer; its entry
 * in the registry is settled under the lock (threads_settle).
 * Signal-safe. */
static void preload_switches(const siginfo_t *si)
{
	struct preload_tls *t = &preload_tls;
	struct timespec ts;
	int64_t cpu, sw;

	/* (a thread found at start, or whose event the sweeper replaced,
	 * keeps it) */
	if (!t->active || t->foreign || t->seen == NULL || t->timer.fd < 0 ||
	    t->timer.fd != si->si_fd || !engine_adaptive() || control_paused())
		return;
	if (t->move_cpu != 0 && ++t->move_samples < PRELOAD_MOVE_LOOK)
		return;
	t->move_samples = 0;
	/* (the CPU clock: getrusage's CPU time may move by ticks) */
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0 || threads_switches(&sw) != 0)
		return;
	cpu = preload_ts_ns(&ts);
	if (t->move_cpu == 0 || cpu <= t->move_cpu ||
	    (sw - t->move_switches) * PRELOAD_MOVE_CPU_NS <= cpu - t->move_cpu) {
		t->move_cpu = cpu;
		t->move_switches = sw;
		return;
	}
	if (engine_move(t->tid, &t->timer, si->si_fd, preload_random(preload.period_ns)) != 0)
		return;
	t->seen->moved_timer = t->timer.timer;
	atomic_store_explicit(&t->seen->moved, 1, memory_order_release);
	atomic_fetch_add_explicit(&preload.moved, 1, memory_order_relaxed);
	/* its next split from getrusage, in proportion */
	t->sys_stale = 1;
}

/* --stats: the time one handler took, into its bucket.  Signal-safe. */
static void preload_time_handler(uint64_t start)
{
	uint64_t d = preload_now() - start, b = d / PRELOAD_HIST_NS;

	atomic_fetch_add_explicit(&preload.hist[b < PRELOAD_HIST_BUCKETS ? b : PRELOAD_HIST_BUCKETS - 1],
				  1, memory_order_relaxed);
}

/* Was the signal sent by a process (kill, raise, sigqueue) or by an
 * ITIMER_PROF timer (SI_KERNEL), surely not by one of our timers or perf
 * events?  A late signal of a timer or event of ours just deleted, which
 * engine_signal no longer knows, is neither.  Signal-safe. */
static int preload_sent_by_program(const siginfo_t *si)
{
	return si->si_code == SI_USER || si->si_code == SI_TKILL || si->si_code == SI_QUEUE ||
	       si->si_code == SI_KERNEL;
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
	} else if (act->sa_handler == SIG_DFL && control_default_kills(sig) &&
		   preload_sent_by_program(si)) {
		/* the program's signal, with its default action: it ends
		 * the process, as it would have without us */
		sigs_take_default(sig);
	}
}

void sample_on_sigprof(int sig, siginfo_t *si, void *uc)
{
	int saved_errno = errno;
	int engine;

	engine = engine_signal(si);
	if (!engine) {
		preload_forward(sig, si, uc);
	} else {
		uint64_t start = preload.stats ? preload_now() : 0;

		atomic_fetch_add(&preload.inflight, 1);
		if (atomic_load(&preload.state) == PRELOAD_RUNNING) {
			preload_sample(si, uc, engine == ENGINE_PERF + 1);
			if (engine == ENGINE_PERF + 1)
				preload_switches(si);
		}
		atomic_fetch_sub(&preload.inflight, 1);
		if (start != 0)
			preload_time_handler(start);
		/* (not of an event moved to a POSIX timer) */
		if (engine == ENGINE_PERF + 1)
			engine_signal_done(si);
	}
	errno = saved_errno;
}
