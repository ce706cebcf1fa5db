/* error.c - the one place messages are formatted and printed */
#include "error.h"
#include "budget.h"
#include "cli.h"
#include "escape.h"

#include <stdbool.h>
#include <stdio.h>

static pv_error_sink sink;
static bool quiet;

/* One name for every line: the option errors (cli.c) say it too. */
void pv_error_set_progname(const char *name)
{
	cli_set_progname(name);
}

const char *pv_error_progname(void)
{
	return cli_progname();
}

void pv_error_set_quiet(bool q)
{
	quiet = q;
}

void pv_error_set_sink(pv_error_sink s)
{
	sink = s;
}

/* Messages quote names from the input (files a trace maps, functions):
 * they are escaped like every report's names. */
__attribute__((format(printf, 2, 0)))
static void emit(enum pv_level level, const char *fmt, va_list ap)
{
	char raw[1024], msg[1024];

	if (quiet && level != PV_LEVEL_ERROR)
		return;
	vsnprintf(raw, sizeof raw, fmt, ap);
	pv_escape(msg, sizeof msg, raw);
	if (sink) {
		sink(level, msg);
		return;
	}
	fprintf(stderr, "%s: %s%s\n", cli_progname(),
		level == PV_LEVEL_WARNING ? "warning: " : "", msg);
}

int pv_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(PV_LEVEL_ERROR, fmt, ap);
	va_end(ap);
	return -1;
}

void pv_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(PV_LEVEL_WARNING, fmt, ap);
	va_end(ap);
}

void pv_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(PV_LEVEL_NOTE, fmt, ap);
	va_end(ap);
}

int pv_oom(void)
{
	/* memory the budget refused was said to be so, once */
	return pv_budget_refused() ? -1 : pv_error("out of memory");
}
