/* mappings.c - RAW_MAPPING records of the executable mappings, with build ids
 *
 * At the start and after a dlopen, from the dynamic loader's list of
 * objects (dl_iterate_phdr, which includes the vDSO): each executable
 * segment's pages, named as the loader names the object.  Otherwise (an
 * object unloaded, one named by a relative path, an attached process, the
 * end of one that ran code of no object) from /proc/self/maps: start, end
 * and offset exactly as it shows them.  The build id comes from the
 * object's PT_NOTE segment in memory when the loader knows the object,
 * else from the file's program headers.  Runs outside the signal handler
 * only.
 *
 * A read of the maps remembers a hash of every executable line it saw, so
 * that after a dlopen only the new mappings are written; each write
 * rebuilds the sorted table of executable ranges that the handler's leaf
 * check reads.  That table is
 * published as one pointer (count and ranges together); the one it replaces
 * is freed only when no handler is running (the host's handlers_idle), else
 * kept for a later call, so a handler never reads freed memory.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cfi.h"
#include "mappings.h"
#include "host.h"
#include "preload.h"
#include "procmaps.h"
#include "writer.h"

#define MAPPINGS_MAX_OBJECTS 1024
#define MAPPINGS_BUILD_ID_MAX PROCMAPS_BUILD_ID_MAX
#define MAPPINGS_RETIRED_MAX 64

struct mappings_object {
	uintptr_t lo, hi;               /* span of its PT_LOAD segments */
	uint8_t build_id[MAPPINGS_BUILD_ID_MAX];
	uint8_t build_id_len;
};

struct mappings_objects {
	struct mappings_object *v;
	size_t n, cap;
};

/* The executable ranges, sorted, as one allocation. */
struct mappings_code {
	size_t n;
	uintptr_t r[][2];
};

static struct {
	pthread_mutex_t lock;            /* serializes mappings_write */
	uint64_t *seen;                  /* hashes of the lines written, sorted */
	size_t nseen;
	unsigned long long adds;         /* dlpi_adds at the last write */
	int cfi;                         /* keep the unwind tables too */
	struct mappings_code *_Atomic code;
	struct mappings_code *retired[MAPPINGS_RETIRED_MAX];
	size_t nretired;
	/* the mapping that holds the initial thread's stack (the one with
	 * __libc_stack_end), and the end of the one below it; 0 when the
	 * last read did not find it */
	uintptr_t stack_to, stack_below;
	/* the records the last read of every line wrote, one after the
	 * other, for a fork child to write again (mappings_write_start);
	 * NULL after a read of only the new lines */
	char *kept;
	size_t nkept, kept_cap;
	unsigned long long kept_adds, kept_subs;  /* the loader's counts then */
	int forked;                      /* a fork child that has not started its trace */
	/* the ranges [start, end) at offset the start wrote from the
	 * loader's objects (mappings_write_loaded), named as the loader
	 * names them: a read of the maps writes them no second time, under
	 * the kernel's name; forgotten when the loader unloads an object */
	uintptr_t (*loaded)[3];
	size_t nloaded;
	unsigned long long loaded_subs;
	/* every record written is of a range in loaded: the start's and the
	 * dlopens' since were read from the loader's list, none from the
	 * maps (which may have written ranges of objects loaded since,
	 * under the kernel's name, that loaded does not hold) */
	int loaded_all;
} mappings = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Where the dynamic loader says the initial thread's stack begins
 * (ld.so exports it; glibc's pthread_getattr_np starts from it too). */
extern void *__libc_stack_end;

static int mappings_collect_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct mappings_objects *objs = data;
	struct mappings_object *o;
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	(void)size;
	if (objs->n == objs->cap)
		return 1;
	o = &objs->v[objs->n];
	memset(o, 0, sizeof(*o));
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD) {
			if (a < lo)
				lo = a;
			if (a + ph->p_memsz > hi)
				hi = a + ph->p_memsz;
		}
	}
	o->build_id_len = procmaps_loaded_build_id(info, o->build_id);
	if (lo < hi) {
		o->lo = lo;
		o->hi = hi;
		objs->n++;
	}
	return 0;
}

