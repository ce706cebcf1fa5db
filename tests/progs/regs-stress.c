/* regs-stress.c - awkward stacks for the collector's stack copies
 *
 * regs-stress MODE [seconds]: prints a checksum that does not depend on
 * timing, so a run under collect-timer can be compared with a bare one.
 *   deep     the main thread recurses 3000 calls deep and spins there
 *   small    a thread with a 64 KiB stack spins ~40 KiB deep, another
 *            spins with its stack pointer a few hundred bytes from the top
 *   many     64 threads, each spinning a few ms, 8 at a time
 *   signals  a thread takes SIGUSR1 10000s of times (its handler spins, on
 *            a sigaltstack half the time) while the main thread spins
 *   magic    a thread fills a local array with a known pattern and spins
 *            below it: the stack copies must contain the pattern
 *   dlopen   loads the library named by the second argument, spins in its
 *            function "plugin_spin", closes it, then spins in main
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAGIC 0x5a5a1234c0ffee00ull

static double seconds = 1.0;
static volatile uint64_t sink;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Deterministic work: n steps of an LCG. */
__attribute__((noinline)) static uint64_t spin(uint64_t x, long n)
{
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/* Spins for about s seconds of CPU in units of fixed work; returns how
 * many units were done in the checksum-free variable. */
static uint64_t spin_for(double s)
{
	double end = cpu_now() + s;
	uint64_t x = 1;

	while (cpu_now() < end)
		x = spin(x, 10000);
	return x;
}

__attribute__((noinline)) static uint64_t recurse(int depth, double s)
{
	volatile char pad[32];
	uint64_t r;

	pad[0] = (char)depth;
	if (depth == 0)
		r = spin_for(s);
	else
		r = recurse(depth - 1, s) + (uint64_t)pad[0];
	return r;
}

static void *small_deep(void *arg)
{
	(void)arg;
	sink += recurse(500, seconds / 2); /* ~500 * 64 bytes: ~32-40 KiB */
	return NULL;
}

static void *small_shallow(void *arg)
{
	(void)arg;
	sink += spin_for(seconds / 2);
	return NULL;
}

static void run_small(void)
{
	pthread_attr_t attr;
	pthread_t a, b;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	if (pthread_create(&a, &attr, small_deep, NULL) != 0 ||
	    pthread_create(&b, &attr, small_shallow, NULL) != 0) {
		perror("pthread_create");
		exit(1);
	}
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_attr_destroy(&attr);
}

static void *many_one(void *arg)
{
	(void)arg;
	sink += spin_for(0.004 + seconds / 200);
	return NULL;
}

static void run_many(void)
{
	for (int round = 0; round < 8; round++) {
		pthread_t t[8];

		for (int i = 0; i < 8; i++)
			if (pthread_create(&t[i], NULL, many_one, NULL) != 0) {
				perror("pthread_create");
				exit(1);
			}
		for (int i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
	}
}

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
	(void)sig;
	sink += spin(handled, 20000);
	handled++;
}

static void *signal_target(void *arg)
{
	static char altstack[64 << 10];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa;
	pid_t tid = gettid();
	long n = 0;
	double end = cpu_now() + seconds / 2;

	(void)arg;
	sigaltstack(&ss, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	while (cpu_now() < end) {
		sa.sa_flags = (n & 1) ? SA_ONSTACK : 0;
		sigaction(SIGUSR1, &sa, NULL);
		tgkill(getpid(), tid, SIGUSR1);
		n++;
	}
	return (void *)n;
}

static void run_signals(void)
{
	pthread_t t;
	void *n;

	if (pthread_create(&t, NULL, signal_target, NULL) != 0) {
		perror("pthread_create");
		exit(1);
	}
	sink += spin_for(seconds / 2);
	pthread_join(t, &n);
	if ((long)n != (long)handled) {
		fprintf(stderr, "regs-stress: %ld signals sent, %ld handled\n", (long)n,
			(long)handled);
		exit(1);
	}
	fprintf(stderr, "regs-stress: %ld signals handled\n", (long)n);
}

__attribute__((noinline)) static uint64_t magic_frame(double s)
{
	volatile uint64_t pattern[64];
	uint64_t r;

	for (int i = 0; i < 64; i++)
		pattern[i] = MAGIC + (uint64_t)i;
	r = spin_for(s);
	return r + pattern[5];
}

static void *magic_thread(void *arg)
{
	(void)arg;
	sink += magic_frame(seconds);
	return NULL;
}

static void run_dlopen(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);
	uint64_t (*fn)(double);

	if (h == NULL) {
		fprintf(stderr, "regs-stress: %s\n", dlerror());
		exit(1);
	}
	*(void **)&fn = dlsym(h, "plugin_spin");
	if (fn == NULL) {
		fprintf(stderr, "regs-stress: %s\n", dlerror());
		exit(1);
	}
	sink += fn(seconds / 2);
	if (dlclose(h) != 0) {
		fprintf(stderr, "regs-stress: %s\n", dlerror());
		exit(1);
	}
	sink += spin_for(seconds / 2);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "deep";
	pthread_t t;

	if (argc > 2 && strcmp(mode, "dlopen") != 0)
		seconds = atof(argv[2]);
	if (strcmp(mode, "deep") == 0) {
		sink += recurse(3000, seconds);
	} else if (strcmp(mode, "small") == 0) {
		run_small();
	} else if (strcmp(mode, "many") == 0) {
		run_many();
	} else if (strcmp(mode, "signals") == 0) {
		run_signals();
	} else if (strcmp(mode, "magic") == 0) {
		pthread_create(&t, NULL, magic_thread, NULL);
		pthread_join(t, NULL);
	} else if (strcmp(mode, "dlopen") == 0 && argc > 2) {
		run_dlopen(argv[2]);
	} else {
		fprintf(stderr, "usage: regs-stress deep|small|many|signals|magic [seconds]\n"
				"       regs-stress dlopen LIBRARY\n");
		return 2;
	}
	printf("%s: ok\n", mode);
	return 0;
}
