/* vdso.c - copy this process's vDSO into a memory file
 *
 * The kernel maps the same vDSO image into every process, and traces are
 * mostly read on the machine that took them: where the build-ids agree,
 * the analyzer's own vDSO is the traced program's, with its symbols and
 * its CFI (clock_gettime() is where many programs spend their time).
 */
#include "vdso.h"

#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

/* Size of the ELF image at base: the furthest byte its headers name. */
static size_t image_size(const unsigned char *base)
{
	const ElfW(Ehdr) *eh = (const void *)base;
	size_t end;

	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return 0;
	end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	const ElfW(Phdr) *ph = (const void *)(base + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_offset + ph[i].p_filesz > end)
			end = ph[i].p_offset + ph[i].p_filesz;
	return end;
}

/* The build-id note of the image, as hex, into out. */
static void image_build_id(const unsigned char *base, char *out, size_t outsz)
{
	const ElfW(Ehdr) *eh = (const void *)base;
	const ElfW(Phdr) *ph = (const void *)(base + eh->e_phoff);

	out[0] = '\0';
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type != PT_NOTE)
			continue;
		const unsigned char *n = base + ph[i].p_offset, *end = n + ph[i].p_filesz;
		while (n + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const void *)n;
			const unsigned char *name = n + sizeof *nh;
			const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);
			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0) {
				size_t o = 0;
				for (size_t k = 0; k < nh->n_descsz && o + 3 <= outsz; k++)
					o += (size_t)snprintf(out + o, outsz - o, "%02x", desc[k]);
				return;
			}
			n = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

int vdso_open(const char *build_id, uint64_t mapping_size)
{
	const unsigned char *base = (const void *)getauxval(AT_SYSINFO_EHDR);
	char mine[2 * 64 + 1];
	size_t size;
	int fd;

	if (!base)
		return -1;
	size = image_size(base);
	if (size == 0 || size > (64u << 20))
		return -1;
	image_build_id(base, mine, sizeof mine);
	if (build_id && build_id[0]) {
		if (strcmp(build_id, mine) != 0)
			return -1;
	} else if (mapping_size < size || mapping_size > size + 2 * (uint64_t)getpagesize()) {
		return -1;
	}
	fd = memfd_create("vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	for (size_t done = 0; done < size;) {
		ssize_t n = write(fd, base + done, size - done);
		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	return fd;
}
