/* forward.c - the least an allocator interposer can cost, for
 * scripts/bench/heap: malloc and free preloaded, each handing the call on
 * to glibc's own at once.  What collect-heap's library costs beyond it is
 * its own fast path and its samples. */
#include <stddef.h>

extern void *__libc_malloc(size_t n);
extern void __libc_free(void *p);

void *malloc(size_t n)
{
	return __libc_malloc(n);
}

void free(void *p)
{
	__libc_free(p);
}
