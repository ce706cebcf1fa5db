/* writer.c - the trace file, written through a shared mapping of it
 *
 * A range of address space is reserved once (PROT_NONE).  The file is grown
 * in chunks with fallocate and each chunk is mapped MAP_FIXED|MAP_SHARED
 * in place, so the records are contiguous in the file and whatever a
 * thread stored is in the page cache even if the process dies the next
 * instant.  Writers claim space with a CAS on the cursor, never past what
 * is mapped, so there are no holes.  Growth is done ahead of need by the
 * one thread that wins the `growing` flag; a signal handler never waits
 * for it: when there is no room it gets NULL and the caller counts a loss.
 * The last WRITER_TAIL bytes mapped are kept for the final records, so a
 * full disk or a file size limit still gets a finished trace.
 *
 * Memory stays flat however long the program runs.  Every writer counts
 * the bytes it reserved in `pending` before it claims them and takes them
 * off once it has published its record, so when `pending` is 0 right
 * after the cursor was read, every byte below that cursor is published and
 * no writer will store there again.  A thread of the library calls
 * writer_release a few times a second: it drops the whole pages below
 * that point from the mapping (MADV_DONTNEED: on a shared file mapping the
 * pages stay in the page cache, dirty if they were, so nothing written is
 * lost), starts their writeback and, a round later, drops them from the
 * page cache too (posix_fadvise), unless collect-timer reads the trace as
 * it is written and frees what it has read itself (--split).  Were the
 * reasoning about `pending` ever wrong, a writer touching a dropped page
 * would only fault it back in from the page cache.
 *
 * The address space is a ring: file offset x is at base + x % ring.  A
 * chunk is mapped over the one a ring's length before it only once that
 * one is released, so no writer can still be inside it.  A record that
 * runs over the end of the ring goes on in a mirror of the ring's first
 * chunk, mapped right after the ring (the same file pages, mapped twice).
 * So the trace can grow past the address space it is written through.
 *
 * No file descriptor is kept open while the program runs: the program may
 * close every descriptor (closefrom) or reuse the number for a file of its
 * own (dup2), and growing or truncating that file would corrupt it.  Each
 * growth opens the trace by its absolute path, checks with fstat that it is
 * still the same file (device and inode), and closes it again; the system
 * calls are made directly so that an open() interposed by the program is
 * not involved.  A program that changes its user id could not open its
 * trace again: before it does, the trace is opened once and the descriptor
 * kept (writer_keep), checked with fstat before every use and forgotten
 * (not closed) when it is no longer the trace.
 *
 * A trace other than the launcher's own starts staged when the run has a
 * file of short images (PROFVIEW_SHORT): its first chunk is anonymous
 * memory, and no file exists.  The first sample makes the file
 * (writer_need_file: created, the staged bytes written into it, and the
 * file mapped over them once no writer is inside them); an image that
 * ends or execs still staged appends its trace to the run's file of short
 * images in one write instead (writer_append_staged), so that a process
 * that never sampled creates nothing at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <sched.h>
#include <time.h>

#include "collect-env.h"
#include "preload.h"
#include "writer.h"
#include "writer-name.h"

#define WRITER_CHUNK ((uint64_t)2 << 20)       /* file growth step */
#define WRITER_AHEAD ((uint64_t)1 << 20)       /* grow when less is left */
#define WRITER_TAIL ((uint64_t)256 << 10)     /* kept for the final records */
#define WRITER_MIN_LIMIT (2 * WRITER_TAIL)     /* smaller file size limit: no trace */
#define WRITER_PAGE ((uint64_t)4096)
/* The ring of address space (a power of two, a multiple of the chunk),
 * and after it the mirror of its first chunk; a record is at most half a
 * chunk. */
#define WRITER_RING_MAX ((uint64_t)1 << 30)
#define WRITER_RING_MIN ((uint64_t)16 << 20)
#define WRITER_MIRROR WRITER_CHUNK
#define WRITER_RECORD_MAX (WRITER_CHUNK / 2)
#define WRITER_NO_LIMIT ((uint64_t)1 << 62)
#define WRITER_RETRY_NS 1000000000ull           /* after a failed growth */
#define WRITER_RETRY_RING_NS 5000000ull         /* after one that waits for a release */
#define WRITER_ZERO_BLOCK (64 << 10)
#define WRITER_RELEASE_TRIES 64
#define WRITER_WAIT_TRIES 100
/* Pages faulted in ahead of the cursor by writer_release: twice what was
 * written since the last call, within these bounds. */
