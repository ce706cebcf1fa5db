/* raw-py.h - the Python records of the profview raw trace format
 *
 * The part of raw.h (see there, and profview-raw(5)) that describes the
 * frames of a CPython program inside the native stacks: the frame words,
 * code objects, shared stacks and parts, and the varints they are written
 * with, and the merge of Python frames into a native stack that the
 * collectors and the reader both do.  Like raw.h it depends on nothing but
 * <stdint.h>.
 */
#ifndef PROFVIEW_RAW_PY_H
#define PROFVIEW_RAW_PY_H

#include "raw.h"

/* Python frames (CPython 3.9 to 3.13, read by collect-timer).  In the
 * frames of a RAW_STACK or RAW_SAMPLE, a word whose top 16 bits are
 * RAW_PY_TAG is a frame of the Python program, not an address: bits 24 to
 * 47 are the index of its code object (a RAW_PYCODE record, which may come
 * later in the file), bits 0 to 23 the instruction it executes, counted in
 * the interpreter's code units (two bytes) from the code's first (RAW_PY_NO_INSTR when
 * unknown).  Index 0 is a marker: the walk of the Python frames stopped at
 * a frame it could not read (its low bits say why, enum raw_py_stop).  The
 * Python frames run by one C-level call of the interpreter's evaluation
 * loop come, innermost first, right before (leafward of) the native frame
 * of that loop (_PyEval_EvalFrameDefault), so that a C function called
 * from Python is leafward of its Python caller.  User-space addresses stay
 * below 2^47, so no address has this tag. */
#define RAW_PY_TAG 0x7079ull
#define RAW_PY_NO_INSTR 0xffffffu
#define RAW_PY_MAX_CODES 0xffffffu
static inline int raw_py_is(uint64_t w)
{
	return (w >> 48) == RAW_PY_TAG;
}
static inline uint64_t raw_py_word(uint32_t code, uint32_t instr)
{
	return RAW_PY_TAG << 48 | (uint64_t)(code & 0xffffffu) << 24 | (instr & 0xffffffu);
}
static inline uint32_t raw_py_code(uint64_t w)
{
	return (uint32_t)(w >> 24) & 0xffffffu;
}
static inline uint32_t raw_py_instr(uint64_t w)
{
	return (uint32_t)w & 0xffffffu;
}

/* A word whose top 16 bits are RAW_PYSTACK_TAG stands for the Python
 * frames of one C-level call of the evaluation loop, stored once in a
 * RAW_PYSTACK record whose index is its low 32 bits: as if its frames
 * were there, one word each. */
#define RAW_PYSTACK_TAG 0x7078ull
static inline int raw_pystack_is(uint64_t w)
{
	return (w >> 48) == RAW_PYSTACK_TAG;
}
static inline uint64_t raw_pystack_word(uint32_t index)
{
	return RAW_PYSTACK_TAG << 48 | index;
}

enum raw_py_stop {
	RAW_PY_STOP_READ = 1,   /* a frame or code object was not readable */
	RAW_PY_STOP_CODE = 2,   /* a frame's code was not a code object */
	RAW_PY_STOP_DEPTH = 3,  /* more frames than the collector walks */
	RAW_PY_STOP_TABLE = 4,  /* the table of code objects was full */
};

/* A Python code object, written once per trace before or after the first
 * frame that runs it: followed by name_len bytes of its qualified name
 * (UTF-8, as co_qualname; before 3.11, its co_name), file_len bytes of
 * its file name (co_filename) and table_len bytes of its line table (in
 * the format of the interpreter's version: co_linetable, 3.9's
 * co_lnotab), padded to 8.  A code object freed and
 * another made at its address get different indices. */
