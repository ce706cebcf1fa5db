/* procmaps.h - the lines of /proc/self/maps and ELF build ids (procmaps.c)
 *
 * In the preload library.  None of these functions is signal-safe: they
 * run at a process's start, at a dlopen and at its end.
 */
#ifndef PROFVIEW_PRELOAD_PROCMAPS_H
#define PROFVIEW_PRELOAD_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>

/* The longest build id kept; a longer one is cut to it. */
#define PROCMAPS_BUILD_ID_MAX 31

/* Finds NT_GNU_BUILD_ID in the note area p of len bytes and copies it
 * (at most PROCMAPS_BUILD_ID_MAX bytes) to out.  Returns its length, or 0
 * when there is none. */
uint8_t procmaps_note_build_id(const unsigned char *p, size_t len, uint8_t *out);
struct dl_phdr_info;
/* The same of a loaded object, from its first PT_NOTE segment that holds
 * one, read in memory. */
uint8_t procmaps_loaded_build_id(const struct dl_phdr_info *info, uint8_t *out);
/* The build id of the ELF file at path, from its PT_NOTE segments, into
 * out as above.  Returns its length, or 0 (no file, not ELF64, no id). */
uint8_t procmaps_file_build_id(const char *path, uint8_t *out);
/* All of /proc/self/maps, NUL-terminated, in memory the caller frees;
 * NULL when it cannot be read or memory runs out. */
char *procmaps_read(void);
/* Splits a line of the maps ("start-end perms offset dev inode path").
 * Returns 0 with the fields (perms NUL-terminated; *path points into
 * line, at the path or at the line's end), or -1 for a line not of that
 * form. */
int procmaps_split(const char *line, unsigned long long *start, unsigned long long *end,
		   char perms[5], unsigned long long *pgoff, const char **path);
/* As procmaps_split, for executable lines: 1 with the fields when the line
 * is one, else 0. */
int procmaps_parse(const char *line, unsigned long long *start, unsigned long long *end,
		   unsigned long long *pgoff, const char **path);
/* The file a maps line's path names: the kernel shows a newline in a name
 * as "\012", so such a path is decoded into buf (of cap bytes) when the
 * decoded name is a file and the shown one is not.  Returns path or buf. */
const char *procmaps_unescape(const char *path, char *buf, size_t cap);

#endif
