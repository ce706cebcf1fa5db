/* cfi.c - the collector's unwind tables: made of every loaded object's
 * .eh_frame, walked in the signal handler
 *
 * The rows themselves are made and walked by trace/ehcfi*.c, lazily
 * (ehcfi-lazy.c: a chunk of an object's FDEs when a walk first needs it,
 * in the handler, signal-safe; cfi.h says why lazily per process).  Here,
 * for each object dl_iterate_phdr reports, its loaded segments are the
 * image its rows are made from (its .eh_frame_hdr is PT_GNU_EH_FRAME),
 * whose search table the first walk into it reads (ehcfi_lazy_defer: a
 * process's start reads no object's table, each a page fault, and a
 * process that ends before its first sample reads none).  Only when out
 * of memory for that are its rows made at once, inside dl_iterate_phdr's
 * callback, so dlclose cannot unmap what is being read.  An object whose
 * .eh_frame_hdr has no search table (linkers leave it out only when they
 * cannot sort the FDEs) has no rows, as one without .eh_frame_hdr: its
 * walks take the stack copy.
 * A lazy object's image is read by later walks: its object is dropped
 * from the tables before dlclose unmaps it (dlhook.c refreshes them), as
 * a walk in the object's code could not be running then anyway.
 *
 * The walk (cfi_unwind) runs in the signal handler, over the published
 * tables and the thread's stack between the red zone below the interrupted
 * stack pointer and the stack top.  The published table of objects is one
 * pointer; replaced ones are freed only when no walk can be running.
 */
#include "cfi.h"
#include "ehcfi.h"
#include "ehcfi-lazy.h"
#include "ehcfi-share.h"
#include "preload.h"
#include "procmaps.h"

#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct cfi_tables {
	size_t n;
	uint64_t rows;         /* in all, for cfi_table_size */
	uint64_t gen;          /* which tables: one more at each refresh */
	struct ehcfi_range r[];
};

/* An object we made rows for. */
struct cfi_object {
	uintptr_t bias;
	const void *phdr;      /* with bias, identifies the loaded object */
	struct ehcfi_row *rows;  /* then the page index, in one allocation */
	struct ehcfi_lazy *lazy; /* or rows made as walks need them */
	uint32_t nrows;
	uint32_t page_base, npages;
	const uint32_t *pages;
	int alive;
	uintptr_t seg[4][2];   /* its executable segments */
	int nseg;
};

#define CFI_RETIRED_MAX 256
#define CFI_RED_ZONE 128       /* bytes below the stack pointer, x86-64 ABI */

static struct {
	struct cfi_tables *_Atomic current;
	struct cfi_object *objs;
	size_t nobjs, capobjs;
	size_t nretired;            /* of cfi_retired */
	uint64_t gen;
	/* walks running, and dlcloses running: a walk reads the images of
	 * lazy objects, which a dlclose may unmap */
	_Atomic int walkers, closing;
} cfi;

/* Tables and objects replaced, freed when no walk can be using them (a
 * start replaces none: out of the pages it writes). */
static struct cfi_retired {
	void *p;
	struct ehcfi_lazy *lazy;
} cfi_retired[CFI_RETIRED_MAX] PRELOAD_COLD;

_Static_assert((int)CFI_FAIL_NO_OBJECT == (int)EHCFI_FAIL_NO_OBJECT &&
	       (int)CFI_FAIL_NO_ROW == (int)EHCFI_FAIL_NO_ROW &&
	       (int)CFI_FAIL_RULE == (int)EHCFI_FAIL_RULE &&
	       (int)CFI_FAIL_STACK == (int)EHCFI_FAIL_STACK, "failures as ehcfi's");
_Static_assert((int)CFI_ROW_REG == (int)EHCFI_REG && (int)CFI_ROW_DEREF == (int)EHCFI_DEREF &&
	       (int)CFI_ROW_PLT == (int)EHCFI_PLT && (int)CFI_ROW_SIGNAL == (int)EHCFI_SIGNAL &&
	       (int)CFI_ROW_END == (int)EHCFI_END && (int)CFI_ROW_BAD == (int)EHCFI_BAD,
	       "row kinds as ehcfi's");

