/* gdb-read.c - read gdb backtrace dumps into the profile model
 *
 * The input is read line by line.  Lines that start with "# " and a known
 * key are collect-gdb's own (header, snapshot marks, end); "Thread N (...)"
 * starts a thread; "#N ..." is a frame, possibly wrapped onto indented
 * continuation lines; everything else gdb prints ("[New LWP ...]", source
 * lines, warnings) is skipped.  A thread's frames become one sample when
 * the next thread, snapshot or the end of input comes.  Frames that share
 * one program counter, and frames printed without one after a frame, are
 * the inlined calls of one location, innermost first.
 */
#include "gdb-read.h"
#include "error.h"
#include "util.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GDB_MAGIC "# profview-gdb"
#define GDB_DETECT_SPAN (64 * 1024)
#define GDB_MAX_FRAMES 4096
#define SYNTH_BIT (1ULL << 63)
/* The longest interval collect-gdb takes (10^6 s): a header that says more
 * is damaged.  A time is at most 9 * 10^18 ns (parse_time), so a time plus
 * an interval stays below INT64_MAX. */
#define GDB_MAX_INTERVAL_NS 1000000000000000LL
/* The most intervals a snapshot stands for (collect-gdb's CG_WEIGHT_CAP,
 * profview-gdb(5)). */
#define GDB_WEIGHT_CAP 2

struct gframe {
	uint64_t pc;
	bool has_pc;
	bool alone;            /* a signal frame: never part of an inline run */
	uint32_t function;
	int64_t line;
};

struct reader {
	const char *name;
	struct pv_profile *p;
	size_t lineno;
	bool prescan;          /* reading the header ahead: no warnings */

	/* From the header. */
	bool traced;           /* a collect-gdb header was seen */
	int64_t interval_ns, start_ns, end_ns;
	uint32_t v_count, v_wall;

	/* The current snapshot. */
	uint64_t snap_gen;     /* bumped at every snapshot */
	int64_t snap_time, prev_time, snap_weight;
	int64_t first_snap;    /* the first snapshot's time, -1 none */
	int64_t wall_left;     /* wall time the samples may still add up to */
	bool explicit_snap;    /* opened by a "# snapshot:" line */
	uint64_t nsnapshots;

	/* tids seen in the current snapshot: open addressing, gen-stamped */
	struct seen { uint32_t tid; uint64_t gen; } *seen;
	size_t nseen_slots, nseen;

	/* The current thread. */
	bool in_thread;
	uint32_t thread;       /* thread index */
	uint32_t tid;
	struct gframe *frames; size_t nframes, cap_frames;
	bool truncated;
	bool deep;             /* frames past GDB_MAX_FRAMES were left out */
	uint64_t last_frame_no; /* UINT64_MAX before the first frame */

	/* A frame line that may continue on the next lines. */
	char *pending; size_t npending, cap_pending;
	bool have_pending;

	uint32_t *locs; size_t cap_locs;
	struct pv_line *lines; size_t cap_lines;
	uint32_t blocked_loc;
	bool cut;              /* the input ends in the middle of a line */
	uint64_t blocked;
};

/* ---- small text helpers ---- */

static bool starts(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);
	return len >= n && memcmp(s, prefix, n) == 0;
}

static const char *find(const char *s, size_t len, const char *needle)
{
	return memmem(s, len, needle, strlen(needle));
}

static const char *rfind(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = len >= n ? len - n + 1 : 0; i-- > 0;)
		if (memcmp(s + i, needle, n) == 0)
			return s + i;
	return NULL;
}

static void trim(const char **s, size_t *len)
{
	while (*len && isspace((unsigned char)**s))
		(*s)++, (*len)--;
	while (*len && isspace((unsigned char)(*s)[*len - 1]))
		(*len)--;
}

/* Parse an unsigned decimal, all its digits; false if none.  A number
 * too large for 64 bits gives UINT64_MAX. */
static bool parse_u64(const char *s, size_t len, const char **end, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	while (i < len && isdigit((unsigned char)s[i])) {
		unsigned d = (unsigned)(s[i++] - '0');
		v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
	}
	if (i == 0)
		return false;
	*end = s + i;
	*out = v;
	return true;
}

/* "SEC.NSEC" into nanoseconds; false when malformed. */
static bool parse_time(const char *s, size_t len, int64_t *out)
{
	const char *e;
	uint64_t sec, ns = 0;
	size_t digits = 0;

	if (!parse_u64(s, len, &e, &sec) || sec > 9000000000ULL)
		return false;
	if (e < s + len && *e == '.') {
		for (e++; e < s + len && isdigit((unsigned char)*e); e++) {
			if (digits < 9) {
				ns = ns * 10 + (uint64_t)(*e - '0');
				digits++;
			}
		}
		while (digits < 9)
			ns *= 10, digits++;
	}
	*out = (int64_t)(sec * 1000000000ULL + ns);
	return true;
}

