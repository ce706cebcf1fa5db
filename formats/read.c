/* read.c - load an input and hand it to the reader that recognises it */
#include "read.h"
#include "error.h"
#include "raw-read.h"
#include "gdb-read.h"
#include "folded-read.h"
#include "perf-read.h"
#include "gperf-read.h"
#include "legacy-read.h"
#include "gunzip.h"
#include "pprof-read.h"
#include "raw.h"
#include "units.h"
#include "util.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The detectors look at this many bytes at most: a stream is judged on
 * its first ones, before the rest is read. */
#define DETECT_SPAN 65536

enum format {
	FORMAT_NONE, FORMAT_RAW, FORMAT_GDB, FORMAT_GZIP, FORMAT_GPERF, FORMAT_PERF, FORMAT_FOLDED,
	FORMAT_PPROF, FORMAT_PERF_DATA, FORMAT_LEGACY,
};

static enum format detect(const unsigned char *buf, size_t len)
{
	if (raw_detect(buf, len))
		return FORMAT_RAW;
	if (gdb_detect(buf, len))
		return FORMAT_GDB;
	if (pv_gzip_detect(buf, len))
		return FORMAT_GZIP;
	if (gperf_detect(buf, len))
		return FORMAT_GPERF;
	if (perf_data_detect(buf, len))
		return FORMAT_PERF_DATA;
	/* perf script text, whose header may be a number alone (-F
	 * period,ip,sym) with a call chain of tab-indented frames after it,
	 * as no legacy profile has; before folded stacks: a header of a few
	 * fields ends in a number */
	if (perf_detect(buf, len))
		return FORMAT_PERF;
	/* pprof's legacy text profiles, before what a line ending in a
	 * number would pass for */
	if (legacy_detect(buf, len))
		return FORMAT_LEGACY;
	if (folded_detect(buf, len))
		return FORMAT_FOLDED;
	if (pprof_detect(buf, len))
		return FORMAT_PPROF;
	return FORMAT_NONE;
}

static int not_a_profile(const char *name)
{
	return pv_error("'%s' is not a profile profview can read (see profview-formats(5) for those it reads)",
			name);
}

/* what: "input", doing: "reading", or the like. */
static int too_large(const char *name, const char *what, const char *doing, size_t limit,
		     const char *option)
{
	char sz[32];

	return pv_error("'%s': %s is larger than %s; stopped %s (raise the limit with %s)", name,
			what, pv_size_str(sz, sizeof sz, limit), doing, option);
}

struct input {
	unsigned char *buf;
	size_t len;
	bool mapped;           /* buf is a mapping of the file, not malloc'ed */
};

/* Files smaller than this are read: a mapping saves nothing there. */
#define MAP_MIN ((off_t)8 << 20)

/* Read a stream (standard input, a pipe, a device) into memory.  Its
 * first bytes are judged before the rest is read, so that what is no
 * profile at all (/dev/zero) is refused at once, and reading stops past
 * limit bytes (an endless pipe). */
