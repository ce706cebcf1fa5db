/* collect-runseg.c - --split for every process of the run (see
 * collect-runseg.h)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect-procs.h"
#include "collect-runseg.h"
#include "cli.h"
#include "collect-traces.h"
#include "collect.h"
#include "outfile.h"
#include "raw.h"

struct collect_kid {
	char name[PATH_MAX];
	struct seg *seg;
	int ended;
};

struct collect_runseg {
	struct seg *root;
	const char *shown;
	pid_t pid;
	uint64_t t0;              /* collect-timer's start (collect_find_more) */
	uint64_t split_ns;
	unsigned keep;
	struct collect_trace *found; /* [0] the program's, then the others' */
	size_t nfound, capfound;
	struct collect_kid *kids;
	size_t nkids, capkids;
	uint64_t joined;          /* segments 1..joined are joined */
	int failed;               /* a join failed: said once */
};

struct collect_runseg *collect_runseg_new(struct seg *root, const char *shown, pid_t pid,
						 uint64_t t0, double split, long keep)
{
	struct collect_runseg *rs = calloc(1, sizeof(*rs));

	if (rs == NULL)
		return NULL;
	rs->found = calloc(1, sizeof(*rs->found));
	if (rs->found == NULL) {
		free(rs);
		return NULL;
	}
	rs->root = root;
	rs->shown = shown;
	rs->pid = pid;
	rs->t0 = t0;
	rs->split_ns = (uint64_t)(split * 1e9);
	rs->keep = (unsigned)keep;
	rs->nfound = rs->capfound = 1;
	snprintf(rs->found[0].name, sizeof(rs->found[0].name), "%s", shown);
	rs->found[0].pid = (uint32_t)pid;
	return rs;
}

/* Starts a seg for every trace of the run that has none yet. */
static void collect_runseg_scan(struct collect_runseg *rs)
{
	uint64_t t0, n;

	if (!seg_where(rs->root, &t0, &n))
		return; /* the program's trace comes first */
	collect_find_more(rs->shown, rs->pid, rs->t0, &rs->found, &rs->nfound, &rs->capfound);
	for (size_t k = 1; k < rs->nfound; k++) {
		struct collect_kid *kid;
		int known = 0;

		for (size_t j = 0; j < rs->nkids && !known; j++)
			known = strcmp(rs->kids[j].name, rs->found[k].name) == 0;
		if (known)
			continue;
		if (rs->nkids == rs->capkids) {
			size_t c = rs->capkids ? rs->capkids * 2 : 16;
			struct collect_kid *v = realloc(rs->kids, c * sizeof(*v));

			if (v == NULL)
				return;
			rs->kids = v;
			rs->capkids = c;
		}
		kid = &rs->kids[rs->nkids];
		memset(kid, 0, sizeof(*kid));
		snprintf(kid->name, sizeof(kid->name), "%s", rs->found[k].name);
		kid->seg = seg_new(kid->name, rs->split_ns, rs->keep, cli_msg);
		if (kid->seg == NULL)
			return;
		/* the trace is joined whole into the run's file at the end */
		seg_align(kid->seg, t0, rs->joined + 1, 0);
		rs->nkids++;
	}
}

/* Joins segment m of every process into the program's segment m.
 * Returns 0, or -1 (the segments are left as they are). */
