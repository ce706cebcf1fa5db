/* contend.c - more busy threads than CPUs, of two kinds: "chatty" threads
 * make a system call about every microsecond of work (they read their CPU
 * clock), "quiet" threads only compute.  On a 6.x kernel the scheduler can
 * preempt a chatty thread at the end of its slice, between two ticks, again
 * and again, so tick-driven CPU timers may rarely see it running.
 *
 * Usage: contend [SECONDS]   (default 0.4)
 *
 * Four threads run at once: chatty_a and quiet_a each burn SECONDS of their
 * own CPU time, chatty_b and quiet_b half of that.  At the end the program
 * prints the truth a profile must match, each thread's CPU time by its own
 * clock, in nanoseconds:
 *   contend: chatty_a N chatty_b N quiet_a N quiet_b N
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;
static double target = 0.4;

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Burns seconds of CPU time; steps of work between two clock reads. */
static void burn(double seconds, int steps)
{
	double end = thread_cpu() + seconds;
	uint64_t x = 1;

	while (thread_cpu() < end)
		for (int i = 0; i < steps; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink += x;
}

/* A system call every microsecond or so, or every millisecond. */
__attribute__((noinline)) static void *chatty_a(void *out)
{
	burn(target, 100);
	*(double *)out = thread_cpu();
	return NULL;
}

__attribute__((noinline)) static void *chatty_b(void *out)
{
	burn(target / 2, 100);
	*(double *)out = thread_cpu();
	return NULL;
}

__attribute__((noinline)) static void *quiet_a(void *out)
{
	burn(target, 200000);
	*(double *)out = thread_cpu();
	return NULL;
}

__attribute__((noinline)) static void *quiet_b(void *out)
{
	burn(target / 2, 200000);
	*(double *)out = thread_cpu();
	return NULL;
}

int main(int argc, char **argv)
{
	void *(*fn[4])(void *) = { chatty_a, chatty_b, quiet_a, quiet_b };
	static const char *const names[4] = { "chatty_a", "chatty_b", "quiet_a", "quiet_b" };
	double cpu[4];
	pthread_t t[4];

	if (argc > 1)
		target = atof(argv[1]);
	if (!(target > 0)) {
		fprintf(stderr, "usage: contend [SECONDS]\n");
		return 2;
	}
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, fn[i], &cpu[i]) != 0) {
			fprintf(stderr, "contend: cannot start a thread\n");
			return 1;
		}
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	printf("contend:");
	for (int i = 0; i < 4; i++)
		printf(" %s %lld", names[i], (long long)(cpu[i] * 1e9));
	printf("\n");
	return 0;
}
