/* heapgrow.c - known allocations for the heap profile tests: steady()
 * keeps 20000 blocks of 1024 bytes, transient() allocates 10000 of 1024
 * and frees each at once, growing() keeps 5000 blocks of 2048 bytes,
 * then 20000 more.  Under jemalloc with profiling on it dumps the heap
 * (mallctl "prof.dump") into early.heap after the first 5000 blocks of
 * growing() and into late.heap at the end; under another allocator
 * nothing is dumped.  The sizes are jemalloc size classes, so that the
 * bytes it counts are the bytes asked for. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *keep[45000];
static size_t nkeep;

__attribute__((noinline)) static void *steady(size_t n)
{
	void *p = malloc(n);
	if (p)
		memset(p, 1, n);
	return p;
}

__attribute__((noinline)) static void *growing(size_t n)
{
	void *p = malloc(n);
	if (p)
		memset(p, 2, n);
	return p;
}

__attribute__((noinline)) static void transient(size_t n)
{
	char *volatile p = malloc(n);
	if (p)
		p[0] = 3;
	free(p);
}

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);

static void dump(const char *name)
{
	mallctl_fn ctl = (mallctl_fn)(void (*)(void))dlsym(RTLD_DEFAULT, "mallctl");

	if (ctl && ctl("prof.dump", NULL, NULL, &name, sizeof name) != 0)
		fprintf(stderr, "heapgrow: prof.dump of %s failed\n", name);
}

int main(void)
{
	for (int i = 0; i < 20000; i++)
		keep[nkeep++] = steady(1024);
	for (int i = 0; i < 10000; i++)
		transient(1024);
	for (int i = 0; i < 5000; i++)
		keep[nkeep++] = growing(2048);
	dump("early.heap");
	for (int i = 0; i < 20000; i++)
		keep[nkeep++] = growing(2048);
	dump("late.heap");
	return 0;
}
