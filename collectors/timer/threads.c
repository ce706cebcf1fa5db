/* threads.c - the registry of sampled threads
 *
 * Every thread gets a POSIX timer on its own CPU clock, delivering SIGPROF
 * to that thread (SIGEV_THREAD_ID).  Threads are registered three ways: the
 * thread that runs our constructor; threads made by pthread_create, which is
 * interposed so that the new thread registers itself before running its
 * start routine; and "foreign" threads found in /proc/self/task at start,
 * whose timers are created from outside and which adopt their state in the
 * handler on their first signal (preload_adopt, sample.c).  A pthread key destructor deletes a
 * thread's timer when it exits (return, pthread_exit, cancellation).
 *
 * The registry (preload.entries, guarded by preload.registry_lock) holds
 * one entry per thread with a timer; wall.c reads it through
 * preload_threads.  The RAW_THREAD and RAW_THREAD_EXIT records are written
 * here, outside the handler.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/single_threaded.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "control-timer.h"
#include "engine.h"
#include "mappings.h"
#include "preload-state.h"
#include "sample.h"
#include "threads.h"
#include "writer.h"

/* ---- records written outside the handler ---- */

static void threads_write_thread_as(pid_t tid, const char name[16], int64_t cpu_base, int mode)
{
	struct raw_thread *rec = writer_reserve(sizeof(*rec), mode);

	if (rec == NULL)
		return;
	rec->tid = (uint32_t)tid;
	rec->time_ns = preload_now();
	memcpy(rec->name, name, sizeof(rec->name));
	rec->cpu_ns = cpu_base > 0 ? (uint64_t)cpu_base : 0;
	writer_publish(rec, RAW_THREAD, sizeof(*rec));
}

void threads_write_thread(pid_t tid, const char name[16], int64_t cpu_base)
{
	threads_write_thread_as(tid, name, cpu_base, WRITER_WAIT);
}

int threads_rusage(int64_t *user_ns, int64_t *sys_ns)
{
	struct rusage ru;

	/* the system call itself: glibc's wrapper is one too, but is not
	 * listed as async-signal-safe */
	if (syscall(SYS_getrusage, RUSAGE_THREAD, &ru) != 0)
		return -1;
	*user_ns = (int64_t)ru.ru_utime.tv_sec * 1000000000ll + (int64_t)ru.ru_utime.tv_usec * 1000;
	*sys_ns = (int64_t)ru.ru_stime.tv_sec * 1000000000ll + (int64_t)ru.ru_stime.tv_usec * 1000;
	return 0;
}

int threads_switches(int64_t *switches)
{
	struct rusage ru;

	if (syscall(SYS_getrusage, RUSAGE_THREAD, &ru) != 0)
		return -1;
	*switches = (int64_t)ru.ru_nvcsw + (int64_t)ru.ru_nivcsw;
	return 0;
}

void threads_settle(struct preload_entry *e)
{
	if (e->seen != NULL && e->timer.fd >= 0 &&
	    atomic_load_explicit(&e->seen->moved, memory_order_acquire))
		engine_settle(&e->timer, e->seen->moved_timer);
}

/* The system time of thread tid of this process in nanoseconds (to the
 * clock tick for another thread: /proc's stat), or RAW_UNKNOWN. */
static uint64_t threads_system_ns(pid_t tid)
{
	char buf[1024], *at;
	unsigned long long stime;
	long hz = sysconf(_SC_CLK_TCK);
	int64_t user, sys;

	if (tid == preload_gettid())
		return threads_rusage(&user, &sys) == 0 && sys >= 0 ? (uint64_t)sys : RAW_UNKNOWN;
	if (hz <= 0 || threads_read_task_file(tid, "stat", buf, sizeof(buf)) <= 0)
		return RAW_UNKNOWN;
	/* the name may hold anything: the fields start after its ')';
	 * stime is field 15, the 13th after it */
	at = strrchr(buf, ')');
	for (int field = 3; field <= 14 && at != NULL; field++)
		at = strchr(at + 1, ' ');
	if (at == NULL || sscanf(at + 1, "%llu", &stime) != 1)
		return RAW_UNKNOWN;
	return (uint64_t)stime * (1000000000ull / (uint64_t)hz);
}

/* The flags of the exit record of a thread whose shared state is seen. */
static uint32_t threads_exit_flags(const struct preload_seen *seen)
{
	return seen != NULL && atomic_load(&seen->moved) ? RAW_EXIT_MOVED : 0;
}

