/* util.c - shared helpers */
#include "util.h"

#include <sys/mman.h>
#include <unistd.h>
#include "error.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

int pv_grow(void *arrp, size_t *cap, size_t need, size_t elem)
{
	void **arr = arrp;
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return pv_oom();
		n *= 2;
	}
	q = realloc(*arr, n * elem);
	if (!q)
		return pv_oom();
	*arr = q;
	*cap = n;
	return 0;
}

void pv_prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + n) & ~(page - 1);

	/* small arrays fault in quickly enough */
	if (n >= (1u << 20) && hi > lo)
		madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)n;
#endif
}

const char *pv_size_str(char *buf, size_t n, uint64_t bytes)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;

	while (bytes && bytes % 1024 == 0 && u + 1 < sizeof units / sizeof units[0]) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, n, "%" PRIu64 " %s", bytes, units[u]);
	return buf;
}
