/* ehcfi.h - unwind tables made of .eh_frame, and a walk of a stack over them
 *
 * The call frame information of an object (its .eh_frame, found through
 * its .eh_frame_hdr) is run once into a sorted table of rows: for a range
 * of addresses, how to find the canonical frame address (CFA), where the
 * caller's frame pointer was saved, which stack slots hold saved
 * registers, and whether the frame is a signal trampoline or the
 * outermost one.  A walk then unwinds a stack with table lookups and
 * reads of the stack alone.
 *
 * Three users: the collector's signal handler (collectors/preload/cfi.c),
 * which makes tables of the objects loaded in its own process and walks
 * the live stack; the analyzer (analyzer/symbols/unwind-cfi.c), which
 * makes them of the files a trace maps and walks the stack copies of
 * DWARF-mode samples; and the injector of collect-timer -p
 * (collectors/launch/inject-walk.c), which makes them of the files
 * another process maps and walks a copy of a stopped thread's stack.  The object's bytes are wherever the caller has them: an
 * ehcfi_image says where its addresses are in memory.  The walk reads a
 * stack through an ehcfi_stack, which may be the stack itself or a copy of
 * part of it.
 *
 * An offline walk (EHCFI_EXACT) must give what libdwfl gives for the same
 * stack copy, or nothing: it takes no frame-pointer steps through code no
 * table covers, and fails wherever libdwfl would read memory the walk does
 * not read itself (a saved register outside the copy, a rule of a register
 * the walk does not follow), so that its caller can ask libdwfl instead.
 *
 * x86-64 only (elsewhere no rows are made and every walk fails).  Only
 * libc, nothing allocated by the walk, which is signal-safe and may run in
 * many threads at once over the same tables: the collector and its
 * preload library compile this in.
 */
#ifndef PROFVIEW_EHCFI_H
#define PROFVIEW_EHCFI_H

#include <stddef.h>
#include <stdint.h>

/* DWARF registers of x86-64 the walk starts from: rax, rdx, rcx, rbx, rsi,
 * rdi, rbp, rsp, r8-r15, then the return address column (rip), as raw.h
 * numbers them. */
#define EHCFI_NREGS 17

/* What a row says (struct ehcfi_row's kind). */
enum ehcfi_kind {
	EHCFI_NONE = 0,    /* no CFI for these addresses */
	EHCFI_REG,         /* CFA = register + offset */
	EHCFI_DEREF,       /* CFA = *(register + offset): a stack realigned by the prologue */
	EHCFI_PLT,         /* a PLT stub: CFA = rsp + off (+ 8 in an entry's second half) */
	EHCFI_SIGNAL,      /* a signal trampoline: a ucontext at the stack pointer */
	EHCFI_END,         /* the outermost frame: return address undefined */
	EHCFI_BAD,         /* a rule not expressed */
};

/* One row: from pc (an offset from the object's load bias) to the next
 * row's. */
struct ehcfi_row {
	uint32_t pc;
	int32_t off;       /* CFA offset */
	int16_t fp_off;    /* rbp saved at CFA (or rbp) + fp_off; EHCFI_PLT: the threshold */
	int16_t save_lo;   /* the registers saved at CFA + n have n in [save_lo, save_hi] */
	int16_t save_hi;   /* (save_lo > save_hi: none) */
	uint8_t kind;      /* enum ehcfi_kind */
	uint8_t reg;       /* CFA register (bits 0-4), rbp's rule (5-6), EHCFI_ROW_OPAQUE */
};

/* reg bit 7: a register is restored by a rule that may read memory the
 * walk does not read (an expression), or saved where a row cannot say */
#define EHCFI_ROW_OPAQUE 0x80

/* Rows being made, then the table of one object: rows sorted by pc, and a
 * page index (pages[k]: the row in force at the start of the k-th 4 KiB
 * page from page_base) in the same allocation. */
struct ehcfi_rows {
	struct ehcfi_row *v;
	size_t n, cap;
	int oom;
	int fixed;         /* v is the caller's, cap rows: full is oom, never grown */
	uint32_t page_base, npages;
	const uint32_t *pages;
};

/* Where an object's bytes are: address a of the object (as its program
 * headers number them, from its load bias) is at bias + a in memory, and
 * only the memory of seg[0..nseg) is read ([lo, hi) in memory). */
#define EHCFI_MAX_SEGS 8
struct ehcfi_image {
	uintptr_t bias;
	uintptr_t eh_frame_hdr;  /* memory address of its .eh_frame_hdr */
	uintptr_t seg[EHCFI_MAX_SEGS][2];
	int nseg;
};

/* Makes the rows of the object img describes, sorted and indexed, into
 * *b (zeroed by the caller): none when it has no CFI we read; b->oom when
 * memory ran out (b then holds nothing).  Reads nothing outside img's
 * segments, whatever their bytes.  Free b->v with free(). */
void ehcfi_build(const struct ehcfi_image *img, struct ehcfi_rows *b);

/* An object's .eh_frame_hdr as read: its search table of count (initial
 * location, FDE) pairs (table 0 and count 0: none), and .eh_frame with the
 * end of the segment that holds it. */
struct ehcfi_index {
	uintptr_t hdr, table;
	uint32_t count;
	uintptr_t eh_frame, eh_hi;
};

/* Reads img's .eh_frame_hdr into *ix: 0, or -1 when it has none we read.
 * The table's entries are only checked to be inside the segment. */
int ehcfi_index_read(const struct ehcfi_image *img, struct ehcfi_index *ix);