static void threads_write_exit_as(pid_t tid, int64_t cpu_ns, uint64_t system, uint32_t flags,
				  int mode)
{
	struct raw_thread_exit *rec = writer_reserve(sizeof(*rec), mode);

	if (rec == NULL)
		return;
	rec->tid = (uint32_t)tid;
	rec->flags = flags;
	rec->time_ns = preload_now();
	rec->cpu_ns = cpu_ns > 0 ? (uint64_t)cpu_ns : 0;
	rec->system_ns = system;
	writer_publish(rec, RAW_THREAD_EXIT, sizeof(*rec));
}

void threads_write_exit(pid_t tid, const struct preload_seen *seen, int64_t cpu_ns)
{
	threads_write_exit_as(tid, cpu_ns, threads_system_ns(tid), threads_exit_flags(seen),
			      WRITER_WAIT);
}

void threads_write_own(int open, int64_t cpu_ns)
{
	char name[16] = { 0 };
	int64_t user, sys;

	if (open) {
		/* the system call: glibc's prctl is one, but not listed as
		 * async-signal-safe */
		syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0);
		threads_write_thread_as(preload_gettid(), name, cpu_ns, WRITER_NOWAIT);
	} else {
		threads_write_exit_as(preload_gettid(), cpu_ns,
				      threads_rusage(&user, &sys) == 0 && sys >= 0 ? (uint64_t)sys
										 : RAW_UNKNOWN,
				      threads_exit_flags(preload_tls.seen), WRITER_NOWAIT);
	}
}

void threads_write_exit_final(pid_t tid, const struct preload_seen *seen, int64_t cpu_ns)
{
	int64_t user, sys;
	uint64_t system = RAW_UNKNOWN;

	if (tid == preload_gettid() && threads_rusage(&user, &sys) == 0 && sys >= 0)
		system = (uint64_t)sys;
	threads_write_exit_as(tid, cpu_ns, system, threads_exit_flags(seen), WRITER_FINAL);
}

ssize_t threads_read_task_file(pid_t tid, const char *file, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/%s", (int)tid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

void threads_read_comm(pid_t tid, char name[16])
{
	ssize_t n;

	memset(name, 0, 16);
	/* the calling thread's own, without opening a file of /proc (the end
	 * of a process of one thread) */
	if (tid == preload_gettid() && prctl(PR_GET_NAME, name, 0, 0, 0) == 0)
		return;
	n = threads_read_task_file(tid, "comm", name, 16);
	if (n > 0 && name[n - 1] == '\n')
		name[n - 1] = '\0';
}

/* ---- threads ---- */

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
		v[n].pthread = e->pthread;
		v[n].open = e->seen == NULL || atomic_load(&e->seen->open);
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
	preload.entries[i].seen = NULL;
	preload.entries[i].cpu_base = 0;
	preload.entries[i].sweep_pass = 0;
	memcpy(preload.entries[i].name, name, 16);
	preload.entries[i].stack_lo = preload.entries[i].stack_hi = 0;
	preload.entries[i].pthread = 0;
	preload.entries[i].since_ns = preload_now();
	return i;
}

/* The frame buffer of the first thread registered (most processes have
 * no other): static, where only a walk writes its pages (a malloc'd one
 * writes the heap's headers on either side of it, two pages in a process
 * that may never sample); the others' from malloc. */
static uint64_t threads_first_frames[RAW_MAX_FRAMES] PRELOAD_COLD;
static _Atomic int threads_first_taken;

static uint64_t *threads_frames_new(void)
{
	if (preload.unwind == RAW_UNWIND_DWARF)
		return NULL;
	if (!atomic_exchange(&threads_first_taken, 1))
		return threads_first_frames;
	return malloc(RAW_MAX_FRAMES * sizeof(uint64_t));
}

void threads_frames_free(uint64_t *frames)
{
	if (frames == threads_first_frames)
		atomic_store(&threads_first_taken, 0);
	else
		free(frames);
}

/* Registers the calling thread: stack bounds, frame buffer, RAW_THREAD
 * record, timer, and the key whose destructor unregisters it.
 *
 * Each sample weighs the CPU time since the thread's previous one, the
 * first the time since profiling started for the thread: from just before
 * its timer is armed (the CPU time this function spent before is the
 * profiler's, not the program's). */
