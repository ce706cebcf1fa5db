/* symbolize.h - turn the addresses of a profile into functions and lines */
#ifndef PROFVIEW_SYMBOLIZE_H
#define PROFVIEW_SYMBOLIZE_H

#include "modules.h"
#include "profile.h"

/* Give every location that has no lines yet its function and file:line,
 * reading the mapped ELF files (and their separate debug info) with libdw
 * through mods.
 * Addresses no symbol covers get a "module+0xoffset" function.  Files that
 * cannot be read are warned about once and do not make this fail; returns
 * -1 only when out of memory. */
int pv_symbolize(struct pv_profile *p, struct pv_modules *mods);

#endif
