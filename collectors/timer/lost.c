/* lost.c - the samples lost, written as a RAW_LOST record (see lost.h)
 */
#include <stdatomic.h>
#include <stdint.h>

#include "lost.h"
#include "preload-state.h"
#include "raw.h"
#include "writer.h"

void lost_write(int wait)
{
	uint64_t n = atomic_exchange(&preload.lost_pending, 0);
	struct raw_lost *rec;

	if (n == 0)
		return;
	rec = writer_reserve(sizeof(*rec), wait);
	if (rec == NULL) {
		atomic_fetch_add(&preload.lost_pending, n);
		return;
	}
	rec->count = n;
	rec->error = (uint32_t)writer_error();
	rec->reserved = 0;
	writer_publish(rec, RAW_LOST, sizeof(*rec));
}
