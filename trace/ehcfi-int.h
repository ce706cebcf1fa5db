/* ehcfi-int.h - what the two halves of ehcfi share: the tables
 * (ehcfi-build.c) and the walk over them (ehcfi.c); libc only */
#ifndef PROFVIEW_EHCFI_INT_H
#define PROFVIEW_EHCFI_INT_H

#include "ehcfi.h"

#if defined(__x86_64__)
#define EHCFI_SUPPORTED 1
#else
#define EHCFI_SUPPORTED 0
#endif

/* DWARF register numbers of x86-64 */
#define DW_RBP 6
#define DW_RSP 7
#define DW_RA 16
#define DW_NREGS EHCFI_NREGS

#define KIND_NONE EHCFI_NONE
#define KIND_REG EHCFI_REG
#define KIND_DEREF EHCFI_DEREF
#define KIND_PLT EHCFI_PLT
#define KIND_SIGNAL EHCFI_SIGNAL
#define KIND_END EHCFI_END
#define KIND_BAD EHCFI_BAD

/* Where the caller's rbp is: unchanged, at CFA + fp_off, unknown, or at
 * rbp + fp_off (the frame of a stack realigned through a pointer). */
enum fp_rule { FP_SAME = 0, FP_OFFSET = 1, FP_UNKNOWN = 2, FP_AT_RBP = 3 };

_Static_assert(sizeof(struct ehcfi_row) == 16, "ehcfi_row is 16 bytes");

#define PAGE_SHIFT 12

#endif
