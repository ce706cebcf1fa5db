/* pauser.c - a program for the control signal and --delay
 *
 * pauser toggle SECONDS: a worker thread spins in background() all along;
 *   the main thread spins SECONDS of CPU time in phase_a(), sends itself
 *   SIGUSR2, sleeps 0.3 s, spins SECONDS in phase_b(), sends SIGUSR2 again,
 *   sleeps 0.3 s and spins SECONDS in phase_c().  Prints each phase's CPU
 *   time: "phase a|b|c MS".
 * pauser handler|signal SECONDS: installs a SIGUSR2 handler of its own,
 *   with sigaction or signal, after printing the action it was told was
 *   there ("before default|ignore|handler"); sends itself SIGUSR2 three
 *   times while it spins SECONDS in phase_a(), then prints "caught N".
 * pauser window SECONDS: spins SECONDS of wall-clock time in phase_a(),
 *   then prints the environment's start and stop times ("start NS",
 *   "stop NS").
 * pauser execkill N: N times, forks a child that execs this program
 *   ("pauser window 0.02") and sends it SIGUSR2 at once, or after up to 2 ms
 *   (the child is anywhere between the fork and its main then); prints
 *   "killed K of N", K the children that a signal ended.
 * pauser prefork N DIR [handler]: a pre-fork server: forks N workers, each
 *   of which writes DIR/wI (its pid) and spins in phase_a() until DIR/stop
 *   exists; the parent spins in phase_c() meanwhile, and once DIR/more
 *   exists forks one more worker, DIR/wN, that spins in phase_b().  With
 *   "handler" the parent installs a SIGUSR2 handler of its own, and each
 *   worker again after its fork.  Each worker prints "worker I PID caught
 *   K", then the parent "caught K" (the SIGUSR2 its handler got).
 * pauser until FILE: the main thread spins in phase_a() and a worker in
 *   background() until FILE exists (at most a minute), then each prints
 *   the CPU time it used in all ("cpu main|worker NS").
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile uint64_t sink;
static volatile sig_atomic_t caught;
static volatile int done;
static double worker_cpu;

static double now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void work(unsigned n)
{
	volatile uint64_t acc = 0;

	for (unsigned i = 0; i < n; i++)
		acc += i * 2654435761u;
	sink += acc;
}

/* Spins until this thread has used seconds more CPU time, in units of
 * random size (so that the work does not beat with the tick). */
#define SPIN(name)                                                                  \
	__attribute__((noinline)) void name(double seconds)                         \
	{                                                                           \
		double end = now(CLOCK_THREAD_CPUTIME_ID) + seconds;                \
		while (now(CLOCK_THREAD_CPUTIME_ID) < end)                          \
			work(2000 + (unsigned)(random() % 2000));                    \
	}
SPIN(phase_a)
SPIN(phase_b)
SPIN(phase_c)

__attribute__((noinline)) void background(void)
{
	while (!done)
		work(2000 + (unsigned)(random() % 2000));
}

