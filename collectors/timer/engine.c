/* engine.c - what sends each thread its sampling signal
 *
 * Two engines, both delivering SIGPROF to the thread whose CPU time ran
 * out, every period of that thread's CPU time:
 *
 * posix  a POSIX timer on the thread's CPU clock (SIGEV_THREAD_ID).  The
 *        kernel checks CPU timers on the scheduler tick, and only for the
 *        thread running then, so a thread gets at most CONFIG_HZ signals a
 *        second (the rest become overruns), and a thread that ends within
 *        a few ticks mostly ends before its timer is ever checked after it
 *        expired.  So a young thread's timer starts in tick mode: it
 *        expires every microsecond of CPU time, and fires at every tick
 *        that finds the thread running, which is a sample of the thread at
 *        a rate in proportion to the CPU time it uses, whatever its life.
 *        Once the thread is no longer young (preload.short_ns of CPU
 *        time), the handler turns it to one expiry a period, from a random
 *        phase (engine_mature).
 *
 * perf   a perf_event_open task-clock software event of the thread,
 *        overflowing every period (task-clock counts nanoseconds; each
 *        period after the first drawn from half a period to one and a
 *        half, so that the overflows do not lock to the scheduler's tick:
 *        engine_signal_done); user
 *        and system time where allowed, else user time only (an overflow
 *        that falls in the kernel is then skipped).  The event's fd is set to O_ASYNC with F_SETSIG
 *        SIGPROF and F_SETOWN_EX to the thread, and armed with
 *        PERF_EVENT_IOC_REFRESH 1: at each overflow the kernel disables it
 *        and sends the signal (si_code POLL_HUP, si_fd the event), and the
 *        handler re-arms it as it ends (so that its own CPU time is in no
 *        period of the event).  The overflow is checked on the high-resolution
 *        timer that drives task-clock, not on the tick.  The first period
 *        is a random part of one, so that a thread that lives less than a
 *        period still gets a sample with the right probability.
 *        Where system time is counted, each event also has a small ring
 *        buffer (one record an overflow: its mode, from the sample's
 *        program counter, and its kernel call chain, the user part
 *        excluded), which the handler reads and empties: a sample is
 *        then all system time, with its kernel frames, or all user time.
 *        Elsewhere the handler splits each sample's weight with
 *        getrusage, as with posix timers (sample.c).
 *
 * By default (auto) the engine is perf wherever the kernel lets a process
 * open task-clock events on its own threads (perf_event_paranoid <= 2, or
 * privileges), without a word when it does not: a POSIX timer fires only
 * at a tick that finds its thread running, so under load a sample can
 * stand for many periods, where a perf event's stands for one.  But a
 * sampling software event is a high-resolution timer that the scheduler
 * stops at every switch out of its thread and starts at every switch in
 * (some microseconds a switch where reprogramming a timer traps to a
 * hypervisor), which a thread that blocks and wakes thousands of times a
 * second pays in tens of percent; a POSIX CPU timer costs nothing at a
 * switch.  So in auto the handler moves a thread that switches often
 * (sample.c decides) to a POSIX timer on its CPU clock for the rest of its
 * life (engine_move): made and armed there with system calls alone, its
 * perf event retired (never armed again), unmapped and closed there, and
 * the registry's copy of the timer settled at its next look at the thread
 * (threads_settle).
 *
 * Our perf event fds are moved to the numbers just above FD_SETSIZE, or
 * to the top of those RLIMIT_NOFILE allows when it is lower (at most
 * ENGINE_FD_RESERVE of them; threads beyond get POSIX timers), so that
 * the program's own descriptors get the numbers they would without us
 * (below FD_SETSIZE at least) and a fork copies a small table.  A program that closes one anyway (a daemon closing
 * every descriptor as it starts) stops that thread's signals until the
 * sweeper (sweep.c) sees it and opens a new one (engine_replace), whose
 * samples are split with getrusage; while it cannot, the sweeper samples
 * the thread as one a POSIX timer misses.
 *
 * The handler tells our signals from others: SI_TIMER with our cookie as
 * sival_ptr (posix), or POLL_IN/POLL_HUP with an si_fd marked in a lock-free
 * table of our events' ids (perf), or SI_QUEUE from our own process with the
 * request cookie (a sample the sweeper asks for, sweep.c).  While sampling
 * is paused (control-timer.c) the timers stay armed, so that each
 * thread's handler sees the resume.  A program that closes one of our fds
 * (closefrom) ends that thread's sampling; engine_stop checks with
 * PERF_EVENT_IOC_ID that the fd is still our event before closing it.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "preload-state.h"
#include "preload.h"
#include "raw.h"
#include "sigs.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif
#ifndef PERF_FLAG_FD_CLOEXEC
#define PERF_FLAG_FD_CLOEXEC (1UL << 3)
#endif

#define ENGINE_MAX_FD 65536
/* At most this many perf event fds, above FD_SETSIZE or at the top of
 * the fd numbers (see engine_fd_floor); threads beyond them get POSIX timers. */