/* ---- blocking calls ---- */

bool gdb_is_blocking_function(const char *name, size_t len)
{
	static const char *const waits[] = {
		"futex_wait", "futex_abstimed_wait", "futex_abstimed_wait_common",
		"futex_abstimed_wait_cancelable", "lll_lock_wait", "lll_lock_wait_private",
		"new_sem_wait_slow", "do_futex_wait", "pthread_cond_wait", "pthread_cond_timedwait",
		"pthread_cond_clockwait", "pthread_join", "pthread_clockjoin_ex",
		"pthread_timedjoin_np", "pthread_rwlock_rdlock", "pthread_rwlock_wrlock",
		"epoll_wait", "epoll_pwait", "epoll_pwait2", "poll", "ppoll", "select", "pselect",
		"pselect6", "nanosleep", "clock_nanosleep", "sleep", "usleep", "pause",
		"sigsuspend", "sigwait", "sigwaitinfo", "sigtimedwait", "read", "readv", "pread",
		"recv", "recvfrom", "recvmsg", "recvmmsg", "accept", "accept4", "connect",
		"wait", "wait4", "waitpid", "waitid", "msgrcv", "semop", "semtimedop", "flock",
		"io_getevents", "io_uring_enter", "mq_receive", "mq_timedreceive", "syscall",
		"sem_wait", "sem_timedwait", "sem_clockwait", "lockf",
	};
	char buf[64];

	/* __GI___libc_read -> read; __poll_nocancel -> poll; ppoll64 -> ppoll */
	for (;;) {
		if (len && name[0] == '_')
			name++, len--;
		else if (starts(name, len, "GI_"))
			name += 3, len -= 3;
		else if (starts(name, len, "libc_"))
			name += 5, len -= 5;
		else
			break;
	}
	if (len >= sizeof buf)
		return false;
	memcpy(buf, name, len);
	buf[len] = '\0';
	if (len > 9 && strcmp(buf + len - 9, "_nocancel") == 0)
		buf[len -= 9] = '\0';
	if (len > 7 && strcmp(buf + len - 7, "_time64") == 0)
		buf[len -= 7] = '\0';
	if (len > 2 && strcmp(buf + len - 2, "64") == 0)
		buf[len -= 2] = '\0';
	for (size_t i = 0; i < sizeof waits / sizeof waits[0]; i++)
		if (strcmp(buf, waits[i]) == 0)
			return true;
	return false;
}

/* ---- the snapshot's set of threads ---- */

/* Note tid in the current snapshot; true if it was already there. */
static int seen_add(struct reader *rd, uint32_t tid, bool *dup)
{
	size_t mask;

	if ((rd->nseen + 1) * 2 > rd->nseen_slots) {
		size_t n = rd->nseen_slots ? rd->nseen_slots * 2 : 64;
		struct seen *s = calloc(n, sizeof *s), *old = rd->seen;
		if (!s)
			return pv_oom();
		rd->seen = s;
		rd->nseen_slots = n;
		rd->nseen = 0;
		for (size_t i = 0; old && i < n / 2; i++) {
			if (old[i].gen == rd->snap_gen) {
				bool d;
				seen_add(rd, old[i].tid, &d);
			}
		}
		free(old);
	}
	mask = rd->nseen_slots - 1;
	for (size_t i = pv_mix64(tid) & mask;; i = (i + 1) & mask) {
		if (rd->seen[i].gen != rd->snap_gen) {
			rd->seen[i].gen = rd->snap_gen;
			rd->seen[i].tid = tid;
			rd->nseen++;
			*dup = false;
			return 0;
		}
		if (rd->seen[i].tid == tid) {
			*dup = true;
			return 0;
		}
	}
}

static void new_snapshot(struct reader *rd, int64_t time_ns, bool marked)
{
	rd->snap_gen++;
	rd->nseen = 0;
	rd->nsnapshots++;
	rd->explicit_snap = marked;
	/* without "# weight-ns:" lines: the time since the previous one, at
	 * most GDB_WEIGHT_CAP intervals (the interval for the first) */
	rd->snap_weight = rd->interval_ns;
	if (time_ns >= 0) {
		if (rd->prev_time >= 0 && time_ns > rd->prev_time)
			rd->snap_weight = time_ns - rd->prev_time;
		rd->prev_time = time_ns;
	}
	if (rd->interval_ns > 0 && rd->snap_weight / GDB_WEIGHT_CAP > rd->interval_ns)
		rd->snap_weight = rd->interval_ns * GDB_WEIGHT_CAP;
	rd->snap_time = time_ns;
	if (rd->first_snap < 0 && time_ns >= 0)
		rd->first_snap = time_ns;
}

/* ---- mappings ---- */

/* "# map: START-END OFFSET PATH" (hexadecimal; the path as
 * /proc/PID/maps gives it, empty for anonymous memory): a mapping of the
 * profile, in the order given, so that a later one over the same
 * addresses is the newer (pv_find_mapping). */