#define WRITER_PREFAULT_MIN ((uint64_t)64 << 10)
#define WRITER_PREFAULT_MAX ((uint64_t)4 << 20)

static struct {
	int fd;                     /* open only between writer_open and writer_init */
	dev_t dev;                  /* identity of the trace file */
	ino_t ino;
	dev_t root_dev;             /* of the root directory then */
	ino_t root_ino;
	int created;                /* the file was created here (not the launcher's) */
	pid_t owner;                /* the process the trace is of (its header's pid) */
	int tailed;                 /* collect-timer frees what it has read of it */
	char *base;                 /* start of the reserved range */
	uint64_t ring;              /* bytes of it the file cycles through */
	uint64_t limit;             /* largest file size we may create */
	_Atomic uint64_t cursor;    /* next free byte */
	_Atomic uint64_t mapped;    /* bytes of file mapped */
	_Atomic uint64_t pending;   /* bytes reserved and not yet published */
	_Atomic uint64_t released;  /* below: published, and dropped from the mapping */
	uint64_t advised;           /* below: dropped from the page cache too */
	uint64_t prefaulted;        /* below: faulted in by writer_release */
	uint64_t last_cursor;       /* the cursor at the last writer_release */
	_Atomic int releasing;      /* a thread is in writer_release */
	_Atomic int growing;        /* a thread is growing the file */
	_Atomic int broken;         /* growth can never succeed again */
	_Atomic int closed;         /* the file was cut to its final size */
	_Atomic uint64_t retry_ns;  /* no growth attempt before this time */
	_Atomic int error;          /* errno of the last failed growth */
	int kept;                   /* fd is kept open (writer_keep) */
	_Atomic int staged;         /* no file yet: the first chunk is anonymous */
	_Atomic int switching;      /* writer_materialize: no new reservation */
	_Atomic int announced;      /* a staged image appended itself before its end */
	size_t out_at;              /* where in names the second one is */
	/* Of a staged trace, one after the other: the run's file of short
	 * images, and the path the trace is to be named after.  With the
	 * fields above, the one page of this that a start writes (each page
	 * first written is a page fault). */
	char names[2 * PATH_MAX];
	char path[PATH_MAX];        /* absolute path of the trace; a staged one has none yet */
} writer = { .fd = -1 };
/* Zeros to extend the file with where fallocate is not supported.  In .lbss:
 * never written, so it costs no memory. */
static char writer_zeros[WRITER_ZERO_BLOCK] PRELOAD_COLD;

static int writer_materialize_locked(int now);
static int writer_append_staged(void);

/* Opens the trace file by its path and checks that it is still ours.
 * Returns the fd or -1.  Signal-safe. */
static int writer_reopen(void)
{
	struct stat st;
	int fd = writer_sys_open(writer.path, O_RDWR | O_NOFOLLOW);

	if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != writer.dev || st.st_ino != writer.ino)) {
		/* replaced or renamed over: never write into another file */
		writer_sys_close(fd);
		fd = -1;
		errno = ESTALE;
	}
	/* the path leads elsewhere from another root (a chroot the library
	 * did not see): EXDEV says so (raw_lost_cause) */
	if (fd < 0 && (errno == ENOENT || errno == ESTALE) && stat("/", &st) == 0 &&
	    (st.st_dev != writer.root_dev || st.st_ino != writer.root_ino))
		errno = EXDEV;
	return fd;
}

/* Should the trace named after path start staged (a run with a file of
 * short images, not yet materializing)?  If so, remembers what the file
 * and the append need.  Not signal-safe. */
static int writer_stage(const char *path)
{
	const char *sp;

	/* (materializing: from the signal handler, which names the file) */
	if (atomic_load(&writer.staged))
		return 0;
	sp = preload_setting(COLLECT_ENV_SHORT);
	if (sp == NULL || sp[0] != '/' || strlen(sp) >= PATH_MAX || strlen(path) >= PATH_MAX)
		return 0;
	strcpy(writer.names, sp);
	writer.out_at = strlen(sp) + 1;
	strcpy(writer.names + writer.out_at, path);
	writer.fd = -1;
	atomic_store(&writer.staged, 1);
	atomic_store(&writer.switching, 0);
	atomic_store(&writer.announced, 0);
	return 1;
}

