/* legacy-lex.h - what the readers of pprof's legacy text formats share:
 * the walk of the lines, the numbers, the stacks and the memory map, and
 * Java's sample lines (legacy-lex.c); legacy-read.c picks the reader of
 * each format, heap-read.c and java-read.c read the heap and Java ones */
#ifndef PROFVIEW_LEGACY_LEX_H
#define PROFVIEW_LEGACY_LEX_H

#include "profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest count or size a line may give: sums of many stay far from
 * overflowing. */
#define LEGACY_MAX_VALUE ((int64_t)1 << 53)

/* One line of the input, without its end of line, blanks trimmed. */
struct lline {
	const char *s, *e;
	size_t no;             /* 1-based */
};

struct lreader {
	const char *buf;
	size_t len, off;
	size_t lineno;
	size_t map_at;         /* offset of the memory map's sentinel line, or len */
	const char *name;
	struct pv_profile *p;
	/* The stack being read, at most PV_MAX_DEPTH addresses: cut is set
	 * when the line held more (the outer ones are left out). */
	uint64_t *addrs; size_t naddrs, cap_addrs;
	bool cut;
	uint32_t *locs;
	struct heap_kind *heap; /* heap-read.c's, of the profile read */
	/* Leave out the frames of the allocator at the leaf end (those of
	 * its profiler, which took the stack): a heap profile's. */
	bool drop_allocator;
};

bool legacy_blank_char(char c);
/* The first occurrence of what in [s, e), or NULL. */
const char *legacy_find(const char *s, const char *e, const char *what);
/* A hexadecimal number at *p ("0x" before it or not) of 64 bits at most. */
bool legacy_hex_number(const char **p, const char *e, uint64_t *v);
/* The next line, trimmed; false at the end. */
bool legacy_next(struct lreader *r, struct lline *l);
/* Is the line empty or a '#' comment? */
bool legacy_blank(const struct lline *l);
/* Does line l contain the string s? */
bool legacy_contains(const struct lline *l, const char *s);
bool legacy_starts(const struct lline *l, const char *s);
/* Skip blanks at *p. */
void legacy_skip_blanks(const char **p, const char *e);
/* A decimal number at *p (a leading '-' when negative is allowed) of at
 * most LEGACY_MAX_VALUE; false if none. */
bool legacy_number(const char **p, const char *e, bool negative, int64_t *v);
/* Expect character c at *p, after blanks. */
bool legacy_char(const char **p, const char *e, char c);

/* Every "0x..." number in [s, e) appended to r->addrs; -1 after an error
 * (too many, too large) at line no. */
int legacy_hex_addresses(struct lreader *r, const char *s, const char *e, size_t no);
/* Which addresses of a stack are return addresses, moved back into
 * their call instruction by one: all (those of heap profiles, taken
 * inside the allocator), the callers (a thread's, whose leaf is the
 * program counter), or none (Java's ids). */
enum legacy_adjust { ADJUST_ALL, ADJUST_CALLERS, ADJUST_NONE };
/* A sample of the addresses collected (r->addrs, leaf first), values as
 * the profile's sample types. */
int legacy_add_sample(struct lreader *r, enum legacy_adjust adjust, const int64_t *values,
		      uint32_t nvalues);
/* The memory map after the line at r->map_at (mappings for the
 * addresses): /proc/PID/maps lines, and the short "START-END: FILE" ones
 * with "name=value" lines whose $name the following ones use. */
int legacy_read_map(struct lreader *r);
/* A value type and, when period_type is set, the period. */
int legacy_types(struct pv_profile *p, const char *const *types, uint32_t n);
int legacy_error(const struct lreader *r, size_t no, const char *what);

/* Java's samples ("A B @ ID ..." until the first line that is not one,
 * each handed to add with the addresses in r->addrs). */
int java_samples(struct lreader *r, int (*add)(struct lreader *, int64_t, int64_t, size_t));

#endif
