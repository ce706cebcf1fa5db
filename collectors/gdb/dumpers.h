/* dumpers.h - dumpers that run once per snapshot: batch gdb, eu-stack
 * (dumpers.c) */
#ifndef PROFVIEW_GDB_DUMPERS_H
#define PROFVIEW_GDB_DUMPERS_H

#include "session.h"

/* Each runs snapshots until cg_should_stop or an end, which it
 * sets in st->end. */

void dumpers_batch_loop(struct cg_state *st);
void dumpers_eustack_loop(struct cg_state *st, const char *eustack);

#endif
