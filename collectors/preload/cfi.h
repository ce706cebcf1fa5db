/* cfi.h - unwinding in the signal handler from tables made of .eh_frame
 *
 * Outside the handler (at start, after each dlopen), cfi_refresh lists
 * every object the dynamic loader has loaded (the program, its libraries,
 * dlopen'ed ones, the vDSO) and where its .eh_frame_hdr is.  The rows of
 * an object's call frame information (for a range of addresses, how to
 * find the canonical frame address (CFA), where the caller's frame
 * pointer was saved, and whether the frame is a signal trampoline or the
 * outermost one) are made lazily, in the handler, a chunk of FDEs at a
 * time, the first time a walk needs an address of that chunk
 * (trace/ehcfi-lazy.h): a process that lives a few milliseconds pays
 * for nothing it does not sample, and a big program for the few dozen
 * functions its samples meet, not for its 45,000 FDEs.  (Lazily in each
 * process rather than once per run in a file the processes share: no
 * file to create, trust and lock between processes that may run as
 * other users or in other mount namespaces, and a chunk costs tens of
 * microseconds.)  An object without a search table has its rows made at
 * once.  The .eh_frame sections are read where the loader mapped them: no
 * file is opened.  In the handler, cfi_unwind walks the stack with table
 * lookups and reads of the thread's own stack only; a frame whose address
 * is in no object the loader knows (JIT code, anonymous mappings) is
 * stepped over with its frame pointer.
 *
 * x86-64 only; elsewhere cfi_refresh makes no tables and every walk fails
 * (the caller then records a stack copy).  The file depends on libc alone,
 * so that a test can link it by itself.
 */
#ifndef PROFVIEW_PRELOAD_CFI_H
#define PROFVIEW_PRELOAD_CFI_H

#include <stdint.h>
#include <ucontext.h>

/* What a walk ended with. */
enum cfi_result {
	CFI_COMPLETE = 0,   /* reached the outermost frame */
	CFI_TRUNCATED,      /* stopped at cap frames */
	CFI_FAILED,         /* a frame the tables cannot unwind: use a copy */
};

/* Why a walk failed, for the statistics. */
enum cfi_failure {
	CFI_FAIL_NONE = 0,
	CFI_FAIL_NO_OBJECT,  /* an address in no object and no code mapping */
	CFI_FAIL_NO_ROW,     /* an object without CFI for the address */
	CFI_FAIL_RULE,       /* a rule the table cannot express */
	CFI_FAIL_STACK,      /* a read outside the stack, or no progress */
	CFI_FAIL_COUNT
};

/* Lists the objects loaded since the last call (making the rows at once
 * only of an object without a search table) and drops those of unloaded
 * ones; the first call lists them all.  Not signal-safe; calls
 * must be serialized by the caller.  Replaced tables are freed only when
 * idle() says no walk can be using them (it may be NULL: never free).
 * Returns the number of objects with tables, or -1 when out of memory. */
int cfi_refresh(int (*idle)(void));

/* Walks the stack of the interrupted context uc.  Every read is of
 * [lo, hi), the thread's stack, and above the interrupted stack pointer
 * (which must be inside it).  frames[0] is the interrupted program
 * counter, then return addresses; a frame resumed from a signal frame
 * (not a return address) is stored plus one, so that every caller frame
 * can be stepped back into its call.  *n is set to the frames stored
 * (also when the walk failed).  Signal-safe. */
enum cfi_result cfi_unwind(const ucontext_t *uc, uintptr_t lo, uintptr_t hi, uint64_t *frames,
			   uint32_t cap, uint32_t *n, enum cfi_failure *why);

/* cfi_unwind over a copy of the stack: mem holds the bytes of [lo, hi),
 * read by the caller, and the walk reads them instead of the stack (the
 * frames are the stack's addresses).  For a thread whose stack bounds are
 * not known (one found running, not started under the library): its copy
 * made with a read that cannot fault.  Signal-safe. */
enum cfi_result cfi_unwind_copy(const ucontext_t *uc, uintptr_t lo, uintptr_t hi,
				const unsigned char *mem, uint64_t *frames, uint32_t cap, uint32_t *n,
				enum cfi_failure *why);

/* cfi_unwind, from a table of walks kept with the words of the stack
 * each read: when the same registers meet a stack whose words are still
 * what an earlier walk read, its frames are the walk's, without one.
 * For a walk that starts often where it did before (collect-heap's, from
 * the same place in the allocator).  hint: anything that tells apart the
 * walks of one stack pointer, as their caller.  *serial: the kept walk's
 * number (never the same for two kept walks, so that a caller can keep
 * what it made of the frames under it), or 0 when the walk was not kept.
 * Signal-safe; a thread that finds the slot in use walks without it. */
enum cfi_result cfi_unwind_memo(const ucontext_t *uc, uintptr_t lo, uintptr_t hi, uintptr_t hint,
				uint64_t *frames, uint32_t cap, uint32_t *n, enum cfi_failure *why,
				uint64_t *serial);

/* cfi_unwind_memo's calls, and those answered from the table (counts that
 * threads at once may undercount).  Signal-safe. */
void cfi_memo_stats(uint64_t *walks, uint64_t *hits);

/* What the current tables say about the instruction at pc: one of
 * CFI_ROW_* (for tests and diagnostics).  Signal-safe. */
enum cfi_row_kind {
	CFI_ROW_NO_OBJECT = -1, /* in no object */
	CFI_ROW_NONE = 0,       /* no CFI */
	CFI_ROW_REG,            /* CFA = register + offset */
	CFI_ROW_DEREF,          /* CFA = *(register + offset) */
	CFI_ROW_PLT,            /* a PLT stub */
	CFI_ROW_SIGNAL,         /* a signal trampoline */
	CFI_ROW_END,            /* the outermost frame */
	CFI_ROW_BAD,            /* a rule not expressed */
};
int cfi_row_kind(uintptr_t pc);

/* Table statistics: objects and rows in the current tables.  Signal-safe. */
void cfi_table_size(uint64_t *objects, uint64_t *rows);

/* Around a dlclose: from cfi_close_begin (which waits for the walks
 * running) to cfi_close_end, walks fail at once (their callers take the
 * stack copy), since the object closed may be unmapped while they would
 * read its .eh_frame; refresh the tables before cfi_close_end, so that
 * they no longer hold it.  Not signal-safe; never from a walk's thread
 * inside a walk. */
void cfi_close_begin(void);
void cfi_close_end(void);

/* In the child of a fork: rows the parent's other threads were making
 * are made again when needed.  Not signal-safe. */
void cfi_after_fork(void);

/* What the lazily made rows cost this process so far: chunks made, rows,
 * and the CPU time the walks spent making them.  Signal-safe. */
void cfi_cost(uint64_t *chunks, uint64_t *rows, uint64_t *cpu_ns);

/* The rows of every process of the run made once (ehcfi-share.h): the
 * share at base, len bytes, from now on.  Before the first walk. */
void cfi_share(void *base, size_t len);

#endif
