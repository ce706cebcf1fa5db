/* collect-traces.c - the traces of a run, read back and joined (see
 * collect-traces.h)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "collect-env.h"
#include "collect-procs.h"
#include "collect-pynames.h"
#include "cli.h"
#include "collect-traces.h"
#include "collect.h"
#include "escape.h"
#include "outfile.h"
#include "raw-iter.h"
#include "raw-tail.h"
#include "raw.h"
#include "raw-py.h"

/* Are the n bytes at p all zero?  A word at a time: the tails of the
 * traces of a run of many short processes are megabytes. */
static int collect_all_zero(const unsigned char *p, size_t n)
{
	uint64_t acc = 0, w;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		acc |= w;
	}
	for (; i < n; i++)
		acc |= p[i];
	return acc == 0;
}

/* Are bytes [from, to) of fd all zero?  -1 when they cannot be read. */
static int collect_zeros(int fd, uint64_t from, uint64_t to)
{
	unsigned char buf[65536];
	uint64_t data_end = from;

	while (from < to) {
		size_t n;
		ssize_t got;

		if (from >= data_end) {
			/* The holes (what was allocated and never written:
			 * most of the file of a process that ran another
			 * program or ended early) are zeros, not read. */
			off_t d = lseek(fd, (off_t)from, SEEK_DATA), h;

			if (d < 0 && errno == ENXIO)
				return 1;
			if (d >= 0 && (uint64_t)d > from)
				from = (uint64_t)d;
			if (from >= to)
				return 1;
			h = d >= 0 ? lseek(fd, (off_t)from, SEEK_HOLE) : -1;
			data_end = h > (off_t)from ? (uint64_t)h : to;
		}
		n = to - from < sizeof(buf) ? (size_t)(to - from) : sizeof(buf);
		if (n > data_end - from)
			n = (size_t)(data_end - from);
		got = pread(fd, buf, n, (off_t)from);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		if (!collect_all_zero(buf, (size_t)got))
			return 0;
		from += (uint64_t)got;
	}
	return 1;
}

/* Reads the trace at path, a piece at a time (raw-tail.h, so that memory
 * stays flat whatever its size): counts, and cuts the zeros after the last
 * record of an unfinished trace.  Returns 0, or -1 if it cannot be read. */
void collect_ends_add(struct collect_ends *e, uint32_t pid, uint32_t status, uint64_t cpu_ns)
{
	if (e->n == e->cap) {
		size_t c = e->cap ? e->cap * 2 : 16;
		struct collect_end *nv = realloc(e->v, c * sizeof(*nv));

		if (nv == NULL)
			return;
		e->v = nv;
		e->cap = c;
	}
	e->v[e->n++] = (struct collect_end){ .pid = pid, .status = status, .cpu_ns = cpu_ns };
}

/* The records of the other processes: the programs run (the image's
 * own last exec in st) and the children waited for. */
static void collect_scan_procs(const struct raw_record *rec, uint32_t pid, struct collect_stats *st,
			       struct collect_seen *seen)
{
	if (rec->type == RAW_EXEC) {
		struct raw_exec e;
		struct collect_exec x = { 0 };
		size_t n;

		memcpy(&e, rec->data, sizeof(e));
		n = e.path_len < sizeof(x.path) - 1 ? e.path_len : sizeof(x.path) - 1;
		if (n > rec->size - sizeof(e))
			n = rec->size - sizeof(e); /* (the iterator checks; a copy may not) */
		memcpy(x.path, (const char *)rec->data + sizeof(e), n);
		x.path[n] = '\0';
		x.pid = e.pid;
		x.why = e.why;
		x.time_ns = e.time_ns;
		if (e.pid == pid) {
			st->exec = x;
			st->exec_seen = 1;
		} else if (seen != NULL && seen->nexecs < seen->cap_execs) {
			seen->execs[seen->nexecs++] = x;
		} else if (seen != NULL) {
			size_t c = seen->cap_execs ? seen->cap_execs * 2 : 16;
			struct collect_exec *nv = realloc(seen->execs, c * sizeof(*nv));

			if (nv != NULL) {
				seen->execs = nv;
				seen->cap_execs = c;
				seen->execs[seen->nexecs++] = x;
			}
		}
	} else if (rec->type == RAW_CHILD && seen != NULL) {
		struct raw_child c;

		memcpy(&c, rec->data, sizeof(c));
		collect_ends_add(&seen->ends, c.pid, c.status, c.cpu_ns);
	}
}

