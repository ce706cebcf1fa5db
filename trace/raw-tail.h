/* raw-tail.h - walk the records of a raw trace file a bounded piece at a
 * time, also while its collector is still writing it
 *
 * raw-iter.h walks a buffer that holds the whole trace; a trace can be
 * gigabytes.  This reads the file with pread into a buffer of at most about
 * a megabyte (64 KiB at first, growing while the records fill it; more
 * only for a record that needs it) and hands out its
 * records one by one, by the rules of raw-iter.h, so that memory stays flat
 * however large the trace.  Nothing is mapped: the collector may cut the
 * file to its end at any time, and a mapped page past the new end would
 * fault.
 *
 * live: the collector is still writing the file.  It stores a record's
 * bytes first and its {type, size} word last, with release order; a zero
 * type word is a record not yet published (raw.h).  But a read of the file
 * copies its bytes in no promised order, so a record whose word one read
 * found published is read once more before it is handed out: the bytes of
 * that second read come after the word was seen, and are whole.  A walk
 * that stops at a zero word stops there for now; the next call reads the
 * file again from there.
 *
 * Only libc: collect-timer compiles it in.
 */
#ifndef PROFVIEW_RAW_TAIL_H
#define PROFVIEW_RAW_TAIL_H

#include "raw-iter.h"

#include <stddef.h>
#include <stdint.h>

struct raw_tail {
	int fd;
	int live;
	uint32_t min_regs;
	unsigned char *buf;
	size_t cap;
	size_t want;           /* bytes the next read asks for */
	size_t len;            /* whole records read into buf */
	size_t pos;            /* the next one */
	uint64_t base;         /* the file offset of buf[0] */
	int ended;             /* the end record was handed out */
	enum raw_next stop;    /* why the last read stopped at buf + len */
	struct raw_record stop_rec;
};

/* Starts a walk of the records of the trace open at fd (for reading),
 * from the file offset start (the header's header_size); min_regs as for
 * raw_iter_init.  Returns 0, or -1 when out of memory.  fd stays the
 * caller's. */
int raw_tail_init(struct raw_tail *t, int fd, uint64_t start, uint32_t min_regs, int live);
void raw_tail_free(struct raw_tail *t);

/* The next whole record into *rec (rec->off is its file offset, rec->data
 * valid until the next call) and RAW_NEXT_RECORD; or why the walk stops at
 * raw_tail_offset for now, as raw_iter_next says it (RAW_NEXT_DONE: the end
 * of the file; RAW_NEXT_CUT: the file ends inside a record; RAW_NEXT_ZEROS:
 * nothing published there, yet or ever); or -1 when the file cannot be
 * read (errno set).  Calling again after a stop reads the file again. */
int raw_tail_next(struct raw_tail *t, struct raw_record *rec);

/* The file offset of the next record: all before it was handed out. */
static inline uint64_t raw_tail_offset(const struct raw_tail *t)
{
	return t->base + t->pos;
}

#endif