#define ENGINE_FD_RESERVE 256
/* A young thread's POSIX timer: expires every microsecond of CPU time,
 * so it fires at every tick that finds the thread running. */
#define ENGINE_TICK_MODE_NS 1000
/* A perf event's ring buffer: the control page and two data pages (the
 * handler empties it at every overflow; one sample with the longest
 * kernel call chain the kernel writes, 127 frames, is about 1 KiB). */
#define ENGINE_PAGE 4096
#define ENGINE_RING_DATA (2 * ENGINE_PAGE)
#define ENGINE_RING_SIZE (ENGINE_PAGE + ENGINE_RING_DATA)

static struct {
	int kind;                 /* enum engine_kind in use */
	uint64_t period_ns;
	int user_only;            /* exclude_kernel: system time not counted */
	int chains;               /* each event has a ring buffer (see above) */
	void *cookie;             /* sival_ptr of the posix timers */
	char request;             /* its address: sival_ptr of a requested sample */
	char nudge;               /* its address: sival_ptr of the nudge timers */
	int fd_floor;             /* our perf event fds are at least this */
	/* Our perf events: the PERF_EVENT_IOC_ID of fd fd_floor + i in
	 * ids[i], 0 for none.  Read lock-free by the handler. */
	_Atomic uint64_t ids[ENGINE_FD_RESERVE];
	/* Of event fd_floor + i, as its handler last armed it again: its
	 * count (the thread's CPU time it counted) and the period it set;
	 * a count of 0 when not yet.  Only that thread's handler reads or
	 * writes them, but for engine_mark, which sets the period the event
	 * was opened with (its count is 0 until it is first armed) and
	 * known: the count and period hold from the event's start, for the
	 * overflows dropped before its first sample (engine_perf_missed). */
	struct {
		uint64_t count, period;
		int known;
		/* engine_move made a POSIX timer in its place: never armed
		 * again */
		int retired;
	} armed[ENGINE_FD_RESERVE];
	int adaptive;             /* auto: a thread may move (engine_move) */
	/* The event engine_init opened to see what the kernel allows, kept
	 * (with its ring buffer, mapped) for the first engine_create of the
	 * same thread: -1 when there is none. */
	struct {
		int fd;
		pid_t tid;
		uint64_t id;
		void *ring;
	} spare;
} engine = { .spare = { .fd = -1 } };

/* Marks fd as our event id, a new event not yet enabled whose period is
 * period (0: not known). */
static void engine_mark(int fd, uint64_t id, uint64_t period)
{
	if (fd >= engine.fd_floor && fd - engine.fd_floor < ENGINE_FD_RESERVE) {
		engine.armed[fd - engine.fd_floor].count = 0;
		engine.armed[fd - engine.fd_floor].period = period;
		engine.armed[fd - engine.fd_floor].known = period != 0;
		engine.armed[fd - engine.fd_floor].retired = 0;
		atomic_store(&engine.ids[fd - engine.fd_floor], id);
	}
}

