/* test-cfi.c - the collector's table unwinder (collectors/preload/cfi.c),
 * checked at every instruction
 *
 * The functions under test are run one instruction at a time (the trap
 * flag: a SIGTRAP after each instruction) and the stack is unwound from
 * every one of them: through prologues and epilogues with and without
 * frame pointers, a realigned stack, a PLT stub, a library loaded after
 * the tables were made, and a signal handler's frame.  Each walk must be
 * complete and pass through the expected callers, in order, up to main.
 * Then a 200-deep recursion, and walks from garbage registers over a
 * garbage stack, which must end without reading outside it.  Every walk is
 * made again through the table of kept walks (cfi_unwind_memo), which
 * must give the same frames: at once, again from the table, and after
 * words of the stack changed under it.  Rows made lazily are the rows
 * made at once, whether the search table was read at once or by the
 * first lookup (which reads nothing before).  Last, a fork child's reset
 * of a lazy table takes no page fault (it writes no page of the table).
 *
 * Usage: test-cfi PLUGIN.so
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "cfi.h"
#include "ehcfi-lazy.h"
#include "ehcfi-share.h"
#include "procmaps.h"
#include "cfi/targets.h"
#include "check.h"

#define MAX_STEPS 200000
#define DEPTH 64
#define TRAP_FLAG 0x100

struct step {
	uint64_t pc;
	int result, why;
	uint32_t n;
	uint64_t frames[DEPTH];
};

/* Walks the memo gave otherwise than cfi_unwind; the last kept walk. */
static volatile size_t memo_wrong;
static uint64_t last_serial, last[DEPTH];
static uint32_t last_n;

/* cfi_unwind_memo from uc must give what cfi_unwind gave. */
static void memo_same(const ucontext_t *uc, uintptr_t lo, uintptr_t hi, int result, uint32_t n,
		      const uint64_t *frames)
{
	uint64_t got[DEPTH], serial;
	uint32_t m;
	enum cfi_failure why;
	int r = cfi_unwind_memo(uc, lo, hi, 0, got, DEPTH, &m, &why, &serial);

	if (r != result || m != n || memcmp(got, frames, n * sizeof(*frames)) != 0)
		memo_wrong++;
	/* a walk kept is numbered, and a number stands for one walk */
	if (serial != 0) {
		if (serial == last_serial && (last_n != n || memcmp(last, frames, n * sizeof(*frames)) != 0))
			memo_wrong++;
		last_serial = serial;
		last_n = n;
		memcpy(last, frames, n * sizeof(*frames));
	}
}

static struct step *steps;
static volatile size_t nsteps;
static volatile sig_atomic_t stepping;
static uintptr_t stack_lo, stack_hi;

static void on_trap(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;
	struct step *s;
	enum cfi_failure why;

	(void)sig;
	(void)si;
	if (!stepping || nsteps == MAX_STEPS) {
		uc->uc_mcontext.gregs[REG_EFL] &= ~TRAP_FLAG;
		return;
	}
	s = &steps[nsteps++];
	s->pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	s->result = cfi_unwind(uc, stack_lo, stack_hi, s->frames, DEPTH, &s->n, &why);
	s->why = why;
	memo_same(uc, stack_lo, stack_hi, s->result, s->n, s->frames);
	memo_same(uc, stack_lo, stack_hi, s->result, s->n, s->frames);
}

/* Sets the trap flag in the interrupted context: stepping starts where
 * the signal returns to. */
static void on_start(int sig, siginfo_t *si, void *ucv)
{
	(void)sig;
	(void)si;
	((ucontext_t *)ucv)->uc_mcontext.gregs[REG_EFL] |= TRAP_FLAG;
}

static void step_begin(void)
{
	nsteps = 0;
	stepping = 1;
	raise(SIGUSR1);
}

static void step_end(void)
{
	stepping = 0;
	__asm__ volatile("" ::: "memory");
}

