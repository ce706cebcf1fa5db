/* raw.h - the profview raw trace format
 *
 * This header and raw-py.h (the Python records) are the only things the
 * collectors share with the analyzer.  They depend on nothing but
 * <stdint.h> and describe the bytes on disk; see profview-raw(5) for the
 * prose version.
 *
 * Layout: a raw_header, then (from version 2) a raw_arch, then the
 * executable path (header.exe_len bytes, NUL-terminated, padded with zeros
 * to a multiple of 8), then records.  Every record starts with a raw_rec
 * (type, size); size counts the whole record, header included, and is a
 * multiple of 8, so a reader can skip record types it does not know.  All
 * integers are little-endian.  A record whose type word is zero marks the
 * end of the written data (the collector writes into a pre-sized file, so a
 * process killed mid-run leaves zeros after its last record).  A trace that
 * was finished cleanly ends with a RAW_END record.  raw-iter.h walks the
 * header and records by these rules.
 */
#ifndef PROFVIEW_RAW_H
#define PROFVIEW_RAW_H

#include <stddef.h>
#include <stdint.h>

#define RAW_MAGIC "PVTRACE\n"
#define RAW_MAGIC_LEN 8
/* The version collectors write, and the oldest one readers still read.
 * Version 1 is the header alone, of an x86-64 program; version 2 adds a
 * raw_arch after it: the program's architecture and its register set;
 * version 3 allows the short form of RAW_SAMPLE (RAW_SAMPLE_SHORT_SIZE). */
#define RAW_VERSION 3
#define RAW_VERSION_MIN 1
#define RAW_ALIGN 8
/* Largest record a reader accepts; anything bigger is corruption. */
#define RAW_MAX_RECORD (1u << 24)
#define RAW_MAX_FRAMES 1024

enum raw_clock {
	RAW_CLOCK_CPU = 1,  /* per-thread CPU time */
	RAW_CLOCK_WALL = 2, /* wall-clock time */
	/* Allocations sampled by bytes (collect-heap): the header's
	 * period_ns is the mean sampling interval in bytes, and the
	 * samples are RAW_HEAP_ALLOC and RAW_HEAP_FREE records. */
	RAW_CLOCK_HEAP = 3,
};

enum raw_unwind {
	/* Frames from a frame-pointer walk.  frames[1] is the word at the
	 * stack pointer when it pointed into code, else 0: the return address
	 * of a leaf that has not set up its frame, which the walk would skip.
	 * A reader keeps it only where the leaf's call frame information says
	 * the return address is at the stack pointer. */
	RAW_UNWIND_FP = 1,
	/* Samples carry registers and a copy of the top of the stack
	 * (RAW_SAMPLE_REGS), unwound offline with the ELF files' CFI. */
	RAW_UNWIND_DWARF = 2,
	/* Frames unwound in the collector with the objects' CFI (RAW_SAMPLE,
	 * every frame a real one: no candidate as in RAW_UNWIND_FP).  A
	 * sample the collector could not unwind is a RAW_SAMPLE_REGS,
	 * unwound offline as in RAW_UNWIND_DWARF. */
	RAW_UNWIND_CFI = 3,
	/* For checking the collector's unwinder: every sample is a
	 * RAW_SAMPLE_REGS followed by a RAW_CHECK_FRAMES. */
	RAW_UNWIND_CHECK = 4,
};

struct raw_header {
	char magic[RAW_MAGIC_LEN];
	uint32_t version;
	uint32_t header_size;  /* this struct, raw_arch (version 2), exe path, padding */
	uint32_t clock;        /* enum raw_clock */
	uint32_t unwind;       /* enum raw_unwind */
	uint32_t pid;
	uint32_t ppid;
	uint64_t period_ns;    /* requested sampling period */
	uint64_t start_realtime_ns; /* CLOCK_REALTIME at start */
	uint64_t start_monotonic_ns; /* CLOCK_MONOTONIC at start */
	uint32_t exe_len;      /* bytes of exe path that follow, NUL included */
	union {
		/* Threads that used less CPU time than this while profiled,
		 * in microseconds, are measured together (see "CPU time"
		 * below); 0 in traces of collectors that predate it. */
		uint32_t short_thread_us;
		/* In a heap trace (clock RAW_CLOCK_HEAP): enum
		 * raw_heap_flags; 0 in traces of collectors that predate it. */
		uint32_t heap_flags;
	};
};

