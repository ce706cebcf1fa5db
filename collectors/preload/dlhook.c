/* dlhook.c - dlopen, dlmopen and dlclose, interposed to record new mappings
 *
 * After a dlopen that loaded something, the new executable mappings are
 * written (mappings_refresh) and the table of executable ranges is rebuilt;
 * before a dlclose, anything loaded since the last write is written, so a
 * library closed before the end of the run can still be symbolized.
 *
 * The real dlopen looks at its caller's return address: the caller's link
 * map decides the namespace of the new object and, for a name without a
 * slash, whose DT_RPATH / DT_RUNPATH are searched; "$ORIGIN" in the name is
 * the caller's directory.  Calling it from a C wrapper would make this
 * library the caller.  So the exported dlopen and dlmopen are assembly
 * stubs that ask dlhook_route_* where to go and then jump there with the
 * caller's stack untouched: to the real function itself whenever the caller
 * could make a difference (the name has a "$"; a name without a slash while
 * some object has a DT_RUNPATH, or an object other than the program a
 * DT_RPATH; a caller outside the base namespace), else to a C wrapper that
 * calls it and writes the new mappings.  A load that went straight to the
 * real function is picked up at the next dlopen, dlclose, pthread_create or
 * at the end.
 */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "host.h"
#include "mappings.h"
#include "preload.h"
#include "pyframes.h"

#define DLHOOK_EXPORT __attribute__((visibility("default")))

typedef void *(*dlhook_open_fn)(const char *, int);
typedef void *(*dlhook_mopen_fn)(Lmid_t, const char *, int);
typedef int (*dlhook_close_fn)(void *);

/* Called from the stubs below: they must keep these names. */
void *dlhook_route_open(const char *file, const void *caller);
void *dlhook_route_mopen(const char *file, const void *caller);

static struct {
	_Atomic(dlhook_open_fn) real_open;
	_Atomic(dlhook_mopen_fn) real_mopen;
	_Atomic(dlhook_close_fn) real_close;
	/* Whether search paths depend on the caller, as of paths_adds. */
	_Atomic unsigned long long paths_adds;
	_Atomic int paths_matter;
} dlhook = { .paths_adds = ~0ull };

/* The stubs: save the argument registers, call the router with the file
 * name and the return address (the caller), restore, jump to its answer.
 * The stack is 16-byte aligned at the call. */
__asm__(
	".pushsection .text\n"
	".globl dlopen\n"
	".type dlopen, @function\n"
	"dlopen:\n"
	".cfi_startproc\n"
	"	endbr64\n"
	"	push %rdi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	push %rsi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	sub $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"	mov 24(%rsp), %rsi\n"
	"	call dlhook_route_open\n"
	"	add $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	pop %rsi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	pop %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	jmp *%rax\n"
	".cfi_endproc\n"
	".size dlopen, .-dlopen\n"
	"\n"
	".globl dlmopen\n"
	".type dlmopen, @function\n"
	"dlmopen:\n"
	".cfi_startproc\n"
	"	endbr64\n"
	"	push %rdi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	push %rsi\n"
	".cfi_adjust_cfa_offset 8\n"
	"	push %rdx\n"
	".cfi_adjust_cfa_offset 8\n"
	"	mov %rsi, %rdi\n"
	"	mov 24(%rsp), %rsi\n"
	"	call dlhook_route_mopen\n"
	"	pop %rdx\n"
	".cfi_adjust_cfa_offset -8\n"
	"	pop %rsi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	pop %rdi\n"
	".cfi_adjust_cfa_offset -8\n"
	"	jmp *%rax\n"
	".cfi_endproc\n"
	".size dlmopen, .-dlmopen\n"
	".popsection\n");

static dlhook_open_fn dlhook_real_open(void)
{
	dlhook_open_fn f = atomic_load_explicit(&dlhook.real_open, memory_order_acquire);

	if (f == NULL) {
		f = (dlhook_open_fn)dlsym(RTLD_NEXT, "dlopen");
		atomic_store_explicit(&dlhook.real_open, f, memory_order_release);
	}
	return f;
}

static dlhook_mopen_fn dlhook_real_mopen(void)
{
	dlhook_mopen_fn f = atomic_load_explicit(&dlhook.real_mopen, memory_order_acquire);

	if (f == NULL) {
		f = (dlhook_mopen_fn)dlsym(RTLD_NEXT, "dlmopen");
		atomic_store_explicit(&dlhook.real_mopen, f, memory_order_release);
	}
	return f;
}

/* Where the real function cannot be found: fail as dlopen fails. */
static void *dlhook_open_missing(const char *file, int mode)
{
	(void)file;
	(void)mode;
	errno = ENOSYS;
	return NULL;
}