struct raw_pycode {
	struct raw_rec h;
	uint32_t index;        /* > 0, unique in the trace */
	int32_t first_line;    /* co_firstlineno */
	uint32_t version;      /* the interpreter's, major << 8 | minor: 0x030b;
				* | RAW_PYCODE_COMPACT, RAW_PYCODE_FILE_REF */
	uint32_t name_len;
	uint32_t file_len;
	uint32_t table_len;
};
_Static_assert(sizeof(struct raw_pycode) == 32, "raw_pycode is 32 bytes");
/* Flags in raw_pycode.version (a trace's older records have none).
 * RAW_PYCODE_COMPACT: the line table is not the interpreter's but runs of
 * instructions on one line, each two LEB128 varints (7 bits a byte, bit
 * 7: more): its instruction count (0: every later instruction), then
 * (zigzag(line delta) << 1) | no-line, the delta from the line of the
 * last run with a line (first_line at first); an instruction after every
 * run is on no line.  RAW_PYCODE_FILE_REF: the file name is 4 bytes, the
 * index of a code object written before whose file this one is in. */
#define RAW_PYCODE_COMPACT 0x10000u
#define RAW_PYCODE_FILE_REF 0x20000u
#define RAW_PYCODE_VERSION 0xffffu

/* Python code objects packed, several to a record, each written once per
 * trace as a RAW_PYCODE is (the two kinds may both be in a trace, each
 * index in one): followed by entries to the end of the record, a varint 0
 * (the zeros it is padded to 8 with) ending them.  An entry is LEB128
 * varints (7 bits a byte, bit 7: more): its index (> 0, below
 * RAW_PY_MAX_CODES) as zigzag(index - the index of the entry before in
 * the record, or 0), never 0; zigzag(first line); then its qualified name
 * and its file name, each a string: a varint v, and by v & 3:
 *   0: v >> 2 bytes of text follow;
 *   1: the string v >> 2 (below);
 *   2: the first n bytes of the string v >> 2, then m bytes of text: the
 *      varints n and m, then the m bytes;
 * where string i is the name (i even) or the file name (i odd) of the
 * code i >> 1, in an entry before (of this record or an earlier one).
 * No line table: a Python frame word (raw_py_word) of such a code holds
 * in its instruction field the line the instruction is on, 0 when on
 * none (RAW_PY_NO_INSTR still: not known). */
struct raw_pycodes {
	struct raw_rec h;
};
_Static_assert(sizeof(struct raw_pycodes) == 8, "raw_pycodes is 8 bytes");
/* The LEB128 varints of the Python records (7 bits a byte, the low ones
 * first; bit 7: more).  raw_varint_put: v at p (NULL: counted only), its
 * length (1 to 10).  Signal-safe. */
static inline uint32_t raw_varint_put(unsigned char *p, uint64_t v)
{
	uint32_t n = 0;

	do {
		if (p != NULL)
			p[n] = (unsigned char)((v & 127) | (v > 127 ? 128 : 0));
		n++;
		v >>= 7;
	} while (v != 0);
	return n;
}

/* The varint at *p (before end), of at most max_bytes bytes, into *v and
 * *p past it: 0, or -1 when it is cut short or longer. */
