/* java-read.h - Java's legacy profiles (java-read.c): contentionz and
 * heapz text, and the names of the ids of Java's CPU profiles
 *
 * 0, or -1 after reporting an error. */
#ifndef PROFVIEW_JAVA_READ_H
#define PROFVIEW_JAVA_READ_H

#include "legacy-lex.h"

/* Java's contentionz and heapz profiles, after their first line. */
int java_read_contention(struct lreader *r);
int java_read_heap(struct lreader *r, const struct lline *first);

/* The names of a Java profile's ids (" 0xID function (File.java:LINE)"
 * lines), text at the end of Java's CPU profiles too: the locations at
 * these addresses (with no mapping) get their function. */
int legacy_java_locations(struct pv_profile *p, const unsigned char *buf, size_t len, const char *name);

#endif
