/* hostile-names.c - a main thread spinning in hot() and a second thread
 * in warm(), for the given CPU seconds each.  tests/e2e/hostile-input.sh
 * renames both symbols with objcopy to names holding terminal escape
 * sequences; the second thread names itself with one. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void hot(double seconds)
{
	while (thread_cpu() < seconds)
		for (int i = 0; i < 10000; i++)
			sink += (uint64_t)i * 2654435761u;
}

__attribute__((noinline)) void warm(double seconds)
{
	while (thread_cpu() < seconds)
		for (int i = 0; i < 10000; i++)
			sink += (uint64_t)i * 40503u;
}

static void *worker(void *arg)
{
	/* 15 bytes at most: the kernel's limit for a thread name. */
	pthread_setname_np(pthread_self(), "\033]0;t\a\033[2J");
	warm(*(double *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.3;
	pthread_t t;

	if (pthread_create(&t, NULL, worker, &seconds) != 0)
		return 1;
	hot(seconds);
	pthread_join(t, NULL);
	return 0;
}
