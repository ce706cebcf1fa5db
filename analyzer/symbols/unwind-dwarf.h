/* unwind-dwarf.h - the analyzer's unwinder for DWARF-mode raw traces */
#ifndef PROFVIEW_UNWIND_DWARF_H
#define PROFVIEW_UNWIND_DWARF_H

#include "modules.h"
#include "raw-read.h"

struct pv_unwinder;

/* An unwinder through the files of mods: each trace's prepare places them
 * with modules_place, and the unwinder attaches mods's Dwfl to itself.
 * mods must outlive every use of the unwinder, and the unwinder must
 * outlive mods (the Dwfl holds it until modules_free): free mods first.
 * quiet: no warnings about stacks that cannot be unwound.  NULL after an
 * error was reported. */
struct pv_unwinder *unwinder_new(struct pv_modules *mods, bool quiet);
void unwinder_free(struct pv_unwinder *u);
/* Wait until the unwinder uses the modules' Dwfl no more (it may read
 * their DWARF ahead while a trace is read): before anything else uses
 * them.  u may be NULL. */
void unwinder_settle(struct pv_unwinder *u);
/* Fill out with the callbacks raw_read() calls; valid while u lives. */
void unwinder_interface(struct pv_unwinder *u, struct raw_unwinder *out);

#endif