int writer_open(const char *path, int use_given)
{
	struct stat st;
	int fd = -1, given = 0;

	if (path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	writer.created = 0;
	if (use_given) {
		fd = writer_open_given(path);
		given = fd >= 0;
		if (fd >= 0)
			snprintf(writer.path, sizeof(writer.path), "%s", path);
		else if (errno != EEXIST)
			return -1;
	}
	if (fd < 0 && writer_stage(path))
		return 0;
	if (fd < 0 && (fd = writer_name_create(path, writer.path, sizeof(writer.path))) < 0)
		return -1;
	writer.created = !given;
	if (fstat(fd, &st) != 0) {
		writer_sys_close(fd);
		return -1;
	}
	writer.dev = st.st_dev;
	writer.ino = st.st_ino;
	writer.fd = fd;
	if (stat("/", &st) == 0) {
		writer.root_dev = st.st_dev;
		writer.root_ino = st.st_ino;
	}
	return 0;
}

const char *writer_path(void)
{
	return atomic_load(&writer.staged) ? writer.names + writer.out_at : writer.path;
}

pid_t writer_owner(void)
{
	return writer.owner;
}

/* Extends the file by zeros from `from` to `to` without fallocate. */
static int writer_zero_fill(int fd, uint64_t from, uint64_t to)
{
	while (from < to) {
		size_t n = to - from < WRITER_ZERO_BLOCK ? to - from : WRITER_ZERO_BLOCK;
		ssize_t w = pwrite(fd, writer_zeros, n, (off_t)from);

		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			return -1;
		}
		from += (uint64_t)w;
	}
	return 0;
}

/* The descriptor kept by writer_keep, when it is still our trace (the
 * program may have closed it, and opened another file under its number);
 * -1 otherwise, then forgotten.  Signal-safe. */
static int writer_kept_fd(void)
{
	struct stat st;

	if (writer.fd < 0 || !writer.kept)
		return writer.fd;
	if (fstat(writer.fd, &st) != 0 || st.st_dev != writer.dev || st.st_ino != writer.ino) {
		writer.fd = -1; /* not ours any more: never touch it */
		writer.kept = 0;
	}
	return writer.fd;
}

void writer_keep(void)
{
	int fd;

	if (writer.base == NULL || writer.fd >= 0 || atomic_load(&writer.closed))
		return;
	/* Between growers: the flag keeps writer.fd from changing under one. */
	while (atomic_exchange_explicit(&writer.growing, 1, memory_order_acquire))
		sched_yield();
	/* a staged trace gets its file while the program can still make it */
	if (atomic_load(&writer.staged) && writer_materialize_locked(1) != 0) {
		atomic_store_explicit(&writer.growing, 0, memory_order_release);
		return;
	}
	fd = writer_reopen();
	if (fd >= 0) {
		writer.fd = fd;
		writer.kept = 1;
	}
	atomic_store_explicit(&writer.growing, 0, memory_order_release);
}

int writer_error(void)
{
	return atomic_load_explicit(&writer.error, memory_order_relaxed);
}

static int writer_grow_locked(void);

/* Adds one chunk, and notes why it could not.  The caller holds the
 * `growing` flag. */
static int writer_grow_noted(void)
{
	int rc = writer_grow_locked();

	if (rc != 0)
		atomic_store_explicit(&writer.error, errno, memory_order_relaxed);
	return rc;
}

/* Where file offset off is written: its place in the ring. */
static inline char *writer_at(uint64_t off)
{
	return writer.base + (off & (writer.ring - 1));
}

/* Maps file bytes [off, off + len) of fd at addr.  Returns 0, or -1 with
 * the trace broken: a failed MAP_FIXED may have unmapped our reservation
 * there, so that range is never mapped again. */
static int writer_map(char *addr, uint64_t len, int fd, uint64_t off)
{
	if (mmap(addr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (off_t)off) !=
	    MAP_FAILED) {
		/* a fault maps one page, without reading ahead: the file's
		 * new blocks are zeros, and a first record would otherwise
		 * wait for a whole window of them */
		madvise(addr, len, MADV_RANDOM);
		return 0;
	}
	atomic_store(&writer.broken, 1);
	return -1;
}

