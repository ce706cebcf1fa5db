/* raw-stacks.h - a raw trace's stack table, and the stacks of locations
 * stored once each (raw-stacks.c); internal to the formats library */
#ifndef PROFVIEW_RAW_STACKS_H
#define PROFVIEW_RAW_STACKS_H

#include "raw-reader.h"

/* The slot of stack id in the table (an empty one when the table does
 * not have it), or NULL when the trace has no table. */
struct stack_ref *rd_stack_slot(struct reader *rd, uint32_t id);
/* Stores a stack of locations once: samples with the same frames share
 * it.  Its offset, or UINT32_MAX when out of memory. */
uint32_t rd_dedup_stack(struct reader *rd, const uint32_t *locs, uint32_t n);
/* Turns n raw addresses into a stored stack of locations (rd->nlocs of
 * them); *candidate: frames[1] of a frame-pointer trace is a candidate. */
uint32_t rd_store_frames(struct reader *rd, const unsigned char *frames, uint32_t n,
			 bool *candidate);
/* The pass that stores the stack table, in a trace that has one. */
int rd_stack_pass(struct reader *rd);
/* Frees the stack table and the stored stacks' index. */
void rd_stacks_free(struct rd_stacks *s);

#endif
