/* trace.h - collect-gdb's trace file (profview-gdb(5)): its header, the
 * snapshots, the maps of the target, the end (trace.c) */
#ifndef PROFVIEW_GDB_TRACE_H
#define PROFVIEW_GDB_TRACE_H

#include "session.h"

/* Creates the trace (st->o.output, or profview-PROGRAM-PID.gdb; "-" is
 * standard output), names it in st->outname and writes its header.  0, or
 * -1 having said why. */
int cg_open_trace(struct cg_state *st);
/* Writes one snapshot taken at t_real (CLOCK_REALTIME): its weight, the
 * time the target ran since the previous one (from st->resumed_ns to t0,
 * when it was stopped for this one, monotonic), at most CG_WEIGHT_CAP
 * intervals, the interval for the first; then the backtrace lines of
 * text, nothing else.  Returns how many thread headers it held. */
unsigned cg_write_snapshot(struct cg_state *st, const char *text, size_t len, int64_t t_real,
			   int64_t t0);

/* The most intervals a snapshot stands for: one that comes late (a slow
 * dump before it, a busy machine) is one sample all the same, and must
 * not outweigh a few on time (profview-gdb(5)). */
#define CG_WEIGHT_CAP 2
/* Writes the end line, the time and why sampling ended (st->end), and
 * closes the trace; an error writing it is said, and makes st->end
 * END_ERROR. */
void cg_close_trace(struct cg_state *st);

#endif
