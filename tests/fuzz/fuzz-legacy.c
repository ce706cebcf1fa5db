/* fuzz-legacy.c - libFuzzer target for the readers of pprof's legacy text
 * profiles (heap, jemalloc heap_v2, contention, threads, Go counts, Java):
 * any bytes give a valid profile or one clean error, never a crash. */
#include "error.h"
#include "legacy-read.h"

#include <stdlib.h>

static void quiet(enum pv_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct pv_profile *p;

	pv_error_set_sink(quiet);
	/* the budget profview gives an input of 16 MiB (read.h) */
	pv_budget_set("fuzz", "reading", 32 << 20);
	if (!legacy_detect(data, size))
		return 0;
	p = legacy_read(data, size, "fuzz");
	if (p && pv_profile_check_indices(p, "fuzz") != 0)
		abort();
	pv_profile_free(p);
	return 0;
}
