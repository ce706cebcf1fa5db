/* pydwarf.h - CPython's structure offsets from its debug information
 * (pydwarf.c)
 *
 * The walk of Python frames (pyframes.c) needs a few offsets into the
 * interpreter's structures.  Where the interpreter does not publish them
 * (3.13's _Py_DebugOffsets), they are read here from the DWARF of the
 * object that defines _PyRuntime: its own .debug_info, or the separate
 * file found by its build-id (/usr/lib/debug/.build-id/xx/rest.debug) or
 * by its .gnu_debuglink, whose build-id must be the object's.  libdw is
 * loaded with dlopen then, and only then: a process without Python, or a
 * Python without debug information, never loads it.
 */
#ifndef PROFVIEW_PYDWARF_H
#define PROFVIEW_PYDWARF_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

/* Offsets into CPython's structures, of one version. */
struct py_layout {
	uint32_t version; /* major << 8 | minor */
	uint32_t runtime_interpreters_head, interp_threads_head, interp_next;
	uint32_t tstate_next, tstate_thread_id, tstate_frame;
	uint32_t cframe_current_frame; /* 0 and unused from 3.13 (no _PyCFrame) */
	uint32_t frame_code, frame_instr, frame_previous, frame_owner;
	uint32_t owner_cstack; /* 0: 3.11's is_entry instead */
	uint32_t code_qualname, code_filename, code_firstlineno, code_linetable, code_adaptive;
	uint32_t bytes_size, bytes_sval;
	uint32_t unicode_length, unicode_state, unicode_ascii_data;
	uint32_t unicode_utf8_length, unicode_utf8, unicode_compact_data;
	uint32_t object_type;
	/* 3.9 and 3.10: the frames are PyFrameObjects, each run by a C-level
	 * call of its own, and the instruction is the int f_lasti, in code
	 * units (1, 3.10) or bytes (2, 3.9); 0 from 3.11 on */
	uint32_t lasti;
};

/* The fields of struct py_layout that are offsets (not the version nor
 * the two that say how a version's frames are read), for comparisons:
 * each its name and its offset in the structure. */
struct pydwarf_field {
	const char *name;
	uint32_t at;
};
extern const struct pydwarf_field pydwarf_fields[];
extern const uint32_t pydwarf_nfields;

/* The layout of version (3.9 to 3.13) read from the debug information of
 * the object that defines runtime (the address of its _PyRuntime) into
 * *l, every field or none.  Returns 0 when read, 1 when taken from the
 * cache of an earlier read of the same build-id ($XDG_CACHE_HOME/profview
 * or ~/.cache/profview, python-BUILDID.offsets, mode 0600; a file that is
 * not whole, not ours or does not check is not trusted; PROFVIEW_CACHE=off
 * leaves it alone), -1 when there is none, when it cannot be read, is not
 * the object's (another build-id) or lacks or contradicts something the
 * walk needs.  fresh: read the DWARF, the cache neither read nor written.
 * PROFVIEW_TEST_PYDWARF in the environment (tests only) names the debug
 * file to read instead of the ones looked for (no cache).  Allocates
 * (libdw's): not signal-safe. */
int pydwarf_layout(const void *runtime, uint32_t version, struct py_layout *l, int fresh);

/* Tests only (PROFVIEW_TEST_PYCOMPARE=1): the offsets read from the
 * debug information (not the cache's) against the table of the version
 * and those the interpreter publishes (either NULL when none), field by
 * field, said on stderr.  Not signal-safe. */
void pydwarf_compare(const void *runtime, uint32_t version, const struct py_layout *table,
		     const struct py_layout *published);

#pragma GCC visibility pop

#endif
