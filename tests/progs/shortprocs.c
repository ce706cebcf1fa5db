/* shortprocs.c - a run of many short processes, a few of them busy
 *
 * usage: shortprocs N BUSY_MS
 *
 * Forks N children one after the other, waiting for each.  Child i:
 *   i % 10 == 3: spins BUSY_MS of CPU time in spin_child(), then forks a
 *                grandchild that spins BUSY_MS in spin_grandchild();
 *   i % 10 == 7: starts a thread that spins BUSY_MS in spin_thread() while
 *                the main thread only waits for it (pthread_join);
 *   i % 10 == 5: spins BUSY_MS in spin_killed(), then kills itself with
 *                SIGKILL (no exit handler runs);
 *   i % 10 == 1: runs /bin/true (an exec at once);
 *   any other:   exits at once.
 * Prints one line per busy process, "busy KIND PID" (KIND child,
 * grandchild or thread), and at the end "processes P", every process the
 * program made, itself included.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Spins until this thread has used ms of CPU time. */
static void spin(double ms)
{
	double end = cpu_ms() + ms;

	while (cpu_ms() < end)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i * 2654435761u;
}

static double busy_ms;

__attribute__((noinline)) static void spin_child(void)
{
	spin(busy_ms);
}

__attribute__((noinline)) static void spin_grandchild(void)
{
	spin(busy_ms);
}

__attribute__((noinline)) static void spin_killed(void)
{
	spin(busy_ms);
}

__attribute__((noinline)) static void *spin_thread(void *unused)
{
	(void)unused;
	spin(busy_ms);
	return NULL;
}

static void say(const char *kind)
{
	printf("busy %s %d\n", kind, (int)getpid());
	fflush(stdout);
}

static void child(int i)
{
	pthread_t t;
	pid_t g;

	if (i % 10 == 3) {
		say("child");
		spin_child();
		g = fork();
		if (g == 0) {
			say("grandchild");
			spin_grandchild();
			exit(0);
		}
		if (g > 0)
			waitpid(g, NULL, 0);
	} else if (i % 10 == 7) {
		say("thread");
		if (pthread_create(&t, NULL, spin_thread, NULL) != 0)
			_exit(2);
		pthread_join(t, NULL);
	} else if (i % 10 == 5) {
		say("killed");
		spin_killed();
		raise(SIGKILL);
	} else if (i % 10 == 1) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(3);
	}
	exit(0);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, made = 1;

	busy_ms = argc > 2 ? atof(argv[2]) : 100;
	for (int i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0) {
			perror("shortprocs: fork");
			return 1;
		}
		if (pid == 0)
			child(i);
		if (waitpid(pid, &status, 0) != pid ||
		    (i % 10 == 5 ? !WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL
				 : !WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
			fprintf(stderr, "shortprocs: child %d failed\n", i);
			return 1;
		}
		made += 1 + (i % 10 == 3);
	}
	printf("processes %d\n", made);
	return 0;
}
