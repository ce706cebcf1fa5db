/* kallsyms.c - the functions of kernel frames, from /proc/kallsyms
 *
 * The table lists every kernel symbol with its address on this boot (KASLR
 * moves the kernel at every boot), not sorted; the text symbols are read
 * once, sorted, and each kernel location finds the one at or below it by
 * binary search.  A trace of another boot, or a table whose addresses are
 * hidden (all zero), leaves the addresses as they are.
 */
#include "kallsyms.h"
#include "error.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ksym {
	uint64_t addr;
	size_t name;               /* offset into names */
};

struct ktable {
	struct ksym *v;
	size_t n, cap;
	char *names;
	size_t nnames, capnames;
	bool hidden;               /* every address read as zero */
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Reads the text symbols of path into t.  Returns 0, 1 when the file
 * cannot be read, or -1 when out of memory. */
static int ktable_read(struct ktable *t, const char *path)
{
	char line[512], type, name[256];
	uint64_t addr;
	size_t any = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return 1;
	while (fgets(line, sizeof line, f)) {
		size_t len;

		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, name) != 3)
			continue;
		any++;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (addr == 0)
			continue;
		len = strlen(name) + 1;
		if (pv_grow(&t->v, &t->cap, t->n + 1, sizeof *t->v) < 0 ||
		    pv_grow(&t->names, &t->capnames, t->nnames + len, 1) < 0) {
			fclose(f);
			return pv_oom();
		}
		memcpy(t->names + t->nnames, name, len);
		t->v[t->n++] = (struct ksym){ addr, t->nnames };
		t->nnames += len;
	}
	fclose(f);
	t->hidden = any > 0 && t->n == 0;
	qsort(t->v, t->n, sizeof *t->v, ksym_cmp);
	return 0;
}

/* The symbol at or below addr, or NULL. */
static const char *ktable_find(const struct ktable *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 ? t->names + t->v[lo - 1].name : NULL;
}

/* This machine's boot id into buf (empty when unknown). */
static void read_boot_id(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, (int)size, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
}

/* Names location li fn_name (a function without a file). */
static int name_location(struct pv_profile *p, uint32_t li, const char *fn_name)
{
	struct pv_line line = { 0 };
	uint32_t s = pv_intern_str(p, fn_name);

	if (s == PV_NONE)
		return -1;
	line.function = pv_get_function(p, s, s, 0, 0);
	if (line.function == PV_NONE)
		return -1;
	return pv_set_lines(p, li, &line, 1);
}

int pv_symbolize_kernel(struct pv_profile *p, const char *kallsyms, const char *boot_id, bool quiet)
{
	struct ktable t = { 0 };
	char here[64];
	bool loaded = false, said = false;
	int ret = -1;

	read_boot_id(boot_id ? boot_id : "/proc/sys/kernel/random/boot_id", here, sizeof here);
	for (size_t i = 0; i < p->nlocations; i++) {
		const struct pv_location *l = &p->locations[i];
		const struct pv_mapping *m;
		const char *name = NULL;
		bool same_boot;

		if (l->nlines || !pv_location_is_kernel(p, (uint32_t)i))
			continue;
		if (l->address == 0) {
			if (name_location(p, (uint32_t)i, PV_KERNEL_FRAME_NAME) < 0)
				goto out;
			continue;
		}
		m = &p->mappings[l->mapping];
		same_boot = here[0] && strcmp(pv_str(p, m->build_id), here) == 0;
		if (same_boot && !loaded) {
			int r = ktable_read(&t, kallsyms ? kallsyms : "/proc/kallsyms");

			if (r < 0)
				goto out;
			loaded = true;
			if (!quiet && (r > 0 || t.hidden || t.n == 0)) {
				pv_warn("%s: kernel frames show as addresses (%s)",
					kallsyms ? kallsyms : "/proc/kallsyms",
					r > 0 ? "cannot read it"
					: t.hidden ? "its addresses are hidden: see kernel.kptr_restrict"
						   : "no text symbols");
				said = true;
			}
		}
		if (!same_boot && !said && !quiet) {
			pv_warn("kernel frames are of another boot or machine: they show as addresses");
			said = true;
		}
		if (same_boot)
			name = ktable_find(&t, l->address);
		if (name) {
			if (name_location(p, (uint32_t)i, name) < 0)
				goto out;
		} else {
			char buf[64];

			snprintf(buf, sizeof buf, "%s+0x%" PRIx64, PV_KERNEL_MAPPING_NAME, l->address);
			if (name_location(p, (uint32_t)i, buf) < 0)
				goto out;
		}
	}
	ret = 0;
out:
	free(t.v);
	free(t.names);
	return ret;
}
