/* execchain.c - a process that runs itself again and again by exec
 *
 * usage: execchain N SPIN_US
 *
 * Spins SPIN_US of its thread's CPU time in spin_image(), then execs
 * itself with N - 1, until N is 0.  Every image runs on the same thread,
 * whose CPU clock goes on across the execs: the last prints it as "cpu
 * MS" (every image's CPU time, the execs' and the starts' included).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

__attribute__((noinline)) static void spin_image(double us)
{
	double end = cpu_us() + us;

	while (cpu_us() < end)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[1]) : 0;
	char left[32];

	if (argc < 3)
		return 2;
	spin_image(atof(argv[2]));
	if (n <= 0) {
		printf("cpu %.3f\n", cpu_us() / 1e3);
		return 0;
	}
	snprintf(left, sizeof(left), "%ld", n - 1);
	execl("/proc/self/exe", argv[0], left, argv[2], (char *)NULL);
	perror("execchain: exec");
	return 1;
}
