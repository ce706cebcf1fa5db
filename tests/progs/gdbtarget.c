/* gdbtarget.c - a multi-threaded program for collect-gdb's tests and bench
 *
 * usage: gdbtarget [SECONDS]   (default: run until killed)
 *
 * Threads, each named: "alpha" spins in alpha_hot(), "beta" spins in
 * beta_hot(), "waiter" waits on a condition variable that is never
 * signalled, "ticker" sleeps 200 us at a time and measures how late it
 * wakes up: a wake-up more than 1 ms late is time the process was stopped
 * (by a debugger taking a snapshot); it runs at real-time priority when
 * allowed, so that the spinning threads do not delay it.  The main thread sleeps.  At the end
 * (SECONDS, or SIGTERM/SIGINT) it prints on stderr
 *   gdbtarget: stopped_ns N gaps G alpha_iters A beta_iters B
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t done;
static volatile unsigned long alpha_iters, beta_iters;
static long long stopped_ns, gaps;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
volatile double sink;

static long long now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) void alpha_hot(void)
{
	for (int i = 0; i < 20000; i++)
		sink += i * 0.5;
	alpha_iters++;
}

__attribute__((noinline)) void beta_hot(void)
{
	for (int i = 0; i < 20000; i++)
		sink -= i * 0.25;
	beta_iters++;
}

static void *alpha(void *arg)
{
	pthread_setname_np(pthread_self(), "alpha");
	while (!done)
		alpha_hot();
	return arg;
}

static void *beta(void *arg)
{
	pthread_setname_np(pthread_self(), "beta");
	while (!done)
		beta_hot();
	return arg;
}

static void *waiter(void *arg)
{
	pthread_setname_np(pthread_self(), "waiter");
	pthread_mutex_lock(&lock);
	for (;;)
		pthread_cond_wait(&never, &lock);
	return arg;
}

static void *ticker(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };

	pthread_setname_np(pthread_self(), "ticker");
	/* Real-time priority when allowed: then a late wake-up is not the
	 * spinning threads' doing. */
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	while (!done) {
		struct timespec req = { 0, 200000 };
		long long t = now(), late;
		nanosleep(&req, NULL);
		late = now() - t - 200000;
		if (late > 1000000) {
			stopped_ns += late;
			gaps++;
		}
	}
	return arg;
}

static void on_term(int sig)
{
	(void)sig;
	done = 1;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;
	long long end = now() + (long long)(secs * 1e9);
	pthread_t a, b, w, t;

	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	pthread_create(&a, NULL, alpha, NULL);
	pthread_create(&b, NULL, beta, NULL);
	pthread_create(&w, NULL, waiter, NULL);
	pthread_create(&t, NULL, ticker, NULL);
	while (!done && (secs <= 0 || now() < end))
		usleep(20000);
	done = 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_join(t, NULL);
	fprintf(stderr, "gdbtarget: stopped_ns %lld gaps %lld alpha_iters %lu beta_iters %lu\n",
		stopped_ns, gaps, alpha_iters, beta_iters);
	return 0;
}
