/* bigprof.c - write a big synthetic pprof profile (profile.proto, gzipped)
 * for the analyzer benchmarks
 *
 * bigprof [-S STACKS] [-N SAMPLES] [-F FUNCTIONS] [-s SEED] OUT.pb.gz
 *
 * The profile looks like a CPU profile of a big C++ server: FUNCTIONS
 * functions (default 2,500; every seventh has a long template name) in 60
 * source files, each with 1 to 12 call sites, so there are several
 * locations (addresses) per function, about one in eight of them with an
 * inlined call (two lines); a fixed call graph in which every function
 * calls 2 to 6 others, mostly further down the list; STACKS distinct stacks
 * (default 50,000), each a walk down that graph 4 to 40 frames deep from
 * one of a few thread entry points, the caller's frame at the call site it
 * uses for that callee; SAMPLES samples in all (default 345,253) spread
 * over the stacks with a long tail.  Two sample types, samples/count and
 * cpu/nanoseconds (10 ms a sample, with jitter), period 10 ms, one
 * mapping.  The same arguments give the same file.
 *
 * The encoder is written here from profile.proto's field numbers, so the
 * file does not come from either of the programs the benchmark compares.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

struct buf {
	unsigned char *p;
	size_t n, cap;
};

static void need(struct buf *b, size_t more)
{
	if (b->n + more <= b->cap)
		return;
	while (b->n + more > b->cap)
		b->cap = b->cap ? b->cap * 2 : 4096;
	b->p = realloc(b->p, b->cap);
	if (!b->p) {
		perror("bigprof");
		exit(1);
	}
}

static void put_varint(struct buf *b, uint64_t v)
{
	need(b, 10);
	while (v >= 0x80) {
		b->p[b->n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	b->p[b->n++] = (unsigned char)v;
}

static void put_key(struct buf *b, unsigned field, unsigned wire)
{
	put_varint(b, (uint64_t)field << 3 | wire);
}

static void put_uint(struct buf *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	put_key(b, field, 0);
	put_varint(b, v);
}

static void put_bytes(struct buf *b, unsigned field, const void *p, size_t n)
{
	put_key(b, field, 2);
	put_varint(b, n);
	need(b, n);
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void put_msg(struct buf *b, unsigned field, struct buf *m)
{
	put_bytes(b, field, m->p, m->n);
	m->n = 0;
}

/* A small deterministic generator (xorshift64*). */
static uint64_t rng_state = 42;
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}
static double rnd01(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0;
}

/* Strings: an append-only table, index = order of first use. */
static char **strs;
static size_t nstrs, capstrs;
static uint64_t str_add(const char *s)
{
	if (nstrs == capstrs) {
		capstrs = capstrs ? capstrs * 2 : 1024;
		strs = realloc(strs, capstrs * sizeof *strs);
		if (!strs) {
			perror("bigprof");
			exit(1);
		}
	}
	strs[nstrs] = strdup(s);
	return nstrs++;
}

static uint64_t hash_stack(const uint32_t *l, int n)
{
	uint64_t h = 1469598103934665603ULL;
	for (int i = 0; i < n; i++)
		h = (h ^ l[i]) * 1099511628211ULL;
	return h ? h : 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: bigprof [-S STACKS] [-N SAMPLES] [-F FUNCTIONS] [-s SEED] OUT.pb.gz\n");
	exit(2);
}

/* The profile being written, and the model it is drawn from. */
static long nstacks = 50000, nsamples = 345253, nfn = 2500, nloc;
static struct buf out, m, l;
static const long nfiles = 60, entries = 8;
static uint64_t s_samples, s_count, s_cpu, s_ns, s_bin, *file_str;
static int64_t *fn_line;
static long *fn_file, *loc_first;
static int *loc_n, *ncallee;
static long (*callee)[6];
static int (*site)[6];

/* The strings every part names, and the source files. */
static void add_strings(void)
{
	char name[512];

	str_add("");
	s_samples = str_add("samples");
	s_count = str_add("count");
	s_cpu = str_add("cpu");
	s_ns = str_add("nanoseconds");
	s_bin = str_add("/usr/local/bin/bigserver");
	file_str = malloc(nfiles * sizeof *file_str);
	for (long i = 0; i < nfiles; i++) {
		snprintf(name, sizeof name, "/src/bigserver/%s/%s_%ld.cc",
			 (const char *[]){ "net", "storage", "rpc", "util", "index" }[i % 5],
			 (const char *[]){ "conn", "table", "codec", "pool", "shard", "cache" }[i % 6], i);
		file_str[i] = str_add(name);
	}
}

