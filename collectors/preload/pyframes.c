/* pyframes.c - the Python frames of a sampled CPython thread (see pyframes.h)
 *
 * Where the frames are: _PyRuntime (a static of the interpreter, exported
 * by both the shared libpython and the statically linked python with its
 * -export-dynamic) lists the interpreters, each its thread states; the
 * sampled thread's is the one whose thread_id is its pthread_self(), found
 * by walking that list once and kept in a thread-local, checked at every
 * sample by one read.  (3.12 has a thread-local _Py_tss_tstate too, but
 * not 3.11, and reaching another object's static TLS needs its module's
 * TLS offset; the list works the same for the static and the shared
 * interpreter.)  From the thread state, its current _PyInterpreterFrame
 * (through the _PyCFrame in 3.11 and 3.12) and each frame's previous, to
 * the first.  Every read goes through process_vm_readv on our own pid, which
 * stops at an unmapped byte instead of faulting, and the walk is bounded:
 * a damaged or half-updated chain ends it with a marker frame.
 *
 * Which frames one C-level call of the evaluation loop runs: in 3.11 the
 * outermost of them has is_entry set; from 3.12 on each such call pushes
 * a frame owned by the C stack (FRAME_OWNED_BY_CSTACK) under them.  In
 * 3.9 and 3.10 the frames are PyFrameObjects (tstate->frame, f_back), each
 * run by a C-level call of its own.
 *
 * The layouts: 3.13 publishes them in _PyRuntime (_Py_DebugOffsets);
 * else they are read from the interpreter's debug information when it
 * has some (pydwarf.c); else the tables of pylayout.c, facts of each
 * version's headers.  The version: Py_Version from 3.11 on, the string of
 * Py_GetVersion before.
 */
#include "pyframes.h"
#include "pycodes.h"
#include "pydwarf.h"
#include "pylayout.h"
#include "pylines.h"
#include "pyslots.h"
#include "pyspans.h"
#include "collect-env.h"
#include "preload.h"
#include "pystacks.h"
#include "raw.h"
#include "raw-py.h"
#include "stacktab.h"
#include "writer.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define PY_MAX_FRAMES RAW_PY_MAX_STACK /* Python frames walked per sample */
#define PY_MAX_THREADS 4096   /* thread states looked at per search */
#define PY_MAX_INTERPS 64
#define PY_MAX_NEST 4         /* thread states of one thread walked */
#define PY_SLOTS (1u << 16)   /* code objects one trace can name */
#define PY_PROBES 64
_Static_assert(PY_SLOTS == PYSTACKS_SLOTS, "one size of table");
#define PY_NAME_MAX 512       /* bytes of a name or a file name kept */
_Static_assert(PY_NAME_MAX == PYSPANS_TEXT_MAX && PY_NAME_MAX == PYCODES_TEXT_MAX, "one size of text");
#define PY_TABLE_MAX (60u << 10) /* bytes of a line table kept */
#define PY_LINES_MAX 2048     /* bytes of a compact line table */
#define PY_FILES 1024         /* file names written once each, at most */
#define PY_IDX_MASK 0x1ffffu  /* a code index, in a word of py.files */
/* the tables of py: keys, groups, seq */
#define PY_TABLES (2 * PY_SLOTS * sizeof(uint64_t) + PY_SLOTS * sizeof(uint32_t))

static struct {
	struct py_layout l;
	int on;
	uintptr_t runtime, code_type, eval_lo, eval_hi;
	uintptr_t garbage;     /* test hook: the chain after the first frame */
	uint32_t pthread_tid;  /* where a glibc thread descriptor holds its tid, 0 unknown */
	pid_t pid;             /* ours, for process_vm_readv */
	int found;             /* an interpreter: its RAW_PYTHON record says */
	int stats;             /* --stats: the time of each merge, summed */
	int records;           /* test hook: a RAW_PYCODE record each, with its table */
	_Atomic uint64_t stat_ns, stat_n, stat_reads, stat_bytes;
	uint64_t layout_ns;    /* --stats: the time the layout took to find */
	int cached;            /* (its debug information's, from the cache) */
	uint32_t version, frames, offsets, micro; /* of its RAW_PYTHON record */
	_Atomic uint64_t *keys; /* PY_SLOTS: code objects written, 0 empty */
	_Atomic uint64_t *groups; /* PY_SLOTS: Python stacks written, 0 empty */
	/* PY_SLOTS: the index of the code in keys' slot, set before the key
	 * (0: a free slot, or one being taken when its key is 0); indices
	 * count from 1 in the order codes are found, so that their varints
	 * are short */
	_Atomic uint32_t *seq;
	_Atomic uint32_t next;  /* the last index given */
	/* the file names written: each a hash of the name (high bits) | the
	 * index of the code whose record holds it; 0 empty */
	_Atomic uint64_t files[PY_FILES];
} py;

static __thread uintptr_t py_tstate __attribute__((tls_model("initial-exec")));

int pyframes_on(void)
{
	return py.on;
}

/* --stats: calls more of process_vm_readv, asking for bytes.
 * Signal-safe. */
static void py_stat_reads(uint64_t calls, uint64_t bytes)
{
	if (!py.stats)
		return;
	atomic_fetch_add_explicit(&py.stat_reads, calls, memory_order_relaxed);
	atomic_fetch_add_explicit(&py.stat_bytes, bytes, memory_order_relaxed);
}