void threads_register(void)
{
	struct preload_tls *t = &preload_tls;
	pthread_attr_t attr;
	struct timespec ts;
	char name[16] = { 0 };
	void *addr;
	size_t size, idx;

	if (atomic_load(&preload.state) != PRELOAD_RUNNING || t->active)
		return;
	t->tid = preload_gettid();
	t->foreign = 0;
	if (mappings_initial_stack((uintptr_t)&ts, &t->stack_lo, &t->stack_hi) == 0) {
		/* the maps are not read again */
	} else if (pthread_getattr_np(pthread_self(), &attr) == 0) {
		if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
			t->stack_lo = (uintptr_t)addr;
			t->stack_hi = (uintptr_t)addr + size;
		}
		pthread_attr_destroy(&attr);
	}
	t->frames = threads_frames_new();
	prctl(PR_GET_NAME, name, 0, 0, 0);
	t->seen = calloc(1, sizeof(*t->seen));
	t->declined = 0;
	t->move_samples = 0;
	t->move_switches = t->move_cpu = 0;

	pthread_mutex_lock(&preload.registry_lock);
	if (atomic_load(&preload.state) != PRELOAD_RUNNING)
		goto fail;
	idx = preload_entry_add(t->tid, name);
	if (idx == (size_t)-1)
		goto fail;
	if (engine_create(CLOCK_THREAD_CPUTIME_ID, t->tid, preload_random(preload.period_ns),
			  &preload.entries[idx].timer) != 0) {
		preload.entries[idx].tid = 0;
		goto fail;
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	t->cpu_base = t->last_cpu = preload_ts_ns(&ts);
	t->sys_stale = threads_rusage(&t->user_read, &t->sys_read) != 0;
	t->sys_done = t->sys_read;
	if (t->seen != NULL)
		atomic_store(&t->seen->cpu, t->cpu_base);
	preload.entries[idx].seen = t->seen;
	preload.entries[idx].cpu_base = t->cpu_base;
	/* while sampling is paused, its first sample after the resume
	 * writes its record (control-timer.c) */
	if (t->seen != NULL)
		atomic_store(&t->seen->open, !control_paused());
	if (!control_paused() || t->seen == NULL)
		threads_write_thread(t->tid, name, t->cpu_base);
	preload.entries[idx].stack_lo = t->stack_lo;
	preload.entries[idx].stack_hi = t->stack_hi;
	preload.entries[idx].pthread = (uintptr_t)pthread_self();
	t->entry = idx;
	t->timer = preload.entries[idx].timer;
	t->young = t->timer.fd < 0;
	t->active = 1;
	atomic_signal_fence(memory_order_seq_cst);
	/* armed while paused too: its handler sees the resume */
	engine_arm(&preload.entries[idx].timer);
	pthread_mutex_unlock(&preload.registry_lock);
	pthread_setspecific(preload.key, (void *)1);
	/* a thread of the program's own, after the first */
	preload_control_need();
	return;
fail:
	pthread_mutex_unlock(&preload.registry_lock);
	threads_frames_free(t->frames);
	t->frames = NULL;
	free(t->seen);
	t->seen = NULL;
}

/* The key destructor: runs when a registered thread exits. */
void threads_exit(void *unused)
{
	struct preload_tls *t = &preload_tls;
	struct preload_entry *e;
	sigset_t block, old;
	struct timespec ts;
	char name[16] = { 0 };

	(void)unused;
	if (!t->active || t->foreign)
		return;
	/* the CPU time it used, before the profiler's own work here */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	sigemptyset(&block);
	sigaddset(&block, preload.signo);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	pthread_mutex_lock(&preload.registry_lock);
	if (atomic_load(&preload.state) == PRELOAD_RUNNING) {
		e = &preload.entries[t->entry];
		threads_settle(e);
		engine_delete(&e->timer);
		engine_unmap(e->timer.ring);
		e->timer.ring = t->timer.ring = NULL;
		if (t->seen != NULL && atomic_load(&t->seen->has_nudge))
			timer_delete(t->seen->nudge);
		e->tid = 0;
		e->seen = NULL;
		prctl(PR_GET_NAME, name, 0, 0, 0);
		/* its stretch closed by a pause: its record ended there */
		if (control_thread_close(t->seen)) {
			if (strncmp(name, e->name, 16) != 0)
				threads_write_thread(t->tid, name, e->cpu_base);
			threads_write_exit(t->tid, t->seen, preload_ts_ns(&ts));
		}
	}
	t->active = 0;
	pthread_mutex_unlock(&preload.registry_lock);
	threads_frames_free(t->frames);
	t->frames = NULL;
	/* The sweeper reads it under the lock, through an entry with a tid:
	 * ours is cleared above, or by the end of the trace. */
	free(t->seen);
	t->seen = NULL;
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
	threads_register();
	return s.fn(s.arg);
}

/* Adopts thread tid, found running: a foreign entry, its registry
 * entry and timer.  Returns 0, or -1 when it is gone or no entry is left.
 * Only the start or attach.c's thread calls it, one at a time. */
