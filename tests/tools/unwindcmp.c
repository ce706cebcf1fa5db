/* unwindcmp.c - unwind every sample of DWARF-mode traces both ways: with
 * the tables (unwind-cfi.h) and with libdwfl, and compare
 *
 * usage: unwindcmp TRACE...
 *
 * For each register sample the tables can walk, their frames and
 * "complete" must be libdwfl's, exactly.  Prints one line a trace:
 *   TRACE: N samples, W walked with the tables, F by libdwfl alone, D differ
 * and the first differences, and exits 1 when any sample differs (2 when a
 * trace cannot be read).
 */
#include "modules.h"
#include "read.h"
#include "unwind-dwarf.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAP 1024

struct cmp {
	struct raw_unwinder inner;
	uint64_t samples, walked, slow, differ;
	uint64_t fast[CAP];
};

static int cmp_prepare(void *ctx, struct pv_profile *p)
{
	struct cmp *c = ctx;

	return c->inner.prepare(c->inner.ctx, p);
}

/* The tables are made for however few samples the trace has: every one
 * is compared. */
static void cmp_ahead(void *ctx, uint64_t nsamples)
{
	struct cmp *c = ctx;

	(void)nsamples;
	c->inner.ahead(c->inner.ctx, UINT64_MAX);
}

static void say(const char *what, const uint64_t *f, int n, bool complete)
{
	fprintf(stderr, "  %s (%d, %s):", what, n, complete ? "complete" : "cut");
	for (int i = 0; i < n && i < 40; i++)
		fprintf(stderr, " %" PRIx64, f[i]);
	fputc('\n', stderr);
}

static int cmp_unwind(void *ctx, const uint64_t *regs, uint32_t nregs, const unsigned char *stack,
		      uint32_t stack_len, uint64_t *frames, uint32_t cap, bool *complete)
{
	struct cmp *c = ctx;
	bool fast_complete = false;
	int fast = c->inner.walk(c->inner.ctx, regs, nregs, stack, stack_len, c->fast,
				 cap < CAP ? cap : CAP, &fast_complete);
	int n = c->inner.unwind(c->inner.ctx, regs, nregs, stack, stack_len, frames, cap, complete);

	c->samples++;
	if (fast == 0) {
		c->slow++;
		return n;
	}
	c->walked++;
	if (fast != n || fast_complete != *complete ||
	    memcmp(c->fast, frames, (size_t)n * sizeof *frames) != 0) {
		if (c->differ++ < 5) {
			fprintf(stderr, "sample with pc %" PRIx64 " sp %" PRIx64 " (copy of %u bytes):\n",
				regs[16], regs[7], stack_len);
			say("tables", c->fast, fast, fast_complete);
			say("libdwfl", frames, n, *complete);
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	int status = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: unwindcmp TRACE...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct pv_modules *mods = modules_new(true);
		struct pv_unwinder *u = mods ? unwinder_new(mods, true) : NULL;
		struct cmp *c = calloc(1, sizeof *c);
		struct raw_unwinder uw = { 0 };
		struct pv_read_options opt = { .unwinder = &uw };
		struct pv_profile *p;

		if (!u || !c)
			return 2;
		unwinder_interface(u, &c->inner);
		uw = (struct raw_unwinder){ c, cmp_prepare, cmp_unwind, NULL, cmp_ahead };
		p = pv_read_file(argv[i], &opt);
		if (!p) {
			status = 2;
		} else {
			printf("%s: %" PRIu64 " samples, %" PRIu64 " walked with the tables, %" PRIu64
			       " by libdwfl alone, %" PRIu64 " differ\n",
			       argv[i], c->samples, c->walked, c->slow, c->differ);
			if (c->differ && status == 0)
				status = 1;
		}
		pv_profile_free(p);
		modules_free(mods);
		unwinder_free(u);
		free(c);
	}
	return status;
}