/* Sample types, period, one mapping. */
static void put_header(void)
{
	put_uint(&m, 1, s_samples);
	put_uint(&m, 2, s_count);
	put_msg(&out, 1, &m);
	put_uint(&m, 1, s_cpu);
	put_uint(&m, 2, s_ns);
	put_msg(&out, 1, &m);

	put_uint(&m, 1, 1);
	put_uint(&m, 2, 0x400000);
	put_uint(&m, 3, 0x400000 + 0x4000000);
	put_uint(&m, 5, s_bin);
	put_uint(&m, 7, 1);
	put_uint(&m, 8, 1);
	put_uint(&m, 9, 1);
	put_uint(&m, 10, 1);
	put_msg(&out, 3, &m);
}

/* Functions: ids 1..nfn; the first few are the entry chain. */
static void put_functions(void)
{
	static const char *const entry[] = { "_start", "__libc_start_main", "main" };
	char name[512];

	fn_line = malloc(nfn * sizeof *fn_line);
	fn_file = malloc(nfn * sizeof *fn_file);
	for (long f = 0; f < nfn; f++) {
		if (f < 3)
			snprintf(name, sizeof name, "%s", entry[f]);
		else if (f < 3 + entries)
			snprintf(name, sizeof name, "bigserver::Worker::run_%ld()", f - 3);
		else if (f % 7 == 0)
			snprintf(name, sizeof name,
				 "ns%ld::Table<std::pair<int, long>, Alloc<%ld>>::probe_%ld(unsigned long) const",
				 f % 13, f % 5, f);
		else
			snprintf(name, sizeof name, "bigserver::%s_%ld",
				 (const char *[]){ "handle", "parse", "encode", "lookup", "flush", "merge" }[f % 6], f);
		fn_file[f] = (long)(rnd() % nfiles);
		fn_line[f] = 10 + (int64_t)(rnd() % 3000);
		uint64_t sn = str_add(name);
		put_uint(&m, 1, (uint64_t)f + 1);
		put_uint(&m, 2, sn);
		put_uint(&m, 3, sn);
		put_uint(&m, 4, file_str[fn_file[f]]);
		put_uint(&m, 5, (uint64_t)fn_line[f]);
		put_msg(&out, 5, &m);
	}
}

/* Locations: 1..25 call sites per function, ids consecutive. */
static void put_locations(void)
{
	uint64_t addr = 0x401000;

	loc_first = malloc(nfn * sizeof *loc_first);
	loc_n = malloc(nfn * sizeof *loc_n);
	for (long f = 0; f < nfn; f++) {
		loc_first[f] = nloc + 1;
		loc_n[f] = f < 3 + entries ? 2 : 1 + (int)(rnd01() * rnd01() * 25);
		for (int k = 0; k < loc_n[f]; k++) {
			long id = ++nloc;
			addr += 4 + rnd() % 60;
			put_uint(&m, 1, (uint64_t)id);
			put_uint(&m, 2, 1);
			put_uint(&m, 3, addr);
			if (f >= 3 + entries && rnd() % 8 == 0) {
				/* an inlined call first, then the function it is in */
				long in = 3 + entries + (long)(rnd() % (uint64_t)(nfn - 3 - entries));
				put_uint(&l, 1, (uint64_t)in + 1);
				put_uint(&l, 2, (uint64_t)fn_line[in] + rnd() % 40);
				put_msg(&m, 4, &l);
			}
			put_uint(&l, 1, (uint64_t)f + 1);
			put_uint(&l, 2, (uint64_t)fn_line[f] + 1 + rnd() % 200);
			put_msg(&m, 4, &l);
			put_msg(&out, 4, &m);
		}
	}
}

/* The call graph: each function's callees and the call site of each. */
static void make_callgraph(void)
{
	ncallee = malloc(nfn * sizeof *ncallee);
	callee = malloc(nfn * sizeof *callee);
	site = malloc(nfn * sizeof *site);
	for (long f = 0; f < nfn; f++) {
		ncallee[f] = 2 + (int)(rnd() % 5);
		for (int j = 0; j < ncallee[f]; j++) {
			long lo = f < 3 + entries ? 3 + entries : f + 1;
			long to;
			if (rnd01() < 0.95 && lo < nfn)
				to = lo + (long)(rnd01() * rnd01() * (double)(nfn - lo));
			else
				to = 3 + entries + (long)(rnd() % (uint64_t)(nfn - 3 - entries));
			callee[f][j] = to;
			site[f][j] = (int)(rnd() % (uint64_t)loc_n[f]);
		}
	}
}

