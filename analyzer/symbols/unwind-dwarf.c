/* unwind-dwarf.c - unwind DWARF-mode samples offline with libdwfl
 *
 * The collector saved each sample's registers and the top of its stack.
 * Here the Dwfl of the module table (modules.h), every ELF file the
 * process had mapped placed where it was, is attached once to a pretend
 * process whose single thread is "the current sample": the thread
 * callbacks hand libdwfl the saved registers and read memory from the
 * saved stack.  libdwfl then walks the frames with the files' CFI
 * (.eh_frame, or .debug_frame from separate debug info).  The files and
 * their parsed CFI are the table's: the symbolizers use the same ones.
 *
 * That is the slow way, kept for the samples the fast one cannot do: for
 * a trace that has many samples to unwind (a DWARF-mode one, not the few a
 * collector's own walk could not do), ahead also makes tables of the
 * modules' .eh_frame (unwind-cfi.h), and the walk callback, pure and safe in any number of
 * threads, unwinds with them what it can, exactly as libdwfl would; the
 * reader asks unwind (libdwfl) for the others.
 *
 * PROFVIEW_UNWIND=libdwfl in the environment leaves the tables unused (to
 * compare the two ways); PROFVIEW_UNWIND=stats says on standard error, at
 * the end, how many samples each way unwound.
 */
#include "unwind-dwarf.h"
#include "error.h"
#include "raw.h"
#include "unwind-cfi.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdwfl.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_TID 1

struct pv_unwinder {
	struct pv_modules *mods; /* the files, and the Dwfl attached to u */
	/* Reading the modules' DWARF ahead, while the samples are walked. */
	pthread_t loader;
	bool loading;
	atomic_bool stop_loading;
	Elf64_Ehdr machine_header;
	Elf *machine;         /* an ELF of that header alone */
	bool quiet;
	bool attached;
	struct unwind_cfi *tables; /* of the current trace's modules, or NULL */
	bool libdwfl_only;    /* PROFVIEW_UNWIND=libdwfl */
	bool stats;           /* PROFVIEW_UNWIND=stats */
	_Atomic uint64_t walked; /* samples the tables unwound */
	uint64_t slow;        /* samples libdwfl unwound */
	/* The sample being unwound. */
	const uint64_t *regs;
	const unsigned char *stack;
	uint64_t stack_lo, stack_len;
	uint64_t *frames;
	uint32_t cap, n;
	bool overflow;
	bool read_failed;     /* the walk wanted memory the copy does not have */
};


/* Thread callbacks: one thread, the current sample. */

static pid_t cb_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = arg;
	return FAKE_TID;
}

static bool cb_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	*thread_argp = arg;
	return tid == FAKE_TID;
}

static bool cb_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct pv_unwinder *u = arg;
	(void)dwfl;

	if (addr < u->stack_lo || addr - u->stack_lo > u->stack_len ||
	    u->stack_len - (addr - u->stack_lo) < sizeof *result) {
		/* Outside the copy: the walk ends here.  libdwfl takes a
		 * return address it cannot read for the end of the stack, so
		 * remember that this end was not the real one. */
		u->read_failed = true;
		return false;
	}
	memcpy(result, u->stack + (addr - u->stack_lo), sizeof *result);
	return true;
}

static bool cb_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct pv_unwinder *u = arg;
	Dwarf_Word regs[RAW_NREGS];

	memcpy(regs, u->regs, sizeof regs);
	return dwfl_thread_state_registers(thread, 0, RAW_NREGS, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = cb_next_thread,
	.get_thread = cb_get_thread,
	.memory_read = cb_memory_read,
	.set_initial_registers = cb_set_initial_registers,
};

/* The tables of the modules just placed, where libdwfl can unwind at
 * all (else neither way does). */
static int tables(struct pv_unwinder *u)
{
	unwind_cfi_free(u->tables);
	u->tables = NULL;
	if (!u->attached || u->libdwfl_only)
		return 0;
	u->tables = unwind_cfi_new(modules_dwfl(u->mods));
	return u->tables ? 0 : -1;
}

/* The DWARF of the modules is read (and decompressed) the first time a
 * symbolizer asks for it; most of it is needed once the samples are read.
 * While the walks over a DWARF-mode trace's samples run, a thread reads it
 * ahead, module by module, until the Dwfl is needed for anything else:
 * nothing else uses the Dwfl meanwhile (the walks use their own tables),
 * and settling stops it after the module it is reading. */
static int load_one(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	struct pv_unwinder *u = arg;
	Dwarf_Addr bias;

	(void)userdata;
	(void)name;
	(void)start;
	if (atomic_load_explicit(&u->stop_loading, memory_order_relaxed))
		return DWARF_CB_ABORT;
	dwfl_module_getdwarf(mod, &bias);
	return DWARF_CB_OK;
}

static void *loader(void *arg)
{
	struct pv_unwinder *u = arg;

	dwfl_getmodules(modules_dwfl(u->mods), load_one, u, 0);
	return NULL;
}

void unwinder_settle(struct pv_unwinder *u)
{
	if (!u || !u->loading)
		return;
	atomic_store(&u->stop_loading, true);
	pthread_join(u->loader, NULL);
	u->loading = false;
}

