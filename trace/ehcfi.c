/* ehcfi.c - the walk over the unwind tables made of .eh_frame (see
 * ehcfi.h; the tables are made in ehcfi-build.c)
 *
 * The walk looks the program counter up (return address - 1 for callers,
 * so that a call at the very end of a function finds its row), computes
 * the CFA, reads the return address and perhaps the saved rbp, and goes
 * on.  It reads nothing but the tables and the stack it is given, and the
 * stack pointer must grow at every frame, so it ends and never faults.
 *
 * The exact (offline) walk follows libdwfl's rules where they differ from
 * what a walk in a signal handler would do: libdwfl reads every saved
 * register of a frame, and takes a read it cannot make for the end of the
 * stack when it is the return address (a cut stack), for an unknown
 * register otherwise; it steps code no CFI covers with frame pointers of
 * its own.  So the walk fails (its caller asks libdwfl) where libdwfl
 * would read what the walk does not (an opaque row, a saved register
 * outside the stack other than the return address) or take a step of its
 * own, and ends cut where the return address is outside the stack.
 */
#include "ehcfi-int.h"
#include "ehcfi-lazy.h"

#include <stddef.h>
#include <string.h>
#include <ucontext.h>

/* ---- the walk ---- */

const struct ehcfi_range *ehcfi_range_find(const struct ehcfi_range *r, size_t n, uintptr_t pc)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pc < r[mid].lo)
			hi = mid;
		else if (pc >= r[mid].hi)
			lo = mid + 1;
		else
			return &r[mid];
	}
	return NULL;
}

const struct ehcfi_row *ehcfi_row_find(const struct ehcfi_range *r, uintptr_t pc)
{
	uint64_t off = pc - r->bias, page;
	size_t lo = 0, hi = r->nrows;

	if (pc < r->bias || off > UINT32_MAX || r->nrows == 0)
		return NULL;
	page = (off >> PAGE_SHIFT) - r->page_base;
	if ((off >> PAGE_SHIFT) < r->page_base) {
		hi = 0;
	} else if (page < r->npages) {
		/* the rows from the one in force at the page's start to the
		 * one in force at the next page's */
		lo = r->pages[page];
		hi = page + 1 < r->npages ? (size_t)r->pages[page + 1] + 1 : r->nrows;
		if (r->rows[lo].pc > off)
			return NULL; /* before the first row */
		lo++;
	} else {
		lo = r->pages[r->npages - 1];
	}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->rows[mid].pc <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? NULL : &r->rows[lo - 1];
}

#if EHCFI_SUPPORTED
/* ucontext register index of each DWARF register */
static const int ehcfi_greg[DW_NREGS] = {
	REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
	REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
};
#endif

/* Reads a word of the stack at address a. */
static inline int stack_word(const struct ehcfi_stack *st, uintptr_t a, uint64_t *v)
{
	if (a < st->lo || st->hi - st->lo < 8 || a > st->hi - 8)
		return 0;
	memcpy(v, st->mem + (a - st->lo), 8);
	return 1;
}

/* Are the slots [a, b + 8) all on the stack? */
static inline int stack_holds(const struct ehcfi_stack *st, uintptr_t a, uintptr_t b)
{
	return a >= st->lo && b >= a && st->hi - st->lo >= 8 && b <= st->hi - 8;
}

#if EHCFI_SUPPORTED
/* A walk between two frames: where the current frame is, and what is
 * known of its registers. */
struct walk {
	const struct ehcfi_stack *st;
	uintptr_t pc, sp, fp;
	/* where the current frame's other registers are: the first frame's,
	 * a ucontext on the stack, or none (a caller) */
	const uint64_t *regs;
	uintptr_t regs_at;
	int fp_known;
	/* where fp was read (0: the first frame's rbp), and whether the log
	 * has it: it goes there only when the walk uses it */
	uintptr_t fp_at;
	int fp_noted;
	int exact;              /* pc is where the frame is, not a return address */
	int exact_walk;         /* EHCFI_EXACT */
	enum ehcfi_failure why;
	struct ehcfi_log *log;  /* what the walk reads, or NULL */
};