/* The image of a loaded object: its loaded bytes where they are. */
static int object_image(const struct dl_phdr_info *info, struct ehcfi_image *img)
{
	int have_hdr = 0;

	memset(img, 0, sizeof *img);
	img->bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_EH_FRAME) {
			img->eh_frame_hdr = info->dlpi_addr + ph->p_vaddr;
			have_hdr = 1;
		} else if (ph->p_type == PT_LOAD && img->nseg < EHCFI_MAX_SEGS) {
			img->seg[img->nseg][0] = info->dlpi_addr + ph->p_vaddr;
			img->seg[img->nseg][1] = info->dlpi_addr + ph->p_vaddr + ph->p_filesz;
			img->nseg++;
		}
	}
	return have_hdr;
}

/* ---- the object list ---- */

struct refresh {
	int oom;
};

static struct cfi_object *object_find(uintptr_t bias, const void *phdr)
{
	for (size_t i = 0; i < cfi.nobjs; i++)
		if (cfi.objs[i].bias == bias && cfi.objs[i].phdr == phdr)
			return &cfi.objs[i];
	return NULL;
}

/* The name of an object in the run's share of rows: of its build ID, 0
 * when it has none. */
static uint64_t object_share_id(const struct dl_phdr_info *info)
{
	uint8_t id[PROCMAPS_BUILD_ID_MAX];
	uint8_t len = procmaps_loaded_build_id(info, id);

	return ehcfi_share_id(id, len);
}

static int refresh_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct refresh *rf = data;
	struct cfi_object *o = object_find(info->dlpi_addr, info->dlpi_phdr);
	struct ehcfi_rows b = { 0 };
	struct ehcfi_image img;
	int nseg = 0;

	(void)size;
	if (o != NULL) {
		o->alive = 1;
		return 0;
	}
	if (cfi.nobjs == cfi.capobjs) {
		size_t cap = cfi.capobjs ? cfi.capobjs * 2 : 16; /* most programs: 2 KB */
		struct cfi_object *v = realloc(cfi.objs, cap * sizeof *v);

		if (v == NULL) {
			rf->oom = 1;
			return 0;
		}
		cfi.objs = v;
		cfi.capobjs = cap;
	}
	o = &cfi.objs[cfi.nobjs];
	memset(o, 0, sizeof *o);
	for (int i = 0; i < info->dlpi_phnum && nseg < 4; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && ph->p_memsz > 0) {
			o->seg[nseg][0] = info->dlpi_addr + ph->p_vaddr;
			o->seg[nseg][1] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			nseg++;
		}
	}
	if (nseg == 0)
		return 0;
	/* rows made as walks need them, the search table read by the
	 * first (at once when out of memory for that) */
	if (object_image(info, &img) && (o->lazy = ehcfi_lazy_defer(&img)) == NULL)
		ehcfi_build(&img, &b);
	/* its rows shared with the run's other processes, by its build ID
	 * (whose page the mappings' records read already) */
	if (o->lazy != NULL)
		ehcfi_lazy_share_id(o->lazy, object_share_id(info));
	if (b.oom)
		rf->oom = 1;
	o->page_base = b.page_base;
	o->npages = b.npages;
	o->pages = b.pages;
	o->bias = info->dlpi_addr;
	o->phdr = info->dlpi_phdr;
	o->rows = b.v;
	o->nrows = (uint32_t)b.n;
	o->nseg = nseg;
	o->alive = 1;
	cfi.nobjs++;
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct ehcfi_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void retire(void *p, struct ehcfi_lazy *lazy)
{
	if (p == NULL && lazy == NULL)
		return;
	if (cfi.nretired < CFI_RETIRED_MAX)
		cfi_retired[cfi.nretired++] = (struct cfi_retired){ p, lazy };
	/* else: leaked rather than freed under a walk */
}

