/* heapattach.c - a program that allocates and frees in a loop, to be
 * attached to by collect-heap -p (tests/e2e/heapattach.sh).  Build it with
 * -fno-plt: every call of malloc and free goes through its GOT entry,
 * which the program reads itself.
 *
 * heapattach OUT: writes its pid to OUT, then loops: small() allocates
 * SMALL bytes and big() 3 x SMALL, each kept in a ring of RING blocks (the
 * block RING allocations back freed), and one block of those allocated
 * before the loop (PRE of them) is freed, or every fourth one realloc'd
 * and freed.  The program reads its GOT entries of malloc and free at
 * every step: while they differ from what they held at the start, it is
 * attached to, and it counts small()'s and big()'s blocks of that window
 * (counts start again at the next window).  On SIGUSR1 it writes one line
 * to stdout:
 *   windows=W attached=A got=same|changed small=N big=M pre_left=K steps=S
 * and goes on; SIGTERM ends it.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SMALL 4000
#define RING 2000
#define PRE 200000
#define STEPS_PER_MS 40

static volatile sig_atomic_t report, stop;
static void *ring_small[RING], *ring_big[RING];
static void *pre[PRE];
/* What the GOT held at the start, masked: never a word on the stack (or
 * in a register saved there) that points into malloc, which the injector
 * takes for a return address into the allocator and waits for it to go. */
#define MASK 0x5a5a5a5a5a5a5a5aull
static volatile uintptr_t m0, f0;

static void on_usr1(int sig)
{
	(void)sig;
	report = 1;
}

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* The GOT entries of malloc and free, as they are now (not the compiler's
 * copy: read each time), masked. */
static __attribute__((noinline)) uintptr_t got_malloc(void)
{
	uintptr_t v;

	__asm__ volatile("movq malloc@GOTPCREL(%%rip), %0\n\txorq %1, %0" : "=&r"(v) : "r"(MASK));
	return v;
}

static __attribute__((noinline)) uintptr_t got_free(void)
{
	uintptr_t v;

	__asm__ volatile("movq free@GOTPCREL(%%rip), %0\n\txorq %1, %0" : "=&r"(v) : "r"(MASK));
	return v;
}

/* Is the GOT as it was at the start? */
static int got_same(void)
{
	return got_malloc() == m0 && got_free() == f0;
}

/* (not tail calls: each stays a frame of the stack) */
static __attribute__((noinline)) void *small(void)
{
	char *p = malloc(SMALL);

	if (p != NULL)
		memset(p, 1, 64);
	return p;
}

static __attribute__((noinline)) void *big(void)
{
	char *p = malloc(3 * SMALL);

	if (p != NULL)
		memset(p, 2, 64);
	return p;
}

/* One block of those allocated before the loop let go: freed, or grown
 * and then freed. */
static __attribute__((noinline)) void drop_pre(long k)
{
	void *p = pre[k];

	if (k % 4 == 0) {
		void *q = realloc(p, 200);

		if (q != NULL)
			p = q;
	}
	free(p);
	pre[k] = NULL;
}

int main(int argc, char **argv)
{
	long small_n = 0, big_n = 0, windows = 0, pre_left = PRE, steps = 0;
	int was_attached = 0;
	struct timespec ms = { 0, 1000000 };
	FILE *f;

	if (argc != 2)
		return 2;
	m0 = got_malloc();
	f0 = got_free();
	for (long k = 0; k < PRE; k++)
		pre[k] = malloc(16 + (size_t)(k % 7) * 8);
	signal(SIGUSR1, on_usr1);
	signal(SIGTERM, on_term);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((f = fopen(argv[1], "w")) == NULL)
		return 1;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	while (!stop) {
		for (int i = 0; i < STEPS_PER_MS; i++, steps++) {
			long slot = steps % RING;
			int attached = !got_same();
			void *s, *b;

			free(ring_small[slot]);
			free(ring_big[slot]);
			s = small();
			b = big();
			ring_small[slot] = s;
			ring_big[slot] = b;
			if (pre_left > 0 && steps % 4 == 0)
				drop_pre(--pre_left);
			/* counted when the GOT was the sampler's before and
			 * after the two calls */
			if (attached && !got_same()) {
				if (!was_attached) {
					windows++;
					small_n = big_n = 0;
				}
				small_n++;
				big_n++;
			}
			was_attached = attached;
		}
		if (report) {
			report = 0;
			printf("windows=%ld attached=%d got=%s small=%ld big=%ld pre_left=%ld steps=%ld\n",
			       windows, was_attached,
			       got_same() ? "same" : "changed", small_n,
			       big_n, pre_left, steps);
		}
		nanosleep(&ms, NULL);
	}
	return 0;
}
