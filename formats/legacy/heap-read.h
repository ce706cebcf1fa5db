/* heap-read.h - heap profiles among the legacy text formats (heap-read.c):
 * gperftools' and tcmalloc's "heap profile:" dumps, jemalloc's heap_v2
 * ones, Java's heapz samples
 *
 * Each reads, from the reader the first line was taken from, the samples
 * into r->p with the heap's sample types, and stops at the memory map (or
 * for Java, at the first line that is no sample).  0, or -1 after
 * reporting an error. */
#ifndef PROFVIEW_HEAP_READ_H
#define PROFVIEW_HEAP_READ_H

#include "legacy-lex.h"

/* "heap profile:" and jemalloc's heap_v2 dumps, after their first line. */
int heap_read_legacy(struct lreader *r, const struct lline *first);
int heap_read_jemalloc(struct lreader *r, const struct lline *first);
/* Java's heapz samples ("bytes objects @ ids"); unit is the line naming
 * the resolution (bytes...). */
int heap_read_java(struct lreader *r, const struct lline *unit);

#endif
