/* rawsynth.c - a raw trace with a sample at each given address of a
 * program, for tests that must not depend on where real samples land
 *
 * usage: rawsynth OUT PROGRAM [VADDR...]
 *
 * Writes OUT, a frame-pointer trace of one thread of a process that mapped
 * PROGRAM's executable segments (a PIE at 0x555555554000), with one
 * sample per VADDR (hexadecimal ELF virtual addresses of PROGRAM; read from
 * standard input, one per line, when none is given) whose only frame is
 * that address, each weighing a millisecond.  PROGRAM is read with libc
 * alone (elf.h).
 *
 * A line of standard input may also give a whole frame-pointer sample, as
 * the collector records it: "PC CANDIDATE RETURN...", the interrupted
 * address, the leaf candidate (the word at the stack pointer when it points
 * into code, else 0; see raw.h) and the return addresses the frame-pointer
 * walk found, all ELF virtual addresses of PROGRAM (0 stays 0).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rawbuild.h"

#define PIE_BASE 0x555555554000ull
#define MAX_FRAMES 64

static void die(const char *what)
{
	fprintf(stderr, "rawsynth: %s: %s\n", what, errno ? strerror(errno) : "bad input");
	exit(1);
}

/* The build-id note of the program, into id; returns its length. */
static size_t build_id(int fd, const Elf64_Phdr *ph, unsigned char *id, size_t cap)
{
	unsigned char buf[4096];
	size_t off = 0, n;

	if (ph->p_filesz > sizeof buf)
		return 0;
	n = (size_t)pread(fd, buf, ph->p_filesz, (off_t)ph->p_offset);
	while (off + sizeof(Elf64_Nhdr) <= n) {
		Elf64_Nhdr nh;
		size_t desc;

		memcpy(&nh, buf + off, sizeof nh);
		desc = off + sizeof nh + ((nh.n_namesz + 3) & ~3u);
		if (desc + nh.n_descsz > n)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && nh.n_descsz <= cap) {
			memcpy(id, buf + desc, nh.n_descsz);
			return nh.n_descsz;
		}
		off = desc + ((nh.n_descsz + 3) & ~3u);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct rawbuf r = { 0 };
	unsigned char id[31];
	size_t idlen = 0, nsamples = 0;
	char exe[PATH_MAX], line[1024];
	Elf64_Ehdr eh;
	uint64_t base;
	FILE *out;
	int fd;

	if (argc < 3) {
		fprintf(stderr, "usage: rawsynth OUT PROGRAM [VADDR...]\n");
		return 2;
	}
	if (!realpath(argv[2], exe))
		die(argv[2]);
	fd = open(exe, O_RDONLY);
	if (fd < 0 || pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
		die(exe);
	base = eh.e_type == ET_DYN ? PIE_BASE : 0;
	rb_header(&r, exe, 1000000);
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
			die(exe);
		if (ph.p_type == PT_NOTE && !idlen)
			idlen = build_id(fd, &ph, id, sizeof id);
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		uint64_t start, end;

		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph)
			die(exe);
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		start = base + (ph.p_vaddr & ~0xfffull);
		end = (base + ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffull;
		rb_mapping(&r, start, end, ph.p_offset & ~0xfffull, exe);
		if (idlen) {
			/* the record just written: set its build-id */
			struct raw_mapping *m = (struct raw_mapping *)(r.b + r.len -
				raw_pad((uint32_t)strlen(exe) + 1) - sizeof *m);
			m->build_id_len = (uint8_t)idlen;
			memcpy(m->build_id, id, idlen);
		}
	}
	close(fd);
	rb_thread(&r, 4242, "synth");
	for (int i = 3;; i++) {
		const char *s;
		uint64_t frames[MAX_FRAMES];
		uint32_t n = 0;
		char *end;

		if (argc > 3) {
			if (i >= argc)
				break;
			s = argv[i];
		} else {
			if (!fgets(line, sizeof line, stdin))
				break;
			s = line;
		}
		for (;;) {
			uint64_t v;

			while (*s == ' ' || *s == '\t')
				s++;
			if (*s == '\0' || *s == '\n')
				break;
			if (n == MAX_FRAMES)
				die("too many frames on a line");
			errno = 0;
			v = strtoull(s, &end, 16);
			if (errno || end == s)
				die(s);
			/* the leaf candidate 0 is "none", not an address */
			frames[n] = v == 0 && n == 1 ? 0 : base + v;
			n++;
			s = end;
		}
		if (n == 0)
			die("an empty line");
		if (n == 1)
			frames[n++] = 0; /* no leaf candidate */
		rb_sample(&r, 4242, 0, frames, n, 1000000000ull + nsamples, 1000000);
		nsamples++;
	}
	rb_end(&r, 2000000000ull, nsamples, 0);
	out = fopen(argv[1], "wb");
	if (!out || fwrite(r.b, 1, r.len, out) != r.len || fclose(out) != 0)
		die(argv[1]);
	free(r.b);
	return 0;
}