static int prepare(void *ctx, struct pv_profile *p)
{
	struct pv_unwinder *u = ctx;
	int placed;

	unwinder_settle(u);
	placed = modules_place(u->mods, p);

	if (placed < 0)
		return -1;
	/* The tables are made by ahead, for a trace that has samples to
	 * unwind: most have none. */
	unwind_cfi_free(u->tables);
	u->tables = NULL;
	if (u->attached)
		return 0;
	/* Given no ELF, libdwfl takes the machine from a module of the Dwfl,
	 * which a later trace may drop: the machine comes from the header of
	 * the registers' own instead, once some file is there to unwind
	 * through (with none, libdwfl says why it cannot unwind). */
	u->attached = dwfl_attach_state(modules_dwfl(u->mods), placed ? u->machine : NULL,
					p->pid ? (pid_t)p->pid : 1, &thread_callbacks, u);
	if (!u->attached && !u->quiet)
		pv_warn("cannot unwind stacks: %s; samples show their leaf only", dwfl_errmsg(-1));
	return 0;
}

/* Below this many samples to unwind, libdwfl alone unwinds them: it reads
 * the call frame information of the modules a walk passes through, where
 * the tables are made of every module's first. */
#define TABLES_MIN_SAMPLES 64

static void ahead(void *ctx, uint64_t nsamples)
{
	struct pv_unwinder *u = ctx;

	if (u->loading || nsamples < TABLES_MIN_SAMPLES || tables(u) < 0 || !u->tables)
		return;
	atomic_store(&u->stop_loading, false);
	u->loading = pthread_create(&u->loader, NULL, loader, u) == 0;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct pv_unwinder *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation) || pc == 0)
		return DWARF_CB_ABORT;
	if (u->n == u->cap) {
		u->overflow = true;
		return DWARF_CB_ABORT;
	}
	/* Callers are return addresses by convention (the reader steps back
	 * into the call); an activation frame in the middle (a signal frame)
	 * is not, so move it forward to keep the convention. */
	u->frames[u->n] = u->n == 0 || !activation ? pc : pc + 1;
	u->n++;
	return DWARF_CB_OK;
}

static int unwind(void *ctx, const uint64_t *regs, uint32_t nregs, const unsigned char *stack,
		  uint32_t stack_len, uint64_t *frames, uint32_t cap, bool *complete)
{
	struct pv_unwinder *u = ctx;
	int ret;

	*complete = false;
	if (!u->attached || nregs < RAW_NREGS)
		return 0;
	unwinder_settle(u);
	u->regs = regs;
	u->stack = stack;
	u->stack_lo = regs[RAW_REG_RSP];
	u->stack_len = stack_len;
	u->frames = frames;
	u->cap = cap;
	u->n = 0;
	u->overflow = false;
	u->read_failed = false;
	u->slow++;
	ret = dwfl_getthread_frames(modules_dwfl(u->mods), FAKE_TID, frame_cb, u);
	*complete = ret == 0 && !u->overflow && !u->read_failed;
	return (int)u->n;
}

static int walk(void *ctx, const uint64_t *regs, uint32_t nregs, const unsigned char *stack,
		uint32_t stack_len, uint64_t *frames, uint32_t cap, bool *complete)
{
	struct pv_unwinder *u = ctx;
	int n = unwind_cfi_walk(u->tables, regs, nregs, stack, stack_len, frames, cap, complete);

	if (n > 0 && u->stats)
		atomic_fetch_add_explicit(&u->walked, 1, memory_order_relaxed);
	return n;
}

struct pv_unwinder *unwinder_new(struct pv_modules *mods, bool quiet)
{
	const char *how = getenv("PROFVIEW_UNWIND");

	struct pv_unwinder *u = calloc(1, sizeof *u);

	if (!u) {
		pv_oom();
		return NULL;
	}
	u->mods = mods;
	u->quiet = quiet;
	u->libdwfl_only = how && strcmp(how, "libdwfl") == 0;
	u->stats = how && strcmp(how, "stats") == 0;
	/* x86-64, as raw.h's registers: libdwfl picks its backend by it. */
	u->machine_header = (Elf64_Ehdr){
		.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
			     EV_CURRENT },
		.e_type = ET_EXEC,
		.e_machine = EM_X86_64,
		.e_version = EV_CURRENT,
		.e_ehsize = sizeof u->machine_header,
	};
	elf_version(EV_CURRENT);
	u->machine = elf_memory((char *)&u->machine_header, sizeof u->machine_header);
	if (!u->machine) {
		pv_error("cannot describe the machine to libelf: %s", elf_errmsg(-1));
		free(u);
		return NULL;
	}
	return u;
}

void unwinder_free(struct pv_unwinder *u)
{
	if (!u)
		return;
	unwinder_settle(u);
	if (u->stats)
		fprintf(stderr, "profview: unwound %" PRIu64 " samples with the tables, %" PRIu64 " with libdwfl\n",
			atomic_load(&u->walked), u->slow);
	unwind_cfi_free(u->tables);
	elf_end(u->machine);
	free(u);
}

void unwinder_interface(struct pv_unwinder *u, struct raw_unwinder *out)
{
	out->ctx = u;
	out->prepare = prepare;
	out->ahead = ahead;
	out->unwind = unwind;
	out->walk = walk;
}
