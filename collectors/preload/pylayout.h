/* pylayout.h - the offsets into a CPython's structures: the collector's
 * tables per version, and those the interpreter publishes (pylayout.c)
 *
 * None is signal-safe; all run when an interpreter is found.
 */
#ifndef PROFVIEW_PRELOAD_PYLAYOUT_H
#define PROFVIEW_PRELOAD_PYLAYOUT_H

#include "pydwarf.h"

#include <stddef.h>
#include <stdint.h>

/* The table of a version (major << 8 | minor), NULL when there is none. */
const struct py_layout *pylayout_table(uint32_t version);

/* 3.13 on: fills *l (whose version is set) from the offsets the
 * interpreter publishes at runtime, _PyRuntime's address, read with read
 * (all or nothing, 0 on success).  Returns 0, -1 when there are none, -2
 * when they are of another version or of a free-threaded build. */
int pylayout_published(struct py_layout *l, uintptr_t runtime,
		       int (*read)(void *dst, uintptr_t addr, size_t len));

/* The version of the interpreter of lib (a dlopen handle, or
 * RTLD_DEFAULT), major << 8 | minor, 0 when not known; its third number
 * + 1 in *micro (0: not known). */
uint32_t pylayout_version(void *lib, uint32_t *micro);
/* The address range [*lo, *hi) of lib's evaluation loop's function, left
 * as it is when not found. */
void pylayout_eval_range(void *lib, uintptr_t *lo, uintptr_t *hi);

#endif
