/* engine.h - the timers that send each thread its sampling signal: POSIX
 * CPU timers or perf events (engine.c)
 *
 * Functions marked signal-safe may run in the sampling handler: they take
 * no lock, allocate nothing and never block.
 */
#ifndef PROFVIEW_TIMER_ENGINE_H
#define PROFVIEW_TIMER_ENGINE_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

enum engine_kind { ENGINE_POSIX = 0, ENGINE_PERF = 1 };
/* What engine_init may be asked for besides a kind: perf events where the
 * kernel allows them, else POSIX timers, without a word. */
#define ENGINE_AUTO 2

/* A thread's sampling timer: a perf event when fd >= 0, else a POSIX
 * timer. */
struct engine_timer {
	timer_t timer;
	int fd;
	uint64_t id;          /* PERF_EVENT_IOC_ID of the event */
	/* The event's ring buffer, where the kernel writes each overflow's
	 * mode and kernel call chain; NULL when it has none. */
	void *ring;
};

/* Chooses the engine: ENGINE_PERF when want is ENGINE_PERF or ENGINE_AUTO
 * and the calling thread may open a task-clock perf event, else
 * ENGINE_POSIX (with one line on stderr when ENGINE_PERF was wanted).
 * cookie is the sival_ptr of the POSIX timers.  Returns the engine in use.
 * The perf event it opened to find out is kept for the calling thread's
 * engine_create, until engine_drop_spare.  Not signal-safe. */
int engine_init(int want, uint64_t period_ns, void *cookie);
/* Closes the event engine_init kept if no engine_create took it.  Not
 * signal-safe. */
void engine_drop_spare(void);
/* The engine engine_init chose.  Signal-safe. */
int engine_kind(void);
/* May a thread move from its perf event to a POSIX timer (engine_move):
 * the engine was chosen by auto, and is perf.  Signal-safe. */
int engine_adaptive(void);
/* In the handler of thread tid's perf signal from event fd (stopped at its
 * overflow): turns t, the thread's copy of its timer, into a POSIX timer
 * on the thread's CPU clock, a signal every period from first_ns on, and
 * retires the event: never armed again (engine_signal_done,
 * engine_exec_quiet), its ring buffer unmapped and its fd closed (not
 * lost: engine_lost), but its number marked as ours until the registry's
 * copy of the timer is settled with engine_settle.  Returns 0, or -1 (t
 * unchanged, the event armed again as usual).  Signal-safe (system calls
 * only). */
int engine_move(pid_t tid, struct engine_timer *t, int fd, uint64_t first_ns);
/* The registry's copy r of a timer that engine_move moved to the POSIX
 * timer timer: its event's number unmarked, and r the POSIX timer, without
 * a ring buffer.  Not signal-safe. */
void engine_settle(struct engine_timer *r, timer_t timer);
/* Before an exec by this thread (undo 0): stops its perf event t and takes
 * back a signal of it still pending, which would outlive the exec (unlike
 * a POSIX timer's, the kernel does not flush it) and end the new image
 * before its profiler installs a handler.  After a failed exec (undo 1):
 * re-arms it.  Does nothing for a POSIX timer.  Not signal-safe. */
void engine_exec_quiet(const struct engine_timer *t, int undo);
/* Is t a perf event whose descriptor is no longer ours (the program closed
 * it, and may have reused the number)?  Its thread then gets no signals from
 * it.  Signal-safe. */
int engine_lost(const struct engine_timer *t);
/* Is fd the number of one of our perf events (as far as we know: the
 * program may have closed it since)?  A few comparisons.  Signal-safe. */
int engine_owns_fd(int fd);
/* For such a t of thread tid: a new perf event for the thread in its
 * place, armed unless sampling is paused.  Returns 0, or -1 when none
 * could be opened (t is then unchanged: still lost, every call on it does
 * nothing).  Not signal-safe. */
int engine_replace(pid_t tid, struct engine_timer *t);
/* Creates a disarmed timer for thread tid of this process; clock is its
 * CPU clock, for the POSIX engine (also used when a perf event cannot be
 * opened for that thread).  A perf event's first period is first_ns (a
 * random part of one period).  Returns 0 or -1.  Not signal-safe. */
