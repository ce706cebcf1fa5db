/* syscalls.c - a thread that spends about half its CPU time in short system
 * calls, the rest computing, for tests and benches of how a profiler splits
 * time between a system call's wrapper, the kernel and the user code
 *
 * syscalls [SECONDS]: until the thread has used SECONDS (default 2) of CPU
 * time, computes in compute() and reads 64 bytes of /dev/zero eight times
 * in read_zero() (pread: the kernel copies them).  At the end it prints
 * "rusage USER_NS SYSTEM_NS", the split getrusage(RUSAGE_THREAD) gives. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void compute(int n)
{
	unsigned long x = sink;

	for (int i = 0; i < n; i++)
		x = x * 6364136223846793005ul + 1;
	sink = x;
}

__attribute__((noinline)) static void read_zero(int fd)
{
	char buf[64];

	for (int i = 0; i < 8; i++)
		if (pread(fd, buf, sizeof(buf), 0) < 0)
			exit(1);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	int fd = open("/dev/zero", O_RDONLY);
	struct rusage ru;

	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	/* the work unit jittered, so that it does not line up with the tick */
	for (unsigned r = 1; cpu_now() < seconds; r = r * 1103515245u + 12345u) {
		compute(1500 + (int)(r >> 16) % 1000);
		read_zero(fd);
	}
	getrusage(RUSAGE_THREAD, &ru);
	printf("rusage %lld %lld\n", (long long)ru.ru_utime.tv_sec * 1000000000LL + ru.ru_utime.tv_usec * 1000LL,
	       (long long)ru.ru_stime.tv_sec * 1000000000LL + ru.ru_stime.tv_usec * 1000LL);
	return 0;
}
