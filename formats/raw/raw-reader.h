/* raw-reader.h - the state of the reading of one raw trace, which the
 * files of the raw trace reader share, and the walk of its records
 * (raw-reader.c); internal to the formats library
 *
 * The files, bottom up, each with its header: raw-reader.c the records
 * and the pages; raw-stacks.c the stack table and the stored stacks;
 * raw-samples.c each sample added; raw-heap.c a heap trace's records;
 * raw-unwind.c the register samples and the unwind check; raw-read.c the
 * passes over one trace; raw-run.c the processes of a run.  The fields of
 * struct reader are grouped by the file that owns them. */
#ifndef PROFVIEW_RAW_READER_H
#define PROFVIEW_RAW_READER_H

#include "profile.h"
#include "raw-cpu.h"
#include "raw-heap.h"
#include "raw-iter.h"
#include "raw-read.h"
#include "raw.h"
#include "raw-py.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct stack_ref {
	uint32_t id;
	uint32_t off, n;
	bool candidate;
	/* where its record is in the buffer (RAW_STACK, RAW_STACK_PY: whose
	 * native frames a later RAW_STACK_PYREF may take), SIZE_MAX for
	 * another kind */
	size_t rec;
};

struct stack_key {
	uint64_t hash;
	uint32_t off, n;
};

struct walk_batch;

/* How a sample's CPU time is settled (settle_cpu), in a trace with
 * kernel records: the record's weight w and system part s, and which part
 * the profile sample is. */
enum { PART_WHOLE = 0, PART_USER, PART_KERNEL };
struct split {
	uint64_t w, s;
	uint8_t part;
};

/* Releasing the pages of a mapped trace: a window at a time. */
#define RELEASE_WINDOW ((size_t)64 << 20)

/* How much a sample's weight may pass the time since profiling began
 * (besides two periods): clocks read at slightly different moments. */
#define RAW_WEIGHT_SLACK_NS 10000000ULL

/* raw-stacks.c's part of the reading: the stack table and the stacks
 * stored once each. */
struct rd_stacks {
	struct stack_ref *stacks;     /* open addressing by id, id 0 = empty */
	size_t nstacks_slots, nstacks;
	struct stack_key *dedup;      /* stored stacks by content */
	size_t ndedup_slots, ndedup;
	/* the mapping last asked whether it is the collector's library
	 * (rd_store_frames), and the answer */
	uint32_t own_map;
	bool own_map_is;
};

/* raw-unwind.c's part: the register samples and their unwinding. */
struct rd_unwind {
	const struct raw_unwinder *uw;
	struct walk_batch *batch;     /* when the unwinder can walk */
	uint64_t *unwound;            /* scratch for unwound frames */
	uint64_t not_unwound;         /* register samples read without an unwinder */
	/* A RAW_UNWIND_CHECK trace: the last register sample's unwinding,
	 * waiting for the collector's frames in the record after it. */
	struct {
		bool pending, complete;
		uint32_t tid, n;
		uint64_t time_ns;
		uint64_t samples, agree, differ, unpaired;
		uint64_t failed[RAW_CHECK_NOT_TRIED + 1];
		char first[3][512];   /* the first differences, described */
	} check;
};

/* raw-samples.c's part: each sample's thread, kernel part and mode. */
struct rd_samples {
	uint32_t offcpu_loc;          /* the "[off-cpu]" location, or PV_NONE */
	uint32_t last_tid, last_thread;
	/* the kernel mapping (or PV_NONE until needed), the "[kernel]"
	 * location, the kernel addresses seen; each sample's split, when
	 * the trace has kernel records */
	uint32_t kernel_map, kernel_loc;
	uint64_t kernel_lo, kernel_hi;
	struct split *splits;
	size_t cap_splits;
	/* Per thread (by index): the system time its samples are owed, the
	 * kernel's split not yet given out as whole samples (one_mode). */
	int64_t *owed;
	size_t nowed;
};

