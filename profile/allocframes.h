/* allocframes.h - the allocator's own frames, trimmed from heap stacks
 *
 * A heap profile's sample is a block and the stack that allocated it; the
 * innermost frames of that stack are the allocator's (malloc, operator
 * new, jemalloc's and tcmalloc's entry points, glibc's internals), which
 * hold every byte and say nothing.  Trimmed, each block is charged to the
 * function that asked for it, as pprof and jeprof show heap profiles.
 */
#ifndef PROFVIEW_ALLOCFRAMES_H
#define PROFVIEW_ALLOCFRAMES_H
#include <stdbool.h>
#include <stddef.h>
#include "profile.h"

/* Is the function named name (its demangled name, arguments or not) or
 * system_name (its name in the binary; NULL or "" when unknown) one of the
 * allocator's entry points or internals?  Exported for the tests. */
bool pv_is_alloc_function(const char *name, const char *system_name);

/* Is p a heap profile (a sample type in bytes named *space, as collect-heap,
 * gperftools, jemalloc and pprof's heap profiles have)? */
bool pv_is_heap_profile(const struct pv_profile *p);

/* Trims the allocator's frames from the leaf end of every sample of the
 * symbolized profile p, as pprof does: walking from the root, the first
 * frame that is the allocator's after one that is not, with every frame
 * inside it, is cut (a location whose inlined lines are partly the
 * allocator's keeps the others).  A stack that is the allocator's
 * throughout is left whole.  p is changed in place.  Returns how many
 * samples were trimmed, or -1 after reporting that memory ran out (p is
 * then unchanged). */
long pv_trim_alloc_frames(struct pv_profile *p);

#endif
