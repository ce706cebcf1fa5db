/* util.c - shared helpers */
#include "util.h"

#include <sys/mman.h>
#include <unistd.h>
#include "budget.h"
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

int pv_grow(void *arrp, size_t *cap, size_t need, size_t elem)
{
	void **arr = arrp;
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return pv_oom();
		n *= 2;
	}
	/* the one point where arrays of any size grow: charged */
	if (pv_budget_charge((n - *cap) * elem) < 0)
		return -1;
	q = realloc(*arr, n * elem);
	if (!q)
		return pv_oom();
	*arr = q;
	*cap = n;
	return 0;
}

void pv_prefault(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + n) & ~(page - 1);

	/* small arrays fault in quickly enough */
	if (n >= (1u << 20) && hi > lo)
		madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)n;
#endif
}

void pv_strbuf_add(struct pv_strbuf *b, const char *s, size_t n)
{
	if (b->failed)
		return;
	if (pv_grow(&b->s, &b->cap, b->len + n + 1, 1) < 0) {
		b->failed = true;
		return;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void pv_strbuf_printf(struct pv_strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->failed)
		return;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || pv_grow(&b->s, &b->cap, b->len + (size_t)n + 1, 1) < 0) {
		b->failed = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void pv_strbuf_puts(struct pv_strbuf *b, const char *s)
{
	pv_strbuf_add(b, s, strlen(s));
}

void pv_strbuf_putc(struct pv_strbuf *b, char c)
{
	pv_strbuf_add(b, &c, 1);
}

void pv_strbuf_free(struct pv_strbuf *b)
{
	free(b->s);
	*b = (struct pv_strbuf){ 0 };
}
