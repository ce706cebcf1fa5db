/* escape.h - names from profiles written so that they cannot act as
 * control sequences
 *
 * Function, file, thread and program names come from the input: a symbol
 * may be renamed to hold ESC ] 0 ; ... BEL, which a terminal runs as a
 * command, or bytes that XML 1.0 forbids.  Every report writes such names
 * through pv_escape(), which keeps printable UTF-8 (C++ names, non-ASCII
 * file names) as it is and writes everything else visibly:
 *
 *   C0 controls and DEL   caret notation, as ncurses and the browser show
 *                         them: ESC is "^[", BEL "^G", LF "^J", DEL "^?"
 *   any other byte that   "\xHH": C1 controls (U+0080-U+009F, "\xc2\x9b"
 *   is not part of a      for U+009B), bidirectional formatting
 *   printable character   characters (U+202E, which shows the text after
 *                         it reversed, is "\xe2\x80\xae"), malformed or
 *                         overlong UTF-8, surrogates, U+FFFE and U+FFFF
 *
 * The result is valid UTF-8 without control characters: safe on a
 * terminal and, once '&', '<', '>' and quotes are escaped, in XML.
 */
#ifndef PROFVIEW_ESCAPE_H
#define PROFVIEW_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* The longest a byte of input can become ("\xHH"). */
#define PV_ESCAPE_GROWTH 4

/* Write s escaped into buf (n > 0 bytes), always terminated; what does not
 * fit is cut at a character, never inside an escape.  Returns buf. */
char *pv_escape(char *buf, size_t n, const char *s);

/* Write the first nchars characters of s, a name pv_escape made, as XML
 * text or attribute value (&, <, >, quotes as entities); with ellipsis,
 * a name longer than that ends in ".." within the nchars. */
void pv_xml_put(FILE *out, const char *s, size_t nchars, bool ellipsis);

/* Write s, a name pv_escape made, as a JSON string that is also safe in a
 * script inside a CDATA section or HTML: quotes and backslashes escaped,
 * '<', '>', '&', control characters and the line separators U+2028 and
 * U+2029 as \uXXXX (never "]]>" nor "</script"). */
void pv_json_put(FILE *out, const char *s);
/* The same without the quotes into buf (n > 0 bytes, always terminated;
 * a character that does not fit whole is left out with the rest): with
 * script as pv_json_put, else quotes, backslashes and control characters
 * alone escaped.  Each byte of s takes at most PV_JSON_GROWTH.  Returns
 * the length written. */
#define PV_JSON_GROWTH 6
size_t pv_json_escape(char *buf, size_t n, const char *s, bool script);

#endif