enum raw_heap_flags {
	/* The trace starts at an attach to a running process (collect-heap
	 * -p): the blocks allocated before it are not in it, their frees
	 * neither, and what it counts in use is only what was allocated
	 * since. */
	RAW_HEAP_SINCE_ATTACH = 1,
};
_Static_assert(sizeof(struct raw_header) == 64, "raw_header is 64 bytes");

/* ELF machines (e_machine, as in <elf.h>). */
#define RAW_MACHINE_X86_64 62

/* How the registers of RAW_SAMPLE_REGS records are numbered. */
enum raw_regs {
	/* Register i is DWARF register i of the machine (for x86-64, see
	 * RAW_REG_RSP and RAW_REG_RIP below). */
	RAW_REGS_DWARF = 1,
};

/* From version 2, what follows the raw_header, before the exe path: the
 * program's architecture and the registers its samples carry.  A version
 * 1 trace is of an x86-64 program, with RAW_NREGS registers in DWARF
 * numbering. */
struct raw_arch {
	uint32_t machine;      /* the program's ELF e_machine: RAW_MACHINE_X86_64 */
	uint32_t regs;         /* enum raw_regs */
	uint32_t nregs;        /* registers in every RAW_SAMPLE_REGS record */
	uint32_t reserved;     /* 0 */
};
_Static_assert(sizeof(struct raw_arch) == 16, "raw_arch is 16 bytes");

/* Where the exe path starts in a trace of this version: the bytes of the
 * header before it; 0 for a version this header does not describe. */
static inline uint32_t raw_header_fixed_size(uint32_t version)
{
	if (version == 1)
		return (uint32_t)sizeof(struct raw_header);
	if (version == 2 || version == 3)
		return (uint32_t)(sizeof(struct raw_header) + sizeof(struct raw_arch));
	return 0;
}

enum raw_type {
	RAW_MAPPING = 1,
	RAW_THREAD = 2,
	RAW_STACK = 3,
	RAW_SAMPLE = 4,
	RAW_LOST = 5,
	RAW_THREAD_EXIT = 6,
	RAW_END = 7,
	RAW_SAMPLE_REGS = 8,
	RAW_CHECK_FRAMES = 9,
	RAW_SAMPLE_KERNEL = 10,
	RAW_KERNEL = 11,
	RAW_SEGMENT = 12,
	RAW_HEAP_ALLOC = 13,
	RAW_HEAP_FREE = 14,
	RAW_COLLECTOR = 15,
	RAW_EXEC = 16,
	RAW_CHILD = 17,
	RAW_PYCODE = 18,
	RAW_PYSTACK = 19,
	RAW_SAMPLE_PY = 20,
	RAW_PYTHON = 21,
	RAW_STACK_PY = 22,
	RAW_PYPART = 23,
	RAW_PYCODES = 24,
	RAW_PYRUNCODES = 25,
	RAW_PYPARTS = 26,
	RAW_PYRUNPARTS = 27,
	RAW_STACK_PYREF = 28,
};

struct raw_rec {
	uint32_t type;
	uint32_t size;
};
_Static_assert(sizeof(struct raw_rec) == 8, "raw_rec is 8 bytes");

/* An executable mapping of the process: followed by path_len bytes of path
 * (NUL-terminated, e.g. "/usr/lib/x86_64-linux-gnu/libc.so.6" or "[vdso]"),
 * padded to 8. */
struct raw_mapping {
	struct raw_rec h;
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t time_ns;      /* monotonic time it was seen */
	uint8_t build_id_len;  /* 0 when unknown */
	uint8_t build_id[31];
	uint32_t path_len;
	uint32_t reserved;
};
_Static_assert(sizeof(struct raw_mapping) == 80, "raw_mapping is 80 bytes");

/* A thread seen by the collector (at start or when it was created).  A
 * later record for the same thread, before its exit record, gives a newer
 * name; after its exit record, the thread id was reused by a new thread,
 * or the same thread is sampled again after a pause (profview-raw(5)). */
struct raw_thread {
	struct raw_rec h;
	uint32_t tid;
	uint32_t reserved;
	uint64_t time_ns;
	char name[16];         /* comm, NUL-padded */
	/* The thread's CPU clock when profiling started for it (its timer
	 * was armed); the CPU time before is not profiled.  Absent from the
	 * 40-byte records of older collectors. */
	uint64_t cpu_ns;
};
_Static_assert(sizeof(struct raw_thread) == 48, "raw_thread is 48 bytes");
#define RAW_THREAD_MIN_SIZE 40 /* the record without cpu_ns */