static inline void log_word(struct ehcfi_log *log, uintptr_t a, uint64_t v)
{
	if (log->n < log->cap) {
		log->addr[log->n] = a;
		log->val[log->n] = v;
		log->n++;
	} else {
		log->flags |= EHCFI_LOG_FULL;
	}
}

/* A word of the walk's stack, noted in its log. */
static inline int walk_word(struct walk *w, uintptr_t a, uint64_t *v)
{
	if (!stack_word(w->st, a, v))
		return 0;
	if (w->log != NULL)
		log_word(w->log, a, *v);
	return 1;
}

/* The caller's rbp, from the stack at a: noted only if used (walk_fp). */
static inline int walk_fp_load(struct walk *w, uintptr_t a)
{
	uint64_t v;

	if (!stack_word(w->st, a, &v))
		return 0;
	w->fp = (uintptr_t)v;
	w->fp_at = a;
	w->fp_noted = 0;
	return 1;
}

/* The frame pointer, to use: the log notes where it came from. */
static inline uintptr_t walk_fp(struct walk *w)
{
	if (w->log != NULL) {
		if (w->fp_at == 0) {
			w->log->flags |= EHCFI_USED_FP;
		} else if (!w->fp_noted) {
			log_word(w->log, w->fp_at, w->fp);
			w->fp_noted = 1;
		}
	}
	return w->fp;
}

/* What one step came to. */
enum step { STEP_ON, STEP_END, STEP_CUT, STEP_FAILED };

/* To the caller of code outside every object, by frame pointers. */
static inline enum step step_fp(struct walk *w)
{
	uint64_t word;

	uintptr_t fp = walk_fp(w);

	if (!walk_word(w, fp + 8, &word)) {
		w->why = EHCFI_FAIL_STACK;
		return STEP_FAILED;
	}
	w->pc = (uintptr_t)word;
	if (!walk_fp_load(w, fp)) {
		w->why = EHCFI_FAIL_STACK;
		return STEP_FAILED;
	}
	w->sp = fp + 16;
	w->regs = NULL;
	w->regs_at = 0;
	w->exact = 0;
	return w->pc == 0 ? STEP_END : STEP_ON;
}

/* Out of rt_sigreturn's frame: a ucontext at the stack pointer holds the
 * interrupted registers. */
static inline enum step step_signal(struct walk *w)
{
	uintptr_t gregs = w->sp + offsetof(ucontext_t, uc_mcontext.gregs);
	uint64_t npc, nsp;

	if (!walk_word(w, gregs + REG_RIP * 8, &npc) ||
	    !walk_word(w, gregs + REG_RSP * 8, &nsp) ||
	    !walk_fp_load(w, gregs + REG_RBP * 8) || nsp <= w->sp ||
	    (w->exact_walk && !stack_holds(w->st, gregs, gregs + REG_RIP * 8))) {
		w->why = EHCFI_FAIL_STACK;
		return STEP_FAILED;
	}
	w->pc = (uintptr_t)npc;
	w->sp = (uintptr_t)nsp;
	w->fp_known = 1;
	w->regs = NULL;
	w->regs_at = gregs;
	w->exact = 1;
	if (w->exact_walk && w->pc == 0)
		return STEP_FAILED; /* what libdwfl makes of it: not ours to guess */
	return STEP_ON;
}

