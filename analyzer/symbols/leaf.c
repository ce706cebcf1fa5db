/* leaf.c - decide, with the leaf's CFI, whether the word at the stack
 * pointer is its caller
 *
 * A frame-pointer walk starts from the frame the leaf set up.  A leaf that
 * set up none (gcc makes none in a leaf that uses no stack, and no function
 * has one at its first instruction) leaves the frame pointer at its
 * caller's frame, so the walk goes straight to the caller's caller.  The
 * collector saves the word at the stack pointer; where the leaf's CFA is
 * the stack pointer + 8 the return address is exactly that word.
 */
#include "leaf.h"
#include "error.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>

#define X86_64_RSP 7 /* DWARF register number */

enum { UNKNOWN = 0, KEEP, DROP };

#define X86_64_RIP 16

/* The value of the CFA expression ops with the stack pointer at sp and the
 * program counter at pc, in *cfa; false for what this small evaluator does
 * not know.  Enough for the expressions linkers write for PLT stubs
 * ("rsp + 8 + ((rip & 15) >= 11) << 3": the stub's push moves the CFA). */
static bool eval_cfa(const Dwarf_Op *ops, size_t nops, uint64_t sp, uint64_t pc, uint64_t *cfa)
{
	uint64_t st[16];
	size_t n = 0;

	for (size_t i = 0; i < nops; i++) {
		uint8_t op = ops[i].atom;
		uint64_t a, b;

		if (op >= DW_OP_lit0 && op <= DW_OP_lit31) {
			if (n == 16)
				return false;
			st[n++] = op - DW_OP_lit0;
			continue;
		}
		if (op == DW_OP_breg7 || op == DW_OP_breg16 ||
		    (op == DW_OP_bregx && (ops[i].number == X86_64_RSP || ops[i].number == X86_64_RIP))) {
			bool rsp = op == DW_OP_breg7 || (op == DW_OP_bregx && ops[i].number == X86_64_RSP);
			int64_t off = (int64_t)(op == DW_OP_bregx ? ops[i].number2 : ops[i].number);
			if (n == 16)
				return false;
			st[n++] = (rsp ? sp : pc) + (uint64_t)off;
			continue;
		}
		switch (op) {
		case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u: case DW_OP_const8u:
		case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s: case DW_OP_const8s:
		case DW_OP_constu: case DW_OP_consts:
			if (n == 16)
				return false;
			st[n++] = ops[i].number;
			continue;
		case DW_OP_plus_uconst:
			if (n < 1)
				return false;
			st[n - 1] += ops[i].number;
			continue;
		case DW_OP_and: case DW_OP_or: case DW_OP_plus: case DW_OP_minus: case DW_OP_shl:
		case DW_OP_shr: case DW_OP_ge: case DW_OP_gt: case DW_OP_le: case DW_OP_lt:
		case DW_OP_eq: case DW_OP_ne:
			if (n < 2)
				return false;
			b = st[--n];
			a = st[n - 1];
			switch (op) {
			case DW_OP_and: a &= b; break;
			case DW_OP_or: a |= b; break;
			case DW_OP_plus: a += b; break;
			case DW_OP_minus: a -= b; break;
			case DW_OP_shl: a = b < 64 ? a << b : 0; break;
			case DW_OP_shr: a = b < 64 ? a >> b : 0; break;
			/* Comparisons are signed in DWARF. */
			case DW_OP_ge: a = (int64_t)a >= (int64_t)b; break;
			case DW_OP_gt: a = (int64_t)a > (int64_t)b; break;
			case DW_OP_le: a = (int64_t)a <= (int64_t)b; break;
			case DW_OP_lt: a = (int64_t)a < (int64_t)b; break;
			case DW_OP_eq: a = a == b; break;
			default: a = a != b; break;
			}
			st[n - 1] = a;
			continue;
		default:
			return false;
		}
	}
	if (n != 1)
		return false;
	*cfa = st[0];
	return true;
}

