/* debugfile.c - decompress a debug file's sections into a memfd, on two
 * threads, only as much as is needed (see debugfile.h)
 *
 * The copy keeps the original's layout rules: the ELF header first, the
 * program headers where they were (they are only read for their values),
 * each section's data at a new offset aligned as the section asks, in
 * section order, and the section headers last, each with its new offset
 * and size and, for one that was compressed, the flag cleared and the
 * alignment its compression header gave.  Input is read with pread and
 * output written with pwrite, through 256 KiB buffers, or a section's
 * whole data when libdeflate inflates it at once (a few MB at most):
 * nothing of either file is mapped here.  A zlib stream is inflated as the raw deflate
 * stream it wraps, its Adler-32 (the trailer) checked here
 * (checksum.h), several times faster than zlib checks it.
 */
#include "debugfile.h"
#include "outfile.h"
#include "checksum.h"
#include "debugcache.h"
#include "debugtrim.h"

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#if PROFVIEW_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

#define CHUNK (256 * 1024)
#define WHOLE UINT64_MAX
/* The most of a section read into memory to decide what to copy. */
#define MAX_IN_MEMORY ((uint64_t)64 << 20)
/* The most memory a compressed section's data and its inflated data may
 * take to be inflated at once (libdeflate); a bigger one is streamed
 * through zlib. */
#define MAX_AT_ONCE ((uint64_t)16 << 20)

struct piece {
	uint64_t in_off, in_size;    /* in the original */
	uint64_t out_off, out_size;  /* in the copy */
	bool inflate;
	const unsigned char *mem;    /* its data, out_size bytes, already here; or NULL */
	uint64_t unit_at;            /* .debug_info cut after the unit here; or WHOLE */
	uint64_t enough;             /* cut: its bytes up to here hold that unit; or WHOLE */
	uint64_t until;              /* then the bytes of it the copy has; else 0 */
	size_t sec;                  /* its section */
	uint64_t written;            /* the bytes written from out_off on */
	uint32_t sum;                /* their CRC-32 */
};

/* The sections a symbolizer never reads: location lists, macros, the
 * lookup tables for debuggers.  The copy has them as SHT_NOBITS. */
static const char *const unread[] = {
	".debug_loc", ".debug_loclists", ".debug_macro", ".debug_macinfo", ".debug_pubnames",
	".debug_pubtypes", ".debug_gnu_pubnames", ".debug_gnu_pubtypes",
};

/* What of the file the addresses need (debugtrim.h). */
struct trim {
	bool on;
	size_t info, aranges, abbrev;  /* their sections */
	unsigned char *aranges_data, *abbrev_data;
	size_t aranges_size, abbrev_size;
	uint64_t last_unit;
	uint64_t next_unit;            /* the unit after it in .debug_info, or UINT64_MAX */
	unsigned char *whole_aranges;  /* the original's, when the copy is kept */
	size_t whole_aranges_size;
};

/* A worker's buffers. */
struct bufs {
	unsigned char *in, *out;     /* CHUNK bytes each */
	void *at_once;               /* a libdeflate decompressor, or NULL */
};

struct job {
	int in, out;
	struct piece *pieces;        /* the sections' data, biggest first */
	size_t n;
	pthread_mutex_t lock;
	size_t next;
	bool failed;
};

/* May the zlib stream whose header is h be inflated as raw deflate (the
 * method deflate, a window of at most 32 KiB, no preset dictionary, the
 * header's own check right)? */
static bool zlib_header(const unsigned char h[2])
{
	return (h[0] & 0x0f) == Z_DEFLATED && (h[0] >> 4) <= 7 && !(h[1] & 0x20) &&
	       ((unsigned)h[0] << 8 | h[1]) % 31 == 0;
}

/* Is t (a zlib stream's trailer, big-endian) the Adler-32 sum? */
static bool adler_is(const unsigned char t[4], uint32_t sum)
{
	return ((uint32_t)t[0] << 24 | (uint32_t)t[1] << 16 | (uint32_t)t[2] << 8 | t[3]) == sum;
}

/* Start inflating the zlib stream at in[0..*len) (its header parsed
 * here): false when it is not one inflated this way. */
