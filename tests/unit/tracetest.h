/* tracetest.h - a trace written by the preload libraries' writer
 * (collectors/timer/writer.c) in a test's own process, and read back
 * whole: for the unit tests of the writer and of what writes into it */
#ifndef PROFVIEW_TRACETEST_H
#define PROFVIEW_TRACETEST_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "raw-iter.h"
#include "writer.h"

/* A record type no reader knows: the walk hands it out as it is. */
#define TT_TYPE 0x7e57u

struct tt_trace {
	char dir[64];
	char path[128];
	unsigned char *buf;   /* the finished file, read whole */
	size_t len;
	size_t start;         /* its first record */
};

/* Creates an empty file in a new directory under parent (NULL: /tmp) and
 * starts the writer's trace on it, as the launcher's file, through an
 * address-space ring of at most ring bytes (0: the writer's own size).
 * Returns 0 or -1. */
static inline int tt_start_in(struct tt_trace *t, uint64_t ring, const char *parent)
{
	static const char exe[] = "/unit/test";
	struct raw_header h;
	struct raw_arch a = { RAW_MACHINE_X86_64, RAW_REGS_DWARF, RAW_NREGS, 0 };
	int fd;

	memset(t, 0, sizeof(*t));
	snprintf(t->dir, sizeof(t->dir), "%s/profview-unit.XXXXXX", parent ? parent : "/tmp");
	if (mkdtemp(t->dir) == NULL)
		return -1;
	snprintf(t->path, sizeof(t->path), "%s/trace.raw", t->dir);
	fd = open(t->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	close(fd);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, RAW_MAGIC, RAW_MAGIC_LEN);
	h.version = RAW_VERSION;
	h.exe_len = sizeof(exe);
	h.header_size = raw_header_fixed_size(h.version) + raw_pad(h.exe_len);
	h.clock = RAW_CLOCK_CPU;
	h.unwind = RAW_UNWIND_CFI;
	h.pid = (uint32_t)getpid();
	h.period_ns = 4000000;
	if (ring != 0) {
		char v[32];

		snprintf(v, sizeof(v), "%llu", (unsigned long long)ring);
		setenv("PROFVIEW_TEST_RING", v, 1);
	} else {
		unsetenv("PROFVIEW_TEST_RING");
	}
	if (writer_open(t->path, 1) != 0 || writer_init(&h, &a, exe, 0) != 0)
		return -1;
	t->start = h.header_size;
	return 0;
}

static inline int tt_start(struct tt_trace *t, uint64_t ring)
{
	return tt_start_in(t, ring, NULL);
}

/* Reads the whole file into t->buf (8-byte aligned).  Returns 0 or -1. */
static inline int tt_read(struct tt_trace *t)
{
	struct stat st;
	size_t got = 0;
	int fd = open(t->path, O_RDONLY | O_CLOEXEC);

	free(t->buf);
	t->buf = NULL;
	if (fd < 0 || fstat(fd, &st) != 0)
		goto fail;
	t->len = (size_t)st.st_size;
	t->buf = malloc(t->len + 8);
	if (t->buf == NULL)
		goto fail;
	while (got < t->len) {
		ssize_t n = pread(fd, t->buf + got, t->len - got, (off_t)got);

		if (n <= 0)
			goto fail;
		got += (size_t)n;
	}
	close(fd);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* Cuts the trace to what was written, reads it and lets the writer go:
 * a next tt_start may follow.  Returns 0 or -1. */
static inline int tt_finish(struct tt_trace *t)
{
	int rc = writer_finish();

	writer_forget();
	return rc != 0 ? -1 : tt_read(t);
}

/* Removes the file and its directory, and frees what was read. */
static inline void tt_remove(struct tt_trace *t)
{
	unlink(t->path);
	rmdir(t->dir);
	free(t->buf);
	t->buf = NULL;
}

/* Reserves a TT_TYPE record of size bytes (a multiple of 8, at least 24)
 * and fills it: the writer's number, its sequence number, then a pattern
 * of both.  Published unless publish is 0.  Returns the record or NULL
 * when the writer had no room. */
static inline void *tt_put(uint32_t who, uint64_t seq, uint32_t size, int wait, int publish)
{
	unsigned char *rec = writer_reserve(size, wait);

	if (rec == NULL)
		return NULL;
	memcpy(rec + 8, &seq, 8);
	memcpy(rec + 16, &who, 4);
	memcpy(rec + 20, &size, 4);
	for (uint32_t i = 24; i < size; i++)
		rec[i] = (unsigned char)(seq * 131 + i * 7 + who * 17);
	if (publish)
		writer_publish(rec, TT_TYPE, size);
	return rec;
}

/* Is rec a whole tt_put record?  Its writer and number into *who, *seq. */
static inline int tt_intact(const struct raw_record *rec, uint32_t *who, uint64_t *seq)
{
	uint32_t size;

	if (rec->type != TT_TYPE || rec->size < 24)
		return 0;
	memcpy(seq, rec->data + 8, 8);
	memcpy(who, rec->data + 16, 4);
	memcpy(&size, rec->data + 20, 4);
	if (size != rec->size)
		return 0;
	for (uint32_t i = 24; i < size; i++)
		if (rec->data[i] != (unsigned char)(*seq * 131 + i * 7 + *who * 17))
			return 0;
	return 1;
}

#endif
