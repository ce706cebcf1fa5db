/* units.c - numbers for people (see units.h) */
#include "units.h"

#include <inttypes.h>
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

char *pv_format_duration_compact(char *buf, size_t n, int64_t ns)
{
	double a = ns < 0 ? -(double)ns : (double)ns;

	if (a >= 1e9)
		snprintf(buf, n, "%.2fs", (double)ns / 1e9);
	else if (a >= 1e6)
		snprintf(buf, n, "%.2fms", (double)ns / 1e6);
	else if (a >= 1e3)
		snprintf(buf, n, "%.2fus", (double)ns / 1e3);
	else
		snprintf(buf, n, "%lldns", (long long)ns);
	return buf;
}

char *pv_format_bytes(char *buf, size_t n, double bytes)
{
	double a = bytes < 0 ? -bytes : bytes;

	if (a >= 1024.0 * 1024 * 1024)
		snprintf(buf, n, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
	else if (a >= 1024.0 * 1024)
		snprintf(buf, n, "%.1f MiB", bytes / (1024.0 * 1024));
	else if (a >= 1024)
		snprintf(buf, n, "%.1f KiB", bytes / 1024);
	else
		snprintf(buf, n, "%.0f B", bytes);
	return buf;
}

const char *pv_size_str(char *buf, size_t n, uint64_t bytes)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;

	while (bytes && bytes % 1024 == 0 && u + 1 < sizeof units / sizeof units[0]) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, n, "%" PRIu64 " %s", bytes, units[u]);
	return buf;
}
