/* folded-read.h - reader of folded stacks, FlameGraph's input format */
#ifndef PROFVIEW_FOLDED_READ_H
#define PROFVIEW_FOLDED_READ_H

#include "profile.h"

#include <stdbool.h>
#include <stddef.h>

/* Is buf text (no control bytes but tab, newline and carriage return in
 * its first 64 KiB) whose first non-empty line ends in a space and a
 * number? */
bool folded_detect(const unsigned char *buf, size_t len);

/* Read folded stacks: one line per stack, "outer;...;leaf COUNT", the
 * frames separated by ';' and the count after the last space.  Every
 * frame becomes a function of that name; one value, samples/count.  A
 * line without a count is an error naming its line number.  NULL after
 * reporting an error. */
struct pv_profile *folded_read(const unsigned char *buf, size_t len, const char *name);

#endif
