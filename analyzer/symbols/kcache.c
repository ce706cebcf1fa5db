/* kcache.c - the kernel's own text symbols of this boot, kept in a file
 * (see kcache.h)
 *
 * The file: a header (magic, boot id, counts, the lowest and highest
 * address), the symbols sorted by address (16 bytes each, as struct
 * kcache_sym with module 0), then their names, each ending in a NUL.
 */
#include "kcache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAGIC "PVKSYM1"

struct header {
	char magic[8];
	char boot[64];
	uint64_t n, nnames;
	uint64_t lo, hi;       /* the lowest and the highest address */
};

struct kcache {
	void *map;
	size_t len;
	const struct header *h;
	const struct kcache_sym *syms;
	const char *names;
};

bool kcache_folder(char *buf, size_t size, size_t *len)
{
	const char *off = getenv("PROFVIEW_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (off && strcmp(off, "off") == 0)
		return false;
	if (xdg && xdg[0] == '/')
		n = snprintf(buf, size, "%s/profview", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.cache/profview", home);
	else
		return false;
	if (n < 0 || (size_t)n >= size)
		return false;
	*len = (size_t)n;
	return true;
}

int kcache_temp(char *path, size_t len, size_t size, const char *prefix)
{
	/* the folder, and ~/.cache when it is the place and is missing */
	path[len] = '\0';
	if (mkdir(path, 0700) != 0 && errno == ENOENT) {
		char *slash = strrchr(path, '/');
		*slash = '\0';
		mkdir(path, 0700);
		*slash = '/';
		mkdir(path, 0700);
	}
	if ((size_t)snprintf(path + len, size - len, "/.%s-XXXXXX", prefix) >= size - len)
		return -1;
	return mkostemp(path, O_CLOEXEC);
}

/* The file's path for boot into buf; false when caching is off, there is
 * no place for it, or boot is not a boot id. */
static bool cache_path(const char *boot, char *buf, size_t size, size_t *dirlen)
{
	size_t len = strlen(boot);
	int n;

	if (len == 0 || len >= sizeof ((struct header *)0)->boot ||
	    strspn(boot, "0123456789abcdef-") != len || !kcache_folder(buf, size, dirlen))
		return false;
	n = snprintf(buf + *dirlen, size - *dirlen, "/kernel-%s.syms", boot);
	return n > 0 && *dirlen + (size_t)n < size;
}

struct kcache *kcache_open(const char *boot)
{
	char path[PATH_MAX];
	size_t dirlen;
	struct stat st;
	struct kcache *c;
	const struct header *h;
	void *map;
	int fd;

	if (!cache_path(boot, path, sizeof path, &dirlen))
		return NULL;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022) || (uint64_t)st.st_size < sizeof *h) {
		close(fd);
		return NULL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return NULL;
	h = map;
	c = malloc(sizeof *c);
	if (!c || memcmp(h->magic, MAGIC, sizeof MAGIC) != 0 ||
	    strncmp(h->boot, boot, sizeof h->boot) != 0 || h->n == 0 ||
	    h->n > ((uint64_t)st.st_size - sizeof *h) / sizeof(struct kcache_sym) || h->nnames == 0 ||
	    h->nnames != (uint64_t)st.st_size - sizeof *h - h->n * sizeof(struct kcache_sym) ||
	    h->lo > h->hi) {
		free(c);
		munmap(map, (size_t)st.st_size);
		return NULL;
	}
	c->map = map;
	c->len = (size_t)st.st_size;
	c->h = h;
	c->syms = (const struct kcache_sym *)(h + 1);
	c->names = (const char *)(c->syms + h->n);
	if (c->names[h->nnames - 1] != '\0') {
		kcache_close(c);
		return NULL;
	}
	return c;
}

int kcache_covers(const struct kcache *c, uint64_t lo, uint64_t hi)
{
	return c && lo >= c->h->lo && hi < c->h->hi;
}

const char *kcache_find(const struct kcache *c, uint64_t addr)
{
	size_t lo = 0, hi = c->h->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || c->syms[lo - 1].name >= c->h->nnames)
		return NULL;
	return c->names + c->syms[lo - 1].name;
}

void kcache_close(struct kcache *c)
{
	if (!c)
		return;
	munmap(c->map, c->len);
	free(c);
}

static bool write_all(int fd, const void *buf, size_t len)
{
	while (len) {
		ssize_t r = write(fd, buf, len);
		if (r <= 0) {
			if (r < 0 && errno == EINTR)
				continue;
			return false;
		}
		buf = (const char *)buf + r;
		len -= (size_t)r;
	}
	return true;
}

/* The kernel's own symbols of syms[0..n) (sorted) into *out (malloc'd),
 * with the header; false when there are none, a module's symbol lies
 * among them, or out of memory. */
static bool own_symbols(const struct kcache_sym *syms, size_t n, struct header *h,
			struct kcache_sym **out)
{
	size_t k = 0;

	h->lo = UINT64_MAX;
	h->hi = 0;
	for (size_t i = 0; i < n; i++)
		if (!syms[i].module) {
			h->lo = syms[i].addr < h->lo ? syms[i].addr : h->lo;
			h->hi = syms[i].addr > h->hi ? syms[i].addr : h->hi;
			k++;
		}
	if (k == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		if (syms[i].module && syms[i].addr >= h->lo && syms[i].addr <= h->hi)
			return false;
	*out = malloc(k * sizeof **out);
	if (!*out)
		return false;
	h->n = 0;
	for (size_t i = 0; i < n; i++)
		if (!syms[i].module)
			(*out)[h->n++] = syms[i];
	return true;
}

void kcache_save(const char *boot, const struct kcache_sym *syms, size_t n, const char *names,
		 size_t nnames)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	struct header h = { MAGIC, "", 0, nnames, 0, 0 };
	struct kcache_sym *own = NULL;
	size_t dirlen;
	int fd;

	if (!cache_path(boot, path, sizeof path, &dirlen) || nnames == 0 || nnames > UINT32_MAX ||
	    !own_symbols(syms, n, &h, &own))
		return;
	strncpy(h.boot, boot, sizeof h.boot - 1);
	memcpy(tmp, path, dirlen);
	fd = kcache_temp(tmp, dirlen, sizeof tmp, "kernel");
	if (fd < 0) {
		free(own);
		return;
	}
	bool ok = write_all(fd, &h, sizeof h) && write_all(fd, own, h.n * sizeof *own) &&
		  write_all(fd, names, nnames);
	if (close(fd) != 0 || !ok || rename(tmp, path) != 0)
		unlink(tmp);
	free(own);
}
