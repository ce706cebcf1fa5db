/* timer-cases.c - programs that exercise collect-timer's edge cases
 *
 * timer-cases MODE [args]; modes:
 *   churn N       N short threads, in waves of 8; half return, half call
 *                 pthread_exit, some detached; prints the POSIX timers and
 *                 the perf event descriptors left
 *   sigprof-late  installs its own SIGPROF handler and ITIMER_PROF in main,
 *                 spins, prints how many of its own signals it got
 *   sigprof-early the same from a constructor (after profiling starts)
 *   sigprof-exec  starts ITIMER_PROF (1 ms), ignores SIGPROF and execs
 *                 itself (execl) in mode sigprof-early: SIGPROF must stay
 *                 ignored across the exec, and profiling with SIGPROF off
 *                 in the new image
 *   execs N       N times in turn, forks a child that spins 2 ms and execs
 *                 /bin/true; prints "killed K": the children that died of a
 *                 signal (a sampling signal pending across the exec, say)
 *   exit N        spins, then _exit(N) (no exit handlers)
 *   fork          forks a child that spins too; waits for it
 *   exec          spins, then execs itself in mode "spin" (same pid)
 *   deep N        recursion N deep, spinning at the bottom
 *   wide S        for S seconds, recursion to random depths up to 1000 with a
 *                 short spin at the bottom: many distinct deep stacks
 *   rename        a thread renames itself "worker-1" and spins
 *   blocked       a thread that blocks SIGPROF spins beside one that does not
 *                 (0.3 s each), then unblocks it and spins 10 ms more
 *   blocked-end   the same, but the thread ends with SIGPROF blocked
 *   crash         spins, then dereferences NULL
 *   abort         spins, then calls abort()
 *   forever       prints its pid, then spins in spin_forever until killed
 *   forktree PROG [ARGS]  forks two children: one execs PROG ARGS, the other
 *                 forks a grandchild that spins in grandchild_work, waits
 *                 for it and spins in child_work; the parent waits for
 *                 both and spins in parent_work; each prints "pid ROLE PID"
 *                 (each spins with as few others running as can be: CPU
 *                 timers under-sample a process that fights for a CPU)
 *   fdclobber F S closes every descriptor from 3 up (closefrom), opens its
 *                 own file F, writes 4 KiB to it, duplicates it onto every
 *                 descriptor from 3 to 255, spins S seconds, then checks
 *                 that F still holds exactly its 4 KiB
 *   chdir DIR     changes to DIR, forks a child that spins, spins too
 *   eintr S       for S seconds one thread spins while two threads pass
 *                 bytes through a pipe with blocking read and write, doing
 *                 some work between them; prints how many calls failed
 *                 with EINTR
 *   sigint-own    installs a SIGINT handler, prints its pid, spins until
 *                 the signal comes, then exits with status 42
 *   churn-rss N   N short threads like churn; prints the growth of the
 *                 anonymous memory (RssAnon, kB) from the first quarter of
 *                 the threads to the end
 *   killcpu PID   reads the CPU clock of process PID, sends it SIGKILL at
 *                 once, prints the CPU time in ns
 *   setuid S      becomes user 65534 (nobody) with setuid(), then spins S
 *                 seconds; run as root
 *   setuid-raw S  the same with the system call itself, not libc's
 *   spin S        spins about S seconds (default 0.3)
 *
 * With TIMER_CASES_CRUNCH set in the environment, the modes spin, forever
 * and sigprof-* compute without a system call in their loop instead of
 * reading their CPU clock as they go (see busy()).
 *   crowd N S     N processes (this one and N-1 children) spin S CPU seconds
 *                 each at the same time: the even ones read their CPU clock
 *                 every microsecond or so (spin), the odd ones only compute
 *                 (crunch); each prints "pid spin|crunch PID"
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;
static volatile int own_signals;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin(double seconds)
{
	double end = cpu_now() + seconds;
	uint64_t x = 1;

	while (cpu_now() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1;
	sink = x;
}

static int count_timers(void)
{
	FILE *f = fopen("/proc/self/timers", "r");
	char line[256];
	int n = 0;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		n += strncmp(line, "ID:", 3) == 0;
	fclose(f);
	return n;
}

/* The descriptors open on perf events ("anon_inode:[perf_event]"). */
static int count_perf_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char path[64], target[64];
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = '\0';
			n += strstr(target, "perf_event") != NULL;
		}
	}
	closedir(d);
	return n;
}

