/* kallsyms.c - the functions of kernel frames, from /proc/kallsyms
 *
 * The table lists every kernel symbol with its address on this boot (KASLR
 * moves the kernel at every boot), not sorted; the text symbols are read
 * once, sorted, and each kernel location finds the one at or below it by
 * binary search.  The kernel's own are kept for the next run of the same
 * boot (kcache.h), which reads the table only for an address they do not
 * cover.  A trace of another boot, or a table whose addresses are
 * hidden (all zero), leaves the addresses as they are.
 */
#include "kallsyms.h"
#include "error.h"
#include "kcache.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ktable {
	struct kcache_sym *v;
	size_t n, cap;
	char *names;
	size_t nnames, capnames;
	size_t any;                /* lines read */
	bool hidden;               /* every address read as zero */
	bool unsorted;             /* some address below the one before it */
};

#define KTABLE_READ (256 * 1024) /* bytes asked of each read */

static int ksym_cmp(const void *a, const void *b)
{
	const struct kcache_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The value of the hex digits at *s, *s moved past them; false when
 * there are none or too many. */
static bool parse_hex(const char **s, const char *end, uint64_t *v)
{
	const char *p = *s;
	uint64_t x = 0;

	for (; p < end; p++) {
		unsigned d;
		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f')
			d = (unsigned)((*p | 0x20) - 'a' + 10);
		else
			break;
		if (p - *s >= 16)
			return false;
		x = x << 4 | d;
	}
	if (p == *s)
		return false;
	*s = p;
	*v = x;
	return true;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* One line of the table, line[0..len) without its newline: "ADDRESS TYPE
 * NAME", then maybe a tab and the module.  Adds a text symbol to t (its
 * name up to the first blank, at most 255 bytes).  1 when the line is
 * not of that form, else 0, or -1 when out of memory. */
static int ktable_line(struct ktable *t, const char *line, size_t len)
{
	const char *p = line, *end = line + len, *name;
	uint64_t addr;
	size_t n;
	char type;

	if (!parse_hex(&p, end, &addr) || p == end || !is_blank(*p))
		return 1;
	while (p < end && is_blank(*p))
		p++;
	if (p == end)
		return 1;
	type = *p++;
	while (p < end && is_blank(*p))
		p++;
	for (name = p; p < end && !is_blank(*p); p++)
		;
	if (p == name)
		return 1;
	t->any++;
	if ((type != 't' && type != 'T' && type != 'w' && type != 'W') || addr == 0)
		return 0;
	n = (size_t)(p - name) < 255 ? (size_t)(p - name) : 255;
	if (t->nnames + n + 1 > UINT32_MAX)
		return 1;
	/* then "\t[module]" for a symbol not of the kernel's own */
	const char *rest = p;
	while (rest < end && is_blank(*rest))
		rest++;
	if (pv_grow(&t->v, &t->cap, t->n + 1, sizeof *t->v) < 0 ||
	    pv_grow(&t->names, &t->capnames, t->nnames + n + 1, 1) < 0)
		return pv_oom();
	if (t->n && addr < t->v[t->n - 1].addr)
		t->unsorted = true;
	memcpy(t->names + t->nnames, name, n);
	t->names[t->nnames + n] = '\0';
	t->v[t->n++] = (struct kcache_sym){ addr, (uint32_t)t->nnames, rest < end && *rest == '[' };
	t->nnames += n + 1;
	return 0;
}

/* Reads the text symbols of path into t, in big reads (the kernel makes
 * the table's text as it is read: one read of a buffer's worth rather
 * than many small ones), and sorts them by address when they are not (the
 * kernel's own come sorted; a stable sort leaves sorted input as it is).
 * Returns 0, 1 when the file cannot be read, or -1 when out of memory. */
static int ktable_read(struct ktable *t, const char *path)
{
	size_t have = 0, cap = KTABLE_READ;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	int ret = 0;

	if (fd < 0 || !buf) {
		ret = fd < 0 ? 1 : pv_oom();
		goto out;
	}
	for (;;) {
		ssize_t r = read(fd, buf + have, cap - have);
		size_t used = 0;
		char *nl;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			/* the last line, without its newline */
			if (have && ktable_line(t, buf, have) < 0)
				ret = -1;
			break;
		}
		have += (size_t)r;
		while ((nl = memchr(buf + used, '\n', have - used)) != NULL) {
			if (ktable_line(t, buf + used, (size_t)(nl - buf - used)) < 0) {
				ret = -1;
				goto out;
			}
			used = (size_t)(nl - buf) + 1;
		}
		if (used == 0 && have == cap)
			used = have; /* a line longer than the buffer: dropped */
		memmove(buf, buf + used, have - used);
		have -= used;
	}
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	t->hidden = t->any > 0 && t->n == 0;
	if (ret == 0 && t->unsorted)
		qsort(t->v, t->n, sizeof *t->v, ksym_cmp);
	return ret;
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

/* Is location i a kernel location of boot here that is to be named from
 * the table? */
static bool to_look_up(const struct pv_profile *p, size_t i, const char *here)
{
	const struct pv_location *l = &p->locations[i];

	return !l->nlines && pv_location_is_kernel(p, (uint32_t)i) && l->address != 0 && here[0] &&
	       strcmp(pv_str(p, p->mappings[l->mapping].build_id), here) == 0;
}

/* The symbols for the addresses of p to look up (to_look_up): from the
 * file of this boot when it covers them all, else from the table read now
 * (and its kernel's own kept for the next time).  What ktable_read
 * returns. */
static int ktable_get(struct ktable *t, struct kcache **cache, const struct pv_profile *p,
		      const char *path, const char *here)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	int r;

	for (size_t i = 0; i < p->nlocations; i++)
		if (to_look_up(p, i, here)) {
			uint64_t a = p->locations[i].address;
			lo = a < lo ? a : lo;
			hi = a > hi ? a : hi;
		}
	*cache = kcache_open(here);
	if (kcache_covers(*cache, lo, hi))
		return 0;
	kcache_close(*cache);
	*cache = NULL;
	r = ktable_read(t, path);
	if (r == 0 && !t->hidden && t->n)
		kcache_save(here, t->v, t->n, t->names, t->nnames);
	return r;
}

int pv_symbolize_kernel(struct pv_profile *p, const char *kallsyms, const char *boot_id, bool quiet)
{
	struct ktable t = { 0 };
	struct kcache *cache = NULL;
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
			int r = ktable_get(&t, &cache, p, kallsyms ? kallsyms : "/proc/kallsyms", here);

			if (r < 0)
				goto out;
			loaded = true;
			if (!quiet && !cache && (r > 0 || t.hidden || t.n == 0)) {
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
			name = cache ? kcache_find(cache, l->address) : ktable_find(&t, l->address);
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
	kcache_close(cache);
	free(t.v);
	free(t.names);
	return ret;
}
