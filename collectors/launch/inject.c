/* inject.c - a library loaded into a running process by ptrace
 *
 * Why our own injector and not gdb: gdb stops every thread of the process
 * (a thread in epoll_wait then returns EINTR) and reads every library's
 * symbols first (a second or more stopped); here one thread is stopped,
 * for milliseconds, and the others never notice.
 *
 * The thread: one running in user code if there is one, else one blocked
 * in a system call that restarts after a stop (read, nanosleep, futex...),
 * one in epoll_wait or sigtimedwait last (those return EINTR after any
 * stop, a debugger's too).  It is seized (PTRACE_SEIZE, no SIGSTOP),
 * interrupted, and looked at: a thread inside the dynamic loader or the
 * allocator, or with a frame of either or of fork below, may hold a lock
 * our dlopen takes (the allocator's code: see inject_alloc_range); it is
 * let go and another one, or the same later, is tried, for
 * INJECT_TRIES_NS at most.  Its frames are found by unwinding a copy of
 * its stack with the unwind tables of the objects the process maps
 * (inject-walk.c), so that a stale return address in a frame's unused
 * bytes (a big local array, a buffer not yet written) does not make a
 * thread look busy when it is not.  Where the walk cannot go on (code
 * without call frame information, JIT code, a stack not copied), the top
 * INJECT_SCAN_BYTES of the stack it did not walk are judged word by word
 * instead, as return addresses: a word into the loader, the allocator or
 * fork makes the thread busy (safe, only slower).  Fork's frames and
 * words are let off in a process without other threads, whose fork takes
 * no lock: see inject_single.
 *
 * The calls: its registers saved (the general ones, and the floating
 * point and vector ones, which the calls use: a thread stopped in the
 * middle of a computation in them would go on with garbage), each call
 * is made on its stack below the red zone, with a return address of 0, so
 * that the return stops it with a SIGSEGV we take (never delivered).  __errno_location first, so
 * that errno is put back; dlopen(lib, RTLD_NOW), dlsym, then the function.
 * A signal that comes meanwhile is delivered as usual.  The registers put
 * back, a system call the thread was in restarts as after any stop (the
 * kernel's restart is decided from the registers we restore).
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "inject-walk.h"
#include "inject.h"

#define INJECT_SCAN_BYTES 32768
#define INJECT_TRIES_NS 3000000000ull
#define INJECT_RETRY_NS 20000000L
#define INJECT_RANGES 24

/* What the process has mapped that matters here. */
struct inject_maps {
	char libc[PATH_MAX];
	uintptr_t libc_base;
	uintptr_t ld_lo, ld_hi;
	int has_ld;
};

/* The C library's functions we call, and the ranges of those whose
 * callers may hold the allocator's locks. */
struct inject_syms {
	uintptr_t dlopen, dlsym, dlerror, errno_loc;
	uintptr_t lo[INJECT_RANGES], hi[INJECT_RANGES];
	unsigned char fork[INJECT_RANGES]; /* the range is fork's or _Fork's */
	int nranges;
	uintptr_t single;     /* __libc_single_threaded, 0: not found */
};

static uint64_t inject_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A file of /proc/PID into buf (NUL-terminated); its length or -1. */
static ssize_t inject_read_proc(pid_t pid, const char *file, char *buf, size_t cap)
{
	char path[64];
	ssize_t n, got = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (got < (ssize_t)cap - 1 && (n = read(fd, buf + got, cap - 1 - (size_t)got)) > 0)
		got += n;
	close(fd);
	buf[got] = '\0';
	return got;
}

static long inject_status_field(const char *status, const char *key)
{
	const char *p = strstr(status, key);

	return p != NULL ? strtol(p + strlen(key), NULL, 10) : -1;
}

/* Does process pid run under a seccomp filter (or strict mode)? */
static int inject_seccomp(pid_t pid)
{
	char buf[4096];

	return inject_read_proc(pid, "status", buf, sizeof(buf)) > 0 &&
	       inject_status_field(buf, "\nSeccomp:\t") > 0;
}

/* kernel.yama.ptrace_scope, 0 without Yama.  (PROFVIEW_TEST_PTRACE_SCOPE
 * in the environment stands for it, for the tests of a machine without
 * Yama: it can only make an attach refused.) */
