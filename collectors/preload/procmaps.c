/* procmaps.c - the lines of /proc/self/maps, and the build ids of ELF
 * objects, for mappings.c
 *
 * What a line of the maps says and what an object's notes say, apart from
 * what mappings.c does with them: no state, nothing kept between calls.
 * None of it is signal-safe (procmaps_read allocates; the others call
 * nothing that blocks, but are not called from a handler).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procmaps.h"

/* Finds NT_GNU_BUILD_ID in a note area; copies it to out.  Returns its
 * length (capped at PROCMAPS_BUILD_ID_MAX) or 0. */
uint8_t procmaps_note_build_id(const unsigned char *p, size_t len, uint8_t *out)
{
	size_t off = 0;

	while (off + sizeof(Elf64_Nhdr) <= len) {
		Elf64_Nhdr nh;
		size_t name_off, desc_off, next;

		memcpy(&nh, p + off, sizeof(nh));
		name_off = off + sizeof(nh);
		desc_off = name_off + (((size_t)nh.n_namesz + 3) & ~(size_t)3);
		next = desc_off + (((size_t)nh.n_descsz + 3) & ~(size_t)3);
		if (next > len || next <= off)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(p + name_off, "GNU", 4) == 0 && nh.n_descsz > 0) {
			size_t n = nh.n_descsz < PROCMAPS_BUILD_ID_MAX ? nh.n_descsz
								       : PROCMAPS_BUILD_ID_MAX;
			memcpy(out, p + desc_off, n);
			return (uint8_t)n;
		}
		off = next;
	}
	return 0;
}

uint8_t procmaps_loaded_build_id(const struct dl_phdr_info *info, uint8_t *out)
{
	uint8_t len = 0;

	for (int i = 0; i < info->dlpi_phnum && len == 0; i++)
		if (info->dlpi_phdr[i].p_type == PT_NOTE)
			len = procmaps_note_build_id(
				(const unsigned char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr),
				info->dlpi_phdr[i].p_memsz, out);
	return len;
}

/* Reads the build id from an ELF file's PT_NOTE segments. */
uint8_t procmaps_file_build_id(const char *path, uint8_t *out)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	unsigned char notes[4096];
	uint8_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr))
		goto out;
	for (int i = 0; i < eh.e_phnum && len == 0; i++) {
		ssize_t n;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type != PT_NOTE)
			continue;
		n = pread(fd, notes, ph.p_filesz < sizeof(notes) ? ph.p_filesz : sizeof(notes),
			  (off_t)ph.p_offset);
		if (n > 0)
			len = procmaps_note_build_id(notes, (size_t)n, out);
	}
out:
	close(fd);
	return len;
}

/* Reads all of /proc/self/maps into a malloc'd NUL-terminated buffer. */
char *procmaps_read(void)
{
	size_t cap = 16384, len = 0;
	char *buf = malloc(cap);
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (buf == NULL || fd < 0)
		goto fail;
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);
			if (nb == NULL)
				goto fail;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return NULL;
}

/* Reads the hex number at *p and the character after it, which must be
 * sep.  Returns 0, with *p past the separator, or -1. */
static int procmaps_hex(const char **p, char sep, unsigned long long *v)
{
	const char *s = *p;
	unsigned long long x = 0;
	int digits = 0;

	for (;; s++, digits++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' : *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 : -1;

		if (d < 0)
			break;
		if (digits == 16)
			return -1;
		x = x << 4 | (unsigned)d;
	}
	if (digits == 0 || *s != sep)
		return -1;
	*v = x;
	*p = s + 1;
	return 0;
}

/* Past the next field of a maps line and the blanks after it. */
static const char *procmaps_skip_field(const char *s)
{
	while (*s != '\0' && *s != '\n' && *s != ' ')
		s++;
	while (*s == ' ')
		s++;
	return s;
}

/* Splits a line of /proc/self/maps ("start-end perms offset dev inode
 * path", the path absent or after blanks) by hand: sscanf made every
 * line cost a few microseconds, paid by every process at its start and
 * end.  Returns 0 with the fields, or -1 for a line not of that form. */
int procmaps_split(const char *line, unsigned long long *start, unsigned long long *end,
		   char perms[5], unsigned long long *pgoff, const char **path)
{
	const char *s = line;

	if (procmaps_hex(&s, '-', start) != 0 || procmaps_hex(&s, ' ', end) != 0)
		return -1;
	for (int i = 0; i < 4; i++, s++) {
		if (*s == '\0' || *s == '\n' || *s == ' ')
			return -1;
		perms[i] = *s;
	}
	perms[4] = '\0';
	if (*s++ != ' ' || procmaps_hex(&s, ' ', pgoff) != 0)
		return -1;
	s = procmaps_skip_field(procmaps_skip_field(s)); /* device, inode */
	*path = s;
	return 0;
}

/* Parses a line of /proc/self/maps.  Returns 1 when it is executable, with
 * its fields, else 0. */
int procmaps_parse(const char *line, unsigned long long *start, unsigned long long *end,
		   unsigned long long *pgoff, const char **path)
{
	char perms[5];

	return procmaps_split(line, start, end, perms, pgoff, path) == 0 && perms[2] == 'x';
}

/* The path of a maps line as the file is named: the kernel shows a
 * newline in a name as "\012" (and nothing else escaped, a backslash
 * neither), so such a path is decoded when the decoded name is a file and
 * the shown one is not.  Returns path itself or buf (of cap bytes). */
const char *procmaps_unescape(const char *path, char *buf, size_t cap)
{
	size_t k = 0;

	if (strstr(path, "\\012") == NULL || strlen(path) >= cap)
		return path;
	for (const char *p = path; *p != '\0'; p++) {
		if (strncmp(p, "\\012", 4) == 0) {
			buf[k++] = '\n';
			p += 3;
		} else {
			buf[k++] = *p;
		}
	}
	buf[k] = '\0';
	return access(buf, F_OK) == 0 || access(path, F_OK) != 0 ? buf : path;
}
