/* heapphases.c - a program that allocates in phases, for collect-heap's
 * pauses (--delay, --duration, the control signal)
 *
 * Each phase allocates 2000 blocks of 32 KiB from a function of its own
 * (phase_a, phase_b, phase_c) and keeps them to the end, unless said.
 *
 * heapphases sleep SECONDS: phase_a() at once, then a sleep of SECONDS,
 *   then phase_b().
 * heapphases steps DIR: phase_a(), then writes DIR/a and waits for DIR/go-b
 *   to exist; frees phase_a's blocks and runs phase_b(), writes DIR/b and
 *   waits for DIR/go-c; runs phase_c().  (At most a minute each wait.)
 * heapphases handler: installs a SIGUSR2 handler of its own with sigaction,
 *   sends itself SIGUSR2 three times, prints "caught N", runs phase_a().
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NBLOCKS 2000
#define SIZE 32768

static volatile sig_atomic_t caught;

/* n blocks of SIZE into v, each touched. */
static inline __attribute__((always_inline)) void fill(void **v, int n)
{
	for (int i = 0; i < n; i++) {
		v[i] = malloc(SIZE);
		if (v[i] == NULL)
			exit(1);
		*(volatile char *)v[i] = 1;
	}
}

__attribute__((noinline)) void phase_a(void **v)
{
	fill(v, NBLOCKS);
}

__attribute__((noinline)) void phase_b(void **v)
{
	fill(v, NBLOCKS);
}

__attribute__((noinline)) void phase_c(void **v)
{
	fill(v, NBLOCKS);
}

static void nap(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) != 0)
		;
}

/* Writes DIR/name. */
static void mark(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f == NULL)
		exit(1);
	fclose(f);
}

/* Waits (a minute at most) for DIR/name to exist. */
static void await(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (int i = 0; i < 60000 && access(path, F_OK) != 0; i++)
		nap(0.001);
}

static void on_usr2(int sig)
{
	(void)sig;
	caught++;
}

int main(int argc, char **argv)
{
	static void *a[NBLOCKS], *b[NBLOCKS], *c[NBLOCKS];
	const char *mode = argc > 1 ? argv[1] : "";

	if (strcmp(mode, "sleep") == 0 && argc > 2) {
		phase_a(a);
		nap(atof(argv[2]));
		phase_b(b);
	} else if (strcmp(mode, "steps") == 0 && argc > 2) {
		phase_a(a);
		mark(argv[2], "a");
		await(argv[2], "go-b");
		for (int i = 0; i < NBLOCKS; i++)
			free(a[i]);
		phase_b(b);
		mark(argv[2], "b");
		await(argv[2], "go-c");
		phase_c(c);
	} else if (strcmp(mode, "handler") == 0) {
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr2;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGUSR2, &sa, NULL) != 0)
			return 1;
		for (int i = 0; i < 3; i++)
			raise(SIGUSR2);
		printf("caught %d\n", (int)caught);
		phase_a(a);
	} else {
		fprintf(stderr, "usage: heapphases sleep SECONDS | steps DIR | handler\n");
		return 2;
	}
	return 0;
}