static int inject_scope(void)
{
	char buf[16] = "";
	const char *test = getenv("PROFVIEW_TEST_PTRACE_SCOPE");
	int fd;

	if (test != NULL && atoi(test) > 0)
		return atoi(test);
	fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = '\0';
	close(fd);
	return atoi(buf);
}

int inject_check(pid_t pid)
{
	char buf[4096];
	const char *state;
	long tracer, uid;
	int scope;

	if (inject_read_proc(pid, "status", buf, sizeof(buf)) < 0) {
		cli_msg("no process %d: give the pid of a running process (pgrep NAME finds it)",
			(int)pid);
		return -1;
	}
	uid = inject_status_field(buf, "\nUid:\t");
	if (geteuid() != 0 && uid != (long)geteuid()) {
		cli_msg("process %d belongs to user %ld: run %s as that user, or as root",
			(int)pid, uid, cli_progname());
		return -1;
	}
	state = strstr(buf, "\nState:\t");
	if (state != NULL && state[8] == 'T') {
		cli_msg("process %d is stopped (SIGSTOP, ^Z): continue it first ('kill -CONT %d'); "
			"%s would not start it", (int)pid, (int)pid, cli_progname());
		return -1;
	}
	tracer = inject_status_field(buf, "\nTracerPid:\t");
	if (tracer > 0) {
		cli_msg("process %d is already traced by process %ld (a debugger, strace or another "
			"profiler): end that one first", (int)pid, tracer);
		return -1;
	}
	scope = inject_scope();
	if (scope == 3 || (scope == 2 && geteuid() != 0)) {
		cli_msg("kernel.yama.ptrace_scope is %d: %s%s%s", scope,
			scope == 3 ? "no process may be attached to until the next boot"
				   : "only root may attach: run ", scope == 3 ? "" : cli_progname(),
			scope == 3 ? "" : " as root, or 'sysctl kernel.yama.ptrace_scope=1'");
		return -1;
	}
	if (inject_read_proc(pid, "exe", buf, 1) < 0 && errno == ENOENT) {
		cli_msg("process %d is a kernel thread or a zombie: nothing to profile", (int)pid);
		return -1;
	}
	return 0;
}

/* The basename of a mapping's path. */
static const char *inject_base(const char *path)
{
	const char *b = strrchr(path, '/');

	return b != NULL ? b + 1 : path;
}

static int inject_read_maps(pid_t pid, struct inject_maps *m)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo, hi, off;
		char perms[8], file[PATH_MAX] = "";
		const char *b;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %4095[^\n]", &lo, &hi, perms, &off, file) < 4 ||
		    file[0] != '/')
			continue;
		b = inject_base(file);
		/* (its code: its data's addresses are on many a stack) */
		if ((strncmp(b, "ld-linux", 8) == 0 || strncmp(b, "ld-2.", 5) == 0 ||
		     strncmp(b, "ld64.so", 7) == 0) && perms[2] == 'x') {
			if (!m->has_ld || lo < m->ld_lo)
				m->ld_lo = lo;
			if (hi > m->ld_hi)
				m->ld_hi = hi;
			m->has_ld = 1;
		} else if ((strncmp(b, "libc.so", 7) == 0 || strncmp(b, "libc-2.", 7) == 0) &&
			   off == 0 && m->libc_base == 0) {
			snprintf(m->libc, sizeof(m->libc), "%s", file);
			m->libc_base = lo;
		}
	}
	fclose(f);
	return 0;
}

/* Is name one of the allocator's entry points (1), fork's, which takes
 * the allocator's locks (2), or neither (0)? */
static int inject_alloc_name(const char *name)
{
	static const char *const names[] = {
		"malloc", "free", "calloc", "realloc", "reallocarray", "memalign", "posix_memalign",
		"aligned_alloc", "valloc", "pvalloc", "malloc_info", "malloc_stats", "malloc_trim",
		"mallinfo", "mallinfo2", "mallopt", "cfree", "malloc_usable_size",
		"__default_morecore", NULL,
	};

	if (strcmp(name, "fork") == 0 || strcmp(name, "_Fork") == 0)
		return 2;
	if (strncmp(name, "__libc_", 7) == 0)
		name += 7;
	for (int i = 0; names[i] != NULL; i++)
		if (strcmp(names[i], name) == 0)
			return 1;
	return 0;
}