/* Maps the first chunk of a staged trace: anonymous memory.  Signal-safe. */
static int writer_stage_map(uint64_t chunk)
{
	if (mmap(writer.base, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0) == MAP_FAILED) {
		atomic_store(&writer.broken, 1);
		return -1;
	}
	atomic_store_explicit(&writer.mapped, chunk, memory_order_release);
	return 0;
}

/* Adds one chunk (smaller near the file size limit).  The caller holds the
 * `growing` flag.  Signal-safe: only system calls. */
static int writer_grow_locked(void)
{
	uint64_t m = atomic_load_explicit(&writer.mapped, memory_order_relaxed);
	uint64_t chunk = WRITER_CHUNK, at = m & (writer.ring - 1);
	int rc, fd, err;

	if (m + chunk > writer.limit)
		chunk = writer.limit > m ? (writer.limit - m) / WRITER_PAGE * WRITER_PAGE : 0;
	if (at + chunk > writer.ring)
		chunk = writer.ring - at;
	if (atomic_load(&writer.broken)) {
		/* as when it broke */
		errno = atomic_load_explicit(&writer.error, memory_order_relaxed);
		if (errno == 0)
			errno = EIO;
		return -1;
	}
	if (chunk == 0) {
		errno = EFBIG; /* the file size limit */
		return -1;
	}
	if (atomic_load(&writer.staged)) {
		/* the first chunk in memory; past it, a file */
		if (m == 0)
			return writer_stage_map(chunk);
		if (writer_materialize_locked(0) != 0)
			return -1;
	}
	/* Where the chunk goes, the file a ring's length before it is mapped:
	 * only once no writer can be there any more. */
	if (m >= writer.ring &&
	    m - writer.ring + chunk > atomic_load_explicit(&writer.released, memory_order_acquire)) {
		errno = EAGAIN;
		return -1;
	}
	fd = writer_kept_fd() >= 0 ? writer.fd : writer_reopen();
	if (fd < 0) {
		if (errno == ESTALE)
			atomic_store(&writer.broken, 1);
		return -1;
	}
	do
		rc = fallocate(fd, 0, (off_t)m, (off_t)chunk);
	while (rc != 0 && errno == EINTR);
	if (rc != 0 && (errno == EOPNOTSUPP || errno == ENOSYS))
		rc = writer_zero_fill(fd, m, m + chunk);
	if (rc != 0)
		goto out;
	rc = writer_map(writer_at(m), chunk, fd, m);
	/* the start of a lap once more after the ring's end, for a record
	 * that runs over it */
	if (rc == 0 && at == 0 && m > 0)
		rc = writer_map(writer.base + writer.ring, chunk, fd, m);
	if (rc == 0)
		atomic_store_explicit(&writer.mapped, m + chunk, memory_order_release);
out:
	err = errno;
	if (fd != writer.fd)
		writer_sys_close(fd);
	errno = err;
	return rc;
}

/* Grows the file by one chunk unless another thread is at it or the last
 * attempt failed less than a second ago.  Never blocks. */
static void writer_try_grow(void)
{
	uint64_t now;

	if (atomic_load_explicit(&writer.growing, memory_order_relaxed))
		return;
	now = preload_now();
	if (now < atomic_load_explicit(&writer.retry_ns, memory_order_relaxed))
		return;
	if (atomic_exchange_explicit(&writer.growing, 1, memory_order_acquire))
		return;
	if (writer_grow_noted() != 0)
		atomic_store_explicit(&writer.retry_ns,
				      now + (errno == EAGAIN ? WRITER_RETRY_RING_NS : WRITER_RETRY_NS),
				      memory_order_relaxed);
	atomic_store_explicit(&writer.growing, 0, memory_order_release);
}

/* Grows the file by one chunk, waiting for another grower (and, when the
 * chunk waits for its place in the ring, for a release).  Not for the
 * signal handler.  Returns 0 or -1. */