/* A thread that ended, or that was still running when the trace ended,
 * with the CPU time its clock showed then (in all, including any it used
 * before profiling started for it; for a thread that ended, read before
 * the collector's own work at its end). */
struct raw_thread_exit {
	struct raw_rec h;
	uint32_t tid;
	uint32_t flags;        /* RAW_EXIT_*; 0 in older collectors' records */
	uint64_t time_ns;
	uint64_t cpu_ns;
	/* Of cpu_ns, the system time (in the kernel on the thread's
	 * behalf), as the kernel accounts it (getrusage); RAW_UNKNOWN when
	 * not known.  Absent from the 32-byte records of older collectors. */
	uint64_t system_ns;
};
_Static_assert(sizeof(struct raw_thread_exit) == 40, "raw_thread_exit is 40 bytes");
#define RAW_THREAD_EXIT_MIN_SIZE 32 /* the record without system_ns */
/* The thread switched context so often that its perf event was replaced
 * by a POSIX CPU timer for the rest of its life (collect-timer's auto
 * engine): its later samples are split into user and system time with
 * getrusage, as RAW_SYSTEM_RUSAGE says. */
#define RAW_EXIT_MOVED 1u
#define RAW_UNKNOWN UINT64_MAX

/* A call stack, stored once and referred to by samples.  Followed by
 * nframes uint64 addresses, leaf first. */
struct raw_stack {
	struct raw_rec h;
	uint32_t id;           /* > 0, unique in the trace */
	uint32_t nframes;
};
_Static_assert(sizeof(struct raw_stack) == 16, "raw_stack is 16 bytes");

/* CPU time.  A sample's weight is the CPU time its thread used since its
 * previous sample (since profiling started for it, for its first sample),
 * timer overruns included.  The thread and exit records say how much CPU
 * time each thread used while profiled in all.  raw-cpu.h turns the two
 * into the CPU time each sample stands for: a thread's samples share its
 * CPU time in proportion to their weights, and the threads that used less
 * than the header's short_thread_us, too short to be measured one by one,
 * share theirs equally over all their samples. */

enum raw_sample_flags {
	RAW_SAMPLE_TRUNCATED = 1u << 0, /* the walk stopped at RAW_MAX_FRAMES */
	RAW_SAMPLE_RUNNING = 1u << 1,   /* the thread was on a CPU */
	RAW_SAMPLE_STACK_PARTIAL = 1u << 2, /* the stack copy stops short of the stack top */
	/* The thread was doing the collector's own work, not the program's:
	 * recording the mappings of what a dlopen loaded (collect-timer(1)).
	 * Readers keep such samples out of the profile and count their time
	 * apart. */
	RAW_SAMPLE_COLLECTOR = 1u << 3,
	/* Its RAW_SAMPLE_KERNEL record's system time is whole periods whose
	 * overflows a perf event that counts user time only dropped, having
	 * found the thread in the kernel; the rest of the weight is the user
	 * time up to the overflow that signalled (collect-timer(1), KERNEL
	 * TIME).  Readers make it a kernel sample of as many periods. */
	RAW_SAMPLE_MISSED = 1u << 4,
	/* The signal came as the thread returned from a system call (the
	 * interrupted instruction follows a syscall instruction), of a timer
	 * whose sample's mode is not otherwise known (a POSIX timer, which
	 * fires at a tick: one that found the thread in the call signals it
	 * on its way out): the sample's instant was in the kernel.  Readers
	 * make it a kernel sample once half a period of the thread's system
	 * time is owed to its samples, however heavy it is, the rest owed by
	 * the thread's later system time (collect-timer(1), KERNEL TIME). */
	RAW_SAMPLE_IN_CALL = 1u << 5,
};

/* One sample.  stack_id refers to a RAW_STACK record (which may come later
 * in the file); when it is 0 the frames follow inline, nframes uint64
 * addresses, leaf first.  frames[0] is the interrupted program counter, the
 * others are return addresses. */
