/* fuzz-raw.c - libFuzzer target for the raw trace reader (a run file's
 * too, the run's Python names among its parts): any bytes must
 * give a valid profile or a clean error, never a crash or a leak; and,
 * with the waits of Python threads marked and the interpreter's frames
 * folded out of its Python stacks (pyfold.h), still a valid profile. */
#include "error.h"
#include "pyfold.h"
#include "raw-read.h"

#include <stdlib.h>
#include <string.h>

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
	/* (a run of several processes, or one trace) */
	p = raw_read_run(data, size, "fuzz", NULL, false);
	if (p && pv_profile_check_indices(p, "fuzz") != 0)
		abort();
	/* (--native-frames' split: the reader's locations have lines only
	 * where they are Python frames, so this checks its walk of them) */
	if (p && pv_split_python_loops(p) >= 0 && pv_profile_check_indices(p, "fuzz") != 0)
		abort();
	if (p && pv_mark_python_waits(p, true) >= 0 && pv_profile_check_indices(p, "fuzz") != 0)
		abort();
	if (p && pv_fold_python_frames(p) >= 0 && pv_profile_check_indices(p, "fuzz") != 0)
		abort();
	pv_profile_free(p);
	return 0;
}
