/* rawdump.c - the records of a raw trace, one line each, for tests that
 * check what the collector wrote rather than what a report makes of it
 *
 * usage: rawdump TRACE
 *        rawdump --pylines < TABLES
 *
 * With --pylines: reads lines "VERSION FIRST_LINE TABLE LINE..." (VERSION
 * major << 8 | minor in hex, TABLE a code object's line table in hex, "-"
 * when empty, then the line of each code unit as the interpreter gives
 * it) and checks that the collector's lookup (pylines_find) gives each
 * unit that line; prints "compared CODES UNITS", exit status 1 on a
 * difference.
 *
 * Lines (times are CLOCK_MONOTONIC nanoseconds, as in the trace):
 *   header PID START_MONO START_REALTIME PERIOD SHORT_US   (a heap trace's flags
 *                                          in place of SHORT_US)
 *   mapping TIME START END PATH
 *   thread TID TIME CPU NAME
 *   exit TID TIME CPU
 *   stack ID NFRAMES
 *   stackpy ID PART NFRAMES                (a stack with its Python frames' part)
 *   stackpyref ID PART BASE                (one whose native frames are stack BASE's)
 *   pypart INDEX PARENT NWORDS LEN SIZE    (a Python part of stacks)
 *   pyparts SIZE PARTS                     (parts packed; then a pypart
 *                                          line of each, SIZE 0)
 *   sample TID TIME WEIGHT STACK_ID       (frame-pointer and cfi samples)
 *   regs TID TIME WEIGHT FLAGS             (register samples)
 *   lost COUNT
 *   end TIME SAMPLES LOST
 *   collector START_NS TABLES_NS HANDLER_NS END_NS ROWS HELPERS_NS   (the library's own CPU time)
 *   heapalloc TID TIME SIZE ADDRESS STACK_ID   (a sampled block)
 *   heapfree TID TIME ADDRESS              (its free)
 *   pycode SIZE INDEX FIRST_LINE VERSION TABLE FILE NAME   (tab-separated;
 *                                          VERSION in hex with its flags, TABLE
 *                                          in hex, "-" when empty; FILE
 *                                          "@INDEX" for a file reference)
 *   pycodes SIZE ENTRIES                   (packed code objects; then each:)
 *   pyentry INDEX FIRST_LINE NAME FILE BYTES\tFILE_TEXT\tNAME_TEXT
 *                                          (NAME, FILE: how each is written,
 *                                          text:LEN, same:ID or
 *                                          prefix:ID:LEN+LEN; then the text
 *                                          of each, tab-separated)
 *   record TYPE SIZE                       (a type this tool does not know)
 *   stop REASON OFFSET                     (why the walk stopped, if not at the end)
 * A run of several processes (raw.h) is dumped part by part, each after a
 * line "part PID FLAGS"; before them, its Python names, when it has them:
 *   pynames SIZE RECORDS HOW               (the bytes of the run's names in the file,
 *                                          trailer included, the bytes of their
 *                                          records, and HOW: "plain" or
 *                                          "deflated"; "pynames-damaged" after it
 *                                          when they do not inflate)
 * then their records as "pycodes" lines, each entry a "runentry" line as
 * a pyentry's; in a part, a RAW_PYRUNCODES record is
 *   pyruncodes SIZE
 *   pyrange INDEX RUN_CODE COUNT           (each range; then a pyentry line
 *                                          of each code, its NAME and FILE
 *                                          "run:RUN_CODE", BYTES 0)
 * the run's parts are "pyparts" lines after its codes, and in a part a
 * RAW_PYRUNPARTS record is
 *   pyrunparts SIZE EVAL_LO EVAL_HI
 *   partrange INDEX RUN_PART COUNT         (each range)
 * Exit status 0, or 1 when the file is not a raw trace it reads.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "pylines.h"
#include "raw-iter.h"
#include "raw.h"
#include "raw-py.h"

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL;
	size_t cap = 0, n = 0, got;

	if (f == NULL)
		return NULL;
	do {
		if (n == cap) {
			cap = cap ? cap * 2 : 1 << 20;
			b = realloc(b, cap);
			if (b == NULL)
				abort();
		}
		got = fread(b + n, 1, cap - n, f);
		n += got;
	} while (got > 0);
	fclose(f);
	*len = n;
	return b;
}

/* A RAW_PYCODE record's line (raw-iter.h checked its lengths). */
static void dump_pycode(const unsigned char *d, uint32_t size)
{
	struct raw_pycode c;
	const unsigned char *name, *file, *t;
	uint32_t ref = 0;

	memcpy(&c, d, sizeof c);
	name = d + sizeof c;
	file = name + c.name_len;
	t = file + c.file_len;
	printf("pycode\t%u\t%u\t%d\t%x\t", size, c.index, c.first_line, c.version);
	for (uint32_t i = 0; i < c.table_len; i++)
		printf("%02x", t[i]);
	if ((c.version & RAW_PYCODE_FILE_REF) && c.file_len == 4) {
		memcpy(&ref, file, 4);
		printf("%s\t@%u\t%.*s\n", c.table_len ? "" : "-", ref, (int)c.name_len, (const char *)name);
	} else {
		printf("%s\t%.*s\t%.*s\n", c.table_len ? "" : "-", (int)c.file_len, (const char *)file,
		       (int)c.name_len, (const char *)name);
	}
}

