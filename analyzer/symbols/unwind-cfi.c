/* unwind-cfi.c - fast offline unwinding of DWARF-mode samples with tables
 *
 * For each module of the Dwfl, the PT_LOAD segment of its file that holds
 * its .eh_frame_hdr (and the segments placed like it) is the image its
 * rows are made from (ehcfi_build), read through libelf's view of the
 * whole file; the rows are the tables', so nothing of the file is kept.
 * The ranges are the modules' own, as libdwfl finds a module for an
 * address, with the module's load bias.  Two modules that overlap get no
 * rows: which one libdwfl would take is its business.
 *
 * The walk is ehcfi_walk's exact walk over the stack copy, whose first
 * byte is at the sample's stack pointer; its results are stored as
 * unwind-dwarf.c stores libdwfl's (the same frames, the same "complete").
 */
#include "unwind-cfi.h"
#include "ehcfi.h"
#include "error.h"
#include "raw.h"

#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>

struct unwind_cfi {
	struct ehcfi_range *r;
	size_t n, cap;
};

/* The image of mod's file where libelf has its bytes; false when it has
 * no .eh_frame_hdr in a segment of the file. */
static bool module_image(Dwfl_Module *mod, struct ehcfi_image *img)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Phdr ph, hdr_ph = { 0 }, seg = { 0 };
	size_t phnum, size;
	bool have_hdr = false, have_seg = false;
	const char *raw;
	uint64_t delta;

	memset(img, 0, sizeof *img);
	if (!elf || elf_getphdrnum(elf, &phnum) != 0)
		return false;
	for (size_t i = 0; i < phnum; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME) {
			hdr_ph = ph;
			have_hdr = true;
		}
	if (!have_hdr)
		return false;
	for (size_t i = 0; i < phnum && !have_seg; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    hdr_ph.p_vaddr >= ph.p_vaddr && hdr_ph.p_vaddr - ph.p_vaddr < ph.p_filesz) {
			seg = ph;
			have_seg = true;
		}
	raw = elf_rawfile(elf, &size);
	if (!have_seg || !raw)
		return false;
	/* file offset o is at raw + o; address a of the segment at file
	 * offset a - delta */
	delta = seg.p_vaddr - seg.p_offset;
	img->bias = (uintptr_t)raw - (uintptr_t)delta;
	img->eh_frame_hdr = img->bias + (uintptr_t)hdr_ph.p_vaddr;
	for (size_t i = 0; i < phnum && img->nseg < EHCFI_MAX_SEGS; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    ph.p_vaddr - ph.p_offset != delta || ph.p_offset > size ||
		    ph.p_filesz > size - ph.p_offset)
			continue;
		img->seg[img->nseg][0] = (uintptr_t)raw + (uintptr_t)ph.p_offset;
		img->seg[img->nseg][1] = (uintptr_t)raw + (uintptr_t)(ph.p_offset + ph.p_filesz);
		img->nseg++;
	}
	return img->nseg > 0;
}

static int add_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
		      void *arg)
{
	struct unwind_cfi *t = arg;
	struct ehcfi_rows rows = { 0 };
	struct ehcfi_image img;
	Dwarf_Addr lo, hi;
	GElf_Addr bias;

	(void)userdata;
	(void)name;
	(void)start;
	if (!dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL) || lo >= hi ||
	    !dwfl_module_getelf(mod, &bias))
		return DWARF_CB_OK;
	if (module_image(mod, &img))
		ehcfi_build(&img, &rows);
	if (rows.oom) {
		pv_oom();
		return DWARF_CB_ABORT;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 16;
		struct ehcfi_range *r = realloc(t->r, cap * sizeof *r);

		if (!r) {
			free(rows.v);
			pv_oom();
			return DWARF_CB_ABORT;
		}
		t->r = r;
		t->cap = cap;
	}
	t->r[t->n++] = (struct ehcfi_range){ (uintptr_t)lo, (uintptr_t)hi, (uintptr_t)bias, rows.v,
					     (uint32_t)rows.n, rows.page_base, rows.npages,
					     rows.pages };
	return DWARF_CB_OK;
}

static int range_cmp(const void *a, const void *b)
{
	const struct ehcfi_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

struct unwind_cfi *unwind_cfi_new(Dwfl *dwfl)
{
	struct unwind_cfi *t = calloc(1, sizeof *t);

	if (!t) {
		pv_oom();
		return NULL;
	}
	if (dwfl_getmodules(dwfl, add_module, t, 0) != 0) {
		unwind_cfi_free(t);
		return NULL;
	}
	qsort(t->r, t->n, sizeof *t->r, range_cmp);
	/* overlapping modules: neither is walked */
	for (size_t i = 0; i + 1 < t->n; i++) {
		if (t->r[i].hi > t->r[i + 1].lo) {
			t->r[i].nrows = 0;
			t->r[i + 1].nrows = 0;
			if (t->r[i + 1].hi < t->r[i].hi)
				t->r[i + 1].hi = t->r[i].hi; /* keeps the ranges sorted by end */
		}
	}
	return t;
}

void unwind_cfi_free(struct unwind_cfi *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free((void *)t->r[i].rows);
	free(t->r);
	free(t);
}

int unwind_cfi_walk(const struct unwind_cfi *t, const uint64_t *regs, uint32_t nregs,
		    const unsigned char *stack, uint32_t stack_len, uint64_t *frames, uint32_t cap,
		    bool *complete)
{
	struct ehcfi_stack st;
	enum ehcfi_failure why;
	enum ehcfi_result r;
	uint32_t n;

	*complete = false;
	if (!t || nregs < RAW_NREGS || cap == 0 || regs[RAW_REG_RSP] + stack_len < regs[RAW_REG_RSP])
		return 0;
	st = (struct ehcfi_stack){ (uintptr_t)regs[RAW_REG_RSP],
				   (uintptr_t)(regs[RAW_REG_RSP] + stack_len), stack };
	r = ehcfi_walk(t->r, t->n, regs, &st, EHCFI_EXACT, frames, cap, &n, &why);
	if (r == EHCFI_FAILED || n == 0)
		return 0;
	*complete = r == EHCFI_COMPLETE;
	return (int)n;
}
