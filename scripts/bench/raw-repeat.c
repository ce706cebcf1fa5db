/* raw-repeat.c - make a big profview raw trace out of a real one, for
 * scripts/bench/symbolize
 *
 * raw-repeat IN OUT MIN-SAMPLES
 *
 * Writes OUT with the samples of IN repeated as a whole, in their order,
 * K = ceil(MIN-SAMPLES / samples in IN) times, so every function keeps its
 * share of the profile.  Every sample record (RAW_SAMPLE_REGS: registers and
 * stack copy, or RAW_SAMPLE) is self-contained and copied byte for byte,
 * except its time, shifted by the copy number times the span of IN so that
 * times keep increasing.  The header and the mapping, thread and stack
 * records are written once, before the samples; then the thread-exit and
 * lost records (times shifted to the end, CPU times and counts times K) and
 * an end record whose counts are those of IN times K.  Prints
 * "SAMPLES-IN SAMPLES-OUT K" on standard output.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raw.h"

static void die(const char *msg, const char *arg)
{
	fprintf(stderr, "raw-repeat: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
	exit(1);
}

static unsigned char *slurp(const char *name, size_t *len)
{
	FILE *f = fopen(name, "rb");
	unsigned char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		die(strerror(errno), name);
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1 << 20;
			buf = realloc(buf, cap);
			if (!buf)
				die("out of memory", NULL);
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f))
		die("read error", name);
	fclose(f);
	*len = n;
	return buf;
}

static void put(FILE *f, const void *p, size_t n)
{
	if (fwrite(p, 1, n, f) != n)
		die("write error", NULL);
}

/* The records of IN: where they are, by kind. */
struct recs {
	size_t n, cap;
	size_t *off;
};

static void add(struct recs *r, size_t off)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 1024;
		r->off = realloc(r->off, r->cap * sizeof *r->off);
		if (!r->off)
			die("out of memory", NULL);
	}
	r->off[r->n++] = off;
}

/* Sample time: at the same offset in both sample record types. */
_Static_assert(offsetof(struct raw_sample, time_ns) == offsetof(struct raw_sample_regs, time_ns),
	       "time at the same place");

int main(int argc, char **argv)
{
	struct recs head = { 0 }, samples = { 0 }, tail = { 0 };
	struct raw_end end = { 0 };
	struct raw_header hd;
	uint64_t tmin = UINT64_MAX, tmax = 0, want, k;
	size_t len, off;
	unsigned char *buf;
	int have_end = 0;
	FILE *out;

	if (argc != 4)
		die("usage: raw-repeat IN OUT MIN-SAMPLES", NULL);
	want = strtoull(argv[3], NULL, 10);
	buf = slurp(argv[1], &len);
	if (len < sizeof hd || memcmp(buf, RAW_MAGIC, RAW_MAGIC_LEN))
		die("not a profview raw trace", argv[1]);
	memcpy(&hd, buf, sizeof hd);
	if (hd.version != RAW_VERSION || hd.header_size < sizeof hd || hd.header_size > len)
		die("unsupported or damaged header", argv[1]);

	for (off = hd.header_size; off + sizeof(struct raw_rec) <= len;) {
		struct raw_rec h;
		memcpy(&h, buf + off, sizeof h);
		if (h.type == 0)
			break;
		if (h.size < sizeof h || h.size % RAW_ALIGN || h.size > len - off)
			die("damaged record (this tool wants a whole trace)", argv[1]);
		switch (h.type) {
		case RAW_SAMPLE:
		case RAW_SAMPLE_REGS: {
			uint64_t t;
			memcpy(&t, buf + off + offsetof(struct raw_sample, time_ns), sizeof t);
			tmin = t < tmin ? t : tmin;
			tmax = t > tmax ? t : tmax;
			add(&samples, off);
			break;
		}
		case RAW_THREAD_EXIT:
		case RAW_LOST:
			add(&tail, off);
			break;
		case RAW_END:
			memcpy(&end, buf + off, sizeof end);
			have_end = 1;
			break;
		default:
			add(&head, off);
			break;
		}
		off += h.size;
	}
	if (!samples.n)
		die("no samples", argv[1]);
	if (!have_end)
		die("no end record: the trace was not finished", argv[1]);
	k = (want + samples.n - 1) / samples.n;
	if (k == 0)
		k = 1;
	/* Each copy starts one sampling period after the previous one ended. */
	uint64_t span = tmax - tmin + hd.period_ns, shift = (k - 1) * span;

	out = fopen(argv[2], "wb");
	if (!out)
		die(strerror(errno), argv[2]);
	put(out, buf, hd.header_size);
	for (size_t i = 0; i < head.n; i++) {
		struct raw_rec h;
		memcpy(&h, buf + head.off[i], sizeof h);
		put(out, buf + head.off[i], h.size);
	}
	for (uint64_t c = 0; c < k; c++)
		for (size_t i = 0; i < samples.n; i++) {
			unsigned char *r = buf + samples.off[i];
			struct raw_rec h;
			uint64_t t;
			memcpy(&h, r, sizeof h);
			memcpy(&t, r + offsetof(struct raw_sample, time_ns), sizeof t);
			t += c * span;
			/* Header and time patched, the rest (registers, stack) as
			 * is; a short sample is all header. */
			unsigned char first[sizeof(struct raw_sample)];
			size_t nfirst = h.size < sizeof first ? h.size : sizeof first;
			memcpy(first, r, nfirst);
			memcpy(first + offsetof(struct raw_sample, time_ns), &t, sizeof t);
			put(out, first, nfirst);
			put(out, r + nfirst, h.size - nfirst);
		}
	for (size_t i = 0; i < tail.n; i++) {
		unsigned char *r = buf + tail.off[i];
		struct raw_rec h;
		memcpy(&h, r, sizeof h);
		if (h.type == RAW_THREAD_EXIT && h.size >= RAW_THREAD_EXIT_MIN_SIZE) {
			struct raw_thread_exit e;
			size_t n = h.size < sizeof e ? h.size : sizeof e;
			memcpy(&e, r, n);
			e.time_ns += shift;
			e.cpu_ns *= k;
			if (n == sizeof e && e.system_ns != RAW_UNKNOWN)
				e.system_ns *= k;
			put(out, &e, n);
			put(out, r + n, h.size - n);
		} else if (h.type == RAW_LOST && h.size >= sizeof(struct raw_lost)) {
			struct raw_lost l;
			memcpy(&l, r, sizeof l);
			l.count *= k;
			put(out, &l, sizeof l);
			put(out, r + sizeof l, h.size - sizeof l);
		} else {
			put(out, r, h.size);
		}
	}
	end.time_ns += shift;
	end.samples *= k;
	end.lost *= k;
	end.signals *= k;
	end.overruns *= k;
	put(out, &end, sizeof end);
	if (fclose(out) != 0)
		die("write error", argv[2]);
	printf("%zu %" PRIu64 " %" PRIu64 "\n", samples.n, (uint64_t)samples.n * k, k);
	free(buf);
	free(head.off);
	free(samples.off);
	free(tail.off);
	return 0;
}
