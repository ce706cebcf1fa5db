/* ctlless.c - a process of one thread, for pausing and resuming sampling
 * without a thread of the collector's
 *
 * ctlless threads: prints "thread NAME" for each thread of the process
 *   (/proc/self/task/TID/comm) and ends.
 * ctlless steps DIR SECONDS: prints its threads, spins SECONDS of CPU time
 *   in phase_a() (allocating a 32 KiB block and freeing it at each turn
 *   of a loop), creates DIR/a and waits (nanosleep) for DIR/go-b; prints
 *   its threads again, spins in phase_b(), creates DIR/b and waits for
 *   DIR/go-c; spins in phase_c() and prints its threads a last time.
 *   Each wait is a minute at most.
 * ctlless window SECONDS: prints its threads, spins SECONDS of wall-clock
 *   time in phase_a() (allocating as above), prints its threads again and
 *   the environment's start and stop times ("start NS", "stop NS").
 * ctlless closed SECONDS [HOW]: closes every descriptor above 2, as a
 *   daemon does as it starts, then spins SECONDS of CPU time in phase_a()
 *   and prints "closed".  HOW: range (the default: libc's close_range),
 *   each (close() of every number up to the descriptor limit, as older
 *   daemons do), dup2 (/dev/null put on every number up to the limit with
 *   dup2, then each closed with close_range), dup3 (the same with dup3)
 *   or pipe (the read end of a pipe holding 4096 bytes put with dup2 on
 *   every number that is a perf event (/proc/self/fd), and left there
 *   while it spins; then the bytes are read back, and "pipe lost N bytes"
 *   printed instead when some are missing or changed: a profiler that
 *   reads from a number it once had must not take the program's data).
 * ctlless vforked N: spins 0.1 s of CPU time in phase_a() (the
 *   collector's sweeper is due by then), then N times a child made by
 *   vfork closes every descriptor above 2 with close_range and execs
 *   /bin/true (as Python's subprocess module does), and is waited for;
 *   then prints "vforked".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile uint64_t sink;

static char pipe_sent[4096];
static int pipe_in = -1;

/* A pipe holding pipe_sent, its read end on every number that is a perf
 * event (its write end closed); 0, or -1 said. */
static int pipe_everywhere(void)
{
	char path[300], link[256];
	struct dirent *d;
	DIR *dir;
	int p[2], n = 0;

	for (size_t i = 0; i < sizeof(pipe_sent); i++)
		pipe_sent[i] = (char)('a' + i % 26);
	if (pipe(p) != 0 || write(p[1], pipe_sent, sizeof(pipe_sent)) != (ssize_t)sizeof(pipe_sent))
		return perror("pipe"), -1;
	close(p[1]);
	if ((dir = opendir("/proc/self/fd")) == NULL)
		return perror("/proc/self/fd"), -1;
	while ((d = readdir(dir)) != NULL) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		if (strstr(link, "perf_event") != NULL && dup2(p[0], atoi(d->d_name)) >= 0)
			n++;
	}
	closedir(dir);
	fprintf(stderr, "ctlless: a pipe on %d perf events\n", n);
	pipe_in = p[0];
	return 0;
}

/* How many bytes of pipe_sent the pipe no longer holds as sent. */
static long pipe_lost(void)
{
	char back[sizeof(pipe_sent) + 1];
	ssize_t n;

	if (pipe_in < 0)
		return 0;
	fcntl(pipe_in, F_SETFL, O_NONBLOCK);
	n = read(pipe_in, back, sizeof(back));
	if (n < 0)
		n = 0;
	if (n == (ssize_t)sizeof(pipe_sent) && memcmp(back, pipe_sent, sizeof(pipe_sent)) == 0)
		return 0;
	return (long)sizeof(pipe_sent) - (long)n + (n > 0 && memcmp(back, pipe_sent, (size_t)n) != 0);
}