int cfi_refresh(int (*idle)(void))
{
	struct refresh rf = { 0 };
	struct cfi_tables *t;
	size_t nranges = 0, w = 0;
	uint64_t rows = 0;

	for (size_t i = 0; i < cfi.nobjs; i++)
		cfi.objs[i].alive = 0;
	dl_iterate_phdr(refresh_object, &rf);
	for (size_t i = 0; i < cfi.nobjs; i++) {
		if (!cfi.objs[i].alive) {
			retire(cfi.objs[i].rows, cfi.objs[i].lazy);
			continue;
		}
		cfi.objs[w++] = cfi.objs[i];
	}
	cfi.nobjs = w;
	for (size_t i = 0; i < cfi.nobjs; i++)
		nranges += (size_t)cfi.objs[i].nseg;
	t = malloc(sizeof *t + nranges * sizeof t->r[0]);
	if (t == NULL)
		return -1;
	t->n = 0;
	for (size_t i = 0; i < cfi.nobjs; i++) {
		const struct cfi_object *o = &cfi.objs[i];

		for (int s = 0; s < o->nseg; s++)
			t->r[t->n++] = (struct ehcfi_range){ o->seg[s][0], o->seg[s][1], o->bias,
							   o->rows, o->nrows, o->page_base,
							   o->npages, o->pages, o->lazy };
		rows += o->nrows;
	}
	t->rows = rows;
	t->gen = ++cfi.gen;
	qsort(t->r, t->n, sizeof t->r[0], range_cmp);
	retire(atomic_exchange(&cfi.current, t), NULL);
	if (idle != NULL && cfi.nretired > 0 && idle()) {
		for (size_t i = 0; i < cfi.nretired; i++) {
			free(cfi_retired[i].p);
			ehcfi_lazy_free(cfi_retired[i].lazy);
		}
		cfi.nretired = 0;
	}
	return rf.oom ? -1 : (int)cfi.nobjs;
}

void cfi_table_size(uint64_t *objects, uint64_t *rows)
{
	const struct cfi_tables *t = atomic_load(&cfi.current);

	*objects = t ? t->n : 0;
	*rows = t ? t->rows : 0;
	for (size_t i = 0; t != NULL && i < t->n; i++)
		if (t->r[i].lazy != NULL && (i == 0 || t->r[i - 1].lazy != t->r[i].lazy))
			*rows += ehcfi_lazy_rows(t->r[i].lazy);
}

void cfi_close_begin(void)
{
	struct timespec ms = { 0, 100000 };

	atomic_fetch_add(&cfi.closing, 1);
	while (atomic_load(&cfi.walkers) != 0)
		nanosleep(&ms, NULL);
}

void cfi_close_end(void)
{
	atomic_fetch_sub(&cfi.closing, 1);
}

void cfi_after_fork(void)
{
	atomic_store(&cfi.walkers, 0);
	atomic_store(&cfi.closing, 0);
	for (size_t i = 0; i < cfi.nobjs; i++)
		ehcfi_lazy_after_fork(cfi.objs[i].lazy);
}

void cfi_share(void *base, size_t len)
{
	ehcfi_share_use(base, len);
}

void cfi_cost(uint64_t *chunks, uint64_t *rows, uint64_t *cpu_ns)
{
	struct ehcfi_lazy_stats st;

	ehcfi_lazy_stats(&st);
	*chunks = st.chunks;
	*rows = st.rows;
	*cpu_ns = st.cpu_ns;
}

/* ---- the walk ---- */

int cfi_row_kind(uintptr_t pc)
{
	const struct cfi_tables *t = atomic_load_explicit(&cfi.current, memory_order_acquire);
	const struct ehcfi_range *r = t != NULL ? ehcfi_range_find(t->r, t->n, pc) : NULL;
	const struct ehcfi_row *row;

	int pending = 0;

	if (r == NULL)
		return CFI_ROW_NO_OBJECT;
	row = r->lazy != NULL ? ehcfi_lazy_row(r, pc, &pending) : ehcfi_row_find(r, pc);
	return row == NULL ? CFI_ROW_NONE : row->kind;
}