/* fd is no longer our event id (if it is marked as another event of ours,
 * that one reused the number: it stays). */
static void engine_unmark(int fd, uint64_t id)
{
	if (fd >= engine.fd_floor && fd - engine.fd_floor < ENGINE_FD_RESERVE)
		atomic_compare_exchange_strong(&engine.ids[fd - engine.fd_floor], &id, 0);
}

static int engine_marked(int fd)
{
	return fd >= engine.fd_floor && fd - engine.fd_floor < ENGINE_FD_RESERVE &&
	       atomic_load_explicit(&engine.ids[fd - engine.fd_floor], memory_order_relaxed) != 0;
}

/* Has engine_move put a POSIX timer in the place of our event fd? */
static int engine_retired(int fd)
{
	return engine_marked(fd) &&
	       __atomic_load_n(&engine.armed[fd - engine.fd_floor].retired, __ATOMIC_ACQUIRE);
}

int engine_owns_fd(int fd)
{
	return engine_marked(fd);
}

/* The engine's POSIX timers are the kernel's ids, made and set with the
 * system calls themselves: engine_move makes one in a signal handler,
 * where the C library's timer_create is not listed as async-signal-safe,
 * and so every one is made the same way. */
static int engine_timer_create(clockid_t clock, pid_t tid, timer_t *timer)
{
	struct sigevent sev;
	int id = -1;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = preload_signal();
	sev.sigev_value.sival_ptr = engine.cookie;
	sev.sigev_notify_thread_id = tid;
	if (syscall(SYS_timer_create, (long)clock, &sev, &id) != 0)
		return -1;
	*timer = (timer_t)(intptr_t)id;
	return 0;
}

static void engine_timer_set(timer_t timer, const struct itimerspec *its)
{
	syscall(SYS_timer_settime, (long)(intptr_t)timer, 0L, its, NULL);
}

/* The period an event opened for a first period of first_ns starts with. */
static uint64_t engine_first_period(uint64_t first_ns)
{
	return first_ns > 0 && first_ns <= engine.period_ns ? first_ns : engine.period_ns;
}

/* Opens a disabled task-clock event of thread tid that signals that
 * thread, first after first_ns, with a kernel call chain in each overflow's
 * record when chains is set.  Returns the fd, or -1 with errno set. */