/* Where addr is: its object and offset there. */
static void where(uint64_t addr, char *buf, size_t size)
{
	Dl_info info;

	if (dladdr((void *)(uintptr_t)addr, &info) && info.dli_fname != NULL)
		snprintf(buf, size, "%s+%#lx", info.dli_fname,
			 (unsigned long)(addr - (uintptr_t)info.dli_fbase));
	else
		snprintf(buf, size, "?");
}

/* The name of the function holding addr, "" if unknown. */
static const char *name_of(uint64_t addr)
{
	Dl_info info;

	if (dladdr((void *)(uintptr_t)addr, &info) && info.dli_sname != NULL)
		return info.dli_sname;
	return "";
}

/* Are names[] found in order among the frames of step s? */
static int has_callers(const struct step *s, const char *const *names)
{
	uint32_t i = 0;

	for (; *names != NULL; names++) {
		while (i < s->n && strcmp(name_of(s->frames[i] - (i > 0)), *names) != 0)
			i++;
		if (i == s->n)
			return 0;
		i++;
	}
	return 1;
}

/* Every step recorded must be a complete walk through callers; returns
 * how many steps had their leaf in function leaf. */
static size_t check_steps(const char *what, const char *const *callers, const char *leaf)
{
	size_t bad = 0, in_leaf = 0;

	for (size_t i = 0; i < nsteps; i++) {
		const struct step *s = &steps[i];

		if (strcmp(name_of(s->pc), leaf) == 0)
			in_leaf++;
		if (s->result == CFI_COMPLETE && has_callers(s, callers))
			continue;
		if (bad++ < 5) {
			char at[256];

			where(s->pc, at, sizeof at);
			fprintf(stderr, "%s: step %zu at %s (%s, row %d): result %d (why %d), %u frames:",
				what, i, at, name_of(s->pc), cfi_row_kind(s->pc), s->result, s->why, s->n);
			for (uint32_t f = 0; f < s->n && f < 12; f++)
				fprintf(stderr, " %s", name_of(s->frames[f] - (f > 0)));
			fputc('\n', stderr);
		}
	}
	printf("%s: %zu instructions stepped, %zu in %s, %zu not unwound right\n", what,
	       (size_t)nsteps, in_leaf, leaf, bad);
	CHECK(nsteps > 0 && nsteps < MAX_STEPS);
	CHECK_EQ(bad, 0);
	return in_leaf;
}

/* Did the steps execute the instruction at addr? */
static int stepped_at(uintptr_t addr)
{
	for (size_t i = 0; i < nsteps; i++)
		if (steps[i].pc == addr)
			return 1;
	return 0;
}

/* Did the steps execute a return (0xc3) inside [lo, lo + len)? */
static int stepped_ret(uintptr_t lo, size_t len)
{
	for (size_t i = 0; i < nsteps; i++)
		if (steps[i].pc >= lo && steps[i].pc < lo + len &&
		    *(const unsigned char *)(uintptr_t)steps[i].pc == 0xc3)
			return 1;
	return 0;
}

static volatile long sink;

__attribute__((noinline)) void run_fp(void)
{
	step_begin();
	sink = cfi_fp_target(6);
	step_end();
}

__attribute__((noinline)) void run_nofp(void)
{
	step_begin();
	sink = cfi_nofp_target(9);
	sink = cfi_nofp_aligned(3);
	sink = cfi_nofp_drap(5);
	step_end();
}

__attribute__((noinline)) void run_lib(void)
{
	step_begin();
	sink = cfi_lib_work(4);
	step_end();
}

__attribute__((noinline)) void run_plugin(int (*fn)(int))
{
	step_begin();
	sink = fn(5);
	step_end();
}

void on_usr2(int sig);
void on_usr2(int sig)
{
	(void)sig;
	/* stepping from here to the end of the handler: the trap flag of
	 * the interrupted code was clear, so it stops at sigreturn */
	nsteps = 0;
	stepping = 1;
	raise(SIGUSR1);
	sink = cfi_fp_target(3);
}

__attribute__((noinline)) void run_signal(void)
{
	raise(SIGUSR2);
	step_end();
}

