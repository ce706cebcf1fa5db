/* test-lines.c - the line reader gives the file:line dwfl_module_getsrc gives
 *
 * The modules of this process with DWARF (the test itself, libc with its
 * separate debug file when installed, libdw's...) and the ELF files named
 * on the command line (programs with DWARF 4 and 2 line tables, and
 * lines/edges.S's library, a table of the cases compilers seldom write):
 * for each unit, the address of every row of its
 * line table, one byte above and one below, and random addresses in the
 * unit's ranges, asked of pv_unit_lines all at once and of
 * dwfl_module_getsrc one by one: the same file name (or none) and line.
 * The unit's file table against dwarf_filesrc's, index by index.  Then up
 * to four of those addresses asked again on their own, in any order: the
 * same answers (the line reader keeps only the rows that may answer its
 * addresses).  Most units must be read by pv_unit_lines itself, not left
 * to libdw.
 */
#include "check.h"
#include "lines.h"

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

static size_t units, read_here, asked, with_line, modules, subsets;
static int bad;

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* The addresses to ask about in unit cu (no bias): *n of them. */
static uint64_t *unit_addresses(Dwarf_Die *cu, size_t *n)
{
	Dwarf_Lines *lines;
	size_t nlines = 0, k = 0;
	uint64_t *v;

	*n = 0;
	if (dwarf_getsrclines(cu, &lines, &nlines) != 0)
		nlines = 0;
	v = malloc((3 * nlines + 64) * sizeof *v);
	if (!v)
		return NULL;
	for (size_t i = 0; i < nlines; i++) {
		Dwarf_Addr a;
		if (dwarf_lineaddr(dwarf_onesrcline(lines, i), &a) != 0)
			continue;
		v[k++] = a;
		v[k++] = a + 1;
		v[k++] = a - 1;
	}
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0 && k < 3 * nlines + 64)
		if (hi > lo)
			v[k++] = lo + rnd() % (hi - lo);
	*n = k;
	return v;
}

static void check_files(Dwarf_Die *cu, const struct pv_unit_files *files, const char *name)
{
	Dwarf_Files *df;
	size_t nf;

	if (dwarf_getsrcfiles(cu, &df, &nf) != 0)
		return;
	for (size_t i = 0; i <= nf + 1; i++) {
		const char *want = i < nf ? dwarf_filesrc(df, i, NULL, NULL) : NULL;
		const char *got = pv_unit_file(files, i);
		if (!same_str(want, got) && bad++ < 10)
			fprintf(stderr, "%s: unit %#" PRIx64 ": file %zu is '%s', libdw's '%s'\n", name,
				(uint64_t)dwarf_dieoffset(cu), i, got ? got : "(none)",
				want ? want : "(none)");
	}
}

/* A few of the unit's addresses asked on their own, out of order (most
 * runs of rows then answer none of them, and a run's last row answers
 * the ones above it): the answers the whole set got. */
static void check_subset(Dwarf_Die *cu, const char *name, const uint64_t *addrs, size_t n,
			 const char **file, const int *line, const bool *found)
{
	size_t m = 1 + rnd() % 4, pick[4];
	uint64_t sub[4];
	const char *sfile[4];
	int sline[4];
	bool sfound[4];
	struct pv_unit_files files;

	for (size_t i = 0; i < m; i++) {
		pick[i] = rnd() % n;
		sub[i] = addrs[pick[i]];
	}
	if (pv_unit_lines(cu, sub, m, sfile, sline, sfound, &files) <= 0) {
		CHECK(!"a unit read whole is read for a few of its addresses");
		return;
	}
	subsets++;
	for (size_t i = 0; i < m; i++) {
		size_t k = pick[i];
		if (sfound[i] != found[k] || !same_str(sfile[i], file[k]) ||
		    (found[k] && sline[i] != line[k])) {
			if (bad++ < 10)
				fprintf(stderr, "%s: at %#" PRIx64 " alone: %s:%d, with the others %s:%d\n",
					name, sub[i], sfound[i] ? sfile[i] : "(no line)", sline[i],
					found[k] ? file[k] : "(no line)", line[k]);
		}
	}
	pv_unit_files_free(&files);
}

static void check_unit(Dwfl_Module *mod, const char *name, Dwarf_Die *cu, Dwarf_Addr bias)
{
	size_t n;
	uint64_t *addrs = unit_addresses(cu, &n);
	const char **file = calloc(n + 1, sizeof *file);
	int *line = calloc(n + 1, sizeof *line);
	bool *found = calloc(n + 1, sizeof *found);
	struct pv_unit_files files;

	units++;
	if (!addrs || !file || !line || !found || n == 0)
		goto out;
	int r = pv_unit_lines(cu, addrs, n, file, line, found, &files);
	CHECK(r >= 0);
	if (r <= 0)
		goto out;
	read_here++;
	check_files(cu, &files, name);
	for (size_t i = 0; i < n; i++) {
		Dwarf_Addr b;
		Dwarf_Die *at = dwfl_module_addrdie(mod, addrs[i] + bias, &b);
		if (!at || dwarf_dieoffset(at) != dwarf_dieoffset(cu))
			continue; /* another unit holds it: asked there */
		Dwfl_Line *l = dwfl_module_getsrc(mod, addrs[i] + bias);
		int want_line = 0;
		const char *want = l ? dwfl_lineinfo(l, NULL, &want_line, NULL, NULL, NULL) : NULL;
		asked++;
		with_line += l != NULL;
		if ((l != NULL) != found[i] || !same_str(want, file[i]) || (l && want_line != line[i])) {
			if (bad++ < 10)
				fprintf(stderr, "%s: at %#" PRIx64 ": %s:%d, libdw's %s:%d\n", name,
					addrs[i], found[i] ? file[i] : "(no line)", line[i],
					l ? want : "(no line)", want_line);
		}
	}
	check_subset(cu, name, addrs, n, file, line, found);
	pv_unit_files_free(&files);
out:
	free(addrs);
	free(file);
	free(line);
	free(found);
}

static int each(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr low, void *arg)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = NULL;
	size_t before = asked;

	(void)ud;
	(void)low;
	(void)arg;
	if (!dwfl_module_getdwarf(mod, &bias))
		return DWARF_CB_OK;
	while ((cu = dwfl_module_nextcu(mod, cu, &bias)) != NULL)
		check_unit(mod, name, cu, bias);
	fprintf(stderr, "%s: %zu addresses\n", name, asked - before);
	modules++;
	return DWARF_CB_OK;
}

int main(int argc, char **argv)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &debuginfo_path,
	};
	Dwfl *d = dwfl_begin(&cb);

	CHECK(d != NULL);
	CHECK_EQ(dwfl_linux_proc_report(d, getpid()), 0);
	for (int i = 1; i < argc; i++)
		CHECK(dwfl_report_offline(d, argv[i], argv[i], -1) != NULL);
	CHECK_EQ(dwfl_report_end(d, NULL, NULL), 0);
	dwfl_getmodules(d, each, NULL, 0);
	fprintf(stderr, "%zu modules with DWARF, %zu units (%zu read here, %zu again for a few "
		"addresses), %zu addresses (%zu with a line)\n",
		modules, units, read_here, subsets, asked, with_line);
	CHECK(modules >= 1);
	CHECK(with_line > 1000);
	CHECK(read_here * 10 >= units * 9);
	CHECK_EQ(bad, 0);
	dwfl_end(d);
	printf("%d checks, %d failed\n", check_count, check_failures);
	return check_failures != 0;
}
