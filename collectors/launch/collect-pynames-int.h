/* collect-pynames-int.h - the run's Python names: what collect-pynames.c
 * (the run's tables of strings, codes and parts, and their records) and
 * collect-pyjoin.c (each process's trace rewritten to name them) share.
 * Launcher-side only, not signal-safe.
 */
#ifndef PROFVIEW_LAUNCH_COLLECT_PYNAMES_INT_H
#define PROFVIEW_LAUNCH_COLLECT_PYNAMES_INT_H

#include <stddef.h>
#include <stdint.h>

/* The entries of one of the run's records, at most: a record a reader
 * takes whole stays small. */
#define PYNAMES_RECORD_MAX 32768
/* The highest code index of a process this table follows; a trace with a
 * higher one is copied as it is. */
#define PYNAMES_MAX_INDEX (1u << 22)
/* The beginning another name must share to be written as its beginning. */
#define PYNAMES_MIN_PREFIX 4

struct pynames_str {
	uint64_t off;    /* in text */
	uint32_t len;
	uint32_t id1;    /* the run's string number + 1 it was first written as */
};

struct pynames_buf {
	unsigned char *b;
	size_t n, cap;
};

struct collect_pynames {
	char *text;                  /* every distinct string, back to back */
	size_t ntext, captext;
	struct pynames_str *strs;
	uint32_t nstrs, capstrs;
	uint32_t *str_slots;         /* hash of strs: index + 1 */
	uint32_t nstr_slots;
	uint32_t (*codes)[3];        /* the run's code i + 1: its name's and file's strs,
				      * its first line */
	uint32_t ncodes, capcodes;
	uint32_t *code_slots;
	uint32_t ncode_slots;
	struct pynames_buf done;     /* the records closed */
	struct pynames_buf cur;      /* the entries of the record open */
	uint32_t cur_last;           /* its last entry's code */
	uint32_t last[2];            /* the last entry's name and file: strs + 1 */
	uint32_t first[2][256];      /* of each kind, the last written with that first byte */
	/* of the trace being copied: its code indices' run codes, and its
	 * records rewritten */
	uint32_t *pmap;
	uint32_t npmap;
	uint64_t part_len, part_shared; /* its bytes, and those taken of strings before */
	struct pynames_buf out;
	struct pynames_buf lens;     /* the bytes of out each record became */
	struct pynames_buf runrec;   /* its RAW_PYRUNCODES record */
	char *scratch;
	size_t capscratch;
	/* the run's parts (indices 1 to nparts), a tree of frames: part i
	 * is nodes[i - 1], its frame (run code, instruction word) and the
	 * part of its outer frames, hashed; their records closed and the
	 * entries of the one open (its last part) */
	uint32_t (*nodes)[3];
	uint32_t nparts, capnodes;
	uint32_t *node_slots;
	uint32_t nnode_slots;
	struct pynames_buf pdone, pcur;
	uint32_t pcur_last;
	/* of the trace being copied: its part indices' run parts, the
	 * evaluation loop of its parts, and its RAW_PYRUNPARTS record */
	uint32_t *ppmap;
	uint32_t nppmap;
	uint32_t *pref;              /* by part index: 1 when a stack names it */
	uint32_t npref;
	uint64_t eval[2];
	int has_eval, moved;
	int words;                   /* a record of it has Python frame words */
	struct pynames_buf partrec;
};

/* Bytes and LEB128 varints onto b: 0, or -1 when out of memory. */
int pyn_buf_put(struct pynames_buf *b, const void *p, size_t n);
int pyn_buf_varint(struct pynames_buf *b, uint64_t v);
/* (*m)[index] = c, the map of *n entries grown (zeros) to hold it: 0, -1. */
int pyn_map_set(uint32_t **m, uint32_t *n, uint32_t index, uint32_t c);
/* A process's code index: its run code is c.  0, -1. */
int pyn_pmap_set(struct collect_pynames *t, uint32_t index, uint32_t c);
/* A RAW_PYCODES record begun in t->out (its header at *start), and closed
 * as type, padded (collect-pynames.c says more).  0; -1 when out of
 * memory; -2 when the record would be too long. */
int pyn_out_open(struct collect_pynames *t, size_t *start);
int pyn_out_close(struct collect_pynames *t, size_t start, uint32_t type);
/* The run's code of name and file (strs) and first line (zigzag zz),
 * made when new: its number, 0 when the table is full, -1 when out of
 * memory. */
int64_t pyn_code_intern(struct collect_pynames *t, uint32_t name, uint32_t file, uint32_t zz);
/* The string of a process's RAW_PYCODES entry at *p among t's: its index,
 * -2 when it does not decode, -1 when out of memory. */
int64_t pyn_part_string(struct collect_pynames *t, const unsigned char **p, const unsigned char *end);
/* The frames f[0..n) (innermost first: run code, instruction word) of a
 * part whose outer frames are the run's part parent as the run's parts:
 * part[i] the part of frames i on.  0, 1 when they cannot be, -1. */
int pyn_parts_intern(struct collect_pynames *t, uint32_t (*f)[2], uint32_t n, uint32_t parent,
		     uint32_t *part);
/* The nwords frames of a part at *p into f, their codes the run's: 0, 1
 * when they do not decode or name a code the run has not. */
int pyn_part_frames(struct collect_pynames *t, const unsigned char **p, const unsigned char *end,
		    uint32_t nwords, uint32_t (*f)[2]);

#endif