static int engine_perf_open(pid_t tid, uint64_t first_ns, int chains, uint64_t *id)
{
	struct perf_event_attr attr;
	struct f_owner_ex owner = { F_OWNER_TID, tid };
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.sample_period = engine_first_period(first_ns);
	attr.disabled = 1;
	attr.exclude_kernel = (uint64_t)engine.user_only;
	attr.exclude_hv = 1;
	if (chains) {
		attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
		attr.exclude_callchain_user = 1;
	}
	fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fd < engine.fd_floor) {
		int high = fcntl(fd, F_DUPFD_CLOEXEC, engine.fd_floor);

		close(fd);
		if (high < 0) {
			errno = EMFILE;
			return -1;
		}
		fd = high;
	}
	if (fd - engine.fd_floor >= ENGINE_FD_RESERVE) {
		close(fd);
		errno = EMFILE;
		return -1;
	}
	/* (a new event's descriptor has no status flag of its own to keep:
	 * O_ASYNC is set without reading them first) */
	if (fcntl(fd, F_SETSIG, preload_signal()) != 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0 ||
	    fcntl(fd, F_SETFL, O_ASYNC) != 0 ||
	    ioctl(fd, PERF_EVENT_IOC_ID, id) != 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* An event that counts system time: does its ring buffer map?  Else the
 * events go without one (the getrusage split).  Closes fd; returns an fd
 * of the engine's events, or -1, and its ring buffer (mapped) in *ring
 * when it has one, else NULL. */
static int engine_check_chains(int fd, uint64_t period_ns, uint64_t *id, void **ring)
{
	*ring = NULL;
	if (fd < 0 || !engine.chains)
		return fd;
	*ring = mmap(NULL, ENGINE_RING_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*ring != MAP_FAILED)
		return fd;
	*ring = NULL;
	close(fd);
	engine.chains = 0;
	return engine_perf_open((pid_t)syscall(SYS_gettid), period_ns, engine.chains, id);
}

void engine_drop_spare(void)
{
	if (engine.spare.fd < 0)
		return;
	if (engine.spare.ring != NULL)
		munmap(engine.spare.ring, ENGINE_RING_SIZE);
	close(engine.spare.fd);
	engine.spare.fd = -1;
	engine.spare.ring = NULL;
}

/* The probe's event as thread tid's timer, its first period first_ns:
 * one ioctl instead of an open, its settings and a mapping.  Returns 0,
 * or -1 when it is not tid's (or its period cannot be set: then it is
 * closed). */
static int engine_take_spare(pid_t tid, uint64_t first_ns, struct engine_timer *t)
{
	uint64_t period = engine_first_period(first_ns);

	if (engine.spare.fd < 0 || engine.spare.tid != tid)
		return -1;
	if (period != engine.period_ns && ioctl(engine.spare.fd, PERF_EVENT_IOC_PERIOD, &period) != 0) {
		engine_drop_spare();
		return -1;
	}
	t->fd = engine.spare.fd;
	t->id = engine.spare.id;
	t->ring = engine.spare.ring;
	engine.spare.fd = -1;
	engine.spare.ring = NULL;
	engine_mark(t->fd, t->id, period);
	return 0;
}

int engine_kind(void)
{
	return engine.kind;
}

int engine_adaptive(void)
{
	return engine.adaptive && engine.kind == ENGINE_PERF;
}

int engine_move(pid_t tid, struct engine_timer *t, int fd, uint64_t first_ns)
{
	timer_t timer;

	if (t->fd < 0 || t->fd != fd || !engine_marked(fd) || engine_retired(fd) ||
	    engine_timer_create(preload_thread_clock(tid), tid, &timer) != 0)
		return -1;
	/* (the event stopped at its overflow, and is not armed again) */
	__atomic_store_n(&engine.armed[fd - engine.fd_floor].retired, 1, __ATOMIC_RELEASE);
	t->fd = -1;
	t->timer = timer;
	engine_mature(t, first_ns);
	/* The event freed now rather than at the registry's next look (in a
	 * process of one thread, its end): while it is open, or its ring
	 * mapped, the scheduler goes on looking at the thread's perf context
	 * at every switch.  Only this thread's handler reads the ring, and
	 * no signal of the event comes again. */
	if (t->ring != NULL)
		syscall(SYS_munmap, t->ring, (size_t)ENGINE_RING_SIZE);
	t->ring = NULL;
	/* (not the close the program calls, ours among them) */
	syscall(SYS_close, fd);
	return 0;
}

int engine_system_source(void)
{
	return engine.kind == ENGINE_PERF && engine.chains ? RAW_SYSTEM_PERF : RAW_SYSTEM_RUSAGE;
}

/* The lowest fd of our perf events.  Just above FD_SETSIZE when the limit
 * leaves room for ENGINE_FD_RESERVE there: the numbers select() can take
 * stay the program's, and its descriptor table stays small, since the
 * kernel copies it up to its highest number at every fork and vfork and
 * walks it at every exec (numbers near a limit of 20,000 cost a compiler
 * driver's vfork 160 KB of copying each).  Else the top
 * ENGINE_FD_RESERVE (at most a quarter) of the numbers RLIMIT_NOFILE
 * allows, so that a program that uses nearly all it may runs out no sooner
 * than by that many. */
static int engine_fd_floor(void)
{
	struct rlimit rl;
	uint64_t lim = ENGINE_MAX_FD, reserve;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < lim)
		lim = rl.rlim_cur;
	if (lim >= (uint64_t)FD_SETSIZE + ENGINE_FD_RESERVE)
		return FD_SETSIZE;
	reserve = lim / 4 < ENGINE_FD_RESERVE ? lim / 4 : ENGINE_FD_RESERVE;
	return (int)(lim - reserve);
}

