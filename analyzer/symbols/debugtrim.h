/* debugtrim.h - how much of a debug file's DWARF a set of addresses needs
 *
 * libdw finds the unit of an address through .debug_aranges, whose sets
 * name each unit by its offset in .debug_info, and reads the headers of
 * the units from the start of .debug_info up to the one it wants.  So for
 * a known set of addresses, a copy of the file whose .debug_info ends
 * after the last unit holding one of them, and whose .debug_aranges keeps
 * only the sets of the units it still has, answers every question about
 * those addresses as the whole file does: the same unit, the same DIEs
 * (offsets included), the same lines.  Unless a DIE may refer outside its
 * own unit (DW_FORM_ref_addr, DW_FORM_ref_sig8, DW_FORM_indirect, the
 * supplementary-file forms): the abbreviations say whether any can.
 * Everything here works on bytes in memory; nothing is read or written.
 */
#ifndef PROFVIEW_DEBUGTRIM_H
#define PROFVIEW_DEBUGTRIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Does the .debug_abbrev section abbrev[0..len) describe no attribute of a
 * form that refers outside its unit?  false also when it cannot be read
 * to its end. */
bool debugtrim_units_self_contained(const unsigned char *abbrev, size_t len);

/* In the .debug_aranges section buf[0..len) (64-bit little-endian
 * file), the offset in .debug_info of the last unit (the highest offset)
 * whose address ranges hold one of addrs[0..n) (sorted, ascending) in
 * *last, 0 when none does.  false when the section is not one this reads
 * (as debugtrim_aranges). */
bool debugtrim_last_unit(const unsigned char *buf, size_t len, const uint64_t *addrs, size_t n,
			 uint64_t *last);

/* In the .debug_aranges section buf[0..*len) (64-bit little-endian
 * file), the offset in .debug_info of the last unit (the highest offset)
 * whose address ranges hold one of addrs[0..n) (sorted, ascending) in
 * *last, 0 when none does; then the sets of the units after it removed,
 * the rest moved together in their order, *len the new length.  false,
 * with buf as it was, when the section is not one this reads (64-bit
 * DWARF offsets, segments, addresses other than 8 bytes, a set that runs
 * past the end). */
bool debugtrim_aranges(unsigned char *buf, size_t *len, const uint64_t *addrs, size_t n,
		       uint64_t *last);

/* In the .debug_aranges section buf[0..len), the lowest offset in
 * .debug_info of a unit after the one at unit that a set names: where
 * that unit ends at the latest (a unit no set names may lie between).
 * UINT64_MAX when no set names one, or the section is not one this reads
 * (as debugtrim_aranges). */
uint64_t debugtrim_unit_after(const unsigned char *buf, size_t len, uint64_t unit);

/* The length of the .debug_info unit whose header starts with the 12
 * bytes hdr, header included (32- or 64-bit DWARF), or 0 when hdr is not
 * a unit's start. */
uint64_t debugtrim_unit_size(const unsigned char hdr[12]);

#endif