static void *worker(void *unused)
{
	(void)unused;
	background();
	worker_cpu = now(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

static void on_usr2(int sig)
{
	(void)sig;
	caught++;
}

static int exists(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* A worker of "prefork": never returns (exits, so that its trace is
 * finished). */
static void prefork_worker(int i, const char *dir, int handler, void (*spin)(double))
{
	char path[4096];
	FILE *f;

	if (handler) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr2;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR2, &sa, NULL);
	}
	caught = 0;
	snprintf(path, sizeof(path), "%s/w%d.part", dir, i);
	f = fopen(path, "w");
	if (f != NULL) {
		char done[4096];

		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
		snprintf(done, sizeof(done), "%s/w%d", dir, i);
		rename(path, done);
	}
	while (!exists(dir, "stop"))
		spin(0.01);
	printf("worker %d %d caught %d\n", i, (int)getpid(), (int)caught);
	exit(0);
}

static void nap(void)
{
	struct timespec ts = { 0, 300000000 };

	while (nanosleep(&ts, &ts) != 0)
		;
}

int main(int argc, char **argv)
{
	double s = argc > 2 ? atof(argv[2]) : 0.5, t0;
	const char *mode = argc > 1 ? argv[1] : "toggle";

	if (strcmp(mode, "toggle") == 0) {
		pthread_t w;
		double c0, c1;

		pthread_create(&w, NULL, worker, NULL);
		c0 = now(CLOCK_THREAD_CPUTIME_ID);
		phase_a(s);
		c1 = now(CLOCK_THREAD_CPUTIME_ID);
		printf("phase a %.0f\n", (c1 - c0) * 1e3);
		kill(getpid(), SIGUSR2);
		nap();
		c0 = now(CLOCK_THREAD_CPUTIME_ID);
		phase_b(s);
		c1 = now(CLOCK_THREAD_CPUTIME_ID);
		printf("phase b %.0f\n", (c1 - c0) * 1e3);
		kill(getpid(), SIGUSR2);
		nap();
		c0 = now(CLOCK_THREAD_CPUTIME_ID);
		phase_c(s);
		c1 = now(CLOCK_THREAD_CPUTIME_ID);
		printf("phase c %.0f\n", (c1 - c0) * 1e3);
		done = 1;
		pthread_join(w, NULL);
	} else if (strcmp(mode, "handler") == 0 || strcmp(mode, "signal") == 0) {
		struct sigaction sa, old;

		memset(&sa, 0, sizeof(sa));
		sigaction(SIGUSR2, NULL, &old);
		printf("before %s\n", (old.sa_flags & SA_SIGINFO) ? "handler"
				      : old.sa_handler == SIG_DFL ? "default"
				      : old.sa_handler == SIG_IGN ? "ignore" : "handler");
		if (strcmp(mode, "handler") == 0) {
			sa.sa_handler = on_usr2;
			sigemptyset(&sa.sa_mask);
			sigaction(SIGUSR2, &sa, NULL);
		} else {
			signal(SIGUSR2, on_usr2);
		}
		for (int i = 0; i < 3; i++) {
			kill(getpid(), SIGUSR2);
			phase_a(s / 3);
		}
		printf("caught %d\n", (int)caught);
	} else if (strcmp(mode, "window") == 0) {
		t0 = now(CLOCK_MONOTONIC);
		while (now(CLOCK_MONOTONIC) < t0 + s)
			phase_a(0.001);
		printf("start %s\nstop %s\n", getenv("PROFVIEW_START_NS") ? getenv("PROFVIEW_START_NS") : "0",
		       getenv("PROFVIEW_STOP_NS") ? getenv("PROFVIEW_STOP_NS") : "0");
	} else if (strcmp(mode, "prefork") == 0 && argc > 3) {
		int n = atoi(argv[2]), handler = argc > 4 && strcmp(argv[4], "handler") == 0, more = 0;
		const char *dir = argv[3];

		if (handler) {
			struct sigaction sa;

			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = on_usr2;
			sigemptyset(&sa.sa_mask);
			sigaction(SIGUSR2, &sa, NULL);
		}
		fflush(stdout);
		for (int i = 0; i < n; i++)
			if (fork() == 0)
				prefork_worker(i, dir, handler, phase_a);
		while (!exists(dir, "stop")) {
			phase_c(0.005);
			if (!more && exists(dir, "more")) {
				more = 1;
				if (fork() == 0)
					prefork_worker(n, dir, handler, phase_b);
			}
		}
		while (wait(NULL) > 0)
			;
		printf("caught %d\n", (int)caught);
	} else if (strcmp(mode, "execkill") == 0) {
		int n = argc > 2 ? atoi(argv[2]) : 10, killed = 0;

		for (int i = 0; i < n; i++) {
			char *args[] = { "pauser", "window", "0.02", NULL };
			int status;
			pid_t pid = fork();

			if (pid == 0) {
				execv("/proc/self/exe", args);
				_exit(127);
			}
			if (i % 3 != 0)
				usleep((useconds_t)(random() % 2000));
			kill(pid, SIGUSR2);
			if (waitpid(pid, &status, 0) == pid && WIFSIGNALED(status))
				killed++;
		}
		printf("killed %d of %d\n", killed, n);
	} else if (strcmp(mode, "until") == 0 && argc > 2) {
		pthread_t w;

		pthread_create(&w, NULL, worker, NULL);
		t0 = now(CLOCK_MONOTONIC);
		while (access(argv[2], F_OK) != 0 && now(CLOCK_MONOTONIC) < t0 + 60)
			phase_a(0.01);
		done = 1;
		pthread_join(w, NULL);
		printf("cpu main %.0f\ncpu worker %.0f\n", now(CLOCK_THREAD_CPUTIME_ID) * 1e9,
		       worker_cpu * 1e9);
	} else {
		fprintf(stderr, "pauser: unknown mode '%s'\n", mode);
		return 2;
	}
	return 0;
}
