/* test-mappings.c - the executable mappings of the preload libraries
 * (collectors/timer/mappings.c), in this process: files mapped here under
 * odd names (blanks, a newline the maps file shows as \012, a name that
 * holds a backslash and "012" itself, one deleted after it was mapped, a
 * path of some 4000 bytes), an anonymous executable page, [vdso]; every
 * executable line of /proc/self/maps written as one RAW_MAPPING record
 * that reads back the same through raw-iter.h, with the build id of each
 * file's note; only the new ones on a later call; the code table at the
 * edges of each range; the initial thread's stack; a fork child's start
 * (mappings_write_start after mappings_atfork(2)): the records of the
 * last full read again, without a read of the maps, unless the loader
 * loaded an object since, when it lists the loader's objects; the unwind
 * tables kept with the mappings, their rows made as a walk needs them; a
 * process's start (mappings_write_start): the loader's objects, each
 * segment as the maps show it, and a later read of the maps adding only
 * what they are not; an attach's start (mappings_write_maps): every line. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "cfi.h"
#include "fakehost.h"
#include "mappings.h"
#include "preload.h"
#include "tracetest.h"

#define PAGE 4096
#define MAX_RECS 512

struct rec {
	uint64_t start, end, pgoff, time_ns;
	uint8_t build_id_len, build_id[31];
	char path[4200];
};

static struct rec recs[MAX_RECS];
static int nrecs;

/* The RAW_MAPPING records of the finished trace t into recs. */
static void read_records(const struct tt_trace *t)
{
	struct raw_iter it;
	struct raw_record r;

	nrecs = 0;
	raw_iter_init(&it, t->buf, t->len, t->start, RAW_NREGS);
	while (raw_iter_next(&it, &r) == RAW_NEXT_RECORD && nrecs < MAX_RECS) {
		struct raw_mapping m;
		struct rec *x = &recs[nrecs];

		if (r.type != RAW_MAPPING)
			continue;
		memcpy(&m, r.data, sizeof(m));
		x->start = m.start;
		x->end = m.end;
		x->pgoff = m.pgoff;
		x->time_ns = m.time_ns;
		x->build_id_len = m.build_id_len;
		memcpy(x->build_id, m.build_id, sizeof(x->build_id));
		CHECK(m.path_len >= 1 && m.path_len <= sizeof(x->path) &&
		      sizeof(m) + m.path_len <= r.size && r.data[sizeof(m) + m.path_len - 1] == '\0');
		if (m.path_len >= 1 && m.path_len <= sizeof(x->path) && sizeof(m) + m.path_len <= r.size)
			memcpy(x->path, r.data + sizeof(m), m.path_len);
		x->path[sizeof(x->path) - 1] = '\0';
		nrecs++;
	}
}

static const struct rec *find_record(uint64_t start, int from)
{
	for (int i = from; i < nrecs; i++)
		if (recs[i].start == start)
			return &recs[i];
	return NULL;
}

/* ---- the files ---- */

/* A file of three pages that is an ELF file with a build id note of
 * 20 bytes, each id_byte + i (none when id_byte is 0). */
static int write_elf(const char *path, uint8_t id_byte)
{
	unsigned char buf[3 * PAGE];
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof(*eh));
	Elf64_Nhdr *nh = (Elf64_Nhdr *)(ph + 1);
	unsigned char *name = (unsigned char *)(nh + 1);
	int fd;

	memset(buf, 0xc3, sizeof(buf));
	memset(buf, 0, PAGE);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = id_byte != 0;
	ph->p_type = PT_NOTE;
	ph->p_offset = (unsigned char *)nh - buf;
	ph->p_filesz = ph->p_memsz = sizeof(*nh) + 4 + 20;
	nh->n_namesz = 4;
	nh->n_descsz = 20;
	nh->n_type = NT_GNU_BUILD_ID;
	memcpy(name, "GNU", 4);
	for (int i = 0; i < 20; i++)
		name[4 + i] = (uint8_t)(id_byte + i);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
	if (fd < 0)
		return -1;
	if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Maps page pgoff / PAGE of fd executable between two inaccessible pages
 * (so that its line in the maps file is its own); fd -1: an anonymous
 * page.  at: where, or NULL.  Returns the page or NULL. */
