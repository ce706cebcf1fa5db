/* mi.c - the persistent gdb/MI session
 *
 * One gdb (--interpreter=mi3, mi-async) stays attached for the whole run.
 * Attaching stops the target: that is the first snapshot.  Attaching, from
 * gdb's start to that first stop, has its own allowance (--attach-timeout):
 * gdb reads the debug information and stops every thread then.  Each snapshot
 * then runs "thread apply all bt" through -interpreter-exec console and
 * keeps the console stream (~"...") as the snapshot's text, continues the
 * target (-exec-continue), waits for the next slot watching for its exit,
 * and interrupts it (-exec-interrupt) again.  The program's own signals
 * pass straight through ("handle all nostop noprint pass").  At the end the
 * target is detached and left running; a gdb that stops answering is
 * ended, and the target gets a SIGCONT.
 *
 * A target that was stopped (SIGSTOP, ^Z) when we came stays stopped: it
 * is never continued, each snapshot dumps it as it stands, and after the
 * detach it is stopped again.  Attaching does not end a job-control stop
 * (gdb takes the SIGSTOP it sends itself; the kernel keeps the stop and
 * restores it when gdb detaches), but a SIGCONT from someone else does: it
 * waits in the pending signals, and from then on the target is sampled
 * like a running one.
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
#include <unistd.h>

#include "cli.h"
#include "mi.h"
#include "proc.h"
#include "trace.h"

struct mi {
	struct proc pr;
	unsigned token;
	struct strbuf console;  /* ~"..." text since the last command */
	bool running, exited, stopped_seen;
	bool hung;              /* a command timed out: no more talking */
	char error[512];        /* of the last ^error */
};

/* Unescape an MI c-string starting after its opening quote. */
static void mi_cstring(const char *s, const char *e, struct strbuf *out)
{
	char buf[1024];
	size_t n = 0;

	while (s < e && *s != '"') {
		char c = *s++;
		if (c == '\\' && s < e) {
			c = *s++;
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'e': c = 27; break;
			default:
				if (c >= '0' && c <= '7') {
					int v = c - '0';
					for (int i = 0; i < 2 && s < e && *s >= '0' && *s <= '7'; i++)
						v = v * 8 + (*s++ - '0');
					c = (char)v;
				}
			}
		}
		buf[n++] = c;
		if (n == sizeof buf) {
			if (sb_add(out, buf, n) < 0)
				cg_oom();
			n = 0;
		}
	}
	if (n && sb_add(out, buf, n) < 0)
		cg_oom();
}

/* Handle one MI output line.  Returns 1 when it is the result record of
 * token (class in *cls: 'd'one, 'r'unning, 'e'rror, 'c'onnected, 'x' exit). */
static int mi_line(struct mi *m, const char *s, size_t n, unsigned token, char *cls)
{
	char tok[16];
	size_t tl = 0;

	while (tl < n && tl < 15 && isdigit((unsigned char)s[tl]))
		tok[tl] = s[tl], tl++;
	tok[tl] = '\0';
	s += tl;
	n -= tl;
	if (n == 0)
		return 0;
	switch (s[0]) {
	case '~':
		if (n > 1 && s[1] == '"')
			mi_cstring(s + 2, s + n, &m->console);
		return 0;
	case '*':
		if (n >= 8 && memcmp(s, "*running", 8) == 0) {
			m->running = true;
		} else if (n >= 8 && memcmp(s, "*stopped", 8) == 0) {
			m->running = false;
			m->stopped_seen = true;
			if (memmem(s, n, "reason=\"exited", 14))
				m->exited = true;
		}
		return 0;
	case '=':
		if (n >= 20 && memcmp(s, "=thread-group-exited", 20) == 0)
			m->exited = true;
		return 0;
	case '^':
		if (tl == 0 || (unsigned)strtoul(tok, NULL, 10) != token)
			return 0;
		*cls = s[1] == 'd' ? 'd' : s[1] == 'r' ? 'r' : s[1] == 'c' ? 'c' : s[1] == 'e' && s[2] == 'r' ? 'e' : 'x';
		if (*cls == 'r')
			m->running = true;
		if (*cls == 'e') {
			const char *q = memmem(s, n, "msg=\"", 5);
			struct strbuf b = { 0 };
			if (q)
				mi_cstring(q + 5, s + n, &b);
			snprintf(m->error, sizeof m->error, "%s", b.s ? b.s : "unknown error");
			free(b.s);
		}
		return 1;
	}
	return 0;
}

