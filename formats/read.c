/* read.c - load an input and hand it to the reader that recognises it */
#include "read.h"
#include "error.h"
#include "raw-read.h"
#include "gdb-read.h"
#include "folded-read.h"
#include "gperf-read.h"
#include "gunzip.h"
#include "pprof-read.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct input {
	unsigned char *buf;
	size_t len;
	bool mapped;
};

static int slurp(int fd, struct input *in, const char *name)
{
	size_t cap = 1 << 16;

	in->buf = malloc(cap);
	if (!in->buf)
		return pv_oom();
	for (;;) {
		ssize_t n;
		if (in->len == cap) {
			unsigned char *q = realloc(in->buf, cap * 2);
			if (!q)
				return pv_oom();
			in->buf = q;
			cap *= 2;
		}
		n = read(fd, in->buf + in->len, cap - in->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return pv_error("cannot read '%s': %s", name, strerror(errno));
		if (n == 0)
			return 0;
		in->len += (size_t)n;
	}
}

static int load(const char *path, struct input *in)
{
	struct stat st;
	int fd, ret = 0;

	if (strcmp(path, "-") == 0)
		return slurp(STDIN_FILENO, in, "standard input");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pv_error("cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		ret = pv_error("cannot stat '%s': %s", path, strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		ret = pv_error("'%s' is a directory, not a profile", path);
	} else if (S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			ret = slurp(fd, in, path);
		} else {
			in->buf = m;
			in->len = (size_t)st.st_size;
			in->mapped = true;
		}
	} else {
		ret = slurp(fd, in, path);
	}
	close(fd);
	return ret;
}

static void unload(struct input *in)
{
	if (in->mapped)
		munmap(in->buf, in->len);
	else
		free(in->buf);
}

/* Compressed input: gzip around a profile.proto (as pprof writes it), or
 * around any of the other binary and text formats. */
static struct pv_profile *read_gzip(const unsigned char *buf, size_t len, const char *name)
{
	unsigned char *d;
	size_t n;
	struct pv_profile *p = NULL;

	if (pv_gunzip(buf, len, name, (size_t)1 << 32, &d, &n) < 0)
		return NULL;
	if (n == 0)
		pv_error("'%s' is empty once decompressed: not a profile", name);
	else if (gperf_detect(d, n))
		p = gperf_read(d, n, name);
	else if (folded_detect(d, n))
		p = folded_read(d, n, name);
	else if (pprof_detect(d, n))
		p = pprof_read(d, n, name, true);
	else
		pv_error("'%s' is gzip-compressed, but what it holds is not a profile profview can read",
			 name);
	free(d);
	return p;
}

struct pv_profile *pv_read_file(const char *path, const struct pv_read_options *opt)
{
	struct input in = { 0 };
	struct pv_profile *p = NULL;
	const char *name = strcmp(path, "-") == 0 ? "standard input" : path;

	if (load(path, &in) < 0)
		goto out;
	if (in.len == 0) {
		pv_error("'%s' is empty: not a profile", name);
		goto out;
	}
	if (raw_detect(in.buf, in.len))
		p = raw_read(in.buf, in.len, name, opt ? opt->unwinder : NULL);
	else if (gdb_detect(in.buf, in.len))
		p = gdb_read(in.buf, in.len, name);
	else if (pv_gzip_detect(in.buf, in.len))
		p = read_gzip(in.buf, in.len, name);
	else if (gperf_detect(in.buf, in.len))
		p = gperf_read(in.buf, in.len, name);
	else if (folded_detect(in.buf, in.len))
		p = folded_read(in.buf, in.len, name);
	else if (pprof_detect(in.buf, in.len))
		p = pprof_read(in.buf, in.len, name, false);
	else
		pv_error("'%s' is not a profile profview can read (see profview-formats(5) for those it reads)",
			 name);
	if (p && pv_profile_validate(p, name) < 0) {
		pv_profile_free(p);
		p = NULL;
	}
out:
	unload(&in);
	return p;
}
