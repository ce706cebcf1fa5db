/* read.h - open any input profview understands, chosen by its content */
#ifndef PROFVIEW_READ_H
#define PROFVIEW_READ_H

#include "profile.h"
#include "raw-read.h"

/* What is read of standard input, a pipe or a device, and what a
 * gzip-compressed input may decompress to, by default.  A regular file is
 * mapped, not read, whatever its size. */
#define PV_READ_MAX_INPUT ((size_t)1 << 30)

/* The memory the profile read from an input may take unless max_memory
 * says: max_input bytes, or the input's size when larger, and this much
 * more (budget.h); an input whose profile would need more is refused. */
#define PV_READ_BUDGET_EXTRA ((size_t)16 << 20)

struct pv_read_options {
	const struct raw_unwinder *unwinder; /* for DWARF-mode traces, may be NULL */
	size_t max_input;      /* bytes, see PV_READ_MAX_INPUT; 0: that; SIZE_MAX: no limit */
	size_t max_memory;     /* the budget, bytes; 0: pv_read_budget's; SIZE_MAX: none */
};

/* The budget of an input of len bytes read with max_input (0: the
 * default): the larger of the two, and PV_READ_BUDGET_EXTRA; 0 (none)
 * when max_input is SIZE_MAX. */
size_t pv_read_budget(size_t len, size_t max_input);

/* Read path ("-" for standard input) into a new profile.  The format is
 * detected from the bytes, never from the name: a stream that does not
 * start as a profile is refused after its first 64 KiB, and one longer
 * than max_input bytes (or gzip data that decompresses to more) stops
 * there.  NULL after an error was reported. */
struct pv_profile *pv_read_file(const char *path, const struct pv_read_options *opt);
/* The same for an input already in memory, len bytes at buf (not kept),
 * named name in messages. */
struct pv_profile *pv_read_buffer(const unsigned char *buf, size_t len, const char *name,
				  const struct pv_read_options *opt);

#endif
