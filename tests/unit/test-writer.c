/* test-writer.c - the trace writer of the preload libraries
 * (collectors/timer/writer.c), in this process: records that go round its
 * ring of address space, threads writing at once while another reads the
 * file as it grows, a record reserved and not yet published, and what is
 * kept and counted when the file can grow no more (its size limit, a full
 * file system, a ring whose oldest chunk is not yet released). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "fakehost.h"
#include "raw-tail.h"
#include "tracetest.h"

#define RING ((uint64_t)16 << 20)   /* the smallest ring the writer makes */
#define TAIL ((uint64_t)256 << 10)  /* what it keeps for the final records */

/* The size of record seq of writer who: 24 bytes to about 12 KiB, spread
 * so that records fall across the ring's end at no fixed place. */
static uint32_t rec_size(uint32_t who, uint64_t seq)
{
	return 8 * (3 + (uint32_t)((seq * 7919 + who * 104729) % 1500));
}

/* Walks t's records: every one must be a whole tt_put record, the
 * sequence numbers of each writer rising; got[who] counts them, and each
 * one's number is marked in seen[who] (nseq entries).  Returns how the
 * walk stopped; *crossings the records that run over a multiple of the
 * ring. */
static enum raw_next walk_all(const struct tt_trace *t, int nwho, uint64_t nseq,
			      unsigned char **seen, uint64_t *got, uint64_t *crossings, int *bad)
{
	struct raw_iter it;
	struct raw_record rec;
	enum raw_next next;
	uint64_t last[16];

	memset(last, 0xff, sizeof(last));
	raw_iter_init(&it, t->buf, t->len, t->start, RAW_NREGS);
	while ((next = raw_iter_next(&it, &rec)) == RAW_NEXT_RECORD) {
		uint32_t who;
		uint64_t seq;

		if (rec.type != TT_TYPE)
			continue;
		if (!tt_intact(&rec, &who, &seq) || (int)who >= nwho || seq >= nseq ||
		    (last[who] != UINT64_MAX && seq <= last[who]) || seen[who][seq]) {
			(*bad)++;
			continue;
		}
		last[who] = seq;
		seen[who][seq] = 1;
		got[who]++;
		if (rec.off / RING != (rec.off + rec.size - 1) / RING)
			(*crossings)++;
	}
	return next;
}

/* One writer round the ring twice and a half, waiting for room when it
 * must (as the library's own threads do): every record back, in order and
 * whole, also those that run over the ring's end into its mirror. */
static void test_wrap(void)
{
	const uint64_t total = 2 * RING + RING / 2;
	struct tt_trace t;
	unsigned char *seen = calloc(20000, 1);
	uint64_t written = 0, n = 0, got = 0, crossings = 0, used = 0;
	int bad = 0;

	CHECK(tt_start(&t, RING) == 0);
	while (written < total && n < 20000) {
		uint32_t size = rec_size(0, n);

		if (tt_put(0, n, size, WRITER_WAIT, 1) == NULL)
			break;
		written += size;
		n++;
		/* the library's control thread releases what is written a
		 * few times a second; here every few hundred records */
		if (n % 300 == 0)
			writer_release();
	}
	CHECK(written >= total);
	CHECK(tt_finish(&t) == 0);
	CHECK_EQ(walk_all(&t, 1, n, &seen, &got, &crossings, &bad), RAW_NEXT_DONE);
	CHECK_EQ(bad, 0);
	CHECK_EQ(got, n);
	/* the file is cut right after the last record */
	for (uint64_t i = 0, off = t.start; i < n; i++)
		off += rec_size(0, i), used = off;
	CHECK_EQ(t.len, used);
	/* the premise: records did run over the ring's end (twice) */
	CHECK(crossings >= 2);
	tt_remove(&t);
	free(seen);
}

/* ---- threads ---- */

#define THREADS 4
#define PER_THREAD 4000