/* The memory address of the first instruction entry i of ix's table
 * (i < ix->count) describes. */
uintptr_t ehcfi_index_pc(const struct ehcfi_index *ix, uint32_t i);

/* How many rows FDEs [first, first + count) of ix's table can make at
 * most (a row per byte of their instructions, and two). */
size_t ehcfi_fdes_bound(const struct ehcfi_index *ix, uint32_t first, uint32_t count);

/* The rows of FDEs [first, first + count) of ix's table, sorted, into *b
 * (zeroed by the caller, or fixed: its own buffer, cap rows), without a
 * page index.  scratch: b->cap rows a sort may use, so that nothing is
 * allocated (NULL: qsort).  Allocates nothing when b is fixed and scratch
 * given: signal-safe then.  b->oom when the rows did not fit. */
void ehcfi_build_fdes(const struct ehcfi_image *img, const struct ehcfi_index *ix, uint32_t first,
		      uint32_t count, struct ehcfi_rows *b, struct ehcfi_row *scratch);

struct ehcfi_lazy;

/* An address range of a walk's tables: [lo, hi), whose object's load bias
 * is bias, and the object's rows; or, when lazy is not NULL, no rows yet:
 * the walk asks ehcfi_lazy_row (ehcfi-lazy.h) for them. */
struct ehcfi_range {
	uintptr_t lo, hi;
	uintptr_t bias;
	const struct ehcfi_row *rows;
	uint32_t nrows;
	uint32_t page_base, npages;
	const uint32_t *pages;
	struct ehcfi_lazy *lazy;
};

/* The range of r[0..n) (sorted by lo, not overlapping) holding pc, or
 * NULL; the row in force at pc in a range, or NULL. */
const struct ehcfi_range *ehcfi_range_find(const struct ehcfi_range *r, size_t n, uintptr_t pc);
const struct ehcfi_row *ehcfi_row_find(const struct ehcfi_range *r, uintptr_t pc);

/* The stack a walk reads: addresses [lo, hi), at mem + (a - lo) in
 * memory (the stack itself: mem = lo). */
struct ehcfi_stack {
	uintptr_t lo, hi;
	const unsigned char *mem;
};

enum ehcfi_result {
	EHCFI_COMPLETE = 0, /* reached the outermost frame */
	EHCFI_TRUNCATED,    /* stopped at cap frames */
	EHCFI_FAILED,       /* a frame the tables cannot unwind */
	EHCFI_CUT,          /* a return address outside the stack read: frames up to there */
};

enum ehcfi_failure {
	EHCFI_FAIL_NONE = 0,
	EHCFI_FAIL_NO_OBJECT,  /* an address in no range */
	EHCFI_FAIL_NO_ROW,     /* a range without CFI for the address */
	EHCFI_FAIL_RULE,       /* a rule the table cannot express */
	EHCFI_FAIL_STACK,      /* a read outside the stack, or no progress */
	EHCFI_FAIL_COUNT
};

/* Walk flags. */
#define EHCFI_EXACT 1u     /* as libdwfl or fail (see above) */

/* Walks the stack st from the registers regs (DWARF numbering, the
 * program counter at EHCFI_NREGS - 1) over the ranges r[0..nr).  frames[0]
 * is the program counter, then return addresses; a frame resumed from a
 * signal frame (not a return address) is stored plus one, so that every
 * caller frame can be stepped back into its call.  *n is set to the frames
 * stored, also when the walk failed.  Without EHCFI_EXACT, a frame in no
 * range is stepped over with its frame pointer, and a return address
 * outside the stack fails the walk (EHCFI_FAIL_STACK) rather than cut it.
 * Reads nothing but the tables and st. */
enum ehcfi_result ehcfi_walk(const struct ehcfi_range *r, size_t nr, const uint64_t *regs,
			     const struct ehcfi_stack *st, unsigned flags, uint64_t *frames,
			     uint32_t cap, uint32_t *n, enum ehcfi_failure *why);

/* What a walk read: the words of the stack, with their values, in the
 * order read (up to cap of them), and what else it used of the first
 * frame.  The walk is a function of the tables, the stack's bounds, the
 * first frame's program counter and rsp, what flags says it used, and
 * these words: a caller can keep the frames of a walk and know they are
 * still the walk's by reading the same words again (a memo). */
#define EHCFI_USED_FP 1u    /* the first frame's rbp */
#define EHCFI_USED_REGS 2u  /* another of its registers */
#define EHCFI_LOG_FULL 4u   /* more than cap words were read */
#define EHCFI_LOG_PENDING 8u /* failed at rows being made by another walk */
struct ehcfi_log {
	uint64_t *addr, *val;
	uint32_t cap, n;        /* n = 0 and flags = 0 before the walk */
	unsigned flags;
	/* set by the walk: the program counter and stack pointer of the
	 * frame it stopped at (complete: the outermost; failed: the one it
	 * could not find or unwind, stored in frames or not; truncated: the
	 * next one): the stack from end_sp up is what a walk that did not
	 * complete has not walked */
	uint64_t end_pc, end_sp;
};

/* ehcfi_walk, noting what it reads in *log (NULL: nothing noted). */
enum ehcfi_result ehcfi_walk_log(const struct ehcfi_range *r, size_t nr, const uint64_t *regs,
				 const struct ehcfi_stack *st, unsigned flags, uint64_t *frames,
				 uint32_t cap, uint32_t *n, enum ehcfi_failure *why,
				 struct ehcfi_log *log);

#endif
