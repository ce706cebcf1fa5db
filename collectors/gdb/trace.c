/* trace.c - collect-gdb's trace file (see trace.h) */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "outfile.h"
#include "proc.h"
#include "trace.h"

static const char *const end_names[] = { "", "count", "duration", "interrupted", "exited", "error" };

static bool maps_written(const struct cg_state *st, const char *line)
{
	for (size_t i = st->nmaps; i-- > 0;)
		if (strcmp(st->maps[i], line) == 0)
			return true;
	return false;
}

/* Writes a "# map:" line for every executable mapping of the target that
 * no earlier line gave, from /proc/PID/maps: what addresses without a name
 * are offsets in (profview-gdb(5)).  Nothing when the maps cannot be
 * read. */
static void write_maps(struct cg_state *st)
{
	char path[64], line[4096 + 128], out[4096 + 128];
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)st->pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		unsigned long long start, end, off;
		char perms[8];
		int at = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &at) < 4 ||
		    at == 0 || strlen(perms) < 3 || perms[2] != 'x')
			continue;
		/* "START-END OFFSET PATH": the path as the kernel wrote it
		 * (empty for anonymous memory). */
		snprintf(out, sizeof out, "%llx-%llx %llx %s", start, end, off, line + at);
		if (maps_written(st, out))
			continue;
		if (st->nmaps == st->cap_maps) {
			size_t cap = st->cap_maps ? st->cap_maps * 2 : 64;
			char **q = realloc(st->maps, cap * sizeof *q);
			if (!q)
				cg_oom();
			st->maps = q;
			st->cap_maps = cap;
		}
		if (!(st->maps[st->nmaps] = strdup(out)))
			cg_oom();
		st->nmaps++;
		fprintf(st->out, "# map: %s\n", out);
	}
	fclose(f);
}

static void write_time(FILE *f, int64_t ns)
{
	fprintf(f, "%" PRId64 ".%09" PRId64, ns / (int64_t)1000000000, ns % (int64_t)1000000000);
}

static bool is_bt_line(const char *s, size_t n)
{
	if (n == 0)
		return true;
	if (s[0] == '#')
		return n > 1 && isdigit((unsigned char)s[1]);
	return s[0] == ' ' || s[0] == '\t' ||
	       (n > 7 && memcmp(s, "Thread ", 7) == 0 && isdigit((unsigned char)s[7])) ||
	       (n > 17 && memcmp(s, "Backtrace stopped", 17) == 0) ||
	       (n > 25 && memcmp(s, "(More stack frames follow", 25) == 0);
}

/* What the snapshot stopped at t0 stands for (trace.h). */
static int64_t snapshot_weight(const struct cg_state *st, int64_t t0)
{
	int64_t w = st->o.interval_ns, cap = st->o.interval_ns * CG_WEIGHT_CAP;

	if (st->resumed_ns > 0)
		w = t0 > st->resumed_ns ? t0 - st->resumed_ns : 0;
	return w < cap ? w : cap;
}

unsigned cg_write_snapshot(struct cg_state *st, const char *text, size_t len, int64_t t_real,
			   int64_t t0)
{
	unsigned threads = 0;
	bool started = false;

	st->snapshots++;
	write_maps(st);
	fprintf(st->out, "# snapshot: %lld ", st->snapshots);
	write_time(st->out, t_real);
	fprintf(st->out, "\n# weight-ns: %" PRId64 "\n", snapshot_weight(st, t0));
	for (size_t off = 0; off < len;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = (nl ? (size_t)(nl - text) : len) - off;
		const char *s = text + off;
		off += n + 1;
		if (n && s[n - 1] == '\r')
			n--;
		if (!is_bt_line(s, n) || (!started && n == 0))
			continue;
		if (n > 7 && memcmp(s, "Thread ", 7) == 0)
			threads++;
		started = true;
		fwrite(s, 1, n, st->out);
		fputc('\n', st->out);
	}
	if (fflush(st->out) != 0 && !st->out_errno)
		st->out_errno = errno;
	if (threads > st->max_threads)
		st->max_threads = threads;
	return threads;
}

int cg_open_trace(struct cg_state *st)
{
	char exe[PATH_MAX], link[64];
	ssize_t n;

	snprintf(link, sizeof link, "/proc/%d/exe", (int)st->pid);
	n = readlink(link, exe, sizeof exe - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (st->o.output && strcmp(st->o.output, "-") == 0) {
		st->out = stdout;
		snprintf(st->outname, sizeof st->outname, "standard output");
	} else {
		if (st->o.output) {
			snprintf(st->outname, sizeof st->outname, "%s", st->o.output);
		} else {
			char comm[64];
			proc_read_comm(st->pid, 0, comm, sizeof comm);
			for (char *c = comm; *c; c++)
				if (*c == '/' || isspace((unsigned char)*c))
					*c = '_';
			snprintf(st->outname, sizeof st->outname, "profview-%s-%d.gdb",
				 comm[0] ? comm : "process", (int)st->pid);
		}
		/* A new file that only its owner reads: the trace holds the
		 * arguments gdb prints, strings included. */
		char why[256];
		int fd = pv_outfile_open(st->outname, PV_OUTFILE_TRACE_MODE, PV_OUTFILE_NEW, why, sizeof why);
		if (fd < 0) {
			cli_msg("cannot write '%s': %s", st->outname, why);
			return -1;
		}
		st->out = fdopen(fd, "w");
		if (!st->out) {
			cli_msg("cannot write '%s': %s", st->outname, strerror(errno));
			close(fd);
			return -1;
		}
	}
	fprintf(st->out, "# profview-gdb 1\n");
	fprintf(st->out, "# pid: %d\n", (int)st->pid);
	fprintf(st->out, "# program: %s\n", exe);
	fprintf(st->out, "# mode: %s%s\n", cg_mode_names[st->o.mode], st->o.readnever ? " readnever" : "");
	fprintf(st->out, "# interval-ns: %" PRId64 "\n", st->o.interval_ns);
	fprintf(st->out, "# start: ");
	write_time(st->out, cg_now_ns(CLOCK_REALTIME));
	fputc('\n', st->out);
	if (fflush(st->out) != 0)
		st->out_errno = errno;
	return 0;
}

void cg_close_trace(struct cg_state *st)
{
	fprintf(st->out, "# end: ");
	write_time(st->out, cg_now_ns(CLOCK_REALTIME));
	fprintf(st->out, " %s\n", end_names[st->end]);
	/* The first error is the one to report: errno is long stale by now. */
	if (fflush(st->out) != 0 && !st->out_errno)
		st->out_errno = errno;
	if (ferror(st->out) && !st->out_errno)
		st->out_errno = EIO;
	if (st->out != stdout && fclose(st->out) != 0 && !st->out_errno)
		st->out_errno = errno;
	if (st->out_errno) {
		cli_msg("cannot write '%s': %s", st->outname, strerror(st->out_errno));
		st->end = END_ERROR;
	}
}
