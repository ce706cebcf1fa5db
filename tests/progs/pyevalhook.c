/* pyevalhook.c - a frame evaluation function (PEP 523) as a debugger or
 * a JIT installs one, built as a shared object that pyhooks.py loads with
 * ctypes and installs with _PyInterpreterState_SetEvalFrameFunc: it
 * counts the frames it is given and has the interpreter's default
 * function, _PyEval_EvalFrameDefault, evaluate them.  Python's headers
 * are not needed: every version from 3.9 on passes the thread state, the
 * frame and an int, and returns an object pointer.
 */
#include <stdatomic.h>

typedef void *(*hook_eval_fn)(void *tstate, void *frame, int throwflag);

static hook_eval_fn hook_default;
static _Atomic unsigned long hook_count;

void hook_set_default(void *f)
{
	hook_default = (hook_eval_fn)f;
}

unsigned long hook_calls(void)
{
	return atomic_load(&hook_count);
}

/* (not inlined, and work after the call: the hook stays a frame of its
 * own between the interpreter's, as a real one is) */
__attribute__((noinline)) void *hook_eval(void *tstate, void *frame, int throwflag)
{
	void *r;

	atomic_fetch_add(&hook_count, 1);
	r = hook_default(tstate, frame, throwflag);
	atomic_signal_fence(memory_order_seq_cst);
	return r;
}
