/* debugcache.h - decompressed copies of separate debug files, kept
 *
 * The copy debugfile.h makes of a debug file with compressed sections
 * costs, for libc's, more than everything else a short report does: most
 * of it zlib inflating the file's DWARF.  Its content depends only on the
 * file, which its GNU build-id names, and on how much of .debug_info it
 * keeps.  So the copy is made in a file of $XDG_CACHE_HOME/profview (or
 * ~/.cache/profview), debug-BUILDID, and the next report that needs that
 * file and no more of its units than the copy holds uses it as it is, as
 * perf keeps the files it reads under ~/.debug.  PROFVIEW_CACHE=off leaves
 * the folder alone: neither read nor written.
 *
 * The file: the copy (an ELF file, whole), the original's whole
 * .debug_aranges (to tell whether a later set of addresses needs a unit
 * the copy lacks), then a tail (struct in debugcache.c) with a magic,
 * the build-id, the sizes, the last unit the copy holds and a CRC-32
 * of every byte before the sum.  A file is used only when it is the
 * user's own regular file (not a link), writable by no one else, whose
 * tail and sizes agree, with that build-id, holding the units the
 * addresses need, and whose sum is right: a damaged file is made anew.  A
 * file is written under a temporary name and renamed when whole, so a
 * reader sees an old file or a new one, never part of one.
 */
#ifndef PROFVIEW_DEBUGCACHE_H
#define PROFVIEW_DEBUGCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The copy holds every unit of .debug_info. */
#define DEBUGCACHE_WHOLE UINT64_MAX

/* A descriptor of the kept copy of the debug file with build-id
 * id[0..len) that answers for addrs[0..n) (sorted; with none, only a
 * copy of the whole answers), or -1: none, not usable, or caching off. */
int debugcache_open(const unsigned char *id, size_t len, const uint64_t *addrs, size_t n);

/* A new empty file (mode 0600) to make that copy in, *tmp its name
 * (malloc'd; the caller gives it to debugcache_commit or unlinks and
 * frees it), or -1 when caching is off or there is no place for it. */
int debugcache_create(const unsigned char *id, size_t len, char **tmp);

/* The copy made in fd (size bytes whose CRC-32 is sum, created by
 * debugcache_create as tmp), holding .debug_info up to the unit at last_unit (or
 * DEBUGCACHE_WHOLE): the original's .debug_aranges aranges[0..naranges)
 * and the tail appended, and the file renamed to the build-id's name.
 * On failure the temporary file is removed; the copy in fd is whole
 * either way.  tmp is freed.  Silent: the file is only ever a saving. */
void debugcache_commit(int fd, char *tmp, const unsigned char *id, size_t len, uint64_t size,
		       uint32_t sum, uint64_t last_unit, const unsigned char *aranges,
		       size_t naranges);

#endif