#if defined(__x86_64__)
/* cfi_unwind over tables t, noting what it reads in log (or NULL). */
static enum cfi_result cfi_walk(const struct cfi_tables *t, const ucontext_t *uc, uintptr_t lo,
				uintptr_t hi, const unsigned char *mem, uint64_t *frames, uint32_t cap,
				uint32_t *n, enum cfi_failure *why, struct ehcfi_log *log)
{
	/* ucontext register index of each DWARF register */
	static const int greg[EHCFI_NREGS] = {
		REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
		REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
	};
	const greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t sp = (uintptr_t)g[REG_RSP];
	uint64_t regs[EHCFI_NREGS];
	struct ehcfi_stack st;
	enum ehcfi_failure fail;
	enum ehcfi_result r;

	*n = 0;
	*why = CFI_FAIL_NONE;
	if (t == NULL || sp < lo || sp >= hi || hi - lo < 8) {
		*why = CFI_FAIL_STACK;
		return CFI_FAILED;
	}
	atomic_fetch_add(&cfi.walkers, 1);
	if (atomic_load(&cfi.closing) != 0) {
		/* an object may be being unmapped: the stack copy instead */
		atomic_fetch_sub(&cfi.walkers, 1);
		*why = CFI_FAIL_NO_ROW;
		if (log != NULL)
			log->flags |= EHCFI_LOG_PENDING;
		return CFI_FAILED;
	}
	for (int i = 0; i < EHCFI_NREGS; i++)
		regs[i] = (uint64_t)g[greg[i]];
	/* Nothing below the interrupted stack pointer's red zone is read: an
	 * epilogue that has popped a register still finds it there, where
	 * its CFI says, and the kernel put the signal frame below it. */
	if (mem == NULL)
		mem = (const unsigned char *)lo;
	if (sp - lo >= CFI_RED_ZONE) {
		mem += sp - CFI_RED_ZONE - lo;
		lo = sp - CFI_RED_ZONE;
	}
	st = (struct ehcfi_stack){ lo, hi, mem };
	r = ehcfi_walk_log(t->r, t->n, regs, &st, 0, frames, cap, n, &fail, log);
	atomic_fetch_sub(&cfi.walkers, 1);
	*why = (enum cfi_failure)fail;
	return r == EHCFI_COMPLETE ? CFI_COMPLETE : r == EHCFI_TRUNCATED ? CFI_TRUNCATED : CFI_FAILED;
}
#endif

enum cfi_result cfi_unwind(const ucontext_t *uc, uintptr_t lo, uintptr_t hi, uint64_t *frames,
			   uint32_t cap, uint32_t *n, enum cfi_failure *why)
{
#if defined(__x86_64__)
	return cfi_walk(atomic_load_explicit(&cfi.current, memory_order_acquire), uc, lo, hi, NULL,
			frames, cap, n, why, NULL);
#else
	(void)uc; (void)lo; (void)hi; (void)frames; (void)cap;
	*n = 0;
	*why = CFI_FAIL_NO_OBJECT;
	return CFI_FAILED;
#endif
}

enum cfi_result cfi_unwind_copy(const ucontext_t *uc, uintptr_t lo, uintptr_t hi,
				const unsigned char *mem, uint64_t *frames, uint32_t cap, uint32_t *n,
				enum cfi_failure *why)
{
#if defined(__x86_64__)
	return cfi_walk(atomic_load_explicit(&cfi.current, memory_order_acquire), uc, lo, hi, mem,
			frames, cap, n, why, NULL);
#else
	(void)uc; (void)lo; (void)hi; (void)mem; (void)frames; (void)cap;
	*n = 0;
	*why = CFI_FAIL_NO_OBJECT;
	return CFI_FAILED;
#endif
}

/* ---- walks kept (cfi_unwind_memo) ---- */

#define CFI_MEMO_LOG 6
#define CFI_MEMO_WORDS 48
#define CFI_MEMO_FRAMES 48

/* A walk and what it read.  busy: a thread is using the slot (the others
 * walk without it); gen 0: empty. */
struct cfi_memo {
	_Atomic int busy;
	uint32_t nwords, nframes, cap;
	uint8_t result, why, used_fp;
	uint64_t gen, serial;
	uintptr_t pc, sp, fp, lo, hi;
	uint64_t addr[CFI_MEMO_WORDS], val[CFI_MEMO_WORDS];
	uint64_t frames[CFI_MEMO_FRAMES];
};