struct raw_sample {
	struct raw_rec h;
	uint32_t tid;
	uint32_t stack_id;
	uint64_t time_ns;      /* monotonic */
	uint64_t weight_ns;    /* CPU time since the thread's last sample */
	uint32_t flags;        /* enum raw_sample_flags */
	uint32_t nframes;      /* inline frames, 0 when stack_id != 0 */
};
_Static_assert(sizeof(struct raw_sample) == 40, "raw_sample is 40 bytes");

/* From version 3, the sample of a running thread whose stack is stored by
 * id may be written without its last 8 bytes: a record of this size, its
 * flags RAW_SAMPLE_RUNNING and no inline frames.  (Most samples are such,
 * and the trace is a fifth smaller.) */
#define RAW_SAMPLE_SHORT_SIZE 32

/* Reads the sample record at rec, of size bytes (whole, as raw-iter.h
 * checks), in either form. */
static inline void raw_sample_get(const void *rec, uint32_t size, struct raw_sample *s)
{
	if (size >= sizeof(*s)) {
		__builtin_memcpy(s, rec, sizeof(*s));
	} else {
		__builtin_memcpy(s, rec, RAW_SAMPLE_SHORT_SIZE);
		s->flags = RAW_SAMPLE_RUNNING;
		s->nframes = 0;
	}
}

/* x86-64 registers in DWARF numbering: rax rdx rcx rbx rsi rdi rbp rsp
 * r8-r15, then the return address column (rip).  RAW_NREGS is the register
 * set of x86-64 traces (every version 1 trace), RAW_MAX_REGS the most a
 * record may hold. */
#define RAW_REG_RSP 7
#define RAW_REG_RIP 16
#define RAW_NREGS 17
#define RAW_MAX_REGS 64

/* A sample to be unwound offline: followed by nregs uint64 registers (at
 * least the header's raw_arch.nregs, RAW_NREGS in version 1, numbered as
 * its raw_arch.regs says) and stack_len bytes copied from the stack
 * pointer upwards, padded to 8.  The copy stops at the thread's stack top
 * or at the collector's --stack-size, whichever comes first. */
struct raw_sample_regs {
	struct raw_rec h;
	uint32_t tid;
	uint32_t flags;        /* enum raw_sample_flags */
	uint64_t time_ns;      /* monotonic */
	uint64_t weight_ns;    /* the thread's CPU time since its last sample */
	uint32_t nregs;
	uint32_t stack_len;
};
_Static_assert(sizeof(struct raw_sample_regs) == 40, "raw_sample_regs is 40 bytes");

/* A RAW_CHECK_FRAMES record, in a RAW_UNWIND_CHECK trace, comes right
 * after the RAW_SAMPLE_REGS record of the same sample: the frames the collector's own unwinder found for it,
 * so that a reader can compare them with its unwinding of the stack copy.
 * Followed by nframes uint64 addresses, as in a RAW_SAMPLE. */
enum raw_check_result {
	RAW_CHECK_COMPLETE = 0,  /* reached the outermost frame */
	RAW_CHECK_TRUNCATED = 1, /* stopped at RAW_MAX_FRAMES */
	RAW_CHECK_FAILED = 2,    /* could not go on: reason says why */
};
enum raw_check_reason {
	RAW_CHECK_NO_OBJECT = 1, /* an address in no loaded object */
	RAW_CHECK_NO_ROW = 2,    /* an object without CFI there */
	RAW_CHECK_RULE = 3,      /* a rule the collector does not follow */
	RAW_CHECK_STACK = 4,     /* a read outside the stack */
	RAW_CHECK_NOT_TRIED = 5, /* the thread's stack bounds are unknown */
};
struct raw_unwind_check {
	struct raw_rec h;
	uint32_t tid;
	uint32_t result;       /* enum raw_check_result */
	uint64_t time_ns;      /* the sample's */
	uint32_t nframes;
	uint32_t reason;       /* enum raw_check_reason, 0 unless failed */
};
_Static_assert(sizeof(struct raw_unwind_check) == 32, "raw_unwind_check is 32 bytes");

/* Kernel (system) time.  A RAW_KERNEL record, once near the start of the
 * trace, says that its samples say how much of their weight was system
 * time: a sample with some is followed right away by a RAW_SAMPLE_KERNEL
 * record (same tid and time_ns), a sample without has none.  A trace
 * without a RAW_KERNEL record does not say (older collectors).  Readers
 * that do not know these records skip them, and see each sample's whole
 * weight as before. */