static int map_line(struct reader *rd, const char *v, size_t vlen)
{
	struct pv_profile *p = rd->p;
	char buf[64];
	const char *e = v + vlen, *sp;
	unsigned long long start, end, off;
	int at = 0;

	sp = memchr(v, ' ', vlen);
	sp = sp ? memchr(sp + 1, ' ', (size_t)(e - sp - 1)) : NULL;
	if (!sp)
		sp = e;
	if ((size_t)(sp - v) >= sizeof buf)
		return 0;
	memcpy(buf, v, (size_t)(sp - v));
	buf[sp - v] = '\0';
	if (sscanf(buf, "%llx-%llx %llx%n", &start, &end, &off, &at) != 3 || (size_t)at != strlen(buf) ||
	    end <= start) {
		if (!rd->prescan)
			pv_warn("'%s': line %zu: a map line that is not 'START-END OFFSET PATH'; ignored",
				rd->name, rd->lineno);
		return 0;
	}
	const char *path = sp < e ? sp + 1 : e;
	struct pv_mapping m = { .start = start, .limit = end, .offset = off };
	m.file = pv_intern(p, path, (size_t)(e - path));
	if (m.file == PV_NONE)
		return -1;
	m.kind = pv_mapping_kind_of(pv_str(p, m.file));
	/* The newest mapping again is not new. */
	uint32_t last = pv_find_mapping(p, start);
	if (last != PV_NONE) {
		const struct pv_mapping *o = &p->mappings[last];
		if (o->start == m.start && o->limit == m.limit && o->offset == m.offset && o->file == m.file)
			return 0;
	}
	return pv_add_mapping(p, &m) == PV_NONE ? -1 : 0;
}

/* ---- frames and samples ---- */

/* The name profview's symbolizer gives (from the debug information) the
 * function gdb calls name: gdb prints glibc's hidden aliases, "__GI_" and
 * the name aliased ("__GI_fdatasync").  Moves *name past that prefix;
 * returns the length left. */
static size_t public_name(const char **name, size_t len)
{
	if (len > 5 && memcmp(*name, "__GI_", 5) == 0 &&
	    (isalpha((unsigned char)(*name)[5]) || (*name)[5] == '_')) {
		*name += 5;
		return len - 5;
	}
	return len;
}

/* Is this the name of a frame whose function is not known: gdb's "??",
 * or an older collect-gdb's rendering of eu-stack's "- MODULE"? */
static bool unknown_name(const char *name)
{
	return strcmp(name, "??") == 0 || (name[0] == '-' && (name[1] == '\0' || name[1] == ' '));
}

/* The location of an address without a function name: module+offset when
 * a mapping holds it, the symbolizer's work (it may find a symbol the
 * dumper did not); else the address itself, in the library the dumper
 * named (its source file).  caller: the address is a return address. */
static uint32_t unknown_location(struct reader *rd, const struct gframe *f, bool caller)
{
	struct pv_profile *p = rd->p;
	uint64_t a = f->pc - (caller && f->pc > 0 ? 1 : 0);
	uint32_t mi = pv_find_mapping(p, a), loc, fn, nm;
	char buf[32];

	loc = pv_get_location(p, a, mi);
	if (loc == PV_NONE || mi != PV_NONE || p->locations[loc].nlines)
		return loc;
	snprintf(buf, sizeof buf, "0x%" PRIx64, a);
	nm = pv_intern_str(p, buf);
	if (nm == PV_NONE)
		return PV_NONE;
	fn = pv_get_function(p, nm, nm, p->functions[f->function].filename, 0);
	if (fn == PV_NONE)
		return PV_NONE;
	struct pv_line line = { fn, 0 };
	return pv_set_lines(p, loc, &line, 1) < 0 ? PV_NONE : loc;
}

/* The location of frames [from, to) (one physical frame and its inlined
 * calls): the program counter gdb printed, or a hash of the frames when it
 * printed none or when that address already stands for other frames. */