static int collect_runseg_join(struct collect_runseg *rs, uint64_t m)
{
	char name[PATH_MAX + 32], tmp[PATH_MAX + 48], part[PATH_MAX + 32];
	struct raw_run_part *idx;
	struct raw_run_footer foot = { 0 };
	size_t np = 0, cap = rs->nkids + 1;
	uint64_t off = 0;
	struct stat sb;
	int fd, ok = 1;

	seg_name(rs->root, m, name, sizeof(name));
	for (size_t j = 0; j < rs->nkids; j++)
		if (stat(seg_name(rs->kids[j].seg, m, part, sizeof(part)), &sb) == 0)
			np++;
	if (np == 0)
		return 0; /* the program's alone: as it is */
	idx = calloc(cap, sizeof(*idx));
	if (idx == NULL)
		return -1;
	snprintf(tmp, sizeof(tmp), "%s.joining", name);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, PV_OUTFILE_TRACE_MODE);
	if (fd < 0) {
		free(idx);
		return -1;
	}
	np = 0;
	for (size_t j = 0; j <= rs->nkids && ok; j++) {
		struct collect_trace t;

		if (j == 0)
			snprintf(part, sizeof(part), "%s", name);
		else
			seg_name(rs->kids[j - 1].seg, m, part, sizeof(part));
		if (stat(part, &sb) != 0 || collect_header(part, &t) != 0)
			continue;
		off = (off + RAW_RUN_ALIGN - 1) / RAW_RUN_ALIGN * RAW_RUN_ALIGN;
		ok = collect_copy(fd, off, part, (uint64_t)sb.st_size) == 0;
		idx[np].offset = off;
		idx[np].length = (uint64_t)sb.st_size;
		idx[np].pid = t.pid;
		np++;
		off += (uint64_t)sb.st_size;
	}
	off = (off + 7) / 8 * 8;
	foot.index_offset = off;
	foot.nparts = (uint32_t)np;
	memcpy(foot.magic, RAW_RUN_MAGIC, RAW_MAGIC_LEN);
	ok = ok && np > 0 &&
	     pwrite(fd, idx, np * sizeof(*idx), (off_t)off) == (ssize_t)(np * sizeof(*idx)) &&
	     pwrite(fd, &foot, sizeof(foot), (off_t)(off + np * sizeof(*idx))) == (ssize_t)sizeof(foot);
	ok = close(fd) == 0 && ok;
	free(idx);
	if (!ok || rename(tmp, name) != 0) {
		unlink(tmp);
		return -1;
	}
	for (size_t j = 0; j < rs->nkids; j++)
		unlink(seg_name(rs->kids[j].seg, m, part, sizeof(part)));
	return 0;
}

/* Joins the windows every process is past (all, with force). */
static void collect_runseg_joins(struct collect_runseg *rs, uint64_t now, int force)
{
	struct seg_summary sum;
	uint64_t t0, n, last = 0;

	if (!seg_where(rs->root, &t0, &n))
		return;
	seg_summary(rs->root, &sum);
	last = sum.ended ? sum.last : n - 1;
	for (size_t j = 0; j < rs->nkids; j++) {
		uint64_t kt0, kn;

		if (!seg_where(rs->kids[j].seg, &kt0, &kn))
			continue;
		seg_summary(rs->kids[j].seg, &sum);
		if (force || sum.ended) {
			if (sum.last > last)
				last = sum.last;
		} else if (kn - 1 < last) {
			last = kn - 1;
		}
	}
	/* a process that started late in a window is found a poll or two
	 * after its start */
	while (rs->joined < last &&
	       (force || now >= t0 + (rs->joined + 1) * rs->split_ns + 5 * COLLECT_POLL_NS)) {
		if (collect_runseg_join(rs, rs->joined + 1) != 0 && !rs->failed) {
			rs->failed = 1;
			cli_msg("cannot join the processes' segments %" PRIu64 ": %s; they are "
				    "left apart", rs->joined + 1, strerror(errno));
		}
		rs->joined++;
	}
}

void collect_runseg_poll(struct collect_runseg *rs, uint64_t now)
{
	collect_runseg_scan(rs);
	for (size_t j = 0; j < rs->nkids; j++)
		if (!rs->kids[j].ended)
			rs->kids[j].ended = seg_poll(rs->kids[j].seg, now);
	collect_runseg_joins(rs, now, 0);
}

/* Every process has ended: the rest of every trace, and every window. */
void collect_runseg_finish(struct collect_runseg *rs)
{
	collect_runseg_scan(rs);
	for (size_t j = 0; j < rs->nkids; j++)
		seg_finish(rs->kids[j].seg);
	collect_runseg_joins(rs, 0, 1);
}

