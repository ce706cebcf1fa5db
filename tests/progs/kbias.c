/* kbias.c - one thread with a known split of user and system time, to be
 * profiled beside CPU hogs on the same CPUs: "user" computes and makes no
 * system call but the few that read its CPU time (its system time is next
 * to nothing), "sys" reads /dev/zero a page at a time (most of its time is
 * in the kernel's copy to user memory), under the functions user_work and
 * sys_work.  Runs until it has used argv[2] seconds (default 1) of CPU
 * time, then prints its split as getrusage(RUSAGE_THREAD) gives it:
 * "rusage MODE USER_NS SYSTEM_NS PREEMPTED", the truth a profile must
 * match, and how many times the thread was preempted (ru_nivcsw). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

/* The thread's CPU time (a system call, or the vDSO: read seldom). */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Some thousands of steps of a generator: no system call, no memory
 * beyond the stack; the length varies so that no unit lines up with the
 * scheduler's tick. */
__attribute__((noinline)) void user_work(uint64_t *x, unsigned steps)
{
	uint64_t v = *x;

	for (unsigned i = 0; i < steps; i++)
		v = v * 6364136223846793005ull + 1442695040888963407ull;
	*x = v;
	sink = v;
}

/* Page-sized reads of /dev/zero: each a system call whose time is the
 * kernel clearing the user's buffer. */
__attribute__((noinline)) void sys_work(int fd, char *buf, unsigned reads)
{
	for (unsigned i = 0; i < reads; i++)
		if (read(fd, buf, 4096) != 4096) {
			perror("read /dev/zero");
			exit(1);
		}
}

int main(int argc, char **argv)
{
	static char buf[4096];
	const char *mode = argc > 1 ? argv[1] : "user";
	double run_seconds = argc > 2 ? atof(argv[2]) : 1.0, end;
	uint64_t x = 88172645463325252ull;
	struct rusage ru;
	int fd = -1;

	if (strcmp(mode, "user") != 0 && strcmp(mode, "sys") != 0) {
		fprintf(stderr, "usage: kbias user|sys [SECONDS]\n");
		return 2;
	}
	if (strcmp(mode, "sys") == 0 && (fd = open("/dev/zero", O_RDONLY)) < 0) {
		perror("/dev/zero");
		return 1;
	}
	end = cpu_now() + run_seconds;
	for (unsigned unit = 0;; unit++) {
		/* the clock read every 16 units of user work (some 10 ms), so
		 * that its system calls are next to none of the time */
		if ((fd >= 0 || unit % 16 == 0) && cpu_now() >= end)
			break;
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		if (fd < 0)
			user_work(&x, 400000 + (unsigned)(x % 400000));
		else
			sys_work(fd, buf, 50 + (unsigned)(x % 50));
	}
	getrusage(RUSAGE_THREAD, &ru);
	printf("rusage %s %lld %lld %ld\n", mode,
	       (long long)ru.ru_utime.tv_sec * 1000000000ll + ru.ru_utime.tv_usec * 1000ll,
	       (long long)ru.ru_stime.tv_sec * 1000000000ll + ru.ru_stime.tv_usec * 1000ll, ru.ru_nivcsw);
	return 0;
}
