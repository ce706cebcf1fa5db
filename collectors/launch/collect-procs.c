/* collect-procs.c - every process of a run accounted for (see
 * collect-procs.h)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect-procs.h"
#include "collect.h"
#include "escape.h"
#include "raw-iter.h"
#include "raw.h"
#include "units.h"

#define COLLECT_OTHERS_NAMED 3 /* processes not profiled named in the summary */

/* The last end of pid in ends, or NULL. */
static const struct collect_end *collect_end_of(const struct collect_ends *ends, uint32_t pid)
{
	for (size_t i = ends->n; i-- > 0;)
		if (ends->v[i].pid == pid)
			return &ends->v[i];
	return NULL;
}

static void collect_end_set(uint32_t *end, uint32_t *code, const struct collect_end *e)
{
	int st = (int)e->status;

	if (WIFEXITED(st)) {
		*end = RAW_RUN_EXITED;
		*code = (uint32_t)WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		*end = RAW_RUN_KILLED;
		*code = (uint32_t)WTERMSIG(st);
	}
}

/* Is there a trace of pid in v[0..n) that started after v[k]? */
static int collect_later_image(const struct collect_trace *v, size_t n, size_t k)
{
	for (size_t j = 0; j < n; j++)
		if (j != k && v[j].pid == v[k].pid && v[j].start_mono > v[k].start_mono &&
		    v[j].scanned && !v[j].st.empty)
			return 1;
	return 0;
}

static int collect_other_push(struct collect_others *o, size_t *cap, const struct collect_other *x)
{
	if (o->n == *cap) {
		size_t c = *cap ? *cap * 2 : 8;
		struct collect_other *nv = realloc(o->v, c * sizeof(*nv));

		if (nv == NULL)
			return -1;
		o->v = nv;
		*cap = c;
	}
	o->v[o->n++] = *x;
	return 0;
}

/* Is pid that of a trace of v[0..n) or of a process already in o? */
static int collect_pid_known(const struct collect_trace *v, size_t n, const struct collect_others *o,
			     uint32_t pid)
{
	for (size_t k = 0; k < n; k++)
		if (v[k].pid == pid)
			return 1;
	for (size_t i = 0; i < o->n; i++)
		if (o->v[i].pid == pid)
			return 1;
	return 0;
}

/* x: the process that ran the program of exec record ex, ended as e says
 * (NULL: not known).  Returns x. */
static struct collect_other *collect_other_of(struct collect_other *x, const struct collect_exec *ex,
					      const struct collect_end *e)
{
	memset(x, 0, sizeof(*x));
	x->pid = ex->pid;
	x->why = ex->why != RAW_WHY_UNKNOWN ? ex->why : RAW_WHY_REFUSED;
	x->cpu_ns = RAW_UNKNOWN;
	snprintf(x->name, sizeof(x->name), "%s", ex->path);
	if (e != NULL) {
		collect_end_set(&x->end, &x->end_code, e);
		x->cpu_ns = e->cpu_ns;
	}
	return x;
}

int collect_account(struct collect_trace *v, size_t n, const struct collect_seen *seen,
		    struct collect_others *out)
{
	const struct collect_ends *ends = &seen->ends;
	size_t cap = 0;

	memset(out, 0, sizeof(*out));
	for (size_t k = 0; k < n; k++) {
		const struct collect_end *e = collect_end_of(ends, v[k].pid);
		struct collect_other x;

		if (!v[k].scanned || v[k].st.empty || v[k].st.foreign || collect_later_image(v, n, k))
			continue;
		if (e != NULL && (v[k].st.ended || !v[k].st.exec_seen))
			collect_end_set(&v[k].end, &v[k].end_code, e);
		/* an exec record after the image's last record: its program
		 * ran without the library */
		if (!v[k].st.exec_seen || v[k].st.ended)
			continue;
		v[k].execd = 1;
		if (collect_other_push(out, &cap, collect_other_of(&x, &v[k].st.exec, e)) != 0)
			goto oom;
	}
	/* the children made by vfork that ran a program without the library
	 * (the last exec of each: the one that did not fail) */
	for (size_t i = seen->nexecs; i-- > 0;) {
		struct collect_other x;

		if (collect_pid_known(v, n, out, seen->execs[i].pid))
			continue;
		collect_other_of(&x, &seen->execs[i], collect_end_of(ends, seen->execs[i].pid));
		if (collect_other_push(out, &cap, &x) != 0)
			goto oom;
	}
	/* reaped, and neither traced nor named by an exec record */
	for (size_t i = 0; i < ends->n; i++) {
		struct collect_other x;

		if (collect_pid_known(v, n, out, ends->v[i].pid))
			continue;
		memset(&x, 0, sizeof(x));
		x.pid = ends->v[i].pid;
		x.why = RAW_WHY_UNSEEN;
		x.cpu_ns = ends->v[i].cpu_ns;
		collect_end_set(&x.end, &x.end_code, &ends->v[i]);
		if (collect_other_push(out, &cap, &x) != 0)
			goto oom;
	}
	return 0;
oom:
	collect_others_free(out);
	return -1;
}

