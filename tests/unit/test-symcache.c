/* test-symcache.c - the symbol table answers as libdwfl does, at every
 * address that could tell them apart
 *
 * 1. The modules of this process (the test, libc with its separate debug
 *    file when installed, the dynamic loader, libdw, the vDSO...) reported
 *    to a Dwfl: for each, the addresses around its symbols' starts and
 *    ends (one before, at, one after; 1,000 symbols at most, chosen at
 *    random) and 3,000 random ones in its range.
 * 2. labels.so (symcache/labels.S: labels, nested symbols, aliases of
 *    each binding, a gap between sections, an absolute symbol), reported
 *    at its own addresses and 256 MB higher: every address of it.  Then
 *    the same library stripped, its local symbols in MiniDebugInfo
 *    (symcache/minidebuginfo.sh): .dynsym and an auxiliary table.
 * 3. A big stripped program, when installed: gcc's cc1plus (tens of MB,
 *    only .dynsym), around 200 of its symbols and at 800 random places
 *    (libdwfl takes about a millisecond an address there).
 * Each address is asked in a random order of the table and of
 * dwfl_module_addrinfo directly: the names must be the same.
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

/* Ask the table and libdwfl about addrs[0..n) of mod in a random order. */
static void compare(struct pv_symcache *sc, Dwfl_Module *mod, const char *name, uint64_t *addrs,
		    size_t n)
{
	int bad = 0;

	for (size_t i = n; i > 1; i--) {
		size_t j = rnd() % i;
		uint64_t t = addrs[i - 1];
		addrs[i - 1] = addrs[j];
		addrs[j] = t;
	}
	for (size_t i = 0; i < n; i++) {
		GElf_Off off;
		GElf_Sym sym;
		const char *want = dwfl_module_addrinfo(mod, addrs[i], &off, &sym, NULL, NULL, NULL);
		const char *got = pv_symcache_lookup(sc, mod, addrs[i]);
		if ((want == NULL) != (got == NULL) || (want && strcmp(want, got) != 0)) {
			if (bad++ < 5)
				fprintf(stderr, "%s: at %#" PRIx64 " libdwfl says %s, the table %s\n", name,
					addrs[i], want ? want : "(none)", got ? got : "(none)");
		}
	}
	CHECK_EQ(bad, 0);
	total += n;
	modules++;
}

/* Around up to maxsyms of mod's symbols (at random), nrandom random
 * addresses in its range, or every address when all. */
static void check_module(struct pv_symcache *sc, Dwfl_Module *mod, const char *name, int maxsyms,
			 int nrandom, bool all)
{
	Dwarf_Addr low, high;
	int nsym = dwfl_module_getsymtab(mod);
	uint64_t *addrs;
	size_t n = 0;

	dwfl_module_info(mod, NULL, &low, &high, NULL, NULL, NULL, NULL);
	if (nsym <= 0 || high <= low)
		return;
	addrs = malloc(((size_t)nsym * 6 + (size_t)nrandom + (all ? high - low : 0)) * sizeof *addrs);
	CHECK(addrs != NULL);
	for (int i = 1; i < nsym; i++) {
		GElf_Sym sym;
		GElf_Addr a;
		if (nsym > maxsyms && rnd() % (uint64_t)nsym >= (uint64_t)maxsyms)
			continue;
		if (!dwfl_module_getsym_info(mod, i, &sym, &a, NULL, NULL, NULL))
			continue;
		uint64_t e = a + sym.st_size;
		uint64_t pts[] = { a - 1, a, a + 1, e - 1, e, e + 1 };
		for (size_t k = 0; k < 6; k++)
			if (pts[k] >= low && pts[k] < high)
				addrs[n++] = pts[k];
	}
	for (int i = 0; i < nrandom; i++)
		addrs[n++] = low + rnd() % (high - low);
	for (uint64_t a = low; all && a < high; a++)
		addrs[n++] = a;
	compare(sc, mod, name, addrs, n);
	fprintf(stderr, "%s: %d symbols, %zu addresses\n", name, nsym, n);
	free(addrs);
}

static int each(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr low, void *arg)
{
	(void)ud;
	(void)low;
	check_module(arg, mod, name, 1000, 3000, false);
	return DWARF_CB_OK;
}

static void live_process(void)
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
	CHECK(total > 25000);
	pv_symcache_free(sc);
	dwfl_end(d);
}

/* path reported as analyzer/modules.c reports files, at load bias bias. */
static Dwfl_Module *offline(Dwfl *d, const char *name, const char *path, GElf_Addr bias)
{
	Dwfl_Module *mod;

	dwfl_report_begin_add(d);
	mod = dwfl_report_elf(d, name, path, -1, bias, true);
	dwfl_report_end(d, NULL, NULL);
	return mod;
}

static Dwfl *offline_dwfl(void)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &debuginfo_path,
	};
	return dwfl_begin(&cb);
}

/* Does mod's table have a symbol named name? */
static bool has_symbol(Dwfl_Module *mod, const char *name)
{
	int n = dwfl_module_getsymtab(mod);

	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr a;
		const char *s = dwfl_module_getsym_info(mod, i, &sym, &a, NULL, NULL, NULL);
		if (s && strcmp(s, name) == 0)
			return true;
	}
	return false;
}

static void labels(const char *path)
{
	Dwfl *d = offline_dwfl();
	struct pv_symcache *sc = pv_symcache_new();
	Dwfl_Module *at0 = offline(d, "labels", path, 0);
	Dwfl_Module *high = offline(d, "labels-high", path, 0x10000000);
	size_t before = total;

	CHECK(at0 != NULL && high != NULL && sc != NULL);
	/* a local symbol: from .symtab, or from .gnu_debugdata's table */
	CHECK(at0 && has_symbol(at0, "loc_a"));
	if (at0 && high) {
		check_module(sc, at0, path, 1000, 0, true);
		check_module(sc, high, "(256 MB up)", 1000, 0, true);
	}
	CHECK(total - before > 2 * 4096);
	pv_symcache_free(sc);
	dwfl_end(d);
}

static void big_stripped(void)
{
	char path[4096];
	FILE *f = popen("g++ -print-prog-name=cc1plus 2>/dev/null", "r");
	bool found = f && fgets(path, sizeof path, f) != NULL;

	if (f)
		pclose(f);
	path[found ? strcspn(path, "\n") : 0] = '\0';
	if (!found || path[0] != '/' || access(path, R_OK) != 0) {
		fprintf(stderr, "no cc1plus: the big stripped program is not tried\n");
		return;
	}
	Dwfl *d = offline_dwfl();
	struct pv_symcache *sc = pv_symcache_new();
	Dwfl_Module *mod = offline(d, "cc1plus", path, 0);

	CHECK(mod != NULL && sc != NULL);
	if (mod) {
		CHECK(dwfl_module_getsymtab(mod) > 10000);
		check_module(sc, mod, path, 200, 800, false);
	}
	pv_symcache_free(sc);
	dwfl_end(d);
}

int main(int argc, char **argv)
{
	/* labels.so, then the same with MiniDebugInfo when it could be made */
	CHECK(argc == 2 || argc == 3);
	live_process();
	for (int i = 1; i < argc; i++)
		labels(argv[i]);
	big_stripped();
	printf("%d checks, %d failed\n", check_count, check_failures);
	return check_failures != 0;
}
