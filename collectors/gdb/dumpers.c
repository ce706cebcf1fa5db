/* dumpers.c - dumpers that run once per snapshot (batch, eu-stack)
 *
 * batch: a new "gdb -batch -p PID ... -ex 'thread apply all bt'" per
 * snapshot.  eu-stack: elfutils' eu-stack per snapshot, its output
 * rewritten in gdb's form (eustack_to_gdb).  Each dumper runs to completion
 * or until --timeout, then is ended and the target given a SIGCONT (or, if
 * it was stopped before, a SIGSTOP).  A stopped target stays stopped
 * between snapshots: the kernel restores its job-control stop when the
 * dumper detaches.
 */
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "cli.h"
#include "proc.h"
#include "trace.h"
#include "dumpers.h"

/* Run argv to completion or timeout.  0 ok; 1 timed out; -1 cannot run. */
static int run_dumper(struct cg_state *st, char *const argv[], struct proc *pr, int *status)
{
	int64_t deadline = cg_now_ns(CLOCK_MONOTONIC) + st->o.timeout_ns;
	int r;

	if (proc_start(pr, argv, false) < 0) {
		cli_msg("cannot run '%s': %s", argv[0], strerror(errno));
		return -1;
	}
	while ((r = proc_pump(pr, deadline)) > 0 || (r == 0 && cg_stop_signal))
		if (r == 0 && cg_stop_signal && cg_now_ns(CLOCK_MONOTONIC) >= deadline)
			break;
	if (r == 0) {
		/* Timed out: gdb detaches on SIGTERM; make sure the target is
		 * left as it was, running or stopped. */
		*status = proc_finish(pr, 0);
		proc_leave_target(st, false);
		return 1;
	}
	*status = proc_finish(pr, 2000000000LL);
	return 0;
}

/* Classify a dumper's failure; reports it unless the target just exited.
 * Returns END_EXITED or END_ERROR. */
static enum cg_end dumper_failed(struct cg_state *st, const char *tool, const struct strbuf *err)
{
	char line[512];

	if (!proc_target_alive(st))
		return END_EXITED;
	if (strstr(err->s ? err->s : "", "Operation not permitted") ||
	    strstr(err->s ? err->s : "", "ermission denied")) {
		proc_permission_error(st);
		return END_ERROR;
	}
	sb_last_line(err, line, sizeof line);
	cli_msg("%s could not dump process %d: %s", tool, (int)st->pid, line[0] ? line : "no output");
	return END_ERROR;
}

/* Wait for the next slot and run the dumper once.  True with its output in
 * *pr (and when it ran in *t_real and *t0); false when the loop ends, with
 * st->end saying why. */
static bool dump_once(struct cg_state *st, const char *tool, char *const argv[], int64_t next,
		      struct proc *pr, int *status, int64_t *t_real, int64_t *t0)
{
	int r;

	cg_sleep_until(st, next);
	if (cg_should_stop(st))
		return false;
	if (!proc_target_alive(st)) {
		st->end = END_EXITED;
		return false;
	}
	*t_real = cg_now_ns(CLOCK_REALTIME);
	*t0 = cg_now_ns(CLOCK_MONOTONIC);
	r = run_dumper(st, argv, pr, status);
	if (r == 0)
		return true;
	if (r > 0 && !proc_target_alive(st)) {
		st->end = END_EXITED;
	} else {
		if (r > 0) {
			unsigned threads = proc_count_threads(st->pid);
			cli_msg("%s did not finish snapshot %lld of process %d (%u thread%s) within %.3g s: give a longer --timeout%s; %s",
			       tool, st->snapshots + 1, (int)st->pid, threads, threads == 1 ? "" : "s",
			       st->o.timeout_ns / 1e9,
			       st->o.mode == MODE_BATCH ? " (in batch mode every snapshot attaches and reads the debug information anew)" : "",
			       proc_left_as(st));
		}
		st->end = END_ERROR;
	}
	proc_free(pr);
	return false;
}

void dumpers_batch_loop(struct cg_state *st)
{
	char pidbuf[32];
	char *argv[16];
	int k = 0;
	int64_t next = cg_now_ns(CLOCK_MONOTONIC);

	snprintf(pidbuf, sizeof pidbuf, "%d", (int)st->pid);
	argv[k++] = (char *)st->o.gdb;
	argv[k++] = (char *)"-batch";
	argv[k++] = (char *)"-nx";
	if (st->o.readnever)
		argv[k++] = (char *)"--readnever";
	argv[k++] = (char *)"-ex";
	argv[k++] = (char *)"set pagination off";
	argv[k++] = (char *)"-ex";
	argv[k++] = (char *)"set width 0";
	argv[k++] = (char *)"-ex";
	argv[k++] = (char *)"thread apply all bt";
	argv[k++] = (char *)"-p";
	argv[k++] = pidbuf;
	argv[k] = NULL;
	while (!cg_should_stop(st)) {
		struct proc pr;
		int status = 0;
		int64_t t0, t_real;

		if (!dump_once(st, "gdb", argv, next, &pr, &status, &t_real, &t0))
			break;
		if (!pr.obuf.s || !strstr(pr.obuf.s, "\nThread ")) {
			st->end = dumper_failed(st, "gdb", &pr.ebuf);
			proc_free(&pr);
			break;
		}
		cg_write_snapshot(st, pr.obuf.s, pr.obuf.len, t_real, t0);
		cg_note_stop(st, cg_now_ns(CLOCK_MONOTONIC) - t0);
		proc_free(&pr);
		next = cg_next_slot(st, next);
	}
}