int threads_adopt(pid_t tid)
{
	int n = atomic_load(&preload.nforeign);
	struct preload_foreign *f = &preload.foreign[n];
	struct timespec ts;
	char name[16];
	size_t idx;
	int rc = -1;

	if (n >= PRELOAD_FOREIGN_MAX)
		return -1;
	if (preload.nranges == 0)
		preload.nranges = mappings_ranges(preload.ranges, PRELOAD_RANGES_MAX, 0);
	if (clock_gettime(preload_thread_clock(tid), &ts) != 0)
		return -1;
	f->tid = tid;
	f->cpu_base = preload_ts_ns(&ts);
	atomic_store(&f->seen.cpu, preload_ts_ns(&ts));
	atomic_store(&f->seen.due_ns, 0);
	atomic_store(&f->seen.has_nudge, 0);
	atomic_store(&f->seen.open, 0);
	if (f->frames == NULL)
		f->frames = preload.unwind != RAW_UNWIND_DWARF
				    ? malloc(RAW_MAX_FRAMES * sizeof(uint64_t)) : NULL;
	if ((preload.unwind == RAW_UNWIND_CFI || preload.unwind == RAW_UNWIND_CHECK) &&
	    f->copy_cap < PRELOAD_COPY_BELOW + preload.stack_size) {
		/* (an earlier attach's room, too small for this one's size) */
		free(f->copy);
		f->copy_cap = PRELOAD_COPY_BELOW + preload.stack_size;
		f->copy = malloc(f->copy_cap);
		if (f->copy == NULL)
			f->copy_cap = 0;
	}
	threads_read_comm(tid, name);
	pthread_mutex_lock(&preload.registry_lock);
	idx = preload_entry_add(tid, name);
	if (idx != (size_t)-1) {
		preload.entries[idx].seen = &f->seen;
		preload.entries[idx].cpu_base = f->cpu_base;
		if (engine_create(preload_thread_clock(tid), tid, preload_random(preload.period_ns),
				  &preload.entries[idx].timer) == 0) {
			f->timer = preload.entries[idx].timer;
			f->young = f->timer.fd < 0;
			atomic_store_explicit(&preload.nforeign, n + 1, memory_order_release);
			if (!control_paused()) {
				atomic_store(&f->seen.open, 1);
				threads_write_thread(tid, name, f->cpu_base);
			}
			engine_arm(&preload.entries[idx].timer);
			rc = 0;
		} else {
			preload.entries[idx].tid = 0;
		}
	}
	pthread_mutex_unlock(&preload.registry_lock);
	return rc;
}

/* Timers for the threads that were running before we started: all but
 * the calling one, which registers itself, and, attached, all but the
 * library's own. */
void threads_adopt_existing(void)
{
	pid_t self = preload_gettid();
	struct dirent *de;
	DIR *d;

	/* At the start of a process no thread has been made (the C
	 * library's word for it, which its first pthread_create clears,
	 * ours included): nothing to read in /proc. */
	if (!preload.attached && __libc_single_threaded)
		return;
	d = opendir("/proc/self/task");
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid <= 0 || (tid == self && !preload.attached) || threads_own(tid))
			continue;
		if (threads_adopt(tid) != 0 && atomic_load(&preload.nforeign) >= PRELOAD_FOREIGN_MAX)
			break;
	}
	closedir(d);
}

/* Is tid one of the library's own threads (helper.c names them
 * "profview-...")? */