/* Adds a copy of a record being written to the kept ones, when they are
 * being kept (a read of every line).  Lock held. */
static void mappings_keep(const struct raw_mapping *rec, uint32_t size)
{
	if (mappings.kept == NULL)
		return;
	if (mappings.kept_cap - mappings.nkept < size) {
		size_t cap = 2 * mappings.kept_cap + size;
		char *p = realloc(mappings.kept, cap);

		if (p == NULL) {
			free(mappings.kept);
			mappings.kept = NULL;
			return;
		}
		mappings.kept = p;
		mappings.kept_cap = cap;
	}
	memcpy(mappings.kept + mappings.nkept, rec, size);
	/* (the record's own header is stored when it is published) */
	((struct raw_rec *)(mappings.kept + mappings.nkept))->type = RAW_MAPPING;
	((struct raw_rec *)(mappings.kept + mappings.nkept))->size = size;
	mappings.nkept += size;
}

/* Starts keeping the records of a read of every line, or stops with a
 * read of only the new ones.  Lock held. */
static void mappings_keep_begin(int only_new, const unsigned long long *counts)
{
	if (only_new) {
		free(mappings.kept);
		mappings.kept = NULL;
		return;
	}
	if (mappings.kept == NULL) {
		mappings.kept_cap = 4096;
		mappings.kept = malloc(mappings.kept_cap);
	}
	mappings.nkept = 0;
	mappings.kept_adds = counts[0];
	mappings.kept_subs = counts[1];
}

/* Writes one record: a mapping's range, offset, path and build id (len
 * bytes of bid, 0 for none to find in the file).  Returns 0, or -1 when
 * out of space.  Lock held. */
static int mappings_emit(unsigned long long start, unsigned long long end,
			 unsigned long long pgoff, const char *path, const uint8_t *bid, uint8_t len)
{
	uint32_t path_len = (uint32_t)strlen(path) + 1, size;
	struct raw_mapping *rec;

	size = raw_pad((uint32_t)sizeof(*rec) + path_len);
	rec = writer_reserve(size, 1);
	if (rec == NULL)
		return -1;
	rec->start = start;
	rec->end = end;
	rec->pgoff = pgoff;
	rec->time_ns = preload_now();
	rec->path_len = path_len;
	memcpy(rec + 1, path, path_len);
	rec->build_id_len = len;
	if (len > 0)
		memcpy(rec->build_id, bid, len);
	if (len == 0 && path[0] == '/')
		rec->build_id_len = procmaps_file_build_id(path, rec->build_id);
	mappings_keep(rec, size);
	writer_publish(rec, RAW_MAPPING, size);
	return 0;
}

/* Writes one record for an executable line.  Returns 0, or -1 when out of
 * space. */
static int mappings_write_line(unsigned long long start, unsigned long long end,
			       unsigned long long pgoff, const char *path,
			       const struct mappings_objects *objs)
{
	char named[PATH_MAX];

	path = procmaps_unescape(path, named, sizeof(named));
	for (size_t i = 0; i < objs->n; i++)
		if (start >= objs->v[i].lo && start < objs->v[i].hi)
			return mappings_emit(start, end, pgoff, path, objs->v[i].build_id,
					     objs->v[i].build_id_len);
	return mappings_emit(start, end, pgoff, path, NULL, 0);
}

/* Notes the mapping of line when it holds the initial thread's stack
 * start; *below is the end of the line before it, and becomes this one's. */
static void mappings_note_stack(const char *line, uintptr_t *below)
{
	unsigned long long start, end, pgoff;
	uintptr_t at = (uintptr_t)__libc_stack_end;
	const char *path;
	char perms[5];

	if (procmaps_split(line, &start, &end, perms, &pgoff, &path) != 0)
		return;
	if (at >= start && at < end) {
		mappings.stack_to = (uintptr_t)end;
		mappings.stack_below = *below;
	}
	*below = (uintptr_t)end;
}

