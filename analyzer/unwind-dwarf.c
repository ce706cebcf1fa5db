/* unwind-dwarf.c - unwind DWARF-mode samples offline with libdwfl
 *
 * The collector saved each sample's registers and the top of its stack.
 * Here one Dwfl holds every ELF file the process had mapped, placed where
 * it was, and is attached once to a pretend process whose single thread
 * is "the current sample": the thread callbacks hand libdwfl the saved
 * registers and read memory from the saved stack.  libdwfl then walks the
 * frames with the files' CFI (.eh_frame, or .debug_frame from separate
 * debug info).  The Dwfl and its parsed CFI live for the whole trace.
 */
#include "unwind-dwarf.h"
#include "error.h"
#include "modules.h"
#include "util.h"
#include "raw.h"
#include "vdso.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FAKE_TID 1

struct pv_unwinder {
	Dwfl *dwfl;
	bool quiet;
	bool attached;
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

/* Load bias of a file mapped at start from file offset pgoff. */
static bool mapping_bias(int fd, uint64_t start, uint64_t pgoff, uint64_t *bias, bool *is_exec)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	size_t nph;
	bool ok = false;

	if (!elf)
		return false;
	if (gelf_getehdr(elf, &eh) && elf_getphdrnum(elf, &nph) == 0) {
		*is_exec = eh.e_type == ET_EXEC;
		for (size_t i = 0; i < nph && !ok; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			uint64_t first = ph.p_offset & ~(uint64_t)4095;
			if (pgoff >= first && pgoff < ph.p_offset + ph.p_filesz) {
				*bias = start - pgoff + ph.p_offset - ph.p_vaddr;
				ok = true;
			}
		}
	}
	elf_end(elf);
	return ok;
}

/* Report the file of mapping m at its place; files already placed are
 * skipped (a second placement of the same file cannot be in one Dwfl). */
static void report_mapping(struct pv_unwinder *u, const struct pv_profile *p,
			   const struct pv_mapping *m, char **seen, size_t *nseen)
{
	const char *path = pv_str(p, m->file);
	char fdpath[64];
	uint64_t bias;
	bool is_exec = false;
	int fd;

	for (size_t i = 0; i < *nseen; i++)
		if (strcmp(seen[i], path) == 0)
			return;
	seen[(*nseen)++] = (char *)path;
	if (m->kind == PV_MAP_VDSO) {
		fd = vdso_open(pv_str(p, m->build_id), m->limit - m->start);
		if (fd < 0)
			return;
		snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", fd);
	} else if (m->kind == PV_MAP_FILE) {
		fd = modules_open_file(path);
		if (fd < 0)
			return; /* the symbolizer warns about unreadable files */
	} else {
		return;
	}
	if (!mapping_bias(fd, m->start, m->offset, &bias, &is_exec)) {
		close(fd);
		return;
	}
	/* libdwfl takes the descriptor; ET_EXEC files sit where they say. */
	if (!dwfl_report_elf(u->dwfl, pv_base_name(path), m->kind == PV_MAP_VDSO ? fdpath : path, fd,
			     is_exec ? 0 : bias, true) && !u->quiet)
		pv_warn("cannot use the call frame information of '%s': %s; stacks through it stop there",
			path, dwfl_errmsg(-1));
}

static int prepare(void *ctx, struct pv_profile *p)
{
	struct pv_unwinder *u = ctx;
	char **seen = calloc(p->nmappings ? p->nmappings : 1, sizeof *seen);
	size_t nseen = 0;

	if (!seen)
		return pv_oom();
	if (u->dwfl)
		dwfl_end(u->dwfl);
	u->attached = false;
	u->dwfl = dwfl_begin(&modules_offline_callbacks);
	if (!u->dwfl) {
		free(seen);
		return pv_error("cannot start libdwfl: %s", dwfl_errmsg(-1));
	}
	dwfl_report_begin(u->dwfl);
	/* Newest first: later mapping records describe the process later. */
	for (size_t i = p->nmappings; i-- > 0;)
		report_mapping(u, p, &p->mappings[i], seen, &nseen);
	dwfl_report_end(u->dwfl, NULL, NULL);
	free(seen);
	u->attached = dwfl_attach_state(u->dwfl, NULL, p->pid ? (pid_t)p->pid : 1,
					&thread_callbacks, u);
	if (!u->attached && !u->quiet)
		pv_warn("cannot unwind stacks: %s; samples show their leaf only", dwfl_errmsg(-1));
	return 0;
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
	u->regs = regs;
	u->stack = stack;
	u->stack_lo = regs[RAW_REG_RSP];
	u->stack_len = stack_len;
	u->frames = frames;
	u->cap = cap;
	u->n = 0;
	u->overflow = false;
	u->read_failed = false;
	ret = dwfl_getthread_frames(u->dwfl, FAKE_TID, frame_cb, u);
	*complete = ret == 0 && !u->overflow && !u->read_failed;
	return (int)u->n;
}

struct pv_unwinder *unwinder_new(bool quiet)
{
	struct pv_unwinder *u = calloc(1, sizeof *u);

	if (!u) {
		pv_oom();
		return NULL;
	}
	u->quiet = quiet;
	return u;
}

void unwinder_free(struct pv_unwinder *u)
{
	if (!u)
		return;
	if (u->dwfl)
		dwfl_end(u->dwfl);
	free(u);
}

void unwinder_interface(struct pv_unwinder *u, struct raw_unwinder *out)
{
	out->ctx = u;
	out->prepare = prepare;
	out->unwind = unwind;
}