void collect_scan_records(const unsigned char *buf, size_t len, uint32_t pid,
			  struct collect_stats *st, struct collect_seen *seen)
{
	size_t off = 0;

	while (len - off >= sizeof(struct raw_rec)) {
		struct raw_rec h;
		struct raw_record rec;

		memcpy(&h, buf + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > len - off)
			break;
		rec.data = buf + off;
		rec.off = off;
		rec.type = h.type;
		rec.size = h.size;
		if ((h.type == RAW_EXEC && h.size >= sizeof(struct raw_exec)) ||
		    (h.type == RAW_CHILD && h.size >= sizeof(struct raw_child)))
			collect_scan_procs(&rec, pid, st, seen);
		off += h.size;
	}
}

int collect_scan(const char *path, struct collect_stats *st, struct collect_seen *seen)
{
	/* by name again: never through a link planted since */
	return collect_scan_fd(open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC), st, seen);
}

int collect_scan_chunk(const struct collect_trace *t, struct collect_stats *st,
		       struct collect_seen *seen)
{
	/* in memory: what collect_scan_fd may cut is a copy */
	int fd = memfd_create("profview-short", MFD_CLOEXEC);

	if (fd >= 0 && collect_copy_from(fd, 0, t->name, t->chunk_off, t->size) != 0) {
		close(fd);
		fd = -1;
	}
	return collect_scan_fd(fd, st, seen);
}