int mappings_initial_stack(uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
	uintptr_t page = 4096, top, size, to, below;
	struct rlimit rl;

	pthread_mutex_lock(&mappings.lock);
	to = mappings.stack_to;
	below = mappings.stack_below;
	pthread_mutex_unlock(&mappings.lock);
	/* not read, or not on that stack (a thread's, or the child of a fork
	 * made by one) */
	if (to == 0 || sp >= to || sp < below || getrlimit(RLIMIT_STACK, &rl) != 0)
		return -1;
	/* the mapping underneath not known (the start read no maps): the
	 * limit alone, which the loader's mappings lie beyond */
	if (below == 0 && (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur <= to - sp))
		return -1;
	/* as pthread_getattr_np: from the page after __libc_stack_end down by
	 * the limit, less what lies above that page, and never below the
	 * mapping underneath */
	top = ((uintptr_t)__libc_stack_end & ~(page - 1)) + page;
	size = (uintptr_t)rl.rlim_cur - (to - top);
	if (rl.rlim_cur == RLIM_INFINITY || size > top - below)
		size = top - below;
	*lo = top - size;
	*hi = top;
	return 0;
}

/* FNV-1a of a whole maps line: addresses, offset, device, inode, path. */
static uint64_t mappings_hash(const char *line)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *line != '\0'; line++) {
		h ^= (unsigned char)*line;
		h *= 0x100000001b3ull;
	}
	return h;
}

static int mappings_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int mappings_cmp_range(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

static int mappings_count_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info;
	(void)size;
	++*(size_t *)data;
	return 0;
}

static int mappings_read_adds(struct dl_phdr_info *info, size_t size, void *data)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
		*(unsigned long long *)data = info->dlpi_adds;
	return 1; /* the first object is enough */
}

/* The loader's counts of objects loaded and unloaded: [0] adds, [1] subs. */
static int mappings_read_counts(struct dl_phdr_info *info, size_t size, void *data)
{
	unsigned long long *c = data;

	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		c[0] = info->dlpi_adds;
		c[1] = info->dlpi_subs;
	}
	return 1;
}

static int mappings_seen(uint64_t h)
{
	return mappings.seen != NULL &&
	       bsearch(&h, mappings.seen, mappings.nseen, sizeof(h), mappings_cmp_u64) != NULL;
}

/* Publishes a new code table and frees the replaced ones no handler can
 * still be reading.  Lock held. */
static void mappings_publish_code(struct mappings_code *code)
{
	struct mappings_code *old = atomic_exchange(&mappings.code, code);

	if (old != NULL) {
		if (mappings.nretired < MAPPINGS_RETIRED_MAX)
			mappings.retired[mappings.nretired++] = old;
		/* else: leaked, a few KiB, rather than risk a handler */
	}
	if (mappings.nretired > 0 && preload_host.handlers_idle()) {
		for (size_t i = 0; i < mappings.nretired; i++)
			free(mappings.retired[i]);
		mappings.nretired = 0;
	}
}

/* Was [start, end) at pgoff written by the start from the loader's
 * objects, with none unloaded since?  Lock held. */
static int mappings_was_loaded(unsigned long long start, unsigned long long end,
			       unsigned long long pgoff)
{
	for (size_t i = 0; i < mappings.nloaded; i++)
		if (mappings.loaded[i][0] == start && mappings.loaded[i][1] == end &&
		    mappings.loaded[i][2] == pgoff)
			return 1;
	return 0;
}