int threads_own(pid_t tid)
{
	char name[16];

	threads_read_comm(tid, name);
	return strncmp(name, "profview-", 9) == 0;
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

/* ---- the sweeper's pass (sweep.c) ---- */

/* The hexadecimal signal mask on the line of /proc's status that starts
 * with key, or 0. */
static uint64_t threads_status_mask(const char *status, const char *key)
{
	const char *p = strstr(status, key);

	return p != NULL ? strtoull(p + strlen(key), NULL, 16) : 0;
}

/* May thread e be asked for a sample now?  Only if it is running or ready
 * to run ("R" in /proc), so that the signal reaches it in user code and
 * not in a system call it would interrupt; if the signal is neither
 * blocked nor already pending there (a real-time signal would queue up);
 * and if it has not blocked in a system call of its own will since the
 * previous pass (its voluntary context switches did not change): a signal
 * sent as a thread enters a sleeping call (nanosleep, poll...) interrupts
 * it, and a thread that sleeps often enough to risk that is one the tick
 * finds running anyway.  The first pass that looks at a thread only notes
 * its count. */
static int threads_may_ask(struct preload_entry *e, int signo, uint64_t pass)
{
	char buf[4096];
	const char *state, *vol;
	uint64_t bit = 1ull << (signo - 1), vcsw;
	int again;

	if (threads_read_task_file(e->tid, "status", buf, sizeof(buf)) <= 0)
		return 0;
	vol = strstr(buf, "\nvoluntary_ctxt_switches:\t");
	if (vol == NULL)
		return 0;
	vcsw = strtoull(vol + 26, NULL, 10);
	again = e->sweep_pass + 1 == pass && e->sweep_vcsw == vcsw;
	e->sweep_pass = pass;
	e->sweep_vcsw = vcsw;
	state = strstr(buf, "\nState:\t");
	if (!again || state == NULL || state[8] != 'R')
		return 0;
	return !(threads_status_mask(buf, "\nSigBlk:\t") & bit) &&
	       !(threads_status_mask(buf, "\nSigPnd:\t") & bit) &&
	       !(threads_status_mask(buf, "\nShdPnd:\t") & bit);
}

int threads_sweep_wanted(void)
{
	int wanted = 0;

	pthread_mutex_lock(&preload.registry_lock);
	for (size_t i = 0; i < preload.nentries && !wanted; i++) {
		struct preload_entry *e = &preload.entries[i];

		if (e->tid != 0)
			threads_settle(e);
		wanted = e->tid != 0 && (e->timer.fd < 0 || engine_lost(&e->timer));
	}
	pthread_mutex_unlock(&preload.registry_lock);
	return wanted;
}

size_t threads_sweep(uint64_t threshold_ns, size_t *nthreads, size_t *watched)
{
	static uint64_t pass; /* only the sweeper's thread calls this */
	size_t asked = 0, n = 0, w = 0;

	pass++;
	pthread_mutex_lock(&preload.registry_lock);
	for (size_t i = 0; i < preload.nentries && atomic_load(&preload.state) == PRELOAD_RUNNING;
	     i++) {
		struct preload_entry *e = &preload.entries[i];
		struct timespec ts;
		int64_t last, cpu0;
		uint64_t wall0, wall1;
		int running;

		if (e->tid == 0)
			continue;
		n++;
		threads_settle(e);
		/* perf events sample on a high-resolution timer: not missed,
		 * unless the program closed the event (engine.c): it gets a
		 * new one, or while it cannot, is sampled from here */
		if (e->timer.fd >= 0 && (!engine_lost(&e->timer) || engine_replace(e->tid, &e->timer) == 0))
			continue;
		if (e->seen == NULL)
			continue;
		w++;
		clockid_t clock = preload_thread_clock(e->tid);
		if (clock_gettime(clock, &ts) != 0)
			continue;
		last = atomic_load_explicit(&e->seen->cpu, memory_order_relaxed);
		cpu0 = preload_ts_ns(&ts);
		wall0 = preload_now();
		if (cpu0 - last <= (int64_t)threshold_ns || !threads_may_ask(e, preload.signo, pass))
			continue;
		/* A thread on a CPU now (its clock ran for most of the time
		 * /proc took to read) is asked at once: the signal interrupts
		 * it wherever it computes.  One that is ready to run but
		 * preempted would take a signal where it resumes, which for a
		 * thread that reads its own CPU clock is that system call
		 * (the read ends its slice): every such sample would land
		 * there, weighing all the time since the last.  It gets a
		 * nudge instead, a timer that fires at a random moment within
		 * a period, which its handler takes only if it comes on time,
		 * when the thread is on a CPU (sample.c). */
		if (clock_gettime(clock, &ts) != 0)
			continue;
		wall1 = preload_now();
		running = wall1 > wall0 && (uint64_t)(preload_ts_ns(&ts) - cpu0) * 2 >= wall1 - wall0;
		if (!running && !atomic_load(&e->seen->has_nudge)) {
			if (engine_nudge_create(e->tid, &e->seen->nudge) != 0)
				continue;
			atomic_store_explicit(&e->seen->has_nudge, 1, memory_order_release);
		}
		/* Counted as seen now, so that it is asked once until the
		 * sample (or another threshold of CPU time) comes. */
		atomic_store_explicit(&e->seen->cpu, preload_ts_ns(&ts), memory_order_relaxed);
		if (running) {
			if (engine_request(preload.pid, e->tid) == 0)
				asked++;
		} else {
			uint64_t delay = preload_random(preload.period_ns);

			atomic_store_explicit(&e->seen->due_ns, preload_now() + delay,
					      memory_order_relaxed);
			engine_nudge(e->seen->nudge, delay);
			asked++;
		}
	}
	pthread_mutex_unlock(&preload.registry_lock);
	*nthreads = n;
	*watched = w;
	return asked;
}
