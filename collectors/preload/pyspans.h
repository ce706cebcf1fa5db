/* pyspans.h - many short reads of the process's own memory gathered into
 * few process_vm_readv calls, and a CPython str object's text taken from
 * what one of them read (pyspans.c)
 *
 * A walk of Python frames that meets new code objects needs, for each,
 * two strings (its qualified name, its file name) and a piece of its
 * line table: each a header that says how long the rest is, then the
 * rest.  Read one by one, that is two calls an item; here each is read as
 * one bounded span (the header and the text most items need), and the
 * spans of one walk together, up to PYSPANS_IOV remote pieces a call.
 *
 * A span is split at page boundaries into separate remote pieces:
 * process_vm_readv stops at the first piece it cannot read, and never
 * returns part of one, so that a span whose end lies in an unmapped page
 * keeps the bytes before that page, and the calls go on after it.
 *
 * All signal-safe but pyspans_pool_init: no allocation, no lock.
 */
#ifndef PROFVIEW_PYSPANS_H
#define PROFVIEW_PYSPANS_H

#include <stdint.h>
#include <sys/types.h>

#include "pydwarf.h"

#pragma GCC visibility push(hidden)

#define PYSPANS_MAX 48     /* spans of one gathering */
#define PYSPANS_BYTES 6144 /* their bytes */
#define PYSPANS_IOV 64     /* remote pieces of one call */
#define PYSPANS_TEXT_MAX 512 /* bytes of a string's text made */

/* Reads len bytes at addr into dst, all or nothing: 0, or -1. */
typedef int pyspans_read_fn(void *dst, uintptr_t addr, size_t len);

struct pyspans {
	uint32_t n, used;
	struct pyspans_span {
		uintptr_t addr;
		uint32_t len;   /* asked for */
		uint32_t got;   /* read, from addr on (after pyspans_read) */
		uint32_t off;   /* in buf */
	} s[PYSPANS_MAX];
	unsigned char buf[PYSPANS_BYTES];
};

/* The room for spans, a few of them mapped once by pyspans_pool_init
 * (not signal-safe; -1 when it could not be), is taken by a walk with
 * pyspans_claim (NULL when every one is taken, by walks of other threads
 * or interrupted ones of this thread: the caller then reads item by item)
 * and given back with pyspans_release: the handler's stack, a thread's
 * own and perhaps a small one, holds none of it.  pyspans_pool_reset, in
 * a forked child (one thread), takes back those its parent's other
 * threads held. */
int pyspans_pool_init(void);
struct pyspans *pyspans_claim(void);
void pyspans_release(struct pyspans *p);
void pyspans_pool_reset(void);

/* Start: n and used 0. */
static inline void pyspans_init(struct pyspans *p)
{
	p->n = p->used = 0;
}

/* The span of len bytes at addr (at most 4096) in p, the same one when
 * already there: its index, or -1 when p is full or addr is in the first
 * page. */
int pyspans_add(struct pyspans *p, uintptr_t addr, uint32_t len);

/* Reads p's spans from the process pid, each's got set to the bytes read
 * from its start.  Returns the calls made. */
uint32_t pyspans_read(struct pyspans *p, pid_t pid);

/* Bytes [off, off + n) of span i into dst: from what was read, and the
 * rest with read when the span was read whole (else it is not readable).
 * 0, or -1. */
int pyspans_bytes(const struct pyspans *p, int i, uint32_t off, void *dst, uint32_t n,
		  pyspans_read_fn *read);

/* The text of the str object at span i of p (or, with p NULL, at s, all
 * read with read) as UTF-8 into buf (at most PYSPANS_TEXT_MAX bytes, cut
 * at a character), with the offsets of l: its length, 0 when not
 * readable. */
uint32_t pyspans_string(const struct py_layout *l, const struct pyspans *p, int i, uintptr_t s,
			char *buf, pyspans_read_fn *read);

#pragma GCC visibility pop

#endif