/* The allocator's code: its entry points are exported, its inner
 * functions (_int_malloc, the part of malloc_info that malloc_info jumps
 * to...) are not, and lie before them in the same object file's text.  So
 * from the end of the last other exported function below its entry points
 * to the end of the last of them: wider than the allocator, maybe, never
 * narrower. */
static void inject_alloc_range(const Elf64_Sym *sym, size_t n, const char *str, size_t strsize,
			       uintptr_t base, struct inject_syms *s)
{
	uint64_t lo = UINT64_MAX, hi = 0, below = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0; k < n; k++) {
			const char *name = str + sym[k].st_name;
			int kind;

			if (sym[k].st_name >= strsize || sym[k].st_value == 0 ||
			    ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC ||
			    memchr(name, '\0', strsize - sym[k].st_name) == NULL)
				continue;
			kind = inject_alloc_name(name);
			if (pass == 0 && kind == 1) {
				lo = sym[k].st_value < lo ? sym[k].st_value : lo;
				if (sym[k].st_value + sym[k].st_size > hi)
					hi = sym[k].st_value + sym[k].st_size;
			} else if (pass == 1 && kind == 0 && sym[k].st_value < lo &&
				   sym[k].st_value + sym[k].st_size > below) {
				below = sym[k].st_value + sym[k].st_size;
			}
		}
	}
	if (hi != 0 && s->nranges < INJECT_RANGES) {
		s->lo[s->nranges] = base + (below != 0 ? below : lo);
		s->hi[s->nranges++] = base + hi;
	}
}

/* The C library's dynamic symbols we need, from its file (mapped at
 * base; its first PT_LOAD at address 0, as a shared object's is). */
static int inject_read_syms(const char *file, uintptr_t base, struct inject_syms *s)
{
	struct stat st;
	const unsigned char *img;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	int fd = open(file, O_RDONLY | O_CLOEXEC), rc = -1;

	memset(s, 0, sizeof(*s));
	if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	img = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (img == MAP_FAILED)
		return -1;
	eh = (const Elf64_Ehdr *)img;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > (uint64_t)st.st_size)
		goto out;
	sh = (const Elf64_Shdr *)(img + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *str;
		const Elf64_Sym *sym;
		size_t n;

		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
			continue;
		str = &sh[sh[i].sh_link];
		if (sh[i].sh_offset + sh[i].sh_size > (uint64_t)st.st_size ||
		    str->sh_offset + str->sh_size > (uint64_t)st.st_size || str->sh_size == 0)
			goto out;
		sym = (const Elf64_Sym *)(img + sh[i].sh_offset);
		n = sh[i].sh_size / sizeof(Elf64_Sym);
		for (size_t k = 0; k < n; k++) {
			const char *name;

			if (sym[k].st_name >= str->sh_size || sym[k].st_value == 0 ||
			    (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC &&
			     ELF64_ST_TYPE(sym[k].st_info) != STT_OBJECT))
				continue;
			name = (const char *)img + str->sh_offset + sym[k].st_name;
			if (memchr(name, '\0', str->sh_size - sym[k].st_name) == NULL)
				continue;
			if (ELF64_ST_TYPE(sym[k].st_info) == STT_OBJECT) {
				if (strcmp(name, "__libc_single_threaded") == 0)
					s->single = base + sym[k].st_value;
				continue;
			}
			if (strcmp(name, "dlopen") == 0)
				s->dlopen = base + sym[k].st_value;
			else if (strcmp(name, "dlsym") == 0)
				s->dlsym = base + sym[k].st_value;
			else if (strcmp(name, "dlerror") == 0)
				s->dlerror = base + sym[k].st_value;
			else if (strcmp(name, "__errno_location") == 0)
				s->errno_loc = base + sym[k].st_value;
			else if (inject_alloc_name(name) == 2 && s->nranges < INJECT_RANGES) {
				s->fork[s->nranges] = 1;
				s->lo[s->nranges] = base + sym[k].st_value;
				s->hi[s->nranges++] = base + sym[k].st_value + sym[k].st_size;
			}
		}
		inject_alloc_range(sym, n, (const char *)img + str->sh_offset, str->sh_size, base, s);
		rc = s->dlopen && s->dlsym && s->dlerror && s->errno_loc ? 0 : -1;
	}
