/* test-cli.c - option values: what each parser takes and refuses, and the
 * lines a usage error prints */
#include "check.h"
#include "cli.h"

#include <math.h>
#include <stdint.h>
#include <unistd.h>

static void test_int(void)
{
	long long v = -7;

	CHECK(cli_parse_int("42", 0, 100, &v) && v == 42);
	CHECK(cli_parse_int("0", 0, 100, &v) && v == 0);
	CHECK(cli_parse_int("-3", -5, 5, &v) && v == -3);
	CHECK(!cli_parse_int("101", 0, 100, &v));
	CHECK(!cli_parse_int("-1", 0, 100, &v));
	CHECK(!cli_parse_int("", 0, 100, &v));
	CHECK(!cli_parse_int("12x", 0, 100, &v));
	CHECK(!cli_parse_int("1.5", 0, 100, &v));
	CHECK(!cli_parse_int("99999999999999999999", 0, INT64_MAX, &v));
	CHECK_EQ(v, -3); /* a refused value leaves *out alone */
}

static void test_numbers(void)
{
	double d = -1;
	long hz = 0;

	CHECK(cli_parse_number("0.5", 0, 1, &d) && d == 0.5);
	CHECK(cli_parse_number("1e-3", 0, 1, &d) && d == 1e-3);
	CHECK(!cli_parse_number("nan", 0, 1, &d));
	CHECK(!cli_parse_number("1.01", 0, 1, &d));
	CHECK(!cli_parse_number("-0.1", 0, 1, &d));
	CHECK(!cli_parse_number("0.5s", 0, 1, &d));
	CHECK(cli_parse_seconds("2.5", 0.001, 1e6, &d) && d == 2.5);
	CHECK(!cli_parse_seconds("0.0001", 0.001, 1e6, &d));
	CHECK(!cli_parse_seconds("inf", 0.001, INFINITY, &d));
	CHECK(!cli_parse_seconds("1e7", 0.001, 1e6, &d));
	CHECK(cli_parse_frequency("997", 1, 100000, &hz) && hz == 997);
	CHECK(!cli_parse_frequency("0", 1, 100000, &hz));
	CHECK(!cli_parse_frequency("100001", 1, 100000, &hz));
	CHECK(!cli_parse_frequency("99.5", 1, 100000, &hz));
}

static void test_sizes(void)
{
	size_t n = 1;

	CHECK(cli_parse_size("4096", SIZE_MAX, &n) && n == 4096);
	CHECK(cli_parse_size("8k", SIZE_MAX, &n) && n == 8192);
	CHECK(cli_parse_size("8K", SIZE_MAX, &n) && n == 8192);
	CHECK(cli_parse_size("512M", SIZE_MAX, &n) && n == (size_t)512 << 20);
	CHECK(cli_parse_size("2GiB", SIZE_MAX, &n) && n == (size_t)2 << 30);
	CHECK(cli_parse_size("3TB", SIZE_MAX, &n) && n == (size_t)3 << 40);
	CHECK(cli_parse_size("0", SIZE_MAX, &n) && n == 0);
	CHECK(!cli_parse_size("64K", 65535, &n));
	CHECK(cli_parse_size("64K", 65536, &n) && n == 65536);
	CHECK(!cli_parse_size("", SIZE_MAX, &n));
	CHECK(!cli_parse_size("-1", SIZE_MAX, &n));
	CHECK(!cli_parse_size(" 1", SIZE_MAX, &n));
	CHECK(!cli_parse_size("1X", SIZE_MAX, &n));
	CHECK(!cli_parse_size("1Kb", SIZE_MAX, &n));
	CHECK(!cli_parse_size("1KiBs", SIZE_MAX, &n));
	CHECK(!cli_parse_size("17179869184G", SIZE_MAX, &n)); /* 2^64 bytes */
}

static void test_choice(void)
{
	static const char *const names[] = { "persistent", "batch", "eu-stack", NULL };

	CHECK_EQ(cli_parse_choice("persistent", names), 0);
	CHECK_EQ(cli_parse_choice("eu-stack", names), 2);
	CHECK_EQ(cli_parse_choice("Batch", names), -1);
	CHECK_EQ(cli_parse_choice("", names), -1);
	CHECK_EQ(cli_parse_choice("batchx", names), -1);
}

/* What a function printed on stderr. */
static const char *captured(int (*say)(void))
{
	static char buf[1024];
	FILE *f = tmpfile();
	int saved = dup(2), rc;
	size_t n;

	fflush(stderr);
	dup2(fileno(f), 2);
	rc = say();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	CHECK_EQ(rc, CLI_EXIT_USAGE);
	return buf;
}

static int say_invalid(void)
{
	return cli_invalid("interval", "x", "seconds, at least %g", 0.001);
}

static int say_choice(void)
{
	static const char *const names[] = { "cpu", "wall", "both", NULL };

	return cli_invalid_choice("clock", "y", names);
}

static int say_usage(void)
{
	return cli_usage_error("no program to run");
}

static void test_messages(void)
{
	cli_set_progname("tool");
	CHECK_STR(cli_progname(), "tool");
	CHECK_STR(captured(say_invalid), "tool: invalid interval 'x': expected seconds, at least 0.001\n"
					 "Try 'tool --help' for more information.\n");
	CHECK_STR(captured(say_choice), "tool: invalid clock 'y': expected 'cpu', 'wall' or 'both'\n"
					"Try 'tool --help' for more information.\n");
	CHECK_STR(captured(say_usage), "tool: no program to run\n"
				       "Try 'tool --help' for more information.\n");
}

int main(void)
{
	test_int();
	test_numbers();
	test_sizes();
	test_choice();
	test_messages();
	return check_done("cli");
}
