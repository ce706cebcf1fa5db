/* test-symcache.c - the symbol cache answers as libdwfl does, at every
 * address that could tell them apart
 *
 * The modules of this process (the test, libc with its separate debug
 * file when installed, the dynamic loader, libdw...) are reported to a
 * Dwfl; for each, the addresses around its symbols' starts and ends (one
 * before, at, one after; 2,000 symbols at most, chosen at random) and 5,000
 * random ones in its range are asked in a random order, of the cache and of dwfl_module_addrinfo directly: the
 * names must be the same.
 */
#include "check.h"
#include "symcache.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <unistd.h>

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static size_t total, modules;

static int each(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr low, void *arg)
{
	struct pv_symcache *sc = arg;
	Dwarf_Addr high;
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0;
	int nsym = dwfl_module_getsymtab(mod);

	(void)ud;
	dwfl_module_info(mod, NULL, NULL, &high, NULL, NULL, NULL, NULL);
	if (nsym <= 0 || high <= low)
		return DWARF_CB_OK;
	cap = (size_t)nsym * 8 + 5000;
	addrs = malloc(cap * sizeof *addrs);
	for (int i = 1; i < nsym; i++) {
		GElf_Sym sym;
		GElf_Addr a;
		/* libdwfl's own walk is slow: at most ~2,000 symbols a module */
		if (nsym > 2000 && rnd() % (uint64_t)nsym >= 2000)
			continue;
		if (!dwfl_module_getsym_info(mod, i, &sym, &a, NULL, NULL, NULL))
			continue;
		uint64_t e = a + sym.st_size;
		uint64_t pts[] = { a - 1, a, a + 1, e - 1, e, e + 1 };
		for (size_t k = 0; k < 6; k++)
			if (pts[k] >= low && pts[k] < high)
				addrs[n++] = pts[k];
	}
	for (int i = 0; i < 5000; i++)
		addrs[n++] = low + rnd() % (high - low);
	for (size_t i = n; i > 1; i--) {
		size_t j = rnd() % i;
		uint64_t t = addrs[i - 1];
		addrs[i - 1] = addrs[j];
		addrs[j] = t;
	}
	int bad = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Off off;
		GElf_Sym sym;
		const char *want = dwfl_module_addrinfo(mod, addrs[i], &off, &sym, NULL, NULL, NULL);
		const char *got = pv_symcache_lookup(sc, mod, addrs[i]);
		if ((want == NULL) != (got == NULL) || (want && strcmp(want, got) != 0)) {
			if (bad++ < 5)
				fprintf(stderr, "%s: at %#" PRIx64 " libdwfl says %s, the cache %s\n", name,
					addrs[i], want ? want : "(none)", got ? got : "(none)");
		}
	}
	CHECK_EQ(bad, 0);
	fprintf(stderr, "%s: %d symbols, %zu addresses\n", name, nsym, n);
	total += n;
	modules++;
	free(addrs);
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
	struct pv_symcache *sc = pv_symcache_new();

	CHECK(d != NULL && sc != NULL);
	CHECK_EQ(dwfl_linux_proc_report(d, getpid()), 0);
	CHECK_EQ(dwfl_report_end(d, NULL, NULL), 0);
	dwfl_getmodules(d, each, sc, 0);
	CHECK(modules >= 3);
	CHECK(total > 40000);
	pv_symcache_free(sc);
	dwfl_end(d);
	printf("%d checks, %d failed\n", check_count, check_failures);
	return check_failures != 0;
}
