/* ownalloc.c - a program with its own allocator: malloc, calloc, realloc
 * and free over a static arena of 64 MiB, defined in the executable, so
 * that every call to them (the C library's too) goes to these and never
 * to a preloaded library's.  main() keeps 512 blocks of 64 KiB. */
#include <stddef.h>
#include <string.h>

static char arena[64 << 20] __attribute__((aligned(16)));
static size_t used;

void *malloc(size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n > sizeof arena - used)
		return NULL;
	p = arena + used;
	used += n;
	return p;
}

void free(void *p)
{
	(void)p;
}

void *calloc(size_t a, size_t b)
{
	void *p = a && b > (size_t)-1 / a ? NULL : malloc(a * b);

	if (p)
		memset(p, 0, a * b);
	return p;
}

void *realloc(void *p, size_t n)
{
	void *q = malloc(n);

	/* the arena only grows: the old block's bytes are all below it */
	if (q && p)
		memcpy(q, p, n < (size_t)((char *)q - (char *)p) ? n : (size_t)((char *)q - (char *)p));
	return q;
}

static void *volatile sink;

int main(void)
{
	for (int i = 0; i < 512; i++)
		sink = malloc(65536);
	return 0;
}