int engine_create(clockid_t clock, pid_t tid, uint64_t first_ns, struct engine_timer *t);
/* Arms it: a perf event for its first period, then every period; a POSIX
 * timer in tick mode, for a young thread (a signal at every tick that
 * finds the thread running).  Signal-safe. */
void engine_arm(struct engine_timer *t);
/* Turns a POSIX timer from tick mode to a signal every period of CPU
 * time, the first after first_ns (nothing for a perf event).
 * Signal-safe. */
void engine_mature(struct engine_timer *t, uint64_t first_ns);
/* Stops and frees it (an fd the program closed is left alone).  Its ring
 * buffer stays mapped: a handler may still read it.  Not signal-safe. */
void engine_delete(struct engine_timer *t);
/* Unmaps a deleted timer's ring buffer (NULL: nothing), once no handler
 * can read it: its own thread, with our signal blocked, after its last
 * sample.  Not signal-safe. */
void engine_unmap(void *ring);
/* Stops it without freeing it (sampling is paused), and arms it again, in
 * tick mode for a young thread, else from a random phase (first_ns) of a
 * period.  An fd the program closed is left alone.  Not signal-safe. */
void engine_disarm(struct engine_timer *t);
void engine_rearm(struct engine_timer *t, int young, uint64_t first_ns);
/* Closes every perf event fd without touching the events' owners (the
 * child of a fork).  Not signal-safe. */
void engine_forget(void);
/* Asks thread tid of process pid (ours) for a sample now: our signal,
 * queued with the request cookie.  Returns 0 or -1.  Signal-safe. */
int engine_request(pid_t pid, pid_t tid);
/* A one-shot POSIX timer on CLOCK_MONOTONIC that sends thread tid our
 * signal with the nudge cookie: a sample asked for at a set moment
 * (sweep.c).  Returns 0 or -1.  Not signal-safe. */
int engine_nudge_create(pid_t tid, timer_t *timer);
/* Sets it to fire once, delay_ns from now.  Signal-safe. */
void engine_nudge(timer_t timer, uint64_t delay_ns);
/* In the handler, of one of our signals: did a nudge timer send it?
 * Signal-safe. */
int engine_is_nudge(const siginfo_t *si);
/* How the samples' system time is measured (enum raw_system_source):
 * RAW_SYSTEM_PERF when the perf events count system time and tell each
 * sample's mode, else RAW_SYSTEM_RUSAGE.  Signal-safe. */
int engine_system_source(void);
/* In the handler of a perf signal of timer t: the sample the event's
 * overflow wrote.  Returns 1 when it was taken in the kernel (its kernel
 * call chain, leaf first, in frames[0..*n), at most cap), 0 in user mode,
 * -1 when there is no record (no ring buffer, or none since the last
 * call).  Consumes what the ring holds.  Signal-safe. */
int engine_perf_sample(const struct engine_timer *t, uint64_t *frames, uint32_t cap, uint32_t *n);
/* In the handler of a perf signal, of an event that may not count system
 * time (exclude_kernel, where perf_event_paranoid keeps the process from
 * it): into *missed, how many overflows since the event was last armed
 * the kernel dropped because they found the thread in the kernel (the
 * event still counts the thread's time there, and its overflows go on at
 * every period), and into *period_ns the period it was armed with.
 * Returns 0, or -1 when not known: an event that counts system time, one
 * not armed by a handler yet, a number no longer our event's.
 * Signal-safe (two system calls). */
int engine_perf_missed(const siginfo_t *si, uint64_t *missed, uint64_t *period_ns);
/* In the handler: is this signal one of ours?  Returns 0 if not, else
 * the engine + 1.  Signal-safe. */
int engine_signal(const siginfo_t *si);
/* At the end of the handler of a perf signal: re-arms its event (also
 * while sampling is paused), for a period drawn from half a period to one
 * and a half, so that the overflows do not lock to a phase of the
 * scheduler's tick.  Only then, so that the handler's own CPU time is
 * in no period of the event: an overflow in the handler's own system
 * calls would be a kernel sample of the collector's work, charged to
 * the program (a perf record of the same task makes those calls slow).
 * Signal-safe. */
void engine_signal_done(const siginfo_t *si);

#endif