out:
	munmap((void *)img, (size_t)st.st_size);
	return rc;
}

/* ---- the thread ---- */

/* System calls that return EINTR after any stop, not restarted. */
static int inject_eintr_call(long nr)
{
	/* x86-64: semop, sigtimedwait, semtimedop, epoll_wait, epoll_pwait,
	 * epoll_pwait2 */
	return nr == 65 || nr == 128 || nr == 220 || nr == 232 || nr == 281 || nr == 441;
}

/* How good a choice thread tid is: 2 running, 1 in a restarting call, 0
 * in one that would return EINTR, -1 gone. */
static int inject_rank(pid_t pid, pid_t tid)
{
	char file[64], buf[256];

	snprintf(file, sizeof(file), "task/%d/syscall", (int)tid);
	if (inject_read_proc(pid, file, buf, sizeof(buf)) <= 0)
		return -1;
	if (strncmp(buf, "running", 7) == 0)
		return 2;
	return inject_eintr_call(strtol(buf, NULL, 10)) ? 0 : 1;
}

/* The process's threads, best choice first, into tids (at most cap).
 * Each is ranked once: a thread that runs and sleeps by turns would
 * else be missed by every pass, and the process taken for ended. */
static size_t inject_threads(pid_t pid, pid_t *tids, size_t cap)
{
	char path[64];
	struct dirent *de;
	size_t n = 0;
	int rank[256];
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (d == NULL)
		return 0;
	if (cap > sizeof(rank) / sizeof(rank[0]))
		cap = sizeof(rank) / sizeof(rank[0]);
	while ((de = readdir(d)) != NULL && n < cap) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid > 0 && (rank[n] = inject_rank(pid, tid)) >= 0)
			tids[n++] = tid;
	}
	closedir(d);
	/* by rank, best first, in the order found within one */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && rank[j - 1] < rank[j]; j--) {
			int r = rank[j];
			pid_t t = tids[j];

			rank[j] = rank[j - 1];
			tids[j] = tids[j - 1];
			rank[j - 1] = r;
			tids[j - 1] = t;
		}
	return n;
}

/* How alone the stopped thread tid is: 2 when its process never had a
 * second thread (__libc_single_threaded), 1 when it is the only one now,
 * 0 else.  A process that never had threads takes no lock in fork (the C
 * library takes the allocator's, the stdio streams' and the atfork
 * handlers' only in a process that had), so a frame of fork is no danger
 * there; and a pre-forked server's processes have stale return addresses
 * into fork in their stacks' unused bytes, left by the forks that made
 * them.  The words of the stack not walked are let off in a process with
 * one thread now too (one attached to before: the library's threads
 * ended): its fork takes the allocator's locks in functions of the
 * allocator, seen; a thread stopped in the atfork handlers fork runs, or
 * in its unlock of the stdio streams, below frames the walk could not
 * unwind, is the case missed there.  The instruction pointer in fork is
 * never let off. */
static int inject_single(pid_t pid, pid_t tid, const struct inject_syms *s)
{
	unsigned char flag = 0;
	struct iovec local = { &flag, 1 }, remote = { (void *)s->single, 1 };
	char buf[4096];
	const char *t;

	if (s->single != 0 && process_vm_readv(tid, &local, 1, &remote, 1, 0) == 1 && flag == 1)
		return 2;
	if (inject_read_proc(pid, "status", buf, sizeof(buf)) <= 0 ||
	    (t = strstr(buf, "\nThreads:")) == NULL)
		return 0;
	return strtol(t + 9, NULL, 10) == 1;
}

/* Is address a in the loader's code, the allocator's or fork's (not
 * fork's when single)?  A frame's (frame set) counts the end of each
 * range too: it is a program counter or a return address, which may be
 * either.  A word of the stack counts the loader's first byte, not the
 * allocator's: a return address is never its function's first byte, and
 * a pointer to malloc is no frame of malloc. */
