/* churn.c - short-lived threads: a pool that starts a new thread for each
 * task, as thread-per-request servers and some parallel runtimes do.
 *
 * Usage: churn [THREADS [CONCURRENT [TASK_MS]]]   (default 2000 4 1.0)
 *
 * THREADS threads are started in all, at most CONCURRENT alive at once; each
 * burns about TASK_MS milliseconds of its own CPU time in burn() (jittered
 * by +-30% so that no task lines up with the scheduler tick) and ends.  At
 * the end the program prints the truth a profile must match: the CPU time
 * of all the tasks, the part spent inside burn() (measured by each thread's
 * own clock around the call) and the process's CPU time:
 *   churn: threads N task_cpu_ns T burn_cpu_ns B process_cpu_ns P
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Atomic uint64_t task_cpu, burn_cpu;
static volatile uint64_t sink;

static int64_t cpu_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

__attribute__((noinline)) static void burn(int64_t ns)
{
	int64_t end = cpu_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	uint64_t acc = 0;

	do {
		for (int i = 0; i < 2000; i++)
			acc = acc * 6364136223846793005u + 1442695040888963407u;
	} while (cpu_ns(CLOCK_THREAD_CPUTIME_ID) < end);
	sink += acc;
}

struct task {
	int64_t ns;
	pthread_mutex_t *lock;
	pthread_cond_t *done;
	int *alive;
};

__attribute__((noinline)) static void *task_main(void *arg)
{
	struct task *t = arg;
	int64_t t0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID), t1, t2;

	burn(t->ns);
	t1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	atomic_fetch_add(&burn_cpu, (uint64_t)(t1 - t0));
	pthread_mutex_lock(t->lock);
	--*t->alive;
	pthread_cond_signal(t->done);
	pthread_mutex_unlock(t->lock);
	t2 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
	atomic_fetch_add(&task_cpu, (uint64_t)t2);
	free(t);
	return NULL;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 1 ? atoi(argv[1]) : 2000;
	int concurrent = argc > 2 ? atoi(argv[2]) : 4;
	double task_ms = argc > 3 ? atof(argv[3]) : 1.0;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t done = PTHREAD_COND_INITIALIZER;
	pthread_attr_t attr;
	uint64_t rng = 0x2545f4914f6cdd1dull;
	int alive = 0;

	if (nthreads < 1 || concurrent < 1 || !(task_ms > 0)) {
		fprintf(stderr, "usage: churn [THREADS [CONCURRENT [TASK_MS]]]\n");
		return 2;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (int i = 0; i < nthreads; i++) {
		struct task *t = malloc(sizeof(*t));
		pthread_t th;

		if (t == NULL)
			return 1;
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		t->ns = (int64_t)(task_ms * 1e6 * (0.7 + (double)(rng % 6001) / 10000.0));
		t->lock = &lock;
		t->done = &done;
		t->alive = &alive;
		pthread_mutex_lock(&lock);
		while (alive >= concurrent)
			pthread_cond_wait(&done, &lock);
		alive++;
		pthread_mutex_unlock(&lock);
		if (pthread_create(&th, &attr, task_main, t) != 0) {
			fprintf(stderr, "churn: cannot start thread %d\n", i);
			return 1;
		}
	}
	pthread_mutex_lock(&lock);
	while (alive > 0)
		pthread_cond_wait(&done, &lock);
	pthread_mutex_unlock(&lock);
	/* Detached threads may still be finishing their exit: let them. */
	struct timespec pause = { 0, 20000000 };
	nanosleep(&pause, NULL);
	printf("churn: threads %d task_cpu_ns %llu burn_cpu_ns %llu process_cpu_ns %lld\n", nthreads,
	       (unsigned long long)atomic_load(&task_cpu), (unsigned long long)atomic_load(&burn_cpu),
	       (long long)cpu_ns(CLOCK_PROCESS_CPUTIME_ID));
	return 0;
}
