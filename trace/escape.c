/* escape.c - write names visibly: no control character gets through */
#include "escape.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Is cp a bidirectional formatting character (ALM, LRM, RLM, the
 * embeddings and overrides U+202A-U+202E, the isolates U+2066-U+2069)?
 * On a terminal one reorders the text after it: "evil\u202egnp.c" shows
 * as "evilc.png". */
static bool bidi_control(unsigned cp)
{
	return cp == 0x61c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

/* The length of the printable UTF-8 character at p, or 0 when p does not
 * start one (a control character, a byte that is not UTF-8, a C1 control,
 * a bidirectional formatting character, an overlong form, a surrogate,
 * U+FFFE or U+FFFF). */
static size_t printable_len(const unsigned char *p)
{
	unsigned c = p[0], cp;

	if (c >= 0x20 && c < 0x7f)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		if ((p[1] & 0xc0) != 0x80)
			return 0;
		cp = (c & 0x1fu) << 6 | (p[1] & 0x3fu);
		return cp >= 0xa0 && !bidi_control(cp) ? 2 : 0;
	}
	if (c >= 0xe0 && c <= 0xef) {
		if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
			return 0;
		cp = (c & 0x0fu) << 12 | (p[1] & 0x3fu) << 6 | (p[2] & 0x3fu);
		return cp >= 0x800 && !(cp >= 0xd800 && cp <= 0xdfff) && cp != 0xfffe && cp != 0xffff &&
			       !bidi_control(cp) ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
			return 0;
		cp = (c & 0x07u) << 18 | (p[1] & 0x3fu) << 12 | (p[2] & 0x3fu) << 6 | (p[3] & 0x3fu);
		return cp >= 0x10000 && cp <= 0x10ffff ? 4 : 0;
	}
	return 0;
}

char *pv_escape(char *buf, size_t n, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	while (*p) {
		char esc[PV_ESCAPE_GROWTH + 1];
		const char *piece = esc;
		size_t len, in;

		/* A NUL ends the string, so a sequence cut by it is malformed:
		 * printable_len() reads no further than the NUL. */
		if (*p < 0x20 || *p == 0x7f) {
			esc[0] = '^';
			esc[1] = (char)(*p ^ 0x40);
			len = 2;
			in = 1;
		} else if ((in = printable_len(p)) > 0) {
			piece = (const char *)p;
			len = in;
		} else {
			snprintf(esc, sizeof esc, "\\x%02x", *p);
			len = 4;
			in = 1;
		}
		if (o + len >= n)
			break;
		memcpy(buf + o, piece, len);
		o += len;
		p += in;
	}
	buf[o] = '\0';
	return buf;
}

void pv_xml_put(FILE *out, const char *s, size_t nchars, bool ellipsis)
{
	if (ellipsis) {
		size_t chars = 0;
		for (const unsigned char *c = (const unsigned char *)s; *c; c++)
			chars += (*c & 0xc0) != 0x80;
		if (chars > nchars && nchars >= 3)
			nchars -= 2;
		else
			ellipsis = false;
	}
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c & 0xc0) != 0x80 && nchars-- == 0) {
			if (ellipsis)
				fputs("..", out);
			break;
		}
		switch (c) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default: fputc(c, out);
		}
	}
}

/* The JSON of the character at *c (advanced past it) into e, at most 6
 * bytes: an escape, or the character's bytes as they are. */
static size_t json_char(const unsigned char **c, char e[6], bool script)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = *c;
	unsigned u = p[0];
	size_t len = 1;

	if (u == '"' || u == '\\') {
		e[0] = '\\', e[1] = (char)u;
		*c = p + 1;
		return 2;
	}
	if (script && u == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9))
		u = 0x2000 | (p[2] & 0x3f), len = 3;
	if (u < 0x20 || (script && (u == '<' || u == '>' || u == '&')) || len == 3) {
		char x[6] = { '\\', 'u', hex[u >> 12], hex[(u >> 8) & 15], hex[(u >> 4) & 15], hex[u & 15] };
		memcpy(e, x, 6);
		*c = p + len;
		return 6;
	}
	/* a whole UTF-8 sequence (pv_escape made it valid) */
	if (u >= 0xc0)
		len = u >= 0xf0 ? 4 : u >= 0xe0 ? 3 : 2;
	for (size_t i = 0; i < len; i++) {
		if (!p[i])
			return i ? (*c = p + i, i) : 0;
		e[i] = (char)p[i];
	}
	*c = p + len;
	return len;
}

size_t pv_json_escape(char *buf, size_t n, const char *s, bool script)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t k = 0;

	while (*c) {
		const unsigned char *at = c;
		char e[6];
		size_t m = json_char(&c, e, script);
		if (k + m >= n) {
			c = at;
			break;
		}
		memcpy(buf + k, e, m);
		k += m;
	}
	buf[k] = '\0';
	return k;
}

void pv_json_put(FILE *out, const char *s)
{
	const unsigned char *c = (const unsigned char *)s;
	char e[6];

	fputc('"', out);
	while (*c)
		fwrite(e, 1, json_char(&c, e, true), out);
	fputc('"', out);
}
