/* lines.h - file:line of many addresses of a unit, in one walk of its line
 * program
 *
 * dwfl_module_getsrc makes the whole line table of a unit (every row,
 * sorted) the first time it is asked about an address in it, and keeps it
 * until the Dwfl ends: on a big program with debug info most of the
 * symbolizer's time and memory.  Here the unit's line program is run once
 * for all the sampled addresses in it, keeping only their answers and the
 * unit's file names, and each answer is the one dwfl_module_getsrc gives
 * (libdw 0.188): the row with the highest address at most the address, of
 * those at that address the last one in the program, none when that is an
 * end of a sequence; its file named as libdw names it (a relative name
 * after its directory and a '/', the unit's directory for directory 0
 * before DWARF 5, "???" for file 0 before DWARF 5).  What this does not
 * read (another address size, VLIW op_index, unknown forms, anything
 * damaged) it leaves to libdw: the caller is told to ask it.
 */
#ifndef PROFVIEW_LINES_H
#define PROFVIEW_LINES_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A unit's file names, as libdw composes them. */
struct pv_unit_files {
	char **names;          /* one block with the strings: free names */
	size_t n;
};

/* The file:line of addrs[0..n) (the unit's addresses, no bias) of unit
 * cu: file[i] (borrowed from *files, NULL when none) and line[i], found[i]
 * false where dwfl_module_getsrc finds no line.  *files gets the unit's
 * names (free with pv_unit_files_free).  1 when done, 0 when the unit
 * must be left to libdw (nothing was set), -1 when out of memory
 * (reported). */
int pv_unit_lines(Dwarf_Die *cu, const uint64_t *addrs, size_t n, const char **file, int *line,
		  bool *found, struct pv_unit_files *files);

/* The name of file index i of the unit, as dwarf_filesrc gives it: NULL
 * when out of range. */
const char *pv_unit_file(const struct pv_unit_files *files, uint64_t i);

void pv_unit_files_free(struct pv_unit_files *files);

#endif
