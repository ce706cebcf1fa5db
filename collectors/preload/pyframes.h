/* pyframes.h - the Python frames of a sampled CPython thread (pyframes.c)
 *
 * At start, pyframes_init looks for a CPython interpreter in the process
 * (the _PyRuntime symbol of the program or of a libpython it was linked
 * with, and its version) and, for a version whose layout it knows (3.9 to
 * 3.13: the offsets the interpreter publishes, else those of its debug
 * information (pydwarf.h), else the collector's table), arms the
 * walk: in the handler, pyframes_stack reads the sampled thread's frames
 * with process_vm_readv (a read that cannot fault), writes each code
 * object once as a RAW_PYCODE record, and each list of frames once as a
 * part (RAW_PYPARTS) that the stack's record names (raw.h, pystacks.h).  A
 * process without Python pays the one look at start.
 */
#ifndef PROFVIEW_TIMER_PYFRAMES_H
#define PROFVIEW_TIMER_PYFRAMES_H

#include <stdint.h>
#include <sys/types.h>

#include "raw.h"
#include "raw-py.h"

#pragma GCC visibility push(hidden)

/* Looks for the interpreter; when there is one, writes its RAW_PYTHON
 * record (its version; whether its frames are read), which the
 * launcher's summary and the report say.  Allocates the table of code
 * objects written.  Not signal-safe. */
void pyframes_init(void);
/* After a dlopen that loaded lib: when the process had no interpreter
 * and lib defines _PyRuntime (a program embedding a libpython it loads
 * itself), looks for it there as pyframes_init does, once, and reads its
 * frames from then on.  Not signal-safe. */
void pyframes_loaded(void *lib);
/* In the child of a fork, once its trace (a new one) is started: no code
 * object has been written to it; its RAW_PYTHON record is.  Not
 * signal-safe. */
void pyframes_atfork_child(void);
/* Are Python frames read?  Signal-safe. */
int pyframes_on(void);
/* The stack id (stacktab.h) of the native frames frames[0..*n) (leaf
 * first, room for cap words) with the calling thread's Python frames,
 * writing what the trace does not hold yet: the code objects, the
 * Python frames as a part (RAW_PYPARTS) and the stack as a RAW_STACK_PY (the
 * native stack's id when the thread runs no Python).  0 when the stack
 * could not be stored: frames[0..*n) then holds both, merged (raw.h),
 * for the caller to write inline.  Signal-safe: reads through
 * process_vm_readv, no lock, no allocation. */
uint32_t pyframes_stack(uint64_t *frames, uint32_t *n, uint32_t cap);

/* --stats: one line with the mean time of the walks of Python frames.
 * Not signal-safe. */
void pyframes_print_stats(void);

/* Another thread's Python frames, for a RAW_SAMPLE_PY record. */
struct pyframes_thread {
	uint64_t words[RAW_PY_MAX_STACK];
	uint32_t gend[RAW_PY_MAX_STACK];
	uint32_t nwords, ngroups;
};
/* Reads the Python frames of the thread whose pthread_t is thread (the
 * wall-clock sampler's look at a thread off CPU), writing the code
 * objects not yet in the trace; returns the size of its RAW_SAMPLE_PY
 * record, 0 when it runs no Python.  Signal-safe. */
uint32_t pyframes_read_thread(uintptr_t thread, struct pyframes_thread *t);
/* The pthread_t of the thread tid among those of the interpreters'
 * thread states (an attached process's threads, found running, whose
 * pthread_t is not known otherwise), 0 when none: each one's glibc thread
 * descriptor read at the offset where the library's own holds its tid.
 * Signal-safe. */
uintptr_t pyframes_pthread_of(pid_t tid);
/* The same for the calling thread (a handler's sample that keeps a copy
 * of the stack rather than walking it: --unwind=dwarf, or a walk that
 * failed).  Signal-safe. */
uint32_t pyframes_read_self(struct pyframes_thread *t);
/* Writes and publishes t's RAW_SAMPLE_PY record of size bytes (as
 * pyframes_read_thread said) at at, for the sample of tid at time_ns.
 * Signal-safe. */
void pyframes_put_thread(void *at, uint32_t size, const struct pyframes_thread *t, uint32_t tid,
			 uint64_t time_ns);

/* Tests only (PROFVIEW_TEST_PYGARBAGE in the environment): the walk is
 * pointed at a chain of frames made of garbage after its first frame.
 * PROFVIEW_TEST_PYTABLES=0: the collector's tables of offsets are not
 * used (the interpreter's own or its debug information's only).
 * PROFVIEW_TEST_PYCOMPARE=1: the offsets read from the debug information
 * are compared, field by field, with the table of the version and with
 * those the interpreter publishes, on stderr.  PROFVIEW_TEST_PYDWARF:
 * pydwarf.h. */

#pragma GCC visibility pop

#endif