static bool raw_init(z_stream *z, const unsigned char *in, uint64_t len)
{
	return len >= 6 && zlib_header(in) && inflateInit2(z, -MAX_WBITS) == Z_OK;
}

/* A libdeflate decompressor, or NULL: none, or PROFVIEW_INFLATE=zlib
 * (zlib's inflate then). */
static void *decompressor_new(void)
{
#if PROFVIEW_HAVE_LIBDEFLATE
	const char *how = getenv("PROFVIEW_INFLATE");

	return how && strcmp(how, "zlib") == 0 ? NULL : libdeflate_alloc_decompressor();
#else
	return NULL;
#endif
}

static void decompressor_free(void *d)
{
#if PROFVIEW_HAVE_LIBDEFLATE
	if (d)
		libdeflate_free_decompressor(d);
#else
	(void)d;
#endif
}

/* Inflate the zlib stream in[0..inlen) into out[0..outlen), which it
 * must fill exactly, with decompressor d (decompressor_new); false when
 * it is not such a stream (its Adler-32 checked either way). */
static bool inflate_buf(void *d, const unsigned char *in, uint64_t inlen, unsigned char *out,
			uint64_t outlen)
{
	z_stream z = { 0 };
	bool ok;

#if PROFVIEW_HAVE_LIBDEFLATE
	if (d)
		return libdeflate_zlib_decompress(d, in, inlen, out, outlen, NULL) ==
		       LIBDEFLATE_SUCCESS;
#else
	(void)d;
#endif
	if (inlen > UINT32_MAX || outlen > UINT32_MAX || !raw_init(&z, in, inlen))
		return false;
	z.next_in = (unsigned char *)in + 2;
	z.avail_in = (uInt)(inlen - 2);
	z.next_out = out;
	z.avail_out = (uInt)outlen;
	ok = inflate(&z, Z_FINISH) == Z_STREAM_END && z.avail_out == 0 && z.avail_in >= 4 &&
	     adler_is(z.next_in, checksum_adler32(1, out, outlen));
	inflateEnd(&z);
	return ok;
}

/* The next n bytes of piece p written from buf (its sum kept). */
static bool put(const struct job *j, struct piece *p, const unsigned char *buf, size_t n)
{
	if (!pv_pwrite_all(j->out, buf, n, p->out_off + p->written))
		return false;
	p->sum = checksum_crc32(p->sum, buf, n);
	p->written += n;
	return true;
}

/* Where a cut .debug_info piece ends, hdr the first 12 bytes of its last
 * unit: after that unit, or at the end of its room when hdr is not a
 * unit's header. */
static uint64_t cut_end(const struct piece *p, const unsigned char hdr[12])
{
	uint64_t size = debugtrim_unit_size(hdr);

	return size && size <= p->out_size - p->unit_at ? p->unit_at + size : p->out_size;
}

/* Has a cut .debug_info piece, done bytes of it written, all it needs?
 * Its length is known once its last unit's header is there. */
static bool cut_reached(const struct job *j, struct piece *p, uint64_t done)
{
	unsigned char hdr[12];

	if (p->unit_at == WHOLE)
		return false;
	if (p->until == 0 && done >= p->unit_at + sizeof hdr)
		p->until = pv_pread_all(j->out, hdr, sizeof hdr, p->out_off + p->unit_at)
				   ? cut_end(p, hdr)
				   : p->out_size;
	return p->until && done >= p->until;
}

/* A buffer of size bytes for inflating at once, or NULL: mapped, not
 * malloc'd, so that it is given back whole when unmapped (malloc would
 * keep it, and raise its threshold for mapping), its pages made at once
 * (they are all written). */