/* raw-python.c's part: the trace's Python code objects, by index. */
struct rd_python_code {
	uint32_t function1;           /* its function + 1; 0: no record of it */
	int32_t first_line;
	uint32_t version;             /* the interpreter's: the table's format */
	uint32_t file;                /* its file name's string */
	bool compact;                 /* the table is RAW_PYCODE_COMPACT's */
	bool lines;                   /* of a RAW_PYCODES: its words hold lines */
	uint32_t name;                /* its name's string (RAW_PYCODES') */
	unsigned char *table;         /* its line table, malloc'd */
	uint32_t table_len;
};
struct rd_python_part {
	uint64_t off1;                /* of its words in words, + 1; 0: no record */
	uint64_t end_off;             /* of its ends in ends */
	uint64_t eval_lo, eval_hi;    /* when parent is 0 */
	uint32_t n, nends, parent;
	uint32_t shift;               /* taken from each of its ends */
	uint32_t run1;                /* the run's part + 1 it is (RAW_PYRUNPARTS:
				       * then only eval_lo, eval_hi are its own) */
};
struct rd_python {
	struct rd_python_code *codes;
	size_t ncodes;
	/* bytes of RAW_PYCODES records read, and of the beginnings of strings
	 * their entries took from strings before (bounded by a multiple of
	 * the first, so that a trace of a few bytes cannot name gigabytes) */
	uint64_t codes_read, codes_shared;
	bool codes_warned;
	/* the Python stacks stored once (RAW_PYSTACK), by index: each its
	 * frame words' offset in words + 1 (0: no record) and count */
	uint64_t *stack_off1;
	uint32_t *stack_n;
	size_t nstacks;
	uint64_t *words;
	size_t nwords, cap_words;
	/* the Python parts of stacks (RAW_PYPART), in their order: their words
	 * (in words) and their calls' ends (in ends) */
	struct rd_python_part *parts;
	size_t nparts, cap_parts;
	uint32_t *part_at;            /* by index: its place in parts + 1, 0: none */
	size_t npart_at;
	uint32_t *ends;
	size_t nends, cap_ends;
	/* by the run's code: the process's code (RAW_PYRUNCODES) that is it,
	 * 0: none */
	uint32_t *run_inv;
	size_t nrun_inv;
	uint32_t run_next;            /* the next code made for one, 0: none yet */
	/* a RAW_PYRUNPARTS without ranges: the stacks name the run's parts,
	 * run by the evaluation loop [run_lo, run_hi) */
	bool run_direct;
	uint64_t run_lo, run_hi;
	/* each + 1, 0 until needed: the "[python]" mapping, the function
	 * of frames whose code has no record, the markers' functions */
	uint32_t map1, unknown1, stop1[RAW_PY_STOP_TABLE + 1];
};

/* The run's names (raw.h, RAW_RUN_PYNAMES_MAGIC), read once for the
 * parts of a run, whose RAW_PYCODES entries name them by number: their
 * strings in p, their codes in py. */
struct rd_run_names {
	struct pv_profile *p;
	struct rd_python py;
};

/* The reading of one trace (of one process). */
struct reader {
	const unsigned char *buf;
	size_t len;
	bool mapped;                  /* buf is a mapping: release what was read */
	size_t released;              /* bytes of buf handed back */
	uint64_t nstack_records;
	uint64_t regs_samples;        /* RAW_SAMPLE_REGS records in the first pass */
	const char *name;
	/* "'NAME': pid PID (PROGRAM)": what the warnings about the trace's
	 * process begin with, once the header is read */
	char who[384];
	struct pv_profile *p;
	const struct rd_run_names *run_names; /* NULL: a trace alone */
	struct raw_head head;         /* what the header says */
	size_t data_start;            /* the first record */
	uint64_t nrecords;            /* the records that are whole */

	uint32_t *locs;               /* scratch for one stack */
	uint32_t nlocs;               /* locations store_frames kept */
	bool fp_candidate;            /* frames[1] is a candidate (raw.h) */
	uint32_t v_count, v_cpu;
	bool wall;                    /* a wall-clock trace */
	struct raw_heap *heap;        /* a heap trace (collect-heap) */
	uint64_t end_time, last_time, start_mono;
	/* when profiling began: start_mono, or a segment's run's start */
	uint64_t began;
	uint64_t lost_records, lost_end;
	bool have_end;
	uint64_t damaged;             /* samples that weigh more than the time allows */
	uint64_t damaged_bytes;       /* their records */
	uint32_t rec_size;            /* of the sample record being read */
	uint64_t unresolved;          /* samples whose stack never came */
	uint32_t short_us;            /* the header's short_thread_us */
	char cut[160];                /* why reading stopped before the end */
	/* What each sample's CPU time is (raw-cpu.h): its handle there, by
	 * sample index; wall-clock traces keep their recorded weights. */
	struct raw_cpu *cpu;
	int64_t *handles;
	/* The samples of the collector's own work (RAW_SAMPLE_COLLECTOR), by
	 * index: taken out once their CPU time is known. */
	size_t *own; size_t nown, cap_own;
	size_t cap_handles;
	/* Kernel time: the trace says (a RAW_KERNEL record), the boot id of
	 * its machine, its sample kernel records (the rest is smp's). */
	bool system_known;
	char boot_id[41];
	uint64_t nkernel;
	/* the parts each file owns */
	struct rd_stacks stk;
	struct rd_unwind unw;
	struct rd_samples smp;
	struct rd_python py;
};

/* Starts a walk over the trace's records (raw-iter.h). */
void rd_records(const struct reader *rd, struct raw_iter *it);
/* A pass over a mapped trace has read up to byte off: the whole windows
 * before it go back (all of it when off is the end). */
void rd_release(struct reader *rd, size_t off);

/* One trace (of a process), as raw_read (raw-read.c); execd: it is whole
 * without an end record (its process ran another program, or ended by
 * exit without its exit handlers); killed_by: the signal that killed its
 * process, when its collector knew (said in the warning), else 0;
 * names: the run's names, for a part of a run that has them, else NULL. */
struct pv_profile *rd_read_trace(const unsigned char *buf, size_t len, const char *name,
				 const struct raw_unwinder *uw, bool mapped, bool execd,
				 int killed_by, const struct rd_run_names *names);

#endif
