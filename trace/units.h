/* units.h - numbers for people, the same in every tool (libc only: the
 * collectors use it too) */
#ifndef PROFVIEW_UNITS_H
#define PROFVIEW_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* A duration: "12.3 s", "1.23 s", "45.6 ms", "0.8 ms".  Returns buf. */
char *pv_format_duration(char *buf, size_t n, int64_t ns);
/* A duration as pprof writes it in its graphs: "1.23s", "45.60ms",
 * "7.20us", "80ns".  Returns buf. */
char *pv_format_duration_compact(char *buf, size_t n, int64_t ns);
/* A size in bytes, in binary units as the reports give them: "512 B",
 * "12.3 KiB", "12.3 MiB", "2.04 GiB" (negative too).  Returns buf. */
char *pv_format_bytes(char *buf, size_t n, double bytes);
/* A size for a message: "1024 MiB", "64 KiB", "1000 bytes", in the largest
 * unit that divides it exactly.  Returns buf. */
const char *pv_size_str(char *buf, size_t n, uint64_t bytes);

#endif