int mappings_write(int only_new)
{
	struct mappings_objects objs = { 0 };
	struct mappings_code *code = NULL;
	uint64_t *seen = NULL;
	size_t nseen = 0, nlines = 1, nobjs = 0;
	unsigned long long counts[2] = { 0, 0 };
	char *maps, *line, *next;
	uintptr_t below = 0;
	int count = 0;

	pthread_mutex_lock(&mappings.lock);
	mappings.forked = 0;
	mappings.stack_to = mappings.stack_below = 0;
	/* Read before the maps: a load in between is seen by the next call. */
	dl_iterate_phdr(mappings_read_counts, counts);
	if (counts[1] != mappings.loaded_subs)
		mappings.nloaded = 0;
	mappings.loaded_all = 0;
	mappings_keep_begin(only_new, counts);
	maps = procmaps_read();
	if (maps == NULL) {
		count = -1;
		goto out;
	}
	for (line = maps; (line = strchr(line, '\n')) != NULL; line++)
		nlines++;
	seen = malloc(nlines * sizeof(*seen));
	code = malloc(sizeof(*code) + nlines * sizeof(code->r[0]));
	if (code != NULL)
		code->n = 0;
	/* as many as are loaded (a dlopen in between is seen by the next
	 * call), rather than the most there may be: a short process's
	 * heap stays a few pages */
	dl_iterate_phdr(mappings_count_object, &nobjs);
	if (nobjs > MAPPINGS_MAX_OBJECTS)
		nobjs = MAPPINGS_MAX_OBJECTS;
	objs.v = malloc(nobjs * sizeof(*objs.v));
	objs.cap = objs.v != NULL ? nobjs : 0;
	if (objs.v != NULL)
		dl_iterate_phdr(mappings_collect_object, &objs);
	for (line = maps; *line != '\0'; line = next) {
		unsigned long long start, end, pgoff;
		const char *path;
		uint64_t h;

		next = strchr(line, '\n');
		if (next != NULL)
			*next++ = '\0';
		else
			next = line + strlen(line);
		mappings_note_stack(line, &below);
		if (!procmaps_parse(line, &start, &end, &pgoff, &path))
			continue;
		h = mappings_hash(line);
		if (seen != NULL)
			seen[nseen++] = h;
		if (code != NULL) {
			code->r[code->n][0] = (uintptr_t)start;
			code->r[code->n][1] = (uintptr_t)end;
			code->n++;
		}
		if (count < 0 || (only_new && mappings_seen(h)) ||
		    mappings_was_loaded(start, end, pgoff))
			continue;
		if (mappings_write_line(start, end, pgoff, path, &objs) < 0)
			count = -1;
		else
			count++;
	}
	if (seen != NULL) {
		qsort(seen, nseen, sizeof(*seen), mappings_cmp_u64);
		free(mappings.seen);
		mappings.seen = seen;
		mappings.nseen = nseen;
		seen = NULL;
	}
	if (code != NULL) {
		qsort(code->r, code->n, sizeof(code->r[0]), mappings_cmp_range);
		mappings_publish_code(code);
		code = NULL;
	}
	mappings.adds = counts[0];
	if (count < 0) {
		/* not all of them: a fork child reads them itself */
		free(mappings.kept);
		mappings.kept = NULL;
	}
	if (mappings.cfi)
		cfi_refresh(preload_host.handlers_idle);
out:
	pthread_mutex_unlock(&mappings.lock);
	free(seen);
	free(code);
	free(objs.v);
	free(maps);
	return count;
}

/* The start's look at the loaded objects: their executable segments as
 * they are added, and whether each is named as a file. */
struct mappings_loading {
	struct mappings_code *code;
	uintptr_t (*loaded)[3];  /* as mappings.loaded */
	size_t n;                /* segments in loaded */
	size_t cap;              /* segments there is room for */
	int only_new;            /* write only those mappings.loaded has not */
	uintptr_t vdso;          /* where the kernel put the vDSO */
	const char *exe;         /* the program's path */
	int count;               /* records written, -1 when out of space */
	int named;               /* each object named by an absolute path */
};

/* Is it the vDSO: its first page at AT_SYSINFO_EHDR? */
static int mappings_is_vdso(const struct dl_phdr_info *info, uintptr_t vdso)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && ph->p_offset == 0)
			return vdso != 0 && info->dlpi_addr + ph->p_vaddr == vdso;
	}
	return 0;
}

static int mappings_size_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	struct mappings_loading *l = data;

	(void)size;
	if (info->dlpi_name[0] != '\0' && info->dlpi_name[0] != '/' &&
	    !mappings_is_vdso(info, l->vdso))
		l->named = 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X))
			l->cap++;
	return 0;
}

/* Writes the records of one object's executable segments, each the range
 * of pages the kernel shows for it. */
