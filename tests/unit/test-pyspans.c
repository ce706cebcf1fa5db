/* test-pyspans.c - the collector's gathered reads of its own memory
 * (collectors/preload/pyspans.c): spans that end in an unmapped page keep
 * the bytes before it, the reads go on after it, and a str object's text
 * is made from a span, read whole, or given up when it is not readable */
#include "check.h"
#include "pyspans.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define PAGE 4096u

/* A compact str object's offsets, as 3.12's header has them. */
static const struct py_layout layout = {
	.unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 40,
	.unicode_utf8_length = 40, .unicode_utf8 = 48, .unicode_compact_data = 56,
};

static int nreads;

static int own_read(void *dst, uintptr_t addr, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)addr, len };

	nreads++;
	return syscall(SYS_process_vm_readv, (long)getpid(), &local, 1UL, &remote, 1UL, 0UL) ==
			       (long)len ? 0 : -1;
}

/* A compact ASCII str object of text at at. */
static void put_ascii(unsigned char *at, const char *text)
{
	uint64_t len = strlen(text);
	uint32_t state = 1u << 2 | 1u << 5 | 1u << 6; /* kind 1, compact, ascii */

	memset(at, 0, layout.unicode_ascii_data);
	memcpy(at + layout.unicode_length, &len, 8);
	memcpy(at + layout.unicode_state, &state, 4);
	memcpy(at + layout.unicode_ascii_data, text, len);
}

/* A compact str of kind 2 (UCS-2) of the characters c[0..n) at at. */
static void put_ucs2(unsigned char *at, const uint16_t *c, uint64_t n)
{
	uint32_t state = 2u << 2 | 1u << 5;

	memset(at, 0, layout.unicode_compact_data);
	memcpy(at + layout.unicode_length, &n, 8);
	memcpy(at + layout.unicode_state, &state, 4);
	memcpy(at + layout.unicode_compact_data, c, n * 2);
}