static unsigned char *buffer(uint64_t size)
{
	void *b = mmap(NULL, size + 1, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return b == MAP_FAILED ? NULL : b;
}

static void buffer_free(unsigned char *b, uint64_t size)
{
	if (b)
		munmap(b, size + 1);
}

/* The room a cut .debug_info piece is inflated into at once: up to the
 * unit after its last one (piece.enough), and a margin that libdeflate
 * may leave unwritten when it stops for want of room (it starts no
 * stored block, of 65,535 bytes at most, and no match that does not fit;
 * what it wrote before is the stream's); all of it when that is no less.
 * The stream's end and its Adler-32 are not reached then, as when zlib
 * streams a cut piece. */
#define CUT_MARGIN ((uint64_t)65536)

static uint64_t at_once_room(const struct piece *p)
{
	if (p->unit_at == WHOLE || p->enough == WHOLE || p->out_size <= CUT_MARGIN ||
	    p->enough >= p->out_size - CUT_MARGIN)
		return p->out_size;
	return p->enough + CUT_MARGIN;
}

/* Inflate in[0..p->in_size) into out[0..room) (at_once_room): the whole
 * piece, or, with less room, the cut piece's bytes up to its last unit's
 * end, p->until set either way for a cut piece.  false when the stream
 * is damaged or the unit does not end where the room allowed. */
static bool inflate_room(void *at_once, struct piece *p, const unsigned char *in,
			 unsigned char *out, uint64_t room)
{
	if (room == p->out_size) {
		if (!inflate_buf(at_once, in, p->in_size, out, p->out_size))
			return false;
		if (p->unit_at != WHOLE)
			p->until = p->unit_at + 12 <= p->out_size ? cut_end(p, out + p->unit_at)
								  : p->out_size;
		return true;
	}
#if PROFVIEW_HAVE_LIBDEFLATE
	if (libdeflate_zlib_decompress(at_once, in, p->in_size, out, room, NULL) !=
		    LIBDEFLATE_INSUFFICIENT_SPACE ||
	    p->unit_at + 12 > p->enough)
		return false;
	p->until = cut_end(p, out + p->unit_at);
	return p->until <= p->enough;
#else
	return false;
#endif
}

/* Inflate piece p in memory at once (a cut .debug_info up to the unit
 * after its last, at_once_room: still faster than streaming only what it
 * needs), and write it up to its cut: 1 done, 0 it cannot be (a damaged
 * stream), -1 it is to be streamed (no libdeflate, too big, no memory). */
static int inflate_at_once(const struct job *j, struct piece *p, void *at_once)
{
	uint64_t room = at_once_room(p);
	unsigned char *in, *out;
	bool ok, done;

	if (!at_once || p->out_size > MAX_AT_ONCE || p->in_size > MAX_AT_ONCE - p->out_size)
		return -1;
	in = buffer(p->in_size);
	out = buffer(room);
	if (!in || !out) {
		buffer_free(in, p->in_size);
		buffer_free(out, room);
		return -1;
	}
	ok = pv_pread_all(j->in, in, p->in_size, p->in_off);
	done = ok && inflate_room(at_once, p, in, out, room);
	if (ok && !done && room < p->out_size) {
		/* the unit after the last is not where .debug_aranges said:
		 * all of it then */
		buffer_free(out, room);
		room = p->out_size;
		if (!(out = buffer(room))) {
			buffer_free(in, p->in_size);
			return -1;
		}
		done = inflate_room(at_once, p, in, out, room);
	}
	ok = done && put(j, p, out, p->until ? p->until : p->out_size);
	buffer_free(in, p->in_size);
	buffer_free(out, room);
	return ok;
}

/* Copy or inflate one piece; false when it cannot be. */
static bool do_piece(const struct job *j, struct piece *p, const struct bufs *b)
{
	unsigned char *in = b->in, *out = b->out;
	uint64_t done = 0, at = p->in_off, left = p->in_size;
	z_stream z = { 0 };
	int zr = Z_OK;
	bool cut = false, ok;
	uint32_t sum = 1;
	int r;
	unsigned char trailer[4];

	if (p->mem)
		return put(j, p, p->mem, p->out_size);
	if (!p->inflate) {
		while (left) {
			size_t n = left < CHUNK ? (size_t)left : CHUNK;
			if (!pv_pread_all(j->in, in, n, at) || !put(j, p, in, n))
				return false;
			at += n;
			left -= n;
		}
		return true;
	}
	if ((r = inflate_at_once(j, p, b->at_once)) >= 0)
		return r;
	if (left < 6 || !pv_pread_all(j->in, in, 2, at) || !raw_init(&z, in, left))
		return false;
	at += 2;
	left -= 2;
	while (zr != Z_STREAM_END) {
		if (z.avail_in == 0 && left) {
			size_t n = left < CHUNK ? (size_t)left : CHUNK;
			if (!pv_pread_all(j->in, in, n, at))
				break;
			at += n;
			left -= n;
			z.next_in = in;
			z.avail_in = (uInt)n;
		}
		z.next_out = out;
		z.avail_out = CHUNK;
		zr = inflate(&z, Z_NO_FLUSH);
		if (zr != Z_OK && zr != Z_STREAM_END)
			break;
		size_t got = CHUNK - z.avail_out;
		if (got > p->out_size - done || !put(j, p, out, got))
			break;
		sum = checksum_adler32(sum, out, got);
		done += got;
		if ((cut = cut_reached(j, p, done)))
			break;
		if (zr == Z_OK && got == 0 && z.avail_in == 0 && !left)
			break; /* the input ended before the stream */
	}
	/* the trailer follows what the stream used of the input */
	ok = zr == Z_STREAM_END && done == p->out_size &&
	     at - z.avail_in + 4 <= p->in_off + p->in_size &&
	     pv_pread_all(j->in, trailer, 4, at - z.avail_in) && adler_is(trailer, sum);
	inflateEnd(&z);
	return cut || ok;
}

static void *worker(void *arg)
{
	struct job *j = arg;
	struct bufs b = { malloc(CHUNK), malloc(CHUNK), decompressor_new() };
	bool ok = b.in && b.out;

	for (;;) {
		size_t i;
		pthread_mutex_lock(&j->lock);
		if (!ok)
			j->failed = true;
		i = j->failed ? j->n : j->next++;
		pthread_mutex_unlock(&j->lock);
		if (i >= j->n)
			break;
		ok = do_piece(j, &j->pieces[i], &b);
	}
	free(b.in);
	free(b.out);
	decompressor_free(b.at_once);
	return NULL;
}

static int cmp_piece(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	return x->out_size > y->out_size ? -1 : x->out_size < y->out_size;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return a > 1 ? (v + a - 1) / a * a : v;
}

/* Is section s one of those a symbolizer never reads (unread[])? */
static bool is_unread(const char *names, size_t nnames, const Elf64_Shdr *s)
{
	if (!names || s->sh_name >= nnames)
		return false;
	for (size_t k = 0; k < sizeof unread / sizeof *unread; k++)
		if (strcmp(names + s->sh_name, unread[k]) == 0)
			return true;
	return false;
}

/* The piece of section i as the trim has it, when it has one. */
static bool trimmed_piece(const struct trim *t, size_t i, struct piece *p)
{
	if (!t->on)
		return false;
	if (i == t->aranges || i == t->abbrev) {
		p->inflate = false;
		p->mem = i == t->aranges ? t->aranges_data : t->abbrev_data;
		p->out_size = i == t->aranges ? t->aranges_size : t->abbrev_size;
		return true;
	}
	if (i == t->info) {
		p->unit_at = t->last_unit;
		p->enough = t->next_unit;
	}
	return false;
}

/* The new section headers and the pieces to copy; the copy's size in
 * *total, or false when this file is not one to decompress here.  names:
 * the section names (nnames bytes), or NULL. */
static bool plan(int fd, const Elf64_Ehdr *eh, uint64_t fsize, Elf64_Shdr *sh,
		 const char *names, size_t nnames, const struct trim *t, struct piece *pieces,
		 size_t *npieces, uint64_t *total)
{
	uint64_t off = sizeof *eh;
	bool any = false;

	if (eh->e_phnum)
		off = eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr);
	*npieces = 0;
	for (size_t i = 0; i < eh->e_shnum; i++) {
		Elf64_Shdr *s = &sh[i];
		struct piece p = { .in_off = s->sh_offset, .in_size = s->sh_size,
				   .out_size = s->sh_size, .unit_at = WHOLE, .enough = WHOLE,
				   .sec = i };
		if (s->sh_type != SHT_NOBITS && s->sh_type != SHT_NULL && is_unread(names, nnames, s)) {
			s->sh_type = SHT_NOBITS;
			s->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
			any = true;
		}
		if (s->sh_type == SHT_NOBITS || s->sh_type == SHT_NULL || s->sh_size == 0) {
			s->sh_offset = s->sh_type == SHT_NULL ? 0 : align_up(off, s->sh_addralign);
			continue;
		}
		if (s->sh_offset > fsize || s->sh_size > fsize - s->sh_offset ||
		    s->sh_addralign > 65536)
			return false;
		if (s->sh_flags & SHF_COMPRESSED) {
			Elf64_Chdr ch;
			if (s->sh_size < sizeof ch || !pv_pread_all(fd, &ch, sizeof ch, s->sh_offset) ||
			    ch.ch_type != ELFCOMPRESS_ZLIB || ch.ch_size > ((uint64_t)1 << 36) ||
			    ch.ch_addralign > 65536)
				return false; /* (no debug section is 64 GB) */
			p = (struct piece){ .in_off = s->sh_offset + sizeof ch,
					    .in_size = s->sh_size - sizeof ch, .out_size = ch.ch_size,
					    .inflate = true, .unit_at = WHOLE, .enough = WHOLE,
					    .sec = i };
			s->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
			s->sh_size = ch.ch_size;
			s->sh_addralign = ch.ch_addralign;
			any = true;
		}
		if (trimmed_piece(t, i, &p))
			s->sh_size = p.out_size;
		off = align_up(off, s->sh_addralign);
		s->sh_offset = off;
		p.out_off = off;
		off += p.out_size;
		pieces[(*npieces)++] = p;
	}
	*total = align_up(off, 8) + (uint64_t)eh->e_shnum * sizeof *sh;
	return any;
}

