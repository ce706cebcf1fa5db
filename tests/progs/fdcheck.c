/* fdcheck.c - what a profiler's file descriptors must not do: two threads
 * spin; the main thread runs "ls -l /proc/self/fd" with posix_spawn (which
 * runs no fork handlers) so that the listing shows every descriptor an
 * exec'd program inherits, then closes every descriptor above 2 as
 * closefrom(3) would, and the threads spin on.  Prints "first fd N", the
 * number a descriptor opened once the threads run gets, and "done" at the
 * end. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *spin(void *arg)
{
	double end = cpu_now() + *(double *)arg;
	uint64_t x = 1;

	while (cpu_now() < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ull + 1;
	sink += x;
	return NULL;
}

int main(void)
{
	char *argv[] = { "ls", "-l", "/proc/self/fd/", NULL };
	char *envp[] = { "PATH=/usr/bin:/bin", NULL };
	double t = 0.6;
	pthread_t a, b;
	pid_t pid;
	int status;

	pthread_create(&a, NULL, spin, &t);
	pthread_create(&b, NULL, spin, &t);
	/* the number a new descriptor gets: the same as without a profiler */
	int fd = open("/dev/null", O_RDONLY);
	printf("first fd %d\n", fd);
	close(fd);
	fflush(stdout);
	/* Without the environment, so that no profiler is loaded into ls:
	 * any profiler descriptor it lists was inherited. */
	if (posix_spawn(&pid, "/bin/ls", NULL, NULL, argv, envp) == 0)
		waitpid(pid, &status, 0);
	struct timespec ms = { 0, 200000000 };
	nanosleep(&ms, NULL);
	syscall(SYS_close_range, 3u, ~0u, 0u);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("done\n");
	return 0;
}