static int writer_grow_wait(void)
{
	uint64_t before = atomic_load(&writer.mapped);
	int rc;

	for (int tries = 0;; tries++) {
		struct timespec ms = { 0, 1000000 };

		while (atomic_exchange_explicit(&writer.growing, 1, memory_order_acquire))
			sched_yield();
		/* Another thread may have grown it meanwhile. */
		rc = atomic_load(&writer.mapped) != before ? 0 : writer_grow_noted();
		atomic_store_explicit(&writer.growing, 0, memory_order_release);
		if (rc == 0 || errno != EAGAIN || tries == WRITER_WAIT_TRIES)
			return rc;
		writer_release();
		nanosleep(&ms, NULL);
	}
}

void *writer_reserve(uint32_t size, int wait)
{
	uint64_t cur, m;

	if (writer.base == NULL || atomic_load_explicit(&writer.closed, memory_order_relaxed) ||
	    size > WRITER_RECORD_MAX)
		return NULL;
	cur = atomic_load_explicit(&writer.cursor, memory_order_relaxed);
	for (;;) {
		m = atomic_load_explicit(&writer.mapped, memory_order_acquire);
		/* Samples never take the last WRITER_TAIL bytes: if the file
		 * cannot grow any more, the end records still fit. */
		if (cur + size > m || (wait == WRITER_NOWAIT && cur + size + WRITER_TAIL > m)) {
			if (wait != WRITER_WAIT) {
				if (wait == WRITER_NOWAIT)
					writer_try_grow();
				return NULL;
			}
			if (writer_grow_wait() != 0)
				return NULL;
			cur = atomic_load_explicit(&writer.cursor, memory_order_relaxed);
			continue;
		}
		/* counted before it is claimed (see writer_release) */
		atomic_fetch_add(&writer.pending, size);
		/* counted, then the flag read: writer_materialize sets the
		 * flag, then waits for nothing pending */
		if (atomic_load(&writer.switching)) {
			atomic_fetch_sub(&writer.pending, size);
			if (wait != WRITER_WAIT)
				return NULL;
			sched_yield();
			cur = atomic_load_explicit(&writer.cursor, memory_order_relaxed);
			continue;
		}
		if (atomic_compare_exchange_weak(&writer.cursor, &cur, cur + size))
			break;
		atomic_fetch_sub(&writer.pending, size);
	}
	if (wait != WRITER_FINAL && cur + size + WRITER_AHEAD > m)
		writer_try_grow();
	return writer_at(cur);
}

void writer_publish(void *rec, uint32_t type, uint32_t size)
{
	/* struct raw_rec is {type, size}, little-endian: one 64-bit store. */
	uint64_t word = (uint64_t)type | (uint64_t)size << 32;

	__atomic_store_n((uint64_t *)rec, word, __ATOMIC_RELEASE);
	atomic_fetch_sub(&writer.pending, size);
}

/* Drops file bytes [from, to) (whole pages) from the mapping: the ring,
 * and the mirror after it where they are the start of a lap. */
static void writer_drop(uint64_t from, uint64_t to)
{
	while (from < to) {
		uint64_t at = from & (writer.ring - 1);
		uint64_t n = to - from < writer.ring - at ? to - from : writer.ring - at;

		madvise(writer.base + at, n, MADV_DONTNEED);
		if (from >= writer.ring && at < WRITER_MIRROR)
			madvise(writer.base + writer.ring + at,
				n < WRITER_MIRROR - at ? n : WRITER_MIRROR - at, MADV_DONTNEED);
		from += n;
	}
}

/* Faults in the pages the next records will be written to, from the
 * thread that calls writer_release, so that the program's threads (a
 * sample, a sampled allocation) do not take the page faults of a shared
 * file mapping (ext4: a block reservation each).  Only what is mapped. */
static void writer_prefault(uint64_t cur)
{
	uint64_t want = 2 * (cur - writer.last_cursor), from, to;

	writer.last_cursor = cur;
	want = want < WRITER_PREFAULT_MIN ? WRITER_PREFAULT_MIN :
	       want > WRITER_PREFAULT_MAX ? WRITER_PREFAULT_MAX : want;
	from = (cur + WRITER_PAGE - 1) / WRITER_PAGE * WRITER_PAGE;
	if (from < writer.prefaulted)
		from = writer.prefaulted;
	to = (cur + want) / WRITER_PAGE * WRITER_PAGE;
	if (to > atomic_load(&writer.mapped))
		to = atomic_load(&writer.mapped) / WRITER_PAGE * WRITER_PAGE;
	while (from < to) {
		uint64_t at = from & (writer.ring - 1);
		uint64_t n = to - from < writer.ring - at ? to - from : writer.ring - at;

		/* older kernels (EINVAL): the writers take the faults */
		if (madvise(writer.base + at, n, MADV_POPULATE_WRITE) != 0)
			break;
		from += n;
	}
	writer.prefaulted = from;
}