static void test_prologues(void)
{
	static const char *const callers[] = { "run_fp", "main", NULL };
	static const char *const callers_nofp[] = { "run_nofp", "main", NULL };
	size_t n;

	run_fp();
	n = check_steps("frame pointers", callers, "cfi_fp_target");
	CHECK(n > 10);
	CHECK(stepped_at((uintptr_t)cfi_fp_target));
	CHECK(stepped_at((uintptr_t)cfi_fp_inner));
	CHECK(stepped_ret((uintptr_t)cfi_fp_target, 256));
	CHECK_EQ(cfi_row_kind((uintptr_t)cfi_fp_target + 1), CFI_ROW_REG);

	run_nofp();
	n = check_steps("no frame pointers", callers_nofp, "cfi_nofp_target");
	CHECK(n > 10);
	CHECK(stepped_at((uintptr_t)cfi_nofp_target));
	CHECK(stepped_at((uintptr_t)cfi_nofp_aligned));
	CHECK(stepped_ret((uintptr_t)cfi_nofp_target, 512));
	CHECK(stepped_ret((uintptr_t)cfi_nofp_aligned, 256));
	CHECK(stepped_ret((uintptr_t)cfi_nofp_drap, 512));
	{
		size_t deref = 0;

		for (size_t i = 0; i < nsteps; i++)
			deref += cfi_row_kind(steps[i].pc) == CFI_ROW_DEREF;
		printf("no frame pointers: %zu instructions with the CFA behind a pointer\n", deref);
		CHECK(deref > 5);
	}
}

/* The call goes through the program's PLT: its stub has a CFA expression
 * of its own. */
static void test_plt(void)
{
	static const char *const callers[] = { "run_lib", "main", NULL };
	size_t plt = 0;

	run_lib();
	CHECK(check_steps("plt", callers, "cfi_lib_work") > 5);
	for (size_t i = 0; i < nsteps; i++)
		if (cfi_row_kind(steps[i].pc) == CFI_ROW_PLT)
			plt++;
	printf("plt: %zu instructions in a PLT stub\n", plt);
	CHECK(plt > 0);
}

/* A library loaded after the tables were made has none until the next
 * refresh (the collector's happens in its dlopen hook); dlclose takes
 * them away. */
static void test_dlopen(const char *path)
{
	static const char *const callers[] = { "run_plugin", "main", NULL };
	void *h = dlopen(path, RTLD_NOW);
	int (*fn)(int);

	CHECK(h != NULL);
	if (h == NULL) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		return;
	}
	*(void **)&fn = dlsym(h, "cfi_plugin_work");
	CHECK(fn != NULL);
	if (fn == NULL)
		return;
	CHECK_EQ(cfi_row_kind((uintptr_t)fn), CFI_ROW_NO_OBJECT);
	CHECK(cfi_refresh(NULL) > 0);
	CHECK_EQ(cfi_row_kind((uintptr_t)fn), CFI_ROW_REG);
	run_plugin(fn);
	CHECK(check_steps("dlopen", callers, "cfi_plugin_work") > 5);
	dlclose(h);
	CHECK(cfi_refresh(NULL) > 0);
	CHECK_EQ(cfi_row_kind((uintptr_t)fn), CFI_ROW_NO_OBJECT);
}

/* Rows made lazily, a chunk at a time, are the rows made at once: for
 * every object with a search table (libc, the program, ld.so), at every
 * 3rd byte of its executable segments. */
