/* test-scopes.c - the scope index gives the scopes libdw gives
 *
 * The modules of this process with DWARF (the test itself, libc with its
 * separate debug file when installed, libdw's when installed...): at
 * random addresses of each and at the starts, second bytes and last bytes
 * of the ranges of its units' functions and inlined instances, the
 * scopes of pv_scopes_at against libdw's: dwarf_getscopes up to its first
 * inlined instance, then that instance's parents from
 * dwarf_getscopes_die.  Where libdw finds nothing but the index does,
 * the index's path must hold an inlined instance (libdw fails to find the
 * abstract origin of one outside the unit).
 */
#include "check.h"
#include "scopes.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static size_t asked, found, modules, libdw_short;
static int bad;

/* libdw's scopes of pc as symbolize.c used them: offsets into want,
 * innermost first, the unit left out; -1 when libdw found none. */
static int libdw_scopes(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Off *want, int max)
{
	Dwarf_Die *scopes = NULL, *outer = NULL;
	int n = dwarf_getscopes(cu, pc, &scopes), k = 0;

	if (n <= 0)
		return -1;
	for (int i = 0; i < n - 1 && k < max; i++) {
		want[k++] = dwarf_dieoffset(&scopes[i]);
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		int m = dwarf_getscopes_die(&scopes[i], &outer);
		for (int j = 1; j < m - 1 && k < max; j++)
			want[k++] = dwarf_dieoffset(&outer[j]);
		free(outer);
		break;
	}
	free(scopes);
	return k;
}

static void check_at(struct pv_scopes *sc, Dwfl_Module *mod, const char *name, Dwarf_Addr a)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, a, &bias), *path;
	Dwarf_Off want[256];

	if (!cu)
		return;
	asked++;
	int k = libdw_scopes(cu, a - bias, want, 256);
	int n = pv_scopes_at(sc, cu, a - bias, &path);
	bool inlined = false, same = n == k;
	for (int i = 0; i < n; i++) {
		inlined |= dwarf_tag(&path[i]) == DW_TAG_inlined_subroutine;
		same &= i < k && dwarf_dieoffset(&path[i]) == want[i];
	}
	if (k < 0 && n > 0 && inlined) {
		libdw_short++;
		return;
	}
	if (k < 0 && n == 0)
		return;
	found += n > 0;
	if (!same && bad++ < 5)
		fprintf(stderr, "%s: at %#" PRIx64 ": libdw has %d scopes (innermost %#" PRIx64
			"), the index %d (innermost %#" PRIx64 ")\n",
			name, a, k, k > 0 ? (uint64_t)want[0] : 0, n,
			n > 0 ? (uint64_t)dwarf_dieoffset(&path[0]) : 0);
}

/* The edges of the ranges of die and of the functions and inlined
 * instances under it, at most *budget of them. */
static void edges(struct pv_scopes *sc, Dwfl_Module *mod, const char *name, Dwarf_Die *die,
		  Dwarf_Addr bias, int *budget)
{
	Dwarf_Die child;
	int tag = dwarf_tag(die);

	if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
	    tag == DW_TAG_lexical_block) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;
		while (*budget > 0 && (off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			check_at(sc, mod, name, lo + bias);
			check_at(sc, mod, name, lo + 1 + bias);
			check_at(sc, mod, name, hi - 1 + bias);
			(*budget)--;
		}
	}
	if (dwarf_child(die, &child) != 0)
		return;
	do
		edges(sc, mod, name, &child, bias, budget);
	while (*budget > 0 && dwarf_siblingof(&child, &child) == 0);
}

static int each(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr low, void *arg)
{
	struct pv_scopes *sc = arg;
	Dwarf_Addr high, bias;
	Dwarf_Die *cu = NULL;
	size_t before = asked;
	int budget = 3000;

	(void)ud;
	dwfl_module_info(mod, NULL, NULL, &high, NULL, NULL, NULL, NULL);
	if (!dwfl_module_getdwarf(mod, &bias))
		return DWARF_CB_OK;
	for (int i = 0; i < 3000; i++)
		check_at(sc, mod, name, low + rnd() % (high - low));
	/* the units in order, a few hundred ranges of each */
	while (budget > 0 && (cu = dwfl_module_nextcu(mod, cu, &bias)) != NULL) {
		int per_unit = 300;
		budget -= 300;
		edges(sc, mod, name, cu, bias, &per_unit);
		budget += per_unit;
	}
	fprintf(stderr, "%s: %zu addresses in units\n", name, asked - before);
	modules++;
	return DWARF_CB_OK;
}

int main(void)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &debuginfo_path,
	};
	Dwfl *d = dwfl_begin(&cb);
	struct pv_scopes *sc = pv_scopes_new();

	CHECK(d != NULL && sc != NULL);
	CHECK_EQ(dwfl_linux_proc_report(d, getpid()), 0);
	CHECK_EQ(dwfl_report_end(d, NULL, NULL), 0);
	dwfl_getmodules(d, each, sc, 0);
	fprintf(stderr, "%zu modules with DWARF, %zu addresses in units, %zu in scopes, %zu where libdw "
		"found no inlined instance's origin\n", modules, asked, found, libdw_short);
	CHECK(modules >= 1);
	CHECK(found > 1000);
	CHECK_EQ(bad, 0);
	pv_scopes_free(sc);
	dwfl_end(d);
	printf("%d checks, %d failed\n", check_count, check_failures);
	return check_failures != 0;
}