static int mappings_add_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	struct mappings_loading *l = data;
	const uintptr_t page = 4096;
	const char *path = info->dlpi_name;
	uint8_t bid[MAPPINGS_BUILD_ID_MAX], len;

	(void)size;
	if (path[0] == '\0')
		path = l->exe;
	else if (mappings_is_vdso(info, l->vdso))
		path = "[vdso]";
	len = procmaps_loaded_build_id(info, bid);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr, *r;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_memsz == 0 ||
		    l->n == l->cap)
			continue;
		r = l->loaded[l->n++];
		r[0] = a & ~(page - 1);
		r[1] = (a + ph->p_memsz + page - 1) & ~(page - 1);
		r[2] = (uintptr_t)ph->p_offset & ~(page - 1);
		/* (already in the code table, which is copied) */
		if (l->only_new && mappings_was_loaded(r[0], r[1], r[2]))
			continue;
		l->code->r[l->code->n][0] = r[0];
		l->code->r[l->code->n][1] = r[1];
		l->code->n++;
		if (l->count >= 0 && mappings_emit(r[0], r[1], r[2], path, bid, len) == 0)
			l->count++;
		else
			l->count = -1;
	}
	return 0;
}

/* The initial thread's stack ends where the kernel put the program's name
 * (AT_EXECFN), the first string it copies to the top of the stack, and a
 * null pointer after it: unknown when that is not a page's end (a program
 * started by naming ld.so, which moves the name).  Lock held. */
static void mappings_note_initial_stack(void)
{
	const char *fn = (const char *)getauxval(AT_EXECFN);
	uintptr_t to;

	mappings.stack_to = mappings.stack_below = 0;
	if (fn == NULL)
		return;
	to = (uintptr_t)fn + strlen(fn) + 1 + sizeof(void *);
	if ((to & 4095) == 0 && (uintptr_t)__libc_stack_end < to)
		mappings.stack_to = to;
}

/* What a read of the loader's list l made, at the loader's counts:
 * the segments it holds, all written, and the code table.  Lock held. */
static void mappings_adopt(struct mappings_loading *l, const unsigned long long *counts)
{
	free(mappings.loaded);
	mappings.loaded = l->loaded;
	mappings.nloaded = l->n;
	mappings.loaded_subs = counts[1];
	mappings.loaded_all = 1;
	qsort(l->code->r, l->code->n, sizeof(l->code->r[0]), mappings_cmp_range);
	mappings_publish_code(l->code);
	mappings.adds = counts[0];
	if (l->count < 0) {
		/* not all of them: a fork child reads them itself */
		free(mappings.kept);
		mappings.kept = NULL;
	}
}

/* The start's records from the loader's list of objects (the program,
 * its libraries, the vDSO) rather than from /proc/self/maps: all that the
 * first samples need, without the kernel printing every mapping or this
 * parsing it.  Mappings of no object (a JIT's) are read with the maps at
 * the end or at a dlopen.  Returns the number of records, -1 when out of
 * space, or -2 when an object is not named by an absolute path (the maps
 * are to be read instead).  Lock held. */
static int mappings_write_loaded(const unsigned long long *counts, const char *exe)
{
	struct mappings_loading l = { .vdso = getauxval(AT_SYSINFO_EHDR), .named = 1 };
	char buf[PATH_MAX];

	if (exe == NULL) {
		ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

		buf[n > 0 ? n : 0] = '\0';
		exe = buf;
	}
	if (exe[0] != '/')
		return -2;
	l.exe = exe;
	dl_iterate_phdr(mappings_size_loaded, &l);
	if (!l.named)
		return -2;
	l.code = malloc(sizeof(*l.code) + l.cap * sizeof(l.code->r[0]));
	l.loaded = malloc(l.cap * sizeof(*l.loaded) + 1);
	if (l.code == NULL || l.loaded == NULL) {
		free(l.code);
		free(l.loaded);
		return -2;
	}
	l.code->n = 0;
	mappings.forked = 0;
	mappings_keep_begin(0, counts);
	dl_iterate_phdr(mappings_add_loaded, &l);
	mappings_adopt(&l, counts);
	mappings_note_initial_stack();
	if (mappings.cfi)
		cfi_refresh(preload_host.handlers_idle);
	return l.count;
}