static int cmp_piece_at(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;

	return x->out_off < y->out_off ? -1 : x->out_off > y->out_off;
}

/* sum, the CRC-32 of a file's first *at bytes, continued with zeros up to
 * off, then len bytes whose CRC-32 is part; *at becomes off + len. */
static uint32_t sum_join(uint32_t sum, uint64_t *at, uint64_t off, uint32_t part, uint64_t len)
{
	sum = checksum_crc32_zeros(sum, off - *at);
	*at = off + len;
	return checksum_crc32_combine(sum, part, len);
}

/* The CRC-32 of the copy, total bytes: the ELF header at 0, the program
 * headers (ph_sum, ph_len bytes) at e_phoff, the pieces as written, the
 * section headers at the end, zeros between; the pieces sorted by
 * offset. */
static uint32_t copy_sum(const Elf64_Ehdr *eh, uint32_t ph_sum, uint64_t ph_len,
			 const Elf64_Shdr *sh, struct piece *pieces, size_t n, uint64_t total)
{
	uint64_t sh_len = (uint64_t)eh->e_shnum * sizeof *sh, at = 0;
	uint32_t sum = 0;

	qsort(pieces, n, sizeof *pieces, cmp_piece_at);
	sum = sum_join(sum, &at, 0, checksum_crc32(0, (const unsigned char *)eh, sizeof *eh),
		       sizeof *eh);
	if (ph_len)
		sum = sum_join(sum, &at, eh->e_phoff, ph_sum, ph_len);
	for (size_t i = 0; i < n; i++)
		if (pieces[i].written)
			sum = sum_join(sum, &at, pieces[i].out_off, pieces[i].sum, pieces[i].written);
	return sum_join(sum, &at, total - sh_len,
			checksum_crc32(0, (const unsigned char *)sh, sh_len), sh_len);
}

