/* inject-walk.c - the frames of a stopped thread of another process (see
 * inject-walk.h)
 *
 * The tables: one ehcfi_range per executable mapping of the process, with
 * its object's rows once the object is read (empty before, and for code
 * without a file: JIT code), and an empty range over each gap between
 * them, so that every address the walk meets is in a range and no step
 * is taken by frame pointers.  An object's rows are addresses of its
 * file; each of its mappings has the load bias its offset in the file
 * gives.
 *
 * The walk: when it fails at code of an object not read yet, the object
 * is read and the walk made again (at most once per object); when it
 * fails for want of stack and the copy was cut short of what the thread
 * has mapped, a longer copy is read, up to WALK_STACK_MAX.  A stored
 * frame whose address is in no range (one the walk stepped by frame
 * pointers, which the ranges leave only for the very last address) makes
 * the whole copy unwalked.
 */
#include "inject-walk.h"
#include "ehcfi.h"
#include "ehcfi-lazy.h"

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

#define WALK_STACK_FIRST ((size_t)64 << 10)
#define WALK_STACK_MAX ((size_t)1 << 20)

/* An object of the process: a file mapped executable, or the vDSO. */
struct walk_obj {
	char *path;                 /* as the maps say it; "[vdso]" */
	dev_t dev;
	ino_t ino;
	uintptr_t map_lo, map_hi;   /* its first executable mapping */
	int state;                  /* 0: not read yet, 1: read, -1: cannot be */
	const unsigned char *bytes; /* its file mapped, or the vDSO copied */
	size_t size;
	int copied;                 /* bytes is malloc's */
	struct ehcfi_image img;
	struct ehcfi_lazy *lazy;    /* or rows made at once: */
	struct ehcfi_rows rows;
};

struct inject_objs {
	pid_t pid;
	struct ehcfi_range *r;      /* sorted, covering every address below the last */
	int *obj;                   /* r[i]'s object, -1: none */
	uint64_t *off;              /* r[i]'s mapping's offset in its file */
	size_t nr, capr;
	struct walk_obj *o;
	size_t no, capo;
	uint64_t *copy;             /* the stack's copy */
	size_t copy_cap;            /* bytes */
};

/* ---- the objects ---- */

/* Where the rows of the ELF object at bytes (its file, size bytes) are:
 * 0, or -1 when it has no .eh_frame_hdr in a loaded segment of the file. */
static int walk_image(const unsigned char *bytes, size_t size, struct ehcfi_image *img)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)bytes;
	const Elf64_Phdr *ph, *hdr = NULL, *seg = NULL;
	uint64_t delta;

	memset(img, 0, sizeof(*img));
	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff > size || (size - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum ||
	    eh->e_phoff % 8 != 0)
		return -1;
	ph = (const Elf64_Phdr *)(bytes + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_GNU_EH_FRAME)
			hdr = &ph[i];
	for (int i = 0; hdr != NULL && i < eh->e_phnum && seg == NULL; i++)
		if (ph[i].p_type == PT_LOAD && hdr->p_vaddr >= ph[i].p_vaddr &&
		    hdr->p_vaddr - ph[i].p_vaddr < ph[i].p_filesz)
			seg = &ph[i];
	if (seg == NULL)
		return -1;
	/* file offset x is at bytes + x; address a of the segment at offset
	 * a - delta */
	delta = seg->p_vaddr - seg->p_offset;
	img->bias = (uintptr_t)bytes - (uintptr_t)delta;
	img->eh_frame_hdr = img->bias + (uintptr_t)hdr->p_vaddr;
	for (int i = 0; i < eh->e_phnum && img->nseg < EHCFI_MAX_SEGS; i++) {
		if (ph[i].p_type != PT_LOAD || ph[i].p_vaddr - ph[i].p_offset != delta ||
		    ph[i].p_offset > size || ph[i].p_filesz > size - ph[i].p_offset)
			continue;
		img->seg[img->nseg][0] = (uintptr_t)bytes + (uintptr_t)ph[i].p_offset;
		img->seg[img->nseg][1] = (uintptr_t)(bytes + ph[i].p_offset + ph[i].p_filesz);
		img->nseg++;
	}
	return img->nseg > 0 ? 0 : -1;
}