static void *churn_thread(void *arg)
{
	long i = (long)arg;

	spin(0.0005);
	if (i % 2)
		pthread_exit(NULL);
	return NULL;
}

static int churn_range(int from, int n)
{
	pthread_t t[8];

	for (int i = from; i < n; i += 8) {
		for (int j = 0; j < 8; j++) {
			if (pthread_create(&t[j], NULL, churn_thread, (void *)(long)(i + j)) != 0) {
				fprintf(stderr, "pthread_create: failed at %d\n", i + j);
				return 1;
			}
			if (j == 7)
				pthread_detach(t[j]);
		}
		for (int j = 0; j < 7; j++)
			pthread_join(t[j], NULL);
	}
	return 0;
}

static int mode_churn(int n)
{
	if (churn_range(0, n) != 0)
		return 1;
	/* The detached ones finish on their own time, on a loaded machine
	 * later than any fixed wait: what is left after 10 s leaked. */
	for (int k = 0; k < 1000 && (count_timers() > 1 || count_perf_fds() > 1); k++)
		usleep(10000);
	printf("timers left: %d\n", count_timers());
	printf("perf events left: %d\n", count_perf_fds());
	return 0;
}

static long rss_anon_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "RssAnon: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static int mode_churn_rss(int n)
{
	long before, after;

	if (churn_range(0, n / 4) != 0)
		return 1;
	usleep(50000);
	before = rss_anon_kb();
	if (churn_range(n / 4, n) != 0)
		return 1;
	usleep(100000);
	after = rss_anon_kb();
	printf("rss growth: %ld kB (%ld to %ld)\n", after - before, before, after);
	return 0;
}

/* Distinct functions for the processes of forktree: no tail calls, so each
 * stays on the stack above spin. */
__attribute__((noinline)) static void parent_work(double s)
{
	spin(s);
	sink++;
}

__attribute__((noinline)) static void child_work(double s)
{
	spin(s);
	sink++;
}

__attribute__((noinline)) static void grandchild_work(double s)
{
	spin(s);
	sink++;
}

static void crunch(double s, double per_unit);
static double crunch_calibrate(void);

__attribute__((noinline)) static void spin_forever(void)
{
	if (getenv("TIMER_CASES_CRUNCH") != NULL) {
		double per_unit = crunch_calibrate();

		for (;;)
			crunch(1.0, per_unit);
	}
	for (;;)
		spin(1.0);
}

/* Pure computation for about s seconds of CPU: no system call until the
 * end (the work was timed once, before). */
__attribute__((noinline)) static void crunch(double s, double per_unit)
{
	uint64_t x = 1;
	long units = (long)(s / per_unit);

	for (long u = 0; u < units; u++)
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1;
	sink = x;
}

/* The CPU time of one unit of crunch(), from a 20 ms run of it. */
static double crunch_calibrate(void)
{
	double t0 = cpu_now(), per_unit;

	crunch(0.02, 0.02 / 20000);
	per_unit = (cpu_now() - t0) / 20000;
	return per_unit > 0 ? per_unit : 1e-6;
}

static int mode_crowd(int n, double s)
{
	/* How long 1000 steps take, from a short run (before any fork). */
	double t0 = cpu_now();
	crunch(0.02, 0.02 / 20000);
	double per_unit = (cpu_now() - t0) / 20000;
	int rc = 0, k;

	if (per_unit <= 0)
		per_unit = 1e-6;
	fflush(stdout);
	for (k = 1; k < n; k++) {
		pid_t c = fork();
		if (c == 0)
			break;
		if (c < 0)
			return 1;
	}
	if (k == n)
		k = 0;
	printf("pid %s %d\n", k % 2 == 0 ? "spin" : "crunch", (int)getpid());
	fflush(stdout);
	if (k % 2 == 0)
		spin(s);
	else
		crunch(s, per_unit);
	if (k != 0)
		exit(0);
	for (int st; wait(&st) > 0;)
		rc |= !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return rc;
}