static int lazy_compare(struct dl_phdr_info *info, size_t size, void *data)
{
	struct ehcfi_image img = { .bias = info->dlpi_addr };
	struct ehcfi_rows b = { 0 };
	struct ehcfi_lazy *lz, *later;
	size_t *compared = data;
	int have = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_EH_FRAME) {
			img.eh_frame_hdr = info->dlpi_addr + ph->p_vaddr;
			have = 1;
		} else if (ph->p_type == PT_LOAD && img.nseg < EHCFI_MAX_SEGS) {
			img.seg[img.nseg][0] = info->dlpi_addr + ph->p_vaddr;
			img.seg[img.nseg][1] = info->dlpi_addr + ph->p_vaddr + ph->p_filesz;
			img.nseg++;
		}
	}
	if (!have || (lz = ehcfi_lazy_new(&img)) == NULL)
		return 0;
	later = ehcfi_lazy_defer(&img);
	CHECK(later != NULL);
	ehcfi_build(&img, &b);
	CHECK(!b.oom && b.n > 0);
	for (int i = 0; i < info->dlpi_phnum && b.n > 0; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		struct ehcfi_range eager = { lo, lo + ph->p_memsz, info->dlpi_addr, b.v, (uint32_t)b.n,
					     b.page_base, b.npages, b.pages, NULL };
		struct ehcfi_range lazy = eager, deferred = eager;
		size_t wrong = 0;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		lazy.lazy = lz;
		deferred.lazy = later;
		for (uintptr_t pc = lo; pc < lo + ph->p_memsz; pc += 3) {
			const struct ehcfi_row *x = ehcfi_row_find(&eager, pc);
			int pending = 0, pending_later = 0;
			const struct ehcfi_row *y = ehcfi_lazy_row(&lazy, pc, &pending);
			const struct ehcfi_row *z =
				later != NULL ? ehcfi_lazy_row(&deferred, pc, &pending_later) : y;

			/* the table read by the first lookup: the same rows */
			if (pending_later || (y == NULL) != (z == NULL) ||
			    (y != NULL && memcmp(y, z, sizeof *y) != 0))
				wrong++;
			/* before the first FDE the lazy table has no row: the
			 * eager one has none either, or a "no CFI" one */
			if (y == NULL && (x == NULL || x->kind == EHCFI_NONE))
				continue;
			if (pending || x == NULL || y == NULL || memcmp(x, y, sizeof *x) != 0)
				wrong++;
			(*compared)++;
		}
		if (wrong > 0)
			fprintf(stderr, "lazy rows of %s: %zu differ\n", info->dlpi_name, wrong);
		CHECK_EQ(wrong, 0);
	}
	free(b.v);
	ehcfi_lazy_free(lz);
	ehcfi_lazy_free(later);
	return 0;
}

/* A deferred table reads nothing of its object until a lookup: its
 * .eh_frame_hdr here is a page that cannot be read (a read would end the
 * test with SIGSEGV), made readable before the first lookup, which finds
 * no search table there (zeros) and so no row. */
static void test_lazy_deferred(void)
{
	unsigned char *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ehcfi_image img = { 0 };
	struct ehcfi_range r = { 0 };
	struct ehcfi_lazy *lz;
	int pending = 1;

	CHECK(page != MAP_FAILED);
	if (page == MAP_FAILED)
		return;
	img.bias = (uintptr_t)page;
	img.eh_frame_hdr = (uintptr_t)page;
	img.seg[0][0] = (uintptr_t)page;
	img.seg[0][1] = (uintptr_t)page + 4096;
	img.nseg = 1;
	lz = ehcfi_lazy_defer(&img);
	CHECK(lz != NULL);
	CHECK(mprotect(page, 4096, PROT_READ) == 0);
	r = (struct ehcfi_range){ (uintptr_t)page, (uintptr_t)page + 4096, (uintptr_t)page,
				  NULL, 0, 0, 0, NULL, lz };
	CHECK(lz == NULL || ehcfi_lazy_row(&r, (uintptr_t)page + 16, &pending) == NULL);
	CHECK_EQ(pending, 0);
	printf("deferred table: nothing read before the first lookup\n");
	ehcfi_lazy_free(lz);
	munmap(page, 4096);
}

static void test_lazy(void)
{
	size_t compared = 0;

	dl_iterate_phdr(lazy_compare, &compared);
	printf("lazy rows: %zu addresses compared\n", compared);
	CHECK(compared > 100000);
}

/* A fork child's reset of a lazy table (ehcfi_lazy_after_fork) writes
 * none of the pages of its chunks' states when no chunk is being made:
 * each page written would be copied in every child.  libc's table. */