static struct cfi_memo cfi_memo[1 << CFI_MEMO_LOG] PRELOAD_COLD;
static _Atomic uint64_t cfi_memo_hits, cfi_memo_walks, cfi_memo_serial;

/* A count for the statistics, without a locked instruction on the
 * sampler's path: two threads at once may count one. */
static inline void memo_count(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

#if defined(__x86_64__)
/* Is m's walk the one the tables t would make from these registers, on
 * this stack?  Every word it read still holds what it read. */
static int memo_holds(const struct cfi_memo *m, const struct cfi_tables *t, const greg_t *g,
		      uintptr_t lo, uintptr_t hi, uint32_t cap)
{
	if (m->gen != t->gen || m->pc != (uintptr_t)g[REG_RIP] || m->sp != (uintptr_t)g[REG_RSP] ||
	    m->lo != lo || m->hi != hi || m->cap != cap ||
	    (m->used_fp && m->fp != (uintptr_t)g[REG_RBP]))
		return 0;
	for (uint32_t i = 0; i < m->nwords; i++)
		if (*(const uint64_t *)(uintptr_t)m->addr[i] != m->val[i])
			return 0;
	return 1;
}
#endif

enum cfi_result cfi_unwind_memo(const ucontext_t *uc, uintptr_t lo, uintptr_t hi, uintptr_t hint,
				uint64_t *frames, uint32_t cap, uint32_t *n, enum cfi_failure *why,
				uint64_t *serial)
{
#if defined(__x86_64__)
	const struct cfi_tables *t = atomic_load_explicit(&cfi.current, memory_order_acquire);
	const greg_t *g = uc->uc_mcontext.gregs;
	uint64_t key = ((uint64_t)g[REG_RSP] >> 3 ^ (uint64_t)hint) * 0x9e3779b97f4a7c15ull;
	struct cfi_memo *m = &cfi_memo[key >> (64 - CFI_MEMO_LOG)];
	struct ehcfi_log log;
	enum cfi_result r;

	*serial = 0;
	if (t == NULL || atomic_exchange_explicit(&m->busy, 1, memory_order_acquire))
		return cfi_walk(t, uc, lo, hi, NULL, frames, cap, n, why, NULL);
	memo_count(&cfi_memo_walks);
	if (memo_holds(m, t, g, lo, hi, cap)) {
		memo_count(&cfi_memo_hits);
		memcpy(frames, m->frames, m->nframes * sizeof(*frames));
		*n = m->nframes;
		*why = (enum cfi_failure)m->why;
		*serial = m->serial;
		r = (enum cfi_result)m->result;
	} else {
		log = (struct ehcfi_log){ m->addr, m->val, CFI_MEMO_WORDS, 0, 0 };
		r = cfi_walk(t, uc, lo, hi, NULL, frames, cap, n, why, &log);
		m->gen = 0;
		if (!(log.flags & (EHCFI_USED_REGS | EHCFI_LOG_FULL | EHCFI_LOG_PENDING)) &&
		    *n <= CFI_MEMO_FRAMES) {
			m->nwords = log.n;
			m->nframes = *n;
			m->cap = cap;
			m->result = (uint8_t)r;
			m->why = (uint8_t)*why;
			m->used_fp = (log.flags & EHCFI_USED_FP) != 0;
			m->pc = (uintptr_t)g[REG_RIP];
			m->sp = (uintptr_t)g[REG_RSP];
			m->fp = (uintptr_t)g[REG_RBP];
			m->lo = lo;
			m->hi = hi;
			memcpy(m->frames, frames, *n * sizeof(*frames));
			m->gen = t->gen;
			m->serial = *serial =
				atomic_fetch_add_explicit(&cfi_memo_serial, 1, memory_order_relaxed) + 1;
		}
	}
	atomic_store_explicit(&m->busy, 0, memory_order_release);
	return r;
#else
	(void)hint;
	*serial = 0;
	return cfi_unwind(uc, lo, hi, frames, cap, n, why);
#endif
}

void cfi_memo_stats(uint64_t *walks, uint64_t *hits)
{
	*walks = atomic_load_explicit(&cfi_memo_walks, memory_order_relaxed);
	*hits = atomic_load_explicit(&cfi_memo_hits, memory_order_relaxed);
}