int collect_scan_fd(int fd, struct collect_stats *st, struct collect_seen *seen)
{
	unsigned char head_buf[16384];
	struct raw_cpu *acct = NULL;
	int oom = 0, next;
	const struct raw_header *h;
	struct raw_head head;
	enum raw_head_status hs;
	struct raw_tail tail;
	struct raw_record rec;
	struct stat sb;
	uint64_t off, size;
	ssize_t got;

	memset(st, 0, sizeof(*st));
	if (fd < 0 || fstat(fd, &sb) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	size = (uint64_t)sb.st_size;
	/* No read ahead: past the records of most traces are bytes never
	 * written, which would come in as pages of zeros, and then count as
	 * data that collect_zeros reads, and so on to the end of the file. */
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	got = pread(fd, head_buf, sizeof(head_buf), 0);
	if (got < (ssize_t)sizeof(*h)) {
		st->empty = 1;
		close(fd);
		return 0;
	}
	h = &head.h;
	hs = raw_iter_head(head_buf, (size_t)got, &head);
	if (hs == RAW_HEAD_MACHINE) {
		/* not ours to count or cut, nor to remove */
		st->foreign = 1;
		st->machine = head.arch.machine;
		close(fd);
		return 0;
	}
	if (hs != RAW_HEAD_OK) {
		st->empty = 1;
		close(fd);
		return 0;
	}
	st->pid = h->pid;
	st->clock = h->clock;
	st->heap_flags = h->clock == RAW_CLOCK_HEAP ? h->heap_flags : 0;
	if (raw_tail_init(&tail, fd, h->header_size, head.arch.nregs, 0) != 0) {
		close(fd);
		return -1;
	}
	acct = raw_cpu_new(h->clock == RAW_CLOCK_HEAP ? 0 : h->short_thread_us, h->period_ns);
	oom = acct == NULL;
	while ((next = raw_tail_next(&tail, &rec)) == RAW_NEXT_RECORD) {
		/* whole records, each as long as its type needs (raw-iter.h) */
		if (rec.type == RAW_SAMPLE) {
			struct raw_sample s;

			raw_sample_get(rec.data, rec.size, &s);
			/* the collector's own work is in no profile (raw-stacks.c):
			 * nor in the summary's samples */
			st->samples += !(s.flags & RAW_SAMPLE_COLLECTOR);
			st->wall_weight_ns += s.weight_ns;
			oom |= acct != NULL && raw_cpu_sample(acct, s.tid, s.weight_ns) < 0;
		} else if (rec.type == RAW_SAMPLE_REGS) {
			struct raw_sample_regs s;

			memcpy(&s, rec.data, sizeof(s));
			st->samples += !(s.flags & RAW_SAMPLE_COLLECTOR);
			st->wall_weight_ns += s.weight_ns;
			oom |= acct != NULL && raw_cpu_sample(acct, s.tid, s.weight_ns) < 0;
		} else if (rec.type == RAW_HEAP_ALLOC) {
			struct raw_heap_alloc a;
			double rate = h->period_ns > 1 ? (double)h->period_ns : 1;

			memcpy(&a, rec.data, sizeof(a));
			st->samples++;
			st->heap_bytes += rate > 1 && a.size > 0 ? (double)a.size / -expm1(-(double)a.size / rate)
								  : (double)a.size;
		} else if (rec.type == RAW_THREAD) {
			struct raw_thread t = { 0 };

			memcpy(&t, rec.data, rec.size < sizeof(t) ? rec.size : sizeof(t));
			oom |= acct != NULL &&
			       raw_cpu_thread(acct, t.tid, rec.size >= sizeof(t), t.cpu_ns) < 0;
		} else if (rec.type == RAW_THREAD_EXIT) {
			struct raw_thread_exit t = { 0 };

			memcpy(&t, rec.data, rec.size < sizeof(t) ? rec.size : sizeof(t));
			oom |= acct != NULL && raw_cpu_exit(acct, t.tid, t.cpu_ns) < 0;
			st->moved += (t.flags & RAW_EXIT_MOVED) != 0;
		} else if (rec.type == RAW_LOST) {
			struct raw_lost l = { 0 };

			memcpy(&l, rec.data, rec.size < sizeof(l) ? rec.size : sizeof(l));
			st->lost_records += l.count;
			if (l.error)
				st->lost_error = l.error;
		} else if (rec.type == RAW_COLLECTOR) {
			struct raw_collector c;

			memcpy(&c, rec.data, sizeof(c));
			st->collector_ns += raw_collector_ns(&c);
		} else if (rec.type == RAW_PYTHON) {
			struct raw_python py;

			memcpy(&py, rec.data, sizeof(py));
			st->python_unread = py.frames == RAW_PYTHON_UNREAD;
			st->python_version = py.version;
		} else if (rec.type == RAW_EXEC || rec.type == RAW_CHILD) {
			collect_scan_procs(&rec, h->pid, st, seen);
		} else if (rec.type == RAW_END) {
			struct raw_end e;

			memcpy(&e, rec.data, sizeof(e));
			st->ended = 1;
			st->lost = e.lost;
		}
	}
	/* a record that is not whole: what follows is unreadable, and the
	 * file is left as it is */
	if (next < 0 || next == RAW_NEXT_BAD_SIZE || next == RAW_NEXT_CUT ||
	    next == RAW_NEXT_MALFORMED)
		st->bad = 1;
	off = raw_tail_offset(&tail);
	/* ended from a signal handler: the file was left at its mapped size */
	if (st->ended && off < size && collect_zeros(fd, off, size) == 1 &&
	    ftruncate(fd, (off_t)off) == 0)
		st->tail_cut = 1;
	if (!st->ended) {
		int zeros = off < size ? collect_zeros(fd, off, size) : 0;

		st->lost = st->lost_records;
		if (zeros == 1 && ftruncate(fd, (off_t)off) == 0)
			st->cut = 1;
		else if (off < size && zeros != 1)
			st->bad = 1;
	}
	if (acct != NULL && !oom) {
		raw_cpu_settle(acct, &st->cpu);
		/* a thread paused and resumed is one thread */
		st->threads = st->cpu.tids;
	}
	raw_cpu_free(acct);
	raw_tail_free(&tail);
	close(fd);
	return 0;
}

static int collect_header_at(int fd, uint64_t off, struct collect_trace *t);

/* Reads the header of a trace.  Returns 0 or -1 (not a trace). */
int collect_header(const char *path, struct collect_trace *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), rc;

	if (fd < 0)
		return -1;
	rc = collect_header_at(fd, 0, t);
	close(fd);
	return rc;
}