static int inject_unsafe_addr(uint64_t a, int frame, int single, const struct inject_maps *m,
			      const struct inject_syms *s)
{
	if (a >= m->ld_lo && (a < m->ld_hi || (frame && a == m->ld_hi)))
		return 1;
	for (int i = 0; i < s->nranges; i++)
		if ((a > s->lo[i] || (frame && a == s->lo[i])) && a <= s->hi[i] &&
		    !(single && s->fork[i]))
			return 1;
	return 0;
}

/* Is a stopped thread at a point where our dlopen cannot deadlock?  Its
 * frames, as far as the walk went, and the top INJECT_SCAN_BYTES of the
 * stack it did not walk, word by word. */
static int inject_safe(pid_t pid, pid_t tid, const struct user_regs_struct *r,
		       const struct inject_maps *m, const struct inject_syms *s,
		       struct inject_objs *objs)
{
	static struct inject_walk w;
	int single = inject_single(pid, tid, s);
	uintptr_t end;

	/* the pc first: no walk needed to see it */
	if (inject_unsafe_addr(r->rip, 1, 0, m, s))
		return 0;
	if (inject_walk(objs, tid, r, &w) != 0)
		return 1; /* no stack to read: the pc alone, as it always was */
	for (uint32_t k = 1; k < w.n; k++)
		if (inject_unsafe_addr(w.frames[k], 1, single == 2, m, s))
			return 0;
	end = w.hi - w.rest > INJECT_SCAN_BYTES ? w.rest + INJECT_SCAN_BYTES : w.hi;
	for (uintptr_t a = w.rest; a < end; a += 8)
		if (inject_unsafe_addr(w.words[(a - w.lo) / 8], 0, single, m, s))
			return 0;
	return 1;
}

/* ---- the calls ---- */

struct inject_thread {
	pid_t pid, tid;
	struct user_regs_struct saved;
	/* its floating point and vector registers (x87, SSE, AVX, AVX-512:
	 * the XSAVE area, NT_X86_XSTATE; else NT_PRFPREG), which the calls
	 * use and its own code may be in the middle of */
	struct iovec fp;
	long fp_set;
	uintptr_t data;       /* where the next string goes, on its stack */
	int gone;             /* the thread or the process ended */
};

static unsigned char inject_fp[32768] __attribute__((aligned(64)));

/* Saves the stopped thread's floating point and vector registers: 0 or
 * -1. */
static int inject_save_fp(struct inject_thread *t)
{
	t->fp = (struct iovec){ inject_fp, sizeof(inject_fp) };
	t->fp_set = NT_X86_XSTATE;
	if (ptrace(PTRACE_GETREGSET, t->tid, (void *)t->fp_set, &t->fp) == 0)
		return 0;
	t->fp = (struct iovec){ inject_fp, sizeof(struct user_fpregs_struct) };
	t->fp_set = NT_PRFPREG;
	return ptrace(PTRACE_GETREGSET, t->tid, (void *)t->fp_set, &t->fp) == 0 ? 0 : -1;
}

/* Waits for the thread's next stop that is not a signal to deliver: its
 * status, or -1 when it ended.  Signals meanwhile are delivered. */
