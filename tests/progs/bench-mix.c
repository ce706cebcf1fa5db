/* bench-mix.c - a CPU-bound multithreaded workload with a realistic mix, for
 * scripts/bench/symbolize
 *
 * bench-mix [threads [seconds]]: every thread runs for SECONDS of its own
 * CPU time (default 2 threads, 5 s) through a few levels of calls: record
 * parsing (a hand-written loop), hashing into a table, sorting with libc's
 * qsort (so stacks go through libc code and back into a comparator), block
 * copies with memcpy and formatting with snprintf.  Work units have jittered
 * lengths so they do not line up with the scheduler tick.  Build it -O2 -g
 * without frame pointers: stacks are meant to be unwound with the CFI.
 * Prints a checksum so the work is not optimised away.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NREC 512
#define RECLEN 96

static double seconds = 5.0;

struct rec {
	uint32_t key;
	uint32_t fields;
	char text[RECLEN];
};

struct state {
	uint64_t rng;
	uint64_t sum;
	struct rec recs[NREC];
	struct rec copy[NREC];
	uint32_t table[8192];
	char line[256];
};

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t next(struct state *s)
{
	s->rng = s->rng * 6364136223846793005ull + 1442695040888963407ull;
	return s->rng >> 17;
}

__attribute__((noinline)) static void fill_records(struct state *s, int n)
{
	for (int i = 0; i < n; i++) {
		struct rec *r = &s->recs[i];
		r->key = (uint32_t)next(s);
		for (int k = 0; k < RECLEN - 1; k++)
			r->text[k] = (char)((k % 9 == 8) ? ',' : 'a' + (r->key + k) % 26);
		r->text[RECLEN - 1] = 0;
	}
}

__attribute__((noinline)) static uint32_t parse_fields(const char *t)
{
	uint32_t n = 0, h = 0;
	for (int pass = 0; pass < 4; pass++)
		for (const char *p = t; *p; p++) {
			n += *p == ',';
			h = h * 31 + (unsigned char)*p;
		}
	return n ^ (h & 0xff);
}

__attribute__((noinline)) static void parse_all(struct state *s, int n)
{
	for (int i = 0; i < n; i++)
		s->recs[i].fields = parse_fields(s->recs[i].text);
}

__attribute__((noinline)) static uint32_t hash_key(uint32_t key)
{
	uint32_t h = key;
	for (int i = 0; i < 24; i++) {
		h ^= h >> 16;
		h *= 0x7feb352dU;
		h ^= h >> 15;
		h *= 0x846ca68bU;
	}
	return h;
}

__attribute__((noinline)) static void index_all(struct state *s, int n)
{
	for (int i = 0; i < n; i++) {
		uint32_t h = hash_key(s->recs[i].key);
		for (int p = 0; p < 8; p++)
			s->table[(h + p) & 8191] += s->recs[i].fields;
	}
}

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return memcmp(x->text, y->text, 16);
}

__attribute__((noinline)) static void sort_records(struct state *s, int n)
{
	memcpy(s->copy, s->recs, (size_t)n * sizeof s->recs[0]);
	qsort(s->copy, (size_t)n, sizeof s->copy[0], cmp_rec);
}

__attribute__((noinline)) static void shuffle_blocks(struct state *s, int rounds)
{
	for (int r = 0; r < rounds; r++) {
		size_t a = next(s) % NREC, b = next(s) % NREC;
		size_t len = (NREC - (a > b ? a : b)) * sizeof(struct rec);
		memmove(&s->recs[a], &s->copy[b], len);
	}
}

__attribute__((noinline)) static void report_line(struct state *s, int n)
{
	for (int i = 0; i < n; i += 16) {
		int len = snprintf(s->line, sizeof s->line, "%u %u %.20s %lu", s->recs[i].key,
				   s->recs[i].fields, s->recs[i].text, (unsigned long)s->sum);
		s->sum += (uint64_t)len;
	}
}

__attribute__((noinline)) static void work_unit(struct state *s)
{
	int n = NREC / 2 + (int)(next(s) % (NREC / 2)); /* jittered length */
	fill_records(s, n);
	parse_all(s, n);
	index_all(s, n);
	sort_records(s, n);
	shuffle_blocks(s, 32);
	report_line(s, n);
	s->sum += s->table[next(s) & 8191] + s->copy[0].key;
}

static void *run(void *arg)
{
	struct state *s = arg;
	while (thread_cpu() < seconds)
		work_unit(s);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	uint64_t sum = 0;
	pthread_t *t;
	struct state *st;

	if (argc > 2)
		seconds = atof(argv[2]);
	if (n < 1)
		n = 1;
	t = calloc((size_t)n, sizeof(*t));
	st = calloc((size_t)n, sizeof(*st));
	if (!t || !st)
		return 1;
	for (int i = 0; i < n; i++) {
		st[i].rng = (uint64_t)i * 0x9e3779b97f4a7c15ull + 1;
		if (i > 0 && pthread_create(&t[i], NULL, run, &st[i]) != 0)
			return 1;
	}
	run(&st[0]);
	for (int i = 1; i < n; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < n; i++)
		sum += st[i].sum;
	printf("bench-mix: %d threads, checksum %llu\n", n, (unsigned long long)sum);
	return 0;
}