/* After a dlopen: the records of the objects loaded since the last
 * write, from the loader's list as the start's (mappings_write_loaded),
 * without the kernel printing every mapping again: a Python program loads
 * dozens of extension modules, each a read of its long maps.  The code
 * table keeps what it had (an anonymous mapping a read of the maps found)
 * and gains the new segments; records kept for a fork child gain theirs.
 * Returns the number of records, -1 when out of space, or -2 when the
 * maps are to be read instead: an object unloaded since, a write that
 * read the maps, an object not named by an absolute path.  Lock held. */
static int mappings_write_added(void)
{
	struct mappings_loading l = { .vdso = getauxval(AT_SYSINFO_EHDR), .named = 1, .only_new = 1 };
	const struct mappings_code *old = atomic_load(&mappings.code);
	unsigned long long counts[2] = { 0, 0 };
	size_t nold = old != NULL ? old->n : 0;

	dl_iterate_phdr(mappings_read_counts, counts);
	if (!mappings.loaded_all || mappings.loaded == NULL || counts[1] != mappings.loaded_subs)
		return -2;
	dl_iterate_phdr(mappings_size_loaded, &l);
	if (!l.named)
		return -2;
	l.exe = "";
	l.code = malloc(sizeof(*l.code) + (nold + l.cap) * sizeof(l.code->r[0]));
	l.loaded = malloc(l.cap * sizeof(*l.loaded) + 1);
	if (l.code == NULL || l.loaded == NULL) {
		free(l.code);
		free(l.loaded);
		return -2;
	}
	l.code->n = nold;
	if (nold > 0)
		memcpy(l.code->r, old->r, nold * sizeof(old->r[0]));
	mappings.forked = 0;
	dl_iterate_phdr(mappings_add_loaded, &l);
	mappings_adopt(&l, counts);
	/* (the kept records are all of them still) */
	if (mappings.kept != NULL)
		mappings.kept_adds = counts[0];
	if (mappings.cfi)
		cfi_refresh(preload_host.handlers_idle);
	return l.count;
}

int mappings_write_start(const char *exe)
{
	unsigned long long counts[2] = { 0, 0 };
	int count = 0;

	pthread_mutex_lock(&mappings.lock);
	dl_iterate_phdr(mappings_read_counts, counts);
	if (!mappings.forked || mappings.kept == NULL || counts[0] != mappings.kept_adds ||
	    counts[1] != mappings.kept_subs) {
		free(mappings.loaded);
		mappings.loaded = NULL;
		mappings.nloaded = 0;
		count = mappings_write_loaded(counts, exe);
		pthread_mutex_unlock(&mappings.lock);
		return count != -2 ? count : mappings_write(0);
	}
	for (size_t at = 0; at < mappings.nkept;) {
		const struct raw_mapping *k = (const struct raw_mapping *)(mappings.kept + at);
		struct raw_mapping *rec = writer_reserve(k->h.size, 1);

		if (rec == NULL) {
			count = -1;
			break;
		}
		memcpy((char *)rec + sizeof(rec->h), (const char *)k + sizeof(k->h),
		       k->h.size - sizeof(k->h));
		rec->time_ns = preload_now();
		writer_publish(rec, RAW_MAPPING, k->h.size);
		at += k->h.size;
		count++;
	}
	mappings.forked = 0;
	pthread_mutex_unlock(&mappings.lock);
	return count;
}

int mappings_write_maps(void)
{
	pthread_mutex_lock(&mappings.lock);
	free(mappings.loaded);
	mappings.loaded = NULL;
	mappings.nloaded = 0;
	pthread_mutex_unlock(&mappings.lock);
	return mappings_write(0);
}

void mappings_use_cfi(void)
{
	pthread_mutex_lock(&mappings.lock);
	mappings.cfi = 1;
	pthread_mutex_unlock(&mappings.lock);
}

void mappings_close_begin(void)
{
	pthread_mutex_lock(&mappings.lock);
	if (mappings.cfi)
		cfi_close_begin();
	pthread_mutex_unlock(&mappings.lock);
}

void mappings_close_end(void)
{
	/* the collector's work (the tables' objects listed and sorted again):
	 * its samples are not the program's */
	preload_own_begin();
	pthread_mutex_lock(&mappings.lock);
	if (mappings.cfi) {
		cfi_refresh(preload_host.handlers_idle);
		cfi_close_end();
	}
	pthread_mutex_unlock(&mappings.lock);
	preload_own_end();
}

