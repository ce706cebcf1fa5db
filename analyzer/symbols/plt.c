/* plt.c - names for the stubs of the procedure linkage table (x86-64)
 *
 * Each stub jumps through a GOT slot: "jmp *disp32(%rip)" (ff 25), maybe
 * after endbr64 and with a bnd prefix (f2).  The relocation that fills that
 * slot (R_X86_64_JUMP_SLOT in .rela.plt, R_X86_64_GLOB_DAT in .rela.dyn for
 * .plt.got) names the symbol.  The lazy-binding half of an IBT PLT (.plt
 * when .plt.sec holds the jumps) has no such jump: its "push imm32" is the
 * index of the stub's relocation in .rela.plt.
 */
#include "plt.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef R_X86_64_JUMP_SLOT
#define R_X86_64_GLOB_DAT 6
#define R_X86_64_JUMP_SLOT 7
#define R_X86_64_IRELATIVE 37
#endif

/* The first allocated section holding vaddr, its header in *shdr. */
static Elf_Scn *section_at(Elf *elf, GElf_Addr vaddr, GElf_Shdr *shdr)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, shdr) || !(shdr->sh_flags & SHF_ALLOC) ||
		    shdr->sh_type == SHT_NOBITS)
			continue;
		if (vaddr >= shdr->sh_addr && vaddr - shdr->sh_addr < shdr->sh_size)
			return scn;
	}
	return NULL;
}

/* Name the symbol of relocation rela, read from the symbol table the
 * relocation section (header rshdr) links to. */
static bool reloc_name(Elf *elf, const GElf_Shdr *rshdr, const GElf_Rela *rela, char *buf,
		       size_t size)
{
	unsigned type = (unsigned)GELF_R_TYPE(rela->r_info);
	size_t symi = GELF_R_SYM(rela->r_info);

	if (type == R_X86_64_IRELATIVE) {
		snprintf(buf, size, "*ABS*+0x%" PRIx64 "@plt", (uint64_t)rela->r_addend);
		return true;
	}
	if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || symi == 0)
		return false;
	Elf_Scn *symscn = elf_getscn(elf, rshdr->sh_link);
	GElf_Shdr sshdr;
	GElf_Sym sym;
	Elf_Data *d;
	const char *name;

	if (!symscn || !gelf_getshdr(symscn, &sshdr) || !(d = elf_getdata(symscn, NULL)) ||
	    !gelf_getsym(d, (int)symi, &sym) ||
	    !(name = elf_strptr(elf, sshdr.sh_link, sym.st_name)) || !*name)
		return false;
	snprintf(buf, size, "%s@plt", name);
	return true;
}

/* The relocation filling GOT slot got (by_index: the index-th of .rela.plt
 * instead), named into buf. */
static bool slot_name(Elf *elf, bool by_index, uint64_t got, char *buf, size_t size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_RELA || shdr.sh_entsize == 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		size_t n = shdr.sh_size / shdr.sh_entsize;
		GElf_Rela rela;
		if (by_index) {
			/* .rela.plt: the relocations of the PLT's own GOT. */
			if (!(shdr.sh_flags & SHF_INFO_LINK) && shdr.sh_info == 0)
				continue;
			if (got >= n || !gelf_getrela(d, (int)got, &rela))
				continue;
			unsigned type = (unsigned)GELF_R_TYPE(rela.r_info);
			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_IRELATIVE)
				continue;
			return reloc_name(elf, &shdr, &rela, buf, size);
		}
		for (size_t i = 0; i < n; i++)
			if (gelf_getrela(d, (int)i, &rela) && rela.r_offset == got)
				return reloc_name(elf, &shdr, &rela, buf, size);
	}
	return false;
}

bool plt_name(Elf *elf, GElf_Addr vaddr, char *buf, size_t size)
{
	GElf_Ehdr ehdr;
	GElf_Shdr shdr;
	size_t shstrndx;
	Elf_Scn *scn;
	const char *sname;

	if (!elf || !gelf_getehdr(elf, &ehdr) || ehdr.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	scn = section_at(elf, vaddr, &shdr);
	if (!scn || !(sname = elf_strptr(elf, shstrndx, shdr.sh_name)) ||
	    strncmp(sname, ".plt", 4) != 0 || (sname[4] != '\0' && sname[4] != '.'))
		return false;

	uint64_t entsize = shdr.sh_entsize ? shdr.sh_entsize : 16;
	if (entsize < 6 || entsize > 64)
		return false;
	uint64_t start = shdr.sh_addr + (vaddr - shdr.sh_addr) / entsize * entsize;
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || start - shdr.sh_addr + entsize > d->d_size)
		return false;
	const uint8_t *b = (const uint8_t *)d->d_buf + (start - shdr.sh_addr);

	/* The stub's jump through its GOT slot. */
	for (uint64_t i = 0; i + 6 <= entsize; i++) {
		if (b[i] != 0xff || b[i + 1] != 0x25)
			continue;
		int32_t disp;
		memcpy(&disp, b + i + 2, 4);
		uint64_t got = start + i + 6 + (uint64_t)(int64_t)disp;
		/* The PLT header jumps through GOT[2], which no relocation
		 * fills: it is not named. */
		return slot_name(elf, false, got, buf, size);
	}
	/* An IBT PLT's lazy half: endbr64; push $index; bnd jmp .plt. */
	for (uint64_t i = 0; i + 5 <= entsize; i++) {
		if (b[i] != 0x68)
			continue;
		uint32_t idx;
		memcpy(&idx, b + i + 1, 4);
		return slot_name(elf, true, idx, buf, size);
	}
	return false;
}
