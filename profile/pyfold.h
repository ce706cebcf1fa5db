/* pyfold.h - the interpreter's own frames folded out of Python stacks
 *
 * A sample of a Python program has its Python frames (locations of the
 * "[python]" mapping, PV_MAP_PYTHON) among the native frames of the
 * interpreter that runs them: the evaluation loop, the calls' dispatch,
 * the vectorcall trampolines.  Folded, a Python function's caller is the
 * Python function that called it, and a C function it called (math_sqrt,
 * an extension's, the library's) sits right under it.
 */
#ifndef PROFVIEW_PYFOLD_H
#define PROFVIEW_PYFOLD_H
#include <stdbool.h>
#include "profile.h"

/* Is the function named name one of CPython's own call machinery (the
 * evaluation loop, call dispatch, vectorcall trampolines, generators'
 * resumption)?  Exported for the tests. */
bool pv_is_interpreter_function(const char *name);

/* Drops from every sample of the symbolized profile p that has Python
 * frames: the interpreter's machinery (pv_is_interpreter_function) below
 * its outermost Python frame and right above it (the calls that entered
 * it from C), and, between two Python frames, the interpreter's frames
 * that have no name; never a sample's leaf or root.  p is changed in
 * place.  Returns how many samples changed, or -1 after reporting that
 * memory ran out. */
long pv_fold_python_frames(struct pv_profile *p);

/* Splits, in every sample of the symbolized profile p that has Python
 * frames, the evaluation loop's location right above a run of Python
 * frames (the loop that runs them) when it has inlined lines: its
 * outermost line (the loop) alone stays above the run, and the lines
 * inlined into it (the helpers it ran for the innermost frame:
 * import_name, a call's vectorcall, a frame's clearing) become calls
 * inlined into that frame (a new location of the frame with them as its
 * inner lines, a Python frame still, which --noinlines folds back), so
 * that the stack reads as the calls were made; at the leaf (the loop
 * running the innermost frame's bytecode: its own time) they are left
 * out.  For the stacks shown with their native frames
 * (pv_fold_python_frames drops the loop's location whole).  Returns how
 * many samples changed, or -1 after reporting that memory ran out. */
long pv_split_python_loops(struct pv_profile *p);

/* Marks in every sample of the symbolized profile p that has Python
 * frames what its thread waited for, from the native frames leafward of
 * its innermost Python frame: a frame "[waiting for the GIL]" (taking or
 * handing over the interpreter's lock: take_gil, PyEval_RestoreThread, a
 * condition wait the interpreter's own code called), "[sleeping]"
 * (time.sleep: nanosleep) or "[idle]" (select, poll, a lock, a
 * semaphore, another condition, waitpid) right under that Python frame.
 * With fold, the wait's native frames under the mark are dropped (a
 * made-up leaf such as "[off-cpu]" stays).  Run before
 * pv_fold_python_frames.  Returns how many samples changed, or -1 after
 * reporting that memory ran out. */
long pv_mark_python_waits(struct pv_profile *p, bool fold);

#endif
