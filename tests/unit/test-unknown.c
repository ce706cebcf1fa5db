/* test-unknown.c - addresses no symbol names: each its own function,
 * "module+0xOFFSET" (the offset in the mapped file) inside a mapping whose
 * file gives no name, "0xADDRESS" outside every mapping, as the symbolizer
 * names the unsymbolized locations of any input (a pprof profile without
 * functions, a gdb trace's "??" frames); the call tree keeps them apart */
#include "calltree.h"
#include "check.h"
#include "modules.h"
#include "symbolize.h"

#include <string.h>

static void test_names(void)
{
	struct pv_profile *p = pv_profile_new();
	struct pv_mapping m = { .start = 0x7f0000000000, .limit = 0x7f0000010000, .offset = 0x2000 };
	static const uint64_t addr[4] = { 0x7f0000001234, 0x7f0000005678, 0x7f0000001235, 0x1000 };
	static const char *const want[4] = { "libfoo.so.1+0x3234", "libfoo.so.1+0x7678",
					     "libfoo.so.1+0x3235", "0x1000" };
	uint32_t locs[4];

	pv_add_value_type(p, "samples", "count");
	m.file = pv_intern_str(p, "/nonexistent/lib/libfoo.so.1");
	m.kind = pv_mapping_kind_of(pv_str(p, m.file));
	uint32_t mi = pv_add_mapping(p, &m);
	for (int i = 0; i < 4; i++) {
		locs[i] = pv_get_location(p, addr[i], i < 3 ? mi : PV_NONE);
		struct pv_sample s = { pv_add_stack(p, &locs[i], 1), 1, PV_NONE, 0, { 1 } };
		pv_add_sample(p, &s);
	}
	struct pv_modules *mods = modules_new(true);
	CHECK(mods != NULL);
	CHECK_EQ(modules_use_profile(mods, p), 0);
	CHECK_EQ(pv_symbolize(p, mods, NULL), 0);
	for (int i = 0; i < 4; i++) {
		const struct pv_location *l = &p->locations[locs[i]];
		CHECK_EQ(l->nlines, 1);
		if (l->nlines)
			CHECK_STR(pv_str(p, p->functions[pv_location_lines(p, l)[0].function].name), want[i]);
	}
	/* a node per address at function granularity, never one per module */
	struct calltree *t = calltree_build(p, NULL);
	CHECK(t != NULL);
	if (t) {
		CHECK_EQ(t->nodes[0].nchildren, 4);
		for (uint32_t c = t->nodes[0].first_child; c != PV_NONE; c = t->nodes[c].next_sibling)
			CHECK_EQ(t->nodes[c].count, 1);
		calltree_free(t);
	}
	modules_free(mods);
	pv_profile_free(p);
}

int main(void)
{
	test_names();
	return check_done("unknown");
}