/* Reads the header of the trace at offset off of fd into t.  Returns 0
 * or -1 (not a trace). */
static int collect_header_at(int fd, uint64_t off, struct collect_trace *t)
{
	struct raw_header h;
	char exe[PATH_MAX];
	const char *base;
	ssize_t n;

	n = pread(fd, &h, sizeof(h), (off_t)off);
	if (n != (ssize_t)sizeof(h) || memcmp(h.magic, RAW_MAGIC, RAW_MAGIC_LEN) != 0)
		return -1;
	n = raw_header_fixed_size(h.version) > 0
		    ? pread(fd, exe, sizeof(exe) - 1, (off_t)(off + raw_header_fixed_size(h.version)))
		    : 0;
	exe[n > 0 ? n : 0] = '\0';
	base = strrchr(exe, '/');
	/* a name from the trace: said escaped (escape.h) */
	pv_escape(t->exe, sizeof(t->exe), base != NULL ? base + 1 : exe);
	t->pid = h.pid;
	t->ppid = h.ppid;
	t->start_mono = h.start_monotonic_ns;
	return 0;
}

/* Is name "<stem>.<digits>.raw" or "<stem>.<digits>.<digits>.raw"? */
static int collect_is_child_name(const char *name, const char *stem)
{
	size_t len = strlen(stem);
	int groups = 0;
	const char *p;

	if (strncmp(name, stem, len) != 0 || name[len] != '.')
		return 0;
	for (p = name + len; *p == '.' && p[1] >= '0' && p[1] <= '9'; groups++) {
		p++;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	return groups >= 1 && groups <= 2 && strcmp(p, ".raw") == 0;
}

static int collect_trace_cmp(const void *a, const void *b)
{
	const struct collect_trace *x = a, *y = b;

	return x->start_mono < y->start_mono ? -1 : x->start_mono > y->start_mono;
}

/* Adds t to the array *v of *n (capacity *cap).  Returns 0 or -1. */
static int collect_trace_push(struct collect_trace **v, size_t *n, size_t *cap,
			      const struct collect_trace *t)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct collect_trace *nv = realloc(*v, c * sizeof(*nv));

		if (nv == NULL)
			return -1;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = *t;
	return 0;
}

/* The directory and the stem ("<name>" without ".raw") of the trace the
 * launcher created, which the other processes' traces are named after. */
static void collect_stem(const char *shown, char *dir, size_t dcap, char *stem, size_t scap)
{
	const char *slash = strrchr(shown, '/');

	if (slash != NULL) {
		snprintf(dir, dcap, "%.*s", (int)(slash - shown + (slash == shown)), shown);
		snprintf(stem, scap, "%s", slash + 1);
	} else {
		snprintf(dir, dcap, ".");
		snprintf(stem, scap, "%s", shown);
	}
	if (strlen(stem) > 4 && strcmp(stem + strlen(stem) - 4, ".raw") == 0)
		stem[strlen(stem) - 4] = '\0';
}

/* Orders the images by pid and start, and of one image a trace file
 * before its frames, a later frame before an earlier one. */
static int collect_image_cmp(const void *a, const void *b)
{
	const struct collect_trace *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start_mono != y->start_mono)
		return x->start_mono < y->start_mono ? -1 : 1;
	if (x->chunk != y->chunk)
		return x->chunk - y->chunk;
	return x->chunk_off > y->chunk_off ? -1 : x->chunk_off < y->chunk_off;
}

/* Adds to cand the traces of the run's file of short images (raw.h,
 * struct raw_short) started after t0, each image once: an image that
 * appended its trace before an exec that failed, then again, or that got
 * a file of its own after, is its file or its last frame. */
