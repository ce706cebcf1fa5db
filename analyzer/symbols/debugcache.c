/* debugcache.c - decompressed copies of separate debug files, kept (see
 * debugcache.h)
 */
#include "debugcache.h"
#include "outfile.h"
#include "checksum.h"
#include "debugtrim.h"
#include "kcache.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* To be changed with anything of the copy debugfile.c makes (the sections
 * it leaves out, the trim): a file of another version is then made anew. */
#define MAGIC "PVDBG1"
#define CHUNK (256 * 1024)
/* The most of the original's .debug_aranges kept with a copy. */
#define MAX_ARANGES (16u << 20)

/* The end of a file: the copy, the aranges, then this. */
struct tail {
	char magic[8];
	uint64_t copy_size;     /* the copy's bytes, from the file's start */
	uint64_t aranges_size;  /* the original's .debug_aranges, after the copy */
	uint64_t last_unit;     /* the offset of the copy's last unit, or DEBUGCACHE_WHOLE */
	uint64_t reserved;
	unsigned char id[64];   /* the build-id */
	uint32_t id_len;
	uint32_t sum;           /* CRC-32 of every byte of the file before this */
};

_Static_assert(sizeof(struct tail) == 112, "the tail has no padding");

/* The folder's path into buf (*dirlen bytes) and the file's of build-id
 * id after it; false when caching is off or there is no place. */
static bool cache_path(const unsigned char *id, size_t len, char *buf, size_t size,
		       size_t *dirlen)
{
	static const char digits[] = "0123456789abcdef";
	size_t o;

	if (len == 0 || len > sizeof ((struct tail *)0)->id || !kcache_folder(buf, size, dirlen) ||
	    *dirlen + sizeof "/debug-" + 2 * len > size)
		return false;
	o = *dirlen + (size_t)snprintf(buf + *dirlen, size - *dirlen, "/debug-");
	for (size_t i = 0; i < len; i++) {
		buf[o++] = digits[id[i] >> 4];
		buf[o++] = digits[id[i] & 15];
	}
	buf[o] = '\0';
	return true;
}

/* The CRC-32 of fd's first len bytes into *sum; false when they cannot
 * be read. */
static bool file_sum(int fd, uint64_t len, uint32_t *sum)
{
	unsigned char *buf = malloc(CHUNK);
	uint32_t a = 0;
	uint64_t at = 0;

	if (!buf)
		return false;
	while (at < len) {
		size_t n = len - at < CHUNK ? (size_t)(len - at) : CHUNK;
		if (!pv_pread_all(fd, buf, n, at))
			break;
		a = checksum_crc32(a, buf, n);
		at += n;
	}
	free(buf);
	*sum = a;
	return at == len;
}

/* Does the copy of tail t in fd hold the units addrs[0..n) are in? */
static bool covers(int fd, const struct tail *t, const uint64_t *addrs, size_t n)
{
	unsigned char *aranges;
	uint64_t need;
	bool ok;

	if (t->last_unit == DEBUGCACHE_WHOLE)
		return true;
	if (!addrs || !n || t->aranges_size == 0)
		return false;
	aranges = malloc(t->aranges_size);
	ok = aranges && pv_pread_all(fd, aranges, t->aranges_size, t->copy_size) &&
	     debugtrim_last_unit(aranges, t->aranges_size, addrs, n, &need) && need <= t->last_unit;
	free(aranges);
	return ok;
}

int debugcache_open(const unsigned char *id, size_t len, const uint64_t *addrs, size_t n)
{
	char path[PATH_MAX];
	struct stat st;
	struct tail t;
	size_t dirlen;
	uint32_t sum;
	uint64_t size;
	int fd;

	if (!cache_path(id, len, path, sizeof path, &dirlen))
		return -1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) || st.st_size < (off_t)sizeof t)
		goto no;
	size = (uint64_t)st.st_size - sizeof t;
	if (!pv_pread_all(fd, &t, sizeof t, size) || memcmp(t.magic, MAGIC, sizeof MAGIC) != 0 ||
	    t.id_len != len || memcmp(t.id, id, len) != 0 || t.aranges_size > MAX_ARANGES ||
	    t.copy_size > size || t.aranges_size != size - t.copy_size)
		goto no;
	if (!covers(fd, &t, addrs, n) || !file_sum(fd, (uint64_t)st.st_size - sizeof t.sum, &sum) ||
	    sum != t.sum)
		goto no;
	return fd;
no:
	close(fd);
	return -1;
}

int debugcache_create(const unsigned char *id, size_t len, char **tmp)
{
	char path[PATH_MAX];
	size_t dirlen;
	int fd;

	*tmp = NULL;
	if (!cache_path(id, len, path, sizeof path, &dirlen))
		return -1;
	fd = kcache_temp(path, dirlen, sizeof path, "debug");
	if (fd < 0)
		return -1;
	*tmp = strdup(path);
	if (!*tmp) {
		unlink(path);
		close(fd);
		return -1;
	}
	return fd;
}

void debugcache_commit(int fd, char *tmp, const unsigned char *id, size_t len, uint64_t size,
		       uint32_t sum, uint64_t last_unit, const unsigned char *aranges,
		       size_t naranges)
{
	struct tail t = { MAGIC, size, naranges, last_unit, 0, { 0 }, (uint32_t)len, 0 };
	char path[PATH_MAX];
	size_t dirlen;
	uint64_t end = size + naranges + offsetof(struct tail, sum);

	if (!cache_path(id, len, path, sizeof path, &dirlen) || naranges > MAX_ARANGES ||
	    (naranges && !pv_pwrite_all(fd, aranges, naranges, size)))
		goto fail;
	memcpy(t.id, id, len);
	/* the copy's sum continued, not read back */
	t.sum = checksum_crc32(checksum_crc32(sum, aranges, naranges), (const unsigned char *)&t,
			       offsetof(struct tail, sum));
	if (!pv_pwrite_all(fd, &t, offsetof(struct tail, sum), size + naranges) ||
	    !pv_pwrite_all(fd, &t.sum, sizeof t.sum, end) || rename(tmp, path) != 0)
		goto fail;
	free(tmp);
	return;
fail:
	unlink(tmp);
	free(tmp);
}
