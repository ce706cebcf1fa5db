/* kmissed.c - one thread that alternates a stretch in the kernel with a
 * stretch of user work, each longer than a sampling period: in sys_phase,
 * 64 KiB reads of /dev/zero through read_block (the kernel clears the
 * buffer: next to all of the stretch is system time); in user_phase, a
 * generator that makes no system call.  A perf event that counts user time
 * only drops every overflow of the first stretch, and the sample after it
 * weighs them all.
 *
 * kmissed [SECONDS] [STRETCH_MS]: until the thread has used SECONDS
 * (default 2) of CPU time, stretches of about STRETCH_MS (default 12) of
 * CPU time each, their lengths varied so that none lines up with the
 * scheduler's tick.  At the end it prints the truth a profile must match:
 * "phases SYS_NS USER_NS", the CPU time of each kind of stretch, read with
 * CLOCK_THREAD_CPUTIME_ID at their ends, and "rusage USER_NS SYSTEM_NS",
 * the split getrusage(RUSAGE_THREAD) gives. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define KMISSED_BLOCK 65536

static volatile uint64_t sink;

static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* One read: the program's own wrapper of the system call. */
__attribute__((noinline)) void read_block(int fd, char *buf)
{
	if (pread(fd, buf, KMISSED_BLOCK, 0) != KMISSED_BLOCK) {
		perror("read /dev/zero");
		exit(1);
	}
}

/* Reads until the thread has used ns of CPU time in the stretch. */
__attribute__((noinline)) void sys_phase(int fd, char *buf, int64_t ns)
{
	int64_t end = cpu_ns() + ns;

	do {
		for (int i = 0; i < 8; i++)
			read_block(fd, buf);
	} while (cpu_ns() < end);
}

/* Computes until the thread has used ns of CPU time, reading its clock
 * seldom (every some 0.3 ms). */
__attribute__((noinline)) void user_phase(uint64_t *x, int64_t ns)
{
	int64_t end = cpu_ns() + ns;
	uint64_t v = *x;

	do {
		for (int i = 0; i < 200000; i++)
			v = v * 6364136223846793005ull + 1442695040888963407ull;
		sink = v;
	} while (cpu_ns() < end);
	*x = v;
}

int main(int argc, char **argv)
{
	static char buf[KMISSED_BLOCK];
	double seconds = argc > 1 ? atof(argv[1]) : 2.0;
	double stretch = argc > 2 ? atof(argv[2]) : 12.0;
	int64_t start, end, sys_ns = 0, user_ns = 0, t;
	uint64_t x = 88172645463325252ull;
	struct rusage ru;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0) {
		perror("/dev/zero");
		return 1;
	}
	if (seconds <= 0 || stretch <= 0) {
		fprintf(stderr, "usage: kmissed [SECONDS] [STRETCH_MS]\n");
		return 2;
	}
	start = cpu_ns();
	end = start + (int64_t)(seconds * 1e9);
	for (t = start; t < end;) {
		int64_t len = (int64_t)(stretch * 1e6);

		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		/* from 3/4 to 5/4 of the stretch */
		len = len * 3 / 4 + (int64_t)(x % (uint64_t)(len / 2 + 1));
		sys_phase(fd, buf, len);
		sys_ns += cpu_ns() - t;
		t = cpu_ns();
		user_phase(&x, len);
		user_ns += cpu_ns() - t;
		t = cpu_ns();
	}
	getrusage(RUSAGE_THREAD, &ru);
	printf("phases %lld %lld\n", (long long)sys_ns, (long long)user_ns);
	printf("rusage %lld %lld\n",
	       (long long)ru.ru_utime.tv_sec * 1000000000ll + ru.ru_utime.tv_usec * 1000ll,
	       (long long)ru.ru_stime.tv_sec * 1000000000ll + ru.ru_stime.tv_usec * 1000ll);
	return 0;
}