/* Reads len bytes at addr into dst, all or nothing.  Signal-safe. */
static int py_read(void *dst, uintptr_t addr, size_t len)
{
	struct iovec local = { dst, len }, remote = { (void *)addr, len };

	if (addr < 4096)
		return -1;
	py_stat_reads(1, len);
	return syscall(SYS_process_vm_readv, (long)py.pid, &local, 1UL, &remote, 1UL, 0UL) ==
			       (long)len ? 0 : -1;
}

static uint64_t py_u64(const unsigned char *b, uint32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

/* Where in the calling thread's glibc descriptor (its pthread_t) its tid
 * is: the one place of the first 2 KiB that holds it, 0 when not one. */
static uint32_t py_pthread_tid_offset(void)
{
	uintptr_t self = (uintptr_t)pthread_self();
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int32_t d[512];
	uint32_t at = 0, found = 0;

	if (py_read(d, self, sizeof(d)) != 0)
		return 0;
	for (uint32_t i = 1; i < sizeof(d) / 4; i++)
		if (d[i] == tid) {
			at = i * 4;
			found++;
		}
	return found == 1 ? at : 0;
}

/* Empties py's tables for a new trace: their pages given back, made
 * again, empty, when touched (not copied nor cleared).  Not signal-safe. */
static void py_tables_clear(void)
{
	if (py.keys != NULL && madvise(py.keys, PY_TABLES, MADV_DONTNEED) != 0)
		memset(py.keys, 0, PY_TABLES);
}

/* Writes the RAW_PYTHON record of the interpreter (kept for a fork's
 * child, whose trace is a new one).  Not signal-safe. */
static void py_note(uint32_t version, uint32_t frames)
{
	struct raw_python *rec;

	py.version = version;
	py.frames = frames;
	rec = writer_reserve(sizeof(*rec), 1);
	if (rec == NULL)
		return;
	memset(rec, 0, sizeof(*rec));
	rec->version = version;
	rec->frames = (uint8_t)frames;
	rec->offsets = frames == RAW_PYTHON_READ ? (uint8_t)py.offsets : 0;
	rec->micro = (uint8_t)py.micro;
	writer_publish(rec, RAW_PYTHON, sizeof(*rec));
}

/* The layout of version v of lib's interpreter into py.l, from the first
 * of: the offsets it publishes, its debug information, the table of its
 * version (unless PROFVIEW_TEST_PYTABLES=0, tests only); where from in
 * py.offsets.  A layout is kept only when the type of PyCode_Type read
 * with it is PyType_Type.  Returns 0, or -1 when there is none. */
static int py_layout_pick(void *lib, uintptr_t runtime, uint32_t v)
{
	const char *tables = getenv("PROFVIEW_TEST_PYTABLES"), *cmp = getenv("PROFVIEW_TEST_PYCOMPARE");
	const struct py_layout *table = NULL;
	uintptr_t type_type = (uintptr_t)dlsym(lib, "PyType_Type"), t = 0;
	uint64_t t0 = preload_now();
	int rc;

	table = pylayout_table(v);
	py.code_type = (uintptr_t)dlsym(lib, "PyCode_Type");
	memset(&py.l, 0, sizeof(py.l));
	py.l.version = v;
	rc = pylayout_published(&py.l, runtime, py_read);
	if (cmp != NULL && strcmp(cmp, "1") == 0)
		pydwarf_compare((const void *)runtime, v, table, rc == 0 ? &py.l : NULL);
	preload_own_begin(); /* libdw's allocations are the collector's */
	if (rc == 0) {
		py.offsets = RAW_PYTHON_OFFSETS_PUBLISHED;
	} else if (rc == -1 && (py.cached = pydwarf_layout((const void *)runtime, v, &py.l, 0)) >= 0) {
		py.offsets = RAW_PYTHON_OFFSETS_DEBUG_INFO;
	} else if (rc == -1 && table != NULL && v < 0x030d && (tables == NULL || strcmp(tables, "0") != 0)) {
		/* (3.13's table is the published offsets': not used alone) */
		py.l = *table;
		py.offsets = RAW_PYTHON_OFFSETS_TABLE;
	} else {
		rc = -2;
	}
	preload_own_end();
	py.layout_ns = preload_now() - t0;
	if (rc == -2 || py.code_type == 0 || type_type == 0 ||
	    py_read(&t, py.code_type + py.l.object_type, 8) != 0 || t != type_type) {
		memset(&py.l, 0, sizeof(py.l));
		py.offsets = 0;
		return -1;
	}
	return 0;
}

/* pyframes_init with the symbols of lib (RTLD_DEFAULT: the process's). */
static void py_init(void *lib)
{
	void *runtime = dlsym(lib, "_PyRuntime");
	uint32_t v;

	/* (in a process that runs no Python, py's pages are never touched:
	 * each page first touched is a page fault) */
	if (runtime == NULL)
		return;
	/* a second attach starts again: off until known, and a new trace
	 * has none of the code objects written to the last one */
	py.on = 0;
	py.pid = getpid();
	py.found = 1;
	py.stats = preload_setting(COLLECT_ENV_STATS) != NULL &&
		   strcmp(preload_setting(COLLECT_ENV_STATS), "1") == 0;
	if (preload_setting(COLLECT_ENV_PYTHON) != NULL &&
	    strcmp(preload_setting(COLLECT_ENV_PYTHON), "0") == 0) {
		py_note(0, RAW_PYTHON_NOT_ASKED);
		return;
	}
	v = pylayout_version(lib, &py.micro);
	if (v == 0 || py_layout_pick(lib, (uintptr_t)runtime, v) != 0) {
		py_note(v, RAW_PYTHON_UNREAD);
		return;
	}
	py.runtime = (uintptr_t)runtime;
	py.pthread_tid = py_pthread_tid_offset();
	pylayout_eval_range(lib, &py.eval_lo, &py.eval_hi);
	py.records = getenv("PROFVIEW_TEST_PYCODE_RECORDS") != NULL;
	pycodes_reset();
	memset(py.files, 0, sizeof(py.files));
	if (py.keys != NULL)
		py_tables_clear();
	else
		py.keys = mmap(NULL, PY_TABLES, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	(void)pyspans_pool_init(); /* (without it, each read on its own) */
	if (py.keys == MAP_FAILED || py.code_type == 0) {
		py.keys = NULL;
		py_note(v, RAW_PYTHON_UNREAD);
		return;
	}
	py.groups = py.keys + PY_SLOTS;
	py.seq = (_Atomic uint32_t *)(py.groups + PY_SLOTS);
	atomic_store(&py.next, 0);
	if (getenv("PROFVIEW_TEST_PYGARBAGE") != NULL && py.garbage == 0) {
		/* a chain of made-up frames: pointers to themselves, to
		 * unmapped memory and to the middle of the garbage */
		uint64_t *g = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (g != MAP_FAILED) {
			for (size_t i = 0; i < 1024; i++)
				g[i] = i % 3 == 0 ? (uint64_t)(uintptr_t)(g + (i * 7) % 1024)
				       : i % 3 == 1 ? 0xdead0000beefull : 0x1234567890abcdefull * i;
			py.garbage = (uintptr_t)g;
		}
	}
	py.on = 1;
	py_note(v, RAW_PYTHON_READ);
}

uintptr_t pyframes_pthread_of(pid_t tid)
{
	uintptr_t interp, t;
	unsigned char ts[256];
	uint32_t tslen = py.l.tstate_thread_id > py.l.tstate_next ? py.l.tstate_thread_id : py.l.tstate_next;
	int seen = 0;

	tslen += 8;
	if (!py.on || py.pthread_tid == 0 || tslen > sizeof(ts) ||
	    py_read(&interp, py.runtime + py.l.runtime_interpreters_head, 8) != 0)
		return 0;
	for (int i = 0; interp != 0 && i < PY_MAX_INTERPS; i++) {
		if (py_read(&t, interp + py.l.interp_threads_head, 8) != 0)
			return 0;
		while (t != 0 && seen++ < PY_MAX_THREADS) {
			uintptr_t thread;
			int32_t id;

			if (py_read(ts, t, tslen) != 0)
				return 0;
			thread = (uintptr_t)py_u64(ts, py.l.tstate_thread_id);
			if (py_read(&id, thread + py.pthread_tid, 4) == 0 && id == tid)
				return thread;
			t = (uintptr_t)py_u64(ts, py.l.tstate_next);
		}
		if (py_read(&interp, interp + py.l.interp_next, 8) != 0)
			return 0;
	}
	return 0;
}

void pyframes_init(void)
{
	py_init(RTLD_DEFAULT);
}

void pyframes_loaded(void *lib)
{
	if (py.found || lib == NULL || dlsym(lib, "_PyRuntime") == NULL)
		return;
	py_init(lib);
}

void pyframes_atfork_child(void)
{
	py.pid = getpid();
	atomic_store(&py.stat_ns, 0);
	atomic_store(&py.stat_n, 0);
	atomic_store(&py.stat_reads, 0);
	atomic_store(&py.stat_bytes, 0);
	if (py.found)
		py_note(py.version, py.frames);
	py_tables_clear();
	atomic_store(&py.next, 0);
	memset(py.files, 0, sizeof(py.files));
	pycodes_reset();
	pyspans_pool_reset();
	py_tstate = 0;
}

/* A thread state of a thread: where its frames start (the tstate's frame
 * word), and how deep on the thread's C stack its innermost evaluation
 * runs (0 when not known). */
struct py_tstate_at {
	uintptr_t frame;
	uint64_t depth;
};

/* How deep a thread state's innermost evaluation runs: the address of
 * something on the C stack of that call (lower is deeper), 0 when not
 * known: 3.10 to 3.12, the _PyCFrame the tstate points to, a local of the
 * evaluation loop; 3.13, the first frame of the chain that the C stack
 * owns, also a local of it; 3.9, none.  Signal-safe. */
static uint64_t py_tstate_depth(const unsigned char *ts)
{
	uintptr_t frame = (uintptr_t)py_u64(ts, py.l.tstate_frame);
	unsigned char fr[128];

	if (py.l.version == 0x030a)
		return py_u64(ts, 48); /* cframe, after the frame and 4 ints */
	if (py.l.version == 0x030b || py.l.version == 0x030c)
		return frame;
	if (py.l.owner_cstack == 0 || py.l.frame_owner >= sizeof(fr) || py.l.frame_previous + 8 > sizeof(fr))
		return 0;
	for (int i = 0; frame != 0 && i < 64; i++) {
		if (py_read(fr, frame, py.l.frame_owner + 1 > py.l.frame_previous + 8 ?
					       py.l.frame_owner + 1 : py.l.frame_previous + 8) != 0)
			return 0;
		if (fr[py.l.frame_owner] == py.l.owner_cstack)
			return frame;
		frame = (uintptr_t)py_u64(fr, py.l.frame_previous);
	}
	return 0;
}

/* The thread states of the interpreters' lists whose thread_id is self
 * (one per interpreter the thread entered: a subinterpreter's code run
 * from a thread of another), into at[], the innermost first where their
 * depths say it (else the newest interpreter's first, the list's order);
 * how many, at most PY_MAX_NEST; *first, the first one found.  ts is
 * room for a thread state's bytes.  Signal-safe. */
static uint32_t py_search_tstates(unsigned char *ts, size_t tslen, uint64_t self,
				  struct py_tstate_at *at, uintptr_t *first)
{
	uintptr_t interp, t;
	uint32_t n = 0;
	int seen = 0;

	if (py_read(&interp, py.runtime + py.l.runtime_interpreters_head, 8) != 0)
		return 0;
	for (int i = 0; interp != 0 && i < PY_MAX_INTERPS; i++) {
		if (py_read(&t, interp + py.l.interp_threads_head, 8) != 0)
			break;
		while (t != 0 && seen++ < PY_MAX_THREADS && n < PY_MAX_NEST) {
			if (py_read(ts, t, tslen) != 0)
				break;
			if (py_u64(ts, py.l.tstate_thread_id) == self) {
				if (n == 0)
					*first = t;
				at[n].frame = (uintptr_t)py_u64(ts, py.l.tstate_frame);
				at[n++].depth = py_tstate_depth(ts);
			}
			t = (uintptr_t)py_u64(ts, py.l.tstate_next);
		}
		if (py_read(&interp, interp + py.l.interp_next, 8) != 0)
			break;
	}
	/* the innermost first, when every depth is known */
	for (uint32_t i = 1; i < n; i++)
		for (uint32_t j = i; j > 0 && at[j].depth != 0 && at[j - 1].depth > at[j].depth; j--) {
			struct py_tstate_at x = at[j];

			at[j] = at[j - 1];
			at[j - 1] = x;
		}
	return n;
}

/* The thread states of thread (a pthread_t), or with 0 the calling
 * thread's, into at[] (see py_search_tstates): the one cached if it still
 * is the thread's and the process has no interpreter but its main one
 * (checked by one read of both), else searched.  Signal-safe. */
static uint32_t py_find_tstates(unsigned char *ts, size_t tslen, uintptr_t thread, struct py_tstate_at *at)
{
	uint64_t self = (uint64_t)pthread_self();
	uintptr_t first = 0, heads[2];
	uint32_t n;

	if (thread != 0)
		return py_search_tstates(ts, tslen, thread, at, &first);
	if (py_tstate != 0) {
		struct iovec local[2] = { { ts, tslen }, { heads, sizeof(heads) } };
		struct iovec remote[2] = { { (void *)py_tstate, tslen },
					   { (void *)(py.runtime + py.l.runtime_interpreters_head), sizeof(heads) } };

		py_stat_reads(1, tslen + sizeof(heads));
		if (syscall(SYS_process_vm_readv, (long)py.pid, local, 2UL, remote, 2UL, 0UL) ==
			    (long)(tslen + sizeof(heads)) &&
		    py_u64(ts, py.l.tstate_thread_id) == self && heads[0] == heads[1]) {
			at[0].frame = (uintptr_t)py_u64(ts, py.l.tstate_frame);
			at[0].depth = 0;
			return 1;
		}
	}
	n = py_search_tstates(ts, tslen, self, at, &first);
	py_tstate = n > 0 ? first : 0;
	return n;
}

/* With idx 0: the index of the code object whose record holds the file
 * name file[0..n), 0 when none does.  Else: notes that code idx's record
 * (published) holds it.  Signal-safe. */
static uint32_t py_file_seen(const char *file, uint32_t n, uint32_t idx)
{
	uint64_t h = 0xcbf29ce484222325ull, old;

	for (uint32_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)file[i]) * 0x100000001b3ull;
	h = (h | 1ull << 63) & ~(uint64_t)PY_IDX_MASK;
	for (uint32_t i = 0, s = (uint32_t)(h >> 40) & (PY_FILES - 1); i < PY_FILES;
	     i++, s = (s + 1) & (PY_FILES - 1)) {
		old = atomic_load_explicit(&py.files[s], memory_order_acquire);
		if (old == 0 && idx != 0 &&
		    atomic_compare_exchange_strong(&py.files[s], &old, h | idx))
			return 0;
		if (old != 0 && (old & ~(uint64_t)PY_IDX_MASK) == h)
			return idx != 0 ? 0 : (uint32_t)(old & PY_IDX_MASK);
		if (old == 0)
			return 0;
	}
	return 0;
}

/* Writes the RAW_PYCODE record of the code object whose header is co
 * (of a code object read), index idx.  Signal-safe. */
static void py_write_code(const unsigned char *co, uint32_t idx)
{
	char name[PY_NAME_MAX], file[PY_NAME_MAX];
	unsigned char lines[PY_LINES_MAX];
	uint32_t nname = pyspans_string(&py.l, NULL, -1, (uintptr_t)py_u64(co, py.l.code_qualname), name, py_read);
	uint32_t nfile = pyspans_string(&py.l, NULL, -1, (uintptr_t)py_u64(co, py.l.code_filename), file, py_read);
	uint32_t same = nfile > 4 ? py_file_seen(file, nfile, 0) : 0;
	uintptr_t table = (uintptr_t)py_u64(co, py.l.code_linetable);
	struct pylines t = { .out = lines, .cap = sizeof(lines) };
	uint64_t tlen = 0;
	uint32_t size, flags = 0;
	struct raw_pycode *rec;
	int32_t first;

	memcpy(&first, co + py.l.code_firstlineno, 4);
	if (table == 0 || py_read(&tlen, table + py.l.bytes_size, 8) != 0 || tlen > PY_TABLE_MAX)
		tlen = 0;
	pylines_convert(&t, py_read, py.l.version, table + py.l.bytes_sval,
			tlen < PY_TABLE_MAX ? tlen : PY_TABLE_MAX, first);
	if (!t.over) { /* else the interpreter's own table */
		flags |= RAW_PYCODE_COMPACT;
		tlen = t.len;
	}
	if (same != 0) {
		flags |= RAW_PYCODE_FILE_REF;
		memcpy(file, &same, 4);
		nfile = 4;
	}
	size = (uint32_t)(sizeof(*rec) + nname + nfile + tlen + 7) & ~7u;
	writer_need_file();
	rec = writer_reserve(size, 0);
	if (rec == NULL)
		return;
	memset(rec, 0, size);
	rec->index = idx;
	rec->first_line = first;
	rec->version = py.l.version | flags;
	rec->name_len = nname;
	rec->file_len = nfile;
	memcpy(rec + 1, name, nname);
	memcpy((char *)(rec + 1) + nname, file, nfile);
	if (flags & RAW_PYCODE_COMPACT)
		memcpy((char *)(rec + 1) + nname + nfile, lines, tlen);
	else if (tlen > 0 && py_read((char *)(rec + 1) + nname + nfile, table + py.l.bytes_sval, tlen) != 0)
		tlen = 0;
	rec->table_len = (uint32_t)tlen;
	writer_publish(rec, RAW_PYCODE, size);
	if (same == 0 && nfile > 4 && idx <= PY_IDX_MASK)
		py_file_seen(file, nfile, idx);
}

/* The index of the code object at code (its header co), *fresh set when
 * it is new (its record to be written by the caller); 0 when the table is
 * full.  A code object is known by its address with its name, file, line
 * table and first line, so that another made where a freed one was is not
 * taken for it.  Signal-safe. */
static uint32_t py_code_index(uintptr_t code, const unsigned char *co, int *fresh)
{
	uint64_t k = code;
	uint32_t first;

	memcpy(&first, co + py.l.code_firstlineno, 4);
	k = (k ^ py_u64(co, py.l.code_qualname)) * 0x9e3779b97f4a7c15ull;
	k = (k ^ py_u64(co, py.l.code_filename)) * 0xbf58476d1ce4e5b9ull;
	k = (k ^ py_u64(co, py.l.code_linetable) ^ (uint64_t)first << 48) * 0x94d049bb133111ebull;
	k ^= k >> 29;
	k |= 1;
	for (uint32_t i = 0; i < PYSLOTS_NEAR_PROBES + PY_PROBES; i++) {
		uint32_t s = pyslots_at(k >> 16, i, PYSLOTS_NEAR, PY_SLOTS);
		uint64_t old = atomic_load_explicit(&py.keys[s], memory_order_acquire);
		uint32_t want = 0, idx;

		if (old == k)
			return atomic_load_explicit(&py.seq[s], memory_order_relaxed);
		if (old != 0 || atomic_load_explicit(&py.seq[s], memory_order_relaxed) != 0)
			continue; /* (another's, or being taken: a code found by
				   * two threads at once may get two indices) */
		idx = atomic_fetch_add(&py.next, 1) + 1;
		if (idx >= RAW_PY_MAX_CODES)
			return 0;
		if (!atomic_compare_exchange_strong(&py.seq[s], &want, idx))
			continue;
		atomic_store_explicit(&py.keys[s], k, memory_order_release);
		*fresh = 1;
		return idx;
	}
	return 0;
}

#define PY_BATCH 16        /* frames whose code objects are read in one call */
#define PY_WINDOW 2048     /* bytes of frames read at once */
#define PY_CODE_HEAD 160   /* bytes of a code object read */
#define PY_NAME_SPAN 64    /* bytes of a name read with its header */
#define PY_FILE_SPAN 96    /* bytes of a file name read with its header */
#define PY_TABLE_SPAN 224  /* bytes of a line table read with its length */

/* What one walk has read: a window of the memory below the last frame
 * read (from 3.11 on, a thread's frames are on its data stack, each
 * caller below its callee, so that one read holds several), the frames
 * waiting for their code objects to be read together, and then what
 * those need read: the strings of the new code objects, the line tables
 * of the lines not kept. */
struct py_walker {
	uint32_t flen, colen, n, g, stop, steps;
	struct pycodes_batch batch; /* the code objects new to the trace */
	uint64_t *out;
	uint32_t *gend;
	uintptr_t win_lo;
	uint32_t win_len, nitems;
	struct py_item {
		uintptr_t code;   /* 0: a frame of the C stack (3.12 on) */
		uint64_t at;      /* its instruction pointer, or f_lasti */
		uint8_t owner;
		uint8_t fresh;    /* its code new to the trace */
		uint8_t kept;     /* its line kept (in line) */
		uint8_t k;        /* its code's header, in co */
		uint32_t idx, line;
		int64_t instr;
		int name, file, table; /* their spans in spans, -1: none */
	} items[PY_BATCH];
	unsigned char win[PY_WINDOW];
	unsigned char co[PY_BATCH][PY_CODE_HEAD];
	struct pyspans *spans; /* claimed when needed, NULL: none */
};

/* The flen bytes of the frame at frame: from the window when it holds
 * them, else from a new window that ends with them and starts no lower
 * than their page (which is mapped if they are); NULL when they cannot be
 * read.  Signal-safe. */
static const unsigned char *py_frame_bytes(struct py_walker *w, uintptr_t frame)
{
	uintptr_t end = frame + w->flen, lo = frame & ~(uintptr_t)4095;

	if (frame >= w->win_lo && end <= w->win_lo + w->win_len && frame >= 4096)
		return w->win + (frame - w->win_lo);
	if (end - lo > PY_WINDOW)
		lo = end - PY_WINDOW;
	if (frame < 4096 || end < frame || py_read(w->win, lo, end - lo) != 0)
		return NULL;
	w->win_lo = lo;
	w->win_len = (uint32_t)(end - lo);
	return w->win + (frame - lo);
}

/* The text of the str object at s (at most PY_NAME_MAX bytes): from its
 * span in w when it has one, else read on its own.  Signal-safe. */
static uint32_t py_item_string(const struct py_walker *w, int span, uintptr_t s, char *buf)
{
	return pyspans_string(&py.l, span >= 0 ? w->spans : NULL, span, s, buf, py_read);
}

/* The code object of it (header co), new to the trace: its entry into
 * w's batch (or, with the test hook, its own RAW_PYCODE record with its
 * line table).  Signal-safe. */
static void py_new_code(struct py_walker *w, const struct py_item *it, const unsigned char *co)
{
	char name[PY_NAME_MAX], file[PY_NAME_MAX];
	uint32_t nname, nfile;
	int32_t first;

	if (py.records) {
		py_write_code(co, it->idx);
		return;
	}
	nname = py_item_string(w, it->name, (uintptr_t)py_u64(co, py.l.code_qualname), name);
	nfile = py_item_string(w, it->file, (uintptr_t)py_u64(co, py.l.code_filename), file);
	memcpy(&first, co + py.l.code_firstlineno, 4);
	pycodes_add(&w->batch, it->idx, first, name, nname, file, nfile);
}

/* What the word of the frame it (its code's header co) holds: the
 * instruction with the test hook (its record has the table), else the
 * line it is on (RAW_PYCODES), looked up in the interpreter's table (its
 * length and first bytes from its span, when it has one) once and kept.
 * Signal-safe. */
static uint32_t py_frame_at(const struct py_walker *w, const struct py_item *it, const unsigned char *co)
{
	uintptr_t table = (uintptr_t)py_u64(co, py.l.code_linetable);
	const unsigned char *have = NULL;
	uint32_t line, nhave = 0;
	uint64_t tlen = 0;
	int64_t found;
	int32_t first;

	if (it->instr >= RAW_PY_NO_INSTR)
		return RAW_PY_NO_INSTR;
	if (py.records)
		return (uint32_t)it->instr;
	if (it->kept)
		return it->line;
	memcpy(&first, co + py.l.code_firstlineno, 4);
	if (it->table >= 0) {
		const struct pyspans_span *sp = &w->spans->s[it->table];

		if (sp->got >= py.l.bytes_size + 8)
			memcpy(&tlen, w->spans->buf + sp->off + py.l.bytes_size, 8);
		if (sp->got > py.l.bytes_sval) {
			have = w->spans->buf + sp->off + py.l.bytes_sval;
			nhave = sp->got - py.l.bytes_sval;
		}
	} else if (table == 0 || py_read(&tlen, table + py.l.bytes_size, 8) != 0) {
		tlen = 0;
	}
	if (tlen > PY_TABLE_MAX)
		tlen = 0;
	found = pylines_find_from(py_read, py.l.version, table + py.l.bytes_sval, tlen, first,
				  (uint64_t)it->instr, have, nhave);
	line = found > 0 && found < RAW_PY_NO_INSTR ? (uint32_t)found : 0;
	pycodes_line_keep(it->idx, (uint32_t)it->instr, line);
	return line;
}

/* The first end of w's items, their code objects read (whole of them):
 * each checked and given its index, its instruction and its line when
 * kept, up to the first that is not whole, whose reason is in *stop.
 * Returns how many are.  Signal-safe. */
static uint32_t py_items_check(struct py_walker *w, uint32_t whole, uint32_t *stop)
{
	uint32_t k = 0;

	for (uint32_t i = 0; i < w->nitems; i++) {
		struct py_item *it = &w->items[i];
		const unsigned char *co = w->co[k];
		int fresh = 0;

		it->name = it->file = it->table = -1;
		it->fresh = it->kept = 0;
		if (it->code == 0)
			continue;
		if (k >= whole || it->code < 4096) {
			*stop = RAW_PY_STOP_READ;
			return i;
		}
		it->k = (uint8_t)k++;
		if (py_u64(co, py.l.object_type) != py.code_type) {
			*stop = RAW_PY_STOP_CODE;
			return i;
		}
		it->idx = py_code_index(it->code, co, &fresh);
		if (it->idx == 0) {
			*stop = RAW_PY_STOP_TABLE;
			return i;
		}
		it->fresh = (uint8_t)fresh;
		if (py.l.lasti != 0) {
			int32_t lasti = (int32_t)(uint32_t)it->at; /* (little-endian) */

			it->instr = lasti / (int32_t)py.l.lasti;
			it->owner = 1; /* each frame its own C-level call */
		} else {
			it->instr = ((int64_t)it->at - (int64_t)(it->code + py.l.code_adaptive)) / 2;
		}
		if (it->instr < 0)
			it->instr = 0;
		if (it->instr < RAW_PY_NO_INSTR && !py.records)
			it->kept = (uint8_t)pycodes_line_get(it->idx, (uint32_t)it->instr, &it->line);
	}
	return w->nitems;
}

/* The spans the first end items need (each new code object's name and
 * file name, each line not kept's table) read together.  Signal-safe. */
static void py_items_read(struct py_walker *w, uint32_t end)
{
	uint32_t head = py.l.unicode_compact_data, calls;

	if (w->spans == NULL && !py.records)
		w->spans = pyspans_claim();
	if (w->spans == NULL)
		return; /* (each read on its own) */
	pyspans_init(w->spans);
	for (uint32_t i = 0; i < end; i++) {
		struct py_item *it = &w->items[i];
		const unsigned char *co = w->co[it->k];
		uintptr_t table;

		if (it->code == 0)
			continue;
		if (it->fresh) {
			it->name = pyspans_add(w->spans, (uintptr_t)py_u64(co, py.l.code_qualname),
					       head + PY_NAME_SPAN);
			it->file = pyspans_add(w->spans, (uintptr_t)py_u64(co, py.l.code_filename),
					       head + PY_FILE_SPAN);
		}
		table = (uintptr_t)py_u64(co, py.l.code_linetable);
		if (!it->kept && it->instr < RAW_PY_NO_INSTR && table != 0)
			it->table = pyspans_add(w->spans, table, py.l.bytes_sval + PY_TABLE_SPAN);
	}
	if (w->spans->n == 0)
		return;
	calls = pyspans_read(w->spans, py.pid);
	py_stat_reads(calls, w->spans->used);
}

/* The frames waiting (w->items), their code objects read in one call,
 * then what they need in one or a few, put into w->out in order.  Sets
 * w->stop at the first that is not whole.  Signal-safe. */
static void py_flush(struct py_walker *w)
{
	struct iovec local[PY_BATCH], remote[PY_BATCH];
	uint32_t k = 0, whole, end, stop = 0;
	long got = 0;

	for (uint32_t i = 0; i < w->nitems; i++) {
		if (w->items[i].code == 0)
			continue;
		local[k] = (struct iovec){ w->co[k], w->colen };
		remote[k] = (struct iovec){ (void *)w->items[i].code, w->colen };
		k++;
	}
	if (k > 0)
		py_stat_reads(1, (uint64_t)k * w->colen);
	if (k > 0)
		got = syscall(SYS_process_vm_readv, (long)py.pid, local, (unsigned long)k, remote,
			      (unsigned long)k, 0UL);
	whole = got > 0 ? (uint32_t)((unsigned long)got / w->colen) : 0;
	end = py_items_check(w, whole, &stop);
	py_items_read(w, end);
	for (uint32_t i = 0; i < end; i++) {
		const struct py_item *it = &w->items[i];
		const unsigned char *co = w->co[it->k];

		if (it->code == 0) {
			if (w->g < PY_MAX_FRAMES && (w->g == 0 ? w->n > 0 : w->n > w->gend[w->g - 1]))
				w->gend[w->g++] = w->n;
			continue;
		}
		if (it->fresh)
			py_new_code(w, it, co);
		w->out[w->n++] = raw_py_word(it->idx, py_frame_at(w, it, co));
		if (py.l.owner_cstack == 0 && it->owner != 0 && w->g < PY_MAX_FRAMES)
			w->gend[w->g++] = w->n; /* 3.11: is_entry; before, every frame */
	}
	w->stop = stop;
	w->nitems = 0;
}

/* Walks the chain of frames from frame into w->out.  Signal-safe. */
static void py_chain(struct py_walker *w, uintptr_t frame)
{
	while (frame != 0 && w->stop == 0) {
		const unsigned char *fr;

		/* (the C stack's frames count too: a chain of them may loop) */
		if (w->n + w->nitems >= PY_MAX_FRAMES - 1 || w->steps++ == 2 * PY_MAX_FRAMES) {
			py_flush(w);
			if (w->stop == 0)
				w->stop = RAW_PY_STOP_DEPTH;
			return;
		}
		fr = py_frame_bytes(w, frame);
		if (fr == NULL) {
			py_flush(w);
			if (w->stop == 0)
				w->stop = RAW_PY_STOP_READ;
			return;
		}
		w->items[w->nitems].owner = fr[py.l.frame_owner];
		w->items[w->nitems].code = (uintptr_t)py_u64(fr, py.l.frame_code);
		w->items[w->nitems].at = py_u64(fr, py.l.frame_instr);
		if (py.l.owner_cstack != 0 && fr[py.l.frame_owner] == py.l.owner_cstack)
			w->items[w->nitems].code = 0;
		else if (w->items[w->nitems].code == 0)
			w->items[w->nitems].code = 1; /* (not readable: a stop) */
		frame = (uintptr_t)py_u64(fr, py.l.frame_previous);
		if (py.garbage != 0 && w->n + w->nitems == 0)
			frame = py.garbage + 64;
		if (++w->nitems == PY_BATCH)
			py_flush(w);
	}
	py_flush(w);
}

/* The calling thread's Python frames into out (innermost first), and
 * where each C-level call of the evaluation loop's frames end (gend[g]:
 * one past the last of call g).  Returns how many frames.  Signal-safe. */
static uint32_t py_walk(uint64_t *out, uint32_t *gend, uint32_t *ngroups, uintptr_t thread)
{
	unsigned char ts[256];
	uint32_t tslen = py.l.tstate_thread_id, nt;
	struct py_tstate_at at[PY_MAX_NEST];
	uintptr_t frame;
	struct py_walker w;

	if (py.l.tstate_next > tslen)
		tslen = py.l.tstate_next;
	if (py.l.tstate_frame > tslen)
		tslen = py.l.tstate_frame;
	tslen += 8;
	w.colen = py.l.code_linetable;
	if (py.l.code_qualname > w.colen)
		w.colen = py.l.code_qualname;
	w.colen += 8;
	w.flen = py.l.frame_owner + 1;
	if (py.l.frame_instr + 8 > w.flen)
		w.flen = py.l.frame_instr + 8;
	if (py.l.frame_code + 8 > w.flen)
		w.flen = py.l.frame_code + 8;
	if (py.l.frame_previous + 8 > w.flen)
		w.flen = py.l.frame_previous + 8;
	*ngroups = 0;
	if (tslen > sizeof(ts) || w.colen > PY_CODE_HEAD || w.flen > 128)
		return 0;
	nt = py_find_tstates(ts, tslen, thread, at);
	w.out = out;
	w.gend = gend;
	w.spans = NULL;
	w.n = w.g = w.stop = w.steps = w.nitems = w.win_len = 0;
	w.win_lo = 0;
	w.batch.len = w.batch.nlocal = w.batch.last = 0;
	/* each interpreter's frames the thread is in, the innermost first,
	 * each the evaluation loop's calls of its own */
	for (uint32_t i = 0; i < nt && w.stop == 0; i++) {
		frame = at[i].frame;
		if (py.l.version >= 0x030b && py.l.version < 0x030d) /* through the _PyCFrame */
			if (frame == 0 || py_read(&frame, frame + py.l.cframe_current_frame, 8) != 0)
				continue;
		py_chain(&w, frame);
		if (w.n > 0 && (w.g == 0 || gend[w.g - 1] < w.n) && w.g < PY_MAX_FRAMES)
			gend[w.g++] = w.n;
	}
	pycodes_flush(&w.batch);
	pyspans_release(w.spans);
	if (w.stop != 0)
		out[w.n++] = raw_py_word(0, w.stop);
	if (w.n > 0 && (w.g == 0 || gend[w.g - 1] < w.n) && w.g < PY_MAX_FRAMES)
		gend[w.g++] = w.n;
	*ngroups = w.g;
	return w.n;
}

uint32_t pyframes_stack(uint64_t *frames, uint32_t *n, uint32_t cap)
{
	uint64_t py_frames[PY_MAX_FRAMES], t0;
	uint32_t gend[PY_MAX_FRAMES], ng, np, part = 0, id = 0;

	if (!py.on)
		return stacktab_intern(frames, *n);
	t0 = py.stats ? preload_now() : 0;
	np = py_walk(py_frames, gend, &ng, 0);
	if (np != 0 && *n < cap)
		part = pystacks_part(py.groups, py_frames, np, gend, ng, py.eval_lo, py.eval_hi);
	if (py.stats) {
		atomic_fetch_add_explicit(&py.stat_ns, preload_now() - t0, memory_order_relaxed);
		atomic_fetch_add_explicit(&py.stat_n, 1, memory_order_relaxed);
	}
	if (np == 0)
		return stacktab_intern(frames, *n);
	if (part != 0) {
		frames[*n] = stacktab_py_word(part);
		id = stacktab_intern(frames, *n + 1);
	}
	if (id == 0) { /* the frames merged, inline if need be */
		np = pystacks_words(py.groups, py_frames, gend, ng);
		*n = raw_py_merge(frames, *n, cap, py_frames, np, gend, ng, py.eval_lo, py.eval_hi);
		id = stacktab_intern(frames, *n);
	}
	return id;
}

void pyframes_print_stats(void)
{
	uint64_t k = atomic_load(&py.stat_n);
	static const char *const from[] = { "", "the interpreter", "its debug information", "the table" };

	if (py.stats && py.on && py.offsets < 4)
		preload_warn("python offsets: from %s%s, found in %.2f ms", from[py.offsets],
			     py.offsets == RAW_PYTHON_OFFSETS_DEBUG_INFO && py.cached == 1 ? " (kept in the cache)" : "",
			     (double)py.layout_ns / 1e6);
	if (py.stats && py.on && k > 0)
		preload_warn("python frames: %llu samples, mean %llu ns and %.1f reads (%llu bytes) in their walk",
			     (unsigned long long)k, (unsigned long long)(atomic_load(&py.stat_ns) / k),
			     (double)atomic_load(&py.stat_reads) / (double)k,
			     (unsigned long long)(atomic_load(&py.stat_bytes) / k));
}

/* pyframes_read_thread's walk (thread 0: the calling thread's).
 * Signal-safe. */
static uint32_t py_read_frames(uintptr_t thread, struct pyframes_thread *t)
{
	t->nwords = t->ngroups = 0;
	if (!py.on)
		return 0;
	t->nwords = py_walk(t->words, t->gend, &t->ngroups, thread);
	if (t->nwords == 0)
		return 0;
	t->nwords = pystacks_words(py.groups, t->words, t->gend, t->ngroups);
	return (uint32_t)sizeof(struct raw_sample_py) + raw_pad(t->nwords * 8 + t->ngroups * 4);
}

uint32_t pyframes_read_self(struct pyframes_thread *t)
{
	return py_read_frames(0, t);
}

uint32_t pyframes_read_thread(uintptr_t thread, struct pyframes_thread *t)
{
	if (thread == 0) {
		t->nwords = t->ngroups = 0;
		return 0;
	}
	return py_read_frames(thread, t);
}

void pyframes_put_thread(void *at, uint32_t size, const struct pyframes_thread *t, uint32_t tid,
			 uint64_t time_ns)
{
	struct raw_sample_py *rec = at;

	memset(rec, 0, size);
	rec->tid = tid;
	rec->time_ns = time_ns;
	rec->eval_lo = py.eval_lo;
	rec->eval_hi = py.eval_hi;
	rec->nwords = t->nwords;
	rec->ngroups = t->ngroups;
	memcpy(rec + 1, t->words, t->nwords * 8);
	memcpy((unsigned char *)(rec + 1) + t->nwords * 8, t->gend, t->ngroups * 4);
	writer_publish(rec, RAW_SAMPLE_PY, size);
}