static int mode_forktree(char **prog)
{
	pid_t a, b;
	int st, rc = 0;

	fflush(stdout);
	a = fork();
	if (a == 0) {
		printf("pid exec %d\n", (int)getpid());
		fflush(stdout);
		execv(prog[0], prog);
		perror("execv");
		_exit(1);
	}
	b = fork();
	if (b == 0) {
		pid_t g;

		printf("pid child %d\n", (int)getpid());
		fflush(stdout);
		g = fork();
		if (g == 0) {
			printf("pid grandchild %d\n", (int)getpid());
			fflush(stdout);
			grandchild_work(0.3);
			exit(0);
		}
		waitpid(g, &st, 0);
		child_work(0.3);
		exit(WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1);
	}
	printf("pid parent %d\n", (int)getpid());
	fflush(stdout);
	if (a < 0 || b < 0)
		return 1;
	waitpid(a, &st, 0);
	rc |= !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	waitpid(b, &st, 0);
	rc |= !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	parent_work(0.3);
	return rc;
}

static int mode_fdclobber(const char *file, double seconds)
{
	static char block[4096], back[4096 + 1]; /* not on the stack: the copy reaches main */
	int fd;
	ssize_t n;

	for (size_t i = 0; i < sizeof(block); i++)
		block[i] = (char)('a' + i % 26);
	closefrom(3);
	fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, block, sizeof(block)) != (ssize_t)sizeof(block)) {
		perror(file);
		return 1;
	}
	for (int i = 3; i < 256; i++)
		if (i != fd && dup2(fd, i) < 0) {
			perror("dup2");
			return 1;
		}
	spin(seconds);
	n = pread(fd, back, sizeof(back), 0);
	if (n != (ssize_t)sizeof(block) || memcmp(back, block, sizeof(block)) != 0) {
		printf("own file changed: %zd bytes\n", n);
		return 1;
	}
	printf("own file intact\n");
	return 0;
}

static int mode_chdir(const char *dir)
{
	pid_t pid;
	int st;

	if (chdir(dir) != 0) {
		perror(dir);
		return 1;
	}
	pid = fork();
	spin(0.2);
	if (pid == 0)
		exit(0);
	waitpid(pid, &st, 0);
	return 0;
}

static int pipefd[2];
static volatile int eintr_done;
static volatile long eintr_count, eintr_bytes;

__attribute__((noinline)) static void little_work(void)
{
	uint64_t x = sink;

	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ull + 1;
	sink = x;
}

static void *eintr_writer(void *arg)
{
	char c = 'x';

	(void)arg;
	while (!eintr_done) {
		little_work();
		if (write(pipefd[1], &c, 1) < 0 && errno == EINTR)
			__atomic_fetch_add(&eintr_count, 1, __ATOMIC_RELAXED);
	}
	close(pipefd[1]);
	return NULL;
}