/* The load bias of the mapping at lo of offset off of the object's file:
 * 0, or -1 when no loaded segment holds that offset. */
static int walk_bias(const struct walk_obj *ob, uintptr_t lo, uint64_t off, uintptr_t *bias)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)ob->bytes;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(ob->bytes + eh->e_phoff);

	for (int i = 0; i < eh->e_phnum; i++) {
		/* (a mapping starts at the page of its segment's offset) */
		uint64_t first = ph[i].p_offset & ~(uint64_t)4095;

		if (ph[i].p_type == PT_LOAD && off >= first && off < ph[i].p_offset + ph[i].p_filesz) {
			/* lo holds offset off: bias + p_vaddr + (off - p_offset) */
			*bias = lo - (uintptr_t)off - (uintptr_t)(ph[i].p_vaddr - ph[i].p_offset);
			return 0;
		}
	}
	return -1;
}

/* The bytes of ob: its file, the one mapped (map_files, which needs
 * root; else its path, if it is the same file), or the vDSO's copy. */
static int walk_obj_bytes(pid_t pid, struct walk_obj *ob)
{
	char path[96];
	struct stat st;
	void *p;
	int fd;

	if (strcmp(ob->path, "[vdso]") == 0) {
		struct iovec local, remote = { (void *)ob->map_lo, ob->map_hi - ob->map_lo };

		if ((p = malloc(remote.iov_len)) == NULL)
			return -1;
		local = (struct iovec){ p, remote.iov_len };
		if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)remote.iov_len) {
			free(p);
			return -1;
		}
		ob->bytes = p;
		ob->size = remote.iov_len;
		ob->copied = 1;
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", (int)pid,
		 (unsigned long)ob->map_lo, (unsigned long)ob->map_hi);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fd = open(ob->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || st.st_dev != ob->dev || st.st_ino != ob->ino ||
	    !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		close(fd);
		return -1;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return -1;
	ob->bytes = p;
	ob->size = (size_t)st.st_size;
	return 0;
}

/* Reads object k and gives its ranges its rows.  Its state is 1 after,
 * or -1 when it has none to give. */
static void walk_obj_read(struct inject_objs *s, int k)
{
	struct walk_obj *ob = &s->o[k];

	ob->state = -1;
	if (walk_obj_bytes(s->pid, ob) != 0 || walk_image(ob->bytes, ob->size, &ob->img) != 0)
		return;
	ob->lazy = ehcfi_lazy_new(&ob->img);
	if (ob->lazy == NULL) {
		/* no search table: every row at once */
		ehcfi_build(&ob->img, &ob->rows);
		if (ob->rows.oom || ob->rows.n == 0)
			return;
	}
	ob->state = 1;
	for (size_t i = 0; i < s->nr; i++) {
		struct ehcfi_range *r = &s->r[i];

		if (s->obj[i] != k || walk_bias(ob, r->lo, s->off[i], &r->bias) != 0)
			continue;
		r->lazy = ob->lazy;
		r->rows = ob->rows.v;
		r->nrows = (uint32_t)ob->rows.n;
		r->page_base = ob->rows.page_base;
		r->npages = ob->rows.npages;
		r->pages = ob->rows.pages;
	}
}

/* Reads the object of the code at pc (or pc - 1, the call of a return
 * address) if it is not read yet: 1 when one was read. */
static int walk_read_at(struct inject_objs *s, uintptr_t pc)
{
	const uintptr_t at[2] = { pc, pc - 1 };

	for (int i = 0; i < 2; i++) {
		const struct ehcfi_range *r = ehcfi_range_find(s->r, s->nr, at[i]);
		int k = r != NULL ? s->obj[r - s->r] : -1;

		if (k >= 0 && s->o[k].state == 0) {
			walk_obj_read(s, k);
			return 1;
		}
	}
	return 0;
}

/* ---- the ranges ---- */

