/* util.h - small helpers every part of the analyzer side shares */
#ifndef PROFVIEW_UTIL_H
#define PROFVIEW_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Make room for need elements of elem bytes in the array *arrp (a pointer
 * to the array pointer) of capacity *cap, doubling, the growth charged to
 * the memory budget (budget.h).  0, or -1 after reporting that memory or
 * the budget ran out. */
int pv_grow(void *arrp, size_t *cap, size_t need, size_t elem);

/* Map in the pages of a big array that is about to be written whole, in
 * one call instead of a page fault each (a hint: nothing happens where the
 * kernel cannot). */
void pv_prefault(void *p, size_t n);


/* A 64-bit finalizer (MurmurHash3's) for hash tables. */
static inline uint64_t pv_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

/* The value of hexadecimal digit c, or -1. */
static inline int pv_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The last component of a path. */
static inline const char *pv_base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* A growing string, terminated once anything is added; failed after it
 * could not grow (then it stays as it was, and pv_oom has said so). */
struct pv_strbuf {
	char *s;
	size_t len, cap;
	bool failed;
};
void pv_strbuf_add(struct pv_strbuf *b, const char *s, size_t n);
void pv_strbuf_puts(struct pv_strbuf *b, const char *s);
void pv_strbuf_putc(struct pv_strbuf *b, char c);
void pv_strbuf_printf(struct pv_strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pv_strbuf_free(struct pv_strbuf *b);

#endif