int main(void)
{
	/* pages 2 and 4 without access, the others mapped */
	unsigned char *m = mmap(NULL, 6 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	const uint32_t span = layout.unicode_compact_data + 96;
	static struct pyspans p;
	char buf[PYSPANS_TEXT_MAX], long_text[300];
	static const uint16_t ucs[] = { 'n', 0xe9, 0x20ac, 'x' };
	int a, b, c, d, e, f;

	CHECK(m != MAP_FAILED);
	CHECK_EQ(mprotect(m + 2 * PAGE, PAGE, PROT_NONE), 0);
	CHECK_EQ(mprotect(m + 4 * PAGE, PAGE, PROT_NONE), 0);
	/* a: its text ends 8 bytes before the page without access, which
	 * its span reaches into */
	unsigned char *sa = m + 2 * PAGE - layout.unicode_ascii_data - 20 - 8;
	put_ascii(sa, "ends_near_the_page__");
	/* b: its text runs into page 4 */
	unsigned char *sb = m + 4 * PAGE - layout.unicode_ascii_data - 10;
	memset(sb, 0, layout.unicode_ascii_data + 10);
	uint64_t blen = 40;
	uint32_t bstate = 1u << 2 | 1u << 5 | 1u << 6;
	memcpy(sb + layout.unicode_length, &blen, 8);
	memcpy(sb + layout.unicode_state, &bstate, 4);
	/* c: after the pages without access, read in the same calls */
	unsigned char *sc = m + 5 * PAGE + 100;
	put_ascii(sc, "after_the_hole");
	/* d: longer than its span */
	for (size_t i = 0; i < sizeof(long_text) - 1; i++)
		long_text[i] = (char)('a' + i % 26);
	long_text[sizeof(long_text) - 1] = 0;
	put_ascii(m + 100, long_text);
	/* e: UCS-2, made UTF-8; f: its header in the page without access */
	put_ucs2(m + 1000, ucs, 4);

	pyspans_init(&p);
	a = pyspans_add(&p, (uintptr_t)sa, span);
	b = pyspans_add(&p, (uintptr_t)sb, span);
	c = pyspans_add(&p, (uintptr_t)sc, span);
	d = pyspans_add(&p, (uintptr_t)(m + 100), span);
	e = pyspans_add(&p, (uintptr_t)(m + 1000), span);
	f = pyspans_add(&p, (uintptr_t)(m + 2 * PAGE + 8), span);
	CHECK(a >= 0 && b >= 0 && c >= 0 && d >= 0 && e >= 0 && f >= 0);
	CHECK_EQ(pyspans_add(&p, (uintptr_t)sa, span), a); /* the same span once */
	CHECK_EQ(pyspans_add(&p, 100, span), -1);         /* the first page */
	CHECK_EQ(p.n, 6u);
	/* one call, and one more after each page that could not be read */
	CHECK_EQ(pyspans_read(&p, getpid()), 3u);
	CHECK_EQ(p.s[a].got, (uint32_t)(m + 2 * PAGE - sa));
	CHECK_EQ(p.s[b].got, (uint32_t)(m + 4 * PAGE - sb));
	CHECK_EQ(p.s[c].got, span);
	CHECK_EQ(p.s[f].got, 0u);

	nreads = 0;
	CHECK_EQ(pyspans_string(&layout, &p, a, 0, buf, own_read), 20u);
	CHECK(memcmp(buf, "ends_near_the_page__", 20) == 0);
	CHECK_EQ(nreads, 0); /* all in the span */
	CHECK_EQ(pyspans_string(&layout, &p, b, 0, buf, own_read), 0u);
	CHECK_EQ(nreads, 0); /* not read again: its page is known unreadable */
	CHECK_EQ(pyspans_string(&layout, &p, c, 0, buf, own_read), 14u);
	CHECK(memcmp(buf, "after_the_hole", 14) == 0);
	CHECK_EQ(pyspans_string(&layout, &p, d, 0, buf, own_read), (uint32_t)strlen(long_text));
	CHECK(memcmp(buf, long_text, strlen(long_text)) == 0);
	CHECK_EQ(nreads, 1); /* the rest of the long one */
	CHECK_EQ(pyspans_string(&layout, &p, e, 0, buf, own_read), 7u);
	CHECK(memcmp(buf, "n\xc3\xa9\xe2\x82\xacx", 7) == 0);
	CHECK_EQ(pyspans_string(&layout, &p, f, 0, buf, own_read), 0u);
	/* read on its own, as when a gathering is full */
	CHECK_EQ(pyspans_string(&layout, NULL, -1, (uintptr_t)sa, buf, own_read), 20u);
	CHECK(memcmp(buf, "ends_near_the_page__", 20) == 0);
	CHECK_EQ(pyspans_string(&layout, NULL, -1, (uintptr_t)sb, buf, own_read), 0u);

	/* more pieces than one call takes (every other span across a page
	 * boundary) */
	pyspans_init(&p);
	for (uint32_t i = 0; i < PYSPANS_MAX; i++) {
		unsigned char *at = i % 2 ? m + PAGE - 30 : m + 5 * PAGE + 16 * i;

		CHECK_EQ(pyspans_add(&p, (uintptr_t)at, 100 + i), (int)i);
	}
	CHECK_EQ(pyspans_read(&p, getpid()), 2u);
	for (uint32_t i = 0; i < PYSPANS_MAX; i++)
		CHECK_EQ(p.s[i].got, 100 + i);
	for (uint32_t i = 0; i < PYSPANS_MAX; i++)
		CHECK(memcmp(p.buf + p.s[i].off, (void *)p.s[i].addr, p.s[i].got) == 0);
	/* full: the bytes run out */
	CHECK_EQ(pyspans_add(&p, (uintptr_t)m + 5000, PYSPANS_BYTES), -1);

	/* the room of a few walks at once: none when all are taken */
	struct pyspans *taken[9];

	CHECK(pyspans_claim() == NULL); /* (not mapped yet) */
	CHECK_EQ(pyspans_pool_init(), 0);
	for (int i = 0; i < 9; i++)
		taken[i] = pyspans_claim();
	CHECK(taken[0] != NULL && taken[7] != NULL && taken[0] != taken[7]);
	CHECK(taken[8] == NULL);
	pyspans_release(taken[3]);
	CHECK(pyspans_claim() == taken[3]);
	pyspans_pool_reset();
	CHECK(pyspans_claim() == taken[0]);
	munmap(m, 6 * PAGE);
	return check_done("pyspans");
}
