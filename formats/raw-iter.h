/* raw-iter.h - walk the records of a raw trace, one whole record at a time
 *
 * The framing rules of raw.h in one place, for every reader of raw traces
 * (profview's reader, collect-timer's summary and cutting):
 *
 * - a record starts with a raw_rec {type, size}; size counts the whole
 *   record, is a multiple of 8, at least 8 and at most RAW_MAX_RECORD, and
 *   the record fits in what is left of the buffer;
 * - a type word of 0 ends the written data (a trace its writer did not
 *   finish has zeros after its last record);
 * - a RAW_END record ends the trace: nothing after it is read;
 * - a record of a known type is at least as long as its type needs (a
 *   thread record may be the RAW_THREAD_MIN_SIZE bytes of older
 *   collectors, a lost record RAW_LOST_MIN_SIZE) and its counts (frames,
 *   registers, path and stack lengths) stay inside it.  A record of an
 *   unknown type is returned like any other, to be skipped.
 *
 * Only libc, nothing allocated: the collectors compile it in.  The records
 * returned point into the caller's buffer; when the buffer is 8-byte
 * aligned (a mapping, malloc) so are they, and they can be read through
 * the structs of raw.h.
 */
#ifndef PROFVIEW_RAW_ITER_H
#define PROFVIEW_RAW_ITER_H

#include <stddef.h>
#include <stdint.h>

/* One record, or the header of the record that stopped the walk. */
struct raw_record {
	const unsigned char *data; /* the record, its raw_rec first */
	size_t off;                /* its byte offset in the buffer */
	uint32_t type, size;       /* 0, 0 where there was no record header */
};

/* What raw_iter_next found at the iterator's offset. */
enum raw_next {
	RAW_NEXT_RECORD = 0, /* a whole record: the walk goes on */
	/* The walk stopped; each call returns the same again. */
	RAW_NEXT_DONE,       /* the buffer ends right after the last record */
	RAW_NEXT_ZEROS,      /* a zero type word: the end of the written data */
	RAW_NEXT_ENDED,      /* the previous record was the end record */
	RAW_NEXT_CUT_HEADER, /* fewer bytes are left than a record header */
	RAW_NEXT_CUT,        /* the record needs more bytes than are left */
	RAW_NEXT_BAD_SIZE,   /* its size is < 8, not a multiple of 8, or too large */
	RAW_NEXT_MALFORMED,  /* too short for its type, or its counts overflow it */
};

struct raw_iter {
	const unsigned char *buf;
	size_t len;
	size_t off;          /* of the next record; where the walk stopped */
	uint64_t nrecords;   /* whole records returned */
	uint32_t min_regs;   /* the least registers of a RAW_SAMPLE_REGS record */
	int ended;           /* the end record was returned */
};

/* Starts a walk over buf[0..len) at the first record, at byte start (the
 * header's header_size).  min_regs: the register count of the trace's
 * register set (RAW_NREGS for x86-64); a RAW_SAMPLE_REGS record with fewer,
 * or more than RAW_MAX_REGS, is malformed. */
void raw_iter_init(struct raw_iter *it, const unsigned char *buf, size_t len, size_t start,
		   uint32_t min_regs);

/* The next whole record into *rec and RAW_NEXT_RECORD, or why the walk
 * stops here, at it->off: then *rec holds the offending record's header
 * where there is one (RAW_NEXT_ZEROS, _CUT, _BAD_SIZE, _MALFORMED), else
 * type and size 0 with off = it->off. */
enum raw_next raw_iter_next(struct raw_iter *it, struct raw_record *rec);

#endif
