/* budget.h - the one memory budget of a run
 *
 * What reading an input may take, and then what the reports on the
 * profile read may take, is one limit (--max-memory, or what the input's
 * size and --max-input give): the budget.  It is measured, not estimated:
 * the heap the process holds (the allocator's own count) above what it
 * held when the budget was set, checked at the points where memory of
 * unbounded size is asked for (pv_grow, pv_budget_calloc, the readers'
 * charges).  Between two measurements the charges made are added to the
 * last one, so that a charge is refused before the allocation it stands
 * for is made.  Where the allocator does not count (a sanitizer's
 * replaces glibc's), the charges alone are counted.  Not thread-safe: one budget, set and charged by the
 * thread that reads and reports.
 */
#ifndef PROFVIEW_BUDGET_H
#define PROFVIEW_BUDGET_H

#include <stdbool.h>
#include <stddef.h>

/* Start a budget of limit bytes (0: none) above the heap held now.  When
 * a charge does not fit, one error says "WHO needs more than LIMIT of
 * memory; stopped DOING (raise the limit with --max-memory)": who names
 * the input and what of it ("'a.pb.gz': the profile"), doing what was
 * given up ("reading").  Both strings are kept, not copied. */
void pv_budget_set(const char *who, const char *doing, size_t limit);
/* The same budget measured from the heap held now: what was allocated so
 * far (an input's decompressed data) is not counted. */
void pv_budget_rebase(void);
/* Charge bytes about to be allocated: 0, or -1 when they do not fit
 * (reported once; every later charge is refused too). */
int pv_budget_charge(size_t bytes);
/* Did a charge not fit since pv_budget_set? */
bool pv_budget_refused(void);
/* The limit in force, 0 when none. */
size_t pv_budget_limit(void);
/* calloc(n, elem) (n 0: 1), charged: NULL when the budget refused it
 * (reported) or memory ran out (not reported: the caller says pv_oom(),
 * which says nothing more after a refusal).  Freed with free(). */
void *pv_budget_calloc(size_t n, size_t elem);

#endif