void mappings_atfork(int phase)
{
	if (phase == 0)
		pthread_mutex_lock(&mappings.lock);
	else if (phase == 1)
		pthread_mutex_unlock(&mappings.lock);
	else {
		pthread_mutex_init(&mappings.lock, NULL);
		mappings.forked = 1;
		if (mappings.cfi)
			cfi_after_fork();
	}
}

void mappings_refresh(void)
{
	unsigned long long adds = 0, last;

	preload_own_begin();
	dl_iterate_phdr(mappings_read_adds, &adds);
	pthread_mutex_lock(&mappings.lock);
	last = mappings.adds;
	if (adds != last && mappings_write_added() != -2)
		last = adds;
	pthread_mutex_unlock(&mappings.lock);
	if (adds != last)
		mappings_write(1);
	preload_own_end();
}

/* The range of code that holds v, or NULL.  Signal-safe. */
static const uintptr_t *mappings_code_range(const struct mappings_code *code, uintptr_t v)
{
	size_t lo = 0, hi = code != NULL ? code->n : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v < code->r[mid][0])
			hi = mid;
		else if (v >= code->r[mid][1])
			lo = mid + 1;
		else
			return code->r[mid];
	}
	return NULL;
}

int mappings_is_code(uintptr_t v)
{
	return mappings_code_range(atomic_load(&mappings.code), v) != NULL;
}

/* A sample's address outside the code table, or one not looked at. */
static _Atomic int mappings_missed;

void mappings_note_frames(const uint64_t *pc, uint32_t n)
{
	const struct mappings_code *code;
	const uintptr_t *last = NULL;

	if (atomic_load_explicit(&mappings_missed, memory_order_relaxed))
		return;
	code = atomic_load(&mappings.code);
	for (uint32_t i = 0; i < n; i++) {
		uintptr_t v = (uintptr_t)pc[i];

		/* the frames of a stack come in runs of one object's */
		if (v == 0 || (last != NULL && v >= last[0] && v < last[1]))
			continue;
		last = mappings_code_range(code, v);
		if (last == NULL) {
			mappings_note_unknown();
			return;
		}
	}
}

void mappings_note_unknown(void)
{
	atomic_store_explicit(&mappings_missed, 1, memory_order_relaxed);
}

int mappings_unknown(void)
{
	return atomic_load_explicit(&mappings_missed, memory_order_relaxed);
}

int mappings_ranges(uintptr_t (*ranges)[2], int cap, int executable)
{
	char *maps = procmaps_read(), *line;
	int n = 0;

	if (maps == NULL)
		return 0;
	for (line = maps; line != NULL && *line != '\0' && n < cap; ) {
		unsigned long long start, end, pgoff;
		const char *path;
		char perms[5];

		if (procmaps_split(line, &start, &end, perms, &pgoff, &path) == 0 &&
		    (executable ? perms[2] == 'x'
				: perms[0] == 'r' && perms[1] == 'w' && perms[3] == 'p')) {
			ranges[n][0] = (uintptr_t)start;
			ranges[n][1] = (uintptr_t)end;
			n++;
		}
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	free(maps);
	return n;
}

/* The library's own ELF header, where the loader mapped it (the linker
 * defines the symbol): its program headers follow in the same page,
 * which the loader read. */
extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

int mappings_own_code(uintptr_t *lo, uintptr_t *hi)
{
	const ElfW(Ehdr) *eh = &__ehdr_start;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
	uintptr_t at = (uintptr_t)&mappings_own_code, bias = 0;
	int have_bias = 0;

	/* the load bias: where the segment that maps the header is */
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0) {
			bias = (uintptr_t)eh - ph[i].p_vaddr;
			have_bias = 1;
			break;
		}
	for (int i = 0; have_bias && i < eh->e_phnum; i++) {
		uintptr_t a = bias + ph[i].p_vaddr;

		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && at >= a &&
		    at - a < ph[i].p_memsz) {
			*lo = a;
			*hi = a + ph[i].p_memsz;
			return 0;
		}
	}
	return -1;
}