/* Write the copy of fd (its headers read) into out; its CRC-32 in *sum. */
static bool write_copy(int fd, int out, Elf64_Ehdr *eh, Elf64_Shdr *sh, struct piece *pieces,
		       size_t npieces, uint64_t total, uint32_t *sum)
{
	struct job j = { .in = fd, .out = out, .pieces = pieces, .n = npieces };
	uint64_t shoff = total - (uint64_t)eh->e_shnum * sizeof *sh;
	size_t ph_len = (size_t)eh->e_phnum * sizeof(Elf64_Phdr);
	uint32_t ph_sum = 0;
	pthread_t helper;
	bool helping;

	if (ftruncate(out, (off_t)total) != 0)
		return false;
	if (ph_len) {
		void *ph = malloc(ph_len);
		bool ok = ph && pv_pread_all(fd, ph, ph_len, eh->e_phoff) &&
			  pv_pwrite_all(out, ph, ph_len, eh->e_phoff);
		if (ok)
			ph_sum = checksum_crc32(0, ph, ph_len);
		free(ph);
		if (!ok)
			return false;
	}
	eh->e_shoff = shoff;
	if (!pv_pwrite_all(out, eh, sizeof *eh, 0))
		return false;
	qsort(pieces, npieces, sizeof *pieces, cmp_piece);
	for (size_t i = 0; i < npieces; i++) {
		/* (again from nothing when a first try failed) */
		pieces[i].written = 0;
		pieces[i].sum = 0;
		pieces[i].until = 0;
	}
	pthread_mutex_init(&j.lock, NULL);
	helping = npieces > 1 && pthread_create(&helper, NULL, worker, &j) == 0;
	worker(&j);
	if (helping)
		pthread_join(helper, NULL);
	pthread_mutex_destroy(&j.lock);
	/* a cut .debug_info ends after its last unit: the rest of its room
	 * in the copy was never written */
	for (size_t i = 0; i < npieces; i++)
		if (pieces[i].unit_at != WHOLE && pieces[i].until)
			sh[pieces[i].sec].sh_size = pieces[i].until;
	if (j.failed || !pv_pwrite_all(out, sh, (size_t)eh->e_shnum * sizeof *sh, shoff))
		return false;
	*sum = copy_sum(eh, ph_sum, ph_len, sh, pieces, npieces, total);
	return true;
}

