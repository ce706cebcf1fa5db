/* attachstale.c - a busy thread whose live frame holds stale return
 * addresses into malloc and the dynamic loader in its unused bytes, as a
 * real program's big uninitialized buffers do: the main thread calls down
 * 20 frames into dlopen (the loader's code), and there and 10 frames up
 * into malloc, calloc and free of blocks too big for the thread cache,
 * returns, then spins for ever in a shallow function (stale_spin) under
 * stale_busy, whose 16 KiB array, never written, covers what those calls
 * left on the stack.
 *
 * Prints "stale LOADER MALLOC": how many words of the array are return
 * addresses into the loader's code and into malloc's, free's, calloc's or
 * realloc's (not their first byte: a return address never is), then
 * "ready".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uintptr_t ld_lo, ld_hi;
static volatile unsigned long stale_sink;

static int stale_find_ld(struct dl_phdr_info *info, size_t size, void *unused)
{
	(void)size;
	(void)unused;
	if (strstr(info->dlpi_name, "ld-linux") == NULL && strstr(info->dlpi_name, "ld64.so") == NULL)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
			ld_lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			ld_hi = ld_lo + info->dlpi_phdr[i].p_memsz;
		}
	return 1;
}

/* Is w a return address into one of the allocator's entry points? */
static int stale_in_malloc(uintptr_t w)
{
	static const char *const names[] = { "malloc", "free", "calloc", "realloc" };
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (w == 0 || !dladdr1((void *)w, &info, (void **)&sym, RTLD_DL_SYMENT) ||
	    info.dli_sname == NULL || sym == NULL || (uintptr_t)info.dli_saddr == w ||
	    w - (uintptr_t)info.dli_saddr >= sym->st_size)
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(info.dli_sname, names[i]) == 0 ||
		    (strncmp(info.dli_sname, "__libc_", 7) == 0 &&
		     strcmp(info.dli_sname + 7, names[i]) == 0))
			return 1;
	return 0;
}

__attribute__((noinline)) static void stale_calls(int depth)
{
	volatile char pad[64];

	pad[0] = (char)depth;
	if (depth > 0)
		stale_calls(depth - 1);
	/* the loader's frames go deeper than the allocator's: first, at the
	 * bottom; the allocator's there and 10 frames up */
	if (depth == 0 && dlopen("libm.so.6", RTLD_NOW) == NULL)
		abort();
	if (depth != 0 && depth != 10)
		return;
	for (int i = 0; i < 64; i++) {
		void *p = malloc(70000 + (size_t)i * 4096);
		void *q = calloc(1, 2000 + (size_t)i * 100);

		if (p == NULL || q == NULL)
			abort();
		*(volatile char *)p = 1;
		free(p);
		free(q);
	}
}

__attribute__((noinline)) static unsigned long stale_spin(unsigned long x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

__attribute__((noinline)) static void stale_busy(void)
{
	uintptr_t pad[2048];
	volatile uintptr_t *v = pad;
	unsigned long x = 1;
	int loader = 0, in_malloc = 0;

	/* read, never written: what the calls before left there */
	for (size_t i = 0; i < sizeof(pad) / sizeof(pad[0]); i++) {
		uintptr_t w = v[i];

		loader += w > ld_lo && w < ld_hi;
		in_malloc += stale_in_malloc(w);
	}
	printf("stale %d %d\nready\n", loader, in_malloc);
	fflush(stdout);
	for (;;)
		stale_sink = x = stale_spin(x);
}

int main(void)
{
	dl_iterate_phdr(stale_find_ld, NULL);
	stale_calls(20);
	stale_busy();
	return 0;
}