static int after_fork_table(struct dl_phdr_info *info, size_t size, void *data)
{
	struct ehcfi_image img = { .bias = info->dlpi_addr };
	struct ehcfi_lazy **out = data;
	int have = 0;

	(void)size;
	if (strstr(info->dlpi_name, "libc.so") == NULL)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_EH_FRAME) {
			img.eh_frame_hdr = info->dlpi_addr + ph->p_vaddr;
			have = 1;
		} else if (ph->p_type == PT_LOAD && img.nseg < EHCFI_MAX_SEGS) {
			img.seg[img.nseg][0] = info->dlpi_addr + ph->p_vaddr;
			img.seg[img.nseg][1] = info->dlpi_addr + ph->p_vaddr + ph->p_filesz;
			img.nseg++;
		}
	}
	if (have)
		*out = ehcfi_lazy_new(&img);
	return 1;
}

static void test_after_fork(void)
{
	struct ehcfi_lazy *lz = NULL;
	int status = -1;
	pid_t pid;

	dl_iterate_phdr(after_fork_table, &lz);
	CHECK(lz != NULL);
	if (lz == NULL)
		return;
	/* its pages read in this process first (mapped, then, in the child
	 * too: a read there is no fault) */
	ehcfi_lazy_after_fork(lz);
	pid = fork();
	if (pid == 0) {
		struct rusage before, after;

		/* the code and the stack this uses faulted in first */
		memset(&before, 0, sizeof before);
		memset(&after, 0, sizeof after);
		ehcfi_lazy_after_fork(NULL);
		getrusage(RUSAGE_SELF, &before);
		getrusage(RUSAGE_SELF, &before);
		ehcfi_lazy_after_fork(lz);
		getrusage(RUSAGE_SELF, &after);
		_exit(after.ru_minflt - before.ru_minflt > 100 ? 100 :
						    (int)(after.ru_minflt - before.ru_minflt));
	}
	CHECK(pid > 0);
	if (pid > 0)
		waitpid(pid, &status, 0);
	printf("after fork: %d page faults in the reset of libc's lazy table\n",
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ehcfi_lazy_free(lz);
}

/* A lazy table touches no page of its chunks' states until a walk makes
 * a chunk: a process that ends before its first sample pays for none of
 * them (libc's 1,000 chunks are four pages).  Tables made one after the
 * other, each of which a calloc would clear. */
#define LAZY_NEW_TABLES 32

static void test_lazy_untouched(void)
{
	struct ehcfi_lazy *first = NULL, *lz[LAZY_NEW_TABLES] = { NULL };
	struct rusage before, after;
	long faults;
	int made = 0;

	/* the code, libc's search table and the stack faulted in first */
	dl_iterate_phdr(after_fork_table, &first);
	CHECK(first != NULL);
	if (first == NULL)
		return;
	getrusage(RUSAGE_SELF, &before);
	getrusage(RUSAGE_SELF, &before);
	for (int i = 0; i < LAZY_NEW_TABLES; i++) {
		dl_iterate_phdr(after_fork_table, &lz[i]);
		made += lz[i] != NULL;
	}
	getrusage(RUSAGE_SELF, &after);
	faults = after.ru_minflt - before.ru_minflt;
	printf("lazy tables: %d of libc made, %ld page faults\n", made, faults);
	CHECK_EQ(made, LAZY_NEW_TABLES);
	/* their headers, some 200 bytes each, and the loader's lock: a few
	 * pages; a cleared state array is four pages each, 128 in all */
	CHECK(faults < LAZY_NEW_TABLES);
	for (int i = 0; i < LAZY_NEW_TABLES; i++)
		ehcfi_lazy_free(lz[i]);
	ehcfi_lazy_free(first);
}

/* Stepping inside a signal handler: every walk passes the signal frame
 * (rt_sigreturn's trampoline) to the code the signal interrupted. */
static void test_signal(void)
{
	static const char *const callers[] = { "on_usr2", "run_signal", "main", NULL };
	static const char *const callers_after[] = { "run_signal", "main", NULL };
	size_t through = 0, trampoline = 0, bad = 0;

	run_signal();
	for (size_t i = 0; i < nsteps; i++) {
		const struct step *s = &steps[i];
		int in_handler = strcmp(name_of(s->pc), "on_usr2") == 0 || has_callers(s, callers);
		int sig = cfi_row_kind(s->pc) == CFI_ROW_SIGNAL;

		for (uint32_t f = 1; f < s->n; f++)
			if (cfi_row_kind(s->frames[f] - 1) == CFI_ROW_SIGNAL)
				sig = 1;
		through += sig && in_handler;
		trampoline += cfi_row_kind(s->pc) == CFI_ROW_SIGNAL;
		if (s->result != CFI_COMPLETE || !sig || !has_callers(s, callers_after)) {
			if (bad++ < 5)
				fprintf(stderr, "signal: step %zu at %#lx (%s): result %d (why %d), %u frames\n",
					i, (unsigned long)s->pc, name_of(s->pc), s->result, s->why, s->n);
		}
	}
	printf("signal: %zu instructions stepped, %zu in the handler's calls, %zu in the trampoline, %zu not unwound right\n",
	       (size_t)nsteps, through, trampoline, bad);
	CHECK(nsteps > 20);
	CHECK(through > 10);
	CHECK(trampoline > 0);
	CHECK_EQ(bad, 0);
}

__attribute__((noinline)) int recurse(int depth, uint64_t *frames, uint32_t *n, int *result)
{
	int r;

	if (depth == 0) {
		ucontext_t uc;
		enum cfi_failure why;

		getcontext(&uc);
		*result = cfi_unwind(&uc, stack_lo, stack_hi, frames, 1024, n, &why);
		return 1;
	}
	r = recurse(depth - 1, frames, n, result);
	sink += r; /* not a tail call */
	return r + 1;
}

static void test_recursion(void)
{
	static uint64_t frames[1024];
	uint32_t n = 0, deep = 0;
	int result = -1;

	recurse(200, frames, &n, &result);
	for (uint32_t i = 1; i < n; i++)
		deep += strcmp(name_of(frames[i] - 1), "recurse") == 0;
	printf("recursion: %u frames, %u of them recurse\n", n, deep);
	CHECK_EQ(result, CFI_COMPLETE);
	CHECK_EQ(deep, 200);
	CHECK_STR(name_of(frames[n - 1] - 1), "_start");
}

/* Garbage registers over a garbage stack: every walk ends, having read
 * nothing outside the stack it was given (a read outside would fault or
 * be caught by the sanitizers). */
static void test_garbage(void)
{
	enum { WORDS = 4096 };
	static uint64_t stack[WORDS];
	uintptr_t lo = (uintptr_t)stack, hi = lo + sizeof stack;
	uintptr_t code = (uintptr_t)cfi_nofp_target;
	uint64_t x = 0x9e3779b97f4a7c15ull, frames[DEPTH];
	size_t ends[3] = { 0, 0, 0 };

	for (int round = 0; round < 20000; round++) {
		ucontext_t uc;
		uint32_t n;
		enum cfi_failure why;
		int r;

		for (int i = 0; i < WORDS; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			switch (x % 4) {
			case 0: stack[i] = lo + x % sizeof stack; break;
			case 1: stack[i] = code - 4096 + x % 8192; break;
			case 2: stack[i] = (uintptr_t)&printf + x % 4096; break;
			default: stack[i] = x; break;
			}
		}
		memset(&uc, 0, sizeof uc);
		uc.uc_mcontext.gregs[REG_RSP] = (greg_t)(lo + (x >> 8) % (sizeof stack - 8));
		uc.uc_mcontext.gregs[REG_RBP] = (greg_t)stack[(x >> 20) % WORDS];
		uc.uc_mcontext.gregs[REG_RIP] = (greg_t)stack[(x >> 30) % WORDS];
		r = cfi_unwind(&uc, lo, hi, frames, DEPTH, &n, &why);
		CHECK(n <= DEPTH);
		ends[r]++;
		memo_same(&uc, lo, hi, r, n, frames);
		memo_same(&uc, lo, hi, r, n, frames);
		/* a word near the stack pointer changed: the kept walk must
		 * not be taken if it read it */
		stack[(uc.uc_mcontext.gregs[REG_RSP] - (greg_t)lo) / 8 + (x >> 40) % 16 % (WORDS / 2)] ^=
			x >> 3;
		r = cfi_unwind(&uc, lo, hi, frames, DEPTH, &n, &why);
		memo_same(&uc, lo, hi, r, n, frames);
		/* and the first frame's rbp (a walk through code no table
		 * covers steps by it) */
		uc.uc_mcontext.gregs[REG_RBP] = (greg_t)(lo + (x >> 12) % (sizeof stack - 8) / 8 * 8);
		r = cfi_unwind(&uc, lo, hi, frames, DEPTH, &n, &why);
		memo_same(&uc, lo, hi, r, n, frames);
	}
	printf("garbage: %zu complete, %zu at the frame limit, %zu failed\n", ends[0], ends[1],
	       ends[2]);
}

/* ---- the run's share of rows ---- */

/* libc's image, its executable segment (*lo, *hi) and a deferred lazy
 * table of it, in the share by its build ID when notes (else not). */
struct share_libc {
	struct ehcfi_image img;
	uintptr_t lo, hi;
	const struct dl_phdr_info *info;
	int notes;
	struct ehcfi_lazy *lz;
};

static int share_libc_table(struct dl_phdr_info *info, size_t size, void *data)
{
	struct share_libc *t = data;
	int have = 0;

	(void)size;
	if (strstr(info->dlpi_name, "libc.so") == NULL)
		return 0;
	memset(&t->img, 0, sizeof t->img);
	t->img.bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_GNU_EH_FRAME) {
			t->img.eh_frame_hdr = info->dlpi_addr + ph->p_vaddr;
			have = 1;
		} else if (ph->p_type == PT_LOAD && t->img.nseg < EHCFI_MAX_SEGS) {
			t->img.seg[t->img.nseg][0] = info->dlpi_addr + ph->p_vaddr;
			t->img.seg[t->img.nseg][1] = info->dlpi_addr + ph->p_vaddr + ph->p_filesz;
			t->img.nseg++;
			if (ph->p_flags & PF_X) {
				t->lo = info->dlpi_addr + ph->p_vaddr;
				t->hi = t->lo + ph->p_memsz;
			}
		}
	}
	t->lz = have ? ehcfi_lazy_defer(&t->img) : NULL;
	if (t->notes && t->lz != NULL) {
		uint8_t id[PROCMAPS_BUILD_ID_MAX];
		uint8_t len = procmaps_loaded_build_id(info, id);

		ehcfi_lazy_share_id(t->lz, ehcfi_share_id(id, len));
	}
	return 1;
}

