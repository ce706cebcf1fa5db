/* lost.h - the count of samples lost (preload.lost_pending: samples the
 * handler could not write), written into the trace as a RAW_LOST record
 * (lost.c): by the handler, at a termination signal, at the end
 */
#ifndef PROFVIEW_TIMER_LOST_H
#define PROFVIEW_TIMER_LOST_H

#pragma GCC visibility push(hidden)

/* Writes the pending count of lost samples as a RAW_LOST record; wait as
 * for writer_reserve.  Signal-safe unless wait is WRITER_WAIT. */
void lost_write(int wait);

#pragma GCC visibility pop

#endif