enum raw_system_source {
	/* The thread's system time (getrusage RUSAGE_THREAD, which the
	 * kernel scales from its tick samples to the thread's runtime)
	 * since its previous sample: the part of the weight the ticks in
	 * between found in the kernel.  No kernel call chains. */
	RAW_SYSTEM_RUSAGE = 1,
	/* A perf event that counts user and system time: each sample is
	 * taken in one mode (all system or all user) and a system one
	 * carries its kernel call chain.  A sample whose perf record was
	 * missing falls back to RAW_SYSTEM_RUSAGE. */
	RAW_SYSTEM_PERF = 2,
};

/* What sent the sampling signals of a CPU-clock trace. */
enum raw_engine {
	RAW_ENGINE_UNKNOWN = 0, /* not said (collectors before it) */
	/* POSIX CPU timers: checked at the scheduler tick, so a sample
	 * weighs the CPU time since the thread's previous one, which can be
	 * several periods when the tick keeps missing the thread. */
	RAW_ENGINE_POSIX = 1,
	/* perf task-clock events: a high-resolution timer of the thread's
	 * CPU time, a sample every period (some threads may still have had
	 * POSIX timers: past the fds the collector allows itself). */
	RAW_ENGINE_PERF = 2,
};

struct raw_kernel {
	struct raw_rec h;
	uint32_t source;       /* enum raw_system_source */
	uint32_t engine;       /* enum raw_engine */
	/* /proc/sys/kernel/random/boot_id of the machine the trace was
	 * taken on ("xxxxxxxx-xxxx-...", 36 characters), NUL-padded; all
	 * zeros when unknown.  The addresses of kernel frames are those of
	 * that boot: a reader symbolizes them with /proc/kallsyms only on
	 * the same boot. */
	char boot_id[40];
};
_Static_assert(sizeof(struct raw_kernel) == 56, "raw_kernel is 56 bytes");

/* Right after the sample record (RAW_SAMPLE or RAW_SAMPLE_REGS, and before
 * a RAW_CHECK_FRAMES) whose weight had system time: how much, and where
 * in the kernel when known.  Followed by nframes uint64 kernel addresses,
 * leaf first (the interrupted kernel program counter, then return
 * addresses); nframes 0 when the kernel stack is not known.  The sample's
 * own frames are the user stack that entered the kernel. */
struct raw_sample_kernel {
	struct raw_rec h;
	uint32_t tid;          /* the sample's */
	uint32_t nframes;
	uint64_t time_ns;      /* the sample's */
	uint64_t system_ns;    /* of its weight_ns, at most all of it */
};
_Static_assert(sizeof(struct raw_sample_kernel) == 32, "raw_sample_kernel is 32 bytes");

/* In a segment of a run cut by time (collect-timer --split), first after
 * the header: which segment it is, and the segments just before it that
 * could not be written (their samples are lost).  Segment n covers
 * [run_start_ns + (n - 1) * split_ns, run_start_ns + n * split_ns) of
 * CLOCK_MONOTONIC; run_start_ns and split_ns together tell one run's
 * segments from another's. */
struct raw_segment {
	struct raw_rec h;
	uint64_t number;       /* 1, 2, ... */
	uint64_t split_ns;     /* the length of every segment */
	uint64_t run_start_ns; /* CLOCK_MONOTONIC at the start of segment 1 */
	uint64_t missing;      /* segments number - missing .. number - 1 were not written */
	uint64_t missing_samples; /* the samples they held */
	uint32_t missing_error; /* the error (a Linux errno) of the last of them */
	uint32_t reserved;     /* 0 */
};
_Static_assert(sizeof(struct raw_segment) == 56, "raw_segment is 56 bytes");

/* Samples the collector could not store, and why: the error (a Linux
 * errno) of its last failed attempt to grow the trace, 0 when unknown.
 * Older collectors wrote the 16 bytes without it. */
struct raw_lost {
	struct raw_rec h;
	uint64_t count;
	uint32_t error;
	uint32_t reserved;
};
_Static_assert(sizeof(struct raw_lost) == 24, "raw_lost is 24 bytes");
#define RAW_LOST_MIN_SIZE 16

