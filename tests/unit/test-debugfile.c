/* test-debugfile.c - the decompressed copy of a debug file is the file
 *
 * The separate debug files of this process's modules with compressed
 * sections (libc's from libc6-dbg, when installed; the test skips without
 * one): the copy debugfile_by_build_id makes has the same ELF header but
 * for where its section headers are, the same program headers, the same
 * sections in the same order with the same names, types, addresses and
 * links, none compressed, and each section's data is what libelf
 * decompresses of the original, but for the sections no symbolizer reads
 * (location lists, macros, debuggers' name tables), which are SHT_NOBITS.
 * A copy asked for with another build-id is refused.
 *
 * A copy made for some addresses (every 40th function of the file's
 * symbol table, then only those of its first fifth) gives, for each of
 * them, what the whole copy gives: the unit, the scopes holding it (their
 * DIE offsets, tags and names) and its line (file, line, column); and the
 * copy for the first fifth has less of .debug_info than the whole.
 *
 * All of it twice: as a report makes the copy, then with every section
 * streamed through zlib (PROFVIEW_INFLATE=zlib), as without libdeflate.
 *
 * A damaged file gets no copy: one byte flipped inside its biggest
 * compressed section's stream, or in the Adler-32 sum that ends it, or
 * its zlib header saying a preset dictionary, or that section's size said
 * one byte longer or shorter than its stream holds.
 */
#include "check.h"
#include "debugfile.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

static int files, sections, compressed, trimmed, damaged;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

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
		const char *name = elf_strptr(a, ea.e_shstrndx, x.sh_name);
		bool unread = name && (strstr(name, ".debug_loc") == name ||
				       strstr(name, ".debug_mac") == name ||
				       strstr(name, "pubnames") || strstr(name, "pubtypes"));
		CHECK(x.sh_name == y.sh_name && x.sh_addr == y.sh_addr && x.sh_link == y.sh_link &&
		      x.sh_info == y.sh_info && x.sh_entsize == y.sh_entsize);
		CHECK(unread ? y.sh_type == SHT_NOBITS : x.sh_type == y.sh_type);
		if (unread) {
			sections++;
			continue;
		}
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

/* The function addresses of the file's symbol table, sorted, every
 * step-th of them, *n in all. */
static uint64_t *function_addrs(int fd, size_t step, size_t *n)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	uint64_t *v = NULL;
	size_t k = 0, cap = 0;

	*n = 0;
	while (e && (scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sizeof(Elf64_Sym); i++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    sym.st_value == 0 || sym.st_shndx == SHN_UNDEF)
				continue;
			if (k == cap)
				v = realloc(v, (cap = cap ? 2 * cap : 1024) * sizeof *v);
			v[k++] = sym.st_value + sym.st_size / 2;
		}
	}
	elf_end(e);
	qsort(v, k, sizeof *v, cmp_u64);
	for (size_t i = 0; i < k; i += step)
		v[(*n)++] = v[i];
	return v;
}

/* What dbg says of address a: the unit, the scopes, the line, as text. */
static void describe(Dwarf *dbg, uint64_t a, char *out, size_t size)
{
	Dwarf_Die cu, *scopes = NULL;
	size_t o = 0;
	int n;

	out[0] = '\0';
	if (!dwarf_addrdie(dbg, a, &cu)) {
		snprintf(out, size, "no unit");
		return;
	}
	o += (size_t)snprintf(out + o, size - o, "unit %llx;", (unsigned long long)dwarf_dieoffset(&cu));
	n = dwarf_getscopes(&cu, a, &scopes);
	for (int i = 0; i < n && o < size; i++)
		o += (size_t)snprintf(out + o, size - o, " %llx %x %s;",
				      (unsigned long long)dwarf_dieoffset(&scopes[i]), dwarf_tag(&scopes[i]),
				      dwarf_diename(&scopes[i]) ? dwarf_diename(&scopes[i]) : "-");
	free(scopes);
	Dwarf_Line *l = dwarf_getsrc_die(&cu, a);
	int line = 0, col = 0;
	if (l && o < size) {
		dwarf_lineno(l, &line);
		dwarf_linecol(l, &col);
		snprintf(out + o, size - o, " %s:%d:%d", dwarf_linesrc(l, NULL, NULL), line, col);
	}
}