/* Strings of RAW_PYCODES records by number (raw.h): each malloc'd, NULL
 * when not seen. */
struct strtab {
	char **v;
	size_t n;
};
/* those read so far, emptied at each part of a run; the run's names */
static struct strtab strs, rstrs;
/* the records dumped are the run's names (their entries "runentry") */
static int dumping_run;
/* the first lines of the run's codes, by number */
static int32_t *rlines;
static uint32_t nrlines;

static void rline_set(uint32_t c, int32_t line)
{
	if (c >= nrlines) {
		uint32_t n = c + 1024;

		rlines = realloc(rlines, n * sizeof(*rlines));
		if (rlines == NULL)
			abort();
		memset(rlines + nrlines, 0, (n - nrlines) * sizeof(*rlines));
		nrlines = n;
	}
	rlines[c] = line;
}

static void strs_clear(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

static const char *strs_get(const struct strtab *t, uint32_t id)
{
	return id < t->n && t->v[id] ? t->v[id] : "";
}

static void strs_set(struct strtab *t, uint32_t id, const char *s, size_t n)
{
	if (id >= t->n) {
		size_t want = (size_t)id + 1024;

		t->v = realloc(t->v, want * sizeof(*t->v));
		if (t->v == NULL)
			abort();
		memset(t->v + t->n, 0, (want - t->n) * sizeof(*t->v));
		t->n = want;
	}
	if (t->v[id] != NULL)
		return; /* (a code written twice: the reader keeps the first) */
	t->v[id] = malloc(n + 1);
	if (t->v[id] == NULL)
		abort();
	memcpy(t->v[id], s, n);
	t->v[id][n] = '\0';
}

/* A RAW_PYCODES string, number id: how it is written into how, its text
 * (kept for the strings after it) into text. */
static int dump_string(const unsigned char **p, const unsigned char *end, uint32_t id, char *how,
		       size_t cap, char *text, size_t tcap)
{
	uint32_t v, n = 0, m;
	const char *was;

	if (raw_varint_get32(p, end, &v) < 0)
		return -1;
	was = strs_get(&strs, v >> 2);
	if ((v & 3) == RAW_PYCODES_SAME) {
		snprintf(how, cap, "same:%u", v >> 2);
		snprintf(text, tcap, "%s", was);
	} else if ((v & 3) == RAW_PYCODES_TEXT) {
		if (v >> 2 > (size_t)(end - *p))
			return -1;
		snprintf(how, cap, "text:%u", v >> 2);
		snprintf(text, tcap, "%.*s", (int)(v >> 2), (const char *)*p);
		*p += v >> 2;
	} else {
		if (raw_varint_get32(p, end, &n) < 0 || raw_varint_get32(p, end, &m) < 0 ||
		    m > (size_t)(end - *p))
			return -1;
		snprintf(how, cap, "prefix:%u:%u+%u", v >> 2, n, m);
		snprintf(text, tcap, "%.*s%.*s", (int)(n < strlen(was) ? n : strlen(was)), was, (int)m,
			 (const char *)*p);
		*p += m;
	}
	strs_set(&strs, id, text, strlen(text));
	return 0;
}

/* A RAW_PYCODES record's lines. */
static void dump_pycodes(const unsigned char *d, uint32_t size)
{
	const unsigned char *p, *end = d + size, *at;
	uint32_t n = 0, index, delta, zz;
	char name[64], file[64], tname[2048], tfile[2048];

	for (int pass = 0; pass < 2; pass++) {
		p = d + sizeof(struct raw_pycodes);
		index = 0;
		if (pass == 1)
			printf("pycodes %u %u\n", size, n);
		while (p < end && *p != 0) {
			at = p;
			if (raw_varint_get32(&p, end, &delta) < 0)
				break;
			index += delta >> 1 ^ -(delta & 1);
			if (raw_varint_get32(&p, end, &zz) < 0 || index >= 1u << 30 ||
			    dump_string(&p, end, 2 * index, name, sizeof name, tname, sizeof tname) < 0 ||
			    dump_string(&p, end, 2 * index + 1, file, sizeof file, tfile, sizeof tfile) < 0)
				break;
			if (pass == 1 && dumping_run)
				rline_set(index, (int32_t)(zz >> 1 ^ -(zz & 1)));
			if (pass == 0)
				n++;
			else
				printf("%s %u %d %s %s %u\t%s\t%s\n",
				       dumping_run ? "runentry" : "pyentry", index,
				       (int32_t)(zz >> 1 ^ -(zz & 1)), name, file, (unsigned)(p - at), tfile,
				       tname);
		}
	}
}

/* A RAW_PYPARTS record's lines: its size and parts, then each part as a
 * RAW_PYPART's line (LEN: the bytes of its frames; SIZE 0). */
static void dump_pyparts(const unsigned char *d, uint32_t size)
{
	const unsigned char *p, *end = d + size;
	uint32_t n = 0;

	for (int pass = 0; pass < 2; pass++) {
		uint32_t index = 0, nwords, di, par, v;

		p = d + sizeof(struct raw_pyparts);
		if (pass == 1)
			printf("pyparts %u %u\n", size, n);
		while (p < end && *p != 0) {
			const unsigned char *at;

			if (raw_varint_get32(&p, end, &nwords) < 0 || raw_varint_get32(&p, end, &di) < 0 ||
			    raw_varint_get32(&p, end, &par) < 0)
				break;
			/* (eval_lo and eval_hi: two varints of up to 64 bits) */
			for (int k = 0; par == 0 && k < 2; k++) {
				while (p < end && (*p & 0x80))
					p++;
				p += p < end;
			}
			at = p;
			for (uint32_t i = 0; i < 2 * nwords; i++)
				if (raw_varint_get32(&p, end, &v) < 0)
					break;
			index += di >> 1 ^ -(di & 1);
			if (pass == 0)
				n++;
			else
				printf("pypart %u %u %u %u 0\n", index,
				       par == 0 ? 0 : index - ((par - 1) >> 1 ^ -((par - 1) & 1)), nwords,
				       (unsigned)(p - at));
		}
	}
}

/* A RAW_PYRUNCODES record's lines: its ranges, and each code a pyentry
 * line of the run's code it is. */
static void dump_pyruncodes(const unsigned char *d, uint32_t size)
{
	const unsigned char *p = d + sizeof(struct raw_pyruncodes), *end = d + size;
	uint32_t index = 0, c = 0, n, di, dc;

	printf("pyruncodes %u\n", size);
	while (p < end && *p != 0) {
		if (raw_varint_get32(&p, end, &n) < 0 || raw_varint_get32(&p, end, &di) < 0 ||
		    raw_varint_get32(&p, end, &dc) < 0)
			break;
		index += di >> 1 ^ -(di & 1);
		c += dc >> 1 ^ -(dc & 1);
		printf("pyrange %u %u %u\n", index, c, n);
		for (uint32_t k = 0; k < n && k < (1u << 24); k++, index++, c++)
			printf("pyentry %u %d run:%u run:%u 0\t%s\t%s\n", index,
			       c < nrlines ? rlines[c] : 0, c, c, strs_get(&rstrs, 2 * c + 1),
			       strs_get(&rstrs, 2 * c));
	}
}

/* A RAW_PYRUNPARTS record's lines: its evaluation loop and its ranges. */
static void dump_pyrunparts(const unsigned char *d, uint32_t size)
{
	const unsigned char *p = d + sizeof(struct raw_pyrunparts), *end = d + size;
	uint32_t index = 0, g = 0, n, di, dg;
	uint64_t lo = 0, hi = 0;

	if (raw_varint_get(&p, end, 10, &lo) < 0 || raw_varint_get(&p, end, 10, &hi) < 0)
		p = end;
	printf("pyrunparts %u 0x%" PRIx64 " 0x%" PRIx64 "\n", size, lo, lo + hi);
	while (p < end && *p != 0) {
		if (raw_varint_get32(&p, end, &n) < 0 || raw_varint_get32(&p, end, &di) < 0 ||
		    raw_varint_get32(&p, end, &dg) < 0)
			break;
		index += di >> 1 ^ -(di & 1);
		g += dg >> 1 ^ -(dg & 1);
		printf("partrange %u %u %u\n", index, g, n);
		index += n;
		g += n;
	}
}

/* The run's names (raw.h): "pynames SIZE", then each record as a trace's
 * ("pycodes" and its "runentry" lines), their strings kept for the
 * parts' "run:ID" strings. */
static void dump_run_names(const unsigned char *b, size_t len, const struct raw_run_footer *foot)
{
	uint64_t off, size, inflated;
	unsigned char *plain = NULL;
	uLongf n;
	struct raw_rec h;

	if (raw_run_pynames(b, len, foot, &off, &size, &inflated) != 1)
		return;
	printf("pynames %" PRIu64 " %" PRIu64 " %s\n",
	       size + (inflated ? sizeof(struct raw_run_pynamez) : sizeof(struct raw_run_pynames)),
	       inflated ? inflated : size, inflated ? "deflated" : "plain");
	if (inflated) {
		/* (at most RAW_RUN_PYNAMES_MAX, raw_run_pynames checked) */
		n = (uLongf)inflated;
		if ((plain = malloc(inflated)) == NULL || uncompress(plain, &n, b + off, (uLong)size) != Z_OK ||
		    n != inflated) {
			printf("pynames-damaged\n");
			free(plain);
			return;
		}
		b = plain;
		off = 0;
		size = inflated;
	}
	dumping_run = 1;
	for (uint64_t at = off; size - (at - off) >= sizeof(h); at += h.size) {
		memcpy(&h, b + at, sizeof(h));
		if ((h.type != RAW_PYCODES && h.type != RAW_PYPARTS) || h.size < sizeof(h) ||
		    h.size % 8 != 0 || h.size > size - (at - off))
			break;
		if (h.type == RAW_PYCODES)
			dump_pycodes(b + at, h.size);
		else
			dump_pyparts(b + at, h.size);
	}
	dumping_run = 0;
	free(plain);
	/* the strings they numbered are the run's */
	rstrs = strs;
	strs = (struct strtab){ 0 };
}

static int dump(const char *path, const unsigned char *b, size_t len)
{
	static const char *why[] = { "record", "done", "zeros", "ended", "cut-header", "cut",
				     "bad-size", "malformed" };
	struct raw_head head;
	struct raw_iter it;
	struct raw_record r;
	enum raw_next next;

	if (raw_iter_head(b, len, &head) != RAW_HEAD_OK) {
		fprintf(stderr, "rawdump: '%s' is not a raw trace it reads\n", path);
		return 1;
	}
	printf("header %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %u\n", head.h.pid,
	       head.h.start_monotonic_ns, head.h.start_realtime_ns, head.h.period_ns,
	       head.h.short_thread_us);
	raw_iter_init(&it, b, len, head.h.header_size, head.arch.nregs);
	while ((next = raw_iter_next(&it, &r)) == RAW_NEXT_RECORD) {
		switch (r.type) {
		case RAW_MAPPING: {
			struct raw_mapping m;

			memcpy(&m, r.data, sizeof m);
			printf("mapping %" PRIu64 " %" PRIx64 " %" PRIx64 " %.*s\n", m.time_ns, m.start,
			       m.end, (int)strnlen((const char *)r.data + sizeof m, m.path_len),
			       (const char *)r.data + sizeof m);
			break;
		}
		case RAW_THREAD: {
			struct raw_thread t = { 0 };

			memcpy(&t, r.data, r.size < sizeof t ? r.size : sizeof t);
			printf("thread %u %" PRIu64 " %" PRIu64 " %.16s\n", t.tid, t.time_ns, t.cpu_ns,
			       t.name[0] ? t.name : "-");
			break;
		}
		case RAW_THREAD_EXIT: {
			struct raw_thread_exit t = { .system_ns = RAW_UNKNOWN };

			memcpy(&t, r.data, r.size < sizeof t ? r.size : sizeof t);
			printf("exit %u %" PRIu64 " %" PRIu64, t.tid, t.time_ns, t.cpu_ns);
			if (t.system_ns != RAW_UNKNOWN)
				printf(" system %" PRIu64, t.system_ns);
			if (t.flags & RAW_EXIT_MOVED)
				printf(" moved");
			printf("\n");
			break;
		}
		case RAW_STACK: {
			struct raw_stack s;

			memcpy(&s, r.data, sizeof s);
			printf("stack %u %u\n", s.id, s.nframes);
			break;
		}
		case RAW_STACK_PY: {
			struct raw_stack_py s;

			memcpy(&s, r.data, sizeof s);
			printf("stackpy %u %u %u\n", s.id, s.py, (r.size - (uint32_t)sizeof s) / 8);
			break;
		}
		case RAW_STACK_PYREF: {
			struct raw_stack_pyref s;

			memcpy(&s, r.data, sizeof s);
			printf("stackpyref %u %u %u\n", s.id, s.py, s.base);
			break;
		}
		case RAW_PYPART: {
			struct raw_pypart g;

			memcpy(&g, r.data, sizeof g);
			printf("pypart %u %u %u %u %u\n", g.index, g.parent, g.nwords, g.len, r.size);
			break;
		}
		case RAW_SAMPLE: {
			struct raw_sample s;

			raw_sample_get(r.data, r.size, &s);
			printf("sample %u %" PRIu64 " %" PRIu64 " %u\n", s.tid, s.time_ns, s.weight_ns,
			       s.stack_id);
			break;
		}
		case RAW_SAMPLE_REGS: {
			struct raw_sample_regs s;

			memcpy(&s, r.data, sizeof s);
			printf("regs %u %" PRIu64 " %" PRIu64 " %u\n", s.tid, s.time_ns, s.weight_ns,
			       s.flags);
			break;
		}
		case RAW_SAMPLE_KERNEL: {
			struct raw_sample_kernel k;

			memcpy(&k, r.data, sizeof k);
			printf("kernel %u %" PRIu64 " %" PRIu64 " %u\n", k.tid, k.time_ns, k.system_ns,
			       k.nframes);
			break;
		}
		case RAW_KERNEL: {
			struct raw_kernel k;

			memcpy(&k, r.data, sizeof k);
			printf("system-source %u %.40s\n", k.source, k.boot_id[0] ? k.boot_id : "-");
			break;
		}
		case RAW_LOST: {
			struct raw_lost l = { 0 };

			memcpy(&l, r.data, r.size < sizeof l ? r.size : sizeof l);
			printf("lost %" PRIu64 "\n", l.count);
			break;
		}
		case RAW_END: {
			struct raw_end e;

			memcpy(&e, r.data, sizeof e);
			printf("end %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", e.time_ns, e.samples, e.lost);
			break;
		}
		case RAW_COLLECTOR: {
			struct raw_collector c;

			memcpy(&c, r.data, sizeof c);
			printf("collector %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			       " %" PRIu64 "\n", c.start_ns, c.tables_ns, c.handler_ns, c.end_ns,
			       c.table_rows, c.helpers_ns);
			break;
		}
		case RAW_HEAP_ALLOC: {
			struct raw_heap_alloc a;

			memcpy(&a, r.data, sizeof a);
			printf("heapalloc %u %" PRIu64 " %" PRIu64 " %" PRIu64 " %u\n", a.tid, a.time_ns,
			       a.size, a.address, a.stack_id);
			break;
		}
		case RAW_HEAP_FREE: {
			struct raw_heap_free fr;

			memcpy(&fr, r.data, sizeof fr);
			printf("heapfree %u %" PRIu64 " %" PRIu64 "\n", fr.tid, fr.time_ns, fr.address);
			break;
		}
		case RAW_PYCODES:
			dump_pycodes(r.data, r.size);
			break;
		case RAW_PYRUNCODES:
			dump_pyruncodes(r.data, r.size);
			break;
		case RAW_PYPARTS:
			dump_pyparts(r.data, r.size);
			break;
		case RAW_PYRUNPARTS:
			dump_pyrunparts(r.data, r.size);
			break;
		case RAW_PYCODE:
			dump_pycode(r.data, r.size);
			break;
		default:
			printf("record %u %u\n", r.type, r.size);
			break;
		}
	}
	if (next != RAW_NEXT_DONE && next != RAW_NEXT_ENDED)
		printf("stop %s %zu\n", why[next], r.off);
	return 0;
}

static const unsigned char *lines_table;
static size_t lines_table_len;

/* pylines' reads, from lines_table (addresses are offsets + 4096). */
static int lines_read(void *dst, uintptr_t addr, size_t len)
{
	if (addr < 4096 || addr - 4096 > lines_table_len || len > lines_table_len - (addr - 4096))
		return -1;
	memcpy(dst, lines_table + (addr - 4096), len);
	return 0;
}

static int check_lines(void)
{
	static char row[1 << 20];
	static unsigned char table[1 << 18];
	unsigned long codes = 0, units = 0, bad = 0;

	while (fgets(row, sizeof row, stdin) != NULL) {
		char *save = NULL, *hex, *tok = strtok_r(row, " \n", &save);
		uint32_t version;
		long first;
		size_t n = 0;

		if (tok == NULL)
			continue;
		version = (uint32_t)strtoul(tok, NULL, 16);
		tok = strtok_r(NULL, " \n", &save);
		hex = tok ? strtok_r(NULL, " \n", &save) : NULL;
		if (hex == NULL)
			return fprintf(stderr, "rawdump: --pylines: a short line\n"), 1;
		first = strtol(tok, NULL, 10);
		for (size_t i = 0; strcmp(hex, "-") != 0 && hex[i] && hex[i + 1] && n < sizeof table; i += 2) {
			unsigned v;

			sscanf(hex + i, "%2x", &v);
			table[n++] = (unsigned char)v;
		}
		lines_table = table;
		lines_table_len = n;
		codes++;
		for (uint64_t u = 0; (tok = strtok_r(NULL, " \n", &save)) != NULL; u++) {
			long want = strtol(tok, NULL, 10);
			int64_t got = pylines_find(lines_read, version, 4096, n, first, u);

			units++;
			if (got != want && ++bad <= 5)
				printf("unit %" PRIu64 " of a code at line %ld: line %" PRId64 ", the interpreter says %ld\n",
				       u, first, got, want);
		}
	}
	printf("compared %lu %lu\n", codes, units);
	return bad != 0;
}

int main(int argc, char **argv)
{
	struct raw_run_footer foot;
	unsigned char *b;
	size_t len;
	int rc = 0;

	if (argc == 2 && strcmp(argv[1], "--pylines") == 0)
		return check_lines();
	if (argc != 2) {
		fprintf(stderr, "usage: rawdump TRACE | --pylines\n");
		return 2;
	}
	b = slurp(argv[1], &len);
	if (b == NULL) {
		fprintf(stderr, "rawdump: cannot read '%s'\n", argv[1]);
		return 1;
	}
	if (len >= sizeof(foot))
		memcpy(&foot, b + len - sizeof(foot), sizeof(foot));
	if (len >= sizeof(foot) && memcmp(foot.magic, RAW_RUN_MAGIC, RAW_MAGIC_LEN) == 0 &&
	    foot.index_offset <= len - sizeof(foot) &&
	    (uint64_t)foot.nparts * sizeof(struct raw_run_part) <= len - sizeof(foot) - foot.index_offset) {
		dump_run_names(b, len, &foot);
		for (uint32_t i = 0; i < foot.nparts && rc == 0; i++) {
			struct raw_run_part p;

			memcpy(&p, b + foot.index_offset + i * sizeof(p), sizeof(p));
			if (p.offset > len || p.length > len - p.offset) {
				fprintf(stderr, "rawdump: '%s': part %u out of the file\n", argv[1], i);
				rc = 1;
				break;
			}
			strs_clear(&strs);
			printf("part %u %u\n", p.pid, p.flags);
			rc = dump(argv[1], b + p.offset, p.length);
		}
	} else {
		rc = dump(argv[1], b, len);
	}
	free(b);
	return rc;
}