/* The CFA of a row's frame into *cfa; 0 when it cannot be known. */
static inline int row_cfa(struct walk *w, const struct ehcfi_row *row, uintptr_t *cfa)
{
	unsigned reg = row->reg & 0x1f;
	uintptr_t base;
	uint64_t word;

	if (row->kind == KIND_PLT) {
		*cfa = w->sp + (uintptr_t)(intptr_t)row->off +
		       ((w->pc & 15) >= (uintptr_t)row->fp_off ? 8 : 0);
		return 1;
	}
	if (reg == DW_RSP) {
		base = w->sp;
	} else if (reg == DW_RBP && w->fp_known) {
		base = walk_fp(w);
	} else if (w->regs != NULL) {
		if (w->log != NULL)
			w->log->flags |= EHCFI_USED_REGS;
		base = (uintptr_t)w->regs[reg];
	} else if (w->regs_at != 0 &&
		   walk_word(w, w->regs_at + (uintptr_t)ehcfi_greg[reg] * 8, &word)) {
		base = (uintptr_t)word;
	} else {
		w->why = EHCFI_FAIL_RULE;
		return 0;
	}
	*cfa = base + (uintptr_t)(intptr_t)row->off;
	if (row->kind == KIND_DEREF) {
		if (!walk_word(w, *cfa, &word)) {
			w->why = EHCFI_FAIL_STACK;
			return 0;
		}
		*cfa = (uintptr_t)word;
	}
	return 1;
}

/* The caller's rbp, by the row's rule; 0 when it cannot be read. */
static inline int row_fp(struct walk *w, const struct ehcfi_row *row, uintptr_t cfa)
{
	switch ((row->reg >> 5) & 3) {
	case FP_OFFSET:
		if (!walk_fp_load(w, cfa + (uintptr_t)(intptr_t)row->fp_off)) {
			w->why = EHCFI_FAIL_STACK;
			return 0;
		}
		w->fp_known = 1;
		break;
	case FP_AT_RBP:
		if (!w->fp_known || !walk_fp_load(w, walk_fp(w) + (uintptr_t)(intptr_t)row->fp_off)) {
			w->why = EHCFI_FAIL_STACK;
			return 0;
		}
		break;
	case FP_SAME:
		break;
	default:
		w->fp_known = 0;
		break;
	}
	return 1;
}

/* To the caller by a row of the tables (a register, a dereference, a PLT
 * entry). */
static inline enum step step_row(struct walk *w, const struct ehcfi_row *row)
{
	uintptr_t cfa;
	uint64_t word;

	if (!row_cfa(w, row, &cfa))
		return STEP_FAILED;
	if (cfa <= w->sp) {
		w->why = EHCFI_FAIL_STACK;
		return STEP_FAILED;
	}
	if (!walk_word(w, cfa - 8, &word)) {
		w->why = EHCFI_FAIL_STACK;
		/* libdwfl ends the stack there */
		return w->exact_walk ? STEP_CUT : STEP_FAILED;
	}
	if (w->exact_walk && row->save_lo <= row->save_hi &&
	    !stack_holds(w->st, cfa + (uintptr_t)(intptr_t)row->save_lo,
			 cfa + (uintptr_t)(intptr_t)row->save_hi)) {
		w->why = EHCFI_FAIL_STACK;
		return STEP_FAILED;
	}
	if (!row_fp(w, row, cfa))
		return STEP_FAILED;
	w->pc = (uintptr_t)word;
	w->sp = cfa;
	w->regs = NULL;
	w->regs_at = 0;
	w->exact = 0;
	return w->pc == 0 ? STEP_END : STEP_ON;
}

