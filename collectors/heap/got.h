/* got.h - calls to the allocator redirected by rewriting the GOT
 *
 * In a running process nothing can be interposed any more: every loaded
 * object (the program and each library, from the link map) calls
 * malloc and the others through its global offset table, whose entries
 * (R_X86_64_JUMP_SLOT, R_X86_64_GLOB_DAT) the loader filled in.  got_patch
 * writes the hooks' functions there instead, keeping each entry's value;
 * got_restore writes every kept value back.  Entries in a page made
 * read-only after relocation (RELRO) are written with the page made
 * writable for that moment and read-only again.
 *
 * Not signal-safe; one caller at a time (the caller serialises).  No
 * allocator call: the table of entries is mapped.
 */
#ifndef PROFVIEW_HEAP_GOT_H
#define PROFVIEW_HEAP_GOT_H

#include <stddef.h>
#include <stdint.h>

/* One function redirected: every entry bound to name gets to. */
struct got_hook {
	const char *name;
	void *to;
};

/* An entry rewritten, and what it held. */
struct got_entry {
	void **where;
	void *was;
	void *to;
};

/* The entries rewritten so far: v[0..n), room for cap (mapped). */
struct got_state {
	struct got_entry *v;
	size_t n, cap;
};

/* Rewrites the entries of hooks[0..nhooks) in every loaded object but the
 * one holding skip (an address in it; NULL: none), leaving those already
 * rewritten (their value a hook's) alone, so that a later call takes the
 * objects loaded since.  Returns how many it rewrote, or -1 (no room, a
 * page that cannot be made writable) with errno set and the entries of
 * this call written back. */
int got_patch(struct got_state *st, const struct got_hook *hooks, size_t nhooks, const void *skip);

/* What the entries bound to name hold in the first loaded object (in the
 * link map's order: the program first) but the one holding skip whose
 * entry is bound already (a lazily bound one points into its own
 * object's PLT until the first call): the definition the loader chose.
 * NULL when no object has such an entry. */
void *got_bound(const char *name, const void *skip);

/* Writes every kept value back, where the entry still holds what we wrote
 * (an object unloaded since, or an entry another tool rewrote, is left),
 * and reads each back.  Returns how many could not be put back or read
 * back different (0: the process's entries are as they were); the state
 * is emptied and its mapping released. */
size_t got_restore(struct got_state *st);

#endif