uint64_t writer_prefault_tick(void)
{
	uint64_t cur, grew;

	if (writer.base == NULL || atomic_load(&writer.closed) || atomic_load(&writer.staged) ||
	    atomic_exchange_explicit(&writer.releasing, 1, memory_order_acquire))
		return 0;
	cur = atomic_load(&writer.cursor);
	grew = cur - writer.last_cursor;
	writer_prefault(cur);
	atomic_store_explicit(&writer.releasing, 0, memory_order_release);
	return grew;
}

void writer_release(void)
{
	uint64_t safe = 0, lo, hi;
	int found = 0, fd;

	/* (staged: anonymous memory, which MADV_DONTNEED would zero) */
	if (writer.base == NULL || atomic_load(&writer.closed) || atomic_load(&writer.staged) ||
	    atomic_exchange_explicit(&writer.releasing, 1, memory_order_acquire))
		return;
	/* Nothing pending right after the cursor was read: every byte below
	 * it is published.  (A writer counts its bytes before it claims
	 * them and uncounts them after it published: seq_cst all through.)
	 * The window with nothing pending is most of the time; a few tries. */
	for (int i = 0; i < WRITER_RELEASE_TRIES && !found; i++) {
		safe = atomic_load(&writer.cursor);
		found = atomic_load(&writer.pending) == 0;
		if (!found)
			sched_yield();
	}
	lo = atomic_load_explicit(&writer.released, memory_order_relaxed);
	hi = safe / WRITER_PAGE * WRITER_PAGE;
	if (!found || hi <= lo)
		goto out;
	writer_drop(lo, hi);
	if (!writer.tailed && (fd = writer_reopen()) >= 0) {
		/* written back now, out of the page cache once clean: the
		 * range of the previous round */
		sync_file_range(fd, (off_t)lo, (off_t)(hi - lo), SYNC_FILE_RANGE_WRITE);
		if (lo > writer.advised)
			posix_fadvise(fd, (off_t)writer.advised, (off_t)(lo - writer.advised),
				      POSIX_FADV_DONTNEED);
		writer.advised = lo;
		writer_sys_close(fd);
	}
	atomic_store_explicit(&writer.released, hi, memory_order_release);
out:
	if (!atomic_load(&writer.closed))
		writer_prefault(atomic_load(&writer.cursor));
	atomic_store_explicit(&writer.releasing, 0, memory_order_release);
}

uint64_t writer_unreleased(void)
{
	return atomic_load_explicit(&writer.cursor, memory_order_relaxed) -
	       atomic_load_explicit(&writer.released, memory_order_relaxed);
}

