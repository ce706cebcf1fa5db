/* collect-deflate-none.c - in place of collect-deflate.c in a build of the
 * collectors alone without zlib: nothing is deflated (the run's Python
 * names are written as they are) */
#include <stdlib.h>

#include "collect-deflate.h"

int collect_deflate(const void *const *in, const size_t *lens, int n, size_t below, unsigned char **out,
		    size_t *outlen)
{
	(void)in;
	(void)lens;
	(void)n;
	(void)below;
	*out = NULL;
	*outlen = 0;
	return 0;
}