/* One frame: records it in frames[*k] and steps to its caller. */
static inline enum step step(struct walk *w, const struct ehcfi_range *ranges, size_t nranges,
			     uint64_t *frames, uint32_t *k)
{
	uintptr_t look = w->exact ? w->pc : w->pc - 1;
	const struct ehcfi_range *r = ehcfi_range_find(ranges, nranges, look);
	const struct ehcfi_row *row;

	if (r == NULL) {
		/* code outside every object (JIT, or an address that is no
		 * code at all): frame pointers, where they are sane */
		if (w->exact_walk || !w->fp_known || walk_fp(w) < w->sp || (w->fp & 7) != 0) {
			w->why = EHCFI_FAIL_NO_OBJECT;
			return STEP_FAILED;
		}
		frames[*k] = *k > 0 && w->exact ? w->pc + 1 : w->pc;
		(*k)++;
		return step_fp(w);
	}
	if (r->lazy != NULL) {
		int pending;

		row = ehcfi_lazy_row(r, look, &pending);
		if (pending && w->log != NULL)
			w->log->flags |= EHCFI_LOG_PENDING;
	} else {
		row = ehcfi_row_find(r, look);
	}
	if (row == NULL || row->kind == KIND_NONE) {
		w->why = EHCFI_FAIL_NO_ROW;
		return STEP_FAILED;
	}
	if (row->kind == KIND_BAD || (w->exact_walk && (row->reg & EHCFI_ROW_OPAQUE))) {
		w->why = EHCFI_FAIL_RULE;
		return STEP_FAILED;
	}
	frames[*k] = *k > 0 && (w->exact || row->kind == KIND_SIGNAL) ? w->pc + 1 : w->pc;
	(*k)++;
	if (row->kind == KIND_END) {
		/* libdwfl would read the saved registers of the outermost
		 * frame too: none is usual */
		if (w->exact_walk && row->save_lo <= row->save_hi) {
			w->why = EHCFI_FAIL_RULE;
			return STEP_FAILED;
		}
		return STEP_END;
	}
	return row->kind == KIND_SIGNAL ? step_signal(w) : step_row(w, row);
}
#endif

enum ehcfi_result ehcfi_walk(const struct ehcfi_range *ranges, size_t nranges, const uint64_t *regs0,
			     const struct ehcfi_stack *st, unsigned flags, uint64_t *frames,
			     uint32_t cap, uint32_t *n, enum ehcfi_failure *why)
{
	return ehcfi_walk_log(ranges, nranges, regs0, st, flags, frames, cap, n, why, NULL);
}

enum ehcfi_result ehcfi_walk_log(const struct ehcfi_range *ranges, size_t nranges, const uint64_t *regs0,
				 const struct ehcfi_stack *st, unsigned flags, uint64_t *frames,
				 uint32_t cap, uint32_t *n, enum ehcfi_failure *why, struct ehcfi_log *log)
{
#if EHCFI_SUPPORTED
	struct walk w = {
		.st = st,
		.pc = (uintptr_t)regs0[DW_RA],
		.sp = (uintptr_t)regs0[DW_RSP],
		.fp = (uintptr_t)regs0[DW_RBP],
		.regs = regs0,
		.fp_known = 1,
		.exact = 1,
		.exact_walk = (flags & EHCFI_EXACT) != 0,
		.why = EHCFI_FAIL_NONE,
		.log = log,
	};
	enum ehcfi_result res = EHCFI_FAILED;
	uint32_t k = 0;

	if (w.sp < st->lo || w.sp >= st->hi) {
		w.why = EHCFI_FAIL_STACK;
	} else {
		for (;;) {
			enum step s;

			if (k == cap) {
				res = EHCFI_TRUNCATED;
				break;
			}
			s = step(&w, ranges, nranges, frames, &k);
			if (s == STEP_ON)
				continue;
			res = s == STEP_END ? EHCFI_COMPLETE : s == STEP_CUT ? EHCFI_CUT : EHCFI_FAILED;
			break;
		}
	}
	*n = k;
	*why = w.why;
	if (log != NULL) {
		log->end_pc = w.pc;
		log->end_sp = w.sp;
	}
	return res;
#else
	(void)ranges; (void)nranges; (void)st; (void)flags; (void)frames; (void)cap;
	if (log != NULL) {
		log->end_pc = regs0[DW_RA];
		log->end_sp = regs0[DW_RSP];
	}
	*n = 0;
	*why = EHCFI_FAIL_NO_OBJECT;
	return EHCFI_FAILED;
#endif
}
