/* test-debugcache.c - a kept copy of a debug file is used only when it is
 * whole, the user's own and holds what is asked for
 *
 * On the first separate debug file with compressed sections among this
 * process's modules (libc's from libc6-dbg; the test skips without one),
 * with XDG_CACHE_HOME a new folder:
 *  - PROFVIEW_CACHE=off: nothing is written;
 *  - the copy for some addresses (every 40th function of the file's symbol
 *    table, the first fifth of them) is made in the folder's file of the
 *    build-id: a regular file of mode 0600 that begins with the copy made
 *    with the cache off, byte for byte; asked for again, that file is
 *    what comes back (the same inode);
 *  - asked for all of the addresses (units the first copy does not hold),
 *    a new file with more of .debug_info; then for the first fifth again,
 *    that one;
 *  - a file with a byte changed in its DWARF, one cut short, one whose
 *    tail is changed, one others may read, and a link to a good copy in
 *    its place are not used: a new copy comes back, the same bytes as the
 *    one made with the cache off, and the link's target is left alone;
 *  - with no room to write files (a size limit), no copy or a whole one
 *    comes back, and nothing is left in the folder.
 */
#include "check.h"
#include "debugfile.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/test-debugcache.XXXXXX";
static char cached[4096];     /* the build-id's file */
static const char *debug;     /* the original */
static const unsigned char *id;
static size_t idlen;
static int found;

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Every 40th function address of the file's symbol table, sorted. */
static uint64_t *function_addrs(size_t *n)
{
	int fd = open(debug, O_RDONLY);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	Elf_Scn *scn = NULL;
	uint64_t *v = NULL;
	size_t k = 0, cap = 0;

	*n = 0;
	while (e && (scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Sym sym;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sizeof(Elf64_Sym); i++)
			if (gelf_getsym(d, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
			    sym.st_value && sym.st_shndx != SHN_UNDEF) {
				if (k == cap)
					v = realloc(v, (cap = cap ? 2 * cap : 1024) * sizeof *v);
				v[k++] = sym.st_value + sym.st_size / 2;
			}
	}
	elf_end(e);
	if (fd >= 0)
		close(fd);
	qsort(v, k, sizeof *v, cmp_u64);
	for (size_t i = 0; i < k; i += 40)
		v[(*n)++] = v[i];
	return v;
}

/* The copy for addrs[0..n) as debugfile_decompressed gives it. */
static int copy_for(const uint64_t *addrs, size_t n)
{
	int in = open(debug, O_RDONLY);
	int fd = in >= 0 ? debugfile_decompressed(in, id, idlen, addrs, n) : -1;

	if (in >= 0)
		close(in);
	return fd;
}

static ino_t ino_fd(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 ? st.st_ino : 0;
}

static ino_t ino_path(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 ? st.st_ino : 0;
}

/* Are the first size(b) bytes of a those of b? */
static bool begins_with(int a, int b)
{
	struct stat st;
	char x[65536], y[65536];
	off_t at = 0;

	if (a < 0 || b < 0 || fstat(b, &st) != 0)
		return false;
	while (at < st.st_size) {
		size_t n = st.st_size - at < (off_t)sizeof x ? (size_t)(st.st_size - at) : sizeof x;
		if (pread(a, x, n, at) != (ssize_t)n || pread(b, y, n, at) != (ssize_t)n ||
		    memcmp(x, y, n) != 0)
			return false;
		at += (off_t)n;
	}
	return true;
}

static uint64_t info_size(int fd)
{
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	uint64_t size = 0;
	GElf_Shdr sh;
	const char *name;

	while (e && elf_getshdrstrndx(e, &shstrndx) == 0 && (scn = elf_nextscn(e, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(e, shstrndx, sh.sh_name)) &&
		    strcmp(name, ".debug_info") == 0)
			size = sh.sh_size;
	elf_end(e);
	return size;
}

/* Damage the kept file by how, then ask for the copy of addrs[0..n):
 * a new copy, byte for byte the uncached one, must come back. */
static void damaged(const char *how, const uint64_t *addrs, size_t n, int plain)
{
	ino_t before = ino_path(cached);
	struct stat st;
	int fd;

	CHECK(before != 0 && stat(cached, &st) == 0);
	if (strcmp(how, "byte") == 0 || strcmp(how, "tail") == 0) {
		/* a byte of the copy's middle, or of the tail's build-id */
		off_t at = strcmp(how, "byte") == 0 ? st.st_size / 3 : st.st_size - 30;
		unsigned char c;
		fd = open(cached, O_RDWR);
		CHECK(fd >= 0 && pread(fd, &c, 1, at) == 1);
		c ^= 0x40;
		CHECK(pwrite(fd, &c, 1, at) == 1);
		close(fd);
	} else if (strcmp(how, "short") == 0) {
		CHECK(truncate(cached, st.st_size - 4096) == 0);
	} else if (strcmp(how, "mode") == 0) {
		CHECK(chmod(cached, 0644) == 0);
	} else {
		/* a link to a good copy in its place */
		char good[4200];
		snprintf(good, sizeof good, "%s/good", dir);
		CHECK(rename(cached, good) == 0 && symlink(good, cached) == 0);
	}
	fd = copy_for(addrs, n);
	fprintf(stderr, "  %s: %s\n", how, ino_fd(fd) == before ? "used" : "not used");
	CHECK(fd >= 0 && ino_fd(fd) != before);
	CHECK(begins_with(fd, plain));
	CHECK(ino_path(cached) == ino_fd(fd) && stat(cached, &st) == 0 && (st.st_mode & 0777) == 0600);
	if (fd >= 0)
		close(fd);
}

/* No room to write (a file size limit, as a full disk): no copy, or a
 * whole one, and no file left in the folder. */
static void no_room(const uint64_t *addrs, size_t n)
{
	struct rlimit was, small = { 65536, 65536 };
	char folder[4200];
	struct dirent *e;
	DIR *d;
	int fd, left = 0;

	unlink(cached);
	signal(SIGXFSZ, SIG_IGN);
	CHECK(getrlimit(RLIMIT_FSIZE, &was) == 0);
	small.rlim_max = was.rlim_max;
	CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
	fd = copy_for(addrs, n);
	CHECK(setrlimit(RLIMIT_FSIZE, &was) == 0);
	if (fd >= 0) {
		int plain;
		setenv("PROFVIEW_CACHE", "off", 1);
		plain = copy_for(addrs, n);
		unsetenv("PROFVIEW_CACHE");
		CHECK(begins_with(fd, plain));
		close(plain);
		close(fd);
	}
	snprintf(folder, sizeof folder, "%s/profview", dir);
	d = opendir(folder);
	while (d && (e = readdir(d)) != NULL)
		left += strncmp(e->d_name, ".debug-", 7) == 0 || strncmp(e->d_name, "debug-", 6) == 0;
	if (d)
		closedir(d);
	fprintf(stderr, "  no room: %s, %d files left\n", fd >= 0 ? "a copy" : "no copy", left);
	CHECK_EQ(left, 0);
	signal(SIGXFSZ, SIG_DFL);
}

static void cache_checks(void)
{
	size_t n, few;
	uint64_t *addrs = function_addrs(&n);
	int plain, first, again, all, fd;
	struct stat st;
	char good[4200];

	CHECK(addrs && n > 10);
	if (!addrs || n <= 10)
		return;
	few = n / 5;
	setenv("PROFVIEW_CACHE", "off", 1);
	plain = copy_for(addrs, few);
	unsetenv("PROFVIEW_CACHE");
	CHECK(plain >= 0 && ino_path(cached) == 0);

	first = copy_for(addrs, few);
	CHECK(first >= 0 && ino_fd(first) == ino_path(cached));
	CHECK(lstat(cached, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600);
	CHECK(begins_with(first, plain));
	again = copy_for(addrs, few);
	CHECK(again >= 0 && ino_fd(again) == ino_fd(first));

	all = copy_for(addrs, n);
	CHECK(all >= 0 && ino_fd(all) != ino_fd(first) && ino_fd(all) == ino_path(cached));
	fprintf(stderr, "  .debug_info kept: %llu bytes for a fifth, %llu for all\n",
		(unsigned long long)info_size(first), (unsigned long long)info_size(all));
	CHECK(info_size(all) > info_size(first));
	fd = copy_for(addrs, few);
	CHECK(fd >= 0 && ino_fd(fd) == ino_fd(all));
	close(fd);
	/* back to the copy for the fifth, then each damage */
	unlink(cached);
	close(copy_for(addrs, few));
	damaged("byte", addrs, few, plain);
	damaged("short", addrs, few, plain);
	damaged("tail", addrs, few, plain);
	damaged("mode", addrs, few, plain);
	damaged("link", addrs, few, plain);
	no_room(addrs, few);
	snprintf(good, sizeof good, "%s/good", dir);
	fd = open(good, O_RDONLY);
	CHECK(fd >= 0 && begins_with(fd, plain));
	if (fd >= 0)
		close(fd);
	close(plain);
	close(first);
	close(again);
	close(all);
	free(addrs);
}

static int each(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr low, void *arg)
{
	GElf_Addr vaddr, bias;
	int len = dwfl_module_getelf(mod, &bias) ? dwfl_module_build_id(mod, &id, &vaddr) : -1;
	char *path = NULL;
	int fd;

	(void)ud;
	(void)low;
	(void)arg;
	setenv("PROFVIEW_CACHE", "off", 1);
	fd = len > 0 ? debugfile_by_build_id(id, (size_t)len, NULL, 0, &path) : -1;
	unsetenv("PROFVIEW_CACHE");
	if (fd < 0)
		return DWARF_CB_OK;
	close(fd);
	fprintf(stderr, "%s: %s\n", name, path);
	found = 1;
	debug = path;
	idlen = (size_t)len;
	snprintf(cached, sizeof cached, "%s/profview/debug-", dir);
	for (int i = 0; i < len; i++)
		snprintf(cached + strlen(cached), 3, "%02x", id[i]);
	cache_checks();
	free(path);
	return DWARF_CB_ABORT;
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
	char cmd[256];

	elf_version(EV_CURRENT);
	CHECK(d != NULL && mkdtemp(dir) != NULL);
	setenv("XDG_CACHE_HOME", dir, 1);
	CHECK_EQ(dwfl_linux_proc_report(d, getpid()), 0);
	CHECK_EQ(dwfl_report_end(d, NULL, NULL), 0);
	dwfl_getmodules(d, each, NULL, 0);
	dwfl_end(d);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	if (!found) {
		printf("no debug file with compressed sections here (libc6-dbg): skipped\n");
		return 77;
	}
	printf("%d checks, %d failed\n", check_count, check_failures);
	return check_failures != 0;
}
