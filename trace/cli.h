/* cli.h - the command line of every tool: messages prefixed with the
 * program's name, usage errors, and the parsing of option values, each kind
 * with one wording (libc only: the collectors compile it in)
 *
 * A usage error is one line saying what is wrong, then
 * "Try 'PROG --help' for more information.", and exit status 2.  A bad
 * option value is said one way, "invalid WHAT 'VALUE': expected WHAT IS
 * WANTED" (cli_invalid).  The parsers say nothing themselves: they take the
 * whole string or refuse it, so that the caller names the option.
 */
#ifndef PROFVIEW_CLI_H
#define PROFVIEW_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#define CLI_EXIT_USAGE 2

/* The name every line starts with; the name the program was run by until
 * set. */
void cli_set_progname(const char *name);
const char *cli_progname(void);

/* "PROG: MESSAGE" on stderr. */
void cli_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_vmsg(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* "PROG: warning: MESSAGE" on stderr. */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "PROG: MESSAGE" and the line that points to --help.  Returns
 * CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cli_vusage_error(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));
/* The line that points to --help alone, for an error already said.
 * Returns CLI_EXIT_USAGE. */
int cli_try_help(void);
/* What getopt found wrong, when it was told to say nothing (opterr = 0,
 * optstring starting with ':' after any '+'): c is what it returned (':'
 * for a missing argument, '?' for an unknown option).  Returns
 * CLI_EXIT_USAGE. */
int cli_getopt_error(int c, char *const argv[]);

/* A bad option value: "invalid WHAT 'ARG': expected EXPECTED", EXPECTED a
 * format, and the line that points to --help.  Returns CLI_EXIT_USAGE. */
int cli_invalid(const char *what, const char *arg, const char *expected, ...)
	__attribute__((format(printf, 3, 4)));
/* The same for a choice: "expected 'a', 'b' or 'c'" from names, a list
 * ending with NULL. */
int cli_invalid_choice(const char *what, const char *arg, const char *const names[]);

/* A whole number (decimal) from min to max. */
bool cli_parse_int(const char *s, long long min, long long max, long long *out);
/* A number (as strtod reads it, not NaN) from min to max. */
bool cli_parse_number(const char *s, double min, double max, double *out);
/* A duration in seconds, from min to max: a number, nothing after it. */
bool cli_parse_seconds(const char *s, double min, double max, double *out);
/* A frequency in Hz: a whole number from min to max. */
bool cli_parse_frequency(const char *s, long min, long max, long *out);
/* A size in bytes: digits, then nothing or K, M, G or T (powers of 1024,
 * either case), which "B" or "iB" may follow: "4096", "8k", "512M", "2GiB".
 * At most max. */
bool cli_parse_size(const char *s, size_t max, size_t *out);
/* Which of names (a list ending with NULL) s is, or -1. */
int cli_parse_choice(const char *s, const char *const names[]);

#endif
