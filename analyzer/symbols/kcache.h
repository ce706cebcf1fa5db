/* kcache.h - the kernel's own text symbols of this boot, kept in a file
 *
 * /proc/kallsyms is text the kernel makes as it is read, every line
 * formatted anew: reading its 120,000 lines costs more than everything
 * else a short profile needs.  Within one boot the kernel's own symbols
 * (those of vmlinux, the lines without a "[module]") never change; only
 * modules, BPF programs and ftrace trampolines come and go, and they live
 * outside the kernel's image.  So the kernel's own text symbols, once
 * read, are written to $XDG_CACHE_HOME/profview/kernel-BOOTID.syms (or
 * ~/.cache/profview/), and an address between the lowest and the highest
 * of them is named from that file, mapped, as the whole table would name
 * it.  PROFVIEW_CACHE=off leaves the file alone: neither read nor
 * written.  A file that is not the user's own regular file, or not one
 * this wrote, is not used.
 */
#ifndef PROFVIEW_KCACHE_H
#define PROFVIEW_KCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A symbol: its address and its name's offset in the names. */
struct kcache_sym {
	uint64_t addr;
	uint32_t name;
	uint32_t module;       /* not the kernel's own (in a table read, not in the file) */
};

struct kcache;

/* The file of boot id boot, mapped; NULL when there is none, it cannot be
 * used or caching is off. */
struct kcache *kcache_open(const char *boot);

/* Are all of [lo, hi] named by c as the whole table names them? */
int kcache_covers(const struct kcache *c, uint64_t lo, uint64_t hi);

/* The name of the symbol at or below addr, or NULL. */
const char *kcache_find(const struct kcache *c, uint64_t addr);

void kcache_close(struct kcache *c);

/* Write the file of boot id boot from a whole table: syms[0..n) sorted by
 * address, their names in names[0..nnames); only the kernel's own are
 * kept, and nothing is written when a module's symbol lies among them.
 * Silent: the file is only ever a saving. */
void kcache_save(const char *boot, const struct kcache_sym *syms, size_t n, const char *names,
		 size_t nnames);

/* The folder profview keeps its files in ($XDG_CACHE_HOME/profview, or
 * ~/.cache/profview) into buf, *len bytes; false when caching is off
 * (PROFVIEW_CACHE=off) or there is no such place. */
bool kcache_folder(char *buf, size_t size, size_t *len);

/* A new empty file (mode 0600, close-on-exec) in the folder path[0..len)
 * (kcache_folder's, made when missing), named .PREFIX-XXXXXX: its
 * descriptor, its name in path (size bytes); -1 when it cannot be made. */
int kcache_temp(char *path, size_t len, size_t size, const char *prefix);

#endif