/* The data of section s, decompressed, in memory (malloc'd, *size bytes);
 * NULL when it cannot be read or is bigger than MAX_IN_MEMORY. */
static unsigned char *section_bytes(int fd, const Elf64_Shdr *s, uint64_t fsize, size_t *size)
{
	unsigned char *buf = NULL, *in = NULL;
	Elf64_Chdr ch;
	bool ok = false;

	if (s->sh_type == SHT_NOBITS || s->sh_offset > fsize || s->sh_size > fsize - s->sh_offset ||
	    s->sh_size > MAX_IN_MEMORY)
		return NULL;
	if (!(s->sh_flags & SHF_COMPRESSED)) {
		buf = malloc(s->sh_size ? s->sh_size : 1);
		*size = s->sh_size;
		if (buf && pv_pread_all(fd, buf, s->sh_size, s->sh_offset))
			return buf;
		free(buf);
		return NULL;
	}
	if (s->sh_size < sizeof ch || !pv_pread_all(fd, &ch, sizeof ch, s->sh_offset) ||
	    ch.ch_type != ELFCOMPRESS_ZLIB || ch.ch_size > MAX_IN_MEMORY)
		return NULL;
	buf = malloc(ch.ch_size ? ch.ch_size : 1);
	in = malloc(s->sh_size - sizeof ch);
	if (buf && in && pv_pread_all(fd, in, s->sh_size - sizeof ch, s->sh_offset + sizeof ch)) {
		void *d = decompressor_new();
		ok = inflate_buf(d, in, s->sh_size - sizeof ch, buf, ch.ch_size);
		decompressor_free(d);
	}
	free(in);
	if (!ok) {
		free(buf);
		return NULL;
	}
	*size = ch.ch_size;
	return buf;
}

/* The index of the section named name, or 0. */
static size_t section_named(const Elf64_Ehdr *eh, const Elf64_Shdr *sh, const char *names,
			    size_t nnames, const char *name)
{
	for (size_t i = 1; i < eh->e_shnum; i++)
		if (sh[i].sh_name < nnames && strcmp(names + sh[i].sh_name, name) == 0)
			return i;
	return 0;
}

static void trim_free(struct trim *t)
{
	free(t->abbrev_data);
	free(t->aranges_data);
	free(t->whole_aranges);
	*t = (struct trim){ 0 };
}

/* The trim for addresses addrs[0..n) (sorted), when this file allows one
 * (debugtrim.h); t->on false otherwise.  With keep, the original's whole
 * .debug_aranges too (debugcache.h). */
