/* pyspans.c - gathered reads of the process's own memory, and a str
 * object's text from them (see pyspans.h) */
#include "pyspans.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define PYSPANS_PAGE 4096u
#define PYSPANS_POOL 8u /* walks at once that gather their reads */

static struct pyspans *pyspans_pool;
static _Atomic uint32_t pyspans_taken; /* a bit each */

int pyspans_pool_init(void)
{
	void *m;

	if (pyspans_pool != NULL)
		return 0;
	m = mmap(NULL, PYSPANS_POOL * sizeof(struct pyspans), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	pyspans_pool = m;
	return 0;
}

struct pyspans *pyspans_claim(void)
{
	if (pyspans_pool == NULL)
		return NULL;
	for (uint32_t i = 0; i < PYSPANS_POOL; i++)
		if (!(atomic_fetch_or(&pyspans_taken, 1u << i) & 1u << i))
			return &pyspans_pool[i];
	return NULL;
}

void pyspans_release(struct pyspans *p)
{
	if (p != NULL)
		atomic_fetch_and(&pyspans_taken, ~(1u << (uint32_t)(p - pyspans_pool)));
}

void pyspans_pool_reset(void)
{
	atomic_store(&pyspans_taken, 0);
}

int pyspans_add(struct pyspans *p, uintptr_t addr, uint32_t len)
{
	for (uint32_t i = 0; i < p->n; i++)
		if (p->s[i].addr == addr && p->s[i].len == len)
			return (int)i;
	if (addr < PYSPANS_PAGE || len == 0 || len > PYSPANS_PAGE || addr + len < addr ||
	    p->n == PYSPANS_MAX || p->used + len > PYSPANS_BYTES)
		return -1;
	p->s[p->n] = (struct pyspans_span){ .addr = addr, .len = len, .off = p->used };
	p->used += len;
	return (int)p->n++;
}

uint32_t pyspans_read(struct pyspans *p, pid_t pid)
{
	struct iovec local[PYSPANS_IOV], remote[PYSPANS_IOV];
	uint8_t owner[PYSPANS_IOV];
	uint32_t i = 0, at = 0, calls = 0;
	int saved = errno;

	_Static_assert(PYSPANS_MAX <= 255, "a span's index in a byte");
	for (uint32_t k = 0; k < p->n; k++)
		p->s[k].got = 0;
	/* each call from span i's byte at; each ends when its pieces do, or
	 * at the first it could not read: the rest of that span is not, the
	 * next call starts with the next span */
	while (i < p->n) {
		uint32_t k = 0, si = i, sat = at, j;
		unsigned long left;
		long r;

		while (si < p->n && k < PYSPANS_IOV) {
			struct pyspans_span *s = &p->s[si];
			uintptr_t a = s->addr + sat;
			uint32_t piece = PYSPANS_PAGE - (uint32_t)(a & (PYSPANS_PAGE - 1));

			if (piece > s->len - sat)
				piece = s->len - sat;
			local[k] = (struct iovec){ p->buf + s->off + sat, piece };
			remote[k] = (struct iovec){ (void *)a, piece };
			owner[k++] = (uint8_t)si;
			sat += piece;
			if (sat == s->len) {
				si++;
				sat = 0;
			}
		}
		r = syscall(SYS_process_vm_readv, (long)pid, local, (unsigned long)k, remote,
			    (unsigned long)k, 0UL);
		calls++;
		if (r < 0 && errno != EFAULT)
			break; /* (not a page: no read will do) */
		left = r > 0 ? (unsigned long)r : 0;
		for (j = 0; j < k && left >= remote[j].iov_len; j++) {
			left -= remote[j].iov_len;
			p->s[owner[j]].got += (uint32_t)remote[j].iov_len;
		}
		if (j == k) {
			i = si;
			at = sat;
		} else {
			i = owner[j] + 1u;
			at = 0;
		}
	}
	errno = saved;
	return calls;
}

int pyspans_bytes(const struct pyspans *p, int i, uint32_t off, void *dst, uint32_t n,
		  pyspans_read_fn *read)
{
	const struct pyspans_span *s = &p->s[i];
	uint32_t have = 0;

	if (off <= s->got) {
		have = s->got - off < n ? s->got - off : n;
		memcpy(dst, p->buf + s->off + off, have);
		if (have == n)
			return 0;
		if (s->got < s->len)
			return -1; /* (the page after got could not be read) */
	}
	return read((char *)dst + have, s->addr + off + have, n - have);
}

/* Bytes [off, off + n) of the str object at s: from span i of p, or read
 * (p NULL).  0, or -1. */
static int pyspans_get(const struct pyspans *p, int i, uintptr_t s, uint32_t off, void *dst,
		       uint32_t n, pyspans_read_fn *read)
{
	if (n == 0)
		return 0;
	return p != NULL ? pyspans_bytes(p, i, off, dst, n, read) : read(dst, s + off, n);
}

/* Characters of kind bytes each, raw[0..nc), as UTF-8 into buf: its
 * length. */
static uint32_t pyspans_utf8(const unsigned char *raw, uint32_t nc, uint32_t kind, char *buf)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < nc && n + 4 <= PYSPANS_TEXT_MAX; i++) {
		const unsigned char *r = raw + i * kind;
		uint32_t c = kind == 1 ? r[0] : kind == 2 ? (uint32_t)(r[0] | r[1] << 8)
			   : (uint32_t)(r[0] | r[1] << 8 | r[2] << 16 | (uint32_t)r[3] << 24);

		if (c > 0x10ffff)
			c = 0xfffd;
		if (c < 0x80) {
			buf[n++] = (char)c;
		} else if (c < 0x800) {
			buf[n++] = (char)(0xc0 | c >> 6);
			buf[n++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			buf[n++] = (char)(0xe0 | c >> 12);
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[n++] = (char)(0x80 | (c & 0x3f));
		} else {
			buf[n++] = (char)(0xf0 | c >> 18);
			buf[n++] = (char)(0x80 | ((c >> 12) & 0x3f));
			buf[n++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[n++] = (char)(0x80 | (c & 0x3f));
		}
	}
	return n;
}

uint32_t pyspans_string(const struct py_layout *l, const struct pyspans *p, int i, uintptr_t s,
			char *buf, pyspans_read_fn *read)
{
	unsigned char h[96], raw[PYSPANS_TEXT_MAX];
	uint32_t state, kind, n, nc;
	uint64_t len;

	if (p != NULL && i < 0)
		return 0;
	if (p == NULL && s == 0)
		return 0;
	if (l->unicode_compact_data > sizeof(h) ||
	    pyspans_get(p, i, s, 0, h, l->unicode_compact_data, read) != 0)
		return 0;
	len = 0;
	memcpy(&len, h + l->unicode_length, 8);
	memcpy(&state, h + l->unicode_state, 4);
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1)) /* not compact: no text of its own */
		return 0;
	if ((state >> 6) & 1) { /* ASCII */
		n = len < PYSPANS_TEXT_MAX ? (uint32_t)len : PYSPANS_TEXT_MAX;
		return pyspans_get(p, i, s, l->unicode_ascii_data, buf, n, read) == 0 ? n : 0;
	}
	uint64_t utf8 = 0, u = 0;

	memcpy(&utf8, h + l->unicode_utf8, 8);
	if (utf8 != 0) { /* its UTF-8 made: elsewhere */
		memcpy(&u, h + l->unicode_utf8_length, 8);
		n = u < PYSPANS_TEXT_MAX ? (uint32_t)u : PYSPANS_TEXT_MAX;
		if (n == 0 || read(buf, (uintptr_t)utf8, n) != 0)
			return 0;
		while (n > 0 && n < u && ((unsigned char)buf[n] & 0xc0) == 0x80)
			n--; /* not in the middle of a character */
		return n;
	}
	if (kind != 1 && kind != 2 && kind != 4)
		return 0;
	nc = (uint32_t)(len < PYSPANS_TEXT_MAX / 4 ? len : PYSPANS_TEXT_MAX / 4);
	if (pyspans_get(p, i, s, l->unicode_compact_data, raw, nc * kind, read) != 0)
		return 0;
	return pyspans_utf8(raw, nc, kind, buf);
}
