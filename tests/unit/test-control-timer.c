/* test-control-timer.c - what a pause and a resume do in
 * libprofview-timer.so (collectors/timer/control-timer.c), with the
 * library's threads, timers and records stood in for here: the
 * generation count odd while paused; at a pause each registered thread's
 * timer disarmed and an exit record written, a thread renamed since
 * written under its new name first; at a resume a thread record each
 * with its CPU clock, which its handler takes as its previous sample, and
 * the timers armed again; nothing when nothing changes or the process is
 * not being profiled; a handler that never ends does not hold the pause. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "control-timer.h"
#include "host.h"
#include "engine.h"
#include "preload-state.h"
#include "sample.h"
#include "sweep.h"
#include "threads.h"

struct preload_global preload;
__thread struct preload_tls preload_tls __attribute__((tls_model("initial-exec")));

/* ---- the library, as far as control-timer.c calls it ---- */

#define CALLS 32
static struct call {
	char what;            /* 'd' disarm, 'r' rearm, 't' thread, 'x' exit */
	pid_t tid;            /* of the record, or the timer's entry's */
	int64_t cpu;          /* the record's CPU time */
	uint64_t first_ns;    /* the rearm's */
	int young;
	char name[16];
} calls[CALLS];
static int ncalls;
static char comm[4][16];  /* what threads_read_comm says of entry i */

static struct call *record(char what)
{
	struct call *c = &calls[ncalls < CALLS ? ncalls++ : CALLS - 1];

	memset(c, 0, sizeof(*c));
	c->what = what;
	return c;
}

void engine_disarm(struct engine_timer *t)
{
	record('d')->tid = (pid_t)t->id;
}

void engine_rearm(struct engine_timer *t, int young, uint64_t first_ns)
{
	struct call *c = record('r');

	c->tid = (pid_t)t->id;
	c->young = young;
	c->first_ns = first_ns;
}

void threads_write_thread(pid_t tid, const char name[16], int64_t cpu_base)
{
	struct call *c = record('t');

	c->tid = tid;
	c->cpu = cpu_base;
	memcpy(c->name, name, 16);
}

void threads_write_exit(pid_t tid, int64_t cpu_ns)
{
	struct call *c = record('x');

	c->tid = tid;
	c->cpu = cpu_ns;
}

void threads_read_comm(pid_t tid, char name[16])
{
	for (size_t i = 0; i < preload.nentries; i++)
		if (preload.entries[i].tid == tid && tid != 0) {
			memcpy(name, comm[i], 16);
			return;
		}
	name[0] = '\0';
}

uint64_t sweep_launch(uint64_t now)
{
	return now + 5;
}

/* The host as far as preload_quiesce asks it: a handler is in flight
 * while preload.inflight says so. */
static int handlers_idle(void)
{
	return atomic_load(&preload.inflight) == 0;
}

const struct preload_host preload_host = {
	.collector = "collect-timer",
	.library = "libprofview-timer",
	.handlers_idle = handlers_idle,
};

/* ---- the threads ---- */

static pthread_mutex_t park_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t park_cond = PTHREAD_COND_INITIALIZER;
static int parked_go;
static _Atomic pid_t parked_tid;

/* A thread of the program that lives through the test, its CPU clock
 * readable. */
static void *parked(void *unused)
{
	(void)unused;
	atomic_store(&parked_tid, preload_gettid());
	pthread_mutex_lock(&park_lock);
	while (!parked_go)
		pthread_cond_wait(&park_cond, &park_lock);
	pthread_mutex_unlock(&park_lock);
	return NULL;
}

static int count(char what, pid_t tid)
{
	int n = 0;

	for (int i = 0; i < ncalls; i++)
		n += calls[i].what == what && calls[i].tid == tid;
	return n;
}

static const struct call *find(char what, pid_t tid)
{
	for (int i = 0; i < ncalls; i++)
		if (calls[i].what == what && calls[i].tid == tid)
			return &calls[i];
	return NULL;
}