void collect_runseg_free(struct collect_runseg *rs)
{
	if (rs == NULL)
		return;
	for (size_t j = 0; j < rs->nkids; j++)
		seg_free(rs->kids[j].seg);
	free(rs->kids);
	free(rs->found);
	free(rs);
}

/* The parts of the run file or trace at fd (size bytes) into *idx (one
 * part, the trace, when it is not a run), and where they end.  Returns the
 * number of parts, or 0 when it is neither. */
static size_t collect_seg_parts(int fd, const char *path, uint64_t size, struct raw_run_part **idx,
				uint64_t *end)
{
	struct raw_run_footer foot;
	struct collect_trace t;
	size_t np;

	*idx = NULL;
	if (size >= sizeof(foot) && pread(fd, &foot, sizeof(foot), (off_t)(size - sizeof(foot))) ==
	    (ssize_t)sizeof(foot) && memcmp(foot.magic, RAW_RUN_MAGIC, RAW_MAGIC_LEN) == 0) {
		np = foot.nparts;
		if (np == 0 || np > RAW_RUN_MAX_PARTS || foot.index_offset % 8 ||
		    foot.index_offset + np * sizeof(**idx) + sizeof(foot) != size)
			return 0;
		*idx = calloc(np, sizeof(**idx));
		if (*idx == NULL || pread(fd, *idx, np * sizeof(**idx), (off_t)foot.index_offset) !=
		    (ssize_t)(np * sizeof(**idx))) {
			free(*idx);
			*idx = NULL;
			return 0;
		}
		*end = foot.others_offset ? foot.others_offset : foot.index_offset;
		return np;
	}
	if (collect_header(path, &t) != 0 || (*idx = calloc(1, sizeof(**idx))) == NULL)
		return 0;
	(*idx)[0].length = size;
	(*idx)[0].pid = t.pid;
	*end = size;
	return 1;
}

int collect_seg_others(const char *path, const struct collect_others *o, size_t nprocesses)
{
	char tmp[PATH_MAX + 16];
	struct raw_run_footer foot = { 0 };
	struct raw_run_part *idx = NULL;
	struct stat sb;
	uint64_t end = 0, off;
	int64_t w;
	size_t np = 0;
	int in, fd = -1, ok = 0;

	in = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (in >= 0 && fstat(in, &sb) == 0 && S_ISREG(sb.st_mode))
		np = collect_seg_parts(in, path, (uint64_t)sb.st_size, &idx, &end);
	if (in >= 0)
		close(in);
	if (np == 0)
		goto out;
	snprintf(tmp, sizeof(tmp), "%s.others", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, PV_OUTFILE_TRACE_MODE);
	if (fd < 0 || collect_copy(fd, 0, path, end) != 0)
		goto out;
	off = (end + 7) / 8 * 8;
	w = collect_others_write(fd, off, o);
	if (w < 0)
		goto out;
	foot.others_offset = off;
	foot.index_offset = off + (uint64_t)w;
	foot.nparts = (uint32_t)np;
	foot.nprocesses = nprocesses < UINT32_MAX ? (uint32_t)nprocesses : UINT32_MAX;
	memcpy(foot.magic, RAW_RUN_MAGIC, RAW_MAGIC_LEN);
	ok = pwrite(fd, idx, np * sizeof(*idx), (off_t)foot.index_offset) == (ssize_t)(np * sizeof(*idx)) &&
	     pwrite(fd, &foot, sizeof(foot), (off_t)(foot.index_offset + np * sizeof(*idx))) ==
		     (ssize_t)sizeof(foot);
	ok = close(fd) == 0 && ok;
	fd = -1;
	ok = ok && rename(tmp, path) == 0;
	if (!ok)
		unlink(tmp);
out:
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	free(idx);
	return ok ? 0 : -1;
}