int writer_init(const struct raw_header *header, const struct raw_arch *arch, const char *exe,
		int tailed)
{
	struct rlimit rl;
	uint64_t ring;
	char *rec;
	int err;

	writer.owner = (pid_t)header->pid;
	atomic_store(&writer.cursor, 0);
	atomic_store(&writer.mapped, 0);
	atomic_store(&writer.pending, 0);
	atomic_store(&writer.released, 0);
	atomic_store(&writer.releasing, 0);
	atomic_store(&writer.growing, 0);
	atomic_store(&writer.broken, 0);
	atomic_store(&writer.closed, 0);
	atomic_store(&writer.retry_ns, 0);
	atomic_store(&writer.error, 0);
	writer.advised = 0;
	writer.prefaulted = 0;
	writer.last_cursor = 0;
	writer.kept = 0;
	/* only the launcher's own file is read as it is written */
	writer.tailed = tailed && !writer.created;
	writer.base = NULL;
	ring = WRITER_RING_MAX;
	/* tests make it small, to go round it in a short run */
	if (preload_setting(COLLECT_ENV_TEST_RING) != NULL) {
		uint64_t want = strtoull(preload_setting(COLLECT_ENV_TEST_RING), NULL, 10);

		while (ring > want && ring > WRITER_RING_MIN)
			ring /= 2;
	}
	for (; ring >= WRITER_RING_MIN; ring /= 2) {
		void *p = mmap(NULL, ring + WRITER_MIRROR, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p != MAP_FAILED) {
			writer.base = p;
			writer.ring = ring;
			break;
		}
	}
	if (writer.base == NULL)
		goto fail;
	writer.limit = WRITER_NO_LIMIT;
	/* Growing past RLIMIT_FSIZE would raise SIGXFSZ in the program. */
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < writer.limit)
		writer.limit = rl.rlim_cur / WRITER_PAGE * WRITER_PAGE;
	if (writer.limit < WRITER_MIN_LIMIT) {
		errno = EFBIG;
		goto fail;
	}
	if (writer_grow_wait() != 0)
		goto fail;
	rec = writer_reserve(header->header_size, WRITER_WAIT);
	if (rec == NULL)
		goto fail;
	memcpy(rec, header, sizeof(*header));
	memcpy(rec + sizeof(*header), arch, sizeof(*arch));
	memcpy(rec + raw_header_fixed_size(header->version), exe, header->exe_len);
	/* the header is not a record: nothing publishes it */
	atomic_fetch_sub(&writer.pending, header->header_size);
	if (writer.fd >= 0)
		writer_sys_close(writer.fd);
	writer.fd = -1;
	return 0;
fail:
	err = errno;
	if (writer.base != NULL)
		munmap(writer.base, writer.ring + WRITER_MIRROR);
	writer.base = NULL;
	if (writer.fd >= 0)
		writer_sys_close(writer.fd);
	writer.fd = -1;
	/* nothing was recorded: leave no file behind but the launcher's */
	if (writer.created)
		unlink(writer.path);
	atomic_store(&writer.staged, 0);
	errno = err;
	return -1;
}

int writer_finish(void)
{
	uint64_t used = atomic_load(&writer.cursor);
	int rc, fd;

	if (writer.base == NULL)
		return -1;
	if (atomic_load(&writer.staged)) {
		/* nothing sampled: one write to the run's file of short
		 * images; failing that, a file of its own */
		atomic_store(&writer.closed, 1);
		if (writer_append_staged() == 0) {
			atomic_store(&writer.broken, 1);
			return 0;
		}
		if (atomic_exchange_explicit(&writer.growing, 1, memory_order_acquire))
			return -1;
		rc = writer_materialize_locked(1);
		atomic_store_explicit(&writer.growing, 0, memory_order_release);
		if (rc != 0)
			return -1;
		used = atomic_load(&writer.cursor);
	}
	/* Nothing may be written past `used` once the file is cut there. */
	atomic_store(&writer.closed, 1);
	atomic_store(&writer.broken, 1);
	fd = writer_kept_fd() >= 0 ? writer.fd : writer_reopen();
	if (fd < 0)
		return -1;
	do
		rc = ftruncate(fd, (off_t)used);
	while (rc != 0 && errno == EINTR);
	if (fd != writer.fd)
		writer_sys_close(fd);
	return rc;
}

void writer_forget(void)
{
	if (writer.base != NULL)
		munmap(writer.base, writer.ring + WRITER_MIRROR);
	writer.base = NULL;
	atomic_store(&writer.staged, 0);
	atomic_store(&writer.switching, 0);
	/* a kept descriptor is the child's copy: ours to close, if it is
	 * still the trace */
	if (writer_kept_fd() >= 0)
		writer_sys_close(writer.fd);
	writer.fd = -1;
	writer.kept = 0;
	atomic_store(&writer.mapped, 0);
	atomic_store(&writer.cursor, 0);
	atomic_store(&writer.pending, 0);
	atomic_store(&writer.released, 0);
}

/* ---- staged traces ---- */

/* Makes the file of a staged trace: named as writer_open names it, the
 * staged bytes written into it, and the file mapped over them.  New
 * reservations wait (or fail, outside WRITER_WAIT) meanwhile; when a
 * writer stays inside the staged bytes (the thread this interrupts, say)
 * it gives up with EAGAIN, to be tried again.  now: not held back by an
 * earlier failure.  The caller holds the `growing` flag.  Signal-safe. */
