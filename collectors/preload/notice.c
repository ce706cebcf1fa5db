/* notice.c - the lines the preload libraries write on standard error,
 * each with the process they are about (see notice.h) */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host.h"
#include "notice.h"
#include "preload.h"

#define NOTICE_LINE 512
#define NOTICE_NAME 64

/* Appends s (n bytes, or up to its NUL when n is (size_t)-1) to buf at
 * *len, never past cap - 1. */
static void notice_put(char *buf, size_t cap, size_t *len, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i] != '\0' && *len + 1 < cap; i++)
		buf[(*len)++] = s[i];
	buf[*len] = '\0';
}

static void notice_put_uint(char *buf, size_t cap, size_t *len, unsigned long v)
{
	char digits[24];
	size_t n = sizeof(digits);

	do
		digits[--n] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	notice_put(buf, cap, len, digits + n, sizeof(digits) - n);
}

/* The program's base name, escaped (notice.h), appended. */
static void notice_put_program(char *buf, size_t cap, size_t *len)
{
	static const char hex[] = "0123456789abcdef";
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	const char *base = exe;
	size_t said = 0;

	if (n <= 0) {
		notice_put(buf, cap, len, "?", 1);
		return;
	}
	exe[n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (exe[i] == '/')
			base = exe + i + 1;
	for (; *base != '\0' && said < NOTICE_NAME; base++, said++) {
		unsigned char c = (unsigned char)*base;
		char e[4];
		size_t k = 0;

		if (c < 0x20 || c == 0x7f) {
			e[k++] = '^';
			e[k++] = c == 0x7f ? '?' : (char)(c + '@');
		} else if (c >= 0x80) {
			e[k++] = '\\';
			e[k++] = 'x';
			e[k++] = hex[c >> 4];
			e[k++] = hex[c & 15];
		} else {
			e[k++] = (char)c;
		}
		notice_put(buf, cap, len, e, k);
	}
}

size_t notice_prefix(char *buf, size_t cap)
{
	size_t len = 0;

	if (cap == 0)
		return 0;
	buf[0] = '\0';
	notice_put(buf, cap, &len, preload_host.collector, (size_t)-1);
	notice_put(buf, cap, &len, ": pid ", (size_t)-1);
	notice_put_uint(buf, cap, &len, (unsigned long)getpid());
	notice_put(buf, cap, &len, " (", 2);
	notice_put_program(buf, cap, &len);
	notice_put(buf, cap, &len, "): ", 3);
	return len;
}

_Atomic int notice_fd = STDERR_FILENO;

static void notice_write(char *buf, size_t len)
{
	buf[len++] = '\n';
	if (write(atomic_load(&notice_fd), buf, len) < 0) {
		/* nothing to be done */
	}
}

void notice_line(const char *text)
{
	char buf[NOTICE_LINE];
	size_t len = notice_prefix(buf, sizeof(buf) - 1);

	notice_put(buf, sizeof(buf) - 1, &len, text, (size_t)-1);
	notice_write(buf, len);
}

void notice_vsay(const char *fmt, va_list ap)
{
	char buf[NOTICE_LINE];
	size_t len = notice_prefix(buf, sizeof(buf) - 1);
	int n = vsnprintf(buf + len, sizeof(buf) - 1 - len, fmt, ap);

	if (n > 0)
		len += (size_t)n < sizeof(buf) - 1 - len ? (size_t)n : sizeof(buf) - 2 - len;
	notice_write(buf, len);
}

void preload_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	notice_vsay(fmt, ap);
	va_end(ap);
}