int engine_init(int want, uint64_t period_ns, void *cookie)
{
	engine.kind = ENGINE_POSIX;
	engine.period_ns = period_ns;
	engine.cookie = cookie;
	engine.fd_floor = engine_fd_floor();
	engine.adaptive = want == ENGINE_AUTO;
	engine_drop_spare();
	if (want == ENGINE_PERF || want == ENGINE_AUTO) {
		pid_t tid = (pid_t)syscall(SYS_gettid);
		uint64_t id;
		void *ring;
		int fd;

		/* Counting system time too, as CPU timers do, needs
		 * perf_event_paranoid <= 1 or CAP_PERFMON; without it an
		 * overflow in the kernel is skipped and the time goes to the
		 * next sample's weight.  The probe is opened as every
		 * thread's event is, with kernel call chains where they are
		 * allowed: it becomes the starting thread's timer. */
		engine.user_only = 0;
		engine.chains = 1;
		fd = engine_perf_open(tid, period_ns, engine.chains, &id);
		if (fd < 0 && (errno == EACCES || errno == EPERM)) {
			engine.user_only = 1;
			engine.chains = 0;
			fd = engine_perf_open(tid, period_ns, engine.chains, &id);
		}
		fd = engine_check_chains(fd, period_ns, &id, &ring);

		if (fd >= 0) {
			engine.spare.fd = fd;
			engine.spare.tid = tid;
			engine.spare.id = id;
			engine.spare.ring = ring;
			engine.kind = ENGINE_PERF;
			if (engine.user_only && want == ENGINE_PERF)
				preload_warn("perf events may not count system time here (see "
					     "/proc/sys/kernel/perf_event_paranoid): kernel time is "
					     "the periods whose overflows the kernel drops in it, "
					     "without kernel frames");
		} else if (want == ENGINE_PERF) {
			preload_warn("perf events are not permitted here (%s; see "
				     "/proc/sys/kernel/perf_event_paranoid): using POSIX CPU "
				     "timers, at most one signal per scheduler tick", strerror(errno));
		}
	}
	return engine.kind;
}

int engine_create(clockid_t clock, pid_t tid, uint64_t first_ns, struct engine_timer *t)
{
	t->fd = -1;
	t->id = 0;
	t->ring = NULL;
	if (engine.kind == ENGINE_PERF) {
		if (engine_take_spare(tid, first_ns, t) == 0)
			return 0;
		t->fd = engine_perf_open(tid, first_ns, engine.chains, &t->id);
		if (t->fd >= 0) {
			if (engine.chains) {
				void *ring = mmap(NULL, ENGINE_RING_SIZE, PROT_READ | PROT_WRITE,
						  MAP_SHARED, t->fd, 0);

				/* without it: the getrusage split */
				t->ring = ring != MAP_FAILED ? ring : NULL;
			}
			engine_mark(t->fd, t->id, engine_first_period(first_ns));
			return 0;
		}
		/* no more fds, or refused for this thread: a POSIX timer */
	}
	return engine_timer_create(clock, tid, &t->timer);
}

void engine_arm(struct engine_timer *t)
{
	struct itimerspec its;

	if (t->fd >= 0) {
		ioctl(t->fd, PERF_EVENT_IOC_REFRESH, 1);
		return;
	}
	its.it_value.tv_sec = its.it_interval.tv_sec = 0;
	its.it_value.tv_nsec = its.it_interval.tv_nsec = ENGINE_TICK_MODE_NS;
	engine_timer_set(t->timer, &its);
}

void engine_mature(struct engine_timer *t, uint64_t first_ns)
{
	struct itimerspec its;

	if (t->fd >= 0)
		return;
	its.it_value.tv_sec = (time_t)(first_ns / 1000000000ull);
	its.it_value.tv_nsec = (long)(first_ns % 1000000000ull);
	its.it_interval.tv_sec = (time_t)(engine.period_ns / 1000000000ull);
	its.it_interval.tv_nsec = (long)(engine.period_ns % 1000000000ull);
	engine_timer_set(t->timer, &its);
}

