/* proc.h - collect-gdb's child processes, and what /proc says of the
 * target (proc.c) */
#ifndef PROFVIEW_GDB_PROC_H
#define PROFVIEW_GDB_PROC_H

#include "session.h"

/* A helper process with its stdout (and stderr) on pipes. */
struct proc {
	pid_t pid;
	int in, out, err;       /* -1 when not used */
	struct strbuf obuf, ebuf;
	size_t opos;            /* consumed part of obuf (line reader) */
	bool out_eof, err_eof;
};

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

#endif