/* A walk of the call graph into locs (outermost first) that seen does not
 * hold yet; its depth. */
static int new_walk(uint32_t *locs, uint64_t *seen, size_t seen_mask)
{
	for (;;) {
		long f = 3 + (long)(rnd01() * rnd01() * entries);
		int d = 4 + (int)(rnd() % 37), n = 4;
		/* frames outermost first: _start, __libc_start_main, main, entry */
		locs[0] = (uint32_t)loc_first[0];
		locs[1] = (uint32_t)loc_first[1];
		locs[2] = (uint32_t)(loc_first[2] + (long)(f % 2));
		for (; n < d + 3; n++) {
			int j = (int)(rnd() % (uint64_t)ncallee[f]);
			locs[n - 1] = (uint32_t)(loc_first[f] + site[f][j]);
			f = callee[f][j];
		}
		/* the leaf: anywhere in its function */
		locs[n - 1] = (uint32_t)(loc_first[f] + (long)(rnd() % (uint64_t)loc_n[f]));
		uint64_t h = hash_stack(locs, n);
		size_t i = h & seen_mask;
		int dup = 0;
		while (seen[i]) {
			if (seen[i] == h) {
				dup = 1;
				break;
			}
			i = (i + 1) & seen_mask;
		}
		if (!dup) {
			seen[i] = h;
			return n;
		}
	}
}

/* Stacks: distinct walks, leaf first in the sample, their counts falling
 * off as 1/(1 + k/20). */
static void put_samples(void)
{
	size_t seen_n = 1;
	uint32_t locs[64];
	double tot = 0;
	long left = nsamples;

	while (seen_n < (size_t)nstacks * 4)
		seen_n <<= 1;
	uint64_t *seen = calloc(seen_n, sizeof *seen);
	for (long k = 0; k < nstacks; k++)
		tot += 1.0 / (1.0 + (double)k * 0.05);
	for (long k = 0; k < nstacks; k++) {
		int n = new_walk(locs, seen, seen_n - 1);
		long cnt = k == nstacks - 1 ? left : (long)((double)nsamples / (1.0 + (double)k * 0.05) / tot + 0.5);
		if (cnt < 1)
			cnt = 1;
		if (cnt > left - (nstacks - 1 - k))
			cnt = left - (nstacks - 1 - k);
		left -= cnt;
		/* location ids, leaf first, packed */
		for (int i = n; i-- > 0;)
			put_varint(&l, locs[i]);
		put_msg(&m, 1, &l);
		put_varint(&l, (uint64_t)cnt);
		put_varint(&l, (uint64_t)cnt * 10000000 + rnd() % 2000000);
		put_msg(&m, 2, &l);
		put_msg(&out, 2, &m);
	}
	free(seen);
}

int main(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "S:N:F:s:")) != -1) {
		switch (c) {
		case 'S': nstacks = atol(optarg); break;
		case 'N': nsamples = atol(optarg); break;
		case 'F': nfn = atol(optarg); break;
		case 's': rng_state = strtoull(optarg, NULL, 10) | 1; break;
		default: usage();
		}
	}
	if (optind != argc - 1 || nstacks < 1 || nsamples < nstacks || nfn < 100)
		usage();
	add_strings();
	put_header();
	put_functions();
	put_locations();
	make_callgraph();
	put_samples();
	for (size_t i = 0; i < nstrs; i++)
		put_bytes(&out, 6, strs[i], strlen(strs[i]));
	put_uint(&out, 9, 1700000000000000000ULL);
	put_uint(&out, 10, (uint64_t)nsamples * 10000000 / 16);
	put_uint(&m, 1, s_cpu);
	put_uint(&m, 2, s_ns);
	put_msg(&out, 11, &m);
	put_uint(&out, 12, 10000000);

	gzFile gz = gzopen(argv[optind], "wb6");
	if (!gz || gzwrite(gz, out.p, (unsigned)out.n) != (int)out.n || gzclose(gz) != Z_OK) {
		fprintf(stderr, "bigprof: cannot write %s\n", argv[optind]);
		return 1;
	}
	fprintf(stderr, "bigprof: %ld samples, %ld stacks, %ld functions, %ld locations\n", nsamples,
		nstacks, nfn, nloc);
	return 0;
}