static uint32_t run_location(struct reader *rd, size_t from, size_t to, bool caller)
{
	struct pv_profile *p = rd->p;
	uint32_t n = (uint32_t)(to - from), loc;
	uint64_t pc = 0, h = 0x9e3779b97f4a7c15ULL;
	bool has_pc = false;

	/* (address 0 is where a broken stack ends, not code: "??" stays) */
	if (n == 1 && rd->frames[from].has_pc && rd->frames[from].pc != 0 &&
	    !(rd->frames[from].pc & SYNTH_BIT) &&
	    unknown_name(pv_str(p, p->functions[rd->frames[from].function].name)))
		return unknown_location(rd, &rd->frames[from], caller);

	if (pv_grow(&rd->lines, &rd->cap_lines, n, sizeof *rd->lines) < 0)
		return PV_NONE;
	for (size_t i = from; i < to; i++) {
		const struct gframe *f = &rd->frames[i];
		rd->lines[i - from] = (struct pv_line){ f->function, f->line };
		if (f->has_pc && !has_pc) {
			pc = f->pc;
			has_pc = true;
		}
		h = pv_mix64(h ^ f->function) + (uint64_t)f->line;
	}
	if (has_pc && !(pc & SYNTH_BIT)) {
		/* A caller's address is where the call returns to: its
		 * location is inside the call, as collect-timer's are. */
		if (caller && pc > 0)
			pc--;
		loc = pv_get_location(p, pc, pv_find_mapping(p, pc));
		if (loc == PV_NONE)
			return PV_NONE;
		if (p->locations[loc].nlines == 0)
			return pv_set_lines(p, loc, rd->lines, n) < 0 ? PV_NONE : loc;
		if (pv_location_has_lines(p, loc, rd->lines, n))
			return loc;
		h = pv_mix64(h ^ pc);
	}
	loc = pv_get_location(p, SYNTH_BIT | (h >> 1), PV_NONE);
	if (loc == PV_NONE)
		return PV_NONE;
	if (p->locations[loc].nlines == 0 && pv_set_lines(p, loc, rd->lines, n) < 0)
		return PV_NONE;
	return loc;
}

static uint32_t blocked_location(struct reader *rd)
{
	struct pv_profile *p = rd->p;
	uint32_t name, fn, loc;
	struct pv_line line;

	if (rd->blocked_loc != PV_NONE)
		return rd->blocked_loc;
	name = pv_intern_str(p, GDB_BLOCKED_FRAME);
	if (name == PV_NONE)
		return PV_NONE;
	fn = pv_get_function(p, name, name, 0, 0);
	if (fn == PV_NONE)
		return PV_NONE;
	loc = pv_get_location(p, SYNTH_BIT | 0xb10c4ed, PV_NONE);
	line = (struct pv_line){ fn, 0 };
	if (loc == PV_NONE || pv_set_lines(p, loc, &line, 1) < 0)
		return PV_NONE;
	rd->blocked_loc = loc;
	return loc;
}

/* Turn the current thread's frames into a sample. */
static int end_thread(struct reader *rd)
{
	struct pv_profile *p = rd->p;
	struct pv_sample s = { .thread = rd->thread };
	uint32_t n = 0;
	size_t from = 0;

	if (!rd->in_thread)
		return 0;
	rd->in_thread = false;
	if (rd->nframes == 0)
		return 0;
	if (pv_grow(&rd->locs, &rd->cap_locs, rd->nframes + 1, sizeof *rd->locs) < 0)
		return -1;
	if (gdb_is_blocking_function(pv_str(p, p->functions[rd->frames[0].function].name),
				     strlen(pv_str(p, p->functions[rd->frames[0].function].name)))) {
		uint32_t b = blocked_location(rd);
		if (b == PV_NONE)
			return -1;
		rd->locs[n++] = b;
		rd->blocked++;
		s.flags |= PV_SAMPLE_OFFCPU;
	}
	while (from < rd->nframes) {
		size_t to = from + 1;
		uint64_t pc = rd->frames[from].pc;
		bool has_pc = rd->frames[from].has_pc;
		/* Outer frames with no address, or with this run's address, are
		 * the function(s) the inner frames were inlined into. */
		while (to < rd->nframes && !rd->frames[from].alone && !rd->frames[to].alone &&
		       (!rd->frames[to].has_pc || (has_pc && rd->frames[to].pc == pc)))
			to++;
		/* Every frame but the innermost, or one a signal
		 * interrupted, is a call. */
		bool caller = from > 0 && !rd->frames[from - 1].alone;
		uint32_t loc = run_location(rd, from, to, caller);
		if (loc == PV_NONE)
			return -1;
		rd->locs[n++] = loc;
		from = to;
	}
	if (pv_add_stack_capped(p, &s, rd->locs, n, rd->deep) < 0)
		return -1;
	if (rd->truncated)
		s.flags |= PV_SAMPLE_TRUNCATED; /* counted by pv_add_sample */
	s.values[rd->v_count] = 1;
	/* when: from the first snapshot's time, else by the interval */
	int64_t t0 = rd->start_ns >= 0 ? rd->start_ns : rd->first_snap;
	if (rd->snap_time >= 0 && t0 >= 0)
		s.time_ns = rd->snap_time > t0 ? rd->snap_time - t0 : 0;
	else if (rd->interval_ns > 0 && rd->nsnapshots > 0 &&
		 rd->nsnapshots - 1 <= (uint64_t)(INT64_MAX / rd->interval_ns))
		s.time_ns = (int64_t)(rd->nsnapshots - 1) * rd->interval_ns;
	if (rd->v_wall != PV_NONE) {
		/* Every thread of a snapshot gets its weight: the sum over all
		 * samples could pass INT64_MAX in a damaged trace, so it stops
		 * growing there. */
		int64_t w = rd->snap_weight > 0 ? rd->snap_weight : 0;
		if (w > rd->wall_left)
			w = rd->wall_left;
		rd->wall_left -= w;
		s.values[rd->v_wall] = w;
	}
	rd->nframes = 0;
	return pv_add_sample(p, &s);
}