static int walk_add_range(struct inject_objs *s, uintptr_t lo, uintptr_t hi, int obj, uint64_t off)
{
	if (s->nr == s->capr) {
		size_t cap = s->capr ? s->capr * 2 : 64;
		struct ehcfi_range *r = realloc(s->r, cap * sizeof(*r));
		int *o = r != NULL ? realloc(s->obj, cap * sizeof(*o)) : NULL;
		uint64_t *f = o != NULL ? realloc(s->off, cap * sizeof(*f)) : NULL;

		if (r != NULL)
			s->r = r;
		if (o != NULL)
			s->obj = o;
		if (f == NULL)
			return -1;
		s->off = f;
		s->capr = cap;
	}
	s->r[s->nr] = (struct ehcfi_range){ .lo = lo, .hi = hi };
	s->obj[s->nr] = obj;
	s->off[s->nr++] = off;
	return 0;
}

/* The object of path (dev, ino), added if new: its index, or -1. */
static int walk_add_obj(struct inject_objs *s, const char *path, dev_t dev, ino_t ino,
			uintptr_t lo, uintptr_t hi)
{
	struct walk_obj *ob;

	for (size_t k = 0; k < s->no; k++)
		if (s->o[k].dev == dev && s->o[k].ino == ino && strcmp(s->o[k].path, path) == 0)
			return (int)k;
	if (s->no == s->capo) {
		size_t cap = s->capo ? s->capo * 2 : 32;
		struct walk_obj *v = realloc(s->o, cap * sizeof(*v));

		if (v == NULL)
			return -1;
		s->o = v;
		s->capo = cap;
	}
	ob = &s->o[s->no];
	memset(ob, 0, sizeof(*ob));
	if ((ob->path = strdup(path)) == NULL)
		return -1;
	ob->dev = dev;
	ob->ino = ino;
	ob->map_lo = lo;
	ob->map_hi = hi;
	return (int)s->no++;
}

/* One line of the maps: its executable mapping added after an empty range
 * over the gap before it (*end: where the last range ended). */
static int walk_map_line(struct inject_objs *s, const char *line, uintptr_t *end)
{
	unsigned long lo, hi, off, ino;
	unsigned major, minor;
	char perms[8];
	int at = 0, obj = -1;
	const char *path;

	if (sscanf(line, "%lx-%lx %7s %lx %x:%x %lu %n", &lo, &hi, perms, &off, &major, &minor, &ino,
		   &at) < 7 || at == 0 || perms[2] != 'x' || lo >= hi || lo < *end)
		return 0;
	path = line + at;
	if (path[0] == '/' || strcmp(path, "[vdso]") == 0)
		obj = walk_add_obj(s, path, makedev(major, minor), (ino_t)ino, lo, hi);
	if ((path[0] == '/' || strcmp(path, "[vdso]") == 0) && obj < 0)
		return -1;
	if ((lo > *end && walk_add_range(s, *end, lo, -1, 0) != 0) ||
	    walk_add_range(s, lo, hi, obj, off) != 0)
		return -1;
	*end = hi;
	return 0;
}

/* Is ob the C library, the loader or the program (exe)? */
static int walk_obj_first(const struct walk_obj *ob, const char *exe)
{
	const char *b = strrchr(ob->path, '/');

	b = b != NULL ? b + 1 : ob->path;
	return strncmp(b, "libc.so", 7) == 0 || strncmp(b, "libc-2.", 7) == 0 ||
	       strncmp(b, "ld-linux", 8) == 0 || strncmp(b, "ld64.so", 7) == 0 ||
	       strncmp(b, "ld-2.", 5) == 0 || strcmp(ob->path, exe) == 0;
}

struct inject_objs *inject_objs_new(pid_t pid)
{
	char path[64], exe[PATH_MAX] = "", line[PATH_MAX + 128];
	struct inject_objs *s = calloc(1, sizeof(*s));
	uintptr_t end = 0;
	ssize_t n;
	FILE *f;