/* Process the lines gdb wrote so far.  Returns 1 if the result record of
 * token came. */
static int mi_scan(struct mi *m, unsigned token, char *cls)
{
	struct proc *pr = &m->pr;
	int found = 0;

	while (!found && pr->opos < pr->obuf.len) {
		char *s = pr->obuf.s + pr->opos;
		char *nl = memchr(s, '\n', pr->obuf.len - pr->opos);
		size_t n;
		if (!nl)
			break;
		n = (size_t)(nl - s);
		pr->opos += n + 1;
		if (n && s[n - 1] == '\r')
			n--;
		found = mi_line(m, s, n, token, cls);
	}
	if (pr->opos == pr->obuf.len) {
		pr->obuf.len = pr->opos = 0;
	} else if (pr->opos > (1u << 20)) {
		memmove(pr->obuf.s, pr->obuf.s + pr->opos, pr->obuf.len - pr->opos);
		pr->obuf.len -= pr->opos;
		pr->opos = 0;
	}
	/* stderr: not MI; keep only the tail for messages */
	if (pr->ebuf.len > 65536) {
		memmove(pr->ebuf.s, pr->ebuf.s + pr->ebuf.len - 4096, 4096);
		pr->ebuf.len = 4096;
		pr->ebuf.s[4096] = '\0';
	}
	return found;
}

/* Send a command and wait for its result until deadline (monotonic ns).
 * Returns the class letter, 't' on timeout, or 'x' when gdb went away. */
static char mi_cmd_by(struct mi *m, const char *cmd, int64_t deadline)
{
	char line[512];
	char cls = 0;
	int len;

	m->token++;
	m->console.len = 0;
	if (m->console.s)
		m->console.s[0] = '\0';
	m->error[0] = '\0';
	len = snprintf(line, sizeof line, "%u%s\n", m->token, cmd);
	if (write(m->pr.in, line, (size_t)len) != len)
		return 'x';
	for (;;) {
		int r;
		if (mi_scan(m, m->token, &cls))
			return cls;
		r = proc_pump(&m->pr, deadline);
		if (r < 0)
			return 'x';
		if (r == 0 && cg_now_ns(CLOCK_MONOTONIC) >= deadline)
			return 't';
	}
}

/* The same, waiting timeout ns at most. */
static char mi_cmd(struct mi *m, const char *cmd, int64_t timeout)
{
	return mi_cmd_by(m, cmd, cg_now_ns(CLOCK_MONOTONIC) + timeout);
}

/* Wait until gdb reports the target stopped (or exited). */
static bool mi_wait_stopped(struct mi *m, int64_t deadline)
{
	char cls;

	for (;;) {
		int r;
		mi_scan(m, 0, &cls);
		if (!m->running || m->exited)
			return true;
		r = proc_pump(&m->pr, deadline);
		if (r < 0)
			return m->exited;
		if (r == 0 && cg_now_ns(CLOCK_MONOTONIC) >= deadline)
			return false;
	}
}

/* The steps gdb may not finish in time. */
enum mi_step { STEP_ATTACH, STEP_DUMP, STEP_RESUME, STEP_STOP };

/* gdb did not answer in time: says which step it was, with what to do,
 * and ends the sampling; gdb is ended afterwards. */
static void mi_timeout(struct cg_state *st, struct mi *m, enum mi_step step)
{
	unsigned threads;

	m->hung = true;
	if (!proc_target_alive(st)) {
		st->end = END_EXITED;
		return;
	}
	st->end = END_ERROR;
	threads = proc_count_threads(st->pid);
	switch (step) {
	case STEP_ATTACH:
		cli_msg("attaching to process %d (%u thread%s) took longer than %.3g s: give a longer --attach-timeout (or --readnever, to read no debug information); %s",
		       (int)st->pid, threads, threads == 1 ? "" : "s", st->o.attach_timeout_ns / 1e9,
		       proc_left_as(st));
		break;
	case STEP_DUMP:
		cli_msg("gdb did not finish snapshot %lld of process %d (%u thread%s) within %.3g s: give a longer --timeout; %s",
		       st->snapshots + 1, (int)st->pid, threads, threads == 1 ? "" : "s",
		       st->o.timeout_ns / 1e9, proc_left_as(st));
		break;
	case STEP_RESUME:
	case STEP_STOP:
		cli_msg("gdb did not %s process %d within %.3g s (--timeout); %s",
		       step == STEP_RESUME ? "resume" : "stop", (int)st->pid, st->o.timeout_ns / 1e9,
		       proc_left_as(st));
		break;
	}
}

