/* folded-read.h - reader of folded stacks, FlameGraph's input format */
#ifndef PROFVIEW_FOLDED_READ_H
#define PROFVIEW_FOLDED_READ_H

#include "profile.h"

#include <stdbool.h>
#include <stddef.h>

/* What ends the name of a kernel frame, as FlameGraph's stackcollapse
 * scripts write it and flamegraph.pl colours it: "do_syscall_64_[k]". */
#define FOLDED_KERNEL_SUFFIX "_[k]"

/* Is buf text (no control bytes but tab, newline and carriage return in
 * its first 64 KiB) whose first non-empty line ends in a space and a
 * number? */
bool folded_detect(const unsigned char *buf, size_t len);

/* Read folded stacks: one line per stack, "outer;...;leaf COUNT", the
 * frames separated by ';' and the count after the last space.  Every
 * frame becomes a function of that name; one ending in
 * FOLDED_KERNEL_SUFFIX a kernel frame (a location of a PV_MAP_KERNEL
 * mapping) named without it.  One value, samples/count.  A
 * line without a count is an error naming its line number.  NULL after
 * reporting an error. */
struct pv_profile *folded_read(const unsigned char *buf, size_t len, const char *name);

#endif
