/* collect-gdb.h - what the files of collect-gdb share
 *
 * collect-gdb.c  options, main, the trace file, scheduling, small helpers
 *                (messages, the clock, struct strbuf)
 * proc.c         child processes (the program to sample, the dumpers),
 *                tracer checks and why attaching was refused
 * dumpers.c      dumpers that run once per snapshot: batch gdb, eu-stack
 * mi.c           the persistent gdb/MI session
 *
 * Internal to the collect-gdb program; it links nothing of profview's own
 * (formats/outfile.c and formats/cli.c, libc only, are compiled in).
 */
#ifndef PROFVIEW_COLLECT_GDB_H
#define PROFVIEW_COLLECT_GDB_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#define CG_EXIT_FAIL 1
#define CG_EXIT_USAGE 2
#define CG_EXIT_NOEXEC 126
#define CG_EXIT_NOTFOUND 127

enum cg_mode { MODE_PERSISTENT, MODE_BATCH, MODE_EUSTACK };

/* Why sampling ended. */
enum cg_end { END_NONE, END_COUNT, END_DURATION, END_SIGNAL, END_EXITED, END_ERROR };

struct cg_opts {
	pid_t pid;
	char **argv;            /* program to start, or NULL */
	int64_t interval_ns, duration_ns;
	int64_t timeout_ns;        /* for a snapshot */
	int64_t attach_timeout_ns; /* persistent mode: from gdb's start to the first stop */
	long long count;        /* 0: no limit */
	const char *output;
	const char *gdb;        /* gdb command */
	enum cg_mode mode;
	bool readnever, quiet;
};

struct strbuf {
	char *s;
	size_t len, cap;
};

struct cg_state {
	struct cg_opts o;
	FILE *out;
	char outname[PATH_MAX];
	int out_errno;          /* the first error writing the trace, or 0 */
	pid_t pid;
	bool child;             /* we started the target */
	bool was_stopped;       /* it was stopped (SIGSTOP, ^Z) before we came */
	int child_status;
	bool child_reaped;
	long long snapshots;
	int64_t *stops; size_t nstops, cap_stops; /* ns the target was stopped */
	unsigned max_threads;
	int64_t t_begin;
	enum cg_end end;
	/* The "# map:" lines written so far (proc_write_maps). */
	char **maps; size_t nmaps, cap_maps;
};

/* A helper process with its stdout (and stderr) on pipes. */
struct proc {
	pid_t pid;
	int in, out, err;       /* -1 when not used */
	struct strbuf obuf, ebuf;
	size_t opos;            /* consumed part of obuf (line reader) */
	bool out_eof, err_eof;
};

/* collect-gdb.c */

/* The signal (SIGINT, SIGTERM, SIGHUP) that asked sampling to stop, or 0. */
extern volatile sig_atomic_t cg_stop_signal;
/* One line on stderr, prefixed with "collect-gdb: ". */
void cg_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Says "out of memory" and exits with CG_EXIT_FAIL. */
void cg_oom(void) __attribute__((noreturn));
int64_t cg_now_ns(clockid_t clk);
/* Appends s[0..n) and keeps the buffer NUL-terminated.  0, or -1 when out
 * of memory (the buffer is unchanged). */
int sb_add(struct strbuf *b, const char *s, size_t n);
/* The last non-empty line of b into out, for messages. */
void sb_last_line(const struct strbuf *b, char *out, size_t n);
/* Writes one snapshot: the backtrace lines of text, nothing else.  Returns
 * how many thread headers it held. */
unsigned cg_write_snapshot(struct cg_state *st, const char *text, size_t len, int64_t t_real);
/* Records how long (ns) the target was stopped for one snapshot. */
void cg_note_stop(struct cg_state *st, int64_t ns);
/* Should sampling stop now?  Sets st->end. */
bool cg_should_stop(struct cg_state *st);
/* Sleeps until t (monotonic), or less if the duration ends or a signal
 * comes. */
void cg_sleep_until(struct cg_state *st, int64_t t);
/* Next snapshot time: on the interval grid, skipping missed slots. */
int64_t cg_next_slot(struct cg_state *st, int64_t prev);

/* proc.c */

/* Is cmd runnable (a path, or found in PATH)?  full gets the path. */
bool proc_find_command(const char *cmd, char *full, size_t n);
/* The state letter of /proc/PID/stat ('R', 'S', 'T' for stopped, ...), 0
 * when there is no such process. */
char proc_state(pid_t pid);
/* 1 alive, 0 gone (or a zombie); reaps the target when we started it. */
int proc_target_alive(struct cg_state *st);
/* How many threads the process has, 0 if unknown. */
unsigned proc_count_threads(pid_t pid);
/* Has someone sent a SIGCONT that waits for the (traced) process? */
bool proc_sigcont_pending(pid_t pid);
/* Leaves the target as it was found once the dumper has let go of it (or
 * was ended, clean false): SIGSTOP when it was stopped before, else, when
 * not clean, SIGCONT. */
void proc_leave_target(struct cg_state *st, bool clean);
/* "the process was left running" or "... stopped, as it was". */
const char *proc_left_as(const struct cg_state *st);
/* "TracerPid:" of a process, 0 if none or unknown. */
long proc_tracer_of(pid_t pid);
/* The comm of process pid, or of its thread tid when tid != 0; "" if
 * unknown. */
void proc_read_comm(pid_t pid, pid_t tid, char *buf, size_t n);
/* Writes a "# map:" line to the trace for every executable mapping of the
 * target that no earlier line gave, from /proc/PID/maps: what addresses
 * without a name are offsets in (profview-gdb(5)).  Nothing when the maps
 * cannot be read. */
void proc_write_maps(struct cg_state *st);
/* One line on why attaching was refused, with what to check. */
void proc_permission_error(struct cg_state *st);
/* Starts the program to sample.  Returns an exit status on failure, else
 * -1. */
int proc_start_program(struct cg_state *st);
/* Runs argv; with_stdin gives a pipe to its stdin, else /dev/null.  0 or
 * -1 (errno set). */
int proc_start(struct proc *pr, char *const argv[], bool with_stdin);
/* Reads what is available until deadline (monotonic ns; 0 = just what is
 * there).  Returns 1 if something came, 0 on timeout (or a stop signal),
 * -1 when both pipes are at EOF. */
int proc_pump(struct proc *pr, int64_t deadline);
/* Waits for the helper to exit, up to grace ns, then ends its process
 * group.  Returns its wait status. */
int proc_finish(struct proc *pr, int64_t grace);
/* Frees the output buffers. */
void proc_free(struct proc *pr);
/* The first line of "CMD --version", or "unknown". */
void proc_tool_version(const char *cmd, char *buf, size_t n);

/* dumpers.c: each runs snapshots until cg_should_stop or an end, which it
 * sets in st->end. */

void dumpers_batch_loop(struct cg_state *st);
void dumpers_eustack_loop(struct cg_state *st, const char *eustack);

/* mi.c */

/* Attaches one gdb/MI session and runs the snapshots through it; sets
 * st->end. */
void mi_persistent_loop(struct cg_state *st);

#endif
