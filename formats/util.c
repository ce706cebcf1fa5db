/* util.c - shared helpers */
#include "util.h"
#include "error.h"

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
