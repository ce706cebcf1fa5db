/* wall.c - off-CPU samples for --clock=wall
 *
 * The CPU engines sample a thread only while it runs.  For wall-clock
 * profiles a sampler thread of our own wakes every period of wall-clock
 * time and looks at every registered thread without interrupting it:
 * /proc/self/task/TID/syscall says "running" for a thread on a CPU (the
 * CPU timers sample it), and for any other thread the user stack pointer
 * and program counter where it stopped in a system call (blocked,
 * sleeping).  A thread waiting for a CPU reads as "running" too (its
 * state is runnable), so that time is in neither kind of sample.  For those the sampler writes a
 * RAW_SAMPLE_REGS record without RAW_SAMPLE_RUNNING: the two registers, a
 * copy of the stack from the stack pointer up (read with process_vm_readv,
 * so an unmapped page ends the copy instead of faulting), and as weight
 * the wall time since the sampler last looked at that thread.  A thread
 * of a Python program gets its Python frames too, read by the sampler
 * from the interpreter's state (pyframes.c) into a RAW_SAMPLE_PY record
 * right after, in the same reservation, so that nothing comes between.
 *
 * No signal is sent to a thread that is off CPU, so a sleeping or blocked
 * system call is never interrupted: a program sees no more EINTR than
 * without --clock=wall.  The price is that only rsp and rip are known for
 * such samples: the unwinder recovers callers from call frame information
 * as far as no frame needs a register that was not saved on the stack (a
 * function that keeps its frame in rbp, built with frame pointers, ends
 * the stack unless a callee saved rbp).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "preload-state.h"
#include "preload.h"
#include "pyframes.h"
#include "sample.h"
#include "threads.h"
#include "wall.h"
#include "writer.h"

struct wall_seen {
	pid_t tid;
	uint64_t since_ns;    /* registration time: tells a reused tid apart */
	uint64_t last_ns;     /* when the sampler last looked at it */
};

static struct {
	pthread_t thread;
	_Atomic int started;
	_Atomic int stop;
	uint64_t period_ns;
	uint32_t stack_size;
	_Atomic uint64_t samples;
	struct preload_thread_view *view;
	size_t capview;
	struct wall_seen *seen, *next;
	size_t nseen, capseen;
	struct pyframes_thread py; /* the Python frames of the thread looked at */
} wall;