static uint64_t info_size(int fd)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	uint64_t size = 0;

	if (e && elf_getshdrstrndx(e, &shstrndx) == 0)
		while ((scn = elf_nextscn(e, scn)) != NULL) {
			GElf_Shdr sh;
			const char *name;
			if (gelf_getshdr(scn, &sh) && (name = elf_strptr(e, shstrndx, sh.sh_name)) &&
			    strcmp(name, ".debug_info") == 0)
				size = sh.sh_size;
		}
	elf_end(e);
	return size;
}

/* The copy for addrs[0..n) against the whole copy wholefd. */
static void compare_trimmed(const char *path, int wholefd, const uint64_t *addrs, size_t n,
			    const unsigned char *id, size_t len, bool shorter)
{
	int in = open(path, O_RDONLY);
	int fd = in >= 0 ? debugfile_decompressed(in, id, len, addrs, n) : -1;
	Dwarf *whole = dwarf_begin(wholefd, DWARF_C_READ);
	Dwarf *part = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	size_t differ = 0, units = 0;
	char x[4096], y[4096];

	CHECK(whole && part);
	for (size_t i = 0; whole && part && i < n; i++) {
		describe(whole, addrs[i], x, sizeof x);
		describe(part, addrs[i], y, sizeof y);
		units += strncmp(x, "unit", 4) == 0;
		if (strcmp(x, y) != 0 && differ++ < 3)
			fprintf(stderr, "0x%llx: whole '%.200s', trimmed '%.200s'\n",
				(unsigned long long)addrs[i], x, y);
	}
	fprintf(stderr, "  %zu addresses (%zu in a unit), .debug_info %llu of %llu bytes\n", n, units,
		(unsigned long long)info_size(fd), (unsigned long long)info_size(wholefd));
	CHECK_EQ(differ, 0);
	CHECK(units > n / 2);
	if (shorter)
		CHECK(info_size(fd) < info_size(wholefd));
	dwarf_end(whole);
	dwarf_end(part);
	if (fd >= 0)
		close(fd);
	if (in >= 0)
		close(in);
}

/* A copy of the file at path in a temporary file, with the biggest
 * compressed section changed by damage(): is a decompressed copy of it
 * refused? */
static void check_damaged(const char *path, void (*damage)(int fd, const GElf_Shdr *sh))
{
	char tmp[] = "/tmp/test-debugfile-XXXXXX";
	int in = open(path, O_RDONLY), out = mkstemp(tmp), copy;
	GElf_Shdr big = { 0 };
	Elf *e;
	char buf[65536];
	ssize_t got;

	CHECK(in >= 0 && out >= 0);
	if (in < 0 || out < 0)
		goto done;
	unlink(tmp);
	while ((got = read(in, buf, sizeof buf)) > 0)
		CHECK(write(out, buf, (size_t)got) == got);
	e = elf_begin(in, ELF_C_READ, NULL);
	for (Elf_Scn *scn = NULL; e && (scn = elf_nextscn(e, scn)) != NULL;) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_COMPRESSED) && sh.sh_size > big.sh_size)
			big = sh;
	}
	elf_end(e);
	CHECK(big.sh_size > 4096);
	if (big.sh_size > 4096) {
		damage(out, &big);
		copy = debugfile_decompressed(out, NULL, 0, NULL, 0);
		CHECK_EQ(copy, -1);
		if (copy >= 0)
			close(copy);
		damaged++;
	}
done:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}

/* one byte in the middle of the compressed stream */
static void flip_byte(int fd, const GElf_Shdr *sh)
{
	unsigned char c;
	off_t at = (off_t)(sh->sh_offset + sh->sh_size / 2);

	CHECK(pread(fd, &c, 1, at) == 1);
	c ^= 0x5a;
	CHECK(pwrite(fd, &c, 1, at) == 1);
}

