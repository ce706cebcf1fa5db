/* raw-read.h - reader of profview raw traces (see raw.h, profview-raw(5)) */
#ifndef PROFVIEW_RAW_READ_H
#define PROFVIEW_RAW_READ_H

#include "profile.h"

#include <stdbool.h>
#include <stddef.h>

/* Does buf start like a raw trace? */
bool raw_detect(const unsigned char *buf, size_t len);

/* Read a raw trace from memory.  name is used in messages.  A damaged or
 * unfinished trace is read up to its last whole record, with one warning
 * saying what was dropped.  Returns NULL after reporting an error when the
 * input is not a trace at all.  Addresses are not symbolized. */
struct pv_profile *raw_read(const unsigned char *buf, size_t len, const char *name);

#endif