void engine_delete(struct engine_timer *t)
{
	uint64_t id = 0;

	if (t->fd < 0) {
		syscall(SYS_timer_delete, (long)(intptr_t)t->timer);
		return;
	}
	engine_unmark(t->fd, t->id);
	/* The program may have closed it and reused the number. */
	if (ioctl(t->fd, PERF_EVENT_IOC_ID, &id) == 0 && id == t->id) {
		ioctl(t->fd, PERF_EVENT_IOC_DISABLE, 0);
		close(t->fd);
	}
	t->fd = -1;
}

void engine_settle(struct engine_timer *r, timer_t timer)
{
	if (r->fd < 0)
		return;
	/* (its handler closed it and unmapped its ring: only unmarked) */
	engine_delete(r);
	r->timer = timer;
	r->ring = NULL;
}

void engine_unmap(void *ring)
{
	if (ring != NULL)
		munmap(ring, ENGINE_RING_SIZE);
}

/* Is fd still our event t (the program may have closed it and reused
 * the number)? */
static int engine_still_ours(const struct engine_timer *t)
{
	uint64_t id = 0;

	return ioctl(t->fd, PERF_EVENT_IOC_ID, &id) == 0 && id == t->id;
}

void engine_exec_quiet(const struct engine_timer *t, int undo)
{
	static const struct timespec now = { 0, 0 };
	int signo = preload_signal();
	sigset_t set, old;
	siginfo_t si;

	if (t == NULL || t->fd < 0 || !engine_marked(t->fd) || engine_retired(t->fd))
		return;
	if (undo) {
		if (engine_still_ours(t))
			ioctl(t->fd, PERF_EVENT_IOC_REFRESH, 1);
		return;
	}
	sigemptyset(&set);
	sigaddset(&set, signo);
	if (pthread_sigmask(SIG_BLOCK, &set, &old) != 0)
		return;
	if (engine_still_ours(t))
		ioctl(t->fd, PERF_EVENT_IOC_DISABLE, 0);
	/* a signal not of our events goes back to be delivered as it was */
	while (sigtimedwait(&set, &si, &now) == signo) {
		if ((si.si_code == POLL_HUP || si.si_code == POLL_IN) && engine_marked(si.si_fd))
			continue;
		syscall(SYS_rt_tgsigqueueinfo, (long)getpid(), (long)syscall(SYS_gettid), (long)signo, &si);
		break;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int engine_lost(const struct engine_timer *t)
{
	/* (closed by its own handler, engine_move, which marked it retired
	 * first: not lost, but moved, and settled at the next look) */
	return t->fd >= 0 && !engine_still_ours(t) && !engine_retired(t->fd);
}

int engine_replace(pid_t tid, struct engine_timer *t)
{
	uint64_t id;
	int fd;

	engine_unmark(t->fd, t->id);
	/* No ring buffer: the handler reads the one its copy of t names (the
	 * old event's, mapped until the thread ends), so the new event's
	 * samples are split with getrusage. */
	fd = engine_perf_open(tid, 0, 0, &id);
	if (fd < 0)
		return -1;
	t->fd = fd;
	t->id = id;
	engine_mark(fd, id, engine.period_ns);
	ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
	return 0;
}

void engine_disarm(struct engine_timer *t)
{
	struct itimerspec its;

	if (t->fd >= 0) {
		if (engine_still_ours(t))
			ioctl(t->fd, PERF_EVENT_IOC_DISABLE, 0);
		return;
	}
	memset(&its, 0, sizeof(its));
	engine_timer_set(t->timer, &its);
}

void engine_rearm(struct engine_timer *t, int young, uint64_t first_ns)
{
	if (t->fd >= 0) {
		if (engine_still_ours(t))
			ioctl(t->fd, PERF_EVENT_IOC_REFRESH, 1);
	} else if (young) {
		engine_arm(t);
	} else {
		engine_mature(t, first_ns);
	}
}

void engine_forget(void)
{
	engine_drop_spare();
	/* only the descriptors still ours: the program may have closed one
	 * and reused the number for a file of its own */
	for (int i = 0; i < ENGINE_FD_RESERVE; i++) {
		uint64_t want = atomic_exchange(&engine.ids[i], 0), id = 0;
		int fd = engine.fd_floor + i;

		if (want != 0 && ioctl(fd, PERF_EVENT_IOC_ID, &id) == 0 && id == want)
			close(fd);
	}
}

int engine_request(pid_t pid, pid_t tid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	si.si_signo = preload_signal();
	si.si_code = SI_QUEUE;
	si.si_pid = pid;
	si.si_uid = getuid();
	si.si_value.sival_ptr = &engine.request;
	return (int)syscall(SYS_rt_tgsigqueueinfo, (long)pid, (long)tid, (long)si.si_signo, &si);
}

int engine_nudge_create(pid_t tid, timer_t *timer)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = preload_signal();
	sev.sigev_value.sival_ptr = &engine.nudge;
	sev.sigev_notify_thread_id = tid;
	return timer_create(CLOCK_MONOTONIC, &sev, timer);
}

void engine_nudge(timer_t timer, uint64_t delay_ns)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(delay_ns / 1000000000ull);
	its.it_value.tv_nsec = (long)(delay_ns % 1000000000ull);
	if (delay_ns == 0)
		its.it_value.tv_nsec = 1;
	timer_settime(timer, 0, &its, NULL);
}

