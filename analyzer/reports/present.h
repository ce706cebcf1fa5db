/* present.h - how every report writes what it shows: the value's name,
 * amounts, changes and shares, the colours of a comparison, the input's
 * problems
 *
 * One spelling each, so that the tables, the pictures and the browser
 * agree to the digit.  (Names from profiles are escaped by escape.h; the
 * q-values and changes in percent are spelled by diff.h; a growing
 * string is util.h's pv_strbuf.)
 */
#ifndef PROFVIEW_PRESENT_H
#define PROFVIEW_PRESENT_H

#include "calltree.h"
#include "diff.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* part as a percentage of whole; 0 of nothing. */
static inline double pv_percent(int64_t part, int64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* The sample type tree t weighs by, as the profile names it ("cpu",
 * "inuse_space"); NULL when it weighs by sample counts. */
const char *pv_value_type(const struct calltree *t);
/* A sample type as people read it: "CPU" for "cpu", any other as it is;
 * NULL stays NULL. */
const char *pv_value_label(const char *type);
/* Is a sample type CPU time: "cpu", or perf's clocks "cpu-clock" and
 * "task-clock" (whose samples in the kernel are system time)? */
bool pv_value_is_cpu(const char *type);

/* The input's problems, each a phrase to say(arg, phrase), in order:
 * samples lost (and why), samples with incomplete stacks, damaged input
 * dropped; shares: each with its share of the samples.  Returns how many
 * there were. */
int pv_input_problems(const struct pv_profile *p, bool shares, void (*say)(void *arg, const char *phrase),
		      void *arg);
/* Is more than a hundredth of the CPU time the threads used (by the
 * collector's own count) in no sample?  Then the sentence that says so,
 * the same for every front end, into buf. */
bool report_unsampled(const struct pv_profile *p, char *buf, size_t n);
/* Does a heap trace's program define its own malloc (own_allocator)?
 * Then the sentence that says so and what to do, names escaped, into buf. */
bool report_own_allocator(const struct pv_profile *p, char *buf, size_t n);
/* Is a heap profile of an attach (heap_since_attach)?  Its one line into
 * buf. */
bool report_since_attach(const struct pv_profile *p, char *buf, size_t n);

/* The width of a heap profile's value columns ("1023.9 MiB"). */
#define REPORT_HEAP_COL 10
/* Does the tree weigh a heap profile by bytes or objects?  Its text
 * reports give the value in its unit, "12.3 MiB" or a count of blocks, as
 * pprof and jeprof do, where a CPU profile's give milliseconds. */
bool report_heap_value(const struct calltree *t);
/* The heading of a heap profile's value column: "bytes" or "objects". */
const char *report_heap_col(const struct calltree *t);
/* Value v of such a tree in its unit, right-aligned in REPORT_HEAP_COL,
 * into buf; returns buf. */
const char *report_heap_cell(const struct calltree *t, int64_t v, char *buf, size_t n);
/* One line on the collector's own work left out of the profile
 * (pv_profile.collector_samples) into buf; false when there was none. */
bool report_collector(const struct pv_profile *p, char *buf, size_t n);
/* "python 3.11.7: frames read (offsets from its debug information)": of
 * the first process whose Python frames were read; false when none. */
bool report_python_read(const struct pv_profile *p, char *buf, size_t n);
/* "python 3.14: its frames are not read ..." of the processes whose
 * CPython's frames the collector did not read; false when none. */
bool report_python_unread(const struct pv_profile *p, char *buf, size_t n);
/* One line on the CPU time the collector measured of itself
 * (pv_profile.collector_cpu_ns) into buf, when it is above 1% of the
 * threads' CPU time (at least the samples' and its own); else false. */
bool report_collector_cpu(const struct pv_profile *p, char *buf, size_t n);

/* v with dec (0 to 3) decimals, rounded half away from zero, "-0" shown
 * as "0"; plus: a '+' before what does not round to 0.  Without printf,
 * which is most of a big table's time.  buf has room for PV_FIXED_LEN. */
#define PV_FIXED_LEN 48
const char *pv_fixed(char *buf, double v, int dec, bool plus);

/* A comparison's value in tree t's weight as a column shows it: in the
 * unit of ct_value_col (ms for a time) with one decimal, else samples
 * (a decimal when a scale made them fractional); what is under a
 * twentieth of the unit is 0; sign: '+' before an increase.  buf has room
 * for PV_FIXED_LEN. */
const char *pv_weight_text(const struct calltree *t, char *buf, double v, bool sign);

/* A comparison's value with its unit, as the pictures' titles give it:
 * "1.20 ms", "3 samples" (with a decimal when a side was scaled), or
 * PV_AMOUNT_COMPACT as the call graph's boxes: "1.20ms", "3".
 * PV_AMOUNT_SIGN: '+' before an increase.  Returns buf. */
enum { PV_AMOUNT_SIGN = 1, PV_AMOUNT_COMPACT = 2 };
const char *pv_amount_text(const struct calltree *t, char *buf, size_t n, double v, unsigned flags);

/* A cell's change in percent as the titles give it ("+31.0%"), or "not in
 * the base" when the base had none.  Returns buf. */
const char *pv_change_text(char *buf, size_t n, const struct pv_diff_cell *c);

/* A comparison's colours: grey when a change is not significant, else
 * from pale for a small change to full for a doubling or a halving and
 * beyond (pv_diff_strength), red for worse, blue for better.  Each
 * picture has its shades. */
struct pv_ramp {
	int none[3];
	int worse[2][3];       /* pale, full */
	int better[2][3];
};
void pv_ramp_rgb(const struct pv_ramp *r, const struct pv_diff_cell *c, int rgb[3]);

#endif
