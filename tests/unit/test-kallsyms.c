/* test-kallsyms.c - kernel frames named from a symbol table, against a
 * reference lookup written here
 *
 * Generated tables of 40,000 lines (bigger than one read: lines cut
 * between reads), unique addresses, in the kernel's sorted order and
 * shuffled, with data symbols, zero addresses, module lines, names longer
 * than 255 bytes and no newline after the last line; then this machine's
 * /proc/kallsyms when it shows addresses, where aliases share an address
 * (the last of them in the file's order is the name, as a stable sort
 * leaves them).  Each location, at a symbol's address, one byte past it
 * and below the first, must get what the reference finds: the text symbol
 * at or below it, its name cut at 255 bytes, or "[kernel.kallsyms]+0x..."
 * when there is none.
 *
 * The kernel's own symbols kept for the next run of the same boot
 * (kcache.h): a table in the kernel's layout (its own symbols sorted, then
 * modules' above them) read once leaves the file; read again after its
 * names changed, the addresses the file covers get the first names (the
 * file was used), an address in a module gets the new names for all (the
 * table was read), as does a damaged file; with PROFVIEW_CACHE=off no
 * file is written.  /proc/kallsyms is checked twice: read, then from the
 * file.
 */
#include "check.h"
#include "error.h"
#include "kallsyms.h"
#include "merge.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct sym {
	uint64_t addr;
	size_t order;          /* its line in the file */
	char name[256];
	char type;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static bool is_text(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/* The reference: the text symbols of syms[0..n) sorted by address, ties
 * in file order; the name at or below addr, or NULL. */
static const char *ref_find(const struct sym *sorted, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sorted[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? sorted[lo - 1].name : NULL;
}

static void quiet_sink(enum pv_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

/* Symbolize the addresses addrs[0..n) as kernel frames of boot boot with
 * the table at path and the boot id file bootfile; check each name
 * against the reference of syms (text symbols only, sorted). */
static void check_names(const char *path, const char *bootfile, const char *boot,
			const struct sym *sorted, size_t nsorted, const uint64_t *addrs, size_t n)
{
	struct pv_profile *p = pv_profile_new();
	struct pv_mapping m = { .kind = PV_MAP_KERNEL, .has_functions = true };
	uint32_t mi, *loc = malloc(n * sizeof *loc);
	size_t wrong = 0;

	m.file = pv_intern_str(p, PV_KERNEL_MAPPING_NAME);
	m.build_id = pv_intern_str(p, boot);
	mi = pv_add_mapping(p, &m);
	for (size_t i = 0; i < n; i++)
		loc[i] = pv_get_location(p, addrs[i], mi);
	CHECK_EQ(pv_symbolize_kernel(p, path, bootfile, true), 0);
	for (size_t i = 0; i < n; i++) {
		const struct pv_location *l = &p->locations[loc[i]];
		const char *want = ref_find(sorted, nsorted, addrs[i]);
		char buf[64];
		if (!want) {
			snprintf(buf, sizeof buf, "%s+0x%" PRIx64, PV_KERNEL_MAPPING_NAME, addrs[i]);
			want = buf;
		}
		const char *got = l->nlines ? pv_str(p, p->functions[pv_location_lines(p, l)[0].function].name)
					    : "(none)";
		if (strcmp(got, want) != 0 && wrong++ < 5)
			fprintf(stderr, "0x%" PRIx64 ": '%s', not '%s'\n", addrs[i], got, want);
	}
	CHECK_EQ(wrong, 0);
	free(loc);
	pv_profile_free(p);
}

/* The text symbols of syms[0..n) sorted (a new array, *nt of them). */
static struct sym *text_sorted(const struct sym *syms, size_t n, size_t *nt)
{
	struct sym *t = malloc((n ? n : 1) * sizeof *t);

	*nt = 0;
	for (size_t i = 0; i < n; i++)
		if (is_text(syms[i].type) && syms[i].addr)
			t[(*nt)++] = syms[i];
	qsort(t, *nt, sizeof *t, cmp_sym);
	return t;
}

/* Every symbol's address, one past it, and one below the lowest. */
static uint64_t *probe_addrs(const struct sym *sorted, size_t n, size_t step, size_t *na)
{
	uint64_t *a = malloc((2 * n / step + 3) * sizeof *a);

	*na = 0;
	if (n)
		a[(*na)++] = sorted[0].addr - 1;
	for (size_t i = 0; i < n; i += step) {
		a[(*na)++] = sorted[i].addr;
		a[(*na)++] = sorted[i].addr + 1;
	}
	return a;
}

static void test_generated(const char *dir, bool shuffled)
{
	enum { N = 40000 };
	struct sym *syms = calloc(N, sizeof *syms);
	char path[512], bootfile[512];
	static const char types[] = "tTwWdDbBrR";
	uint64_t *addrs;
	size_t nt, na;
	struct sym *sorted;
	FILE *f;

	srand(shuffled ? 7 : 3);
	for (size_t i = 0; i < N; i++) {
		struct sym *s = &syms[i];
		s->addr = 0xffffffff81000000ull + 16 * i + (uint64_t)(rand() % 8);
		s->type = types[rand() % 10];
		if (i % 997 == 5)
			s->addr = 0; /* hidden, or an absolute symbol */
		if (i % 1013 == 7) {
			memset(s->name, 'x', 255);
			s->name[255] = '\0';
		} else {
			snprintf(s->name, sizeof s->name, "sym_%zu_%c", i, s->type);
		}
	}
	if (shuffled)
		for (size_t i = N - 1; i > 0; i--) {
			size_t j = (size_t)rand() % (i + 1);
			struct sym t = syms[i];
			syms[i] = syms[j];
			syms[j] = t;
		}
	snprintf(path, sizeof path, "%s/kallsyms-%d", dir, shuffled);
	snprintf(bootfile, sizeof bootfile, "%s/boot_id", dir);
	f = fopen(path, "w");
	for (size_t i = 0; i < N; i++) {
		syms[i].order = i;
		/* a long name runs on past 255 bytes in the file */
		fprintf(f, "%016" PRIx64 " %c %s%s%s%s", syms[i].addr, syms[i].type, syms[i].name,
			syms[i].name[0] == 'x' ? "yyyyyyyyyy" : "", i % 50 == 3 ? "\t[somemod]" : "",
			i + 1 < N ? "\n" : "");
	}
	fclose(f);
	sorted = text_sorted(syms, N, &nt);
	addrs = probe_addrs(sorted, nt, 1, &na);
	check_names(path, bootfile, "testboot", sorted, nt, addrs, na);
	free(addrs);
	free(sorted);
	free(syms);
}

/* Write a table in the kernel's layout: n symbols of the kernel's own,
 * sorted, their names prefixed, then 100 of a module's, above them. */
static struct sym *kernel_like(const char *path, size_t n, const char *prefix)
{
	struct sym *syms = calloc(n + 100, sizeof *syms);
	FILE *f = fopen(path, "w");

	for (size_t i = 0; i < n + 100; i++) {
		struct sym *s = &syms[i];
		s->addr = i < n ? 0xffffffff81000000ull + 32 * i : 0xffffffffc0000000ull + 64 * (i - n);
		s->type = "tTdT"[i % 4];
		s->order = i;
		snprintf(s->name, sizeof s->name, "%s%zu", prefix, i);
		fprintf(f, "%016" PRIx64 " %c %s%s\n", s->addr, s->type, s->name, i < n ? "" : "\t[mod]");
	}
	fclose(f);
	return syms;
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static void test_cache(const char *dir)
{
	enum { N = 20000 };
	char path[512], bootfile[512], cache[600];
	struct sym *old, *new, *so, *sn;
	size_t nto, ntn, na;
	uint64_t *addrs;
	FILE *f;

	snprintf(path, sizeof path, "%s/kallsyms-cache", dir);
	snprintf(bootfile, sizeof bootfile, "%s/boot_id2", dir);
	snprintf(cache, sizeof cache, "%s/cache/profview/kernel-cafe-1.syms", dir);
	f = fopen(bootfile, "w");
	fputs("cafe-1\n", f);
	fclose(f);
	old = kernel_like(path, N, "old_");
	so = text_sorted(old, N + 100, &nto);
	/* the addresses of the kernel's own, but the last: the file's */
	addrs = probe_addrs(so, nto, 3, &na);
	na = 0;
	for (size_t i = 0; i < nto && so[i].addr < so[nto - 101].addr; i += 3) {
		addrs[na++] = so[i].addr;
		addrs[na++] = so[i].addr + 5;
	}
	check_names(path, bootfile, "cafe-1", so, nto, addrs, na);
	CHECK(exists(cache));
	new = kernel_like(path, N, "new_");
	sn = text_sorted(new, N + 100, &ntn);
	check_names(path, bootfile, "cafe-1", so, nto, addrs, na);
	addrs[na++] = 0xffffffffc0000000ull + 64 * 3 + 1; /* in the module */
	check_names(path, bootfile, "cafe-1", sn, ntn, addrs, na);
	na--;
	CHECK(truncate(cache, 100) == 0);
	check_names(path, bootfile, "cafe-1", sn, ntn, addrs, na);
	unlink(cache);
	setenv("PROFVIEW_CACHE", "off", 1);
	check_names(path, bootfile, "cafe-1", sn, ntn, addrs, na);
	CHECK(!exists(cache));
	unsetenv("PROFVIEW_CACHE");
	free(addrs);
	free(old);
	free(new);
	free(so);
	free(sn);
}

/* This machine's table, read with stdio and sscanf. */
static void test_proc(void)
{
	FILE *f = fopen("/proc/kallsyms", "r"), *b = fopen("/proc/sys/kernel/random/boot_id", "r");
	struct sym *syms = NULL, *sorted;
	size_t n = 0, cap = 0, nt, na;
	char line[1024], boot[64] = "";
	uint64_t *addrs;

	if (!f || !b || !fgets(boot, sizeof boot, b)) {
		printf("no /proc/kallsyms or boot id: this machine's table not checked\n");
		goto out;
	}
	boot[strcspn(boot, "\n")] = '\0';
	while (fgets(line, sizeof line, f)) {
		struct sym s = { 0 };
		if (sscanf(line, "%" SCNx64 " %c %255s", &s.addr, &s.type, s.name) != 3)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			syms = realloc(syms, cap * sizeof *syms);
		}
		s.order = n;
		syms[n++] = s;
	}
	sorted = text_sorted(syms, n, &nt);
	if (nt == 0) {
		printf("/proc/kallsyms hides its addresses: this machine's table not checked\n");
		free(sorted);
		goto out;
	}
	addrs = probe_addrs(sorted, nt, 7, &na);
	check_names(NULL, NULL, boot, sorted, nt, addrs, na);
	/* again, from the file the first read left (an address below the
	 * kernel's own is not the file's: not asked now) */
	check_names(NULL, NULL, boot, sorted, nt, addrs + 1, na - 1);
	fprintf(stderr, "/proc/kallsyms: %zu text symbols, %zu addresses checked\n", nt, na);
	free(addrs);
	free(sorted);
out:
	free(syms);
	if (f)
		fclose(f);
	if (b)
		fclose(b);
}

int main(void)
{
	char dir[] = "/tmp/test-kallsyms.XXXXXX";
	char bootfile[600];
	FILE *f;

	pv_error_set_sink(quiet_sink);
	if (!mkdtemp(dir))
		return 1;
	snprintf(bootfile, sizeof bootfile, "%s/boot_id", dir);
	f = fopen(bootfile, "w");
	fputs("testboot\n", f);
	fclose(f);
	char cachedir[600];
	snprintf(cachedir, sizeof cachedir, "%s/cache", dir);
	setenv("XDG_CACHE_HOME", cachedir, 1);
	test_generated(dir, false);
	test_generated(dir, true);
	test_cache(dir);
	test_proc();
	char cmd[700];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	printf("%d checks, %d failed\n", check_count, check_failures);
	return check_failures != 0;
}