/* Closes every descriptor above 2 the way how says; 0, or -1 said. */
static int close_all(const char *how)
{
	long top = sysconf(_SC_OPEN_MAX);
	int null;

	if (strcmp(how, "range") == 0)
		return close_range(3, ~0u, 0) == 0 ? 0 : (perror("close_range"), -1);
	if (strcmp(how, "each") == 0) {
		for (long fd = 3; fd < top; fd++)
			close((int)fd);
		return 0;
	}
	if (strcmp(how, "pipe") == 0)
		return pipe_everywhere();
	if (strcmp(how, "dup2") != 0 && strcmp(how, "dup3") != 0) {
		fprintf(stderr, "ctlless: closed: no way %s\n", how);
		return -1;
	}
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		return perror("/dev/null"), -1;
	for (long fd = 3; fd < top; fd++)
		if (fd != null && (how[3] == '2' ? dup2(null, (int)fd) : dup3(null, (int)fd, 0)) < 0)
			return perror(how), -1;
	return close_range(3, ~0u, 0) == 0 ? 0 : (perror("close_range"), -1);
}

static void threads(void)
{
	char path[300], name[64];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");

	while (dir != NULL && (d = readdir(dir)) != NULL) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", d->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fgets(name, sizeof(name), f) != NULL)
			printf("thread %s", name);
		fclose(f);
	}
	if (dir != NULL)
		closedir(dir);
	fflush(stdout);
}

static double clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Spins until clock c has advanced by s seconds, allocating as it goes. */
static void spin(clockid_t c, double s)
{
	double end = clock_s(c) + s;

	while (clock_s(c) < end) {
		char *p = malloc(32768);

		if (p != NULL)
			p[0] = 1;
		for (int i = 0; i < 20000; i++)
			sink += (uint64_t)i * 7;
		free(p);
	}
}

__attribute__((noinline)) void phase_a(clockid_t c, double s) { spin(c, s); }
__attribute__((noinline)) void phase_b(clockid_t c, double s) { spin(c, s); }
__attribute__((noinline)) void phase_c(clockid_t c, double s) { spin(c, s); }

static void touch(const char *dir, const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	if (fd >= 0)
		close(fd);
}

static void await(const char *dir, const char *name)
{
	struct timespec step = { 0, 5000000 };
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (int i = 0; i < 12000 && access(path, F_OK) != 0; i++)
		nanosleep(&step, NULL);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "threads") == 0) {
		threads();
		return 0;
	}
	if (argc >= 4 && strcmp(argv[1], "steps") == 0) {
		double s = atof(argv[3]);

		threads();
		phase_a(CLOCK_THREAD_CPUTIME_ID, s);
		touch(argv[2], "a");
		await(argv[2], "go-b");
		threads();
		phase_b(CLOCK_THREAD_CPUTIME_ID, s);
		touch(argv[2], "b");
		await(argv[2], "go-c");
		phase_c(CLOCK_THREAD_CPUTIME_ID, s);
		threads();
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "window") == 0) {
		const char *start = getenv("PROFVIEW_START_NS"), *stop = getenv("PROFVIEW_STOP_NS");

		threads();
		phase_a(CLOCK_MONOTONIC, atof(argv[2]));
		threads();
		printf("start %s\nstop %s\n", start != NULL ? start : "0", stop != NULL ? stop : "0");
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "closed") == 0) {
		if (close_all(argc > 3 ? argv[3] : "range") != 0)
			return 1;
		phase_a(CLOCK_THREAD_CPUTIME_ID, atof(argv[2]));
		if (pipe_lost() != 0)
			printf("pipe lost %ld bytes\n", pipe_lost());
		else
			printf("closed\n");
		return 0;
	}
	if (argc >= 3 && strcmp(argv[1], "vforked") == 0) {
		int i, n = atoi(argv[2]), status;

		phase_a(CLOCK_THREAD_CPUTIME_ID, 0.1);
		for (i = 0; i < n; i++) {
			pid_t pid = vfork();

			if (pid == 0) {
				close_range(3, ~0u, 0);
				execl("/bin/true", "true", (char *)NULL);
				_exit(127);
			}
			if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
			    WEXITSTATUS(status) != 0) {
				fprintf(stderr, "ctlless: child %d failed\n", i);
				return 1;
			}
		}
		printf("vforked\n");
		return 0;
	}
	fprintf(stderr, "usage: ctlless threads | steps DIR SECONDS | window SECONDS | closed SECONDS [range|each|dup2|dup3|pipe] | vforked N\n");
	return 2;
}