	if (s == NULL)
		return NULL;
	s->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((f = fopen(path, "re")) == NULL) {
		free(s);
		return NULL;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (walk_map_line(s, line, &end) != 0) {
			fclose(f);
			inject_objs_free(s);
			return NULL;
		}
	}
	fclose(f);
	if (end != UINTPTR_MAX && walk_add_range(s, end, UINTPTR_MAX, -1, 0) != 0) {
		inject_objs_free(s);
		return NULL;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if ((n = readlink(path, exe, sizeof(exe) - 1)) > 0)
		exe[n] = '\0';
	for (size_t k = 0; k < s->no; k++)
		if (walk_obj_first(&s->o[k], exe))
			walk_obj_read(s, (int)k);
	return s;
}

void inject_objs_free(struct inject_objs *s)
{
	if (s == NULL)
		return;
	for (size_t k = 0; k < s->no; k++) {
		struct walk_obj *ob = &s->o[k];

		ehcfi_lazy_free(ob->lazy);
		free(ob->rows.v);
		if (ob->copied)
			free((void *)ob->bytes);
		else if (ob->bytes != NULL)
			munmap((void *)ob->bytes, ob->size);
		free(ob->path);
	}
	free(s->o);
	free(s->r);
	free(s->obj);
	free(s->off);
	free(s->copy);
	free(s);
}

/* ---- the walk ---- */

/* Copies want bytes of the thread's stack from sp, or as many as are
 * mapped: how many, or -1. */
static ssize_t walk_copy(struct inject_objs *s, pid_t tid, uintptr_t sp, size_t want)
{
	struct iovec local, remote = { (void *)sp, want };

	if (s->copy_cap < want) {
		uint64_t *c = realloc(s->copy, want);

		if (c == NULL)
			return -1;
		s->copy = c;
		s->copy_cap = want;
	}
	local = (struct iovec){ s->copy, want };
	return process_vm_readv(tid, &local, 1, &remote, 1, 0);
}

int inject_walk(struct inject_objs *s, pid_t tid, const struct user_regs_struct *r,
		struct inject_walk *w)
{
	const uint64_t regs[EHCFI_NREGS] = {
		r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp,
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rip,
	};
	struct ehcfi_log log;
	enum ehcfi_result res;
	enum ehcfi_failure why;
	struct ehcfi_stack st;
	size_t want = WALK_STACK_FIRST;
	ssize_t got;
	uint32_t n = 0;

	w->frames[0] = r->rip;
	w->n = 1;
	w->complete = 0;
	w->words = NULL;
	w->lo = w->hi = w->rest = r->rsp;
	for (;;) {
		if ((got = walk_copy(s, tid, r->rsp, want)) <= 0 || r->rsp + (size_t)got < r->rsp)
			return -1;
		st = (struct ehcfi_stack){ r->rsp, r->rsp + (size_t)got, (const unsigned char *)s->copy };
		do {
			log = (struct ehcfi_log){ 0 };
			res = ehcfi_walk_log(s->r, s->nr, regs, &st, 0, w->frames, INJECT_WALK_FRAMES, &n,
					     &why, &log);
		} while (res == EHCFI_FAILED && why == EHCFI_FAIL_NO_ROW && walk_read_at(s, log.end_pc));
		/* a frame beyond the copy, and more stack mapped */
		if (res != EHCFI_FAILED || why != EHCFI_FAIL_STACK || (size_t)got < want ||
		    want >= WALK_STACK_MAX)
			break;
		want *= 4;
	}
	w->words = s->copy;
	w->lo = st.lo;
	w->hi = st.lo + ((size_t)got & ~(size_t)7);
	w->n = n;
	w->complete = res == EHCFI_COMPLETE;
	w->rest = w->hi;
	if (!w->complete) {
		w->frames[w->n++] = log.end_pc;
		w->rest = log.end_sp < w->lo ? w->lo : log.end_sp > w->hi ? w->hi : log.end_sp;
		w->rest = w->lo + ((w->rest - w->lo) & ~(uintptr_t)7);
	}
	/* a frame stepped by frame pointers: nothing of the walk is sure */
	for (uint32_t k = 1; k < n; k++)
		if (ehcfi_range_find(s->r, s->nr, w->frames[k] - 1) == NULL) {
			w->complete = 0;
			w->rest = w->lo;
		}
	return 0;
}