static int inject_wait(struct inject_thread *t, int want_sig)
{
	int status;

	for (;;) {
		if (waitpid(t->tid, &status, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			t->gone = 1;
			return -1;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			t->gone = 1;
			return -1;
		}
		if (!WIFSTOPPED(status))
			continue;
		if (WSTOPSIG(status) == want_sig && (want_sig != SIGTRAP || status >> 16 != 0))
			return status;
		/* a group stop, or a signal of the program's: on as usual */
		if (ptrace(PTRACE_CONT, t->tid, NULL,
			   (void *)(uintptr_t)(status >> 16 == PTRACE_EVENT_STOP ? 0
									 : WSTOPSIG(status))) != 0) {
			t->gone = 1;
			return -1;
		}
	}
}

/* Calls fn(a, b) in the stopped thread; 0 with its result in *ret. */
static int inject_run(struct inject_thread *t, uintptr_t fn, uintptr_t a, uintptr_t b,
		      uintptr_t *ret)
{
	struct user_regs_struct r = t->saved;
	uintptr_t sp = (t->data - 256) & ~(uintptr_t)15;
	long zero = 0;

	sp -= 8; /* the return address: 0 */
	if (ptrace(PTRACE_POKEDATA, t->tid, (void *)sp, (void *)zero) != 0)
		return -1;
	r.rsp = sp;
	r.rip = fn;
	r.rdi = a;
	r.rsi = b;
	r.rax = 0;
	r.orig_rax = (unsigned long)-1; /* no system call restarted into the call */
	if (ptrace(PTRACE_SETREGS, t->tid, NULL, &r) != 0 ||
	    ptrace(PTRACE_CONT, t->tid, NULL, NULL) != 0)
		return -1;
	if (inject_wait(t, SIGSEGV) < 0)
		return -1;
	if (ptrace(PTRACE_GETREGS, t->tid, NULL, &r) != 0 || r.rip != 0)
		return -1; /* a fault of its own: not ours to hide */
	*ret = r.rax;
	return 0;
}

/* Copies a string onto the thread's stack, below what it uses; its
 * address, or 0. */
static uintptr_t inject_string(struct inject_thread *t, const char *s)
{
	size_t n = strlen(s) + 1;
	struct iovec local = { (void *)s, n }, remote;

	t->data = (t->data - n) & ~(uintptr_t)15;
	remote.iov_base = (void *)t->data;
	remote.iov_len = n;
	return process_vm_writev(t->tid, &local, 1, &remote, 1, 0) == (ssize_t)n ? t->data : 0;
}

/* Reads a string of the thread's at addr into buf. */
static void inject_read_string(struct inject_thread *t, uintptr_t addr, char *buf, size_t cap)
{
	struct iovec local = { buf, cap - 1 }, remote = { (void *)addr, cap - 1 };
	ssize_t n = addr != 0 ? process_vm_readv(t->tid, &local, 1, &remote, 1, 0) : -1;

	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* The calls, in a thread stopped at a safe point.  0, or -1 said. */
static int inject_calls(struct inject_thread *t, const struct inject_syms *s, const char *lib,
			const char *func, const char *settings, long *ret)
{
	uintptr_t errp = 0, handle = 0, fn = 0, result = 0, libs, funcs, sets;
	char why[512];
	int err = 0;
	struct iovec local = { &err, sizeof(err) }, remote;

	/* below the red zone, and below whatever a signal frame could hold */
	t->data = t->saved.rsp - 4096;
	libs = inject_string(t, lib);
	funcs = inject_string(t, func);
	sets = inject_string(t, settings);
	if (libs == 0 || funcs == 0 || sets == 0 || inject_run(t, s->errno_loc, 0, 0, &errp) != 0)
		goto failed;
	remote.iov_base = (void *)errp;
	remote.iov_len = sizeof(err);
	if (process_vm_readv(t->tid, &local, 1, &remote, 1, 0) != sizeof(err) ||
	    inject_run(t, s->dlopen, libs, 2 /* RTLD_NOW */, &handle) != 0)
		goto failed;
	if (handle == 0) {
		uintptr_t msg = 0;

		if (inject_run(t, s->dlerror, 0, 0, &msg) != 0)
			goto failed;
		inject_read_string(t, msg, why, sizeof(why));
		if (inject_seccomp(t->pid))
			cli_msg("process %d cannot load %s: %s (its seccomp filter forbids the calls "
				"loading a library makes: start the program under %s instead)",
				(int)t->pid, lib, why, cli_progname());
		else
			cli_msg("process %d cannot load %s: %s", (int)t->pid, lib, why);
		*ret = -1;
	} else if (inject_run(t, s->dlsym, handle, funcs, &fn) != 0 || fn == 0) {
		cli_msg("process %d loaded %s, which has no %s: a library of another version?",
			(int)t->pid, lib, func);
		*ret = -1;
	} else if (inject_run(t, fn, sets, 0, &result) != 0) {
		goto failed;
	} else {
		*ret = (long)(int)result;
	}
	process_vm_writev(t->tid, &local, 1, &remote, 1, 0);
	return 0;
failed:
	if (t->gone)
		cli_msg("process %d ended while %s attached to it", (int)t->pid, cli_progname());
	else
		cli_msg("cannot call into process %d: %s", (int)t->pid, strerror(errno));
	return -1;
}

/* Seizes and stops thread tid: 0, 1 when it is not at a safe point (let
 * go), -1 when it cannot be stopped. */
static int inject_stop(struct inject_thread *t, const struct inject_maps *m,
		       const struct inject_syms *s, struct inject_objs *objs)
{
	if (ptrace(PTRACE_SEIZE, t->tid, NULL, NULL) != 0)
		return -1;
	if (ptrace(PTRACE_INTERRUPT, t->tid, NULL, NULL) != 0 || inject_wait(t, SIGTRAP) < 0 ||
	    ptrace(PTRACE_GETREGS, t->tid, NULL, &t->saved) != 0) {
		ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
		return -1;
	}
	if (!inject_safe(t->pid, t->tid, &t->saved, m, s, objs)) {
		ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
		return 1;
	}
	if (inject_save_fp(t) != 0) {
		ptrace(PTRACE_DETACH, t->tid, NULL, NULL);
		return -1;
	}
	return 0;
}

int inject_call(pid_t pid, const char *lib, const char *func, const char *settings, long *ret,
		uint64_t *stopped_ns)
{
	struct inject_maps m;
	struct inject_syms s;
	struct inject_thread t;
	struct inject_objs *objs;
	pid_t tids[256];
	uint64_t t0 = inject_now(), stop0;
	int rc = -1, busy = 0;

	if (inject_read_maps(pid, &m) != 0) {
		cli_msg("process %d ended while %s attached to it", (int)pid, cli_progname());
		return -1;
	}
	if (!m.has_ld || m.libc_base == 0) {
		cli_msg("process %d has no dynamic loader or C library mapped (a static program?): "
			"%s -p loads its library with the C library's dlopen; run the "
			"program under %s instead", (int)pid, cli_progname(), cli_progname());
		return -1;
	}
	if (inject_read_syms(m.libc, m.libc_base, &s) != 0) {
		cli_msg("cannot find dlopen in '%s', the C library of process %d (glibc 2.34 or "
			"later is needed)", m.libc, (int)pid);
		return -1;
	}
	if ((objs = inject_objs_new(pid)) == NULL) {
		if (errno == ENOMEM)
			cli_msg("out of memory reading the mappings of process %d", (int)pid);
		else
			cli_msg("process %d ended while %s attached to it", (int)pid, cli_progname());
		return -1;
	}
	while (inject_now() - t0 < INJECT_TRIES_NS) {
		size_t n = inject_threads(pid, tids, sizeof(tids) / sizeof(tids[0]));

		if (n == 0) {
			cli_msg("process %d ended while %s attached to it", (int)pid, cli_progname());
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			memset(&t, 0, sizeof(t));
			t.pid = pid;
			t.tid = tids[i];
			stop0 = inject_now();
			rc = inject_stop(&t, &m, &s, objs);
			if (rc == 0)
				goto stopped;
			if (rc < 0 && errno == EPERM && inject_scope() == 1) {
				cli_msg("not permitted to trace process %d: kernel.yama.ptrace_scope is "
					"1 (only a process's ancestors may): run %s as root, "
					"or 'sysctl kernel.yama.ptrace_scope=0'", (int)pid, cli_progname());
				goto out;
			}
			if (rc < 0 && errno == EPERM) {
				cli_msg("not permitted to trace process %d (%s): run %s as "
					"root, or as the process's user", (int)pid, strerror(errno),
					cli_progname());
				goto out;
			}
			busy += rc > 0;
		}
		nanosleep(&(struct timespec){ 0, INJECT_RETRY_NS }, NULL);
	}
	cli_msg("process %d stayed busy in the allocator or the dynamic loader for %g s (%d "
		"looks): try again", (int)pid, INJECT_TRIES_NS / 1e9, busy);
	goto out;
stopped:
	rc = inject_calls(&t, &s, lib, func, settings, ret);
	if (!t.gone) {
		ptrace(PTRACE_SETREGSET, t.tid, (void *)t.fp_set, &t.fp);
		ptrace(PTRACE_SETREGS, t.tid, NULL, &t.saved);
		ptrace(PTRACE_DETACH, t.tid, NULL, NULL);
	}
	*stopped_ns = inject_now() - stop0;
	inject_objs_free(objs);
	return rc;
out:
	inject_objs_free(objs);
	return -1;
}
