/* leaf.h - settle the leaf's return address in frame-pointer stacks */
#ifndef PROFVIEW_LEAF_H
#define PROFVIEW_LEAF_H

#include "modules.h"
#include "profile.h"

/* For every sample flagged PV_SAMPLE_LEAF_CANDIDATE, keep its second
 * location (the word the collector found at the stack pointer) when the
 * leaf function's call frame information says its return address is there
 * (a leaf that set up no frame, or a function at its entry or exit), and
 * drop it otherwise or when there is no call frame information.  Clears
 * the flag.  0, or -1 when out of memory. */
int pv_settle_leaf_candidates(struct pv_profile *p, struct pv_modules *mods);

#endif