static int slurp(int fd, struct input *in, const char *name, size_t limit, size_t hint)
{
	size_t cap = hint > (1 << 16) ? hint : 1 << 16, room = limit < SIZE_MAX ? limit + 1 : SIZE_MAX;
	bool judged = false;

	in->buf = malloc(cap);
	if (!in->buf)
		return pv_oom();
	for (;;) {
		ssize_t n;
		if (!judged && in->len > DETECT_SPAN) {
			if (detect(in->buf, in->len) == FORMAT_NONE)
				return not_a_profile(name);
			judged = true;
		}
		if (in->len >= room)
			return too_large(name, "input", "reading", limit, "--max-input");
		if (in->len == cap) {
			size_t ncap = cap > room / 2 ? room : cap * 2;
			unsigned char *q = realloc(in->buf, ncap);
			if (!q)
				return pv_oom();
			in->buf = q;
			cap = ncap;
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

/* Is the regular file fd of size bytes a raw trace that nothing will
 * write or cut any more: one that starts as a raw trace and whose last
 * bytes are its end record?  The collector writes the end record last
 * and cuts a trace only where zeros follow its records (raw.h), so such
 * a file keeps its size. */
static bool finished_trace(int fd, off_t size)
{
	unsigned char magic[RAW_MAGIC_LEN];
	struct raw_rec tail;

	if (size < MAP_MIN ||
	    pread(fd, magic, sizeof magic, 0) != (ssize_t)sizeof magic ||
	    !raw_detect(magic, sizeof magic) ||
	    pread(fd, &tail, sizeof tail, size - (off_t)sizeof(struct raw_end)) != (ssize_t)sizeof tail)
		return false;
	if (tail.type == RAW_END && tail.size == sizeof(struct raw_end))
		return true;
	/* a run of several processes ends in its index's footer (raw.h) */
	return pread(fd, magic, sizeof magic, size - (off_t)sizeof magic) == (ssize_t)sizeof magic &&
	       memcmp(magic, RAW_RUN_MAGIC, RAW_MAGIC_LEN) == 0;
}

/* A regular file is read whole, whatever its size; anything else at most
 * limit bytes.  A finished raw trace is mapped instead (finished_trace),
 * anything else not: a trace can be read while its program runs (or
 * finishes), and the collector cuts the file to its end when the program
 * exits, which would turn a read of a mapped page past the new end into
 * SIGBUS. */
static int load(const char *path, struct input *in, size_t limit)
{
	struct stat st;
	int fd, ret = 0;

	if (strcmp(path, "-") == 0)
		return slurp(STDIN_FILENO, in, "standard input", limit, 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return pv_error("cannot open '%s': %s", path, strerror(errno));
	if (fstat(fd, &st) < 0) {
		ret = pv_error("cannot stat '%s': %s", path, strerror(errno));
	} else if (S_ISDIR(st.st_mode)) {
		ret = pv_error("'%s' is a directory, not a profile", path);
	} else if (S_ISREG(st.st_mode) && (uint64_t)st.st_size < SIZE_MAX &&
		   finished_trace(fd, st.st_size) &&
		   (in->buf = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) !=
			   MAP_FAILED) {
		in->len = (size_t)st.st_size;
		in->mapped = true;
	} else if (S_ISREG(st.st_mode)) {
		in->buf = NULL;
		/* one more byte than its size, to see the end at once */
		ret = slurp(fd, in, path, SIZE_MAX,
			    (uint64_t)st.st_size < SIZE_MAX - 1 ? (size_t)st.st_size + 1 : SIZE_MAX);
	} else {
		ret = slurp(fd, in, path, limit, 0);
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
 * around any of the other binary and text formats.  The start is
 * decompressed and judged first, so that a gzip bomb of what is no profile
 * stops there; the rest stops past limit bytes. */
static struct pv_profile *read_gzip(const unsigned char *buf, size_t len, const char *name, size_t limit,
				    size_t max_memory)
{
	/* --max-memory bounds the decompressed data too: the input it is
	 * read from is all the input --max-input speaks of. */
	bool memory = max_memory && max_memory < limit;
	unsigned char *d;
	size_t n;
	bool more;
	enum format f;
	struct pv_profile *p = NULL;

	if (pv_gunzip(buf, len, name, DETECT_SPAN + 1, &more, &d, &n) < 0)
		return NULL;
	if (n == 0) {
		pv_error("'%s' is empty once decompressed: not a profile", name);
		goto out;
	}
	f = detect(d, n);
	if (f != FORMAT_GPERF && f != FORMAT_PERF && f != FORMAT_FOLDED && f != FORMAT_PPROF &&
	    f != FORMAT_LEGACY) {
		pv_error("'%s' is gzip-compressed, but what it holds is not a profile profview can read",
			 name);
		goto out;
	}
	if (memory)
		limit = max_memory;
	if (more) {
		free(d);
		if (pv_gunzip(buf, len, name, limit, &more, &d, &n) < 0)
			return NULL;
		if (more) {
			too_large(name, "decompressed data", "decompressing", limit,
				  memory ? "--max-memory" : "--max-input");
			goto out;
		}
	}
	/* the decompressed data is input, not the profile's */
	pv_budget_rebase();
	if (f == FORMAT_GPERF)
		p = gperf_read(d, n, name);
	else if (f == FORMAT_PERF)
		p = perf_read(d, n, name);
	else if (f == FORMAT_FOLDED)
		p = folded_read(d, n, name);
	else if (f == FORMAT_LEGACY)
		p = legacy_read(d, n, name);
	else
		p = pprof_read(d, n, name, true);
out:
	free(d);
	return p;
}

/* The profile of the input buf, read whole (path: as given, for a hint in
 * a message). */
static struct pv_profile *read_input(const struct input *in, const char *name, const char *path,
				     const struct pv_read_options *opt)
{
	size_t limit = opt && opt->max_input ? opt->max_input : PV_READ_MAX_INPUT;
	struct pv_profile *p = NULL;
	char who[512];

	if (in->len == 0) {
		pv_error("'%s' is empty: not a profile", name);
		return NULL;
	}
	/* What the profile may take: as much as the limit, or the input's
	 * size when larger (a regular file is not limited), and a little
	 * more, so that no input costs more than its size allows. */
	snprintf(who, sizeof who, "'%s': the profile", name);
	if (opt && opt->max_memory)
		pv_budget_set(who, "reading", opt->max_memory < SIZE_MAX ? opt->max_memory : 0);
	else if (limit < SIZE_MAX)
		pv_budget_set(who, "reading", pv_read_budget(in->len, limit));
	switch (detect(in->buf, in->len)) {
	case FORMAT_RAW:
		p = raw_read_run(in->buf, in->len, name, opt ? opt->unwinder : NULL, in->mapped);
		break;
	case FORMAT_GDB:
		p = gdb_read(in->buf, in->len, name);
		break;
	case FORMAT_GZIP:
		p = read_gzip(in->buf, in->len, name, limit, opt ? opt->max_memory : 0);
		break;
	case FORMAT_GPERF:
		p = gperf_read(in->buf, in->len, name);
		break;
	case FORMAT_PERF:
		p = perf_read(in->buf, in->len, name);
		break;
	case FORMAT_FOLDED:
		p = folded_read(in->buf, in->len, name);
		break;
	case FORMAT_LEGACY:
		p = legacy_read(in->buf, in->len, name);
		break;
	case FORMAT_PERF_DATA:
		pv_error("'%s' is a perf.data file: give profview its text, perf script -i %s | profview -",
			 name, strcmp(path, "-") == 0 ? "FILE" : path);
		break;
	case FORMAT_PPROF:
		p = pprof_read(in->buf, in->len, name, false);
		break;
	default:
		not_a_profile(name);
	}
	pv_budget_set(NULL, NULL, 0);
	if (p && p->stacks_cut)
		pv_warn("'%s': %" PRIu64 " stack%s deeper than %d frames (inlined calls counted) cut to %s innermost",
			name, p->stacks_cut, p->stacks_cut == 1 ? "" : "s", PV_MAX_DEPTH,
			p->stacks_cut == 1 ? "its" : "their");
	if (p && pv_profile_validate(p, name) < 0) {
		pv_profile_free(p);
		p = NULL;
	}
	return p;
}

size_t pv_read_budget(size_t len, size_t max_input)
{
	size_t limit = max_input ? max_input : PV_READ_MAX_INPUT;

	if (limit == SIZE_MAX)
		return 0;
	limit = len > limit ? len : limit;
	return limit < SIZE_MAX - PV_READ_BUDGET_EXTRA ? limit + PV_READ_BUDGET_EXTRA : 0;
}

struct pv_profile *pv_read_file(const char *path, const struct pv_read_options *opt)
{
	struct input in = { 0 };
	struct pv_profile *p = NULL;
	const char *name = strcmp(path, "-") == 0 ? "standard input" : path;
	size_t limit = opt && opt->max_input ? opt->max_input : PV_READ_MAX_INPUT;

	if (load(path, &in, limit) == 0)
		p = read_input(&in, name, path, opt);
	unload(&in);
	return p;
}

struct pv_profile *pv_read_buffer(const unsigned char *buf, size_t len, const char *name,
				  const struct pv_read_options *opt)
{
	struct input in = { (unsigned char *)buf, len, false };

	return read_input(&in, name, name, opt);
}