/* Heap traces (RAW_CLOCK_HEAP).  Allocations are sampled by bytes, a
 * Poisson process of mean interval R = header.period_ns bytes: a block of
 * S bytes is sampled with the probability 1 - exp(-S/R), so that it stands
 * for 1/(1 - exp(-S/R)) blocks of its size; readers unsample by that, as
 * pprof does for heap profiles.  Every allocating call counts (malloc,
 * calloc, realloc, reallocarray and the aligned ones); a realloc counts as
 * the free of the old block and the allocation of the new one.
 *
 * A sampled block is a RAW_HEAP_ALLOC record, written before the program
 * gets the block.  Its stack is as a RAW_SAMPLE's (a RAW_STACK by id, or
 * nframes inline addresses, leaf first), except that frames[0] is not an
 * interrupted program counter but the return address into the function
 * that called the allocator, minus one (inside its call instruction); the
 * allocator's own frames are left out.  R is 1 to RAW_HEAP_RATE_MAX. */
#define RAW_HEAP_RATE_MAX ((uint64_t)1 << 40)
struct raw_heap_alloc {
	struct raw_rec h;
	uint32_t tid;
	uint32_t stack_id;     /* 0: the frames follow inline */
	uint64_t time_ns;      /* monotonic */
	uint64_t size;         /* bytes asked for */
	uint64_t address;      /* of the block */
	uint32_t flags;        /* enum raw_sample_flags: RAW_SAMPLE_TRUNCATED */
	uint32_t nframes;      /* inline frames, 0 when stack_id != 0 */
};
_Static_assert(sizeof(struct raw_heap_alloc) == 48, "raw_heap_alloc is 48 bytes");

/* The free (or realloc) of a sampled block, written before the block is
 * given back: it frees the block of the last RAW_HEAP_ALLOC at that
 * address.  Only sampled blocks have one: a block without a free record
 * was still allocated when the trace ended. */
struct raw_heap_free {
	struct raw_rec h;
	uint32_t tid;
	uint32_t reserved;
	uint64_t time_ns;      /* monotonic */
	uint64_t address;
};
_Static_assert(sizeof(struct raw_heap_free) == 32, "raw_heap_free is 32 bytes");

/* The last record of a cleanly finished trace. */
struct raw_end {
	struct raw_rec h;
	uint64_t time_ns;      /* monotonic time at the end */
	uint64_t samples;      /* samples written */
	uint64_t lost;         /* samples dropped in all */
	uint64_t signals;      /* timer signals handled */
	uint64_t overruns;     /* timer overruns reported by the kernel */
};
_Static_assert(sizeof(struct raw_end) == 48, "raw_end is 48 bytes");

/* The CPU time the collector's library spent in the process, since the
 * previous such record of the trace (a reader sums them): in its start
 * (the constructor, or the child's half of a fork), making unwind rows
 * (in the signal handler, when a walk first needs them), in the handler
 * itself (measured with --stats only, else 0), in its end, and in its
 * own threads (the control thread, the sweeper).  Written
 * at the end and before an exec.  Older readers skip it, as any record of
 * a type they do not know. */
struct raw_collector {
	struct raw_rec h;
	uint64_t start_ns;
	uint64_t tables_ns;
	uint64_t handler_ns;
	uint64_t end_ns;
	uint64_t table_rows;   /* unwind rows made */
	uint64_t helpers_ns;   /* its threads' */
};
_Static_assert(sizeof(struct raw_collector) == 56, "raw_collector is 56 bytes");

/* The collector's CPU time a record says. */
static inline uint64_t raw_collector_ns(const struct raw_collector *c)
{
	return c->start_ns + c->tables_ns + c->handler_ns + c->end_ns + c->helpers_ns;
}

/* Why a process of a run may not be profiled: the library is not loaded
 * in an image whose program is static (no PT_INTERP), set-user-ID or
 * set-group-ID (the dynamic loader ignores LD_PRELOAD paths then), or
 * given an environment without the library in LD_PRELOAD. */
enum raw_why {
	RAW_WHY_UNKNOWN = 0,
	RAW_WHY_STATIC = 1,
	RAW_WHY_SETID = 2,
	RAW_WHY_ENV = 3,
	/* none of the above: the new image did not start the library (the
	 * loader refused it, or it could not create its trace) */
	RAW_WHY_REFUSED = 4,
	/* a process the run's records never saw start (posix_spawn or
	 * system, which exec inside libc), known only by its end */
	RAW_WHY_UNSEEN = 5,
};