static int wall_by_tid(const void *a, const void *b)
{
	const struct preload_thread_view *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Parses /proc/self/task/TID/syscall.  Returns 1 with sp and pc for a
 * thread that is off CPU, 0 for one that is running or gone. */
static int wall_where(pid_t tid, uint64_t *sp, uint64_t *pc)
{
	char buf[256], *p, *end;
	unsigned long long v[9];
	int k = 0;

	if (threads_read_task_file(tid, "syscall", buf, sizeof(buf)) <= 0)
		return 0;
	if (strncmp(buf, "running", 7) == 0)
		return 0;
	/* "NR ARG1..ARG6 SP PC" in a system call, "-1 SP PC" out of one */
	for (p = buf; k < 9; p = end) {
		errno = 0;
		v[k] = k == 0 ? (unsigned long long)strtoll(p, &end, 10) : strtoull(p, &end, 0);
		if (end == p || errno != 0)
			break;
		k++;
	}
	if (k != 3 && k != 9)
		return 0;
	*sp = v[k - 2];
	*pc = v[k - 1];
	return *pc != 0;
}

static int64_t wall_cpu(pid_t tid)
{
	struct timespec ts;
	clockid_t clock = (clockid_t)((~(unsigned)tid << 3) | 6); /* CPUCLOCK_SCHED | PERTHREAD */

	if (clock_gettime(clock, &ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Writes one off-CPU sample of thread v. */
static void wall_sample(const struct preload_thread_view *v, uint64_t now, uint64_t weight,
			uint64_t sp, uint64_t pc)
{
	struct raw_sample_regs *rec;
	uint32_t len = wall.stack_size, size, got, flags = 0, pysize;
	uint64_t *regs;
	int64_t cpu0, cpu1;

	if (sp >= v->stack_lo && sp < v->stack_hi) {
		if (v->stack_hi - sp < len)
			len = (uint32_t)(v->stack_hi - sp);
		else
			flags |= RAW_SAMPLE_STACK_PARTIAL;
	}
	size = (uint32_t)sizeof(*rec) + RAW_NREGS * 8 + raw_pad(len);
	cpu0 = wall_cpu(v->tid);
	/* its Python frames, in a record right after (one reservation) */
	pysize = pyframes_read_thread(v->pthread != 0 ? v->pthread : pyframes_pthread_of(v->tid), &wall.py);
	writer_need_file();
	rec = writer_reserve(size + pysize, 1);
	if (rec == NULL)
		return;
	regs = (uint64_t *)(rec + 1);
	memset(regs, 0, RAW_NREGS * 8);
	regs[RAW_REG_RSP] = sp;
	regs[RAW_REG_RIP] = pc;
	got = preload_read_memory(regs + RAW_NREGS, (uintptr_t)sp, len);
	cpu1 = wall_cpu(v->tid);
	/* A thread that ran meanwhile may have changed its stack under the
	 * copy: keep only the program counter, and none of its Python
	 * frames. */
	if (cpu0 < 0 || cpu1 != cpu0) {
		got = 0;
		wall.py.nwords = wall.py.ngroups = 0;
	}
	if (got < len) {
		flags |= RAW_SAMPLE_STACK_PARTIAL;
		len = got;
	}
	memset((unsigned char *)(regs + RAW_NREGS) + len, 0,
	       size - sizeof(*rec) - RAW_NREGS * 8 - len);
	rec->tid = (uint32_t)v->tid;
	rec->flags = flags;
	rec->time_ns = now;
	rec->weight_ns = weight;
	rec->nregs = RAW_NREGS;
	rec->stack_len = len;
	writer_publish(rec, RAW_SAMPLE_REGS, size);
	if (pysize > 0)
		pyframes_put_thread((unsigned char *)rec + size, pysize, &wall.py, (uint32_t)v->tid, now);
	atomic_fetch_add_explicit(&wall.samples, 1, memory_order_relaxed);
}

/* One look at every registered thread. */
static void wall_tick(void)
{
	size_t n, i, j = 0, k = 0;
	uint64_t now;

	for (;;) {
		n = preload_threads(wall.view, wall.capview);
		if (n < wall.capview)
			break;
		{
			size_t cap = wall.capview ? wall.capview * 2 : 64;
			void *p = realloc(wall.view, cap * sizeof(*wall.view));

			if (p == NULL)
				break;
			wall.view = p;
			wall.capview = cap;
		}
	}
	if (n > wall.capseen) {
		void *a = realloc(wall.seen, n * sizeof(*wall.seen));
		void *b = a != NULL ? realloc(wall.next, n * sizeof(*wall.next)) : NULL;

		if (a != NULL)
			wall.seen = a;
		if (b == NULL)
			return;
		wall.next = b;
		wall.capseen = n;
	}
	qsort(wall.view, n, sizeof(*wall.view), wall_by_tid);
	now = preload_now();
	for (i = 0; i < n; i++) {
		const struct preload_thread_view *v = &wall.view[i];
		uint64_t last = v->since_ns, sp, pc;

		while (j < wall.nseen && wall.seen[j].tid < v->tid)
			j++;
		if (j < wall.nseen && wall.seen[j].tid == v->tid &&
		    wall.seen[j].since_ns == v->since_ns)
			last = wall.seen[j].last_ns;
		wall.next[k++] = (struct wall_seen){ v->tid, v->since_ns, now };
		/* paused: looked at, not sampled, so that no weight holds the
		 * time paused; nor a thread whose stretch a pause closed, until
		 * its first sample after the resume opens another */
		if (now > last && v->open && wall_where(v->tid, &sp, &pc) && sample_running() &&
		    !control_paused())
			wall_sample(v, now, now - last, sp, pc);
	}
	{
		struct wall_seen *t = wall.seen;

		wall.seen = wall.next;
		wall.next = t;
		wall.nseen = k;
	}
}

static void *wall_main(void *unused)
{
	struct timespec next;
	uint64_t t;

	(void)unused;
	t = preload_now() + wall.period_ns;
	while (!atomic_load(&wall.stop)) {
		next.tv_sec = (time_t)(t / 1000000000ull);
		next.tv_nsec = (long)(t % 1000000000ull);
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			continue;
		if (atomic_load(&wall.stop))
			break;
		/* not after the end of the trace (--duration, a signal) */
		if (sample_running())
			wall_tick();
		t += wall.period_ns;
		if (t < preload_now()) /* fell behind: skip, do not catch up */
			t = preload_now() + wall.period_ns;
	}
	return NULL;
}

int wall_start(uint64_t period_ns, uint32_t stack_size)
{
	/* Also in the child of a fork, where the parent's sampler thread
	 * does not exist: start afresh. */
	atomic_store(&wall.started, 0);
	atomic_store(&wall.stop, 0);
	atomic_store(&wall.samples, 0);
	wall.nseen = 0;
	wall.period_ns = period_ns;
	wall.stack_size = stack_size;
	if (threads_start_helper(&wall.thread, wall_main, "profview-wall", 0, 0) != 0)
		return -1;
	atomic_store(&wall.started, 1);
	return 0;
}

uint64_t wall_stop(void)
{
	if (atomic_exchange(&wall.started, 0)) {
		atomic_store(&wall.stop, 1);
		pthread_join(wall.thread, NULL);
		free(wall.view);
		free(wall.seen);
		free(wall.next);
		wall.view = NULL;
		wall.seen = wall.next = NULL;
		wall.capview = wall.capseen = wall.nseen = 0;
	}
	return atomic_load(&wall.samples);
}