/* eu-stack's "#N  0xPC FUNC - MODULE" (+ "    FILE:LINE:COL") in gdb's
 * form; threads named from /proc. */
static int eustack_to_gdb(struct cg_state *st, const char *text, size_t len, struct strbuf *out)
{
	unsigned thread_no = 0;
	char line[8192];

	for (size_t off = 0; off < len;) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t n = (nl ? (size_t)(nl - text) : len) - off;
		const char *s = text + off;
		const char *next = nl ? nl + 1 : text + len;
		size_t next_n = 0;
		off += n + 1;

		if (nl && off < len) {
			const char *nl2 = memchr(next, '\n', len - off);
			next_n = (nl2 ? (size_t)(nl2 - next) : len - off);
		}
		if (n > 4 && memcmp(s, "TID ", 4) == 0) {
			long tid = strtol(s + 4, NULL, 10);
			char comm[64];
			proc_read_comm(st->pid, (pid_t)tid, comm, sizeof comm);
			snprintf(line, sizeof line, "\nThread %u (LWP %ld \"%s\"):\n", ++thread_no, tid, comm);
		} else if (n > 1 && s[0] == '#' && isdigit((unsigned char)s[1])) {
			char frame[16] = "", func[4096] = "??", module[2048] = "", src[2048] = "";
			unsigned long long pc = 0;
			const char *q = s + 1, *e = s + n, *dash;
			int w;

			w = snprintf(frame, sizeof frame, "#%ld", strtol(q, (char **)&q, 10));
			(void)w;
			while (q < e && *q == ' ')
				q++;
			pc = strtoull(q, (char **)&q, 16);
			/* " FUNC - MODULE", or " - MODULE" when the address has
			 * no symbol: the function is then "??", as gdb says */
			dash = NULL;
			for (const char *c = q; c + 2 < e; c++)
				if (c[0] == ' ' && c[1] == '-' && c[2] == ' ')
					dash = c;
			if (dash) {
				snprintf(module, sizeof module, "%.*s", (int)(e - dash - 3), dash + 3);
				e = dash;
			}
			while (q < e && *q == ' ')
				q++;
			if (e > q)
				snprintf(func, sizeof func, "%.*s", (int)(e - q), q);
			if (next_n > 4 && next[0] == ' ') {
				/* "    FILE:LINE:COL" -> FILE:LINE */
				const char *t = next, *te = next + next_n, *c1 = NULL, *c2 = NULL;
				while (t < te && *t == ' ')
					t++;
				for (const char *c = te; c-- > t;)
					if (*c == ':') {
						if (!c2)
							c2 = c;
						else {
							c1 = c;
							break;
						}
					}
				if (c2 && !c1)
					c1 = c2, c2 = te;
				if (c1)
					snprintf(src, sizeof src, "%.*s:%.*s", (int)(c1 - t), t,
						 (int)(c2 - c1 - 1), c1 + 1);
			}
			if (src[0])
				snprintf(line, sizeof line, "%s  0x%016llx in %s () at %s\n", frame, pc, func, src);
			else if (module[0])
				snprintf(line, sizeof line, "%s  0x%016llx in %s () from %s\n", frame, pc, func, module);
			else
				snprintf(line, sizeof line, "%s  0x%016llx in %s ()\n", frame, pc, func);
		} else {
			continue;
		}
		if (sb_add(out, line, strlen(line)) < 0)
			return -1;
	}
	return 0;
}

void dumpers_eustack_loop(struct cg_state *st, const char *eustack)
{
	char pidbuf[32];
	char *argv[12];
	int k = 0;
	int64_t next = cg_now_ns(CLOCK_MONOTONIC);

	snprintf(pidbuf, sizeof pidbuf, "%d", (int)st->pid);
	argv[k++] = (char *)eustack;
	argv[k++] = (char *)"-m";
	if (!st->o.readnever) {
		argv[k++] = (char *)"-i";
		argv[k++] = (char *)"-s";
	}
	argv[k++] = (char *)"-p";
	argv[k++] = pidbuf;
	argv[k] = NULL;
	while (!cg_should_stop(st)) {
		struct proc pr;
		struct strbuf conv = { 0 };
		int status = 0;
		int64_t t0, t_real;

		if (!dump_once(st, "eu-stack", argv, next, &pr, &status, &t_real, &t0))
			break;
		/* 0: all frames; 1: some frames missing; 2: nothing */
		if (!WIFEXITED(status) || WEXITSTATUS(status) > 1 || !pr.obuf.s ||
		    !strstr(pr.obuf.s, "TID ")) {
			st->end = dumper_failed(st, "eu-stack", &pr.ebuf);
			proc_free(&pr);
			break;
		}
		if (eustack_to_gdb(st, pr.obuf.s, pr.obuf.len, &conv) < 0)
			cg_oom();
		cg_write_snapshot(st, conv.s ? conv.s : "", conv.len, t_real, t0);
		cg_note_stop(st, cg_now_ns(CLOCK_MONOTONIC) - t0);
		free(conv.s);
		proc_free(&pr);
		next = cg_next_slot(st, next);
	}
}
