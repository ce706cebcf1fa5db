/* driver.c - the shape of a compiler driver: a process that starts others
 *
 * driver: forks and execs "driver cc1 0.6" itself, and runs "driver as 0.3"
 * through a shell (fork, exec of /bin/sh, which execs it), burns 0.2 s of
 * CPU in driver_work while they run, and waits for both.  cc1_work and
 * as_work burn the CPU time their argument says.  Each process prints
 * "cpu NAME PID NS" at its end: the CPU time it used itself
 * (CLOCK_PROCESS_CPUTIME_ID, its children's not included).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

static __attribute__((noinline)) void burn(double seconds)
{
	double end = cpu_now() + seconds;

	while (cpu_now() < end)
		for (int i = 0; i < 20000; i++)
			sink += (unsigned long)i * 2654435761u;
}

static __attribute__((noinline)) void driver_work(double s) { burn(s); }
static __attribute__((noinline)) void cc1_work(double s) { burn(s); }
static __attribute__((noinline)) void as_work(double s) { burn(s); }

static void say_cpu(const char *name)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	printf("cpu %s %d %lld\n", name, (int)getpid(),
	       (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	char cmd[4200];
	pid_t a, b;

	if (argc == 3 && strcmp(argv[1], "cc1") == 0) {
		cc1_work(atof(argv[2]));
		say_cpu("cc1");
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "as") == 0) {
		as_work(atof(argv[2]));
		say_cpu("as");
		return 0;
	}
	fflush(stdout);
	a = fork();
	if (a == 0) {
		execl("/proc/self/exe", argv[0], "cc1", "0.6", (char *)NULL);
		_exit(127);
	}
	snprintf(cmd, sizeof cmd, "exec '%s' as 0.3", argv[0]);
	b = fork();
	if (b == 0) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	driver_work(0.2);
	if (a < 0 || b < 0 || waitpid(a, NULL, 0) != a || waitpid(b, NULL, 0) != b)
		return 1;
	say_cpu("driver");
	return 0;
}
