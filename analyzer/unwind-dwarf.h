/* unwind-dwarf.h - the analyzer's unwinder for DWARF-mode raw traces */
#ifndef PROFVIEW_UNWIND_DWARF_H
#define PROFVIEW_UNWIND_DWARF_H

#include "raw-read.h"

struct pv_unwinder;

/* quiet: no warnings about files whose CFI cannot be read. */
struct pv_unwinder *unwinder_new(bool quiet);
void unwinder_free(struct pv_unwinder *u);
/* Fill out with the callbacks raw_read() calls; valid while u lives. */
void unwinder_interface(struct pv_unwinder *u, struct raw_unwinder *out);

#endif
