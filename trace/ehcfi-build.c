/* ehcfi-build.c - unwind tables made of .eh_frame (see ehcfi.h; the walk
 * over them is ehcfi.c)
 *
 * The tables.  An object's .eh_frame_hdr lists every FDE; each FDE's
 * instructions, after its CIE's, are run once here, and every change of
 * rule gives a row:
 *
 *   pc      first address the row applies to (offset from the load bias)
 *   kind    how to find the CFA: register + offset; *(register + offset)
 *           (a stack realigned by the prologue); the PLT stub expression
 *           (rsp + 8, + 8 more in the second half of a 16-byte entry); a
 *           signal trampoline (the interrupted registers are in a
 *           ucontext at the stack pointer); the outermost frame (return
 *           address undefined); no CFI; a rule we do not express
 *   rbp     unchanged, saved at CFA + offset or at rbp + offset, or unknown
 *   saves   the slots CFA + n of every saved register, as a range of n, or
 *           "opaque" where a register's rule is an expression
 *
 * The return address is at CFA - 8 on x86-64; a row whose CIE says
 * otherwise is "a rule we do not express".  Rows are sorted by address;
 * where an FDE ends and no other starts, a "no CFI" row ends it.  Every
 * read of the object's bytes is kept within the segment of the image that
 * holds what is read, so hostile bytes make wrong rows, never a wrong
 * read.
 */
#include "ehcfi-int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define STATE_DEPTH 16

/* ---- reading the sections ---- */

/* A bounded cursor over memory of a loaded object. */
struct cur {
	const unsigned char *p, *end;
	int bad;
};

static uint64_t cur_fixed(struct cur *c, size_t n)
{
	uint64_t v = 0;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, n); /* little-endian */
	c->p += n;
	return v;
}

