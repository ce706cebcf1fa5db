/* budget.c - the one memory budget of a run, measured on the heap */
#include "budget.h"
#include "error.h"
#include "units.h"
#include "util.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

/* Charges between two measurements: at most this much, or a 64th of the
 * limit when larger, so that measuring (which walks the allocator's free
 * lists) costs little against what was allocated. */
#define BUDGET_MEASURE_EVERY ((size_t)1 << 20)

static struct {
	size_t limit;          /* bytes; 0: none */
	size_t base;           /* the heap held when the budget was set */
	size_t used;           /* at the last measurement, above base */
	size_t pending;        /* charged since */
	const char *who, *doing;
	bool refused;
	bool counted;          /* the allocator says nothing (a sanitizer's):
				  the charges alone are counted */
} budget;

/* The heap the process holds: the allocator's chunks in use and its
 * mappings of large blocks. */
static size_t heap_held(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

void pv_budget_set(const char *who, const char *doing, size_t limit)
{
	budget.limit = limit;
	budget.who = who ? who : "the profile";
	budget.doing = doing ? doing : "";
	budget.refused = false;
	budget.used = budget.pending = 0;
	budget.base = limit ? heap_held() : 0;
	budget.counted = limit && budget.base == 0;
}

void pv_budget_rebase(void)
{
	if (budget.limit)
		pv_budget_set(budget.who, budget.doing, budget.limit);
}

bool pv_budget_refused(void)
{
	return budget.refused;
}

size_t pv_budget_limit(void)
{
	return budget.limit;
}

static void measure(void)
{
	size_t h;

	if (budget.counted)
		return;
	h = heap_held();

	budget.used = h > budget.base ? h - budget.base : 0;
	budget.pending = 0;
}

int pv_budget_charge(size_t bytes)
{
	size_t every = budget.limit / 64 > BUDGET_MEASURE_EVERY ? budget.limit / 64 : BUDGET_MEASURE_EVERY;
	size_t room;
	char sz[32];

	if (!budget.limit)
		return 0;
	if (budget.refused)
		return -1;
	room = budget.used < budget.limit ? budget.limit - budget.used : 0;
	if (budget.pending > every || bytes > room || budget.pending > room - bytes) {
		measure();
		room = budget.used < budget.limit ? budget.limit - budget.used : 0;
	}
	if (bytes <= room && budget.pending <= room - bytes) {
		budget.pending += bytes;
		return 0;
	}
	pv_error("%s needs more than %s of memory; stopped%s%s (raise the limit with --max-memory)",
		 budget.who, pv_size_str(sz, sizeof sz, budget.limit), *budget.doing ? " " : "",
		 budget.doing);
	budget.refused = true;
	return -1;
}

void *pv_budget_calloc(size_t n, size_t elem)
{
	if (!n)
		n = 1;
	if (n > SIZE_MAX / elem || pv_budget_charge(n * elem) < 0)
		return NULL;
	return calloc(n, elem);
}
