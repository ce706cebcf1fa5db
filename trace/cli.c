/* cli.c - messages, usage errors and option values (see cli.h) */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *progname;

void cli_set_progname(const char *name)
{
	progname = name;
}

const char *cli_progname(void)
{
	return progname ? progname : program_invocation_short_name;
}

void cli_vmsg(const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: ", cli_progname());
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cli_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vmsg(fmt, ap);
	va_end(ap);
}

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: warning: ", cli_progname());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_try_help(void)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", cli_progname());
	return CLI_EXIT_USAGE;
}

int cli_vusage_error(const char *fmt, va_list ap)
{
	cli_vmsg(fmt, ap);
	return cli_try_help();
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cli_vusage_error(fmt, ap);
	va_end(ap);
	return CLI_EXIT_USAGE;
}

int cli_getopt_error(int c, char *const argv[])
{
	if (c == ':')
		return cli_usage_error("option '%s' needs an argument", argv[optind - 1]);
	if (optopt)
		return cli_usage_error("unknown option '-%c'", optopt);
	return cli_usage_error("unknown option '%s'", argv[optind - 1]);
}

int cli_invalid(const char *what, const char *arg, const char *expected, ...)
{
	va_list ap;

	fprintf(stderr, "%s: invalid %s '%s': expected ", cli_progname(), what, arg);
	va_start(ap, expected);
	vfprintf(stderr, expected, ap);
	va_end(ap);
	fputc('\n', stderr);
	return cli_try_help();
}

int cli_invalid_choice(const char *what, const char *arg, const char *const names[])
{
	size_t n = 0;

	fprintf(stderr, "%s: invalid %s '%s': expected ", cli_progname(), what, arg);
	while (names[n])
		n++;
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s'%s'", i == 0 ? "" : i + 1 == n ? " or " : ", ", names[i]);
	fputc('\n', stderr);
	return cli_try_help();
}

bool cli_parse_int(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return false;
	*out = v;
	return true;
}

bool cli_parse_number(const char *s, double min, double max, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* NaN fails both comparisons */
	if (errno || end == s || *end || !(v >= min) || !(v <= max))
		return false;
	*out = v;
	return true;
}

bool cli_parse_seconds(const char *s, double min, double max, double *out)
{
	return cli_parse_number(s, min, max, out) && isfinite(*out);
}

bool cli_parse_frequency(const char *s, long min, long max, long *out)
{
	long long v;

	if (!cli_parse_int(s, min, max, &v))
		return false;
	*out = (long)v;
	return true;
}

bool cli_parse_size(const char *s, size_t max, size_t *out)
{
	static const char units[] = "KMGT";
	const char *u;
	char *end;
	unsigned long long v;
	unsigned shift = 0;

	/* digits first: strtoull would take a sign or spaces */
	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return false;
	if (*end) {
		u = strchr(units, end[0] & ~0x20);
		if (!u || !*u)
			return false;
		shift = 10 * (unsigned)(u - units + 1);
		end++;
		if (strcmp(end, "iB") == 0 || strcmp(end, "B") == 0)
			end += strlen(end);
		if (*end)
			return false;
	}
	if (v > (SIZE_MAX >> shift) || (size_t)v << shift > max)
		return false;
	*out = (size_t)v << shift;
	return true;
}

int cli_parse_choice(const char *s, const char *const names[])
{
	for (int i = 0; names[i]; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}