struct shared {
	_Atomic int writers_left;
	_Atomic int finished;      /* the trace is cut: the reader drains it */
	unsigned char *ok[THREADS];  /* the records each writer got room for */
	uint64_t lost[THREADS];
	/* the reader's */
	const char *path;
	uint64_t start;
	uint64_t read_ok, read_bad, read_zeros;
	int read_error;
};

static struct shared sh;

static void *writer_thread(void *arg)
{
	uint32_t who = (uint32_t)(uintptr_t)arg;
	/* half the threads never wait, as the sampling handler */
	int wait = who % 2 ? WRITER_NOWAIT : WRITER_WAIT;

	for (uint64_t seq = 0; seq < PER_THREAD; seq++) {
		if (tt_put(who, seq, rec_size(who, seq), wait, 1) != NULL) {
			sh.ok[who][seq] = 1;
		} else if (wait == WRITER_WAIT) {
			/* it should have had room: no more tries */
			sh.lost[who] += PER_THREAD - seq;
			break;
		} else {
			sh.lost[who]++;
		}
		if (seq % 64 == 0)
			sched_yield();
	}
	atomic_fetch_sub(&sh.writers_left, 1);
	return NULL;
}

/* The library's control thread: releases the written part a few times a
 * second (here as often as it can) while the writers run. */
static void *releaser_thread(void *unused)
{
	(void)unused;
	while (atomic_load(&sh.writers_left) > 0) {
		struct timespec ms = { 0, 1000000 };

		writer_release();
		nanosleep(&ms, NULL);
	}
	return NULL;
}

/* Reads the trace as it is written, as collect-timer --split does: every
 * record handed out must be whole; the walk stops at what is not written
 * yet, and once the trace is cut, at its end. */
