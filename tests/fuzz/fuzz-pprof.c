/* fuzz-pprof.c - libFuzzer target for the profile.proto reader (plain or
 * gzipped): any bytes give a valid profile or one clean error; what is
 * read is written back and must read again with the same totals. */
#include "error.h"
#include "gunzip.h"
#include "pprof-read.h"
#include "pprof-write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void quiet(enum pv_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

/* Sum of value v, wrapping (pv_total assumes sums that fit). */
static uint64_t total(const struct pv_profile *p, uint32_t v)
{
	uint64_t t = 0;

	for (size_t i = 0; i < p->nsamples; i++)
		t += (uint64_t)p->samples[i].values[v];
	return t;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	unsigned char *plain = NULL;
	size_t plen = size;
	struct pv_profile *p;

	pv_error_set_sink(quiet);
	/* the budget profview gives an input of 16 MiB (read.h) */
	pv_budget_set("fuzz", "reading", 32 << 20);
	if (pv_gzip_detect(data, size)) {
		if (pv_gunzip(data, size, "fuzz", 1 << 24, NULL, &plain, &plen) < 0)
			return 0;
		data = plain;
	}
	p = pprof_read(data, plen, "fuzz", plain != NULL);
	if (p && pv_profile_check_indices(p, "fuzz") != 0)
		abort();
	if (p) {
		/* Round trip through the writer, uncompressed. */
		char *buf = NULL;
		size_t blen = 0;
		FILE *f = open_memstream(&buf, &blen);
		struct pprof_write_options o = { .uncompressed = true };
		if (f && pprof_write(f, "fuzz", p, &o) == 0 && fclose(f) == 0) {
			struct pv_profile *q;
			pv_budget_set("fuzz", "reading", 32 << 20);
			q = pprof_read((unsigned char *)buf, blen, "fuzz", false);
			if (!q)
				abort();
			for (uint32_t v = 0; v < p->nvalues; v++)
				if (total(p, v) != total(q, v))
					abort();
			pv_profile_free(q);
		} else if (f) {
			fclose(f);
		}
		free(buf);
	}
	pv_profile_free(p);
	free(plain);
	return 0;
}
