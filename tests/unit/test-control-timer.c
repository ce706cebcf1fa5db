/* test-control-timer.c - what a pause and a resume do in
 * libprofview-timer.so (collectors/timer/control-timer.c), with the
 * library's records stood in for here: the generation count odd while
 * paused, moved once for each change by whichever thread sees it first
 * (threads racing to apply the same change: one of them does), nothing
 * while the process is not being profiled; in each thread's handler, the
 * stretch closed at the first paused sample with an exit record at the
 * CPU time of the thread's last sample, nothing at the samples after, a
 * thread record at the first sample after the resume with the clock then,
 * which becomes the thread's previous sample, and no record for a thread
 * without its shared state; the end closes a stretch only once. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "control-timer.h"
#include "host.h"
#include "preload-state.h"
#include "sweep.h"
#include "threads.h"

struct preload_global preload;
__thread struct preload_tls preload_tls __attribute__((tls_model("initial-exec")));

/* ---- the library, as far as control-timer.c calls it ---- */

#define CALLS 32
static struct call {
	char what;            /* 't' thread record, 'x' exit record */
	int64_t cpu;          /* the record's CPU time */
} calls[CALLS];
static int ncalls;

void threads_write_own(int open, int64_t cpu_ns)
{
	struct call *c = &calls[ncalls < CALLS ? ncalls++ : CALLS - 1];

	c->what = open ? 't' : 'x';
	c->cpu = cpu_ns;
}

uint64_t sweep_launch(uint64_t now)
{
	return now + 5;
}

const struct preload_host preload_host = {
	.collector = "collect-timer",
	.library = "libprofview-timer",
};

/* ---- threads racing to apply one change ---- */

#define RACERS 4
#define ROUNDS 2000

static _Atomic int go, changed;

static void *racer(void *arg)
{
	int round = (int)(intptr_t)arg, n = 0;

	while (atomic_load(&go) <= round)
		;
	n += control_timer_apply(round % 2 == 0 ? CONTROL_PAUSE : CONTROL_RESUME);
	atomic_fetch_add(&changed, n);
	return NULL;
}

/* RACERS threads apply the same change, ROUNDS times: each round moves
 * the count once, and one of them says it did. */
static void test_race(void)
{
	uint64_t gen0 = atomic_load(&control_gen);
	int bad = 0;

	for (int r = 0; r < ROUNDS; r++) {
		pthread_t th[RACERS];

		atomic_store(&changed, 0);
		for (int i = 0; i < RACERS; i++)
			pthread_create(&th[i], NULL, racer, (void *)(intptr_t)r);
		atomic_store(&go, r + 1);
		for (int i = 0; i < RACERS; i++)
			pthread_join(th[i], NULL);
		bad += atomic_load(&changed) != 1 || control_paused() != (r % 2 == 0);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(atomic_load(&control_gen), gen0 + ROUNDS);
}

int main(void)
{
	struct preload_seen seen;
	int64_t last = 100;
	uint64_t now = 1000;

	/* how sampling starts */
	control_timer_initial(CONTROL_RESUME);
	CHECK(!control_paused());
	control_timer_initial(CONTROL_PAUSE);
	CHECK(control_paused());
	control_timer_initial(CONTROL_PAUSE);
	CHECK(control_paused());
	atomic_store(&control_gen, 0);

	/* not profiled: nothing changes */
	atomic_store(&preload.state, PRELOAD_STOPPED);
	CHECK_EQ(control_timer_apply(CONTROL_PAUSE), 0);
	CHECK(!control_paused());

	/* a pause, once; the end is a pause too; a resume */
	atomic_store(&preload.state, PRELOAD_RUNNING);
	CHECK_EQ(control_timer_apply(CONTROL_PAUSE), 1);
	CHECK(control_paused());
	CHECK_EQ(control_timer_apply(CONTROL_PAUSE), 0);
	CHECK_EQ(control_timer_apply(CONTROL_END), 0);
	CHECK_EQ(atomic_load(&control_gen), 1);
	CHECK_EQ(control_timer_apply(CONTROL_RESUME), 1);
	CHECK(!control_paused());
	CHECK_EQ(atomic_load(&control_gen), 2);
	CHECK_EQ(control_timer_apply(CONTROL_RESUME), 0);
	test_race();

	/* a thread's handler: running, its stretch open */
	memset(&seen, 0, sizeof(seen));
	atomic_store(&seen.open, 1);
	ncalls = 0;
	CHECK_EQ(control_timer_thread(&seen, &last, 150, CONTROL_RESUME), 1);
	CHECK_EQ(ncalls, 0);
	CHECK_EQ(last, 100); /* the sampler moves it on, not this */
	/* the first paused sample: the stretch ends at the last sample */
	CHECK_EQ(control_timer_thread(&seen, &last, 200, CONTROL_PAUSE), 0);
	CHECK_EQ(ncalls, 1);
	CHECK(calls[0].what == 'x' && calls[0].cpu == 100);
	CHECK_EQ(last, 200);
	CHECK_EQ(atomic_load(&seen.open), 0);
	/* the next ones: nothing written, the time paused in no weight */
	CHECK_EQ(control_timer_thread(&seen, &last, 300, CONTROL_PAUSE), 0);
	CHECK_EQ(control_timer_thread(&seen, &last, 350, CONTROL_END), 0);
	CHECK_EQ(ncalls, 1);
	CHECK_EQ(last, 350);
	/* the first sample after the resume: a new stretch from now */
	CHECK_EQ(control_timer_thread(&seen, &last, 400, CONTROL_RESUME), 0);
	CHECK_EQ(ncalls, 2);
	CHECK(calls[1].what == 't' && calls[1].cpu == 400);
	CHECK_EQ(last, 400);
	CHECK_EQ(atomic_load(&seen.open), 1);
	CHECK_EQ(control_timer_thread(&seen, &last, 450, CONTROL_RESUME), 1);
	CHECK_EQ(ncalls, 2);

	/* the end of the thread (or of the trace) closes it once */
	CHECK_EQ(control_thread_close(&seen), 1);
	CHECK_EQ(control_thread_close(&seen), 0);
	/* one whose stretch a pause closed: its handler opens it again, not
	 * the end */
	CHECK_EQ(control_timer_thread(&seen, &last, 500, CONTROL_PAUSE), 0);
	CHECK_EQ(ncalls, 2);

	/* a thread without its shared state: never a record, always open */
	CHECK_EQ(control_timer_thread(NULL, &last, 600, CONTROL_PAUSE), 0);
	CHECK_EQ(last, 600);
	CHECK_EQ(control_timer_thread(NULL, &last, 700, CONTROL_RESUME), 1);
	CHECK_EQ(ncalls, 2);
	CHECK_EQ(control_thread_close(NULL), 1);

	/* the deferred work is the sweeper's */
	CHECK_EQ(control_timer_deferred(now), now + 5);
	return check_done("control-timer");
}