static void *reader_thread(void *unused)
{
	struct raw_tail tail;
	struct raw_record rec;
	int fd = open(sh.path, O_RDONLY | O_CLOEXEC);

	(void)unused;
	if (fd < 0 || raw_tail_init(&tail, fd, sh.start, RAW_NREGS, 1) != 0) {
		sh.read_error = 1;
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (;;) {
		int fin = atomic_load(&sh.finished);
		int r;

		while ((r = raw_tail_next(&tail, &rec)) == RAW_NEXT_RECORD) {
			uint32_t who;
			uint64_t seq;

			if (tt_intact(&rec, &who, &seq) && who < THREADS && seq < PER_THREAD)
				sh.read_ok++;
			else
				sh.read_bad++;
		}
		if (r == RAW_NEXT_ZEROS)
			sh.read_zeros++;
		else if (r != RAW_NEXT_DONE)
			sh.read_error = r < 0 ? 2 : 3;
		if (fin || sh.read_error)
			break;
		sched_yield();
	}
	raw_tail_free(&tail);
	close(fd);
	return NULL;
}

/* Writers at once, some never waiting, through a ring they go round while
 * a thread releases and another reads the file: each record read back
 * exactly once and whole, by its writer's sequence numbers; every record
 * a writer got no room for counted, none of them in the file. */
static void test_threads(void)
{
	pthread_t w[THREADS], rel, rd;
	struct tt_trace t;
	unsigned char *seen[THREADS];
	uint64_t got[THREADS] = { 0 }, crossings = 0, total = 0;
	int bad = 0;

	memset(&sh, 0, sizeof(sh));
	CHECK(tt_start(&t, RING) == 0);
	sh.path = t.path;
	sh.start = t.start;
	atomic_store(&sh.writers_left, THREADS);
	for (int i = 0; i < THREADS; i++) {
		sh.ok[i] = calloc(PER_THREAD, 1);
		seen[i] = calloc(PER_THREAD, 1);
	}
	pthread_create(&rd, NULL, reader_thread, NULL);
	pthread_create(&rel, NULL, releaser_thread, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&w[i], NULL, writer_thread, (void *)(uintptr_t)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(w[i], NULL);
	pthread_join(rel, NULL);
	CHECK(writer_finish() == 0);
	atomic_store(&sh.finished, 1);
	pthread_join(rd, NULL);
	writer_forget();
	CHECK(tt_read(&t) == 0);

	CHECK_EQ(walk_all(&t, THREADS, PER_THREAD, seen, got, &crossings, &bad), RAW_NEXT_DONE);
	CHECK_EQ(bad, 0);
	for (int i = 0; i < THREADS; i++) {
		uint64_t ok = 0, same = 0;

		for (int s = 0; s < PER_THREAD; s++) {
			ok += sh.ok[i][s];
			same += sh.ok[i][s] == seen[i][s];
		}
		/* exactly the records it got room for */
		CHECK_EQ(same, PER_THREAD);
		CHECK_EQ(got[i], ok);
		CHECK_EQ(ok + sh.lost[i], PER_THREAD);
		if (i % 2 == 0)
			CHECK_EQ(sh.lost[i], 0);
		total += got[i];
		free(sh.ok[i]);
		free(seen[i]);
	}
	/* the file went round the ring */
	CHECK(t.len > RING);
	/* the reader, as the file grew: whole records only, all of them */
	CHECK_EQ(sh.read_error, 0);
	CHECK_EQ(sh.read_bad, 0);
	CHECK_EQ(sh.read_ok, total);
	tt_remove(&t);
}

/* A record reserved and not yet published stops a reader there: the walk
 * of the file, and of a live one, ends at its offset as not yet written
 * (a zero type word), not at garbage, however much is published after
 * it; once published, the walk goes on to the end. */
static void test_unpublished(void)
{
	struct tt_trace t;
	struct raw_iter it;
	struct raw_record rec;
	struct raw_tail tail;
	unsigned char *held;
	size_t held_off;
	enum raw_next next;
	uint64_t n = 0;
	int fd;

	CHECK(tt_start(&t, 0) == 0);
	for (uint64_t s = 0; s < 10; s++)
		CHECK(tt_put(0, s, rec_size(0, s), WRITER_NOWAIT, 1) != NULL);
	held = tt_put(0, 10, rec_size(0, 10), WRITER_NOWAIT, 0);
	CHECK(held != NULL);
	for (uint64_t s = 11; s < 40; s++)
		CHECK(tt_put(0, s, rec_size(0, s), WRITER_NOWAIT, 1) != NULL);

	/* the file as it is now: ten records, then the one not published */
	CHECK(tt_read(&t) == 0);
	held_off = t.start;
	for (uint64_t s = 0; s < 10; s++)
		held_off += rec_size(0, s);
	raw_iter_init(&it, t.buf, t.len, t.start, RAW_NREGS);
	while ((next = raw_iter_next(&it, &rec)) == RAW_NEXT_RECORD)
		n++;
	CHECK_EQ(next, RAW_NEXT_ZEROS);
	CHECK_EQ(n, 10);
	CHECK_EQ(it.off, held_off);

	fd = open(t.path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && raw_tail_init(&tail, fd, t.start, RAW_NREGS, 1) == 0);
	n = 0;
	while (raw_tail_next(&tail, &rec) == RAW_NEXT_RECORD)
		n++;
	CHECK_EQ(n, 10);
	CHECK_EQ(raw_tail_offset(&tail), held_off);

	writer_publish(held, TT_TYPE, rec_size(0, 10));
	n = 0;
	while ((next = raw_tail_next(&tail, &rec)) == RAW_NEXT_RECORD) {
		uint32_t who;
		uint64_t seq;

		CHECK(tt_intact(&rec, &who, &seq) && seq == 10 + n);
		n++;
	}
	CHECK_EQ(n, 30);
	/* after the last record: the zeros of the file grown ahead */
	CHECK_EQ(next, RAW_NEXT_ZEROS);
	raw_tail_free(&tail);
	close(fd);
	CHECK(tt_finish(&t) == 0);
	tt_remove(&t);
}

/* A record reserved and not yet published holds the ring: nothing is
 * released while a byte is pending, so a writer that waits gets no room
 * a ring's length on, rather than a place the held record may still be
 * written to; once it is published the ring goes round again, and the
 * held record is whole where it was reserved. */
static void test_held_ring(void)
{
	struct tt_trace t;
	unsigned char *held, *seen = calloc(20000, 1);
	uint64_t n = 1, written = 0, got = 0, crossings = 0;
	int refused = 0, bad = 0;

	CHECK(tt_start(&t, RING) == 0);
	held = tt_put(0, 0, 4096, WRITER_NOWAIT, 0);
	CHECK(held != NULL);
	while (written < 2 * RING && !refused) {
		if (tt_put(0, n, 4096, WRITER_WAIT, 1) != NULL) {
			n++;
			written += 4096;
		} else {
			refused = 1;
		}
	}
	CHECK(refused);
	CHECK(written < RING);
	CHECK_EQ(writer_error(), EAGAIN);
	if (held != NULL)
		writer_publish(held, TT_TYPE, 4096);
	for (int i = 0; i < 5000 && tt_put(0, n, 4096, WRITER_WAIT, 1) != NULL; i++) {
		n++;
		written += 4096;
	}
	CHECK(written > RING);
	CHECK(tt_finish(&t) == 0);
	{
		unsigned char *v[1] = { seen };

		CHECK_EQ(walk_all(&t, 1, 20000, v, &got, &crossings, &bad), RAW_NEXT_DONE);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(got, n);
	tt_remove(&t);
	free(seen);
}

/* ---- no room ---- */

/* Writes records that never wait until there is no room, then as many
 * more; the count of those refused goes into a lost record written into
 * the tail kept for the end, and the file must hold each record that got
 * room, that lost record with the right count, and an end record, and not
 * a byte past limit.  err: what writer_error must say. */
static void fill_until_full(struct tt_trace *t, uint64_t limit, int err)
{
	const uint32_t size = 1000;
	uint64_t n = 0, lost = 0, got = 0, end = 0;
	unsigned char *seen = calloc(100000, 1);
	struct raw_lost *lr;
	struct raw_end *er;
	struct raw_iter it;
	struct raw_record rec;
	int bad = 0, found_lost = 0, found_end = 0, waited = 0;
	enum raw_next next;

	while (lost == 0 && n < 100000)
		if (tt_put(0, n++, size, WRITER_NOWAIT, 1) == NULL)
			lost++;
	/* the same again, past the retry delay too */
	fakehost_clock_skew += 2000000000ull;
	for (int i = 0; i < 100; i++)
		if (tt_put(0, n++, size, WRITER_NOWAIT, 1) == NULL)
			lost++;
	CHECK_EQ(lost, 101);
	CHECK_EQ(writer_error(), err);
	/* the end of the trace, in the tail */
	lr = writer_reserve(sizeof(*lr), WRITER_FINAL);
	CHECK(lr != NULL);
	if (lr != NULL) {
		lr->count = lost;
		lr->error = (uint32_t)err;
		lr->reserved = 0;
		writer_publish(lr, RAW_LOST, sizeof(*lr));
	}
	er = writer_reserve(sizeof(*er), WRITER_FINAL);
	CHECK(er != NULL);
	if (er != NULL) {
		memset((char *)er + 8, 0, sizeof(*er) - 8);
		er->lost = lost;
		writer_publish(er, RAW_END, sizeof(*er));
	}
	/* the library's own records that wait for room may take the rest
	 * of the tail, up to the limit, and then get none: no hang */
	for (int i = 0; i < 1000 && tt_put(1, i, size, WRITER_WAIT, 1) != NULL; i++)
		waited++;
	CHECK(waited < 1000);
	CHECK(tt_finish(t) == 0);
	CHECK(t->len <= limit);

	/* the file ends within a record's size of the limit */
	CHECK(t->len + size > limit);
	raw_iter_init(&it, t->buf, t->len, t->start, RAW_NREGS);
	while ((next = raw_iter_next(&it, &rec)) == RAW_NEXT_RECORD) {
		uint32_t who;
		uint64_t seq;

		if (rec.type == RAW_LOST) {
			found_lost++;
			CHECK_EQ(((const struct raw_lost *)rec.data)->count, lost);
		} else if (rec.type == RAW_END) {
			found_end++;
		} else if (tt_intact(&rec, &who, &seq) && seq < n && !seen[seq]) {
			seen[seq] = 1;
			got++;
			end = rec.off + rec.size;
		} else {
			bad++;
		}
	}
	/* what came after the end record is not read */
	CHECK_EQ(next, RAW_NEXT_ENDED);
	CHECK_EQ(bad, 0);
	CHECK_EQ(found_lost, 1);
	CHECK_EQ(found_end, 1);
	/* every record that got room is there, and only those */
	CHECK_EQ(got + lost, n);
	/* the records were refused only for the tail kept for the end */
	CHECK(end + size + TAIL > limit);
	CHECK(end + TAIL <= limit);
	free(seen);
}

/* A file size limit (RLIMIT_FSIZE): the trace stops growing below it,
 * without the signal the kernel sends for a write past it. */
static void test_size_limit(void)
{
	const uint64_t limit = 1 << 20;
	struct rlimit old, rl;
	struct tt_trace t;

	getrlimit(RLIMIT_FSIZE, &old);
	rl = old;
	rl.rlim_cur = limit;
	CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0);
	CHECK(tt_start(&t, 0) == 0);
	fill_until_full(&t, limit, EFBIG);
	tt_remove(&t);
	setrlimit(RLIMIT_FSIZE, &old);
}

/* A full file system: a tmpfs of 3 MiB in a mount namespace of a child of
 * its own.  Skipped, with a line, where a mount namespace cannot be made
 * (not root, a container that forbids it). */
static void test_disk_full(void)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		struct tt_trace t;
		char dir[] = "/tmp/profview-unit-full.XXXXXX";

		if (mkdtemp(dir) == NULL)
			_exit(2);
		if (unshare(CLONE_NEWNS) != 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
		    mount("tmpfs", dir, "tmpfs", 0, "size=3m") != 0) {
			rmdir(dir);
			_exit(77);
		}
		/* 2 MiB at the start, then no room for the next 2 */
		if (tt_start_in(&t, 0, dir) != 0)
			_exit(2);
		fill_until_full(&t, 2 << 20, ENOSPC);
		tt_remove(&t);
		umount(dir);
		rmdir(dir);
		_exit(check_failures ? 1 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("writer: no mount namespace here: the full file system is not tried\n");
		return;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* A ring whose oldest chunk is not released yet: a writer that never
 * waits gets no room (and writer_error says so) rather than write over
 * records no one may have finished; once released, there is room again.
 * No record is overwritten. */
static void test_ring_full(void)
{
	struct tt_trace t;
	unsigned char *seen = calloc(100000, 1);
	uint64_t n = 0, refused = 0, got = 0, crossings = 0, written = 0, again = 0;
	int bad = 0;

	CHECK(tt_start(&t, RING) == 0);
	while (refused == 0 && n < 100000) {
		if (tt_put(0, n, 4096, WRITER_NOWAIT, 1) == NULL)
			refused++;
		else
			written += 4096;
		n++;
	}
	CHECK_EQ(refused, 1);
	CHECK_EQ(writer_error(), EAGAIN);
	/* the ring was full: no more than a ring's length less the tail */
	CHECK(written <= RING);
	CHECK(t.start + written + 4096 + TAIL > RING);
	writer_release();
	/* past the writer's retry delay: the first record that finds no
	 * room grows the file for the next ones, and is refused itself */
	fakehost_clock_skew += 1000000000ull;
	for (int i = 0; i < 2000; i++, n++)
		if (tt_put(0, n, 4096, WRITER_NOWAIT, 1) != NULL)
			again++;
		else
			refused++;
	CHECK(again >= 1999);
	CHECK(tt_finish(&t) == 0);
	{
		unsigned char *v[1] = { seen };
		uint64_t g[1] = { 0 };

		CHECK_EQ(walk_all(&t, 1, 100000, v, g, &crossings, &bad), RAW_NEXT_DONE);
		got = g[0];
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(got + refused, n);
	tt_remove(&t);
	free(seen);
}

/* ---- the file ---- */

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* The program a hand-made header names. */
static const char exe_x[] = "/x";

/* A header as tt_start makes it, for writer_init by hand. */
static void header(struct raw_header *h, struct raw_arch *a)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, RAW_MAGIC, RAW_MAGIC_LEN);
	h->version = RAW_VERSION;
	h->exe_len = sizeof(exe_x);
	h->header_size = raw_header_fixed_size(h->version) + raw_pad(h->exe_len);
	h->pid = (uint32_t)getpid();
	a->machine = RAW_MACHINE_X86_64;
	a->regs = RAW_REGS_DWARF;
	a->nregs = RAW_NREGS;
	a->reserved = 0;
}

/* Starts and finishes a trace at the name writer_open chose. */
static int start_finish(void)
{
	struct raw_header h;
	struct raw_arch a;
	int rc;

	header(&h, &a);
	rc = writer_init(&h, &a, exe_x, 0) == 0 && writer_finish() == 0 ? 0 : -1;
	writer_forget();
	return rc;
}

/* The names writer_open chooses: the launcher's file itself while it is
 * empty (made when missing); else, or when it is a link, "<stem>.<pid>.raw",
 * then ".<pid>.N.raw" after the last one taken; a relative path refused;
 * a trace that cannot start leaves no file of its own behind. */
static void test_names(void)
{
	char dir[] = "/tmp/profview-names.XXXXXX", given[128], want[160], link_to[128], cmd[200];
	struct raw_header h;
	struct raw_arch a;
	struct rlimit old, rl;
	struct stat st;
	off_t size = 0;

	CHECK(mkdtemp(dir) != NULL);
	header(&h, &a);
	snprintf(given, sizeof(given), "%s/t.raw", dir);
	CHECK(writer_open(given, 1) == 0);
	CHECK_STR(writer_path(), given);
	CHECK(start_finish() == 0);
	CHECK(stat(given, &st) == 0 && (size = st.st_size) > 0);
	/* not empty now */
	CHECK(writer_open(given, 1) == 0);
	snprintf(want, sizeof(want), "%s/t.%d.raw", dir, (int)getpid());
	CHECK_STR(writer_path(), want);
	CHECK(start_finish() == 0);
	CHECK(writer_open(given, 0) == 0);
	snprintf(want, sizeof(want), "%s/t.%d.1.raw", dir, (int)getpid());
	CHECK_STR(writer_path(), want);
	CHECK(start_finish() == 0);
	for (int n = 2; n <= 5; n++) {
		snprintf(want, sizeof(want), "%s/t.%d.%d.raw", dir, (int)getpid(), n);
		close(open(want, O_CREAT | O_WRONLY, 0600));
	}
	CHECK(writer_open(given, 0) == 0);
	snprintf(want, sizeof(want), "%s/t.%d.6.raw", dir, (int)getpid());
	CHECK_STR(writer_path(), want);
	/* a file size limit below what the end needs: no trace, and no file */
	getrlimit(RLIMIT_FSIZE, &old);
	rl = old;
	rl.rlim_cur = 4096;
	setrlimit(RLIMIT_FSIZE, &rl);
	errno = 0;
	CHECK(writer_init(&h, &a, exe_x, 0) == -1 && errno == EFBIG);
	setrlimit(RLIMIT_FSIZE, &old);
	CHECK(!exists(want));
	/* a link where the launcher's file should be, to an empty file of
	 * someone's: not followed, that file left empty */
	snprintf(want, sizeof(want), "%s/victim", dir);
	close(open(want, O_CREAT | O_WRONLY, 0600));
	snprintf(link_to, sizeof(link_to), "%s/l.raw", dir);
	CHECK(symlink(want, link_to) == 0);
	CHECK(writer_open(link_to, 1) == 0);
	CHECK(strcmp(writer_path(), link_to) != 0);
	CHECK(start_finish() == 0);
	CHECK(stat(want, &st) == 0 && st.st_size == 0);
	CHECK(stat(given, &st) == 0 && st.st_size == size);
	errno = 0;
	CHECK(writer_open("relative.raw", 0) == -1 && errno == EINVAL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

/* The program closes the trace's kept descriptor (writer_keep) and opens
 * a file of its own under the same number: the trace grows on through
 * its path and never touches that file.  The trace renamed over by
 * another file: it stops growing (writer_error ESTALE) and never writes
 * into the new one. */
static void test_not_ours(void)
{
	struct tt_trace t;
	char other[sizeof(((struct tt_trace *)0)->path)], keep[sizeof(other)], self[64], target[256];
	unsigned char *seen = calloc(5000, 1);
	uint64_t n = 0, got = 0, crossings = 0;
	int kept = -1, ofd, bad = 0;
	struct stat st;

	CHECK(tt_start(&t, 0) == 0);
	writer_keep();
	/* the kept descriptor: the one that leads to the trace */
	for (int fd = 3; fd < 1024 && kept < 0; fd++) {
		ssize_t len;

		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		len = readlink(self, target, sizeof(target) - 1);
		if (len > 0 && (target[len] = '\0', strcmp(target, t.path) == 0))
			kept = fd;
	}
	CHECK(kept >= 0);
	snprintf(other, sizeof(other), "%s/other", t.dir);
	ofd = open(other, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	CHECK(ofd >= 0 && write(ofd, "mine", 4) == 4);
	if (kept >= 0)
		dup2(ofd, kept);
	/* some chunks' worth */
	for (; n < 1200; n++)
		if (tt_put(0, n, 8192, WRITER_WAIT, 1) == NULL)
			break;
	CHECK_EQ(n, 1200);
	CHECK(stat(other, &st) == 0 && st.st_size == 4);
	/* now renamed over: a link keeps the trace to read */
	snprintf(keep, sizeof(keep), "%s/kept.raw", t.dir);
	CHECK(link(t.path, keep) == 0);
	CHECK(rename(other, t.path) == 0);
	for (; n < 2400; n++)
		if (tt_put(0, n, 8192, WRITER_WAIT, 1) == NULL)
			break;
	CHECK(n < 2400);
	CHECK_EQ(writer_error(), ESTALE);
	CHECK(stat(t.path, &st) == 0 && st.st_size == 4);
	/* the trace itself is cut by its new name no more: what was written
	 * reads back whole up to the zeros after it */
	writer_finish();
	writer_forget();
	unlink(t.path);
	snprintf(t.path, sizeof(t.path), "%s", keep);
	CHECK(tt_read(&t) == 0);
	{
		unsigned char *v[1] = { seen };
		enum raw_next next = walk_all(&t, 1, 5000, v, &got, &crossings, &bad);

		CHECK(next == RAW_NEXT_ZEROS || next == RAW_NEXT_DONE);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(got, n);
	if (kept >= 0)
		close(kept);
	close(ofd);
	tt_remove(&t);
	free(seen);
}

int main(void)
{
	/* the size limit's signal would end the test, not fail a check */
	signal(SIGXFSZ, SIG_IGN);
	test_wrap();
	test_threads();
	test_unpublished();
	test_held_ring();
	test_size_limit();
	test_ring_full();
	test_disk_full();
	test_names();
	test_not_ours();
	return check_done("writer");
}
