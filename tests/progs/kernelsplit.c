/* kernelsplit.c - two threads with a known split of user and system time:
 * "faulter" maps fresh memory, writes one byte a page (each write a page
 * fault: the kernel clears the page) and unmaps it again, over and over,
 * which is most of its CPU time in the kernel; "spinner" computes and
 * makes next to no system calls.  Each runs until it has used argv[1]
 * seconds (default 1) of CPU time, then prints its own split as
 * getrusage(RUSAGE_THREAD) gives it: "rusage NAME USER_NS SYSTEM_NS", the
 * truth a profile must match. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>

#define REGION (4u << 20)
#define PAGE 4096u

static double run_seconds = 1.0;
static volatile uint64_t sink;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

/* The thread's CPU time (a system call: the spinner reads it seldom). */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void report(const char *name)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	pthread_mutex_lock(&print_lock);
	printf("rusage %s %lld %lld\n", name,
	       (long long)ru.ru_utime.tv_sec * 1000000000ll + ru.ru_utime.tv_usec * 1000ll,
	       (long long)ru.ru_stime.tv_sec * 1000000000ll + ru.ru_stime.tv_usec * 1000ll);
	pthread_mutex_unlock(&print_lock);
}

__attribute__((noinline)) void touch_pages(void)
{
	char *p = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	/* small pages: a fault each */
	madvise(p, REGION, MADV_NOHUGEPAGE);
	for (unsigned off = 0; off < REGION; off += PAGE)
		p[off] = (char)off;
	munmap(p, REGION);
}

__attribute__((noinline)) void *faulter(void *arg)
{
	(void)arg;
	prctl(PR_SET_NAME, "faulter");
	while (cpu_now() < run_seconds)
		touch_pages();
	report("faulter");
	return NULL;
}

__attribute__((noinline)) uint64_t spin_user(uint64_t x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noinline)) void *spinner(void *arg)
{
	uint64_t x = 1;

	(void)arg;
	prctl(PR_SET_NAME, "spinner");
	while (cpu_now() < run_seconds)
		for (int i = 0; i < 20; i++)
			x = spin_user(x);
	sink = x;
	report("spinner");
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		run_seconds = atof(argv[1]);
	if (pthread_create(&a, NULL, faulter, NULL) != 0 || pthread_create(&b, NULL, spinner, NULL) != 0) {
		fprintf(stderr, "kernelsplit: cannot create threads\n");
		return 1;
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
