/* heapattach.c - a program that allocates and frees in a loop, to be
 * attached to by collect-heap -p (tests/e2e/heapattach.sh).  Build it with
 * -fno-plt: every call of malloc and free goes through its GOT entry,
 * which the program reads itself.
 *
 * heapattach OUT [PLUGIN]: writes its pid to OUT, then loops: small() allocates
 * SMALL bytes and big() 3 x SMALL, each kept in a ring of RING blocks (the
 * block RING allocations back freed), and one block of those allocated
 * before the loop (PRE of them) is freed, or every fourth one realloc'd
 * and freed; and each other entry point of the allocator (calloc,
 * aligned_alloc, posix_memalign, memalign, valloc, pvalloc, reallocarray,
 * realloc of NULL) allocates and frees a block of a size of its own,
 * ENTRY_SIZE + 64 i for the i-th.  The program reads its GOT entries of malloc and free at
 * every step: while they differ from what they held at the start, it is
 * attached to, and it counts small()'s and big()'s blocks of that window
 * (counts start again at the next window).  On SIGUSR2 it loads PLUGIN
 * (a library built with -fno-plt that defines plug_alloc, which allocates
 * PLUG bytes, and plug_got, its GOT entry of malloc masked as below) with
 * dlopen, and from then on calls plug_alloc at every step too, into a ring
 * of its own, counting its blocks while the plugin's GOT entry is not the
 * program's first one.  On SIGHUP it forks a child that allocates FORKS
 * blocks of FORK_SIZE bytes and ends with status 0 when its GOT is the
 * program's first one (else 3); fork= is that status (-1 before).  On
 * SIGUSR1 it writes one line to stdout:
 *   windows=W attached=A got=same|changed small=N big=M plug=P fork=F pre_left=K steps=S
 * and goes on; SIGTERM ends it.
 */
#include <dlfcn.h>
#include <malloc.h>
#include <signal.h>
#include <sys/wait.h>
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
#define ENTRY_SIZE 5000
#define FORKS 1000
#define FORK_SIZE (100 << 10)

static volatile sig_atomic_t report, stop, load, forking;
static void *ring_plug[RING];
static void *(*plug_alloc)(void);
static uintptr_t (*plug_got)(void);
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

static void on_usr2(int sig)
{
	(void)sig;
	load = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	forking = 1;
}

static int got_same(void);

/* A child that allocates: 0 when its GOT is as at the start, 3 when not,
 * else how it ended. */
static int fork_child(void)
{
	pid_t child = fork();
	int status;

	if (child == 0) {
		for (int i = 0; i < FORKS; i++)
			free(malloc(FORK_SIZE));
		_exit(got_same() ? 0 : 3);
	}
	if (child < 0 || waitpid(child, &status, 0) != child)
		return 100;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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

/* Every other entry point once, each block freed at once. */
static __attribute__((noinline)) void entries(void)
{
	void *p[8] = { 0 };

	p[0] = calloc(1, ENTRY_SIZE);
	p[1] = aligned_alloc(64, ENTRY_SIZE + 64);
	if (posix_memalign(&p[2], 64, ENTRY_SIZE + 2 * 64) != 0)
		p[2] = NULL;
	p[3] = memalign(64, ENTRY_SIZE + 3 * 64);
	p[4] = valloc(ENTRY_SIZE + 4 * 64);
	p[5] = pvalloc(ENTRY_SIZE + 5 * 64);
	p[6] = reallocarray(NULL, 1, ENTRY_SIZE + 6 * 64);
	p[7] = realloc(NULL, ENTRY_SIZE + 7 * 64);
	for (int i = 0; i < 8; i++)
		free(p[i]);
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

/* The plugin loaded, its functions found.  0 or -1. */
static int load_plugin(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);

	if (h == NULL) {
		fprintf(stderr, "heapattach: %s\n", dlerror());
		return -1;
	}
	plug_got = (uintptr_t (*)(void))dlsym(h, "plug_got");
	plug_alloc = (void *(*)(void))dlsym(h, "plug_alloc");
	return plug_got != NULL && plug_alloc != NULL ? 0 : -1;
}

/* One step of the plugin's: 1 when its block was allocated with its GOT
 * entry the sampler's throughout. */
static int plug_step(long slot)
{
	int before = plug_got() != m0, after;

	free(ring_plug[slot]);
	ring_plug[slot] = plug_alloc();
	after = plug_got() != m0;
	return before && after;
}

int main(int argc, char **argv)
{
	long small_n = 0, big_n = 0, plug_n = 0, forked = -1, windows = 0, pre_left = PRE, steps = 0;
	int was_attached = 0;
	struct timespec ms = { 0, 1000000 };
	FILE *f;

	if (argc != 2 && argc != 3)
		return 2;
	m0 = got_malloc();
	f0 = got_free();
	for (long k = 0; k < PRE; k++)
		pre[k] = malloc(16 + (size_t)(k % 7) * 8);
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, on_usr2);
	signal(SIGHUP, on_hup);
	signal(SIGTERM, on_term);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((f = fopen(argv[1], "w")) == NULL)
		return 1;
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	while (!stop) {
		for (int i = 0; i < STEPS_PER_MS; i++, steps++) {
			long slot = steps % RING;
			int attached = !got_same(), plugged = 0;
			void *s, *b;

			free(ring_small[slot]);
			free(ring_big[slot]);
			s = small();
			b = big();
			ring_small[slot] = s;
			ring_big[slot] = b;
			if (pre_left > 0 && steps % 4 == 0)
				drop_pre(--pre_left);
			if (plug_alloc != NULL)
				plugged = plug_step(slot);
			entries();
			/* counted when the GOT was the sampler's before and
			 * after the two calls */
			if (attached && !got_same()) {
				if (!was_attached) {
					windows++;
					small_n = big_n = plug_n = 0;
				}
				small_n++;
				big_n++;
				plug_n += plugged;
			}
			was_attached = attached;
		}
		if (load && argc == 3 && plug_alloc == NULL && load_plugin(argv[2]) != 0)
			return 1;
		if (forking) {
			forking = 0;
			forked = fork_child();
		}
		if (report) {
			report = 0;
			printf("windows=%ld attached=%d got=%s small=%ld big=%ld plug=%ld fork=%ld "
			       "pre_left=%ld steps=%ld\n", windows, was_attached,
			       got_same() ? "same" : "changed", small_n, big_n, plug_n, forked, pre_left,
			       steps);
		}
		nanosleep(&ms, NULL);
	}
	return 0;
}
