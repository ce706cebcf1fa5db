/* raw-tail.c - walk a raw trace file a bounded piece at a time (see
 * raw-tail.h) */
#include "raw-tail.h"
#include "raw.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The reads: the first one small, then twice as large while the records
 * fill them, up to the most.  Most traces of a run of many processes are
 * a few kilobytes of records before megabytes not written (an image that
 * ran another program, one that was killed); a read of those bytes costs
 * more than the records (the file system makes pages of zeros for them). */
#define RAW_TAIL_FIRST ((size_t)64 << 10)
#define RAW_TAIL_CHUNK ((size_t)1 << 20)

int raw_tail_init(struct raw_tail *t, int fd, uint64_t start, uint32_t min_regs, int live)
{
	memset(t, 0, sizeof *t);
	t->fd = fd;
	t->live = live;
	t->min_regs = min_regs;
	t->base = start;
	t->want = RAW_TAIL_FIRST;
	t->cap = RAW_TAIL_FIRST;
	t->buf = malloc(t->cap);
	return t->buf ? 0 : -1;
}

void raw_tail_free(struct raw_tail *t)
{
	free(t->buf);
	t->buf = NULL;
}

/* Reads up to n bytes at off into buf; returns how many (fewer only at the
 * end of the file), or -1. */
static ssize_t raw_tail_pread(int fd, unsigned char *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, buf + got, n - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/* Reads the next piece of the file after what was handed out: the whole
 * records in it (read twice when live) become buf[0..len).  Returns 0 or
 * -1. */
static int raw_tail_fill(struct raw_tail *t)
{
	size_t want = t->want;
	struct raw_iter it;
	struct raw_record r;
	enum raw_next next;
	ssize_t got;

	t->base += t->pos;
	t->pos = t->len = 0;
	for (;;) {
		if (want > t->cap) {
			unsigned char *b = realloc(t->buf, want);

			if (!b)
				return -1;
			t->buf = b;
			t->cap = want;
		}
		got = raw_tail_pread(t->fd, t->buf, want, t->base);
		if (got < 0)
			return -1;
		raw_iter_init(&it, t->buf, (size_t)got, 0, t->min_regs);
		while ((next = raw_iter_next(&it, &r)) == RAW_NEXT_RECORD)
			;
		/* a first record larger than the buffer: again, with room */
		if (it.off == 0 && next == RAW_NEXT_CUT && (size_t)got == want && r.size > want) {
			want = r.size;
			continue;
		}
		break;
	}
	/* records up to the end of this piece: the next one larger */
	if (it.off > (size_t)got / 2 && t->want < RAW_TAIL_CHUNK)
		t->want *= 2;
	/* the records whose word this read found published, read again */
	if (t->live && it.off > 0 && raw_tail_pread(t->fd, t->buf, it.off, t->base) != (ssize_t)it.off)
		return -1;
	t->len = it.off;
	t->stop = next;
	t->stop_rec = r;
	t->stop_rec.off += t->base;
	t->stop_rec.data = NULL;
	return 0;
}

int raw_tail_next(struct raw_tail *t, struct raw_record *rec)
{
	struct raw_iter it;
	enum raw_next next;

	if (t->pos == t->len) {
		if (t->ended) {
			*rec = (struct raw_record){ NULL, raw_tail_offset(t), 0, 0 };
			return RAW_NEXT_ENDED;
		}
		if (raw_tail_fill(t) < 0)
			return -1;
		if (t->len == 0) {
			*rec = t->stop_rec;
			return t->stop;
		}
	}
	raw_iter_init(&it, t->buf, t->len, t->pos, t->min_regs);
	next = raw_iter_next(&it, rec);
	if (next != RAW_NEXT_RECORD) /* cannot be: the piece was walked */
		return next;
	rec->off += t->base;
	t->pos = it.off;
	t->ended = rec->type == RAW_END;
	return RAW_NEXT_RECORD;
}
