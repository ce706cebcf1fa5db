/* raw-iter.h - read a raw trace's header, and walk its records one whole
 * record at a time
 *
 * The rules of raw.h in one place, for every reader of raw traces
 * (profview's reader, collect-timer's summary and cutting):
 *
 * - the header starts with the magic; versions RAW_VERSION_MIN to
 *   RAW_VERSION are read; version 1 is of an x86-64 program, version 2 says
 *   its architecture and register set (struct raw_arch), and only x86-64
 *   traces with DWARF-numbered registers are read; the header's size holds
 *   the exe path and is a multiple of 8;
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

#include "raw.h"

#include <stddef.h>
#include <stdint.h>

/* What a trace's header says, whatever its version. */
struct raw_head {
	struct raw_header h;   /* the fields of every version */
	struct raw_arch arch;  /* version 1: x86-64, RAW_NREGS DWARF registers */
	uint32_t fixed_size;   /* the bytes before the exe path */
};

/* Is the header one this code reads? */
enum raw_head_status {
	RAW_HEAD_OK = 0,
	RAW_HEAD_NOT_RAW,  /* no magic: not a raw trace at all */
	RAW_HEAD_SHORT,    /* cut off before fixed_size bytes */
	RAW_HEAD_VERSION,  /* a version this code does not read: h.version */
	RAW_HEAD_MACHINE,  /* a trace of another architecture: arch.machine */
	RAW_HEAD_REGS,     /* a register set it does not read: arch.regs, arch.nregs */
	RAW_HEAD_CORRUPT,  /* header size and path length do not hold together */
	RAW_HEAD_CUT,      /* cut off before its h.header_size bytes */
};

/* Reads the header at the start of buf[0..len) into *head, as far as it
 * goes (the fields a status names are set).  The records start at
 * head->h.header_size; the exe path, head->h.exe_len bytes, at
 * head->fixed_size. */
enum raw_head_status raw_iter_head(const unsigned char *buf, size_t len, struct raw_head *head);

/* What to say of a trace of ELF machine machine (RAW_HEAD_MACHINE), after
 * its name: "a trace of an aarch64 program (ELF machine 183): this profview
 * reads x86-64 traces".  Returns buf. */
const char *raw_iter_machine_say(char *buf, size_t n, uint32_t machine);

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

/* A run of several processes (raw.h): is buf[0..len) one, and are its
 * index and parts whole?  Returns the number of parts and sets *footer,
 * 0 when buf is not a run (one trace), or -1 when it ends in the footer's
 * magic but its index is damaged. */
long raw_run_index(const unsigned char *buf, size_t len, struct raw_run_footer *footer);

/* Part i of a run raw_run_index found: 0, or -1 when the entry does not
 * hold together (outside the parts, overlapping the index, misaligned). */
int raw_run_part_get(const unsigned char *buf, size_t len, const struct raw_run_footer *footer,
		     uint32_t i, struct raw_run_part *part);

/* The run's names (RAW_RUN_PYNAMES_MAGIC) of a run raw_run_index found:
 * 1 with their records at *off, *size bytes and *inflated 0, or, deflated
 * (RAW_RUN_PYNAMEZ_MAGIC), their stream there and *inflated the bytes of
 * records it makes; 0 when it has none, -1 when the trailer does not hold
 * together. */
int raw_run_pynames(const unsigned char *buf, size_t len, const struct raw_run_footer *footer,
		    uint64_t *off, uint64_t *size, uint64_t *inflated);

/* Why a process was not profiled (enum raw_why), in words ("static
 * binary"). */
const char *raw_why_say(uint32_t why);

/* Entry i of the table of processes not profiled of the run (raw.h):
 * *pos the offset of the next entry, starting at 0 for the first;
 * *other and *name (not NUL-terminated, other->name_len bytes inside buf)
 * are set.  Returns 1, 0 at the table's end or when there is none, or
 * -1 when the table does not hold together (the rest is not read). */
int raw_run_other_next(const unsigned char *buf, size_t len, const struct raw_run_footer *footer,
		       uint64_t *pos, struct raw_run_other *other, const char **name);

#endif
