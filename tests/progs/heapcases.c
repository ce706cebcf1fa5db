/* heapcases.c - known allocations for collect-heap's tests
 *
 *   heapcases known    kept() keeps 2000 blocks of 32 KiB to the end,
 *                      transient() allocates 4000 and frees each at once,
 *                      then peak() holds 3000 and frees them all before the
 *                      end: the heap is largest when peak()'s are all there
 *   heapcases entries  every entry point of the allocator, each from a
 *                      function of its own (ep_malloc, ep_calloc...), 256
 *                      blocks of 64 KiB each, kept; blocks allocated in a
 *                      constructor (in_ctor), an atexit handler (in_atexit)
 *                      and a signal handler (in_handler), kept
 *   heapcases fork     parent_work() keeps 16 MiB, then a child made by
 *                      fork keeps 16 MiB in child_work() and another runs
 *                      this program again (exec) to keep 16 MiB in
 *                      execd_work()
 *   heapcases quick    kept(), then _exit: no exit handler, no destructor
 *   heapcases hang F   hang_work() keeps 16 MiB, then writes its pid to F
 *                      and sleeps (to be killed)
 *   heapcases phases   phase_a() keeps 16 MiB, then 0.6 s later phase_b()
 *                      keeps 16 MiB, and 0.6 s later phase_a()'s are freed
 *   heapcases line     steady() keeps 40 MiB in blocks of 4 KiB, then
 *                      0.3 s later burst() holds 80 MiB more in blocks of
 *                      4 KiB for 0.3 s and frees them, then 0.3 s later the
 *                      program ends; it prints the CLOCK_MONOTONIC ns of
 *                      each step ("burst_start T", ...)
 *   heapcases threads  4 threads, each keeping 1000 blocks of 32 KiB in
 *                      thread_kept(), freeing 1000 at once in
 *                      thread_transient(), and allocating 1000 in
 *                      handoff() that the main thread frees after it ended
 *   heapcases twins    grab() keeps a block of 32 KiB for twin_a() and for
 *                      twin_b(), the same function twice, called in turn
 *                      (twin_a three times, then twin_b) 1000 times: the
 *                      stacks of grab's blocks differ only above the same
 *                      stack pointer
 *
 * A freed block's pointer goes through a volatile so that the compiler
 * keeps the allocation and its free. */
#define _GNU_SOURCE
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KIB 1024
static void *volatile sink;

#define KEEP(expr) do { void *p_ = (expr); if (!p_) abort(); memset(p_, 1, 64); sink = p_; } while (0)

__attribute__((noinline)) static void kept(void)
{
	for (int i = 0; i < 2000; i++)
		KEEP(malloc(32 * KIB));
}

__attribute__((noinline)) static void transient(void)
{
	for (int i = 0; i < 4000; i++) {
		sink = malloc(32 * KIB);
		free(sink);
	}
}

__attribute__((noinline)) static void peak(void)
{
	static void *held[3000];

	for (int i = 0; i < 3000; i++)
		held[i] = sink = malloc(32 * KIB);
	for (int i = 0; i < 3000; i++)
		free(held[i]);
}

__attribute__((noinline)) static void grab(void)
{
	KEEP(malloc(32 * KIB));
}

/* not merged into one, not a tail call */
__attribute__((noipa)) static void twin_a(void)
{
	grab();
	__asm__ volatile("" ::: "memory");
}

__attribute__((noipa)) static void twin_b(void)
{
	grab();
	__asm__ volatile("" ::: "memory");
}

#define EP_N 256
#define EP_SIZE (64 * KIB)

__attribute__((noinline)) static void ep_malloc(void) { for (int i = 0; i < EP_N; i++) KEEP(malloc(EP_SIZE)); }
__attribute__((noinline)) static void ep_calloc(void) { for (int i = 0; i < EP_N; i++) KEEP(calloc(EP_SIZE / 16, 16)); }
__attribute__((noinline)) static void ep_memalign(void) { for (int i = 0; i < EP_N; i++) KEEP(memalign(64, EP_SIZE)); }
__attribute__((noinline)) static void ep_aligned_alloc(void) { for (int i = 0; i < EP_N; i++) KEEP(aligned_alloc(64, EP_SIZE)); }
__attribute__((noinline)) static void ep_valloc(void) { for (int i = 0; i < EP_N; i++) KEEP(valloc(EP_SIZE)); }
__attribute__((noinline)) static void ep_pvalloc(void) { for (int i = 0; i < EP_N; i++) KEEP(pvalloc(EP_SIZE)); }

__attribute__((noinline)) static void ep_posix_memalign(void)
{
	for (int i = 0; i < EP_N; i++) {
		void *p;
		if (posix_memalign(&p, 64, EP_SIZE) != 0)
			abort();
		KEEP(p);
	}
}

/* grows a small block to EP_SIZE: the new block is realloc's */
__attribute__((noinline)) static void ep_realloc(void)
{
	for (int i = 0; i < EP_N; i++) {
		void *p = malloc(16);
		KEEP(realloc(p, EP_SIZE));
	}
}

__attribute__((noinline)) static void ep_reallocarray(void)
{
	for (int i = 0; i < EP_N; i++) {
		void *p = malloc(16);
		KEEP(reallocarray(p, EP_SIZE / 16, 16));
	}
}

__attribute__((noinline)) static void in_ctor(void) { for (int i = 0; i < EP_N; i++) KEEP(malloc(EP_SIZE)); }
__attribute__((noinline)) static void in_atexit(void) { for (int i = 0; i < EP_N; i++) KEEP(malloc(EP_SIZE)); }
__attribute__((noinline)) static void in_handler(void) { for (int i = 0; i < EP_N; i++) KEEP(malloc(EP_SIZE)); }