/* A LEB128 number, sign-extended when sign is set. */
static uint64_t cur_leb(struct cur *c, int sign)
{
	uint64_t v = 0;
	unsigned shift = 0;
	unsigned char b;

	do {
		if (c->bad || c->p >= c->end) {
			c->bad = 1;
			return 0;
		}
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (sign && shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return v;
}

static uint64_t cur_uleb(struct cur *c)
{
	return cur_leb(c, 0);
}

static int64_t cur_sleb(struct cur *c)
{
	return (int64_t)cur_leb(c, 1);
}

/* DW_EH_PE_* pointer encodings */
#define PE_OMIT 0xff
#define PE_FORMAT 0x0f
#define PE_APPL 0x70
#define PE_INDIRECT 0x80
#define PE_PCREL 0x10
#define PE_DATAREL 0x30

/* Reads a pointer in encoding enc; datarel is the base of DW_EH_PE_datarel
 * (the .eh_frame_hdr), 0 where it does not apply.  Sets c->bad on an
 * encoding we do not read. */
static uintptr_t cur_pointer(struct cur *c, unsigned enc, uintptr_t datarel)
{
	uintptr_t at = (uintptr_t)c->p, base = 0;
	uint64_t v;

	if (enc == PE_OMIT)
		return 0;
	switch (enc & PE_FORMAT) {
	case 0x00: v = cur_fixed(c, 8); break;
	case 0x01: v = cur_uleb(c); break;
	case 0x02: v = cur_fixed(c, 2); break;
	case 0x03: v = cur_fixed(c, 4); break;
	case 0x04: v = cur_fixed(c, 8); break;
	case 0x09: v = (uint64_t)cur_sleb(c); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)cur_fixed(c, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)cur_fixed(c, 4); break;
	case 0x0c: v = cur_fixed(c, 8); break;
	default: c->bad = 1; return 0;
	}
	switch (enc & PE_APPL) {
	case 0x00: break;
	case PE_PCREL: base = at; break;
	case PE_DATAREL:
		if (datarel == 0)
			c->bad = 1;
		base = datarel;
		break;
	default: c->bad = 1; return 0;
	}
	/* indirect pointers (personality routines) are only skipped */
	return (uintptr_t)(v + base);
}

/* ---- running the CFA programs ---- */

struct cie {
	uint64_t code_align;
	int64_t data_align;
	unsigned ra_reg;
	unsigned fde_enc;
	int signal;            /* augmentation 'S' */
	int has_z;
	const unsigned char *insns, *insns_end;
};

/* The rules we track, as the CFA program leaves them. */
struct rules {
	uint8_t kind;          /* KIND_REG, KIND_DEREF, KIND_PLT or KIND_BAD for the CFA */
	uint8_t cfa_reg;
	int64_t cfa_off;
	int64_t plt_threshold;
	uint8_t fp_rule;
	int64_t fp_off;
	int ra_undefined;
	int ra_ok;             /* return address at CFA - 8 */
	/* of every register the walk starts from (a bit each): saved at an
	 * offset from the CFA (and the offset), or by a rule that may read
	 * memory (an expression) */
	uint32_t at_cfa, opaque;
	int64_t save_off[DW_NREGS];
};

/* Reads a CIE at p (its length field) within [lo, hi). */
static int cie_parse(const unsigned char *p, const unsigned char *lo, const unsigned char *hi,
		     struct cie *cie)
{
	struct cur c = { p, hi, 0 };
	uint64_t len = cur_fixed(&c, 4);
	const unsigned char *end;
	char aug[16];
	unsigned version, i = 0;

	if (p < lo)
		return -1;
	if (len == 0xffffffffu)
		len = cur_fixed(&c, 8);
	if (c.bad || len > (uint64_t)(hi - c.p))
		return -1;
	end = c.p + len;
	c.end = end;
	if (cur_fixed(&c, 4) != 0) /* CIE id in .eh_frame */
		return -1;
	version = (unsigned)cur_fixed(&c, 1);
	if (version != 1 && version != 3)
		return -1;
	for (;;) {
		unsigned char ch = (unsigned char)cur_fixed(&c, 1);

		if (c.bad || i == sizeof aug - 1)
			return -1;
		aug[i++] = (char)ch;
		if (ch == 0)
			break;
	}
	if (strstr(aug, "eh") != NULL)
		cur_fixed(&c, 8);
	memset(cie, 0, sizeof *cie);
	cie->code_align = cur_uleb(&c);
	cie->data_align = cur_sleb(&c);
	cie->ra_reg = version == 1 ? (unsigned)cur_fixed(&c, 1) : (unsigned)cur_uleb(&c);
	cie->fde_enc = 0;
	if (aug[0] == 'z') {
		uint64_t alen = cur_uleb(&c);
		const unsigned char *aend;

		if (c.bad || alen > (uint64_t)(end - c.p))
			return -1;
		aend = c.p + alen;
		cie->has_z = 1;
		for (i = 1; aug[i] != 0; i++) {
			switch (aug[i]) {
			case 'L': cur_fixed(&c, 1); break;
			case 'P': {
				unsigned enc = (unsigned)cur_fixed(&c, 1);

				cur_pointer(&c, enc & ~(unsigned)PE_INDIRECT & ~(unsigned)PE_DATAREL, 0);
				break;
			}
			case 'R': cie->fde_enc = (unsigned)cur_fixed(&c, 1); break;
			case 'S': cie->signal = 1; break;
			default: break; /* 'B', 'G': nothing for us */
			}
		}
		c.p = aend;
	} else if (aug[0] != 0) {
		return -1; /* an augmentation we cannot skip */
	}
	if (c.bad || cie->ra_reg != DW_RA)
		return -1;
	cie->insns = c.p;
	cie->insns_end = end;
	return 0;
}

/* Recognizes a CFA expression: "breg N; deref" and the PLT stub's. */
static void cfa_expression(const unsigned char *p, uint64_t len, struct rules *r)
{
	struct cur c = { p, p + len, 0 };
	unsigned op = (unsigned)cur_fixed(&c, 1);
	int64_t off;

	r->kind = KIND_BAD;
	if (op < 0x70 || op > 0x8f) /* DW_OP_breg0..31 */
		return;
	off = cur_sleb(&c);
	if (c.bad)
		return;
	if (c.p == c.end) {
		r->kind = KIND_REG;
	} else if (c.end - c.p == 1 && *c.p == 0x06) { /* DW_OP_deref */
		r->kind = KIND_DEREF;
	} else if (op == 0x70 + DW_RSP && c.end - c.p == 9 && c.p[0] == 0x70 + DW_RA &&
		   c.p[1] == 0 && c.p[2] == 0x3f /* lit15 */ && c.p[3] == 0x1a /* and */ &&
		   c.p[4] >= 0x30 && c.p[4] <= 0x3f /* litK */ && c.p[5] == 0x2a /* ge */ &&
		   c.p[6] == 0x33 /* lit3 */ && c.p[7] == 0x24 /* shl */ && c.p[8] == 0x22 /* plus */) {
		r->kind = KIND_PLT;
		r->plt_threshold = c.p[4] - 0x30;
	} else {
		return;
	}
	r->cfa_reg = (uint8_t)(op - 0x70);
	r->cfa_off = off;
}

/* Growing array of rows. */
/* The slots of saved registers into row: their range, or opaque. */
static void row_saves(struct ehcfi_row *row, const struct rules *r)
{
	int64_t lo = INT64_MAX, hi = INT64_MIN;

	if (r->opaque != 0)
		row->reg |= EHCFI_ROW_OPAQUE;
	for (uint32_t m = r->at_cfa; m != 0; m &= m - 1) {
		int i = __builtin_ctz(m);

		if (r->save_off[i] < lo)
			lo = r->save_off[i];
		if (r->save_off[i] > hi)
			hi = r->save_off[i];
	}
	if (lo > hi) {
		row->save_lo = 1; /* none: an empty range */
		row->save_hi = 0;
		return;
	}
	if (lo < INT16_MIN || hi > INT16_MAX) {
		row->reg |= EHCFI_ROW_OPAQUE;
		return;
	}
	row->save_lo = (int16_t)lo;
	row->save_hi = (int16_t)hi;
}

static int row_same(const struct ehcfi_row *a, const struct ehcfi_row *b)
{
	return a->kind == b->kind && a->off == b->off && a->fp_off == b->fp_off &&
	       a->reg == b->reg && a->save_lo == b->save_lo && a->save_hi == b->save_hi;
}

static void rows_push(struct ehcfi_rows *b, uintptr_t pc, uintptr_t bias, const struct rules *r,
		      int signal)
{
	struct ehcfi_row row = { 0 };
	uint64_t off = pc - bias;

	if (b->oom || pc < bias || off > UINT32_MAX)
		return;
	row.pc = (uint32_t)off;
	if (r == NULL) {
		row.kind = KIND_NONE;
	} else if (signal) {
		row.kind = KIND_SIGNAL;
	} else if (r->ra_undefined) {
		row.kind = KIND_END;
		row_saves(&row, r);
	} else if (!r->ra_ok || r->kind == KIND_BAD || r->cfa_reg >= DW_NREGS ||
		   r->cfa_off < INT32_MIN || r->cfa_off > INT32_MAX) {
		row.kind = KIND_BAD;
	} else {
		row.kind = r->kind;
		row.off = (int32_t)r->cfa_off;
		row.reg = r->cfa_reg;
		if (r->kind == KIND_PLT)
			row.fp_off = (int16_t)r->plt_threshold;
		if ((r->fp_rule == FP_OFFSET || r->fp_rule == FP_AT_RBP) && r->fp_off >= INT16_MIN &&
		    r->fp_off <= INT16_MAX) {
			row.reg |= (uint8_t)(r->fp_rule << 5);
			if (r->kind != KIND_PLT)
				row.fp_off = (int16_t)r->fp_off;
			else
				row.reg = (uint8_t)((row.reg & 0x1f) | FP_UNKNOWN << 5);
		} else if (r->fp_rule != FP_SAME) {
			row.reg |= FP_UNKNOWN << 5;
		}
		row_saves(&row, r);
	}
	if (b->n > 0) {
		struct ehcfi_row *last = &b->v[b->n - 1];

		if (last->pc == row.pc) { /* no advance since: replace */
			*last = row;
			return;
		}
		if (row_same(last, &row) && last->pc < row.pc)
			return; /* same rules go on */
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		struct ehcfi_row *v = b->fixed ? NULL : realloc(b->v, cap * sizeof *v);

		if (v == NULL) {
			b->oom = 1;
			return;
		}
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = row;
}

/* v * align, or INT64_MIN (an offset no row takes) when that overflows:
 * the numbers come from the file. */
static int64_t scaled(int64_t v, int64_t align)
{
	int64_t r;

	return __builtin_mul_overflow(v, align, &r) ? INT64_MIN : r;
}

/* Applies one register rule to the ones we track. */
static void set_rule(struct rules *r, uint64_t reg, int kind, int64_t off)
{
	/* kind: 0 undefined, 1 same value, 2 offset(N), 3 anything else
	 * that reads no memory, 4 what may read memory (an expression) */
	if (reg < DW_NREGS) {
		uint32_t bit = 1u << reg;

		r->save_off[reg] = off;
		r->at_cfa = kind == 2 ? r->at_cfa | bit : r->at_cfa & ~bit;
		r->opaque = kind == 4 ? r->opaque | bit : r->opaque & ~bit;
	}
	if (reg == DW_RBP) {
		r->fp_rule = kind == 2 ? FP_OFFSET : kind == 1 ? FP_SAME : FP_UNKNOWN;
		r->fp_off = off;
	} else if (reg == DW_RA) {
		r->ra_undefined = kind == 0;
		r->ra_ok = kind == 2 && off == -8;
	}
}

/* DW_CFA_restore: register reg's rule back to the CIE's. */
static void restore_rule(struct rules *r, const struct rules *init, uint64_t reg)
{
	if (reg < DW_NREGS) {
		uint32_t bit = 1u << reg;

		r->save_off[reg] = init->save_off[reg];
		r->at_cfa = (r->at_cfa & ~bit) | (init->at_cfa & bit);
		r->opaque = (r->opaque & ~bit) | (init->opaque & bit);
	}
	if (reg == DW_RBP) {
		r->fp_rule = init->fp_rule;
		r->fp_off = init->fp_off;
	} else if (reg == DW_RA) {
		r->ra_undefined = init->ra_undefined;
		r->ra_ok = init->ra_ok;
	}
}

/* A CFA program being run: its instructions, its CIE, the CIE's rules
 * (NULL while running the CIE's own), the rules in force and those
 * remembered. */
struct prog {
	struct cur c;
	const struct cie *cie;
	const struct rules *init;
	struct rules *r;
	struct rules stack[STATE_DEPTH];
	int depth;
};

/* The instructions that define the CFA (0x0c-0x0f, 0x12, 0x13).  0, or -1
 * on one we cannot read. */
static int run_cfa_op(struct prog *pr, unsigned op)
{
	struct cur *c = &pr->c;
	struct rules *r = pr->r;
	uint64_t reg, len;

	switch (op) {
	case 0x0c: /* def_cfa */
		r->kind = KIND_REG;
		r->cfa_reg = (uint8_t)(reg = cur_uleb(c));
		if (reg >= DW_NREGS)
			r->kind = KIND_BAD;
		r->cfa_off = (int64_t)cur_uleb(c);
		break;
	case 0x0d: /* def_cfa_register */
		reg = cur_uleb(c);
		if (r->kind != KIND_REG || reg >= DW_NREGS)
			r->kind = KIND_BAD;
		r->cfa_reg = (uint8_t)reg;
		break;
	case 0x0e: /* def_cfa_offset */
		r->cfa_off = (int64_t)cur_uleb(c);
		if (r->kind != KIND_REG)
			r->kind = KIND_BAD;
		break;
	case 0x0f: /* def_cfa_expression */
		len = cur_uleb(c);
		if (c->bad || len > (uint64_t)(c->end - c->p))
			return -1;
		cfa_expression(c->p, len, r);
		c->p += len;
		break;
	case 0x12: /* def_cfa_sf */
		r->kind = KIND_REG;
		r->cfa_reg = (uint8_t)(reg = cur_uleb(c));
		if (reg >= DW_NREGS)
			r->kind = KIND_BAD;
		r->cfa_off = scaled(cur_sleb(c), pr->cie->data_align);
		break;
	case 0x13: /* def_cfa_offset_sf */
		r->cfa_off = scaled(cur_sleb(c), pr->cie->data_align);
		if (r->kind != KIND_REG)
			r->kind = KIND_BAD;
		break;
	}
	return 0;
}

/* DW_CFA_expression: an expression for a register, of which we keep only
 * rbp saved at "breg6 N" (a realigned frame's).  0 or -1. */
static int run_expression(struct prog *pr)
{
	struct cur *c = &pr->c, e;
	uint64_t reg = cur_uleb(c), len = cur_uleb(c);
	int64_t off;

	if (c->bad || len > (uint64_t)(c->end - c->p))
		return -1;
	e = (struct cur){ c->p, c->p + len, 0 };
	c->p += len;
	set_rule(pr->r, reg, 4, 0);
	if (reg == DW_RBP && cur_fixed(&e, 1) == 0x70 + DW_RBP) {
		off = cur_sleb(&e);
		if (!e.bad && e.p == e.end) {
			pr->r->fp_rule = FP_AT_RBP;
			pr->r->fp_off = off;
			pr->r->opaque &= ~(1u << DW_RBP);
		}
	}
	return 0;
}

/* The register rules, state and advances other than the primary
 * opcodes'.  1 when the location advances by *delta, 0 when not, -1 on an
 * instruction we cannot read. */
static int run_extended(struct prog *pr, unsigned op, uintptr_t loc, uint64_t *delta)
{
	struct cur *c = &pr->c;
	const struct cie *cie = pr->cie;
	uint64_t reg, len;
	int64_t off;

	switch (op) {
	case 0x00: break; /* nop */
	case 0x01: { /* set_loc */
		uintptr_t to = cur_pointer(c, cie->fde_enc, 0);

		if (to < loc)
			return -1;
		*delta = to - loc;
		return 1;
	}
	case 0x02: *delta = cur_fixed(c, 1) * cie->code_align; return 1;
	case 0x03: *delta = cur_fixed(c, 2) * cie->code_align; return 1;
	case 0x04: *delta = cur_fixed(c, 4) * cie->code_align; return 1;
	case 0x05: /* offset_extended */
		reg = cur_uleb(c);
		set_rule(pr->r, reg, 2, scaled((int64_t)cur_uleb(c), cie->data_align));
		break;
	case 0x06: /* restore_extended */
		reg = cur_uleb(c);
		if (pr->init == NULL)
			return -1;
		restore_rule(pr->r, pr->init, reg);
		break;
	case 0x07: set_rule(pr->r, cur_uleb(c), 0, 0); break;     /* undefined */
	case 0x08: set_rule(pr->r, cur_uleb(c), 1, 0); break;     /* same_value */
	case 0x09: /* register */
		reg = cur_uleb(c);
		cur_uleb(c);
		set_rule(pr->r, reg, 3, 0);
		break;
	case 0x0a: /* remember_state */
		if (pr->depth == STATE_DEPTH)
			return -1;
		pr->stack[pr->depth++] = *pr->r;
		break;
	case 0x0b: /* restore_state: the CFA rule too, as the spec has it */
		if (pr->depth == 0)
			return -1;
		*pr->r = pr->stack[--pr->depth];
		break;
	case 0x0c: case 0x0d: case 0x0e: case 0x0f: case 0x12: case 0x13:
		return run_cfa_op(pr, op);
	case 0x10: /* expression */
		return run_expression(pr);
	case 0x11: /* offset_extended_sf */
		reg = cur_uleb(c);
		set_rule(pr->r, reg, 2, scaled(cur_sleb(c), cie->data_align));
		break;
	case 0x14: /* val_offset */
		reg = cur_uleb(c);
		cur_uleb(c);
		set_rule(pr->r, reg, 3, 0);
		break;
	case 0x15: /* val_offset_sf */
		reg = cur_uleb(c);
		cur_sleb(c);
		set_rule(pr->r, reg, 3, 0);
		break;
	case 0x16: /* val_expression */
		reg = cur_uleb(c);
		len = cur_uleb(c);
		if (c->bad || len > (uint64_t)(c->end - c->p))
			return -1;
		c->p += len;
		set_rule(pr->r, reg, 4, 0);
		break;
	case 0x2e: cur_uleb(c); break; /* GNU_args_size */
	case 0x2f: /* GNU_negative_offset_extended */
		reg = cur_uleb(c);
		off = scaled((int64_t)cur_uleb(c), cie->data_align);
		off = off == INT64_MIN ? off : -off;
		set_rule(pr->r, reg, 2, off);
		break;
	default:
		return -1;
	}
	return 0;
}

/* One instruction.  1 when the location advances by *delta, 0 when not,
 * -1 on an instruction we cannot read. */
static int run_op(struct prog *pr, uintptr_t loc, uint64_t *delta)
{
	unsigned op = (unsigned)cur_fixed(&pr->c, 1), low = op & 0x3f;

	switch (op >> 6) {
	case 1: /* DW_CFA_advance_loc */
		*delta = low * pr->cie->code_align;
		return 1;
	case 2: /* DW_CFA_offset */
		set_rule(pr->r, low, 2, scaled((int64_t)cur_uleb(&pr->c), pr->cie->data_align));
		return 0;
	case 3: /* DW_CFA_restore */
		if (pr->init == NULL)
			return -1;
		restore_rule(pr->r, pr->init, low);
		return 0;
	default:
		return run_extended(pr, op, loc, delta);
	}
}

/* Runs a CFA program from loc, emitting a row at each advance (emit
 * NULL: the CIE's initial instructions, which must not advance).
 * Returns the location reached, or 0 on an instruction we cannot read. */
static int run_program(const unsigned char *p, const unsigned char *end, const struct cie *cie,
		       const struct rules *init, struct rules *r, uintptr_t *loc, uintptr_t pc_end,
		       uintptr_t bias, struct ehcfi_rows *emit)
{
	struct prog pr;

	/* field by field: the remembered states need no zeroing */
	pr.c = (struct cur){ p, end, 0 };
	pr.cie = cie;
	pr.init = init;
	pr.r = r;
	pr.depth = 0;

	while (pr.c.p < pr.c.end && !pr.c.bad) {
		uint64_t delta = 0;
		int advance = run_op(&pr, *loc, &delta);

		if (advance < 0 || pr.c.bad)
			return -1;
		if (advance) {
			if (emit == NULL)
				return -1;
			if (delta > 0) {
				rows_push(emit, *loc, bias, r, cie->signal);
				*loc += delta;
				if (*loc >= pc_end)
					return 0;
			}
		}
	}
	return pr.c.bad ? -1 : 0;
}

/* The last CIE read, and the rules its initial instructions leave (most
 * FDEs of an object share a few CIEs). */
struct cie_memo {
	const unsigned char *at;  /* NULL: none yet */
	int bad;
	struct cie cie;
	struct rules init;
};

/* The CIE at p within [lo, hi) and its initial rules, into *m.  0, or -1
 * when it cannot be read or its initial instructions advance. */
static int cie_rules(const unsigned char *p, const unsigned char *lo, const unsigned char *hi,
		     struct cie_memo *m)
{
	uintptr_t loc = 0;

	if (m->at == p)
		return m->bad ? -1 : 0;
	m->at = p;
	m->bad = 1;
	if (cie_parse(p, lo, hi, &m->cie) < 0)
		return -1;
	/* rbp is callee-saved: the same value until a rule says */
	memset(&m->init, 0, sizeof(m->init));
	m->init.kind = KIND_BAD;
	m->init.fp_rule = FP_SAME;
	if (run_program(m->cie.insns, m->cie.insns_end, &m->cie, NULL, &m->init, &loc, 0, 0, NULL) < 0)
		return -1;
	m->bad = 0;
	return 0;
}

/* Rows of one FDE at p (its length field) inside [lo, hi). */
static int fde_rows(const unsigned char *p, const unsigned char *lo, const unsigned char *hi,
		    uintptr_t bias, struct ehcfi_rows *b, struct cie_memo *cm)
{
	struct cur c = { p, hi, 0 };
	uint64_t len = cur_fixed(&c, 4), cie_off;
	const unsigned char *end, *idpos;
	const struct cie *cie = &cm->cie;
	struct rules r;
	uintptr_t pc, range, loc;

	if (len == 0xffffffffu)
		len = cur_fixed(&c, 8);
	if (c.bad || len == 0 || len > (uint64_t)(hi - c.p))
		return -1;
	end = c.p + len;
	c.end = end;
	idpos = c.p;
	cie_off = cur_fixed(&c, 4);
	if (c.bad || cie_off == 0 || cie_off > (uint64_t)(idpos - lo))
		return -1; /* a CIE, or a pointer out of the section */
	if (cie_rules(idpos - cie_off, lo, hi, cm) < 0)
		return -1;
	pc = cur_pointer(&c, cie->fde_enc, 0);
	range = cur_pointer(&c, cie->fde_enc & PE_FORMAT, 0);
	if (cie->has_z) {
		uint64_t alen = cur_uleb(&c);

		if (c.bad || alen > (uint64_t)(end - c.p))
			return -1;
		c.p += alen;
	}
	if (c.bad || range == 0 || pc + range < pc)
		return -1;
	loc = pc;
	r = cm->init;
	if (run_program(c.p, end, cie, &cm->init, &r, &loc, pc + range, bias, b) < 0)
		return -1;
	if (loc < pc + range)
		rows_push(b, loc, bias, &r, cie->signal);
	rows_push(b, pc + range, bias, NULL, 0);
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct ehcfi_row *x = a, *y = b;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	/* an FDE's end before another's start at the same address */
	return (x->kind != KIND_NONE) - (y->kind != KIND_NONE);
}

/* A stable sort of v[0..n) through scratch (n rows), without allocating:
 * bottom-up merges, each pass from one buffer into the other. */
static void rows_merge_sort(struct ehcfi_row *v, struct ehcfi_row *scratch, size_t n)
{
	struct ehcfi_row *from = v, *to = scratch, *t;

	for (size_t width = 1; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
			size_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi)
				to[k++] = row_cmp(&from[j], &from[i]) < 0 ? from[j++] : from[i++];
			while (i < mid)
				to[k++] = from[i++];
			while (j < hi)
				to[k++] = from[j++];
		}
		t = from;
		from = to;
		to = t;
	}
	if (from != v)
		memcpy(v, from, n * sizeof *v);
}