static int begin_thread(struct reader *rd, uint32_t tid, uint32_t name)
{
	bool dup;

	if (end_thread(rd) < 0)
		return -1;
	if (rd->nsnapshots == 0)
		new_snapshot(rd, -1, false);
	if (seen_add(rd, tid, &dup) < 0)
		return -1;
	if (dup) {
		/* The same thread again: a dump of a later moment. */
		new_snapshot(rd, -1, false);
		if (seen_add(rd, tid, &dup) < 0)
			return -1;
	}
	rd->thread = pv_get_thread(rd->p, tid, name);
	if (rd->thread == PV_NONE)
		return -1;
	rd->tid = tid;
	rd->in_thread = true;
	rd->truncated = rd->deep = false;
	rd->nframes = 0;
	rd->last_frame_no = UINT64_MAX;
	return 0;
}

/* "Thread 2 (Thread 0x7f.. (LWP 123) "name"):", "Thread 1 (LWP 5 "n"):",
 * "Thread 1 (process 42):", "Thread 3 (Thread 42.43 "n"):", "Thread 1.2 ..." */
static int thread_header(struct reader *rd, const char *s, size_t len)
{
	const char *e = s + len, *q, *paren, *num_end;
	uint64_t gdbno = 0, tid = 0;
	uint32_t name = PV_NONE;

	s += 7;
	if (!parse_u64(s, (size_t)(e - s), &num_end, &gdbno))
		return 0;
	while (num_end < e && (isdigit((unsigned char)*num_end) || *num_end == '.'))
		num_end++;
	if (num_end >= e || *num_end != ' ')
		return 0;
	paren = memchr(num_end, '(', (size_t)(e - num_end));
	if (!paren)
		return 0;
	if ((q = find(paren, (size_t)(e - paren), "LWP ")) != NULL ||
	    (q = find(paren, (size_t)(e - paren), "process ")) != NULL) {
		q = (const char *)memchr(q, ' ', (size_t)(e - q)) + 1;
		if (!parse_u64(q, (size_t)(e - q), &q, &tid))
			tid = 0;
	} else if ((q = find(paren, (size_t)(e - paren), "Thread ")) != NULL) {
		/* gdbserver style "Thread PID.TID" */
		const char *d;
		uint64_t pid;
		q += 7;
		if (parse_u64(q, (size_t)(e - q), &d, &pid) && d < e && *d == '.')
			parse_u64(d + 1, (size_t)(e - d - 1), &d, &tid);
	}
	if (tid == 0 || tid > UINT32_MAX)
		tid = gdbno <= UINT32_MAX ? gdbno : 0;
	q = memchr(paren, '"', (size_t)(e - paren));
	if (q) {
		const char *last = rfind(q + 1, (size_t)(e - q - 1), "\"");
		if (last) {
			name = pv_intern(rd->p, q + 1, (size_t)(last - q - 1));
			if (name == PV_NONE)
				return -1;
		}
	}
	return begin_thread(rd, (uint32_t)tid, name);
}

/* Where the function's name ends: at the " (" that opens its arguments,
 * outside template brackets and parentheses. */
static const char *name_end(const char *s, const char *e)
{
	int angle = 0, round = 0;

	for (const char *c = s; c < e; c++) {
		if (e - c >= 8 && memcmp(c, "operator", 8) == 0) {
			c += 8;
			while (c < e && strchr("<>=-()*[]", *c) && !(*c == '(' && c[-1] == ' '))
				c++;
			c--;
			continue;
		}
		switch (*c) {
		case '<': angle++; break;
		case '>': if (angle) angle--; break;
		case '(':
			if (angle == 0 && round == 0 && c > s && c[-1] == ' ')
				return c - 1;
			round++;
			break;
		case ')': if (round) round--; break;
		}
	}
	return NULL;
}