static char *map_guarded(int fd, off_t pgoff, char *at)
{
	char *r = at != NULL ? at - PAGE : mmap(NULL, 3 * PAGE, PROT_NONE,
						 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *p;

	if (r == MAP_FAILED)
		return NULL;
	if (fd >= 0)
		p = mmap(r + PAGE, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, pgoff);
	else
		p = mmap(r + PAGE, PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			 -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

struct odd {
	const char *what;
	char path[4200];       /* the file's name */
	char written[4200];    /* the path the record must have */
	uint8_t id;            /* its build id's first byte, 0: none */
	off_t pgoff;
	char *at;
};

enum { SPACE, NEWLINE, BACKSLASH, DELETED, LONG, NOID, NODD };
static struct odd odd[NODD];
static char dir[64];
static char *anon;

static void make_files(void)
{
	char *p;
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/profview-maps.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	odd[SPACE].what = "blanks";
	snprintf(odd[SPACE].path, sizeof(odd[0].path), "%s/with  two blanks.so", dir);
	odd[NEWLINE].what = "newline";
	snprintf(odd[NEWLINE].path, sizeof(odd[0].path), "%s/new\nline.so", dir);
	odd[BACKSLASH].what = "backslash";
	snprintf(odd[BACKSLASH].path, sizeof(odd[0].path), "%s/back\\012slash.so", dir);
	odd[DELETED].what = "deleted";
	snprintf(odd[DELETED].path, sizeof(odd[0].path), "%s/gone.so", dir);
	odd[LONG].what = "long";
	p = odd[LONG].path + snprintf(odd[LONG].path, sizeof(odd[0].path), "%s", dir);
	/* over 4000 bytes, in directories of 200 */
	for (int i = 0; i < 20; i++) {
		*p++ = '/';
		memset(p, 'a' + i, 200);
		p += 200;
		*p = '\0';
		CHECK(mkdir(odd[LONG].path, 0700) == 0);
	}
	strcpy(p, "/long.so");
	odd[NOID].what = "no build id";
	snprintf(odd[NOID].path, sizeof(odd[0].path), "%s/noid.so", dir);
	for (int i = 0; i < NODD; i++) {
		odd[i].id = i == NOID ? 0 : (uint8_t)(0x10 * (i + 1));
		odd[i].pgoff = i == SPACE ? PAGE : i == LONG ? 2 * PAGE : 0;
		snprintf(odd[i].written, sizeof(odd[i].written), "%s%s", odd[i].path,
			 i == DELETED ? " (deleted)" : "");
		fd = write_elf(odd[i].path, odd[i].id);
		CHECK(fd >= 0);
		odd[i].at = map_guarded(fd, odd[i].pgoff, NULL);
		CHECK(odd[i].at != NULL);
		close(fd);
	}
	CHECK(strlen(odd[LONG].path) > 4000);
	unlink(odd[DELETED].path);
	anon = map_guarded(-1, 0, NULL);
	CHECK(anon != NULL);
}

static void remove_files(void)
{
	char *p;

	for (int i = 0; i < NODD; i++) {
		if (odd[i].at != NULL)
			munmap(odd[i].at - PAGE, 3 * PAGE);
		if (i != DELETED)
			unlink(odd[i].path);
	}
	munmap(anon - PAGE, 3 * PAGE);
	/* the long path's directories, deepest first */
	while ((p = strrchr(odd[LONG].path, '/')) != NULL && strlen(odd[LONG].path) > strlen(dir)) {
		*p = '\0';
		if (strlen(odd[LONG].path) > strlen(dir))
			rmdir(odd[LONG].path);
	}
	rmdir(dir);
}

/* ---- /proc/self/maps, read here on its own ---- */

struct line {
	uint64_t start, end, pgoff;
	char perms[5];
	char path[4200];
};

static struct line lines[MAX_RECS];
static int nlines;

static void read_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char buf[8192];

	nlines = 0;
	while (f != NULL && fgets(buf, sizeof(buf), f) != NULL && nlines < MAX_RECS) {
		struct line *l = &lines[nlines];
		int at = 0;

		buf[strcspn(buf, "\n")] = '\0';
		if (sscanf(buf, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %*s %*s%n", &l->start,
			   &l->end, l->perms, &l->pgoff, &at) < 4 || at == 0)
			continue;
		while (buf[at] == ' ')
			at++;
		snprintf(l->path, sizeof(l->path), "%s", buf + at);
		nlines++;
	}
	if (f != NULL)
		fclose(f);
}

/* ---- the tests ---- */

/* Every executable line, one record: the same start, end, offset, the
 * path (the odd ones as the file is named); the build ids of the files'
 * notes; nothing for the rest. */
static void test_write(int written, uint64_t before, uint64_t after)
{
	int exec = 0, missing = 0, wrong = 0;

	for (int i = 0; i < nlines; i++) {
		const struct rec *r;

		if (lines[i].perms[2] != 'x') {
			CHECK(find_record(lines[i].start, 0) == NULL);
			continue;
		}
		exec++;
		r = find_record(lines[i].start, 0);
		if (r == NULL) {
			missing++;
			continue;
		}
		wrong += r->end != lines[i].end || r->pgoff != lines[i].pgoff ||
			 r->time_ns < before || r->time_ns > after;
		/* the plain paths as the maps file shows them */
		if (strstr(lines[i].path, dir) == NULL && strcmp(r->path, lines[i].path) != 0) {
			fprintf(stderr, "mapping %#" PRIx64 ": '%s', maps '%s'\n", lines[i].start,
				r->path, lines[i].path);
			wrong++;
		}
	}
	CHECK_EQ(missing, 0);
	CHECK_EQ(wrong, 0);
	CHECK_EQ(written, exec);
	CHECK_EQ(nrecs, exec);
	for (int i = 0; i < NODD; i++) {
		const struct rec *r = find_record((uintptr_t)odd[i].at, 0);

		CHECK(r != NULL);
		if (r == NULL)
			continue;
		CHECK_EQ(r->end, (uintptr_t)odd[i].at + PAGE);
		CHECK_EQ(r->pgoff, odd[i].pgoff);
		CHECK_STR(r->path, odd[i].written);
		if (i == DELETED)
			continue;
		CHECK_EQ(r->build_id_len, odd[i].id ? 20 : 0);
		if (odd[i].id)
			CHECK(r->build_id[0] == odd[i].id && r->build_id[19] == odd[i].id + 19);
	}
	{
		const struct rec *r = find_record((uintptr_t)anon, 0);
		int vdso = 0;

		CHECK(r != NULL && r->path[0] == '\0' && r->end == (uintptr_t)anon + PAGE &&
		      r->build_id_len == 0);
		for (int i = 0; i < nrecs; i++)
			if (strcmp(recs[i].path, "[vdso]") == 0)
				vdso += recs[i].build_id_len > 0;
		CHECK_EQ(vdso, 1);
	}
}

/* The table of code ranges: in at the first and the last byte of each
 * executable page, out right before and right after it. */
static void test_is_code(void)
{
	for (int i = 0; i < NODD; i++) {
		uintptr_t a = (uintptr_t)odd[i].at;

		CHECK(mappings_is_code(a));
		CHECK(mappings_is_code(a + PAGE - 1));
		CHECK(!mappings_is_code(a - 1));
		CHECK(!mappings_is_code(a + PAGE));
	}
	CHECK(mappings_is_code((uintptr_t)anon));
	CHECK(mappings_is_code((uintptr_t)anon + PAGE - 1));
	CHECK(!mappings_is_code((uintptr_t)anon - 1));
	CHECK(!mappings_is_code((uintptr_t)anon + PAGE));
	CHECK(mappings_is_code((uintptr_t)&test_is_code));
	CHECK(!mappings_is_code((uintptr_t)&nrecs));
	CHECK(!mappings_is_code(0));
	CHECK(!mappings_is_code(UINTPTR_MAX));
}

/* mappings_ranges: the executable lines, or the writable private ones,
 * in address order, no more than asked for.  The writable ones change
 * with every allocation (the sanitizers' allocator maps and unmaps as it
 * goes): those are checked for order and for a page of the test's own. */
static void test_ranges(void)
{
	uintptr_t r[MAX_RECS][2];
	char *rw = mmap(NULL, 3 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int n, k = 0, bad = 0, mine = 0;

	read_maps();
	n = mappings_ranges(r, MAX_RECS, 1);
	for (int i = 0; i < nlines; i++)
		if (lines[i].perms[2] == 'x') {
			bad += k >= n || r[k][0] != lines[i].start || r[k][1] != lines[i].end;
			k++;
		}
	CHECK_EQ(n, k);
	CHECK_EQ(bad, 0);
	CHECK_EQ(mappings_ranges(r, 2, 1), 2);
	CHECK(rw != MAP_FAILED && mprotect(rw + PAGE, PAGE, PROT_READ | PROT_WRITE) == 0);
	n = mappings_ranges(r, MAX_RECS, 0);
	for (int i = 0; i < n; i++) {
		bad += r[i][0] >= r[i][1] || (i > 0 && r[i][0] < r[i - 1][1]);
		mine += r[i][0] == (uintptr_t)rw + PAGE && r[i][1] == (uintptr_t)rw + 2 * PAGE;
		/* not an executable one */
		bad += mappings_is_code(r[i][0]);
	}
	CHECK_EQ(bad, 0);
	CHECK_EQ(mine, 1);
	munmap(rw, 3 * PAGE);
}

static void *other_stack(void *arg)
{
	uintptr_t lo, hi, here = (uintptr_t)&lo;

	*(int *)arg = mappings_initial_stack(here, &lo, &hi);
	return NULL;
}

/* The initial thread's stack: around this thread's stack pointer, its top
 * the page after where the loader says the stack begins; not another
 * thread's. */
static void test_initial_stack(void)
{
	extern void *__libc_stack_end;
	uintptr_t lo = 0, hi = 0, here = (uintptr_t)&lo;
	pthread_t th;
	int rc = 0;

	CHECK(mappings_initial_stack(here, &lo, &hi) == 0);
	CHECK(lo <= here && here < hi);
	CHECK_EQ(hi, ((uintptr_t)__libc_stack_end & ~(uintptr_t)(PAGE - 1)) + PAGE);
	CHECK(pthread_create(&th, NULL, other_stack, &rc) == 0);
	pthread_join(th, NULL);
	CHECK_EQ(rc, -1);
}

/* A later call writes only what is new: a mapping made since; nothing
 * when nothing is; one unmapped and mapped again at the same place is new
 * again. */
static void test_only_new(void)
{
	struct tt_trace t;
	char path[128];
	char *at;
	int fd, first;

	snprintf(path, sizeof(path), "%s/later.so", dir);
	CHECK(tt_start(&t, 0) == 0);
	first = mappings_write(0);
	CHECK(first > 0);
	CHECK_EQ(mappings_write(1), 0);
	fd = write_elf(path, 0x77);
	CHECK(fd >= 0);
	at = map_guarded(fd, 0, NULL);
	CHECK(at != NULL);
	CHECK_EQ(mappings_write(1), 1);
	CHECK(mappings_is_code((uintptr_t)at));
	CHECK_EQ(mappings_write(1), 0);
	munmap(at, PAGE);
	CHECK_EQ(mappings_write(1), 0);
	CHECK(!mappings_is_code((uintptr_t)at));
	CHECK(map_guarded(fd, 0, at) == at);
	CHECK_EQ(mappings_write(1), 1);
	close(fd);
	CHECK(tt_finish(&t) == 0);
	read_records(&t);
	CHECK_EQ(nrecs, first + 2);
	{
		const struct rec *a = find_record((uintptr_t)at, first);
		const struct rec *b = a != NULL ? find_record((uintptr_t)at, (int)(a - recs) + 1) : NULL;

		CHECK(a != NULL && b != NULL);
		if (a != NULL && b != NULL) {
			CHECK_STR(a->path, path);
			CHECK_STR(b->path, path);
			CHECK(a->build_id_len == 20 && a->build_id[0] == 0x77);
		}
	}
	munmap(at - PAGE, 3 * PAGE);
	unlink(path);
	tt_remove(&t);
}

/* ---- a fork child's start ---- */

/* The records of a trace that holds mapping records only, one written by
 * start(): their count, into recs. */
static int fork_trace(int (*start)(void), uint64_t *before)
{
	struct tt_trace t;
	int n;

	CHECK(tt_start(&t, 0) == 0);
	*before = preload_now();
	n = start();
	CHECK(tt_finish(&t) == 0);
	read_records(&t);
	tt_remove(&t);
	return n;
}

static int write_all(void)
{
	return mappings_write(0);
}

static int write_start(void)
{
	return mappings_write_start(NULL);
}

/* As a fork child: the lock taken by the prepare handler, a new one in
 * the child's. */
static void as_fork_child(void)
{
	mappings_atfork(0);
	mappings_atfork(2);
}

static void test_fork_child(void)
{
	static struct rec parent[MAX_RECS];
	char path[128];
	uint64_t before;
	char *at;
	int first, n, fd;
	void *lib;

	first = fork_trace(write_all, &before);
	CHECK(first > 0 && first == nrecs);
	memcpy(parent, recs, sizeof(recs));
	/* mapped after that read: only a read of the maps would see it */
	snprintf(path, sizeof(path), "%s/after-fork.so", dir);
	fd = write_elf(path, 0x55);
	CHECK(fd >= 0);
	at = map_guarded(fd, 0, NULL);
	CHECK(at != NULL);
	as_fork_child();
	n = fork_trace(write_start, &before);
	CHECK_EQ(n, first);
	CHECK_EQ(nrecs, first);
	for (int i = 0; i < nrecs && i < first; i++) {
		CHECK(recs[i].start == parent[i].start && recs[i].end == parent[i].end &&
		      recs[i].pgoff == parent[i].pgoff);
		CHECK(recs[i].build_id_len == parent[i].build_id_len &&
		      memcmp(recs[i].build_id, parent[i].build_id, sizeof(recs[i].build_id)) == 0);
		CHECK_STR(recs[i].path, parent[i].path);
		CHECK(recs[i].time_ns >= before);
	}
	CHECK(find_record((uintptr_t)at, 0) == NULL);
	/* once only: the next start lists the loader's objects, which the
	 * file mapped by hand is not */
	n = fork_trace(write_start, &before);
	CHECK(n > 0 && n == nrecs);
	CHECK(find_record((uintptr_t)at, 0) == NULL);
	/* an object loaded since the parent's start: the child lists them
	 * again, the new one too */
	if (dlopen("libutil.so.1", RTLD_NOW | RTLD_NOLOAD) == NULL) {
		int had = n, util = 0;

		lib = dlopen("libutil.so.1", RTLD_NOW);
		CHECK(lib != NULL);
		as_fork_child();
		n = fork_trace(write_start, &before);
		CHECK(n > had);
		for (int i = 0; i < nrecs; i++)
			util += strstr(recs[i].path, "/libutil.so.1") != NULL;
		CHECK(util >= 1);
		CHECK(find_record((uintptr_t)at, 0) == NULL);
		if (lib != NULL)
			dlclose(lib);
	}
	munmap(at - PAGE, 3 * PAGE);
	close(fd);
	unlink(path);
}

/* ---- the unwind tables, kept with the mappings ---- */

/* Walks this thread's stack from here, bounded as the library bounds the
 * initial thread's (mappings_initial_stack): frames[1] must be where this
 * function returns to, frames[2] where its caller does. */
static __attribute__((noinline)) int walk_here(uintptr_t caller_ret, uint64_t *frames, uint32_t *n)
{
	enum cfi_failure why = CFI_FAIL_NONE;
	uintptr_t lo, hi;
	ucontext_t uc;
	int r;

	if (getcontext(&uc) != 0 || mappings_initial_stack((uintptr_t)&uc, &lo, &hi) != 0)
		return -1;
	r = cfi_unwind(&uc, lo, hi, frames, 64, n, &why);
	CHECK_EQ(why, CFI_FAIL_NONE);
	CHECK(*n >= 3 && frames[1] == (uintptr_t)__builtin_return_address(0) &&
	      frames[2] == caller_ret);
	return r;
}

static __attribute__((noinline)) int walk_caller(uint64_t *frames, uint32_t *n)
{
	/* used after the call: no tail call, a frame of its own */
	volatile int r = walk_here((uintptr_t)__builtin_return_address(0), frames, n);

	return r;
}

/* With the unwind tables kept with the mappings (mappings_use_cfi), a
 * walk steps through this file's calls as they were made; the rows are
 * made when a walk first needs them (ehcfi-lazy.c), not again. */
static void test_cfi(void)
{
	uint64_t frames[64], again[64], objects = 0, rows, chunks0, chunks1, chunks2, ns;
	uint32_t n = 0, m = 0;
	struct tt_trace t;

	CHECK(tt_start(&t, 0) == 0);
	mappings_use_cfi();
	CHECK(mappings_write(0) > 0);
	cfi_table_size(&objects, &rows);
	CHECK(objects > 2);
	cfi_cost(&chunks0, &rows, &ns);
	CHECK_EQ(walk_caller(frames, &n), CFI_COMPLETE);
	cfi_cost(&chunks1, &rows, &ns);
	CHECK(chunks1 > chunks0);
	CHECK_EQ(walk_caller(again, &m), CFI_COMPLETE);
	cfi_cost(&chunks2, &rows, &ns);
	CHECK_EQ(chunks2, chunks1);
	CHECK_EQ(m, n);
	/* from this function's caller on, the same frames */
	CHECK(n >= 3 && memcmp(frames + 3, again + 3, (n - 3) * sizeof(frames[0])) == 0);
	CHECK(tt_finish(&t) == 0);
	tt_remove(&t);
}

/* ---- a process's start: the loader's objects, no maps read ---- */

/* Is the file at a the same as the one at b (both exist)? */
static int same_file(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/* mappings_write_start in a process that is no fork child: a record for
 * each executable segment of each object the loader knows (the program,
 * by its path; libc; the vDSO as [vdso], with its build id), each the
 * range, offset and file of a line of the maps; none for the files and the
 * anonymous page mapped by hand; the code table and the initial thread's
 * stack as a read of the maps makes them.  Then a read of the maps (as at
 * the end) writes what the start did not, and none of its records again. */
static void test_start_loaded(void)
{
	extern void *__libc_stack_end;
	struct tt_trace t;
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	uintptr_t lo = 0, hi = 0, here = (uintptr_t)&lo;
	int n, prog = 0, libc = 0, vdso = 0, wrong = 0, written = 0, again = 0;
	static struct rec start[MAX_RECS];
	int nstart;

	CHECK(len > 0);
	exe[len > 0 ? len : 0] = '\0';
	CHECK(tt_start(&t, 0) == 0);
	n = mappings_write_start(exe);
	read_maps();
	CHECK(tt_finish(&t) == 0);
	read_records(&t);
	tt_remove(&t);
	CHECK(n > 0 && n == nrecs);
	for (int i = 0; i < nrecs; i++) {
		const struct rec *r = &recs[i];
		const struct line *l = NULL;

		for (int k = 0; k < nlines && l == NULL; k++)
			if (lines[k].start == r->start)
				l = &lines[k];
		if (l == NULL || l->perms[2] != 'x' || l->end != r->end || l->pgoff != r->pgoff ||
		    (strcmp(r->path, "[vdso]") == 0 ? strcmp(l->path, "[vdso]") != 0
						     : !same_file(r->path, l->path))) {
			fprintf(stderr, "start's record %#" PRIx64 "-%#" PRIx64 " '%s' is no line of the maps\n",
				r->start, r->end, r->path);
			wrong++;
		}
		prog += strcmp(r->path, exe) == 0;
		libc += strstr(r->path, "/libc.so.6") != NULL && r->build_id_len == 20;
		vdso += strcmp(r->path, "[vdso]") == 0 && r->build_id_len > 0;
	}
	CHECK_EQ(wrong, 0);
	CHECK(prog >= 1);
	CHECK_EQ(libc, 1);
	CHECK_EQ(vdso, 1);
	for (int i = 0; i < NODD; i++)
		CHECK(find_record((uintptr_t)odd[i].at, 0) == NULL);
	CHECK(find_record((uintptr_t)anon, 0) == NULL);
	CHECK(mappings_is_code((uintptr_t)&test_start_loaded));
	CHECK(mappings_is_code((uintptr_t)&printf));
	CHECK(!mappings_is_code((uintptr_t)anon));
	CHECK(mappings_initial_stack(here, &lo, &hi) == 0);
	CHECK(lo <= here && here < hi);
	CHECK_EQ(hi, ((uintptr_t)__libc_stack_end & ~(uintptr_t)(PAGE - 1)) + PAGE);

	/* the end's read of the maps: the rest, once */
	memcpy(start, recs, sizeof(recs));
	nstart = nrecs;
	CHECK(tt_start(&t, 0) == 0);
	n = mappings_write(0);
	CHECK(tt_finish(&t) == 0);
	read_records(&t);
	tt_remove(&t);
	CHECK(n == nrecs);
	for (int i = 0; i < nrecs; i++)
		for (int k = 0; k < nstart; k++)
			again += recs[i].start == start[k].start && recs[i].pgoff == start[k].pgoff;
	CHECK_EQ(again, 0);
	for (int i = 0; i < NODD; i++)
		written += find_record((uintptr_t)odd[i].at, 0) != NULL;
	CHECK_EQ(written, NODD);
	CHECK(find_record((uintptr_t)anon, 0) != NULL);
	CHECK(mappings_is_code((uintptr_t)anon));

	/* an attach's start: every executable line, the objects' too */
	CHECK(tt_start(&t, 0) == 0);
	n = mappings_write_maps();
	read_maps();
	CHECK(tt_finish(&t) == 0);
	read_records(&t);
	tt_remove(&t);
	written = 0;
	for (int i = 0; i < nlines; i++)
		written += lines[i].perms[2] == 'x';
	CHECK(n == nrecs && n == written);
	for (int k = 0; k < nstart; k++)
		CHECK(find_record(start[k].start, 0) != NULL);
}

/* The library's own code, from its own program headers: the executable
 * segment that holds its functions (here, linked into this program, the
 * program's), as the loader's list says. */
static int own_segment(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t *r = data, at = (uintptr_t)&mappings_own_code;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && at >= a && at - a < ph->p_memsz) {
			r[0] = a;
			r[1] = a + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

int main(void);

static void test_own_code(void)
{
	uintptr_t lo = 0, hi = 0, want[2] = { 1, 0 };

	CHECK(mappings_own_code(&lo, &hi) == 0);
	dl_iterate_phdr(own_segment, want);
	CHECK(lo == want[0] && hi == want[1]);
	CHECK(lo <= (uintptr_t)&main && (uintptr_t)&main < hi);
	printf("own code: %#lx-%#lx\n", (unsigned long)lo, (unsigned long)hi);
}

int main(void)
{
	struct tt_trace t;
	uint64_t before, after;
	int written;

	make_files();
	CHECK(tt_start(&t, 0) == 0);
	before = preload_now();
	written = mappings_write(0);
	after = preload_now();
	read_maps();
	CHECK(tt_finish(&t) == 0);
	read_records(&t);
	test_write(written, before, after);
	tt_remove(&t);
	test_is_code();
	test_ranges();
	test_initial_stack();
	test_only_new();
	test_fork_child();
	test_cfi();
	test_start_loaded();
	test_own_code();
	remove_files();
	return check_done("mappings");
}