/* In a child: looks up every 7th byte of libc's code in a fresh table
 * (in the share when notes), each row checked against the rows made at
 * once; exits with 0 when every row is right and the rows this process
 * made are none (made 0) or some (made 1), else 1. */
static void share_child(int notes, int made)
{
	struct share_libc t = { .notes = notes };
	struct ehcfi_lazy_stats before, after;
	struct ehcfi_rows b = { 0 };
	size_t wrong = 0, found = 0;

	dl_iterate_phdr(share_libc_table, &t);
	if (t.lz == NULL)
		_exit(1);
	ehcfi_build(&t.img, &b);
	ehcfi_lazy_stats(&before);
	for (uintptr_t pc = t.lo; pc < t.hi; pc += 7) {
		struct ehcfi_range eager = { t.lo, t.hi, t.img.bias, b.v, (uint32_t)b.n,
					     b.page_base, b.npages, b.pages, NULL };
		struct ehcfi_range lazy = eager;
		const struct ehcfi_row *x = ehcfi_row_find(&eager, pc), *y;
		int pending = 0;

		lazy.lazy = t.lz;
		y = ehcfi_lazy_row(&lazy, pc, &pending);
		if (y == NULL && (x == NULL || x->kind == EHCFI_NONE))
			continue;
		found++;
		if (pending || x == NULL || y == NULL || memcmp(x, y, sizeof *x) != 0)
			wrong++;
	}
	ehcfi_lazy_stats(&after);
	fprintf(stderr, "share: %s, %zu rows looked up, %zu wrong, %lu made here\n",
		notes ? "by build ID" : "no ID", found, wrong,
		(unsigned long)(after.rows - before.rows));
	_exit(wrong == 0 && found > 10000 && (made ? after.rows > before.rows : after.rows == before.rows)
		      ? 0 : 1);
}