/* Sorts the rows (through scratch when not NULL, else qsort) and keeps,
 * of rows at one address, the last. */
static void rows_finish(struct ehcfi_rows *b, struct ehcfi_row *scratch)
{
	size_t w = 0;

	if (b->n == 0)
		return;
	/* The rows of FDEs taken in .eh_frame_hdr's order come sorted: a
	 * check is a pass, a sort of a big program's rows most of the
	 * build.  Already in order, they are what a stable sort gives. */
	for (size_t i = 1; i < b->n; i++) {
		if (row_cmp(&b->v[i - 1], &b->v[i]) > 0) {
			if (scratch != NULL)
				rows_merge_sort(b->v, scratch, b->n);
			else
				qsort(b->v, b->n, sizeof *b->v, row_cmp);
			break;
		}
	}
	for (size_t i = 0; i < b->n; i++) {
		if (w > 0 && b->v[w - 1].pc == b->v[i].pc)
			w--;
		b->v[w++] = b->v[i];
	}
	b->n = w;
}

/* The segment of img that holds address a: [*lo, *hi). */
static int segment_of(const struct ehcfi_image *img, uintptr_t a, uintptr_t *lo, uintptr_t *hi)
{
	for (int i = 0; i < img->nseg && i < EHCFI_MAX_SEGS; i++) {
		if (a >= img->seg[i][0] && a < img->seg[i][1]) {
			*lo = img->seg[i][0];
			*hi = img->seg[i][1];
			return 1;
		}
	}
	return 0;
}