/* Parse one frame line (continuations joined). */
static int frame_line(struct reader *rd, const char *s, size_t len, bool cut)
{
	struct pv_profile *p = rd->p;
	const char *e = s + len, *name, *nend, *q;
	const char *file = NULL, *file_end = NULL;
	uint64_t no, pc = 0, line = 0;
	bool has_pc = false, alone = false;
	struct gframe *f;
	uint32_t nm, sys, fl;

	if (!parse_u64(s + 1, len - 1, &q, &no))
		return 0;
	if (!rd->in_thread || (no == 0 && rd->nframes > 0)) {
		/* A plain "bt" without a thread header, or a second one. */
		uint32_t tid = rd->in_thread ? rd->tid : rd->p->pid;
		if (begin_thread(rd, tid, PV_NONE) < 0)
			return -1;
	}
	if (no != rd->last_frame_no + 1) /* UINT64_MAX + 1 == 0: the first frame */
		rd->truncated = rd->truncated || no > 0;
	rd->last_frame_no = no;
	if (cut)
		rd->truncated = true;
	while (q < e && *q == ' ')
		q++;
	if (e - q > 2 && q[0] == '0' && q[1] == 'x') {
		char *end;
		pc = strtoull(q, &end, 16);
		if (end > e)
			end = (char *)e;
		q = end;
		has_pc = true;
		if (starts(q, (size_t)(e - q), " in "))
			q += 4;
		else
			while (q < e && *q == ' ')
				q++;
	}
	name = q;
	if (starts(q, (size_t)(e - q), "<signal handler called>") ||
	    starts(q, (size_t)(e - q), "<function called from gdb>")) {
		nend = (const char *)memchr(q, '>', (size_t)(e - q)) + 1;
		alone = true;
	} else {
		/* " at FILE:LINE" or " from LIB" at the end of the line */
		const char *colon = NULL;
		for (const char *c = e; c > q; c--) {
			if (c[-1] == ':') {
				colon = c - 1;
				break;
			}
			if (!isdigit((unsigned char)c[-1]))
				break;
		}
		if (colon && colon + 1 < e && (q = rfind(name, (size_t)(colon - name), " at ")) != NULL) {
			file = q + 4;
			file_end = colon;
			parse_u64(colon + 1, (size_t)(e - colon - 1), &q, &line);
			e = file - 4;
		} else if ((q = rfind(name, (size_t)(e - name), " from ")) != NULL &&
			   !memchr(q, '(', (size_t)(e - q))) {
			file = q + 6;
			file_end = e;
			e = q;
		}
		nend = name_end(name, e);
		if (!nend) {
			/* No argument list: a line cut off inside the name is
			 * dropped; otherwise the text is the name. */
			if (cut || e == name)
				return 0;
			nend = e;
		}
	}
	if (rd->nframes >= GDB_MAX_FRAMES) {
		rd->truncated = rd->deep = true;
		return 0;
	}
	{
		size_t nl = (size_t)(nend - name), pl;
		trim(&name, &nl);
		if (nl == 0)
			return 0;
		sys = pv_intern(p, name, nl);
		pl = public_name(&name, nl);
		nm = pl == nl ? sys : pv_intern(p, name, pl);
	}
	fl = file ? pv_intern(p, file, (size_t)(file_end - file)) : 0;
	if (nm == PV_NONE || sys == PV_NONE || fl == PV_NONE)
		return -1;
	if (pv_grow(&rd->frames, &rd->cap_frames, rd->nframes + 1, sizeof *rd->frames) < 0)
		return -1;
	f = &rd->frames[rd->nframes++];
	f->function = pv_get_function(p, nm, sys, fl, 0);
	if (f->function == PV_NONE)
		return -1;
	f->pc = pc;
	f->has_pc = has_pc;
	f->alone = alone;
	f->line = line > INT32_MAX ? 0 : (int64_t)line;
	return 0;
}

static int flush_pending(struct reader *rd, bool cut)
{
	if (!rd->have_pending)
		return 0;
	rd->have_pending = false;
	return frame_line(rd, rd->pending, rd->npending, cut);
}

static int set_pending(struct reader *rd, const char *s, size_t len, bool append)
{
	size_t need = (append ? rd->npending + 1 : 0) + len + 1;

	if (pv_grow(&rd->pending, &rd->cap_pending, need, 1) < 0)
		return -1;
	if (!append)
		rd->npending = 0;
	else
		rd->pending[rd->npending++] = ' ';
	memcpy(rd->pending + rd->npending, s, len);
	rd->npending += len;
	rd->pending[rd->npending] = '\0';
	rd->have_pending = true;
	return 0;
}

/* Does the pending frame line still miss its end (open parentheses), or is
 * this indented text its " at FILE:LINE" / " from LIB" part? */
static bool continues(const struct reader *rd, const char *s, size_t len)
{
	int depth = 0;

	if (starts(s, len, "at ") || starts(s, len, "from "))
		return true;
	for (size_t i = 0; i < rd->npending; i++)
		depth += rd->pending[i] == '(' ? 1 : rd->pending[i] == ')' ? -1 : 0;
	return depth > 0;
}

