/* vdso.h - this process's vDSO as a file, to read the vDSO of a trace */
#ifndef PROFVIEW_VDSO_H
#define PROFVIEW_VDSO_H

#include <stdint.h>

/* A file descriptor (memfd) holding a copy of this process's vDSO image
 * when it is the one the trace saw: build_id (lower-case hex) equal to its
 * own, or, when the trace has none, a mapping of the same size.  -1 when
 * it is not (another kernel) or cannot be had.  The caller closes it. */
int vdso_open(const char *build_id, uint64_t mapping_size);

#endif
