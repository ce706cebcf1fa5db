/* attach.c - libprofview-timer.so loaded into a running process
 * (collect-timer -p)
 *
 * collect-timer loads the library into the process with dlopen, called by
 * one thread it stops (collectors/launch/inject.c), then calls
 * profview_timer_attach there with its settings, the names of
 * collect-env.h one a line.  Nothing is interposed (the library is not
 * in the program's lookup scope): a thread of ours ("profview-attach")
 * adopts every thread as one found running, with a timer made on its CPU
 * clock from its tid (after the call returns, so that the thread stopped
 * for it is let go sooner), then looks at /proc/self/task every
 * ATTACH_POLL_MS for threads created later (a new thread's first
 * ATTACH_POLL_MS of CPU time at most go unsampled) and ended ones.
 *
 * Two FIFOs of collect-timer's (named in the settings): the library's
 * lines go to one instead of the program's standard error; when
 * collect-timer closes the other (it is done, or it died), the thread ends
 * the trace, deletes every timer, gives the signal its earlier action
 * back, closes both and ends.  The library stays loaded, dormant (no
 * thread, no timer, no handler), and a later attach starts it again.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "control-timer.h"
#include "helper.h"
#include "notice.h"
#include "preload-state.h"
#include "stacktab.h"
#include "threads.h"
#include "writer.h"

#define ATTACH_POLL_MS 10
/* how long the end waits for signals of ours still pending */
#define ATTACH_DRAIN_NS 1000000000ull

/* What profview_timer_attach returns (collect-timer says each). */
enum {
	ATTACH_OK = 0,
	ATTACH_BUSY = 1,       /* an attach is running (another collect-timer) */
	ATTACH_BAD = 2,        /* settings unreadable, or the pipes cannot be opened */
	ATTACH_FAILED = 3,     /* profiling could not start (said on the pipe) */
};

static int attach_in = -1, attach_out = -1;
static _Atomic int attach_busy;


/* Is the registry's entry of tid there?  Lock held. */
static int attach_known(pid_t tid)
{
	for (size_t i = 0; i < preload.nentries; i++)
		if (preload.entries[i].tid == tid)
			return 1;
	return 0;
}

/* Threads that ended: their timers deleted, their exit written with the
 * CPU time their last signal saw. */
static void attach_forget_gone(void)
{
	pthread_mutex_lock(&preload.registry_lock);
	for (size_t i = 0; i < preload.nentries; i++) {
		struct preload_entry *e = &preload.entries[i];
		struct timespec ts;
		int nf = atomic_load(&preload.nforeign);

		if (e->tid == 0 || clock_gettime(preload_thread_clock(e->tid), &ts) == 0)
			continue;
		threads_settle(e);
		engine_delete(&e->timer);
		/* (its handler cannot run: the thread is gone) */
		engine_unmap(e->timer.ring);
		e->timer.ring = NULL;
		if (e->seen != NULL && atomic_exchange(&e->seen->has_nudge, 0))
			timer_delete(e->seen->nudge);
		if (control_thread_close(e->seen))
			threads_write_exit(e->tid, e->seen,
					   e->seen != NULL ? atomic_load(&e->seen->cpu) : e->cpu_base);
		for (int f = 0; f < nf; f++)
			if (preload.foreign[f].tid == e->tid)
				preload.foreign[f].tid = 0;
		e->tid = 0;
	}
	pthread_mutex_unlock(&preload.registry_lock);
}

/* New threads of the program adopted; ended ones forgotten. */
static void attach_scan(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;

	attach_forget_gone();
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(de->d_name);
		int known;

		if (tid <= 0)
			continue;
		pthread_mutex_lock(&preload.registry_lock);
		known = attach_known(tid);
		pthread_mutex_unlock(&preload.registry_lock);
		if (!known && !threads_own(tid))
			threads_adopt(tid);
	}
	closedir(d);
}

/* Is the signal pending for the process or one of its threads? */
static int attach_pending(int sig)
{
	uint64_t bit = 1ull << (sig - 1);
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	char buf[4096];
	int pending = 0;

	if (d == NULL)
		return 0;
	while (!pending && (de = readdir(d)) != NULL) {
		pid_t tid = (pid_t)atoi(de->d_name);
		const char *p, *q;

		if (tid <= 0 || threads_read_task_file(tid, "status", buf, sizeof(buf)) <= 0)
			continue;
		p = strstr(buf, "\nSigPnd:\t");
		q = strstr(buf, "\nShdPnd:\t");
		pending = (p != NULL && (strtoull(p + 9, NULL, 16) & bit)) ||
			  (q != NULL && (strtoull(q + 9, NULL, 16) & bit));
	}
	closedir(d);
	return pending;
}

