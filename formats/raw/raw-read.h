/* raw-read.h - reader of profview raw traces (see raw.h, profview-raw(5)) */
#ifndef PROFVIEW_RAW_READ_H
#define PROFVIEW_RAW_READ_H

#include "profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Does buf start like a raw trace? */
bool raw_detect(const unsigned char *buf, size_t len);

/* Unwinds the samples that carry registers and a stack copy (a DWARF-mode
 * trace).  The formats library knows no DWARF: the analyzer provides it. */
struct raw_unwinder {
	void *ctx;
	/* Called once when the mappings are known, before any unwind; may be
	 * NULL.  0 or -1 (an error was reported). */
	int (*prepare)(void *ctx, struct pv_profile *p);
	/* Store up to cap addresses in frames, the program counter first and
	 * then return addresses; *complete says whether the walk reached the
	 * outermost frame.  Returns how many, 0 when it cannot unwind at all,
	 * or -1 when out of memory. */
	int (*unwind)(void *ctx, const uint64_t *regs, uint32_t nregs, const unsigned char *stack,
		      uint32_t stack_len, uint64_t *frames, uint32_t cap, bool *complete);
	/* May be NULL.  As unwind, giving the same frames, but fast, pure and
	 * safe to call from several threads at once: returns 0 for a sample
	 * it cannot do, which the reader then gives to unwind. */
	int (*walk)(void *ctx, const uint64_t *regs, uint32_t nregs, const unsigned char *stack,
		    uint32_t stack_len, uint64_t *frames, uint32_t cap, bool *complete);
	/* May be NULL.  Called after prepare when the trace has samples to
	 * unwind (nsamples of them), before they are walked: the unwinder
	 * may make what its walk needs, and get ready, in the background,
	 * for what comes after the reading (until its unwind is called, or
	 * the reader's caller says so). */
	void (*ahead)(void *ctx, uint64_t nsamples);
};

/* Read a raw trace from memory.  name is used in messages.  A damaged or
 * unfinished trace is read up to its last whole record, with one warning
 * saying what was dropped.  Returns NULL after reporting an error when the
 * input is not a trace at all.  Addresses are not symbolized.  uw may be
 * NULL: samples with registers then keep only their program counter and
 * count as truncated. */
struct pv_profile *raw_read(const unsigned char *buf, size_t len, const char *name,
			   const struct raw_unwinder *uw);

/* As raw_read, of buf mapped (page-aligned, MAP_PRIVATE) from a file that
 * nothing writes or cuts any more: the pages read are given back
 * (MADV_DONTNEED) as the reader goes, so that memory stays bounded
 * however large the trace.  buf's contents are the file's still. */
struct pv_profile *raw_read_mapped(const unsigned char *buf, size_t len, const char *name,
				   const struct raw_unwinder *uw);

/* A file collect-timer wrote, of one process or of a run of several
 * (raw.h): each process read as raw_read does, and merged, its threads
 * in a process of the profile's; the profile's duration is the run's
 * span.  mapped as for raw_read_mapped. */
struct pv_profile *raw_read_run(const unsigned char *buf, size_t len, const char *name,
				const struct raw_unwinder *uw, bool mapped);

#endif