static void plan_trim(int fd, const Elf64_Ehdr *eh, const Elf64_Shdr *sh, uint64_t fsize,
		      const char *names, size_t nnames, const uint64_t *addrs, size_t n,
		      bool keep, struct trim *t)
{
	*t = (struct trim){ 0 };
	if (!names || !n)
		return;
	t->info = section_named(eh, sh, names, nnames, ".debug_info");
	t->aranges = section_named(eh, sh, names, nnames, ".debug_aranges");
	t->abbrev = section_named(eh, sh, names, nnames, ".debug_abbrev");
	if (!t->info || !t->aranges || !t->abbrev ||
	    section_named(eh, sh, names, nnames, ".debug_types") ||
	    !(sh[t->info].sh_flags & SHF_COMPRESSED))
		return;
	t->abbrev_data = section_bytes(fd, &sh[t->abbrev], fsize, &t->abbrev_size);
	if (!t->abbrev_data || !debugtrim_units_self_contained(t->abbrev_data, t->abbrev_size))
		goto no;
	t->aranges_data = section_bytes(fd, &sh[t->aranges], fsize, &t->aranges_size);
	if (!t->aranges_data)
		goto no;
	if (keep) {
		t->whole_aranges = malloc(t->aranges_size ? t->aranges_size : 1);
		if (!t->whole_aranges)
			goto no;
		memcpy(t->whole_aranges, t->aranges_data, t->aranges_size);
		t->whole_aranges_size = t->aranges_size;
	}
	if (!debugtrim_last_unit(t->aranges_data, t->aranges_size, addrs, n, &t->last_unit))
		goto no;
	t->next_unit = debugtrim_unit_after(t->aranges_data, t->aranges_size, t->last_unit);
	if (!debugtrim_aranges(t->aranges_data, &t->aranges_size, addrs, n, &t->last_unit))
		goto no;
	t->on = true;
	return;
no:
	trim_free(t);
}

/* The section names of the file (its section name table, malloc'd,
 * *nnames bytes, the last a NUL), or NULL. */
static char *section_names(int fd, const Elf64_Ehdr *eh, const Elf64_Shdr *sh, uint64_t fsize,
			   size_t *nnames)
{
	const Elf64_Shdr *s = &sh[eh->e_shstrndx];
	char *names;

	if (s->sh_type != SHT_STRTAB || (s->sh_flags & SHF_COMPRESSED) || s->sh_size == 0 ||
	    s->sh_size > (1 << 20) || s->sh_offset > fsize || s->sh_size > fsize - s->sh_offset)
		return NULL;
	names = malloc(s->sh_size);
	if (!names || !pv_pread_all(fd, names, s->sh_size, s->sh_offset) ||
	    names[s->sh_size - 1] != '\0') {
		free(names);
		return NULL;
	}
	*nnames = s->sh_size;
	return names;
}

/* Does a note section of the file hold the build-id id[0..len)? */
static bool has_build_id(int fd, const Elf64_Shdr *sh, size_t nsh, const unsigned char *id,
			 size_t len)
{
	for (size_t i = 0; i < nsh; i++) {
		unsigned char buf[256];
		size_t size = sh[i].sh_size, at = 0;
		if (sh[i].sh_type != SHT_NOTE || size > sizeof buf ||
		    (sh[i].sh_flags & SHF_COMPRESSED) || !pv_pread_all(fd, buf, size, sh[i].sh_offset))
			continue;
		while (size - at >= 12) {
			uint32_t nsz, dsz, type;
			memcpy(&nsz, buf + at, 4);
			memcpy(&dsz, buf + at + 4, 4);
			memcpy(&type, buf + at + 8, 4);
			size_t name = at + 12, desc = name + ((nsz + 3u) & ~3u);
			if (desc > size || dsz > size - desc)
				break;
			if (type == NT_GNU_BUILD_ID && nsz == 4 && memcmp(buf + name, "GNU", 4) == 0 &&
			    dsz == len && memcmp(buf + desc, id, len) == 0)
				return true;
			at = desc + ((dsz + 3u) & ~3u);
		}
	}
	return false;
}

/* The ELF header and section headers (*sh, malloc'd) of fd, *st its
 * status; false when it is not a file this copies or, with id, has not
 * that build-id. */