int engine_is_nudge(const siginfo_t *si)
{
	return si->si_code == SI_TIMER && si->si_value.sival_ptr == &engine.nudge;
}

int engine_signal(const siginfo_t *si)
{
	if (si->si_code == SI_TIMER)
		return si->si_value.sival_ptr == engine.cookie || si->si_value.sival_ptr == &engine.nudge
			       ? ENGINE_POSIX + 1
			       : 0;
	if (si->si_code == SI_QUEUE && si->si_value.sival_ptr == &engine.request && si->si_pid == getpid())
		return ENGINE_POSIX + 1;
	if ((si->si_code == POLL_HUP || si->si_code == POLL_IN) && engine_marked(si->si_fd))
		return ENGINE_PERF + 1;
	return 0;
}

/* The count of our event fd into *count, its slot into *i: 0, or -1 when
 * the number is no longer our event's.  (The number may be the program's
 * own file now, if it closed our event, which its ring's mapping keeps
 * alive and signalling: a read would take the program's data.)
 * Signal-safe. */
static int engine_read_count(int fd, int *i, uint64_t *count)
{
	uint64_t id = 0;

	*i = fd - engine.fd_floor;
	if (*i < 0 || *i >= ENGINE_FD_RESERVE || ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0 ||
	    id != atomic_load_explicit(&engine.ids[*i], memory_order_relaxed) ||
	    read(fd, count, sizeof(*count)) != (ssize_t)sizeof(*count))
		return -1;
	return 0;
}

/* The next period of our event fd, whose handler ends: drawn uniformly
 * from half a period to one and a half.  A fixed period equal to the
 * scheduler's tick (the default 250 Hz is CONFIG_HZ here) locks each
 * overflow to one phase of the thread's time slices when it shares its
 * CPU, where a slice is one tick, and that phase may be the kernel's entry
 * or return around the tick (a thread computing beside two busy ones had
 * 9% of its samples there, with no system time).  A period set on the
 * stopped event starts whole as the event is armed again, where the
 * kernel would have gone on with the period it started at the overflow:
 * the time the event counted from its overflow to its stop (some 30 us,
 * the kernel's deferred work that stops it and sends the signal) is taken
 * from the new one, as its count since the last arming tells it, so that
 * the samples keep their rate. */