static void *eintr_reader(void *arg)
{
	char buf[64];
	ssize_t n;

	(void)arg;
	for (;;) {
		n = read(pipefd[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR) {
			__atomic_fetch_add(&eintr_count, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (n <= 0)
			break;
		eintr_bytes += n;
		little_work();
	}
	return NULL;
}

static int mode_eintr(double seconds)
{
	pthread_t w, r;

	if (pipe(pipefd) != 0)
		return 1;
	pthread_create(&r, NULL, eintr_reader, NULL);
	pthread_create(&w, NULL, eintr_writer, NULL);
	spin(seconds);
	eintr_done = 1;
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	printf("EINTR: %ld (%ld bytes)\n", eintr_count, eintr_bytes);
	return 0;
}

static volatile sig_atomic_t got_sigint;

static void on_sigint(int sig)
{
	(void)sig;
	got_sigint = 1;
}

static void own_handler(int sig)
{
	(void)sig;
	own_signals++;
}

/* s seconds of CPU time for the modes spin, forever and sigprof-*:
 * spin(), or with TIMER_CASES_CRUNCH set crunch(), whose loop makes no
 * system call.  A thread that reads its CPU clock in its loop can be
 * preempted between two ticks again and again on a busy machine, and the
 * kernel, which checks CPU timers at the tick for the thread then running,
 * misses it: most of its ITIMER_PROF signals are dropped (5 to 24 of 50
 * beside a 2-thread CPU hog), and the profiler's samples come from its
 * sweeper, 3 to 4 periods apart.  One that only computes is preempted at
 * the tick and missed by neither. */
static void busy(double s)
{
	double t0, per_unit;

	if (getenv("TIMER_CASES_CRUNCH") == NULL) {
		spin(s);
		return;
	}
	t0 = cpu_now();
	per_unit = crunch_calibrate();
	if (s > cpu_now() - t0)
		crunch(s - (cpu_now() - t0), per_unit);
}

static int mode_sigprof(void)
{
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };

	if (signal(SIGPROF, own_handler) == SIG_ERR || setitimer(ITIMER_PROF, &it, NULL) != 0) {
		perror("sigprof");
		return 1;
	}
	busy(0.5);
	printf("own SIGPROF signals: %d\n", own_signals);
	return 0;
}

static int early;
__attribute__((constructor)) static void early_sigprof(void)
{
	const char *m = getenv("TIMER_CASES_EARLY");
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };

	if (m != NULL) {
		early = 1;
		signal(SIGPROF, own_handler);
		setitimer(ITIMER_PROF, &it, NULL);
	}
}

__attribute__((noinline)) static int deep(int n)
{
	int r;

	if (n == 0) {
		spin(0.3);
		return 0;
	}
	r = deep(n - 1);
	sink += (uint64_t)r; /* keeps the call a real call */
	return r + 1;
}

__attribute__((noinline)) static int wide(int n, double seconds)
{
	int r;

	if (n == 0) {
		spin(seconds);
		return 0;
	}
	r = wide(n - 1, seconds);
	sink += (uint64_t)r;
	return r + 1;
}

static void *rename_thread(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker-1");
	spin(0.2);
	return NULL;
}

static void *blocked_thread(void *arg)
{
	sigset_t s;

	sigemptyset(&s);
	sigaddset(&s, SIGPROF);
	pthread_sigmask(SIG_BLOCK, &s, NULL);
	spin(0.3);
	if (arg != NULL)
		return NULL; /* blocked to the end */
	pthread_sigmask(SIG_UNBLOCK, &s, NULL);
	spin(0.01);
	return NULL;
}

/* Its own SIGINT handler: says so and ends with 42. */
static int mode_sigint_own(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigaction(SIGINT, &sa, NULL);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	while (!got_sigint)
		spin(0.01);
	printf("got SIGINT\n");
	return 42;
}

/* Prints the CPU time of process pid, then kills it. */
static int mode_killcpu(pid_t pid)
{
	struct timespec ts;
	clockid_t clock;

	if (clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &ts) != 0 ||
	    kill(pid, SIGKILL) != 0) {
		perror("killcpu");
		return 1;
	}
	printf("%lld\n", (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec);
	return 0;
}

/* n children that each spin 2 ms and exec /bin/true: how many were killed. */
static int mode_execs(int n)
{
	int killed = 0;

	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			spin(0.002);
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &st, 0) != pid) {
			perror("fork");
			return 1;
		}
		if (WIFSIGNALED(st)) {
			printf("child %d: killed by signal %d\n", i, WTERMSIG(st));
			killed++;
		}
	}
	printf("killed %d\n", killed);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "spin";
	pthread_t t;

	if (strcmp(mode, "churn") == 0)
		return mode_churn(argc > 2 ? atoi(argv[2]) : 2000);
	if (strcmp(mode, "churn-rss") == 0)
		return mode_churn_rss(argc > 2 ? atoi(argv[2]) : 20000);
	if (strcmp(mode, "forktree") == 0 && argc > 2)
		return mode_forktree(argv + 2);
	if (strcmp(mode, "crowd") == 0)
		return mode_crowd(argc > 2 ? atoi(argv[2]) : 4, argc > 3 ? atof(argv[3]) : 0.3);
	if (strcmp(mode, "fdclobber") == 0 && argc > 2)
		return mode_fdclobber(argv[2], argc > 3 ? atof(argv[3]) : 1.0);
	if (strcmp(mode, "chdir") == 0 && argc > 2)
		return mode_chdir(argv[2]);
	if (strcmp(mode, "eintr") == 0)
		return mode_eintr(argc > 2 ? atof(argv[2]) : 1.0);
	if (strcmp(mode, "forever") == 0) {
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
		spin_forever();
	}
	if (strcmp(mode, "sigint-own") == 0)
		return mode_sigint_own();
	if (strcmp(mode, "killcpu") == 0 && argc > 2)
		return mode_killcpu((pid_t)atoi(argv[2]));
	if (strcmp(mode, "abort") == 0) {
		spin(0.2);
		abort();
	}
	if (strcmp(mode, "sigprof-late") == 0 || strcmp(mode, "sigprof-early") == 0) {
		if (early) {
			busy(0.5);
			printf("own SIGPROF signals: %d\n", own_signals);
			return 0;
		}
		return mode_sigprof();
	}
	if (strcmp(mode, "sigprof-exec") == 0) {
		/* 1 ms: a new image that does not inherit the SIG_IGN (the
		 * profiler's handler reset by the exec) dies before its
		 * constructors, most of the time */
		struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

		signal(SIGPROF, SIG_IGN);
		setitimer(ITIMER_PROF, &it, NULL);
		setenv("TIMER_CASES_EARLY", "1", 1);
		execl("/proc/self/exe", argv[0], "sigprof-early", (char *)NULL);
		perror("execl");
		return 1;
	}
	if (strcmp(mode, "execs") == 0)
		return mode_execs(argc > 2 ? atoi(argv[2]) : 50);
	if (strcmp(mode, "exit") == 0) {
		spin(0.2);
		_exit(argc > 2 ? atoi(argv[2]) : 0);
	}
	if (strcmp(mode, "fork") == 0) {
		pid_t pid = fork();
		int st;

		spin(0.2);
		if (pid == 0)
			_exit(0);
		waitpid(pid, &st, 0);
		return 0;
	}
	if (strcmp(mode, "exec") == 0) {
		spin(0.1);
		execl("/proc/self/exe", argv[0], "spin", "0.1", (char *)NULL);
		perror("execl");
		return 1;
	}
	if (strcmp(mode, "deep") == 0)
		return deep(argc > 2 ? atoi(argv[2]) : 2000) > 0 ? 0 : 1;
	if (strcmp(mode, "wide") == 0) {
		double end = cpu_now() + (argc > 2 ? atof(argv[2]) : 1.0);

		srand(1);
		while (cpu_now() < end)
			wide(1 + rand() % 1000, 0.002);
		return 0;
	}
	if (strcmp(mode, "rename") == 0) {
		pthread_create(&t, NULL, rename_thread, NULL);
		pthread_join(t, NULL);
		return 0;
	}
	if (strcmp(mode, "blocked") == 0 || strcmp(mode, "blocked-end") == 0) {
		sigset_t s, old;

		/* The thread starts with SIGPROF blocked (it inherits the
		 * mask): no sample can come before it blocks it itself. */
		sigemptyset(&s);
		sigaddset(&s, SIGPROF);
		pthread_sigmask(SIG_BLOCK, &s, &old);
		pthread_create(&t, NULL, blocked_thread, strcmp(mode, "blocked") == 0 ? NULL : (void *)1);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		spin(0.3);
		pthread_join(t, NULL);
		return 0;
	}
	if (strcmp(mode, "setuid") == 0 || strcmp(mode, "setuid-raw") == 0) {
		int rc = strcmp(mode, "setuid") == 0 ? setuid(65534)
						     : (int)syscall(SYS_setresuid, 65534, 65534, 65534);

		if (rc != 0) {
			perror("setuid");
			return 1;
		}
		spin(argc > 2 ? atof(argv[2]) : 0.3);
		return 0;
	}
	if (strcmp(mode, "crash") == 0) {
		spin(0.2);
		*(volatile int *)(uintptr_t)argc = 0;
		return 0;
	}
	busy(argc > 2 ? atof(argv[2]) : 0.3);
	return 0;
}
