/* raw-unwind.h - a raw trace's register samples, unwound by the
 * analyzer's unwinder, and the check of its unwinding against the
 * collector's (raw-unwind.c); internal to the formats library */
#ifndef PROFVIEW_RAW_UNWIND_H
#define PROFVIEW_RAW_UNWIND_H

#include "raw-reader.h"

/* The walk ahead of register samples, when the unwinder can walk. */
int rd_batch_new(struct reader *rd);
/* A sample with registers and a stack copy (it: the walk just past rec). */
int rd_regs_sample(struct reader *rd, const struct raw_sample_regs *s, const struct raw_iter *it,
		   const struct raw_record *rec, const struct raw_sample_kernel *k);
/* The collector's frames for the register sample just read, checked. */
void rd_check_record(struct reader *rd, const struct raw_unwind_check *c);
/* At the end: the unwind check's verdict, one line, and the first
 * differences; the register samples that could not be unwound. */
void rd_unwind_report(struct reader *rd);
/* The scratch of unwound frames; 0, or -1 when out of memory (not
 * reported). */
int rd_unwind_init(struct rd_unwind *u);
/* Frees the walk ahead and the scratch of unwound frames. */
void rd_unwind_free(struct rd_unwind *u);

#endif
