/* symbolize.h - turn the addresses of a profile into functions and lines */
#ifndef PROFVIEW_SYMBOLIZE_H
#define PROFVIEW_SYMBOLIZE_H

#include "modules.h"
#include "profile.h"

struct pv_symbolize_options {
	/* Show C++ functions by their names in the binary ("_ZN2ns3fooEi")
	 * rather than demangled and qualified ("ns::foo(int)"). */
	bool no_demangle;
};

/* Give every location that has no lines yet its function and file:line,
 * reading the mapped ELF files (and their separate debug info) with libdw
 * through mods; opt NULL means the defaults.  Addresses no symbol covers
 * get a "module+0xoffset" function.  Files that cannot be read are warned
 * about once and do not make this fail; returns -1 only when out of
 * memory. */
int pv_symbolize(struct pv_profile *p, struct pv_modules *mods,
		 const struct pv_symbolize_options *opt);

/* The function for an address no symbol covers, named "module+0xoffset"
 * (the offset in the mapped file) or "0xaddr" outside any mapping; its
 * index, or PV_NONE when out of memory.  Shared by the symbolizers. */
uint32_t pv_symbolize_unknown_function(struct pv_profile *p, const struct pv_location *loc);

/* Is a function at module address a of mod inlined into itself, "called"
 * from its own declaration?  gcc describes so the piece of a function it
 * split off and inlined back, which is no call: the symbolizers show one
 * frame for the two. */
bool pv_symbolize_self_inlined(Dwfl_Module *mod, GElf_Addr a);

#endif
