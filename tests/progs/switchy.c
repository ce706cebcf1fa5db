/* switchy.c - two threads, "ping" and "pong", pass one byte back and forth
 * through two pipes ROUNDS times (default 40000), both on one CPU, so that
 * each blocks and is woken at every round trip (a context switch every few
 * microseconds of its CPU time); a third, "spinner", computes on another
 * CPU (the same one on a machine of one) until they are done, and at least
 * SPIN seconds of its CPU time (default 0.2).  At the end it prints each
 * thread's own CPU time (CLOCK_THREAD_CPUTIME_ID), the truth a profile of
 * it must match, and whether anything else on the spinner's CPU switched
 * it out so often that collect-timer's auto engine could have moved it
 * too: the engine looks at a thread's switches and CPU time (getrusage) at
 * every fourth of its perf samples (its CPU clock, getrusage's switches), and moves it past one switch per
 * MOVE_CPU_NS of CPU time (sample.c), where four samples at 1000 Hz are at
 * least MIN_LOOK_NS of CPU time (a period is drawn from half of one up).
 * The spinner reads its own switches and CPU clock after each piece of its
 * work, a step; a look of the engine's is inside the span of two of its readings
 * around it, with at most two steps more CPU time and no fewer switches,
 * so if no such span of at least MIN_LOOK_NS has more than one switch per
 * MOVE_CPU_NS of its CPU time less two steps, no look could have moved it
 * ("spinner could move 0").
 *
 * usage: switchy [ROUNDS [SPIN]]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int ping_pipe[2], pong_pipe[2];
static long rounds = 40000;
static double spin_seconds = 0.2;
static atomic_int done;
static volatile uint64_t sink;
static int cpu_a = -1, cpu_b = -1;

#define MOVE_CPU_NS 200000
#define MIN_LOOK_NS 2000000
#define READINGS 65536
/* the spinner's readings: its CPU time and context switches */
static int64_t read_cpu[READINGS], read_switches[READINGS];

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

__attribute__((noinline)) void *pong(void *arg)
{
	char c;

	(void)arg;
	pin(cpu_a);
	for (long i = 0; i < rounds; i++)
		if (read(ping_pipe[0], &c, 1) != 1 || write(pong_pipe[1], &c, 1) != 1)
			exit(1);
	return (void *)(intptr_t)thread_cpu_ns();
}

__attribute__((noinline)) void *ping(void *arg)
{
	char c = 'x';

	(void)arg;
	pin(cpu_a);
	for (long i = 0; i < rounds; i++)
		if (write(ping_pipe[1], &c, 1) != 1 || read(pong_pipe[0], &c, 1) != 1)
			exit(1);
	atomic_store(&done, 1);
	return (void *)(intptr_t)thread_cpu_ns();
}

__attribute__((noinline)) void spin_some(void)
{
	uint64_t x = sink;

	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

/* Could a look of the engine's, in the readings [0, n), have moved the
 * spinner (see the top)?  The readings' longest step is taken as the
 * step.  A span from reading i to j moves it when
 * (switches_j - switches_i) * MOVE_CPU_NS > cpu_j - cpu_i - 2 * step, that
 * is when f_j > f_i - 2 * step, f being switches * MOVE_CPU_NS - cpu: the
 * largest f_j of the readings at least MIN_LOOK_NS after i is kept from
 * the end down. */
static int64_t suffix_max[READINGS];

static int could_move(int n)
{
	int64_t step = 0;
	int j = 0;

	if (n >= READINGS)
		return 1; /* (readings that ran out: not known) */
	for (int i = 1; i < n; i++)
		if (read_cpu[i] - read_cpu[i - 1] > step)
			step = read_cpu[i] - read_cpu[i - 1];
	for (int i = n - 1; i >= 0; i--) {
		int64_t f = read_switches[i] * MOVE_CPU_NS - read_cpu[i];

		suffix_max[i] = i == n - 1 || f > suffix_max[i + 1] ? f : suffix_max[i + 1];
	}
	for (int i = 0; i < n; i++) {
		while (j < n && read_cpu[j] - read_cpu[i] < MIN_LOOK_NS)
			j++;
		if (j == n)
			break;
		if (suffix_max[j] > read_switches[i] * MOVE_CPU_NS - read_cpu[i] - 2 * step)
			return 1;
	}
	return 0;
}

struct spun {
	int64_t cpu_ns;
	int could_move;
};

__attribute__((noinline)) void *spinner(void *arg)
{
	struct spun *s = arg;
	struct rusage ru;
	int n = 0;

	pin(cpu_b);
	while (!atomic_load(&done) || thread_cpu_ns() < (int64_t)(spin_seconds * 1e9)) {
		spin_some();
		if (n < READINGS && getrusage(RUSAGE_THREAD, &ru) == 0) {
			read_switches[n] = ru.ru_nvcsw + ru.ru_nivcsw;
			read_cpu[n++] = thread_cpu_ns();
		}
	}
	s->could_move = could_move(n);
	s->cpu_ns = thread_cpu_ns();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b, c;
	void *ca, *cb;
	struct spun s;
	cpu_set_t set;

	if (argc > 1)
		rounds = atol(argv[1]);
	if (argc > 2)
		spin_seconds = atof(argv[2]);
	/* the first two CPUs this process may use */
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int i = 0; i < CPU_SETSIZE && cpu_b < 0; i++)
			if (CPU_ISSET(i, &set)) {
				if (cpu_a < 0)
					cpu_a = i;
				else
					cpu_b = i;
			}
	if (cpu_b < 0)
		cpu_b = cpu_a;
	if (pipe(ping_pipe) != 0 || pipe(pong_pipe) != 0)
		return 1;
	pthread_create(&c, NULL, spinner, &s);
	pthread_setname_np(c, "spinner");
	pthread_create(&b, NULL, pong, NULL);
	pthread_setname_np(b, "pong");
	pthread_create(&a, NULL, ping, NULL);
	pthread_setname_np(a, "ping");
	pthread_join(a, &ca);
	pthread_join(b, &cb);
	pthread_join(c, NULL);
	printf("cpu_ns ping %ld pong %ld spinner %ld\n", (long)(intptr_t)ca, (long)(intptr_t)cb,
	       (long)s.cpu_ns);
	printf("spinner could move %d\n", s.could_move);
	return 0;
}