/* Starts gdb and sets it up, by attach_by.  1 when done; else, having
 * said why (st->end is END_ERROR), 0 when gdb runs, -1 when it did not
 * start. */
static int mi_start(struct cg_state *st, struct mi *m, int64_t attach_by)
{
	static const char *const setup[] = {
		"-gdb-set mi-async on",
		"-gdb-set pagination off",
		"-gdb-set width 0",
		"-gdb-set confirm off",
		"-gdb-set print thread-events off",
		/* the program's own signals go straight through */
		"-interpreter-exec console \"handle all nostop noprint pass\"",
	};
	char *argv[8], line[512];
	int k = 0;

	argv[k++] = (char *)st->o.gdb;
	argv[k++] = (char *)"--interpreter=mi3";
	argv[k++] = (char *)"-nx";
	argv[k++] = (char *)"-q";
	if (st->o.readnever)
		argv[k++] = (char *)"--readnever";
	argv[k] = NULL;
	st->end = END_ERROR;
	if (proc_start(&m->pr, argv, true) < 0) {
		cli_msg("cannot run '%s': %s", st->o.gdb, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof setup / sizeof setup[0]; i++) {
		char cls = mi_cmd_by(m, setup[i], attach_by);
		if (cls == 't') {
			cli_msg("gdb ('%s') did not answer its first commands within %.3g s of starting: check that '%s --interpreter=mi3' runs, or give a longer --attach-timeout",
			       st->o.gdb, st->o.attach_timeout_ns / 1e9, st->o.gdb);
			m->hung = true;
			return 0;
		}
		if (cls != 'x')
			continue;
		sb_last_line(&m->pr.ebuf, line, sizeof line);
		if (line[0]) {
			cli_msg("gdb ('%s') exited at start: %s", st->o.gdb, line);
		} else {
			int status = proc_finish(&m->pr, 1000000000LL);
			if (WIFEXITED(status))
				cli_msg("gdb ('%s') exited at start with status %d, saying nothing: check that '%s --interpreter=mi3' runs",
				       st->o.gdb, WEXITSTATUS(status), st->o.gdb);
			else
				cli_msg("gdb ('%s') ended at start by signal %d: check that '%s --interpreter=mi3' runs",
				       st->o.gdb, WIFSIGNALED(status) ? WTERMSIG(status) : 0, st->o.gdb);
		}
		return 0;
	}
	st->end = END_NONE;
	return 1;
}

/* Attaches gdb to the target and waits for it to stop, by attach_by.
 * *attached says whether gdb may hold some of its threads.  False when
 * sampling cannot go on (st->end set). */
static bool mi_attach(struct cg_state *st, struct mi *m, int64_t attach_by, bool *attached)
{
	char cmd[64], cls;

	snprintf(cmd, sizeof cmd, "-target-attach %d", (int)st->pid);
	cls = mi_cmd_by(m, cmd, attach_by);
	if (cls == 't') {
		/* It may have attached some threads: leave them as found. */
		*attached = true;
		mi_timeout(st, m, STEP_ATTACH);
		return false;
	}
	if (cls != 'd') {
		st->end = END_ERROR;
		if (!proc_target_alive(st))
			cli_msg("no process with pid %d", (int)st->pid);
		else if (strstr(m->error, "not permitted") || strstr(m->error, "ermission"))
			proc_permission_error(st);
		else
			cli_msg("gdb cannot attach to process %d: %s", (int)st->pid,
			       m->error[0] ? m->error : "gdb exited");
		return false;
	}
	*attached = true;
	/* Attaching stops the target: this is the first snapshot's moment. */
	if (!mi_wait_stopped(m, attach_by)) {
		mi_timeout(st, m, STEP_ATTACH);
		return false;
	}
	return true;
}

/* Dumps the stopped target into the trace, then continues it (unless it
 * was stopped before we came); t0 is when it stopped.  False when sampling
 * ends (st->end set). */
static bool mi_dump_resume(struct cg_state *st, struct mi *m, int64_t t0)
{
	int64_t t_real = cg_now_ns(CLOCK_REALTIME);
	char cls;

	if (m->exited) {
		st->end = END_EXITED;
		return false;
	}
	cls = mi_cmd(m, "-interpreter-exec console \"thread apply all bt\"", st->o.timeout_ns);
	if (cls == 't') {
		mi_timeout(st, m, STEP_DUMP);
		return false;
	}
	if (cls != 'd') {
		if (m->exited || !proc_target_alive(st)) {
			st->end = END_EXITED;
		} else {
			cli_msg("gdb failed to dump process %d: %s", (int)st->pid,
			       m->error[0] ? m->error : "gdb exited");
			st->end = END_ERROR;
		}
		return false;
	}
	cg_write_snapshot(st, m->console.s ? m->console.s : "", m->console.len, t_real, t0);
	if (cg_should_stop(st))
		return false;
	if (st->was_stopped)
		return true;
	cls = mi_cmd(m, "-exec-continue", st->o.timeout_ns);
	if (cls != 'r') {
		if (m->exited || !proc_target_alive(st))
			st->end = END_EXITED;
		else if (cls == 't')
			mi_timeout(st, m, STEP_RESUME);
		else {
			cli_msg("gdb cannot resume process %d: %s", (int)st->pid, m->error);
			st->end = END_ERROR;
		}
		return false;
	}
	cg_note_stop(st, cg_now_ns(CLOCK_MONOTONIC) - t0);
	return true;
}

/* Waits until next, watching for the target's exit, then stops it again;
 * *t0 gets when.  False when sampling ends (st->end set). */
static bool mi_wait_interrupt(struct cg_state *st, struct mi *m, int64_t next, int64_t *t0)
{
	char cls;

	while (!cg_stop_signal && !m->exited) {
		int64_t t = next;
		if (st->o.duration_ns && t > st->t_begin + st->o.duration_ns)
			t = st->t_begin + st->o.duration_ns;
		if (cg_now_ns(CLOCK_MONOTONIC) >= t)
			break;
		if (proc_pump(&m->pr, t) < 0)
			break;
		mi_scan(m, 0, &cls);
	}
	if (m->exited) {
		st->end = END_EXITED;
		return false;
	}
	if (cg_should_stop(st))
		return false;
	/* Someone resumed the stopped target: let it run from now on (the
	 * next -exec-continue hands it the SIGCONT). */
	if (st->was_stopped && proc_sigcont_pending(st->pid))
		st->was_stopped = false;
	*t0 = cg_now_ns(CLOCK_MONOTONIC);
	if (!m->running)
		return true;
	cls = mi_cmd(m, "-exec-interrupt", st->o.timeout_ns);
	if (cls == 't' || !mi_wait_stopped(m, *t0 + st->o.timeout_ns)) {
		mi_timeout(st, m, STEP_STOP);
		return false;
	}
	return true;
}

/* Stops the target if it runs and detaches.  Whether gdb let go cleanly. */
static bool mi_detach(struct cg_state *st, struct mi *m)
{
	if (m->running) {
		mi_cmd(m, "-exec-interrupt", st->o.timeout_ns);
		mi_wait_stopped(m, cg_now_ns(CLOCK_MONOTONIC) + st->o.timeout_ns);
	}
	if (st->was_stopped && proc_sigcont_pending(st->pid))
		st->was_stopped = false;
	return !m->exited && mi_cmd(m, "-target-detach", st->o.timeout_ns) == 'd';
}

void mi_persistent_loop(struct cg_state *st)
{
	struct mi m = { 0 };
	int64_t next, t0, attach_by;
	bool attached = false, detached = false;
	int started;

	/* Attaching, from gdb's start to the target's first stop, has an
	 * allowance of its own: reading the debug information and stopping
	 * every thread may take much longer than a snapshot. */
	attach_by = cg_now_ns(CLOCK_MONOTONIC) + st->o.attach_timeout_ns;
	started = mi_start(st, &m, attach_by);
	if (started < 0)
		return;
	if (started == 0)
		goto out;
	if (!mi_attach(st, &m, attach_by, &attached))
		goto out;
	next = t0 = cg_now_ns(CLOCK_MONOTONIC);
	while (mi_dump_resume(st, &m, t0)) {
		next = cg_next_slot(st, next);
		if (!mi_wait_interrupt(st, &m, next, &t0))
			break;
	}
	if (attached && !m.exited && st->end != END_ERROR)
		detached = mi_detach(st, &m);
	if (!m.exited && !m.hung)
		mi_cmd(&m, "-gdb-exit", 1000000000LL);
out:
	/* gdb detaches on SIGTERM; after a SIGKILL a pending SIGSTOP could
	 * leave a running target stopped, so it gets a SIGCONT. */
	proc_finish(&m.pr, m.hung ? 0 : 2000000000LL);
	if (attached)
		proc_leave_target(st, detached);
	proc_free(&m.pr);
	free(m.console.s);
}