static bool read_headers(int fd, const unsigned char *id, size_t len, struct stat *st,
			 Elf64_Ehdr *eh, Elf64_Shdr **sh)
{
	*sh = NULL;
	if (fstat(fd, st) != 0 || !pv_pread_all(fd, eh, sizeof *eh, 0) ||
	    memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_shentsize != sizeof **sh ||
	    eh->e_shnum == 0 || eh->e_shstrndx >= eh->e_shnum || eh->e_ehsize != sizeof *eh ||
	    (eh->e_phnum && (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff < sizeof *eh)) ||
	    eh->e_shoff > (uint64_t)st->st_size ||
	    (uint64_t)eh->e_shnum * sizeof **sh > (uint64_t)st->st_size - eh->e_shoff)
		return false;
	*sh = malloc(eh->e_shnum * sizeof **sh);
	if (!*sh || !pv_pread_all(fd, *sh, eh->e_shnum * sizeof **sh, eh->e_shoff) ||
	    (id && !has_build_id(fd, *sh, eh->e_shnum, id, len))) {
		free(*sh);
		*sh = NULL;
		return false;
	}
	return true;
}

/* Where the copy is made: a new file to keep (*tmp its name) when the
 * build-id is known and caching is on, else a memfd. */
static int copy_file(const unsigned char *id, size_t len, char **tmp)
{
	int out = id ? debugcache_create(id, len, tmp) : -1;

	if (!id)
		*tmp = NULL;
	return out >= 0 ? out : memfd_create("profview-debuginfo", MFD_CLOEXEC);
}

int debugfile_decompressed(int fd, const unsigned char *id, size_t len, const uint64_t *addrs,
			   size_t naddrs)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	struct piece *pieces = NULL;
	struct trim trim = { 0 };
	char *names = NULL, *tmp = NULL;
	size_t npieces, nnames = 0;
	uint64_t total;
	uint32_t sum = 0;
	struct stat st;
	int out = -1;

	if (!read_headers(fd, id, len, &st, &eh, &sh))
		goto out;
	if (id && (out = debugcache_open(id, len, addrs, naddrs)) >= 0)
		goto out;
	pieces = malloc(eh.e_shnum * sizeof *pieces);
	names = section_names(fd, &eh, sh, (uint64_t)st.st_size, &nnames);
	plan_trim(fd, &eh, sh, (uint64_t)st.st_size, names, nnames, addrs, naddrs, id != NULL,
		  &trim);
	if (!pieces ||
	    !plan(fd, &eh, (uint64_t)st.st_size, sh, names, nnames, &trim, pieces, &npieces, &total))
		goto out;
	out = copy_file(id, len, &tmp);
	if (out >= 0 && !write_copy(fd, out, &eh, sh, pieces, npieces, total, &sum)) {
		close(out);
		out = -1;
		if (tmp) {
			/* the file to keep could not be written (a full disk):
			 * the copy in memory then */
			unlink(tmp);
			free(tmp);
			tmp = NULL;
			out = copy_file(NULL, 0, &tmp);
			if (out >= 0 && !write_copy(fd, out, &eh, sh, pieces, npieces, total, &sum)) {
				close(out);
				out = -1;
			}
		}
	}
	if (tmp)
		debugcache_commit(out, tmp, id, len, total, sum,
				  trim.on ? trim.last_unit : DEBUGCACHE_WHOLE, trim.whole_aranges,
				  trim.whole_aranges_size);
out:
	free(sh);
	free(pieces);
	free(names);
	trim_free(&trim);
	return out;
}

int debugfile_by_build_id(const unsigned char *id, size_t len, const uint64_t *addrs,
			  size_t naddrs, char **path)
{
	char name[sizeof "/usr/lib/debug/.build-id//.debug" + 2 * 64 + 1];
	size_t o;
	int fd, copy;

	*path = NULL;
	if (len < 2 || len > 64)
		return -1;
	o = (size_t)snprintf(name, sizeof name, "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (size_t i = 1; i < len; i++)
		o += (size_t)snprintf(name + o, sizeof name - o, "%02x", id[i]);
	snprintf(name + o, sizeof name - o, ".debug");
	fd = open(name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	copy = debugfile_decompressed(fd, id, len, addrs, naddrs);
	close(fd);
	if (copy >= 0 && !(*path = strdup(name))) {
		close(copy);
		return -1;
	}
	return copy;
}