/* Is the return address at the stack pointer when the program counter is
 * at module address a? */
static bool ra_at_sp(Dwfl_Module *mod, GElf_Addr a)
{
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops;
	size_t nops;
	bool yes = false;

	if (!cfi || dwarf_cfi_addrframe(cfi, a - bias, &frame) != 0) {
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, a - bias, &frame) != 0)
			return false;
	}
	if (dwarf_frame_cfa(frame, &ops, &nops) == 0) {
		if (nops == 1 && ops[0].atom == DW_OP_bregx && ops[0].number == X86_64_RSP &&
		    ops[0].number2 == 8) {
			yes = true;
		} else {
			/* An expression: the same answer for two stack
			 * pointers, at the stub's own program counter. */
			uint64_t c1, c2, sp1 = 0x7ff000000000, sp2 = 0x7ff000100000;
			yes = eval_cfa(ops, nops, sp1, a - bias, &c1) &&
			      eval_cfa(ops, nops, sp2, a - bias, &c2) && c1 == sp1 + 8 && c2 == sp2 + 8;
		}
	}
	free(frame);
	return yes;
}

struct remap {
	uint32_t *keys, *vals; /* loc_off + 1 -> new loc_off */
	size_t n;
};

int pv_settle_leaf_candidates(struct pv_profile *p, struct pv_modules *mods)
{
	unsigned char *decision = NULL;
	struct remap rm = { 0 };
	uint32_t *buf = NULL;
	size_t cap = 0;
	int ret = -1;

	decision = calloc(p->nlocations ? p->nlocations : 1, 1);
	rm.n = 1024;
	while (rm.n < p->nsamples * 2)
		rm.n *= 2;
	rm.keys = calloc(rm.n, sizeof *rm.keys);
	rm.vals = calloc(rm.n, sizeof *rm.vals);
	if (!decision || !rm.keys || !rm.vals) {
		pv_oom();
		goto out;
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		struct pv_sample *s = &p->samples[i];
		const uint32_t *locs;
		uint32_t leaf, k = 0;

		if (!(s->flags & PV_SAMPLE_LEAF_CANDIDATE))
			continue;
		s->flags &= ~(uint32_t)PV_SAMPLE_LEAF_CANDIDATE;
		locs = pv_sample_locs(p, s);
		/* a kernel part: its user leaf is under the kernel frames */
		while (k < s->nlocs && pv_location_is_kernel(p, locs[k]))
			k++;
		if (s->nlocs - k < 2)
			continue;
		leaf = locs[k];
		if (decision[leaf] == UNKNOWN) {
			const struct pv_location *l = &p->locations[leaf];
			GElf_Addr a;
			Dwfl_Module *mod = modules_find(mods, l->mapping, l->address, &a);
			decision[leaf] = mod && ra_at_sp(mod, a) ? KEEP : DROP;
		}
		if (decision[leaf] == KEEP)
			continue;
		/* Samples of one stored stack share its new copy. */
		size_t h = (s->loc_off * 0x9e3779b1u) & (rm.n - 1);
		while (rm.keys[h] && rm.keys[h] != s->loc_off + 1)
			h = (h + 1) & (rm.n - 1);
		if (!rm.keys[h]) {
			if (cap < s->nlocs) {
				cap = s->nlocs;
				free(buf);
				buf = malloc(cap * sizeof *buf);
				if (!buf) {
					pv_oom();
					goto out;
				}
			}
			for (uint32_t j = 0, o = 0; j < s->nlocs; j++)
				if (j != k + 1)
					buf[o++] = locs[j];
			uint32_t off = pv_add_stack(p, buf, s->nlocs - 1);
			if (off == UINT32_MAX)
				goto out;
			rm.keys[h] = s->loc_off + 1;
			rm.vals[h] = off;
		}
		s->loc_off = rm.vals[h];
		s->nlocs--;
	}
	ret = 0;
out:
	free(decision);
	free(rm.keys);
	free(rm.vals);
	free(buf);
	return ret;
}