int ehcfi_index_read(const struct ehcfi_image *img, struct ehcfi_index *ix)
{
	uintptr_t seg_lo, seg_hi, count, flo, fhi;
	unsigned enc_ptr, enc_count, enc_table;
	struct cur c;

	memset(ix, 0, sizeof *ix);
	ix->hdr = img->eh_frame_hdr;
	if (!EHCFI_SUPPORTED || !segment_of(img, ix->hdr, &seg_lo, &seg_hi))
		return -1;
	c = (struct cur){ (const unsigned char *)ix->hdr, (const unsigned char *)seg_hi, 0 };
	if (cur_fixed(&c, 1) != 1)
		return -1;
	enc_ptr = (unsigned)cur_fixed(&c, 1);
	enc_count = (unsigned)cur_fixed(&c, 1);
	enc_table = (unsigned)cur_fixed(&c, 1);
	ix->eh_frame = cur_pointer(&c, enc_ptr, ix->hdr);
	count = enc_count == PE_OMIT ? 0 : cur_pointer(&c, enc_count, ix->hdr);
	if (c.bad || !segment_of(img, ix->eh_frame, &flo, &fhi))
		return -1;
	ix->eh_hi = fhi;
	if (enc_table == (PE_DATAREL | 0x0b) && count > 0 && count <= UINT32_MAX &&
	    count <= (uintptr_t)(c.end - c.p) / 8) {
		ix->table = (uintptr_t)c.p;
		ix->count = (uint32_t)count;
	}
	return 0;
}