static int writer_materialize_locked(int now)
{
	uint64_t m = atomic_load(&writer.mapped), len, done = 0;
	int rc = -1, err, fd;

	if (!atomic_load(&writer.staged))
		return 0;
	if (!now && preload_now() < atomic_load_explicit(&writer.retry_ns, memory_order_relaxed)) {
		errno = EAGAIN;
		return -1;
	}
	atomic_store(&writer.switching, 1);
	for (int i = 0; i < WRITER_RELEASE_TRIES && atomic_load(&writer.pending) != 0; i++)
		sched_yield();
	if (atomic_load(&writer.pending) != 0) {
		errno = EAGAIN;
		goto out;
	}
	len = atomic_load(&writer.cursor);
	if (writer_open(writer.names + writer.out_at, 0) != 0)
		goto out;
	fd = writer.fd;
	do
		rc = fallocate(fd, 0, 0, (off_t)m);
	while (rc != 0 && errno == EINTR);
	if (rc != 0 && (errno == EOPNOTSUPP || errno == ENOSYS))
		rc = writer_zero_fill(fd, 0, m);
	while (rc == 0 && done < len) {
		ssize_t w = pwrite(fd, writer.base + done, (size_t)(len - done), (off_t)done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			rc = -1;
		else
			done += (uint64_t)w;
	}
	if (rc == 0)
		rc = writer_map(writer.base, m, fd, 0);
	err = errno;
	writer_sys_close(fd);
	writer.fd = -1;
	if (rc == 0)
		atomic_store(&writer.staged, 0);
	else if (writer.created)
		unlink(writer.path);
	errno = err;
out:
	if (rc != 0) {
		atomic_store_explicit(&writer.error, errno, memory_order_relaxed);
		atomic_store_explicit(&writer.retry_ns, preload_now() + WRITER_RETRY_RING_NS,
				      memory_order_relaxed);
	}
	atomic_store(&writer.switching, 0);
	return rc;
}

int writer_need_file(void)
{
	int rc;

	if (!atomic_load_explicit(&writer.staged, memory_order_relaxed))
		return 0;
	if (atomic_exchange_explicit(&writer.growing, 1, memory_order_acquire))
		return -1;
	rc = writer_materialize_locked(0);
	atomic_store_explicit(&writer.growing, 0, memory_order_release);
	return rc;
}

int writer_staged(void)
{
	return atomic_load(&writer.staged);
}

/* Appends the staged trace, framed (struct raw_short), to the run's file
 * of short images, in one write.  Call when no other writer can run.
 * Returns 0 or -1.  Signal-safe. */
static int writer_append_staged(void)
{
	uint64_t len = atomic_load(&writer.cursor);
	struct raw_short frame;
	struct iovec iov[2];
	struct stat st;
	ssize_t w;
	int fd;

	if (writer.base == NULL || writer.names[0] == '\0' || len > RAW_SHORT_MAX ||
	    atomic_load(&writer.pending) != 0)
		return -1;
	/* the launcher's, made before the program started: never created here */
	fd = writer_sys_open(writer.names, O_WRONLY | O_APPEND | O_NOFOLLOW);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		writer_sys_close(fd);
		return -1;
	}
	memcpy(frame.magic, RAW_SHORT_MAGIC, RAW_MAGIC_LEN);
	frame.size = len;
	iov[0].iov_base = &frame;
	iov[0].iov_len = sizeof(frame);
	iov[1].iov_base = writer.base;
	iov[1].iov_len = (size_t)len;
	do
		w = writev(fd, iov, 2);
	while (w < 0 && errno == EINTR);
	writer_sys_close(fd);
	return w == (ssize_t)(sizeof(frame) + len) ? 0 : -1;
}

void writer_flush_staged(int ending)
{
	if (!atomic_load(&writer.staged) || writer.base == NULL)
		return;
	/* An image that goes on (the exec failed; the parent of a fork or
	 * a vfork child) appends again later: the launcher keeps the last
	 * of an image's frames.  Until then this one says that the image
	 * exists, so that the traces of its children are the run's even if
	 * it is killed before it appends again: once is enough for that. */
	if ((!ending || getpid() != writer.owner) && atomic_exchange(&writer.announced, 1))
		return;
	writer_append_staged();
}
