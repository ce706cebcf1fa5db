/* test-escape.c - names written visibly: control characters, C1 controls
 * and bytes that are not UTF-8 escaped, printable UTF-8 kept, cuts at
 * character boundaries */
#include "check.h"
#include "escape.h"

static const char *esc(const char *s)
{
	static char buf[1024];
	return pv_escape(buf, sizeof buf, s);
}

static void test_controls(void)
{
	/* The window title and clear-screen sequences, visible. */
	CHECK_STR(esc("\033]0;pwned\007\033[2Jhot"), "^[]0;pwned^G^[[2Jhot");
	CHECK_STR(esc("a\nb\rc\td"), "a^Jb^Mc^Id");
	CHECK_STR(esc("\001\037\177"), "^A^_^?");
	CHECK_STR(esc("plain_name"), "plain_name");
	CHECK_STR(esc(""), "");
}

static void test_utf8(void)
{
	/* Printable UTF-8 stays: accents, CJK, an emoji (4 bytes), U+00A0. */
	CHECK_STR(esc("caf\xc3\xa9.c"), "caf\xc3\xa9.c");
	CHECK_STR(esc("\xe5\x87\xbd\xe6\x95\xb0"), "\xe5\x87\xbd\xe6\x95\xb0");
	CHECK_STR(esc("f\xf0\x9f\x94\xa5"), "f\xf0\x9f\x94\xa5");
	CHECK_STR(esc("\xc2\xa0"), "\xc2\xa0");
	CHECK_STR(esc("ns::Acc<unsigned long>::spin(int) const&"), "ns::Acc<unsigned long>::spin(int) const&");
	/* C1 controls as UTF-8 (U+009B is CSI), and as lone bytes. */
	CHECK_STR(esc("\xc2\x9b" "2J"), "\\xc2\\x9b2J");
	CHECK_STR(esc("\x9b" "2J"), "\\x9b2J");
	CHECK_STR(esc("\xc2\x85"), "\\xc2\\x85");
	/* Bidirectional formatting characters reorder what follows them on
	 * a terminal: RLO (U+202E), an isolate (U+2066), RLM, ALM. */
	CHECK_STR(esc("evil\xe2\x80\xae" "gnp.c"), "evil\\xe2\\x80\\xaegnp.c");
	CHECK_STR(esc("\xe2\x81\xa6x\xe2\x80\x8f\xd8\x9c"), "\\xe2\\x81\\xa6x\\xe2\\x80\\x8f\\xd8\\x9c");
	/* their neighbours are printable: U+2029 (separator), U+2030 (per mille) */
	CHECK_STR(esc("\xe2\x80\xb0"), "\xe2\x80\xb0");
	/* Malformed: lone and cut sequences, overlong forms, surrogates,
	 * past U+10FFFF, the noncharacters XML forbids. */
	CHECK_STR(esc("\xff" "x\xc0\x80"), "\\xffx\\xc0\\x80");
	CHECK_STR(esc("\xe2\x82"), "\\xe2\\x82");
	CHECK_STR(esc("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");
	CHECK_STR(esc("\xed\xa0\x80"), "\\xed\\xa0\\x80");
	CHECK_STR(esc("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
	CHECK_STR(esc("\xef\xbf\xbe\xef\xbf\xbd"), "\\xef\\xbf\\xbe\xef\xbf\xbd");
	/* A sequence cut by the end of the string reads nothing past it. */
	CHECK_STR(esc("a\xf0\x9f"), "a\\xf0\\x9f");
}

static void test_cut(void)
{
	char small[6];

	/* Never half an escape or half a character. */
	CHECK_STR(pv_escape(small, sizeof small, "abcd\033"), "abcd");
	CHECK_STR(pv_escape(small, sizeof small, "abc\033d"), "abc^[");
	CHECK_STR(pv_escape(small, sizeof small, "abc\xc3\xa9" "d"), "abc\xc3\xa9");
	CHECK_STR(pv_escape(small, sizeof small, "abcd\xc3\xa9"), "abcd");
	CHECK_STR(pv_escape(small, sizeof small, "a\xff" "b"), "a\\xff");
	CHECK_STR(pv_escape(small, 1, "abc"), "");
	/* The worst growth is PV_ESCAPE_GROWTH times. */
	char big[3 * PV_ESCAPE_GROWTH + 1];
	CHECK_STR(pv_escape(big, sizeof big, "\xff\xfe\x80"), "\\xff\\xfe\\x80");
}

/* A JSON string for a script in a CDATA section or HTML: nothing that
 * could end either, nor a line separator JavaScript would choke on. */
static void test_json(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	CHECK(f != NULL);
	if (!f)
		return;
	pv_json_put(f, "a\"b\\c</script>]]>&\xe2\x80\xa8\xe2\x80\xa9\xc3\xa9\t");
	fclose(f);
	CHECK_STR(text, "\"a\\\"b\\\\c\\u003c/script\\u003e]]\\u003e\\u0026\\u2028\\u2029\xc3\xa9\\u0009\"");
	free(text);
}

/* The same into a buffer: without script only what JSON needs, and what
 * does not fit is left out a whole character at a time. */
static void test_json_buffer(void)
{
	char buf[64];

	CHECK_EQ(pv_json_escape(buf, sizeof buf, "a\"<\xe2\x80\xa8\\", false), 9);
	CHECK_STR(buf, "a\\\"<\xe2\x80\xa8\\\\");
	CHECK_EQ(pv_json_escape(buf, sizeof buf, "<&", true), 12);
	CHECK_STR(buf, "\\u003c\\u0026");
	/* room for "ab" and not for the three bytes of U+20AC */
	CHECK_EQ(pv_json_escape(buf, 5, "ab\xe2\x82\xac", false), 2);
	CHECK_STR(buf, "ab");
	/* nor for an escape's two */
	CHECK_EQ(pv_json_escape(buf, 3, "a\"b", false), 1);
	CHECK_STR(buf, "a");
}

int main(void)
{
	test_controls();
	test_utf8();
	test_cut();
	test_json();
	test_json_buffer();
	return check_done("test-escape");
}