static void *dlhook_mopen_missing(Lmid_t lmid, const char *file, int mode)
{
	(void)lmid;
	return dlhook_open_missing(file, mode);
}

/* Wrappers for the calls where the caller makes no difference. */
static void *dlhook_open(const char *file, int mode)
{
	void *h = dlhook_real_open()(file, mode);

	if (h != NULL) {
		int saved_errno = errno;

		mappings_refresh();
		pyframes_loaded(h);
		errno = saved_errno;
	}
	return h;
}

static void *dlhook_mopen(Lmid_t lmid, const char *file, int mode)
{
	void *h = dlhook_real_mopen()(lmid, file, mode);

	if (h != NULL) {
		int saved_errno = errno;

		mappings_refresh();
		pyframes_loaded(h);
		errno = saved_errno;
	}
	return h;
}

static int dlhook_scan_paths(struct dl_phdr_info *info, size_t size, void *data)
{
	int *matter = data;
	int main_program = info->dlpi_name == NULL || info->dlpi_name[0] == '\0';

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Dyn) *d;

		if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
			continue;
		for (d = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
		     d->d_tag != DT_NULL; d++) {
			if (d->d_tag == DT_RUNPATH || (d->d_tag == DT_RPATH && !main_program)) {
				*matter = 1;
				return 1;
			}
		}
	}
	return 0;
}

static int dlhook_read_adds(struct dl_phdr_info *info, size_t size, void *data)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
		*(unsigned long long *)data = info->dlpi_adds;
	return 1;
}

/* Would a search for a name without a slash find something else with this
 * library as the caller?  Only if some object has search paths of its own
 * (the program's DT_RPATH is searched whoever calls).  Cached until the
 * next load. */
static int dlhook_paths_matter(void)
{
	unsigned long long adds = 0;
	int matter = 0;

	dl_iterate_phdr(dlhook_read_adds, &adds);
	if (adds != 0 && atomic_load(&dlhook.paths_adds) == adds)
		return atomic_load(&dlhook.paths_matter);
	dl_iterate_phdr(dlhook_scan_paths, &matter);
	atomic_store(&dlhook.paths_matter, matter);
	atomic_store(&dlhook.paths_adds, adds);
	return matter;
}

/* Could the caller change what loading file does? */
static int dlhook_caller_matters(const char *file)
{
	return strchr(file, '$') != NULL || (strchr(file, '/') == NULL && dlhook_paths_matter());
}

void *dlhook_route_open(const char *file, const void *caller)
{
	dlhook_open_fn real = dlhook_real_open();
	struct link_map *map = NULL;
	Lmid_t lmid = LM_ID_BASE;

	if (real == NULL)
		return (void *)dlhook_open_missing;
	if (file == NULL || !preload_host.running() || dlhook_caller_matters(file))
		return (void *)real;
	/* The new object goes to the caller's namespace.  (glibc 2.35 on
	 * finds the caller's object in a sorted table; dladdr1 also looks for
	 * the symbol nearest the address, a walk of the whole symbol table of
	 * a library such as libpython, once a Python extension module.) */
#if defined(__GLIBC_PREREQ) && __GLIBC_PREREQ(2, 35)
	struct dl_find_object found;

	if (_dl_find_object((void *)caller, &found) == 0)
		map = found.dlfo_link_map;
#else
	Dl_info info;

	if (dladdr1(caller, &info, (void **)&map, RTLD_DL_LINKMAP) == 0)
		map = NULL;
#endif
	if (map != NULL && (dlinfo(map, RTLD_DI_LMID, &lmid) != 0 || lmid != LM_ID_BASE))
		return (void *)real;
	return (void *)dlhook_open;
}

void *dlhook_route_mopen(const char *file, const void *caller)
{
	dlhook_mopen_fn real = dlhook_real_mopen();

	(void)caller;
	if (real == NULL)
		return (void *)dlhook_mopen_missing;
	if (file == NULL || !preload_host.running() || dlhook_caller_matters(file))
		return (void *)real;
	return (void *)dlhook_mopen;
}

DLHOOK_EXPORT int dlclose(void *handle)
{
	dlhook_close_fn real = atomic_load_explicit(&dlhook.real_close, memory_order_acquire);

	if (real == NULL) {
		real = (dlhook_close_fn)dlsym(RTLD_NEXT, "dlclose");
		if (real == NULL)
			return -1;
		atomic_store_explicit(&dlhook.real_close, real, memory_order_release);
	}
	if (preload_host.running()) {
		int saved_errno = errno, r;

		mappings_refresh();
		/* no walk reads an object's .eh_frame while it may be unmapped */
		mappings_close_begin();
		errno = saved_errno;
		r = real(handle);
		saved_errno = errno;
		mappings_close_end();
		errno = saved_errno;
		return r;
	}
	return real(handle);
}
