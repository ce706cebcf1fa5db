/* raw-reader.c - the walk of a raw trace's records, and the pages of a
 * mapped trace given back as each pass goes (see raw-reader.h)
 */
#include "raw-reader.h"
#include "raw-iter.h"

#include <stddef.h>
#include <sys/mman.h>

/* Starts a walk over the trace's records (raw-iter.h). */
void rd_records(const struct reader *rd, struct raw_iter *it)
{
	raw_iter_init(it, rd->buf, rd->len, rd->data_start, rd->head.arch.nregs);
}

/* A pass over a mapped trace has read up to byte off: the whole windows
 * before it go back (all of it when off is the end).  A pass starts at
 * the start again: released pages come back from the file when read. */
void rd_release(struct reader *rd, size_t off)
{
	size_t page = 4096, to;

	if (!rd->mapped)
		return;
	if (off < rd->released)
		rd->released = 0; /* a new pass */
	to = off >= rd->len ? rd->len : off & ~(RELEASE_WINDOW - 1);
	to &= ~(page - 1);
	if (to <= rd->released + (off >= rd->len ? 0 : RELEASE_WINDOW - 1))
		return;
	madvise((void *)(rd->buf + rd->released), to - rd->released, MADV_DONTNEED);
	rd->released = to;
}