/* "# key: value" lines of collect-gdb; false if the line is not one. */
static int meta_line(struct reader *rd, const char *s, size_t len, bool *handled)
{
	struct pv_profile *p = rd->p;
	const char *colon = memchr(s, ':', len), *v, *q;
	size_t vlen;
	uint64_t u;
	int64_t t;

	*handled = false;
	if (starts(s, len, GDB_MAGIC)) {
		*handled = true;
		rd->traced = true;
		return 0;
	}
	if (!rd->traced || !colon)
		return 0;
	v = colon + 1;
	vlen = (size_t)(s + len - v);
	trim(&v, &vlen);
#define KEY(k) ((size_t)(colon - s) == strlen("# " k) && memcmp(s, "# " k, strlen("# " k)) == 0)
	if (KEY("pid")) {
		if (parse_u64(v, vlen, &q, &u) && u <= UINT32_MAX)
			p->pid = (uint32_t)u;
	} else if (KEY("program")) {
		if ((p->program = pv_intern(p, v, vlen)) == PV_NONE)
			return -1;
	} else if (KEY("interval-ns")) {
		if (parse_u64(v, vlen, &q, &u) && u <= GDB_MAX_INTERVAL_NS)
			rd->interval_ns = (int64_t)u;
		else if (!rd->prescan)
			pv_warn("'%s': line %zu: interval-ns '%.*s' is not a number of nanoseconds from 0 to 10^15 (10^6 s); ignored",
				rd->name, rd->lineno, (int)(vlen > 40 ? 40 : vlen), v);
	} else if (KEY("start")) {
		if (parse_time(v, vlen, &t))
			rd->start_ns = t;
	} else if (KEY("snapshot")) {
		/* "# snapshot: SEQ TIME" */
		const char *sp = memchr(v, ' ', vlen);
		t = -1;
		if (sp && !parse_time(sp + 1, (size_t)(v + vlen - sp - 1), &t))
			t = -1;
		if (flush_pending(rd, false) < 0 || end_thread(rd) < 0)
			return -1;
		new_snapshot(rd, t, true);
	} else if (KEY("end")) {
		if (parse_time(v, vlen, &t))
			rd->end_ns = t;
		if (flush_pending(rd, false) < 0 || end_thread(rd) < 0)
			return -1;
		p->finished = true;
	} else if (KEY("weight-ns")) {
		/* the snapshot's weight, as collect-gdb measured it */
		if (rd->explicit_snap && parse_u64(v, vlen, &q, &u) && u <= GDB_MAX_INTERVAL_NS * GDB_WEIGHT_CAP)
			rd->snap_weight = (int64_t)u;
	} else if (KEY("map")) {
		/* read in the main pass, in order among the snapshots */
		if (!rd->prescan && map_line(rd, v, vlen) < 0)
			return -1;
	} else if (KEY("gdb") || KEY("mode") || KEY("dumper") || KEY("note")) {
		/* informative */
	} else {
		return 0;
	}
#undef KEY
	*handled = true;
	return 0;
}

static int read_line(struct reader *rd, const char *s, size_t len)
{
	bool handled;

	if (len && s[len - 1] == '\r')
		len--;
	if (len >= 2 && s[0] == '#' && s[1] == ' ') {
		if (meta_line(rd, s, len, &handled) < 0)
			return -1;
		if (handled)
			return 0;
	}
	if (len && (s[0] == ' ' || s[0] == '\t')) {
		const char *t = s;
		size_t tl = len;
		trim(&t, &tl);
		if (rd->have_pending && tl && continues(rd, t, tl))
			return set_pending(rd, t, tl, true);
		return 0; /* "bt full" locals and the like */
	}
	if (flush_pending(rd, false) < 0)
		return -1;
	if (len >= 2 && s[0] == '#' && isdigit((unsigned char)s[1]))
		return set_pending(rd, s, len, false);
	if (starts(s, len, "Thread ") && len > 7 && isdigit((unsigned char)s[7]))
		return thread_header(rd, s, len);
	if (starts(s, len, "Backtrace stopped") || starts(s, len, "(More stack frames follow")) {
		if (rd->in_thread)
			rd->truncated = true;
		return 0;
	}
	if (!rd->traced && rd->p->pid == 0 && starts(s, len, "[Inferior ")) {
		const char *q = find(s, len, "(process ");
		uint64_t pid;
		if (q && parse_u64(q + 9, (size_t)(s + len - q - 9), &q, &pid) && pid <= UINT32_MAX)
			rd->p->pid = (uint32_t)pid;
	}
	return 0;
}

/* Is this line a gdb frame line: "#N  [0xADDR in ]NAME (" or a signal frame? */
static bool frame_like(const char *s, size_t len)
{
	const char *e = s + len, *q;
	uint64_t no;

	if (len < 4 || s[0] != '#' || !parse_u64(s + 1, len - 1, &q, &no) || q >= e || *q != ' ')
		return false;
	while (q < e && *q == ' ')
		q++;
	if (starts(q, (size_t)(e - q), "0x")) {
		q += 2;
		while (q < e && isxdigit((unsigned char)*q))
			q++;
		if (!starts(q, (size_t)(e - q), " in "))
			return false;
		q += 4;
	}
	if (starts(q, (size_t)(e - q), "<signal handler called>"))
		return true;
	if (q >= e || !(isalpha((unsigned char)*q) || *q == '_' || *q == '?' || *q == '('))
		return false;
	return name_end(q, e) != NULL || memmem(q, (size_t)(e - q), " (", 2) != NULL;
}