static inline int raw_varint_get(const unsigned char **p, const unsigned char *end,
				 unsigned max_bytes, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned i = 0; i < max_bytes && *p < end; i++) {
		unsigned char b = *(*p)++;

		x |= (uint64_t)(b & 127) << (7 * i);
		if (!(b & 128)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

/* d as the varints hold a signed number: 0, -1, 1, -2... as 0, 1, 2, 3... */
static inline uint64_t raw_zigzag(int64_t d)
{
	return d < 0 ? ((uint64_t)-d << 1) - 1 : (uint64_t)d << 1;
}

/* raw_varint_get of a value of 32 bits at most (-1 when over). */
static inline int raw_varint_get32(const unsigned char **p, const unsigned char *end, uint32_t *v)
{
	uint64_t x;

	if (raw_varint_get(p, end, 5, &x) < 0 || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

#define RAW_PYCODES_TEXT 0u
#define RAW_PYCODES_SAME 1u
#define RAW_PYCODES_PREFIX 2u

/* Code objects of the process that are codes of the run's names
 * (RAW_RUN_PYNAMES_MAGIC), written by collect-timer in place of the
 * process's RAW_PYCODES records as it joins the traces of a run, and
 * only in a part of a run: followed by ranges to the end of the record,
 * a varint 0 (the zeros it is padded to 8 with) ending them, each three
 * LEB128 varints: count (> 0), zigzag(index - the end of the range
 * before in the record, or 0) and zigzag(run code - the end of the range
 * before, or 0).  The process's codes index to index + count - 1 are the
 * run's codes run code to run code + count - 1: their qualified names,
 * file names and first lines.  A Python frame word of such a code holds
 * its line as with RAW_PYCODES. */
struct raw_pyruncodes {
	struct raw_rec h;
};
_Static_assert(sizeof(struct raw_pyruncodes) == 8, "raw_pyruncodes is 8 bytes");

/* Python parts of the process that are parts of the run's names
 * (RAW_RUN_PYNAMES_MAGIC), written by collect-timer in place of the
 * process's RAW_PYPARTS records as it joins the traces of a run, and only
 * in a part of a run: followed by two LEB128 varints, eval_lo and
 * eval_hi - eval_lo (the evaluation loop of every run part it names that
 * has no parent: the run's parts hold 0 there, as each process has its
 * own addresses), then ranges to the end of the record, a varint 0 (the
 * zeros it is padded to 8 with) ending them, each three varints: count
 * (> 0), zigzag(index - the end of the range before in the record, or 0)
 * and zigzag(run part - the end of the range before, or 0).  The
 * process's parts index to index + count - 1 are the run's parts run
 * part to run part + count - 1, whose frames name the run's codes: each
 * such code is the process's code that RAW_PYRUNCODES made that run
 * code.  A record without ranges (collect-timer writes these) says that
 * the process's stacks (RAW_STACK_PY, RAW_STACK_PYREF) name the run's
 * parts themselves, by their indices in the run's names: a part the
 * process does not have of its own is the run's of that index. */
struct raw_pyrunparts {
	struct raw_rec h;
};
_Static_assert(sizeof(struct raw_pyrunparts) == 8, "raw_pyrunparts is 8 bytes");

/* Python frames stored once (see RAW_PYSTACK_TAG): followed by nframes
 * uint64 Python frame words (raw_py_is), innermost first. */
struct raw_pystack {
	struct raw_rec h;
	uint32_t index;        /* > 0, unique in the trace */
	uint32_t nframes;      /* at most RAW_PY_MAX_STACK */
};
_Static_assert(sizeof(struct raw_pystack) == 16, "raw_pystack is 16 bytes");
/* The most Python frames the collector walks per sample, and that a
 * RAW_PYSTACK may hold. */
#define RAW_PY_MAX_STACK 256

/* A call stack with Python frames, stored once as a RAW_STACK is and
 * referred to by samples by the same ids: followed by (size - 16) / 8
 * uint64 native addresses, leaf first, as a RAW_STACK's; its Python
 * frames, every C-level call of the evaluation loop's, are the RAW_PYPART
 * record numbered py (which may come later in the file), put among the
 * native frames by raw_py_merge.  The collector's handler writes its
 * stacks so where it can; a RAW_STACK with Python frame words in it
 * means the same. */
struct raw_stack_py {
	struct raw_rec h;
	uint32_t id;           /* > 0, unique in the trace among RAW_STACK ids */
	uint32_t py;           /* a RAW_PYPART's index */
};
_Static_assert(sizeof(struct raw_stack_py) == 16, "raw_stack_py is 16 bytes");

/* A call stack with Python frames whose native frames are those of a
 * stack stored before it (a RAW_STACK or RAW_STACK_PY record earlier in
 * the file, numbered base): the same stack as a RAW_STACK_PY of those
 * frames naming the part py.  Many Python stacks run on one native stack
 * (the evaluation loop runs the program's calls within one C-level call),
 * and this one costs 24 bytes where a RAW_STACK_PY repeats the native
 * frames.  Referred to by samples by id, as a RAW_STACK is. */
struct raw_stack_pyref {
	struct raw_rec h;
	uint32_t id;           /* > 0, unique in the trace among RAW_STACK ids */
	uint32_t py;           /* a RAW_PYPART's index */
	uint32_t base;         /* the id of the stack whose native frames these are */
	uint32_t reserved;     /* 0 */
};
_Static_assert(sizeof(struct raw_stack_pyref) == 24, "raw_stack_pyref is 24 bytes");

/* The Python frames of a thread, stored once and named by RAW_STACK_PY
 * records, the outer ones shared with other parts: its frames are its own
 * nwords frames, innermost first, then its parent's frames (none when
 * parent is 0).  The record is followed by, when parent is 0, two uint64
 * (eval_lo, eval_hi: the evaluation loop's code, as in RAW_SAMPLE_PY,
 * which every part with this part among its parents uses), then len
 * bytes of its frames, each two LEB128 varints (7 bits a byte, bit 7:
 * more): its code's index, then its instruction << 1 | 1 when it is the
 * last frame of a C-level call of the evaluation loop (a Python frame
 * word's two fields, raw_py_word; a root's last frame ends a call, and
 * a part's last frame that does not continues into its parent's first),
 * padded to 8.  Index + i (i from 1 to nwords - 1) is the part of the
 * same record's frames from frame i on, with the same parent, so that a
 * later part can have it as its parent. */
struct raw_pypart {
	struct raw_rec h;
	uint32_t index;        /* 1 to RAW_PY_MAX_PARTS - nwords + 1, unique */
	uint32_t parent;       /* the part of its outer frames; 0: none */
	uint32_t nwords;       /* 1 to RAW_PY_MAX_STACK */
	uint32_t len;          /* bytes of its frames */
};
_Static_assert(sizeof(struct raw_pypart) == 24, "raw_pypart is 24 bytes");
#define RAW_PY_MAX_PARTS ((1u << 20) - 1)

/* Python parts packed: the parts of RAW_PYPART records (the same parts,
 * indices and frames), several to a record and without the fixed header
 * (the collector writes these; a trace may have both kinds): followed by
 * parts to the end of the record, a varint 0 (the zeros it is padded to 8
 * with) ending them.  A part is LEB128 varints (7 bits a byte, bit 7:
 * more): nwords (1 to RAW_PY_MAX_STACK, never 0); zigzag(index - the
 * index of the part before in the record, or 0); its parent, 0 for none,
 * else zigzag(index - parent) + 1; for a part without a parent, eval_lo
 * and eval_hi - eval_lo (64-bit varints); then its nwords frames, each two
 * varints as a RAW_PYPART's. */
struct raw_pyparts {
	struct raw_rec h;
};
_Static_assert(sizeof(struct raw_pyparts) == 8, "raw_pyparts is 8 bytes");

/* The Python frames of a RAW_SAMPLE_REGS sample (a thread off CPU in a
 * wall-clock trace, read by the sampler; or a stack copy of the handler,
 * in dwarf mode or where its walk failed, read by the handler),
 * right after it (or after its RAW_SAMPLE_KERNEL): its tid and time_ns.
 * Followed by nwords uint64 words (Python frame words and RAW_PYSTACK
 * words, innermost first) and ngroups uint32 ends (one past the last
 * word of each C-level call of the evaluation loop, innermost call
 * first), padded to 8.  The reader puts them among the frames it unwinds
 * from the stack copy as the collector does in its handler
 * (raw_py_merge): each call's words before the return address into the
 * evaluation loop, [eval_lo, eval_hi), that runs it. */
struct raw_sample_py {
	struct raw_rec h;
	uint32_t tid;
	uint32_t nwords;       /* at most RAW_PY_MAX_STACK */
	uint64_t time_ns;
	uint64_t eval_lo, eval_hi;
	uint32_t ngroups;      /* at most nwords */
	uint32_t reserved;     /* 0 */
};
_Static_assert(sizeof(struct raw_sample_py) == 48, "raw_sample_py is 48 bytes");

/* A CPython interpreter found in the process, once per trace: its
 * version, and whether its frames are read (the summary and the report
 * say which processes' are not). */
enum raw_python_frames {
	RAW_PYTHON_UNREAD = 0,   /* a version whose layout is not known */
	RAW_PYTHON_READ = 1,
	RAW_PYTHON_NOT_ASKED = 2, /* --no-python */
};
/* Where the offsets into the interpreter's structures the frames are
 * read with came from (0 in a record of frames not read, and in traces
 * written before the collector said). */
enum raw_python_offsets {
	RAW_PYTHON_OFFSETS_UNSAID = 0,
	RAW_PYTHON_OFFSETS_PUBLISHED = 1,  /* the interpreter's _Py_DebugOffsets (3.13 on) */
	RAW_PYTHON_OFFSETS_DEBUG_INFO = 2, /* its DWARF */
	RAW_PYTHON_OFFSETS_TABLE = 3,      /* the collector's table of its version */
};
struct raw_python {
	struct raw_rec h;
	uint32_t version;      /* major << 8 | minor; 0: not known */
	uint8_t frames;        /* enum raw_python_frames */
	uint8_t offsets;       /* enum raw_python_offsets */
	uint8_t micro;         /* the version's third number + 1; 0: not known */
	uint8_t reserved;      /* 0 */
};
_Static_assert(sizeof(struct raw_python) == 16, "raw_python is 16 bytes");

/* Is frames[i] (frames[0] the pc, the others return addresses) in the
 * evaluation loop [lo, hi)? */
static inline int raw_py_in_eval(const uint64_t *frames, uint32_t i, uint64_t lo, uint64_t hi)
{
	uint64_t a = frames[i];

	if (i > 0 && a > 0)
		a--; /* a return address: into the call */
	return a >= lo && a < hi;
}

/* Puts the Python words py[0..np) (innermost first; gend[g] one past the
 * last word of C-level call g, ng calls) into the native frames
 * frames[0..n) (leaf first, cap words): each call's words leafward of the
 * evaluation loop's frame that runs it, the outermost loop taking the
 * calls the native walk did not see, all at the root when it saw no loop.
 * Returns the new count, n when they would not fit. */
static inline uint32_t raw_py_merge(uint64_t *frames, uint32_t n, uint32_t cap, const uint64_t *py,
				    uint32_t np, const uint32_t *gend, uint32_t ng, uint64_t lo,
				    uint64_t hi)
{
	uint32_t ne = 0, w, e;

	if (np == 0 || n + np > cap)
		return n;
	for (uint32_t i = 0; i < n; i++)
		ne += (uint32_t)raw_py_in_eval(frames, i, lo, hi);
	if (ne == 0) {
		for (uint32_t j = 0; j < np; j++)
			frames[n + j] = py[j];
		return n + np;
	}
	/* from the root down, in place */
	w = n + np;
	e = ne;
	for (uint32_t i = n; i-- > 0;) {
		frames[--w] = frames[i];
		if (!raw_py_in_eval(frames, i, lo, hi) || e == 0)
			continue;
		e--;
		if (e >= ng)
			continue;
		uint32_t glo = e == 0 ? 0 : gend[e - 1];
		uint32_t ghi = e == ne - 1 ? np : gend[e];

		for (uint32_t j = ghi; j-- > glo;)
			frames[--w] = py[j];
	}
	return n + np;
}

#endif
