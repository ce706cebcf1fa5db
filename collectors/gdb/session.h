/* session.h - what every part of collect-gdb shares: the options, the
 * state of a sampling session, when snapshots are due and when sampling
 * stops, and small helpers (the clock, struct strbuf, running out of memory)
 *
 * collect-gdb's files, each using only those listed before it:
 *   session.c      this
 *   proc.c         child processes (the program to sample, the dumpers),
 *                  what /proc says of the target, why attaching was refused
 *   trace.c        the trace file: its header, the snapshots, the maps, the end
 *   dumpers.c      dumpers that run once per snapshot: batch gdb, eu-stack
 *   mi.c           the persistent gdb/MI session
 *   collect-gdb.c  the options and main
 * Messages go through trace/cli.h.  Internal to the collect-gdb program;
 * it links nothing of profview's own (trace/outfile.c and trace/cli.c,
 * libc only, are compiled in).
 */
#ifndef PROFVIEW_GDB_SESSION_H
#define PROFVIEW_GDB_SESSION_H

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
/* Their names, in that order, ending with NULL. */
extern const char *const cg_mode_names[];

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
	int64_t resumed_ns;     /* when it ran on after the last snapshot (monotonic), 0 */
	unsigned max_threads;
	int64_t t_begin;
	enum cg_end end;
	/* The "# map:" lines written so far (trace.c). */
	char **maps; size_t nmaps, cap_maps;
};

/* The signal (SIGINT, SIGTERM, SIGHUP) that asked sampling to stop, or 0. */
extern volatile sig_atomic_t cg_stop_signal;
/* Says "out of memory" and exits with CG_EXIT_FAIL. */
void cg_oom(void) __attribute__((noreturn));
int64_t cg_now_ns(clockid_t clk);
/* Appends s[0..n) and keeps the buffer NUL-terminated.  0, or -1 when out
 * of memory (the buffer is unchanged). */
int sb_add(struct strbuf *b, const char *s, size_t n);
/* The last non-empty line of b into out, for messages. */
void sb_last_line(const struct strbuf *b, char *out, size_t n);
/* Records how long (ns) the target was stopped for one snapshot, which
 * ends now: it runs on from now (st->resumed_ns). */
void cg_note_stop(struct cg_state *st, int64_t ns);
/* Should sampling stop now?  Sets st->end. */
bool cg_should_stop(struct cg_state *st);
/* Sleeps until t (monotonic), or less if the duration ends or a signal
 * comes. */
void cg_sleep_until(struct cg_state *st, int64_t t);
/* Next snapshot time: on the interval grid, skipping missed slots. */
int64_t cg_next_slot(struct cg_state *st, int64_t prev);

#endif
