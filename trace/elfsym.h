/* elfsym.h - does an ELF file define a function? (libc only: the
 * collectors use it too)
 *
 * How a heap profiler tells that a program brings its own allocator: an
 * executable that defines malloc has every call to it, the C library's
 * included, go to its own, never to the one a preloaded library offers.
 */
#ifndef PROFVIEW_ELFSYM_H
#define PROFVIEW_ELFSYM_H

/* 1 when the 64-bit ELF file at path defines a function named name in its
 * dynamic symbol table or its symbol table (any binding: a local malloc
 * takes the program's own calls too), 0 when it does not, -1 when the
 * file cannot be read or is not such an ELF file.  Reads at most the section headers and the two
 * tables with their strings, each bounded by the file's size. */
int pv_elf_defines(const char *path, const char *name);

#endif