/* Written by an image right before it calls exec (execve and the
 * functions over it): the program it asks for, and what the image could
 * tell would keep the library out of the new one (enum raw_why,
 * RAW_WHY_UNKNOWN when nothing: then the new image is expected to write a
 * trace of its own).  Followed by path_len bytes of the path as given (no
 * NUL), padded to 8.  An exec that fails leaves the record: the last one
 * of an image that ran another program is that program's. */
struct raw_exec {
	struct raw_rec h;
	uint64_t time_ns;      /* monotonic */
	/* the process that calls exec: the trace's own, or a child made by
	 * vfork, which runs on the trace's memory until its exec */
	uint32_t pid;
	uint32_t why;          /* enum raw_why */
	uint32_t path_len;
	uint32_t reserved;     /* 0 */
};
_Static_assert(sizeof(struct raw_exec) == 32, "raw_exec is 32 bytes");

/* A child process the image waited for (wait, waitpid, wait3, wait4):
 * how it ended and the CPU time it used, as the kernel's wait status and
 * resource usage say. */
struct raw_child {
	struct raw_rec h;
	uint32_t pid;
	uint32_t status;       /* the wait status (WIFEXITED, WTERMSIG...) */
	uint64_t time_ns;      /* monotonic, when it was reaped */
	uint64_t cpu_ns;       /* user and system time */
};
_Static_assert(sizeof(struct raw_child) == 32, "raw_child is 32 bytes");

/* A run: the traces of every process of a command in one file.  When the
 * program it ran has ended, collect-timer joins the traces of its
 * processes (each process image, before and after an exec, is one) into
 * the file the user named: the parts, each a whole trace as above
 * starting at a multiple of RAW_RUN_ALIGN (8; older collectors put them at
 * multiples of 4096, zeros between them, which is one), then an
 * index of them, nparts raw_run_part entries in the order the images
 * started, then a raw_run_footer, the last RAW_RUN_FOOTER_SIZE bytes of
 * the file.  A file that does not end in the footer's magic is one trace.
 * The first part starts at byte 0, so that the file starts as a trace.
 * Cut into segments (--split), each segment is a run of the processes that
 * had records in its time window. */
#define RAW_RUN_MAGIC "PVRUNIX\n"
#define RAW_RUN_ALIGN 8
#define RAW_RUN_MAX_PARTS (1u << 20)

enum raw_run_flags {
	/* The image ran another program (exec): its trace ends there, whole,
	 * without a RAW_END record. */
	RAW_RUN_EXECD = 1u << 0,
	/* The image is of the run's first process, the program the user
	 * launched (kept even without samples, so that the run is named by
	 * it). */
	RAW_RUN_ROOT = 1u << 1,
	/* The last image of its process, which ended by exit or _exit with
	 * the status end_code: a trace without a RAW_END record is whole up
	 * to its last record. */
	RAW_RUN_EXITED = 1u << 2,
	/* The last image of its process, killed by the signal end_code. */
	RAW_RUN_KILLED = 1u << 3,
};

struct raw_run_part {
	uint64_t offset;       /* of its header, a multiple of RAW_RUN_ALIGN */
	uint64_t length;       /* bytes of its trace */
	uint32_t pid;          /* as its header says */
	uint32_t flags;        /* enum raw_run_flags */
	uint32_t end_code;     /* with RAW_RUN_EXITED or RAW_RUN_KILLED, else 0 */
	uint32_t reserved;     /* 0 */
};
_Static_assert(sizeof(struct raw_run_part) == 32, "raw_run_part is 32 bytes");

struct raw_run_footer {
	uint64_t index_offset; /* of the first raw_run_part, a multiple of 8 */
	uint32_t nparts;       /* 1 to RAW_RUN_MAX_PARTS */
	/* Processes the run had (process ids: an exec does not make another),
	 * with samples or not; 0 when not counted (older collectors). */
	uint32_t nprocesses;
	/* Of the table of the processes of the run that have no part (not
	 * profiled: raw_run_others), between the last part and the index;
	 * 0 for none (older collectors wrote 0 here, older readers skip it). */
	uint64_t others_offset;
	char magic[RAW_MAGIC_LEN]; /* RAW_RUN_MAGIC */
};
_Static_assert(sizeof(struct raw_run_footer) == 32, "raw_run_footer is 32 bytes");
#define RAW_RUN_FOOTER_SIZE 32