static int entries;

__attribute__((constructor)) static void ctor(void)
{
	/* only for the entry points' run: the other cases count exactly */
	const char *m = getenv("HEAPCASES_CTOR");
	if (m && strcmp(m, "1") == 0)
		in_ctor();
}

static void on_exit_handler(void)
{
	if (entries)
		in_atexit();
}

static void on_signal(int sig)
{
	(void)sig;
	/* raised synchronously: the allocator is not interrupted */
	in_handler();
}

__attribute__((noinline)) static void keep16(void) { for (int i = 0; i < 256; i++) KEEP(malloc(64 * KIB)); }
__attribute__((noinline)) static void parent_work(void) { keep16(); }
__attribute__((noinline)) static void child_work(void) { keep16(); }
__attribute__((noinline)) static void execd_work(void) { keep16(); }
__attribute__((noinline)) static void hang_work(void) { keep16(); }

#define THREADS 4
static void *handed[THREADS][1000];

__attribute__((noinline)) static void thread_kept(void)
{
	for (int i = 0; i < 1000; i++)
		KEEP(malloc(32 * KIB));
}

__attribute__((noinline)) static void thread_transient(void)
{
	for (int i = 0; i < 1000; i++) {
		sink = malloc(32 * KIB);
		free(sink);
	}
}

__attribute__((noinline)) static void handoff(void **v)
{
	for (int i = 0; i < 1000; i++)
		v[i] = sink = malloc(32 * KIB);
}

static void *worker(void *arg)
{
	thread_kept();
	thread_transient();
	handoff(arg);
	return NULL;
}

static int run_threads(void)
{
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, handed[i]) != 0)
			return 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < THREADS; i++)
		for (int j = 0; j < 1000; j++)
			free(handed[i][j]);
	return 0;
}

static int run_fork(const char *self)
{
	pid_t a, b;
	int st;

	parent_work();
	a = fork();
	if (a == 0) {
		child_work();
		exit(0);
	}
	b = fork();
	if (b == 0) {
		execl(self, self, "execd", (char *)NULL);
		_exit(127);
	}
	if (a < 0 || b < 0 || waitpid(a, &st, 0) != a || !WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
	    waitpid(b, &st, 0) != b || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return 1;
	return 0;
}

__attribute__((noinline)) static void phase_a(void **v) { for (int i = 0; i < 256; i++) v[i] = sink = malloc(64 * KIB); }
__attribute__((noinline)) static void phase_b(void) { keep16(); }

static int run_phases(void)
{
	static void *a[256];
	struct timespec pause_for = { 0, 600000000 };

	phase_a(a);
	nanosleep(&pause_for, NULL);
	phase_b();
	nanosleep(&pause_for, NULL);
	for (int i = 0; i < 256; i++)
		free(a[i]);
	return 0;
}

static int run_hang(const char *path)
{
	FILE *f;

	hang_work();
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (;;)
		pause();
}

#define LINE_BLOCK (4 * KIB)
#define STEADY_N (40 * 1024 * KIB / LINE_BLOCK)
#define BURST_N (80 * 1024 * KIB / LINE_BLOCK)

__attribute__((noinline)) static void steady(void)
{
	for (int i = 0; i < STEADY_N; i++)
		KEEP(malloc(LINE_BLOCK));
}

__attribute__((noinline)) static void burst(void **v)
{
	for (int i = 0; i < BURST_N; i++)
		v[i] = sink = malloc(LINE_BLOCK);
}

static void say_when(const char *what)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	printf("%s %lld\n", what, (long long)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

static int run_line(void)
{
	static void *held[BURST_N];
	struct timespec pause_for = { 0, 300000000 };

	say_when("steady_start");
	steady();
	say_when("steady_end");
	nanosleep(&pause_for, NULL);
	say_when("burst_start");
	burst(held);
	say_when("burst_end");
	nanosleep(&pause_for, NULL);
	say_when("free_start");
	for (int i = 0; i < BURST_N; i++)
		free(held[i]);
	say_when("free_end");
	nanosleep(&pause_for, NULL);
	say_when("exit");
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "known";

	if (strcmp(m, "known") == 0) {
		kept();
		transient();
		peak();
	} else if (strcmp(m, "entries") == 0) {
		entries = 1;
		atexit(on_exit_handler);
		signal(SIGUSR1, on_signal);
		raise(SIGUSR1);
		ep_malloc();
		ep_calloc();
		ep_realloc();
		ep_reallocarray();
		ep_posix_memalign();
		ep_aligned_alloc();
		ep_memalign();
		ep_valloc();
		ep_pvalloc();
	} else if (strcmp(m, "fork") == 0) {
		return run_fork(argv[0]);
	} else if (strcmp(m, "execd") == 0) {
		execd_work();
	} else if (strcmp(m, "phases") == 0) {
		return run_phases();
	} else if (strcmp(m, "threads") == 0) {
		return run_threads();
	} else if (strcmp(m, "twins") == 0) {
		for (int i = 0; i < 1000; i++) {
			twin_a();
			twin_a();
			twin_a();
			twin_b();
		}
	} else if (strcmp(m, "quick") == 0) {
		/* what "known" keeps, then the end without exit handlers */
		kept();
		_exit(0);
	} else if (strcmp(m, "line") == 0) {
		return run_line();
	} else if (strcmp(m, "hang") == 0 && argc > 2) {
		return run_hang(argv[2]);
	} else {
		fprintf(stderr, "usage: heapcases known|entries|fork|phases|quick|line|threads|twins|hang FILE\n");
		return 2;
	}
	return 0;
}