/* The FDE of entry i of ix's table, or 0 when it is outside .eh_frame. */
static uintptr_t index_fde(const struct ehcfi_index *ix, uint32_t i)
{
	int32_t rel;
	uintptr_t fde;

	memcpy(&rel, (const unsigned char *)ix->table + (size_t)i * 8 + 4, 4);
	fde = ix->hdr + (uintptr_t)(intptr_t)rel;
	return fde < ix->eh_frame || fde >= ix->eh_hi ? 0 : fde;
}

uintptr_t ehcfi_index_pc(const struct ehcfi_index *ix, uint32_t i)
{
	int32_t rel;

	memcpy(&rel, (const unsigned char *)ix->table + (size_t)i * 8, 4);
	return ix->hdr + (uintptr_t)(intptr_t)rel;
}

size_t ehcfi_fdes_bound(const struct ehcfi_index *ix, uint32_t first, uint32_t count)
{
	size_t bound = 0;

	for (uint32_t i = first; i < first + count && i < ix->count; i++) {
		uintptr_t fde = index_fde(ix, i);
		uint32_t len;

		if (fde == 0 || ix->eh_hi - fde < 4)
			continue;
		memcpy(&len, (const void *)fde, 4);
		/* a row per byte of instructions at most, the last and the end;
		 * fde_rows reads no FDE longer than what is left */
		if (len <= ix->eh_hi - fde - 4)
			bound += (size_t)len + 2;
	}
	return bound;
}