static int share_run(int notes, int made)
{
	int status = -1;
	pid_t pid = fork();

	if (pid == 0)
		share_child(notes, made);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Two processes, one after the other, look up the same addresses of
 * libc: the first makes the rows and puts them in the share, the second
 * makes none and finds the same rows there.  A table whose object is not
 * named (no build ID) takes nothing from the share.  A share that is full
 * makes each process make its own. */
static void test_share(void)
{
	size_t len = (size_t)64 << 20;
	void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CHECK(base != MAP_FAILED);
	if (base == MAP_FAILED)
		return;
	ehcfi_share_use(base, len);
	CHECK_EQ(share_run(1, 1), 0);  /* made here, put there */
	CHECK_EQ(share_run(1, 0), 0);  /* taken from there */
	CHECK_EQ(share_run(0, 1), 0);  /* not named: made again */
	/* full: the rows cannot go in, each process makes its own */
	memset(base, 0, len);
	ehcfi_share_use(base, 2 * 4096 + 64 * 1024 + 8192);
	CHECK_EQ(share_run(1, 1), 0);
	CHECK_EQ(share_run(1, 1), 0);
	ehcfi_share_use(NULL, 0);
	munmap(base, len);
	printf("share: the rows made once, taken by the next process\n");
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_attr_t attr;
	void *addr;
	size_t size;
	uint64_t objects, rows, walks, hits;

	if (argc != 2) {
		fprintf(stderr, "usage: test-cfi PLUGIN.so\n");
		return 2;
	}
	steps = calloc(MAX_STEPS, sizeof *steps);
	CHECK(steps != NULL);
	if (steps == NULL)
		return check_done("cfi");
	pthread_getattr_np(pthread_self(), &attr);
	pthread_attr_getstack(&attr, &addr, &size);
	pthread_attr_destroy(&attr);
	stack_lo = (uintptr_t)addr;
	stack_hi = stack_lo + size;

	CHECK(cfi_refresh(NULL) >= 3); /* the program, libc, ld.so, the vDSO... */
	cfi_table_size(&objects, &rows);
	printf("tables: %lu ranges, %lu rows before the first walk\n", (unsigned long)objects,
	       (unsigned long)rows);
	CHECK(rows < 1000); /* made lazily */

	memset(&sa, 0, sizeof sa);
	sa.sa_flags = SA_SIGINFO;
	sa.sa_sigaction = on_trap;
	sigaction(SIGTRAP, &sa, NULL);
	sa.sa_sigaction = on_start;
	sigaction(SIGUSR1, &sa, NULL);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr2;
	sigaction(SIGUSR2, &sa, NULL);

	test_prologues();
	test_plt();
	test_dlopen(argv[1]);
	test_signal();
	test_recursion();
	test_garbage();
	test_lazy();
	test_lazy_deferred();
	cfi_table_size(&objects, &rows);
	printf("tables: %lu rows after the walks\n", (unsigned long)rows);
	CHECK(rows > 100);
	cfi_memo_stats(&walks, &hits);
	printf("kept walks: %lu walks, %lu from the table, %zu not as cfi_unwind's\n",
	       (unsigned long)walks, (unsigned long)hits, (size_t)memo_wrong);
	CHECK_EQ(memo_wrong, 0);
	CHECK(hits > walks / 4);
	CHECK(hits < walks);
	test_after_fork();
	test_lazy_untouched();
	test_share();
	free(steps);
	return check_done("cfi");
}
