/* units.c - numbers for people (see units.h) */
#include "units.h"

#include <stdio.h>

char *pv_format_duration(char *buf, size_t n, int64_t ns)
{
	if (ns >= 10 * 1000000000LL)
		snprintf(buf, n, "%.1f s", (double)ns / 1e9);
	else if (ns >= 1000000000LL)
		snprintf(buf, n, "%.2f s", (double)ns / 1e9);
	else
		snprintf(buf, n, "%.1f ms", (double)ns / 1e6);
	return buf;
}