/* The rows of FDEs [first, first + count) of ix's table into b. */
static void index_rows(const struct ehcfi_image *img, const struct ehcfi_index *ix, uint32_t first,
		       uint32_t count, struct ehcfi_rows *b)
{
	struct cie_memo cm = { 0 };

	for (uint32_t i = first; i < first + count && i < ix->count; i++) {
		uintptr_t fde = index_fde(ix, i);

		if (fde != 0)
			fde_rows((const unsigned char *)fde, (const unsigned char *)ix->eh_frame,
				 (const unsigned char *)ix->eh_hi, img->bias, b, &cm);
	}
}

void ehcfi_build_fdes(const struct ehcfi_image *img, const struct ehcfi_index *ix, uint32_t first,
		      uint32_t count, struct ehcfi_rows *b, struct ehcfi_row *scratch)
{
	index_rows(img, ix, first, count, b);
	if (!b->oom)
		rows_finish(b, scratch);
}

/* All rows of one loaded object, from its .eh_frame_hdr. */
static void object_rows(const struct ehcfi_image *info, struct ehcfi_rows *b)
{
	struct ehcfi_index ix;
	struct cie_memo cm = { 0 };
	const unsigned char *p, *lo;

	if (ehcfi_index_read(info, &ix) < 0)
		return;
	if (ix.count > 0) {
		/* the sorted table: (initial location, FDE address) pairs */
		index_rows(info, &ix, 0, ix.count, b);
		rows_finish(b, NULL);
		return;
	}
	/* no search table: walk .eh_frame to its terminator */
	lo = p = (const unsigned char *)ix.eh_frame;
	while ((uintptr_t)(ix.eh_hi - (uintptr_t)p) >= 8) {
		uint32_t len, id;
		uint64_t total;

		memcpy(&len, p, 4);
		if (len == 0)
			break;
		if (len == 0xffffffffu)
			break; /* 64-bit entries: not in .eh_frame in practice */
		total = 4 + (uint64_t)len;
		if (total > ix.eh_hi - (uintptr_t)p)
			break;
		memcpy(&id, p + 4, 4);
		if (id != 0)
			fde_rows(p, lo, (const unsigned char *)ix.eh_hi, info->bias, b, &cm);
		p += total;
	}
	rows_finish(b, NULL);
}