/* The run's names: the Python code objects of its processes (qualified
 * name, file name, first line) and the parts of their stacks, written
 * once for the run when collect-timer joins the traces, which then name
 * them by number (RAW_PYRUNCODES, RAW_PYRUNPARTS) rather than each
 * process writing its own.  RAW_PYCODES records (raw_rec header each),
 * whose code i is the run's code i, then RAW_PYPARTS records, whose part
 * i is the run's part i (frames naming the run's codes; eval_lo and
 * eval_hi 0), size bytes in all, then this trailer, which ends right
 * where the table of the processes not profiled starts
 * (raw_run_footer.others_offset), or the index of the parts when there
 * is no such table.  The records are read as a trace's are, their
 * strings by number or beginning naming the run's strings before. */
#define RAW_RUN_PYNAMES_MAGIC "PVNAMES\n"
#define RAW_RUN_PYNAMES_MAX ((uint64_t)64 << 20)
struct raw_run_pynames {
	uint64_t size;             /* bytes of the records before it, a multiple of 8 */
	char magic[RAW_MAGIC_LEN]; /* RAW_RUN_PYNAMES_MAGIC */
};
_Static_assert(sizeof(struct raw_run_pynames) == 16, "raw_run_pynames is 16 bytes");
/* The same records deflated, where that is smaller: a zlib stream (RFC
 * 1950) and zeros to a multiple of 8, size bytes, then this trailer in
 * place of the one above, ending where it would.  A reader that knows only
 * RAW_RUN_PYNAMES_MAGIC finds no run's names. */
#define RAW_RUN_PYNAMEZ_MAGIC "PVNAMEZ\n"
struct raw_run_pynamez {
	uint64_t size;             /* bytes before it, a multiple of 8, at most RAW_RUN_PYNAMES_MAX */
	uint64_t inflated;         /* the records' bytes, a multiple of 8, at most RAW_RUN_PYNAMES_MAX */
	char magic[RAW_MAGIC_LEN]; /* RAW_RUN_PYNAMEZ_MAGIC */
};
_Static_assert(sizeof(struct raw_run_pynamez) == 24, "raw_run_pynamez is 24 bytes");

/* The file of a run's short process images, "<output>.short" (collect-timer
 * creates it empty, named to the images by PROFVIEW_SHORT): an image that
 * ends or execs without a sample has made no trace file of its own, and
 * appends its whole trace here in one write, after this frame.  A frame
 * whose magic is wrong, or whose size runs past the end of the file,
 * ends what can be read.  collect-timer reads it and removes it; it is
 * never a part of a run file. */
#define RAW_SHORT_MAGIC "PVSHORT\n"
#define RAW_SHORT_MAX ((uint64_t)2 << 20)
struct raw_short {
	char magic[RAW_MAGIC_LEN]; /* RAW_SHORT_MAGIC */
	uint64_t size;             /* bytes of the trace after it, a multiple of 8 */
};
_Static_assert(sizeof(struct raw_short) == 16, "raw_short is 16 bytes");

/* The table of the processes that were not profiled: this head, then
 * count entries, each a raw_run_other followed by name_len bytes of the
 * program's path (as exec was given it; no NUL) and zeros to a multiple
 * of 8. */
#define RAW_RUN_OTHERS_MAGIC "PVOTHER\n"
#define RAW_RUN_OTHERS_MAX 65536
#define RAW_RUN_OTHER_NAME_MAX 4096
struct raw_run_others {
	char magic[RAW_MAGIC_LEN]; /* RAW_RUN_OTHERS_MAGIC */
	uint64_t count;
};
_Static_assert(sizeof(struct raw_run_others) == 16, "raw_run_others is 16 bytes");

struct raw_run_other {
	uint32_t pid;
	uint32_t why;          /* enum raw_why */
	uint32_t end;          /* RAW_RUN_EXITED, RAW_RUN_KILLED, or 0: not known */
	uint32_t end_code;     /* the exit status or the signal */
	uint64_t cpu_ns;       /* user and system time; RAW_UNKNOWN when not known */
	uint32_t name_len;     /* 0: the program is not known */
	uint32_t reserved;     /* 0 */
};
_Static_assert(sizeof(struct raw_run_other) == 32, "raw_run_other is 32 bytes");

static inline uint32_t raw_pad(uint32_t n)
{
	return (n + RAW_ALIGN - 1) & ~(uint32_t)(RAW_ALIGN - 1);
}

#endif
