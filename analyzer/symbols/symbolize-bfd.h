/* symbolize-bfd.h - the second symbolizer: functions and lines from libbfd
 *
 * Same model output as pv_symbolize() (symbolize.h), read by the library
 * binutils' addr2line uses, so the two readings of the same file can be
 * compared (profview --symbolizer=bfd).
 */
#ifndef PROFVIEW_SYMBOLIZE_BFD_H
#define PROFVIEW_SYMBOLIZE_BFD_H

#include "modules.h"
#include "profile.h"
#include "symbolize.h"

/* Give every location that has no lines yet its function, file:line and
 * inlined calls (innermost first) with libbfd, at the ELF virtual address
 * mods places it at.  Each file is opened once; separate debug info is
 * followed by build-id (/usr/lib/debug/.build-id/) and .gnu_debuglink.
 * Function names are demangled unless opt says no_demangle; functions have
 * no start line (libbfd does not give it).  Addresses no symbol covers get
 * a "module+0xoffset" function; a file libbfd cannot read is warned about
 * once and its frames show as such addresses.  Returns -1 only when out of
 * memory.  opt may be NULL (the defaults). */
int pv_symbolize_bfd(struct pv_profile *p, struct pv_modules *mods,
		     const struct pv_symbolize_options *opt);

#endif