/* Appends the page index to the rows' allocation. */
static int page_index(struct ehcfi_rows *b)
{
	uint32_t base = b->v[0].pc >> PAGE_SHIFT;
	uint32_t npages = (b->v[b->n - 1].pc >> PAGE_SHIFT) - base + 1;
	size_t bytes = b->n * sizeof *b->v + (size_t)npages * sizeof(uint32_t);
	struct ehcfi_row *v = realloc(b->v, bytes);
	uint32_t *pages, r = 0;

	if (v == NULL)
		return -1;
	b->v = v;
	pages = (uint32_t *)(v + b->n);
	for (uint32_t k = 0; k < npages; k++) {
		uint64_t start = (uint64_t)(base + k) << PAGE_SHIFT;

		while (r + 1 < b->n && v[r + 1].pc <= start)
			r++;
		pages[k] = r;
	}
	b->page_base = base;
	b->npages = npages;
	b->pages = pages;
	return 0;
}

void ehcfi_build(const struct ehcfi_image *img, struct ehcfi_rows *b)
{
	if (EHCFI_SUPPORTED)
		object_rows(img, b);
	if (!b->oom && b->n > 0 && page_index(b) < 0)
		b->oom = 1;
	if (b->oom) {
		free(b->v);
		b->v = NULL;
		b->n = b->cap = 0;
		b->pages = NULL;
		b->npages = 0;
	}
}
