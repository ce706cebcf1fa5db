/* debugfile.h - a separate debug file's compressed sections decompressed
 * on two threads
 *
 * Debian's debug files (libc6-dbg's, every -dbgsym package's) keep their
 * DWARF zlib-compressed (SHF_COMPRESSED).  libdw decompresses every debug
 * section of a file when it opens it, on the thread that asked, into
 * memory of its own: for libc, 10 MB out of 3.8 MB in, most of the time
 * taken by symbolizing a profile in libc.  Here the file is copied into a
 * file kept for the next reports (debugcache.h), or an anonymous in-memory
 * file (memfd) when none may be kept, with its sections decompressed, the
 * biggest first, by two threads, each a section at once (libdeflate, for
 * one of 16 MB at most) or through a small buffer (zlib); libdw then maps
 * the copy as it would map an uncompressed file, and reads only the pages
 * it needs.  The copy is the same file as far as libdw can tell: the same
 * ELF header, program headers and sections, in place, only uncompressed,
 * with two exceptions that change no answer a symbolizer asks for:
 *  - the sections no symbolizer reads (location lists, macros, the name
 *    lookup tables of debuggers) are not copied: SHT_NOBITS in the copy;
 *  - given the addresses that will be asked about, .debug_info ends after
 *    the last unit holding one of them and .debug_aranges names only the
 *    units before that (debugtrim.h), when no DIE of the file may refer
 *    outside its unit: only that much of .debug_info is decompressed.
 */
#ifndef PROFVIEW_DEBUGFILE_H
#define PROFVIEW_DEBUGFILE_H

#include <stdbool.h>
#include <stddef.h>

#include <stdint.h>

/* A descriptor of the decompressed copy of the ELF file open on fd (which
 * is left open), or -1 when there is nothing to do or it cannot be done
 * here (not a 64-bit little-endian ELF file, no zlib-compressed section,
 * another compression, a damaged file, no memory): use fd itself.  With
 * id, also -1 unless the file has that GNU build-id (len bytes).  With
 * addrs (naddrs of them, sorted ascending, as the file's DWARF gives
 * addresses), the copy answers for those addresses only: its .debug_info
 * may end early (see above); without, it answers for every address.  With
 * id, a kept copy that answers for those addresses is given when there is
 * one, and a new copy is made in a file that is kept (debugcache.h) unless
 * caching is off.  Safe to call from several threads at once. */
int debugfile_decompressed(int fd, const unsigned char *id, size_t len, const uint64_t *addrs,
			   size_t naddrs);

/* libdwfl's first place for the separate debug file of a module with
 * GNU build-id id[0..len): /usr/lib/debug/.build-id/xx/rest.debug.  When
 * that file has that build-id and compressed sections, a descriptor of
 * its decompressed copy, *path its name (malloc'd); else -1 and nothing
 * happened (libdwfl's own search is to be asked).  addrs and naddrs as
 * for debugfile_decompressed. */
int debugfile_by_build_id(const unsigned char *id, size_t len, const uint64_t *addrs,
			  size_t naddrs, char **path);


#endif
