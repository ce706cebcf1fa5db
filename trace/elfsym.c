/* elfsym.c - does an ELF file define a function? (see elfsym.h) */
#include "elfsym.h"

#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Section headers or tables larger than this are not read. */
#define ELFSYM_MAX_TABLE (64u << 20)

/* n bytes at off of the file, in a new buffer (NUL-terminated), or NULL. */
static void *elfsym_read(int fd, uint64_t size, uint64_t off, uint64_t n)
{
	char *buf;

	if (n > ELFSYM_MAX_TABLE || off > size || n > size - off || !(buf = malloc(n + 1)))
		return NULL;
	if (pread(fd, buf, n, (off_t)off) != (ssize_t)n) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	return buf;
}

/* Does the symbol table sh (its strings in section sh->sh_link) define
 * the function name? */
static bool elfsym_table(int fd, uint64_t size, const Elf64_Shdr *sh, const Elf64_Shdr *str,
			 const char *name)
{
	Elf64_Sym *syms = elfsym_read(fd, size, sh->sh_offset, sh->sh_size);
	char *strs = elfsym_read(fd, size, str->sh_offset, str->sh_size);
	bool found = false;

	for (uint64_t i = 0; syms && strs && i < sh->sh_size / sizeof *syms && !found; i++) {
		const Elf64_Sym *s = &syms[i];

		found = ELF64_ST_TYPE(s->st_info) == STT_FUNC && s->st_shndx != SHN_UNDEF &&
			s->st_name < str->sh_size && strcmp(strs + s->st_name, name) == 0;
	}
	free(syms);
	free(strs);
	return found;
}

int pv_elf_defines(const char *path, const char *name)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || pread(fd, &eh, sizeof eh, 0) != sizeof eh ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof *sh || eh.e_shnum == 0) {
		goto out;
	}
	sh = elfsym_read(fd, (uint64_t)st.st_size, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof *sh);
	if (!sh)
		goto out;
	ret = 0;
	for (unsigned i = 0; i < eh.e_shnum && !ret; i++)
		if ((sh[i].sh_type == SHT_DYNSYM || sh[i].sh_type == SHT_SYMTAB) && sh[i].sh_link < eh.e_shnum &&
		    sh[i].sh_entsize == sizeof(Elf64_Sym))
			ret = elfsym_table(fd, (uint64_t)st.st_size, &sh[i], &sh[sh[i].sh_link], name);
out:
	free(sh);
	close(fd);
	return ret;
}
