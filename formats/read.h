/* read.h - open any input profview understands, chosen by its content */
#ifndef PROFVIEW_READ_H
#define PROFVIEW_READ_H

#include "profile.h"
#include "raw-read.h"

struct pv_read_options {
	const struct raw_unwinder *unwinder; /* for DWARF-mode traces, may be NULL */
};

/* Read path ("-" for standard input) into a new profile.  The format is
 * detected from the bytes, never from the name.  NULL after an error was
 * reported. */
struct pv_profile *pv_read_file(const char *path, const struct pv_read_options *opt);

#endif