/* a bit of the last byte of the stream: its Adler-32 sum */
static void flip_sum(int fd, const GElf_Shdr *sh)
{
	unsigned char c;
	off_t at = (off_t)(sh->sh_offset + sh->sh_size - 1);

	CHECK(pread(fd, &c, 1, at) == 1);
	c ^= 0x10;
	CHECK(pwrite(fd, &c, 1, at) == 1);
}

/* the zlib header's preset dictionary flag set (its check kept right) */
static void dictionary(int fd, const GElf_Shdr *sh)
{
	unsigned char h[2];
	off_t at = (off_t)(sh->sh_offset + sizeof(Elf64_Chdr));

	CHECK(pread(fd, h, 2, at) == 2);
	h[1] = (unsigned char)((h[1] | 0x20) & ~0x1f);
	h[1] = (unsigned char)(h[1] + (31 - ((unsigned)h[0] << 8 | h[1]) % 31) % 31);
	CHECK(((unsigned)h[0] << 8 | h[1]) % 31 == 0 && (h[1] & 0x20));
	CHECK(pwrite(fd, h, 2, at) == 2);
}

/* the uncompressed size the compression header says, one more or less */
static void size_off_by(int fd, const GElf_Shdr *sh, int64_t by)
{
	Elf64_Chdr ch;

	CHECK(pread(fd, &ch, sizeof ch, (off_t)sh->sh_offset) == (ssize_t)sizeof ch);
	ch.ch_size = (uint64_t)((int64_t)ch.ch_size + by);
	CHECK(pwrite(fd, &ch, sizeof ch, (off_t)sh->sh_offset) == (ssize_t)sizeof ch);
}

static void size_longer(int fd, const GElf_Shdr *sh)
{
	size_off_by(fd, sh, 1);
}

static void size_shorter(int fd, const GElf_Shdr *sh)
{
	size_off_by(fd, sh, -1);
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
	if (len <= 0 || (fd = debugfile_by_build_id(id, (size_t)len, NULL, 0, &path)) < 0)
		return DWARF_CB_OK;
	fprintf(stderr, "%s: %s\n", name, path);
	files++;
	compare(path, fd);
	check_damaged(path, flip_byte);
	check_damaged(path, size_longer);
	check_damaged(path, size_shorter);
	check_damaged(path, flip_sum);
	check_damaged(path, dictionary);
	int in = open(path, O_RDONLY);
	size_t n;
	uint64_t *addrs = in >= 0 ? function_addrs(in, 40, &n) : NULL;
	if (in >= 0)
		close(in);
	if (addrs && n > 10) {
		compare_trimmed(path, fd, addrs, n, id, (size_t)len, false);
		compare_trimmed(path, fd, addrs, n / 5, id, (size_t)len, true);
		trimmed++;
	}
	free(addrs);
	close(fd);
	/* the same file asked for with another build-id */
	in = open(path, O_RDONLY);
	memcpy(other, id, (size_t)len);
	other[len - 1] ^= 1;
	CHECK(in >= 0 && debugfile_decompressed(in, other, (size_t)len, NULL, 0) < 0);
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
	/* the copies made here, not kept ones (test-debugcache.c) */
	setenv("PROFVIEW_CACHE", "off", 1);
	CHECK(d != NULL);
	CHECK_EQ(dwfl_linux_proc_report(d, getpid()), 0);
	CHECK_EQ(dwfl_report_end(d, NULL, NULL), 0);
	/* each section inflated at once (libdeflate, when built with it),
	 * then every one streamed through zlib */
	dwfl_getmodules(d, each, NULL, 0);
	setenv("PROFVIEW_INFLATE", "zlib", 1);
	dwfl_getmodules(d, each, NULL, 0);
	dwfl_end(d);
	fprintf(stderr, "%d debug files with compressed sections, %d sections (%d compressed)\n", files,
		sections, compressed);
	if (files == 0) {
		printf("no debug file with compressed sections here (libc6-dbg): skipped\n");
		return 77;
	}
	CHECK(compressed > 0);
	CHECK(trimmed > 0);
	CHECK(damaged == 5 * files);
	printf("%d checks, %d failed\n", check_count, check_failures);
	return check_failures != 0;
}
