/* test-debugfile.c - the decompressed copy of a debug file is the file
 *
 * The separate debug files of this process's modules with compressed
 * sections (libc's from libc6-dbg, when installed; the test skips without
 * one): the copy debugfile_by_build_id makes has the same ELF header but
 * for where its section headers are, the same program headers, the same
 * sections in the same order with the same names, types, addresses and
 * links, none compressed, and each section's data is what libelf
 * decompresses of the original.  A copy asked for with another build-id
 * is refused.
 */
#include "check.h"
#include "debugfile.h"

#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

static int files, sections, compressed;

static void compare(const char *path, int copyfd)
{
	int fd = open(path, O_RDONLY);
	Elf *a = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf *b = elf_begin(copyfd, ELF_C_READ, NULL);
	GElf_Ehdr ea, eb;
	size_t na, nb, pa, pb;

	CHECK(a && b && gelf_getehdr(a, &ea) && gelf_getehdr(b, &eb));
	if (!a || !b)
		goto out;
	CHECK(elf_getshdrnum(a, &na) == 0 && elf_getshdrnum(b, &nb) == 0 && na == nb);
	CHECK(elf_getphdrnum(a, &pa) == 0 && elf_getphdrnum(b, &pb) == 0 && pa == pb);
	CHECK(memcmp(ea.e_ident, eb.e_ident, EI_NIDENT) == 0 && ea.e_type == eb.e_type &&
	      ea.e_machine == eb.e_machine && ea.e_shstrndx == eb.e_shstrndx);
	for (size_t i = 0; i < pa && i < pb; i++) {
		GElf_Phdr x, y;
		CHECK(gelf_getphdr(a, (int)i, &x) && gelf_getphdr(b, (int)i, &y) &&
		      memcmp(&x, &y, sizeof x) == 0);
	}
	for (size_t i = 1; i < na && i < nb; i++) {
		Elf_Scn *sa = elf_getscn(a, i), *sb = elf_getscn(b, i);
		GElf_Shdr x, y;
		CHECK(gelf_getshdr(sa, &x) && gelf_getshdr(sb, &y));
		CHECK(x.sh_name == y.sh_name && x.sh_type == y.sh_type && x.sh_addr == y.sh_addr &&
		      x.sh_link == y.sh_link && x.sh_info == y.sh_info && x.sh_entsize == y.sh_entsize);
		CHECK(!(y.sh_flags & SHF_COMPRESSED));
		CHECK((x.sh_flags & ~(GElf_Xword)SHF_COMPRESSED) == y.sh_flags);
		if (x.sh_flags & SHF_COMPRESSED) {
			compressed++;
			CHECK_EQ(elf_compress(sa, 0, 0), 1);
			gelf_getshdr(sa, &x);
		}
		sections++;
		if (x.sh_type == SHT_NOBITS)
			continue;
		Elf_Data *da = elf_rawdata(sa, NULL), *db = elf_rawdata(sb, NULL);
		if (x.sh_flags & SHF_COMPRESSED || elf_getdata(sa, NULL) != NULL)
			da = elf_getdata(sa, NULL);
		CHECK(da && db && da->d_size == db->d_size && x.sh_size == y.sh_size);
		if (da && db && da->d_size == db->d_size)
			CHECK(memcmp(da->d_buf, db->d_buf, da->d_size) == 0);
	}
out:
	elf_end(a);
	elf_end(b);
	if (fd >= 0)
		close(fd);
}

static int each(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr low, void *arg)
{
	const unsigned char *id;
	GElf_Addr vaddr, bias;
	int len = dwfl_module_getelf(mod, &bias) ? dwfl_module_build_id(mod, &id, &vaddr) : -1;
	char *path = NULL;
	unsigned char other[64];
	int fd;

	(void)ud;
	(void)low;
	(void)arg;
	if (len <= 0 || (fd = debugfile_by_build_id(id, (size_t)len, &path)) < 0)
		return DWARF_CB_OK;
	fprintf(stderr, "%s: %s\n", name, path);
	files++;
	compare(path, fd);
	close(fd);
	/* the same file asked for with another build-id */
	int in = open(path, O_RDONLY);
	memcpy(other, id, (size_t)len);
	other[len - 1] ^= 1;
	CHECK(in >= 0 && debugfile_decompressed(in, other, (size_t)len) < 0);
	if (in >= 0)
		close(in);
	free(path);
	return DWARF_CB_OK;
}

int main(void)
{
	static char *debuginfo_path;
	static const Dwfl_Callbacks cb = {
		.find_elf = dwfl_linux_proc_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.debuginfo_path = &debuginfo_path,
	};
	Dwfl *d = dwfl_begin(&cb);

	elf_version(EV_CURRENT);
	CHECK(d != NULL);
	CHECK_EQ(dwfl_linux_proc_report(d, getpid()), 0);
	CHECK_EQ(dwfl_report_end(d, NULL, NULL), 0);
	dwfl_getmodules(d, each, NULL, 0);
	dwfl_end(d);
	fprintf(stderr, "%d debug files with compressed sections, %d sections (%d compressed)\n", files,
		sections, compressed);
	if (files == 0) {
		printf("no debug file with compressed sections here (libc6-dbg): skipped\n");
		return 77;
	}
	CHECK(compressed > 0);
	printf("%d checks, %d failed\n", check_count, check_failures);
	return check_failures != 0;
}
