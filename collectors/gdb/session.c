/* session.c - what every part of collect-gdb shares: when snapshots are
 * due, when sampling stops, and the small helpers (see session.h) */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "session.h"

const char *const cg_mode_names[] = { "persistent", "batch", "eu-stack", NULL };

volatile sig_atomic_t cg_stop_signal;

int64_t cg_now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int sb_add(struct strbuf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *q;
		while (cap < b->len + n + 1)
			cap *= 2;
		q = realloc(b->s, cap);
		if (!q)
			return -1;
		b->s = q;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

void cg_oom(void)
{
	cli_msg("out of memory");
	exit(CG_EXIT_FAIL);
}

/* The last non-empty line of s, for messages. */
void sb_last_line(const struct strbuf *b, char *out, size_t n)
{
	size_t end = b->len, start;

	out[0] = '\0';
	while (end && isspace((unsigned char)b->s[end - 1]))
		end--;
	start = end;
	while (start && b->s[start - 1] != '\n')
		start--;
	snprintf(out, n, "%.*s", (int)(end - start), b->s + start);
}

void cg_note_stop(struct cg_state *st, int64_t ns)
{
	if (st->nstops == st->cap_stops) {
		size_t cap = st->cap_stops ? st->cap_stops * 2 : 256;
		int64_t *q = realloc(st->stops, cap * sizeof *q);
		if (!q)
			cg_oom();
		st->stops = q;
		st->cap_stops = cap;
	}
	st->stops[st->nstops++] = ns;
	st->resumed_ns = cg_now_ns(CLOCK_MONOTONIC);
}

/* ---- scheduling ---- */

/* Should sampling stop now?  Sets st->end. */
bool cg_should_stop(struct cg_state *st)
{
	if (st->out_errno) {
		st->end = END_ERROR;
		return true;
	}
	if (cg_stop_signal) {
		st->end = END_SIGNAL;
		return true;
	}
	if (st->o.count && st->snapshots >= st->o.count) {
		st->end = END_COUNT;
		return true;
	}
	if (st->o.duration_ns && cg_now_ns(CLOCK_MONOTONIC) - st->t_begin >= st->o.duration_ns) {
		st->end = END_DURATION;
		return true;
	}
	return false;
}

/* Sleep until t (monotonic), or less if the duration ends or a signal
 * comes. */
void cg_sleep_until(struct cg_state *st, int64_t t)
{
	if (st->o.duration_ns && t > st->t_begin + st->o.duration_ns)
		t = st->t_begin + st->o.duration_ns;
	while (!cg_stop_signal) {
		int64_t left = t - cg_now_ns(CLOCK_MONOTONIC);
		struct timespec ts;
		if (left <= 0)
			return;
		ts.tv_sec = left / 1000000000LL;
		ts.tv_nsec = left % 1000000000LL;
		nanosleep(&ts, NULL);
	}
}

/* Next snapshot time: on the interval grid, skipping missed slots. */
int64_t cg_next_slot(struct cg_state *st, int64_t prev)
{
	int64_t next = prev + st->o.interval_ns, t = cg_now_ns(CLOCK_MONOTONIC);

	if (next < t)
		next = t;
	return next;
}