static uint64_t engine_next_period(int fd)
{
	uint64_t period = engine.period_ns / 2 + preload_random(engine.period_ns), count = 0;
	int i;

	if (engine_read_count(fd, &i, &count) != 0)
		return period;
	if (engine.armed[i].count != 0 && count > engine.armed[i].count + engine.armed[i].period) {
		uint64_t late = count - engine.armed[i].count - engine.armed[i].period;

		/* counting user time only, the overflows the kernel dropped
		 * are whole periods before the one that signalled
		 * (engine_perf_missed) */
		if (engine.user_only)
			late %= engine.armed[i].period;
		period = late < period / 2 ? period - late : period / 2;
	}
	engine.armed[i].count = count;
	engine.armed[i].period = period;
	engine.armed[i].known = 1;
	return period;
}

int engine_perf_missed(const siginfo_t *si, uint64_t *missed, uint64_t *period_ns)
{
	uint64_t count, since, periods;
	int i;

	if (!engine.user_only || engine_read_count(si->si_fd, &i, &count) != 0 ||
	    !engine.armed[i].known || engine.armed[i].period == 0 ||
	    count < engine.armed[i].count)
		return -1;
	/* the kernel tried at every period of the count since the arming;
	 * the one that signalled is the last (the event stops at it: what
	 * it counted since, the way to the handler, is far less than a
	 * period).  The periods in it are rounded, not cut: under contention
	 * for the CPU a signal now and then comes short of the multiple of
	 * the period its count should be (one in some hundreds beside two
	 * busy threads), and cut, a dropped period would be taken for user
	 * time; rounded, the user part is at most one and a half periods. */
	since = count - engine.armed[i].count;
	*period_ns = engine.armed[i].period;
	periods = (since + *period_ns / 2) / *period_ns;
	*missed = periods > 1 ? periods - 1 : 0;
	return 0;
}

void engine_signal_done(const siginfo_t *si)
{
	uint64_t period;

	/* moved to a POSIX timer (engine_move), or no longer ours */
	if (!engine_marked(si->si_fd) || engine_retired(si->si_fd))
		return;
	period = engine_next_period(si->si_fd);

	ioctl(si->si_fd, PERF_EVENT_IOC_PERIOD, &period);
	/* on while paused too: the handler sees the resume (control-timer.c) */
	ioctl(si->si_fd, PERF_EVENT_IOC_REFRESH, 1);
}

/* Copies n bytes at position pos of the ring's data area (which wraps). */
static void engine_ring_copy(void *dst, const unsigned char *data, uint64_t pos, size_t n)
{
	size_t at = (size_t)(pos % ENGINE_RING_DATA), first = ENGINE_RING_DATA - at;

	if (first >= n) {
		memcpy(dst, data + at, n);
	} else {
		memcpy(dst, data + at, first);
		memcpy((unsigned char *)dst + first, data, n - first);
	}
}

int engine_perf_sample(const struct engine_timer *t, uint64_t *frames, uint32_t cap, uint32_t *n)
{
	struct perf_event_mmap_page *pg = t->ring;
	const unsigned char *data = (const unsigned char *)t->ring + ENGINE_PAGE;
	uint64_t head, tail;
	int mode = -1;

	*n = 0;
	if (pg == NULL)
		return -1;
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	tail = pg->data_tail;
	while (head - tail >= sizeof(struct perf_event_header)) {
		struct perf_event_header h;
		uint64_t ip, nr;

		engine_ring_copy(&h, data, tail, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail)
			break;
		/* a sample: header, ip, nr, nr addresses */
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 16) {
			engine_ring_copy(&ip, data, tail + sizeof(h), 8);
			engine_ring_copy(&nr, data, tail + sizeof(h) + 8, 8);
			mode = (h.misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
			*n = 0;
			for (uint64_t i = 0; mode && i < nr && sizeof(h) + 16 + 8 * (i + 1) <= h.size; i++) {
				uint64_t a;

				engine_ring_copy(&a, data, tail + sizeof(h) + 16 + 8 * i, 8);
				/* the chain's context markers (PERF_CONTEXT_KERNEL...) */
				if (a >= (uint64_t)PERF_CONTEXT_MAX)
					continue;
				if (*n < cap)
					frames[(*n)++] = a;
			}
			if (mode && *n == 0 && cap > 0)
				frames[(*n)++] = ip;
		}
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
	return mode;
}