int main(void)
{
	static struct preload_entry entries[3];
	static struct preload_seen seen[3];
	pid_t me = preload_gettid(), other;
	const struct call *c;
	pthread_t th;
	uint64_t now;

	pthread_create(&th, NULL, parked, NULL);
	while ((other = atomic_load(&parked_tid)) == 0)
		sched_yield();
	pthread_mutex_init(&preload.registry_lock, NULL);
	preload.entries = entries;
	preload.nentries = 3;
	preload.period_ns = 4000000;
	/* young: less than an hour of CPU time since its base */
	preload.short_ns = 3600000000000ull;
	entries[0].tid = me;
	entries[2].tid = other;   /* entry 1 is free */
	for (int i = 0; i < 3; i++) {
		entries[i].timer.id = (uint64_t)entries[i].tid;
		entries[i].seen = &seen[i];
		snprintf(entries[i].name, 16, "t%d", i);
		memcpy(comm[i], entries[i].name, 16);
	}
	entries[2].cpu_base = -3600000000000ll;  /* an old thread: not young */

	/* how sampling starts */
	control_timer_initial(CONTROL_RESUME);
	CHECK(!control_paused());
	control_timer_initial(CONTROL_PAUSE);
	CHECK(control_paused());
	control_timer_initial(CONTROL_END);
	CHECK(control_paused());
	atomic_store(&control_gen, 0);

	/* not profiled: nothing */
	atomic_store(&preload.state, PRELOAD_STOPPED);
	CHECK_EQ(control_timer_apply(CONTROL_PAUSE), 0);
	CHECK(!control_paused());
	CHECK_EQ(ncalls, 0);
	atomic_store(&preload.state, PRELOAD_RUNNING);
	CHECK_EQ(control_timer_apply(CONTROL_RESUME), 0);
	CHECK_EQ(ncalls, 0);

	/* a pause, entry 2 renamed since */
	memcpy(comm[2], "renamed", 8);
	CHECK_EQ(control_timer_apply(CONTROL_PAUSE), 1);
	CHECK(control_paused());
	CHECK_EQ(atomic_load(&control_gen), 1);
	CHECK_EQ(count('d', me), 1);
	CHECK_EQ(count('d', other), 1);
	CHECK_EQ(count('x', me), 1);
	CHECK_EQ(count('x', other), 1);
	CHECK_EQ(count('d', 0) + count('x', 0) + count('t', 0), 0);
	CHECK_EQ(count('t', me), 0);
	CHECK_EQ(count('t', other), 1);
	c = find('t', other);
	CHECK(c != NULL && strcmp(c->name, "renamed") == 0 && c->cpu == entries[2].cpu_base);
	CHECK_STR(entries[2].name, "renamed");
	/* the new name before the exit */
	CHECK(find('t', other) < find('x', other));
	c = find('x', me);
	CHECK(c != NULL && c->cpu > 0);
	/* again, or ended: nothing more */
	ncalls = 0;
	CHECK_EQ(control_timer_apply(CONTROL_PAUSE), 0);
	CHECK_EQ(control_timer_apply(CONTROL_END), 0);
	CHECK_EQ(ncalls, 0);
	CHECK_EQ(atomic_load(&control_gen), 1);

	/* the resume */
	now = preload_now();
	CHECK_EQ(control_timer_apply(CONTROL_RESUME), 1);
	CHECK(!control_paused());
	CHECK_EQ(atomic_load(&control_gen), 2);
	CHECK_EQ(count('t', me), 1);
	CHECK_EQ(count('t', other), 1);
	CHECK_EQ(count('x', me) + count('d', me), 0);
	c = find('t', me);
	CHECK(c != NULL && c->cpu > 0 && strcmp(c->name, "t0") == 0);
	/* the handler's previous sample: the CPU clock at the resume */
	CHECK(c != NULL && atomic_load(&seen[0].resumed_cpu) == c->cpu &&
	      atomic_load(&seen[0].cpu) == c->cpu);
	c = find('t', other);
	CHECK(c != NULL && atomic_load(&seen[2].resumed_cpu) == c->cpu);
	CHECK_EQ(count('r', me), 1);
	CHECK_EQ(count('r', other), 1);
	CHECK_EQ(count('r', 0), 0);
	c = find('r', me);
	CHECK(c != NULL && c->young == 1 && c->first_ns >= 1 && c->first_ns <= preload.period_ns);
	c = find('r', other);
	CHECK(c != NULL && c->young == 0);
	/* the records before the timers */
	CHECK(find('t', other) < find('r', me));

	/* a handler that never ends holds a pause a moment, not for ever */
	ncalls = 0;
	atomic_store(&preload.inflight, 1);
	CHECK_EQ(control_timer_apply(CONTROL_PAUSE), 1);
	CHECK_EQ(count('x', me), 1);
	atomic_store(&preload.inflight, 0);

	/* the deferred work is the sweeper's */
	CHECK_EQ(control_timer_deferred(now), now + 5);

	pthread_mutex_lock(&park_lock);
	parked_go = 1;
	pthread_cond_signal(&park_cond);
	pthread_mutex_unlock(&park_lock);
	pthread_join(th, NULL);
	return check_done("control-timer");
}