void collect_others_free(struct collect_others *o)
{
	free(o->v);
	o->v = NULL;
	o->n = 0;
}

size_t collect_others_apart(const struct collect_trace *v, size_t n, const struct collect_others *o)
{
	size_t extra = 0;

	for (size_t i = 0; i < o->n; i++) {
		size_t k = 0;

		while (k < n && v[k].pid != o->v[i].pid)
			k++;
		extra += k == n;
	}
	return extra;
}

int collect_run_needed(const struct collect_trace *v, const struct collect_others *o)
{
	return (o != NULL && o->n > 0) || (!v[0].st.ended && v[0].end != 0);
}

int64_t collect_others_write(int fd, uint64_t off, const struct collect_others *o)
{
	struct raw_run_others head;
	uint64_t at = off + sizeof(head);

	memcpy(head.magic, RAW_RUN_OTHERS_MAGIC, RAW_MAGIC_LEN);
	head.count = o->n;
	if (o->n > RAW_RUN_OTHERS_MAX)
		head.count = RAW_RUN_OTHERS_MAX;
	if (pwrite(fd, &head, sizeof(head), (off_t)off) != (ssize_t)sizeof(head))
		return -1;
	for (size_t i = 0; i < head.count; i++) {
		unsigned char buf[sizeof(struct raw_run_other) + sizeof(o->v[i].name) + 8];
		struct raw_run_other e = { 0 };
		uint32_t len = (uint32_t)strlen(o->v[i].name), size;

		e.pid = o->v[i].pid;
		e.why = o->v[i].why;
		e.end = o->v[i].end;
		e.end_code = o->v[i].end_code;
		e.cpu_ns = o->v[i].cpu_ns;
		e.name_len = len;
		size = raw_pad((uint32_t)sizeof(e) + len);
		memset(buf, 0, size);
		memcpy(buf, &e, sizeof(e));
		memcpy(buf + sizeof(e), o->v[i].name, len);
		if (pwrite(fd, buf, size, (off_t)at) != (ssize_t)size)
			return -1;
		at += size;
	}
	return (int64_t)(at - off);
}

void collect_others_say(char *buf, size_t cap, const struct collect_others *o)
{
	size_t k;

	buf[0] = '\0';
	if (o->n == 0)
		return;
	k = (size_t)snprintf(buf, cap, "%zu not profiled: ", o->n);
	for (size_t i = 0; i < o->n && i < COLLECT_OTHERS_NAMED && k < cap; i++) {
		char name[128], cpu[32] = "";

		if (o->v[i].name[0] != '\0')
			pv_escape(name, sizeof(name), o->v[i].name);
		else
			snprintf(name, sizeof(name), "pid %u", o->v[i].pid);
		if (o->v[i].cpu_ns != RAW_UNKNOWN) {
			pv_format_duration(cpu, sizeof(cpu) - 5, (int64_t)o->v[i].cpu_ns);
			strcat(cpu, " CPU");
		}
		k += (size_t)snprintf(buf + k, cap - k, "%s%s, %s%s%s", i ? "; " : "", name,
				      raw_why_say(o->v[i].why), cpu[0] ? ", " : "", cpu);
	}
	if (o->n > COLLECT_OTHERS_NAMED && k < cap)
		snprintf(buf + k, cap - k, "; %zu more", o->n - COLLECT_OTHERS_NAMED);
}

void collect_end_say(char *buf, size_t cap, const struct collect_trace *t)
{
	buf[0] = '\0';
	if (t->end == RAW_RUN_KILLED)
		snprintf(buf, cap, "; killed by signal %u (%s): its trace stops at its last complete "
			 "record", t->end_code, strsignal((int)t->end_code));
}

void collect_others_list(const struct collect_others *o)
{
	for (size_t i = 0; i < o->n; i++) {
		const struct collect_other *x = &o->v[i];
		char name[128] = "program not known", cpu[48] = "", end[64] = "";

		if (x->name[0] != '\0')
			pv_escape(name, sizeof(name), x->name);
		if (x->cpu_ns != RAW_UNKNOWN) {
			char d[32];

			snprintf(cpu, sizeof(cpu), ", %s of CPU",
				 pv_format_duration(d, sizeof(d), (int64_t)x->cpu_ns));
		}
		if (x->end == RAW_RUN_EXITED)
			snprintf(end, sizeof(end), ", exit status %u", x->end_code);
		else if (x->end == RAW_RUN_KILLED)
			snprintf(end, sizeof(end), ", killed by signal %u (%s)", x->end_code,
				 strsignal((int)x->end_code));
		collect_say("pid %u (%s): not profiled: %s%s%s\n", x->pid, name,
			raw_why_say(x->why), cpu, end);
	}
}