/* The signal's earlier action back, once no signal of ours is pending
 * (one delivered after would meet it: the default action of SIGPROF
 * ends the process).  Our handler stays, dormant, when one still is. */
static void attach_restore_signal(void)
{
	uint64_t until = preload_now() + ATTACH_DRAIN_NS;
	struct timespec step = { 0, 1000000 };

	while (attach_pending(preload.signo) && preload_now() < until)
		nanosleep(&step, NULL);
	if (attach_pending(preload.signo)) {
		preload_warn("a signal %d of the profiler is still pending in a thread that blocks "
			     "it: its handler stays, and does nothing", preload.signo);
		return;
	}
	preload.real_sigaction(preload.signo, &preload.prior_action, NULL);
	preload.hooked = 0;
}

/* The channel to collect-timer closed and the settings dropped: the
 * library is free for the next attach. */
static void attach_release(void)
{
	atomic_store(&notice_fd, STDERR_FILENO);
	preload_settings = NULL;
	close(attach_in);
	close(attach_out);
	attach_in = attach_out = -1;
	atomic_store(&attach_busy, 0);
}
/* The end: the trace finished, the timers deleted, the signal's action
 * back, our memory given back, the pipes closed (the last one tells
 * collect-timer it is done). */
static void attach_end(void)
{
	preload_end_attached();
	atomic_store(&preload.state, PRELOAD_STOPPED);
	attach_restore_signal();
	/* the perf events' rings: no handler is left to read them (the end
	 * waited for those running) */
	for (size_t i = 0; i < preload.nentries; i++) {
		/* (a moved thread's ring is gone already: its handler unmapped it) */
		threads_settle(&preload.entries[i]);
		engine_unmap(preload.entries[i].timer.ring);
		preload.entries[i].timer.ring = NULL;
	}
	if (preload.unwind != RAW_UNWIND_DWARF)
		stacktab_release();
	writer_forget();
	engine_forget();
	attach_release();
}

static void *attach_main(void *unused)
{
	(void)unused;
	/* here, so that the thread collect-timer stopped is let go sooner */
	preload_adopt_attached();
	for (;;) {
		struct pollfd p = { attach_in, POLLIN, 0 };
		int r = poll(&p, 1, ATTACH_POLL_MS);

		/* collect-timer closed its end, or wrote: either ends it */
		if (r > 0 || (r < 0 && errno != EINTR))
			break;
		attach_scan();
	}
	attach_end();
	return NULL;
}

/* What an earlier attach left, made new. */
static void attach_reset(void)
{
	preload.nentries = 0;
	atomic_store(&preload.nforeign, 0);
	preload.nranges = 0;
	preload_counters_reset();
	atomic_store(&preload.state, PRELOAD_OFF);
}

/* Called by collect-timer in a thread it stopped.  The thread's errno is
 * collect-timer's to keep. */
PRELOAD_EXPORT int profview_timer_attach(const char *settings)
{
	pthread_t thread;

	if (atomic_exchange(&attach_busy, 1))
		return ATTACH_BUSY;
	if (preload_settings_take(settings) != 0)
		goto bad;
	attach_out = preload_attach_fifo("PROFVIEW_ATTACH_OUT", O_WRONLY);
	attach_in = preload_attach_fifo("PROFVIEW_ATTACH_IN", O_RDONLY);
	if (attach_in < 0 || attach_out < 0)
		goto bad;
	atomic_store(&notice_fd, attach_out);
	if (atomic_fetch_add(&preload.attach_gen, 1) > 0)
		attach_reset();
	preload.attached = 1;
	if (preload_start_attached() != 0) {
		atomic_store(&notice_fd, STDERR_FILENO);
		goto failed;
	}
	if (threads_start_helper(&thread, attach_main, "profview-attach", 64 << 10, 1) != 0) {
		preload_warn("cannot start a thread");
		preload_end_attached();
		atomic_store(&preload.state, PRELOAD_STOPPED);
		attach_restore_signal();
		goto failed;
	}
	return ATTACH_OK;
failed:
	attach_release();
	return ATTACH_FAILED;
bad:
	preload_settings = NULL;
	if (attach_in >= 0)
		close(attach_in);
	if (attach_out >= 0)
		close(attach_out);
	attach_in = attach_out = -1;
	atomic_store(&attach_busy, 0);
	return ATTACH_BAD;
}