bool gdb_detect(const unsigned char *buf, size_t len)
{
	const char *s = (const char *)buf;
	size_t span = len < GDB_DETECT_SPAN ? len : GDB_DETECT_SPAN;

	if (starts(s, len, GDB_MAGIC))
		return true;
	if (memchr(s, '\0', span))
		return false;
	for (size_t off = 0; off < span;) {
		const char *nl = memchr(s + off, '\n', span - off);
		size_t l = (nl ? (size_t)(nl - s) : span) - off;
		if (l && s[off + l - 1] == '\r')
			l--;
		if (frame_like(s + off, l))
			return true;
		if (!nl)
			break;
		off = (size_t)(nl - s) + 1;
	}
	return false;
}

struct pv_profile *gdb_read(const unsigned char *buf, size_t len, const char *name)
{
	struct reader rd = {
		.name = name, .interval_ns = 0, .start_ns = -1, .end_ns = -1, .prev_time = -1,
		.snap_time = -1, .first_snap = -1, .v_wall = PV_NONE, .blocked_loc = PV_NONE, .wall_left = INT64_MAX,
	};
	const char *s = (const char *)buf;
	struct pv_profile *p = pv_profile_new();

	if (!p)
		return NULL;
	rd.p = p;
	p->source_format = pv_intern_str(p, "gdb backtraces");
	p->program = 0;
	rd.v_count = pv_add_value_type(p, "samples", "count");
	if (rd.v_count == PV_NONE || p->source_format == PV_NONE)
		goto fail;

	/* The header comes first: it says whether samples carry wall time. */
	if (starts(s, len, GDB_MAGIC)) {
		rd.prescan = true;
		for (size_t off = 0; off < len;) {
			const char *nl = memchr(s + off, '\n', len - off);
			size_t l = (nl ? (size_t)(nl - s) : len) - off;
			bool handled;
			if (!starts(s + off, l, "# ") || starts(s + off, l, "# snapshot:"))
				break;
			if (meta_line(&rd, s + off, l, &handled) < 0)
				goto fail;
			if (!nl)
				break;
			off = (size_t)(nl - s) + 1;
		}
		p->finished = false;
		rd.prescan = false;
	}
	if (rd.interval_ns > 0) {
		rd.v_wall = pv_add_value_type(p, "wall", "nanoseconds");
		p->period_type.type = pv_intern_str(p, "wall");
		p->period_type.unit = pv_intern_str(p, "nanoseconds");
		p->period = rd.interval_ns;
		if (rd.v_wall == PV_NONE)
			goto fail;
	}

	for (size_t off = 0; off < len;) {
		const char *nl = memchr(s + off, '\n', len - off);
		size_t l = (nl ? (size_t)(nl - s) : len) - off;
		rd.lineno++;
		if (!nl)
			rd.cut = l > 0;
		if (read_line(&rd, s + off, l) < 0)
			goto fail;
		if (!nl)
			break;
		off = (size_t)(nl - s) + 1;
	}
	if (flush_pending(&rd, rd.cut) < 0 || end_thread(&rd) < 0)
		goto fail;

	if (p->nsamples == 0 && !rd.traced) {
		pv_error("'%s': no backtrace in the input (gdb frame lines like '#0  main () at app.c:12')",
			 name);
		goto fail;
	}
	/* A time plus the interval cannot overflow (GDB_MAX_INTERVAL_NS); the
	 * interval times many snapshots can. */
	/* timed: snapshots with times, or several at a known interval */
	p->timed = rd.start_ns >= 0 || rd.first_snap >= 0 || (rd.interval_ns > 0 && rd.nsnapshots > 1);
	if (rd.start_ns >= 0) {
		int64_t end = rd.end_ns >= 0 ? rd.end_ns
					     : rd.prev_time >= 0 ? rd.prev_time + rd.interval_ns : -1;
		p->time_ns = rd.start_ns;
		p->duration_ns = end > rd.start_ns ? end - rd.start_ns : 0;
	} else if (rd.interval_ns > 0) {
		if (rd.nsnapshots > (uint64_t)(INT64_MAX / rd.interval_ns))
			p->duration_ns = INT64_MAX;
		else
			p->duration_ns = (int64_t)rd.nsnapshots * rd.interval_ns;
	}
	if (!rd.traced)
		p->finished = !rd.cut;
	if (rd.cut)
		pv_warn("'%s': input is cut off in the middle of line %zu; its last stack is incomplete",
			name, rd.lineno);
	else if (rd.traced && !p->finished)
		pv_warn("'%s': trace was not finished (collect-gdb was stopped before writing its end); read %zu samples of %" PRIu64 " snapshots",
			name, p->nsamples, rd.nsnapshots);
	free(rd.seen);
	free(rd.frames);
	free(rd.pending);
	free(rd.locs);
	free(rd.lines);
	return p;
fail:
	free(rd.seen);
	free(rd.frames);
	free(rd.pending);
	free(rd.locs);
	free(rd.lines);
	pv_profile_free(p);
	return NULL;
}
