/* inject-walk.h - the frames of a stopped thread of another process, for
 * the injector's safe point (inject.c)
 *
 * A copy of the thread's stack (process_vm_readv, from its stack pointer)
 * is walked from its registers over unwind tables made of the .eh_frame
 * of the objects the process maps (trace/ehcfi.h), read from their files
 * (/proc/PID/map_files, else the path when it is still the file mapped)
 * or, for the vDSO, from the process's memory.  An object is read the
 * first time a walk reaches its code, and only the chunks of rows the
 * walk looks up are made (ehcfi-lazy.h); the C library, the loader and
 * the program are read at once.  Every address of the process belongs to
 * one range of the tables (code without CFI and memory that is no code
 * to empty ones), so the walk never takes a frame-pointer step it could
 * not check: where it cannot go on, it says how much of the stack it did
 * not walk.
 *
 * Not signal-safe; one thread.  x86-64 only (elsewhere every walk walks
 * nothing, and the whole copy is left to the caller).
 */
#ifndef PROFVIEW_LAUNCH_INJECT_WALK_H
#define PROFVIEW_LAUNCH_INJECT_WALK_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

struct inject_objs;

/* The executable mappings of process pid, with the C library's, the
 * loader's and the program's tables ready; NULL when its maps cannot be
 * read or memory ran out.  Free with inject_objs_free. */
struct inject_objs *inject_objs_new(pid_t pid);

/* Frees o and unmaps what it read.  NULL: no-op. */
void inject_objs_free(struct inject_objs *o);

#define INJECT_WALK_FRAMES 1024

/* What a walk found.  frames[0..n): the program counter, then each
 * caller's return address (a frame resumed from a signal frame: its pc
 * plus one); when the walk did not complete, the last one is the frame it
 * stopped at, which may be either.  The stack copy's words [rest, hi) of
 * [lo, hi) were not walked (rest == hi: all of it was): the caller judges
 * them by their values.  words points to the copy, valid until the next
 * walk. */
struct inject_walk {
	uint64_t frames[INJECT_WALK_FRAMES + 1];
	uint32_t n;
	const uint64_t *words;
	uintptr_t lo, hi, rest;
	int complete;         /* reached the outermost frame */
};

/* Walks thread tid of o's process, stopped with registers r, into *w: 0,
 * or -1 when not one byte of its stack could be read (w->n = 1: the
 * program counter alone). */
int inject_walk(struct inject_objs *o, pid_t tid, const struct user_regs_struct *r,
		struct inject_walk *w);

#endif