static void collect_find_short(const char *shown, uint64_t t0, struct collect_trace **cand,
			       size_t *ncand, size_t *capcand)
{
	struct collect_trace t;
	struct raw_short frame;
	struct stat sb;
	uint64_t off = 0;
	size_t n = 0;
	int fd;

	memset(&t, 0, sizeof(t));
	if (collect_env_short_path(shown, t.name, sizeof(t.name)) != 0)
		return;
	fd = open(t.name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (fstat(fd, &sb) != 0)
		sb.st_size = 0;
	while (off + sizeof(frame) <= (uint64_t)sb.st_size &&
	       pread(fd, &frame, sizeof(frame), (off_t)off) == (ssize_t)sizeof(frame) &&
	       memcmp(frame.magic, RAW_SHORT_MAGIC, RAW_MAGIC_LEN) == 0 && frame.size % 8 == 0 &&
	       frame.size <= RAW_SHORT_MAX && frame.size <= (uint64_t)sb.st_size - off - sizeof(frame)) {
		t.chunk = 1;
		t.chunk_off = off + sizeof(frame);
		t.size = frame.size;
		if (collect_header_at(fd, t.chunk_off, &t) == 0 && t.start_mono >= t0 &&
		    collect_trace_push(cand, ncand, capcand, &t) != 0)
			break;
		off += sizeof(frame) + frame.size;
	}
	close(fd);
	if (off < (uint64_t)sb.st_size)
		cli_msg("'%s': %llu bytes after its last whole trace are not read", t.name,
			    (unsigned long long)((uint64_t)sb.st_size - off));
	/* each image once */
	if (*ncand > 1)
		qsort(*cand, *ncand, sizeof(**cand), collect_image_cmp);
	for (size_t i = 0; i < *ncand; i++)
		if (n == 0 || (*cand)[i].pid != (*cand)[n - 1].pid ||
		    (*cand)[i].start_mono != (*cand)[n - 1].start_mono)
			(*cand)[n++] = (*cand)[i];
	*ncand = n;
}

/* The traces next to shown that processes of the run write or wrote:
 * named after it, started after t0 (CLOCK_MONOTONIC), not yet in v[0..n).
 * Appended to *v in the order they started, each once its parent is
 * known: the program (pid) or the process of a trace already in v. */
void collect_find_more(const char *shown, pid_t pid, uint64_t t0, struct collect_trace **v,
			      size_t *n, size_t *cap)
{
	char dir[PATH_MAX], stem[PATH_MAX];
	struct collect_trace *cand = NULL, t;
	size_t ncand = 0, capcand = 0;
	const char *slash = strrchr(shown, '/');
	struct dirent *de;
	int changed;
	DIR *d;

	collect_stem(shown, dir, sizeof(dir), stem, sizeof(stem));
	d = opendir(dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		int known = 0;

		if (!collect_is_child_name(de->d_name, stem))
			continue;
		memset(&t, 0, sizeof(t));
		if (snprintf(t.name, sizeof(t.name), "%s%s%s", slash != NULL ? dir : "",
			     slash != NULL && slash != shown ? "/" : "", de->d_name) >=
		    (int)sizeof(t.name))
			continue;
		for (size_t j = 1; j < *n && !known; j++)
			known = strcmp((*v)[j].name, t.name) == 0;
		if (known || collect_header(t.name, &t) != 0 || t.start_mono < t0)
			continue;
		if (collect_trace_push(&cand, &ncand, &capcand, &t) != 0)
			break;
	}
	closedir(d);
	collect_find_short(shown, t0, &cand, &ncand, &capcand);
	/* parents start before their children: mostly one pass */
	if (ncand > 1)
		qsort(cand, ncand, sizeof(*cand), collect_trace_cmp);
	do {
		changed = 0;
		for (size_t i = 0; i < ncand; i++) {
			int known = cand[i].ppid == (uint32_t)pid || cand[i].pid == (uint32_t)pid;

			if (cand[i].pid == 0)
				continue;
			for (size_t j = *n; j-- > 0 && !known;)
				known = cand[i].pid == (*v)[j].pid || cand[i].ppid == (*v)[j].pid;
			if (!known)
				continue;
			if (collect_trace_push(v, n, cap, &cand[i]) != 0)
				break;
			cand[i].pid = 0;
			changed = 1;
		}
	} while (changed);
	free(cand);
	qsort(*v + 1, *n - 1, sizeof(**v), collect_trace_cmp);
}

/* Finds the traces of the run: shown itself, then, unless !inherit, those
 * next to it of the program's descendants, by start time.  Returns how
 * many in *out (malloc'd), 0 when out of memory. */
size_t collect_find_traces(const char *shown, pid_t pid, uint64_t t0, int inherit,
				  struct collect_trace **out)
{
	struct collect_trace *v = calloc(1, sizeof(*v));
	size_t n = 1, cap = 1;

	*out = v;
	if (v == NULL)
		return 0;
	snprintf(v[0].name, sizeof(v[0].name), "%s", shown);
	if (collect_header(shown, &v[0]) != 0) {
		v[0].pid = (uint32_t)pid;
		v[0].start_mono = 0;
		v[0].exe[0] = '\0';
	}
	if (inherit)
		collect_find_more(shown, pid, t0, out, &n, &cap);
	return n;
}

/* Copies the len bytes of the file at path into fd at offset off.
 * Returns 0 or -1. */
int collect_copy(int fd, uint64_t off, const char *path, uint64_t len)
{
	return collect_copy_from(fd, off, path, 0, len);
}

int collect_copy_from(int fd, uint64_t off, const char *path, uint64_t at, uint64_t len)
{
	int in = open(path, O_RDONLY | O_CLOEXEC);
	loff_t from = (loff_t)at, to = (loff_t)off;
	uint64_t end = at + len;
	char buf[65536];

	if (in < 0)
		return -1;
	while ((uint64_t)from < end) {
		size_t want = end - (uint64_t)from < (1u << 30) ? (size_t)(end - (uint64_t)from) : (1u << 30);
		ssize_t n = copy_file_range(in, &from, fd, &to, want, 0);

		if (n > 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0)
			break; /* shorter than it was */
		/* not between these file systems: by hand */
		n = pread(in, buf, want < sizeof(buf) ? want : sizeof(buf), from);
		if (n <= 0 || pwrite(fd, buf, (size_t)n, to) != n)
			break;
		from += n;
		to += n;
	}
	close(in);
	return (uint64_t)from == end ? 0 : -1;
}

/* Is v[k] a process image of the run (read, with a header, of this
 * machine)?  The program's own, v[0], always is, read or not. */
static int collect_counted(const struct collect_trace *v, size_t k)
{
	return k == 0 || (v[k].scanned && !v[k].st.empty && !v[k].st.foreign);
}

size_t collect_count_processes(const struct collect_trace *v, size_t n)
{
	size_t np = 0;

	for (size_t k = 0; k < n; k++) {
		size_t j = 0;

		if (!collect_counted(v, k))
			continue;
		/* an image after an exec is the same process */
		while (j < k && !(v[j].pid == v[k].pid && collect_counted(v, j)))
			j++;
		np += j == k;
	}
	return np;
}

/* The program's own trace is rewritten into the run file (its Python
 * records made the run's) up to this size; a longer one, in which the
 * code objects weigh little per sample, is kept in place, not copied. */
#define COLLECT_REWRITE_MAX ((uint64_t)32 << 20)

/* Joins the kept traces of v into one run file at shown (raw.h): in place
 * after the program's own trace when it is kept and alone, a segment's, or
 * longer than COLLECT_REWRITE_MAX, else in a new file put in its place.  Nothing to do for one trace that ran no other program.
 * Returns 0, or -1 with a message (the traces are then left as they are). */
int collect_join(const char *shown, const struct collect_trace *v, size_t n,
		 const struct collect_others *others)
{
	struct raw_run_footer foot = { 0 };
	struct raw_run_part *idx;
	struct collect_pynames *names;
	char tmp[PATH_MAX + 16];
	size_t nkeep = 0, m = 0;
	uint64_t off = 0;
	int fd, inplace, ok = 1;

	for (size_t k = 0; k < n; k++)
		nkeep += v[k].keep != 0;
	/* (alone, or a segment's: as it is) */
	inplace = v[0].keep && (nkeep == 1 || v[0].chunk || v[0].size > COLLECT_REWRITE_MAX);
	if (nkeep == 0 || (nkeep == 1 && v[0].keep && !v[0].execd && !collect_run_needed(v, others)))
		return 0;
	idx = calloc(nkeep, sizeof(*idx));
	if (idx == NULL) {
		cli_msg("cannot join the traces of the run: out of memory");
		return -1;
	}
	if (inplace) {
		fd = open(shown, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	} else {
		snprintf(tmp, sizeof(tmp), "%s.joining", shown);
		unlink(tmp);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, PV_OUTFILE_TRACE_MODE);
	}
	if (fd < 0) {
		cli_msg("cannot join the traces of the run into '%s': %s", shown, strerror(errno));
		free(idx);
		return -1;
	}
	names = collect_pynames_new();
	for (size_t k = 0; k < n && ok; k++) {
		uint64_t length = v[k].size;

		if (!v[k].keep)
			continue;
		off = (off + RAW_RUN_ALIGN - 1) / RAW_RUN_ALIGN * RAW_RUN_ALIGN;
		if (!(inplace && k == 0) && names != NULL) {
			/* the Python names of the processes written once */
			int64_t w = collect_pynames_copy(names, fd, off, v[k].name,
							 v[k].chunk ? v[k].chunk_off : 0, v[k].size);

			ok = w >= 0;
			length = ok ? (uint64_t)w : 0;
		} else if (!(inplace && k == 0)) {
			ok = collect_copy_from(fd, off, v[k].name, v[k].chunk ? v[k].chunk_off : 0,
					       v[k].size) == 0;
		}
		idx[m].offset = inplace && k == 0 ? 0 : off;
		idx[m].length = length;
		idx[m].pid = v[k].pid;
		idx[m].flags = (v[k].execd ? RAW_RUN_EXECD : 0) | (v[k].pid == v[0].pid ? RAW_RUN_ROOT : 0) |
			       v[k].end;
		idx[m].end_code = v[k].end ? v[k].end_code : 0;
		off = idx[m].offset + length;
		m++;
	}
	off = (off + 7) / 8 * 8;
	if (ok && names != NULL) {
		int64_t w = collect_pynames_write(names, fd, off);

		ok = w >= 0;
		off += ok ? (uint64_t)w : 0;
	}
	collect_pynames_free(names);
	if (ok && others != NULL && others->n > 0) {
		int64_t w = collect_others_write(fd, off, others);

		ok = w > 0;
		foot.others_offset = off;
		off += ok ? (uint64_t)w : 0;
	}
	foot.index_offset = off;
	foot.nparts = (uint32_t)m;
	foot.nprocesses = (uint32_t)(collect_count_processes(v, n) +
				     (others != NULL ? collect_others_apart(v, n, others) : 0));
	memcpy(foot.magic, RAW_RUN_MAGIC, RAW_MAGIC_LEN);
	if (ok)
		ok = pwrite(fd, idx, m * sizeof(*idx), (off_t)off) == (ssize_t)(m * sizeof(*idx)) &&
		     pwrite(fd, &foot, sizeof(foot), (off_t)(off + m * sizeof(*idx))) ==
			     (ssize_t)sizeof(foot) &&
		     ftruncate(fd, (off_t)(off + m * sizeof(*idx) + sizeof(foot))) == 0;
	if (!ok) {
		cli_msg("cannot join the traces of the run into '%s': %s; they are left apart",
			    shown, strerror(errno));
		if (inplace && ftruncate(fd, (off_t)v[0].size) != 0) {
			/* the index is missing: the file reads as its first trace */
		}
	}
	close(fd);
	if (ok && !inplace && rename(tmp, shown) != 0) {
		cli_msg("cannot put the run in place of '%s': %s", shown, strerror(errno));
		ok = 0;
	}
	if (!ok && !inplace)
		unlink(tmp);
	free(idx);
	return ok ? 0 : -1;
}
