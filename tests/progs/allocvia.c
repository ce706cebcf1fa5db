/* allocvia.c - blocks kept to the end, each function through one of the
 * allocator's entry points: via_malloc() 256 blocks of 64 KiB by malloc,
 * via_calloc() by calloc, via_realloc() by realloc of NULL and then
 * growing, via_posix_memalign(), via_aligned_alloc(), via_strdup() by
 * strdup of a 64 KiB string (libc's strdup calls malloc itself). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#define N 256
#define SZ 65536

static void *volatile sink[N * 6];
static int kept;
static char text[SZ];

static void keep(void *p)
{
	if (!p)
		abort();
	sink[kept++] = p;
}

__attribute__((noinline)) void via_malloc(void)
{
	for (int i = 0; i < N; i++)
		keep(malloc(SZ));
}

__attribute__((noinline)) void via_calloc(void)
{
	for (int i = 0; i < N; i++)
		keep(calloc(1, SZ));
}

__attribute__((noinline)) void via_realloc(void)
{
	for (int i = 0; i < N; i++)
		keep(realloc(realloc(NULL, SZ / 2), SZ));
}

__attribute__((noinline)) void via_posix_memalign(void)
{
	for (int i = 0; i < N; i++) {
		void *p = NULL;

		keep(posix_memalign(&p, 64, SZ) == 0 ? p : NULL);
	}
}

__attribute__((noinline)) void via_aligned_alloc(void)
{
	for (int i = 0; i < N; i++)
		keep(aligned_alloc(256, SZ));
}

__attribute__((noinline)) void via_strdup(void)
{
	for (int i = 0; i < N; i++)
		keep(strdup(text));
}

int main(void)
{
	memset(text, 'x', SZ - 1);
	via_malloc();
	via_calloc();
	via_realloc();
	via_posix_memalign();
	via_aligned_alloc();
	via_strdup();
	return 0;
}
