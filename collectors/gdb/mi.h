/* mi.h - the persistent gdb/MI session (mi.c) */
#ifndef PROFVIEW_GDB_MI_H
#define PROFVIEW_GDB_MI_H

#include "session.h"

/* Attaches one gdb/MI session and runs the snapshots through it; sets
 * st->end. */
void mi_persistent_loop(struct cg_state *st);

#endif
