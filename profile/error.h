/* error.h - one path for every message a command prints
 *
 * Library code reports a problem once, through pv_error(), and returns -1 (or
 * NULL).  Messages follow one style: the problem first, the subject in quotes,
 * where in the input, lower case, no full stop.  A front end may replace the
 * sink (the default prints "PROG: MESSAGE" on stderr).
 */
#ifndef PROFVIEW_ERROR_H
#define PROFVIEW_ERROR_H

#include <stdarg.h>
#include <stdbool.h>

enum pv_level { PV_LEVEL_ERROR, PV_LEVEL_WARNING, PV_LEVEL_NOTE };

typedef void (*pv_error_sink)(enum pv_level level, const char *msg);

void pv_error_set_progname(const char *name);
const char *pv_error_progname(void);
/* Drop warnings and notes; errors still go out. */
void pv_error_set_quiet(bool quiet);
/* Replace the sink; NULL restores the default. */
void pv_error_set_sink(pv_error_sink sink);

/* Report an error; always returns -1. */
int pv_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pv_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pv_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Out of memory: report and return -1. */
int pv_oom(void);

#endif
