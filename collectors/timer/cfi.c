/* cfi.c - unwind tables made of .eh_frame, and the walk over them
 *
 * The tables.  For each object dl_iterate_phdr reports, its .eh_frame_hdr
 * (PT_GNU_EH_FRAME) lists every FDE; each FDE's instructions, after its
 * CIE's, are run once here, and every change of rule gives a row:
 *
 *   pc      first address the row applies to (offset from the load bias)
 *   kind    how to find the CFA: register + offset; *(register + offset)
 *           (a stack realigned by the prologue); the PLT stub expression
 *           (rsp + 8, + 8 more in the second half of a 16-byte entry); a
 *           signal trampoline (the interrupted registers are in a
 *           ucontext at the stack pointer); the outermost frame (return
 *           address undefined); no CFI; a rule we do not express
 *   rbp     unchanged, saved at CFA + offset or at rbp + offset, or unknown
 *
 * The return address is at CFA - 8 on x86-64; a row whose CIE says
 * otherwise is "a rule we do not express".  Rows are sorted by address;
 * where an FDE ends and no other starts, a "no CFI" row ends it.  Each
 * object's rows are built inside dl_iterate_phdr's callback, so dlclose
 * cannot unmap what is being read; every read of the object's memory is
 * kept within the loaded segment that holds the section.
 *
 * The walk (cfi_unwind) runs in the signal handler: it looks the program
 * counter up (return address - 1 for callers, so that a call at the very
 * end of a function finds its row), computes the CFA, reads the return
 * address and perhaps the saved rbp, and goes on.  It reads nothing but the
 * published tables and the thread's stack between the red zone below the
 * interrupted stack pointer and the stack top, and the stack pointer must
 * grow at every
 * frame, so it ends and never faults.  The published table of objects is
 * one pointer; replaced ones are freed only when no walk can be running.
 */
#include "cfi.h"

#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#define CFI_SUPPORTED 1
#else
#define CFI_SUPPORTED 0
#endif

/* DWARF register numbers of x86-64 */
#define DW_RBP 6
#define DW_RSP 7
#define DW_RA 16
#define DW_NREGS 17

/* as cfi.h's CFI_ROW_* */
enum cfi_kind {
	KIND_NONE = CFI_ROW_NONE,     /* no CFI for these addresses */
	KIND_REG = CFI_ROW_REG,       /* CFA = reg + off */
	KIND_DEREF = CFI_ROW_DEREF,   /* CFA = *(reg + off) */
	KIND_PLT = CFI_ROW_PLT,       /* CFA = rsp + off + ((rip & 15) >= fp_off ? 8 : 0) */
	KIND_SIGNAL = CFI_ROW_SIGNAL, /* a signal trampoline: ucontext at rsp */
	KIND_END = CFI_ROW_END,       /* outermost frame: no return address */
	KIND_BAD = CFI_ROW_BAD,       /* a rule not expressed */
};

/* Where the caller's rbp is: unchanged, at CFA + fp_off, unknown, or at
 * rbp + fp_off (the frame of a stack realigned through a pointer). */
enum fp_rule { FP_SAME = 0, FP_OFFSET = 1, FP_UNKNOWN = 2, FP_AT_RBP = 3 };

struct cfi_row {
	uint32_t pc;       /* offset from the object's load bias */
	int32_t off;
	int16_t fp_off;    /* FP_OFFSET: rbp saved at CFA + fp_off; KIND_PLT: threshold */
	uint8_t kind;      /* enum cfi_kind */
	uint8_t reg;       /* CFA register (low 5 bits), enum fp_rule << 5 */
};
_Static_assert(sizeof(struct cfi_row) == 12, "cfi_row is 12 bytes");

/* One executable range of an object, with the object's rows. */
struct cfi_range {
	uintptr_t lo, hi;
	uintptr_t bias;
	const struct cfi_row *rows;
	uint32_t nrows;
	/* pages[k]: the row in force at the start of the k-th 4 KiB page from
	 * page_base (offset >> CFI_PAGE_SHIFT), so that a lookup searches one
	 * page's rows, a few cache lines, not the whole table */
	uint32_t page_base, npages;
	const uint32_t *pages;
};

struct cfi_tables {
	size_t n;
	uint64_t rows;         /* in all, for cfi_table_size */
	struct cfi_range r[];
};

/* An object we made rows for. */
struct cfi_object {
	uintptr_t bias;
	const void *phdr;      /* with bias, identifies the loaded object */
	struct cfi_row *rows;  /* then the page index, in one allocation */
	uint32_t nrows;
	uint32_t page_base, npages;
	const uint32_t *pages;
	int alive;
	uintptr_t seg[4][2];   /* its executable segments */
	int nseg;
};

#define CFI_RETIRED_MAX 256
#define CFI_PAGE_SHIFT 12
#define CFI_RED_ZONE 128       /* bytes below the stack pointer, x86-64 ABI */
#define CFI_STATE_DEPTH 16

static struct {
	struct cfi_tables *_Atomic current;
	struct cfi_object *objs;
	size_t nobjs, capobjs;
	void *retired[CFI_RETIRED_MAX];
	size_t nretired;
} cfi;

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
struct rowbuf {
	struct cfi_row *v;
	size_t n, cap;
	int oom;
};

static void rows_push(struct rowbuf *b, uintptr_t pc, uintptr_t bias, const struct rules *r,
		      int signal)
{
	struct cfi_row row = { 0 };
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
	}
	if (b->n > 0) {
		struct cfi_row *last = &b->v[b->n - 1];

		if (last->pc == row.pc) { /* no advance since: replace */
			*last = row;
			return;
		}
		if (last->kind == row.kind && last->off == row.off && last->fp_off == row.fp_off &&
		    last->reg == row.reg && last->pc < row.pc)
			return; /* same rules go on */
	}
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		struct cfi_row *v = realloc(b->v, cap * sizeof *v);

		if (v == NULL) {
			b->oom = 1;
			return;
		}
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = row;
}

/* Applies one register rule to the ones we track. */
static void set_rule(struct rules *r, uint64_t reg, int kind, int64_t off)
{
	/* kind: 0 undefined, 1 same value, 2 offset(N), 3 anything else */
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
	if (reg == DW_RBP) {
		r->fp_rule = init->fp_rule;
		r->fp_off = init->fp_off;
	} else if (reg == DW_RA) {
		r->ra_undefined = init->ra_undefined;
		r->ra_ok = init->ra_ok;
	}
}

/* Runs a CFA program from loc, emitting a row at each advance (emit
 * NULL: the CIE's initial instructions, which must not advance).
 * Returns the location reached, or 0 on an instruction we cannot read. */
static int run_program(const unsigned char *p, const unsigned char *end, const struct cie *cie,
		       const struct rules *init, struct rules *r, uintptr_t *loc, uintptr_t pc_end,
		       uintptr_t bias, struct rowbuf *emit)
{
	struct rules stack[CFI_STATE_DEPTH];
	int depth = 0;
	struct cur c = { p, end, 0 };

	while (c.p < c.end && !c.bad) {
		unsigned op = (unsigned)cur_fixed(&c, 1), low = op & 0x3f;
		uint64_t delta = 0, reg;
		int64_t off;
		int advance = 0;

		switch (op >> 6) {
		case 1: /* DW_CFA_advance_loc */
			delta = low * cie->code_align;
			advance = 1;
			break;
		case 2: /* DW_CFA_offset */
			set_rule(r, low, 2, (int64_t)cur_uleb(&c) * cie->data_align);
			break;
		case 3: /* DW_CFA_restore */
			if (init == NULL)
				return -1;
			restore_rule(r, init, low);
			break;
		default:
			switch (op) {
			case 0x00: break; /* nop */
			case 0x01: { /* set_loc */
				uintptr_t to = cur_pointer(&c, cie->fde_enc, 0);

				if (to < *loc)
					return -1;
				delta = to - *loc;
				advance = 1;
				break;
			}
			case 0x02: delta = cur_fixed(&c, 1) * cie->code_align; advance = 1; break;
			case 0x03: delta = cur_fixed(&c, 2) * cie->code_align; advance = 1; break;
			case 0x04: delta = cur_fixed(&c, 4) * cie->code_align; advance = 1; break;
			case 0x05: /* offset_extended */
				reg = cur_uleb(&c);
				set_rule(r, reg, 2, (int64_t)cur_uleb(&c) * cie->data_align);
				break;
			case 0x06: /* restore_extended */
				reg = cur_uleb(&c);
				if (init == NULL)
					return -1;
				restore_rule(r, init, reg);
				break;
			case 0x07: set_rule(r, cur_uleb(&c), 0, 0); break;     /* undefined */
			case 0x08: set_rule(r, cur_uleb(&c), 1, 0); break;     /* same_value */
			case 0x09: /* register */
				reg = cur_uleb(&c);
				cur_uleb(&c);
				set_rule(r, reg, 3, 0);
				break;
			case 0x0a: /* remember_state */
				if (depth == CFI_STATE_DEPTH)
					return -1;
				stack[depth++] = *r;
				break;
			case 0x0b: /* restore_state: the CFA rule too, as the spec has it */
				if (depth == 0)
					return -1;
				*r = stack[--depth];
				break;
			case 0x0c: /* def_cfa */
				r->kind = KIND_REG;
				r->cfa_reg = (uint8_t)(reg = cur_uleb(&c));
				if (reg >= DW_NREGS)
					r->kind = KIND_BAD;
				r->cfa_off = (int64_t)cur_uleb(&c);
				break;
			case 0x0d: /* def_cfa_register */
				reg = cur_uleb(&c);
				if (r->kind != KIND_REG || reg >= DW_NREGS)
					r->kind = KIND_BAD;
				r->cfa_reg = (uint8_t)reg;
				break;
			case 0x0e: /* def_cfa_offset */
				r->cfa_off = (int64_t)cur_uleb(&c);
				if (r->kind != KIND_REG)
					r->kind = KIND_BAD;
				break;
			case 0x0f: { /* def_cfa_expression */
				uint64_t len = cur_uleb(&c);

				if (c.bad || len > (uint64_t)(c.end - c.p))
					return -1;
				cfa_expression(c.p, len, r);
				c.p += len;
				break;
			}
			case 0x10: { /* expression */
				uint64_t len;
				struct cur e;

				reg = cur_uleb(&c);
				len = cur_uleb(&c);
				if (c.bad || len > (uint64_t)(c.end - c.p))
					return -1;
				e = (struct cur){ c.p, c.p + len, 0 };
				c.p += len;
				set_rule(r, reg, 3, 0);
				/* rbp saved at "breg6 N": a realigned frame's */
				if (reg == DW_RBP && cur_fixed(&e, 1) == 0x70 + DW_RBP) {
					off = cur_sleb(&e);
					if (!e.bad && e.p == e.end) {
						r->fp_rule = FP_AT_RBP;
						r->fp_off = off;
					}
				}
				break;
			}
			case 0x11: /* offset_extended_sf */
				reg = cur_uleb(&c);
				set_rule(r, reg, 2, cur_sleb(&c) * cie->data_align);
				break;
			case 0x12: /* def_cfa_sf */
				r->kind = KIND_REG;
				r->cfa_reg = (uint8_t)(reg = cur_uleb(&c));
				if (reg >= DW_NREGS)
					r->kind = KIND_BAD;
				r->cfa_off = cur_sleb(&c) * cie->data_align;
				break;
			case 0x13: /* def_cfa_offset_sf */
				r->cfa_off = cur_sleb(&c) * cie->data_align;
				if (r->kind != KIND_REG)
					r->kind = KIND_BAD;
				break;
			case 0x14: /* val_offset */
				reg = cur_uleb(&c);
				cur_uleb(&c);
				set_rule(r, reg, 3, 0);
				break;
			case 0x15: /* val_offset_sf */
				reg = cur_uleb(&c);
				cur_sleb(&c);
				set_rule(r, reg, 3, 0);
				break;
			case 0x16: { /* val_expression */
				uint64_t len;

				reg = cur_uleb(&c);
				len = cur_uleb(&c);
				if (c.bad || len > (uint64_t)(c.end - c.p))
					return -1;
				c.p += len;
				set_rule(r, reg, 3, 0);
				break;
			}
			case 0x2e: cur_uleb(&c); break; /* GNU_args_size */
			case 0x2f: /* GNU_negative_offset_extended */
				reg = cur_uleb(&c);
				off = -(int64_t)cur_uleb(&c) * cie->data_align;
				set_rule(r, reg, 2, off);
				break;
			default:
				return -1;
			}
		}
		if (c.bad)
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
	return c.bad ? -1 : 0;
}

/* Rows of one FDE at p (its length field) inside [lo, hi). */
static int fde_rows(const unsigned char *p, const unsigned char *lo, const unsigned char *hi,
		    uintptr_t bias, struct rowbuf *b)
{
	struct cur c = { p, hi, 0 };
	uint64_t len = cur_fixed(&c, 4), cie_off;
	const unsigned char *end, *idpos;
	struct rules init = { 0 }, r;
	struct cie cie;
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
	if (cie_parse(idpos - cie_off, lo, hi, &cie) < 0)
		return -1;
	pc = cur_pointer(&c, cie.fde_enc, 0);
	range = cur_pointer(&c, cie.fde_enc & PE_FORMAT, 0);
	if (cie.has_z) {
		uint64_t alen = cur_uleb(&c);

		if (c.bad || alen > (uint64_t)(end - c.p))
			return -1;
		c.p += alen;
	}
	if (c.bad || range == 0 || pc + range < pc)
		return -1;
	/* The CIE's initial rules; rbp is callee-saved: same value. */
	init.kind = KIND_BAD;
	init.fp_rule = FP_SAME;
	loc = pc;
	if (run_program(cie.insns, cie.insns_end, &cie, NULL, &init, &loc, pc + range, bias,
			NULL) < 0)
		return -1;
	r = init;
	if (run_program(c.p, end, &cie, &init, &r, &loc, pc + range, bias, b) < 0)
		return -1;
	if (loc < pc + range)
		rows_push(b, loc, bias, &r, cie.signal);
	rows_push(b, pc + range, bias, NULL, 0);
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct cfi_row *x = a, *y = b;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	/* an FDE's end before another's start at the same address */
	return (x->kind != KIND_NONE) - (y->kind != KIND_NONE);
}

/* Sorts the rows and keeps, of rows at one address, the last. */
static void rows_finish(struct rowbuf *b)
{
	size_t w = 0;

	qsort(b->v, b->n, sizeof *b->v, row_cmp);
	for (size_t i = 0; i < b->n; i++) {
		if (w > 0 && b->v[w - 1].pc == b->v[i].pc)
			w--;
		b->v[w++] = b->v[i];
	}
	b->n = w;
}

/* The loaded segment of info that holds address a: [*lo, *hi). */
static int segment_of(const struct dl_phdr_info *info, uintptr_t a, uintptr_t *lo, uintptr_t *hi)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t s = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && a >= s && a < s + ph->p_memsz) {
			*lo = s;
			*hi = s + ph->p_filesz;
			return a < *hi;
		}
	}
	return 0;
}

/* All rows of one loaded object, from its .eh_frame_hdr. */
static void object_rows(const struct dl_phdr_info *info, struct rowbuf *b)
{
	const ElfW(Phdr) *hdr_ph = NULL;
	uintptr_t hdr, seg_lo, seg_hi, eh_frame, count;
	unsigned enc_ptr, enc_count, enc_table;
	struct cur c;

	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			hdr_ph = &info->dlpi_phdr[i];
	if (hdr_ph == NULL)
		return;
	hdr = info->dlpi_addr + hdr_ph->p_vaddr;
	if (!segment_of(info, hdr, &seg_lo, &seg_hi))
		return;
	c = (struct cur){ (const unsigned char *)hdr, (const unsigned char *)seg_hi, 0 };
	if (cur_fixed(&c, 1) != 1)
		return;
	enc_ptr = (unsigned)cur_fixed(&c, 1);
	enc_count = (unsigned)cur_fixed(&c, 1);
	enc_table = (unsigned)cur_fixed(&c, 1);
	eh_frame = cur_pointer(&c, enc_ptr, hdr);
	count = enc_count == PE_OMIT ? 0 : cur_pointer(&c, enc_count, hdr);
	if (c.bad)
		return;
	if (enc_table == (PE_DATAREL | 0x0b) && count > 0 &&
	    count <= (uintptr_t)(c.end - c.p) / 8) {
		/* the sorted table: (initial location, FDE address) pairs */
		uintptr_t flo, fhi;

		if (!segment_of(info, eh_frame, &flo, &fhi))
			return;
		for (uintptr_t i = 0; i < count; i++) {
			int32_t fde_rel;

			memcpy(&fde_rel, c.p + i * 8 + 4, 4);
			uintptr_t fde = hdr + (intptr_t)fde_rel;

			if (fde < eh_frame || fde >= fhi)
				continue;
			fde_rows((const unsigned char *)fde, (const unsigned char *)eh_frame,
				 (const unsigned char *)fhi, info->dlpi_addr, b);
		}
	} else {
		/* no search table: walk .eh_frame to its terminator */
		uintptr_t flo, fhi;
		const unsigned char *p, *lo;

		if (!segment_of(info, eh_frame, &flo, &fhi))
			return;
		lo = p = (const unsigned char *)eh_frame;
		while ((uintptr_t)(fhi - (uintptr_t)p) >= 8) {
			uint32_t len, id;
			uint64_t total;

			memcpy(&len, p, 4);
			if (len == 0)
				break;
			if (len == 0xffffffffu)
				break; /* 64-bit entries: not in .eh_frame in practice */
			total = 4 + (uint64_t)len;
			if (total > fhi - (uintptr_t)p)
				break;
			memcpy(&id, p + 4, 4);
			if (id != 0)
				fde_rows(p, lo, (const unsigned char *)fhi, info->dlpi_addr, b);
			p += total;
		}
	}
	rows_finish(b);
}

/* ---- the object list ---- */

struct refresh {
	int oom;
};

static struct cfi_object *object_find(uintptr_t bias, const void *phdr)
{
	for (size_t i = 0; i < cfi.nobjs; i++)
		if (cfi.objs[i].bias == bias && cfi.objs[i].phdr == phdr)
			return &cfi.objs[i];
	return NULL;
}

/* Appends the page index to the rows' allocation. */
static int page_index(struct rowbuf *b, struct cfi_object *o)
{
	uint32_t base = b->v[0].pc >> CFI_PAGE_SHIFT;
	uint32_t npages = (b->v[b->n - 1].pc >> CFI_PAGE_SHIFT) - base + 1;
	size_t bytes = b->n * sizeof *b->v + (size_t)npages * sizeof(uint32_t);
	struct cfi_row *v = realloc(b->v, bytes);
	uint32_t *pages, r = 0;

	if (v == NULL)
		return -1;
	b->v = v;
	pages = (uint32_t *)(v + b->n);
	for (uint32_t k = 0; k < npages; k++) {
		uint64_t start = (uint64_t)(base + k) << CFI_PAGE_SHIFT;

		while (r + 1 < b->n && v[r + 1].pc <= start)
			r++;
		pages[k] = r;
	}
	o->page_base = base;
	o->npages = npages;
	o->pages = pages;
	return 0;
}

static int refresh_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct refresh *rf = data;
	struct cfi_object *o = object_find(info->dlpi_addr, info->dlpi_phdr);
	struct rowbuf b = { 0 };
	int nseg = 0;

	(void)size;
	if (o != NULL) {
		o->alive = 1;
		return 0;
	}
	if (cfi.nobjs == cfi.capobjs) {
		size_t cap = cfi.capobjs ? cfi.capobjs * 2 : 64;
		struct cfi_object *v = realloc(cfi.objs, cap * sizeof *v);

		if (v == NULL) {
			rf->oom = 1;
			return 0;
		}
		cfi.objs = v;
		cfi.capobjs = cap;
	}
	o = &cfi.objs[cfi.nobjs];
	memset(o, 0, sizeof *o);
	for (int i = 0; i < info->dlpi_phnum && nseg < 4; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && ph->p_memsz > 0) {
			o->seg[nseg][0] = info->dlpi_addr + ph->p_vaddr;
			o->seg[nseg][1] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			nseg++;
		}
	}
	if (nseg == 0)
		return 0;
	if (CFI_SUPPORTED)
		object_rows(info, &b);
	if (b.oom) {
		free(b.v);
		b.v = NULL;
		b.n = 0;
		rf->oom = 1;
	}
	if (b.n > 0 && page_index(&b, o) < 0) {
		free(b.v);
		b.v = NULL;
		b.n = 0;
		rf->oom = 1;
	}
	o->bias = info->dlpi_addr;
	o->phdr = info->dlpi_phdr;
	o->rows = b.v;
	o->nrows = (uint32_t)b.n;
	o->nseg = nseg;
	o->alive = 1;
	cfi.nobjs++;
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct cfi_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void retire(void *p)
{
	if (p == NULL)
		return;
	if (cfi.nretired < CFI_RETIRED_MAX)
		cfi.retired[cfi.nretired++] = p;
	/* else: leaked rather than freed under a walk */
}

int cfi_refresh(int (*idle)(void))
{
	struct refresh rf = { 0 };
	struct cfi_tables *t;
	size_t nranges = 0, w = 0;
	uint64_t rows = 0;

	for (size_t i = 0; i < cfi.nobjs; i++)
		cfi.objs[i].alive = 0;
	dl_iterate_phdr(refresh_object, &rf);
	for (size_t i = 0; i < cfi.nobjs; i++) {
		if (!cfi.objs[i].alive) {
			retire(cfi.objs[i].rows);
			continue;
		}
		cfi.objs[w++] = cfi.objs[i];
	}
	cfi.nobjs = w;
	for (size_t i = 0; i < cfi.nobjs; i++)
		nranges += (size_t)cfi.objs[i].nseg;
	t = malloc(sizeof *t + nranges * sizeof t->r[0]);
	if (t == NULL)
		return -1;
	t->n = 0;
	for (size_t i = 0; i < cfi.nobjs; i++) {
		const struct cfi_object *o = &cfi.objs[i];

		for (int s = 0; s < o->nseg; s++)
			t->r[t->n++] = (struct cfi_range){ o->seg[s][0], o->seg[s][1], o->bias,
							   o->rows, o->nrows, o->page_base,
							   o->npages, o->pages };
		rows += o->nrows;
	}
	t->rows = rows;
	qsort(t->r, t->n, sizeof t->r[0], range_cmp);
	retire(atomic_exchange(&cfi.current, t));
	if (idle != NULL && cfi.nretired > 0 && idle()) {
		for (size_t i = 0; i < cfi.nretired; i++)
			free(cfi.retired[i]);
		cfi.nretired = 0;
	}
	return rf.oom ? -1 : (int)cfi.nobjs;
}

void cfi_table_size(uint64_t *objects, uint64_t *rows)
{
	const struct cfi_tables *t = atomic_load(&cfi.current);

	*objects = t ? t->n : 0;
	*rows = t ? t->rows : 0;
}

/* ---- the walk ---- */

/* ucontext register index of each DWARF register */
static const int cfi_greg[DW_NREGS] = {
	REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
	REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15, REG_RIP,
};

static inline const struct cfi_range *range_find(const struct cfi_tables *t, uintptr_t pc)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pc < t->r[mid].lo)
			hi = mid;
		else if (pc >= t->r[mid].hi)
			lo = mid + 1;
		else
			return &t->r[mid];
	}
	return NULL;
}

/* The row that applies at pc, or NULL. */
static inline const struct cfi_row *row_find(const struct cfi_range *r, uintptr_t pc)
{
	uint64_t off = pc - r->bias, page;
	size_t lo = 0, hi = r->nrows;

	if (pc < r->bias || off > UINT32_MAX || r->nrows == 0)
		return NULL;
	page = (off >> CFI_PAGE_SHIFT) - r->page_base;
	if ((off >> CFI_PAGE_SHIFT) < r->page_base) {
		hi = 0;
	} else if (page < r->npages) {
		/* the rows from the one in force at the page's start to the
		 * one in force at the next page's */
		lo = r->pages[page];
		hi = page + 1 < r->npages ? (size_t)r->pages[page + 1] + 1 : r->nrows;
		if (r->rows[lo].pc > off)
			return NULL; /* before the first row */
		lo++;
	} else {
		lo = r->pages[r->npages - 1];
	}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (r->rows[mid].pc <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == 0 ? NULL : &r->rows[lo - 1];
}

int cfi_row_kind(uintptr_t pc)
{
	const struct cfi_tables *t = atomic_load_explicit(&cfi.current, memory_order_acquire);
	const struct cfi_range *r = t != NULL ? range_find(t, pc) : NULL;
	const struct cfi_row *row;

	if (r == NULL)
		return CFI_ROW_NO_OBJECT;
	row = row_find(r, pc);
	return row == NULL ? CFI_ROW_NONE : row->kind;
}

/* Reads a word of the stack in [lo, hi). */
static inline int stack_word(uintptr_t a, uintptr_t lo, uintptr_t hi, uint64_t *v)
{
	if (a < lo || a > hi - 8)
		return 0;
	memcpy(v, (const void *)a, 8);
	return 1;
}

enum cfi_result cfi_unwind(const ucontext_t *uc, uintptr_t lo, uintptr_t hi, uint64_t *frames,
			   uint32_t cap, uint32_t *n, enum cfi_failure *why)
{
#if CFI_SUPPORTED
	const struct cfi_tables *t = atomic_load_explicit(&cfi.current, memory_order_acquire);
	const greg_t *g = uc->uc_mcontext.gregs;
	uintptr_t pc = (uintptr_t)g[REG_RIP], sp = (uintptr_t)g[REG_RSP], fp = (uintptr_t)g[REG_RBP];
	/* where the current frame's other registers are: the interrupted
	 * context's, a ucontext on the stack, or none (a caller) */
	const greg_t *regs = g;
	uintptr_t regs_at = 0;
	int fp_known = 1, exact = 1;
	uint32_t k = 0;

	*n = 0;
	*why = CFI_FAIL_NONE;
	if (t == NULL || sp < lo || sp >= hi || hi - lo < 8) {
		*why = CFI_FAIL_STACK;
		return CFI_FAILED;
	}
	/* Nothing below the interrupted stack pointer's red zone is read: an
	 * epilogue that has popped a register still finds it there, where
	 * its CFI says, and the kernel put the signal frame below it. */
	lo = sp - lo >= CFI_RED_ZONE ? sp - CFI_RED_ZONE : lo;
	for (;;) {
		uintptr_t look = exact ? pc : pc - 1, cfa, base;
		const struct cfi_range *r;
		const struct cfi_row *row;
		uint64_t word;
		unsigned reg;

		if (k == cap) {
			*n = k;
			return CFI_TRUNCATED;
		}
		r = range_find(t, look);
		if (r == NULL) {
			/* code outside every object (JIT, or an address that is
			 * no code at all): frame pointers, where they are sane */
			if (!fp_known || fp < sp || (fp & 7) != 0) {
				*why = CFI_FAIL_NO_OBJECT;
				break;
			}
			frames[k] = k > 0 && exact ? pc + 1 : pc;
			k++;
			if (!stack_word(fp + 8, lo, hi, &word)) {
				*why = CFI_FAIL_STACK;
				break;
			}
			pc = (uintptr_t)word;
			if (!stack_word(fp, lo, hi, &word)) {
				*why = CFI_FAIL_STACK;
				break;
			}
			sp = fp + 16;
			fp = (uintptr_t)word;
			regs = NULL;
			regs_at = 0;
			exact = 0;
			if (pc == 0) {
				*n = k;
				return CFI_COMPLETE;
			}
			continue;
		}
		row = row_find(r, look);
		if (row == NULL || row->kind == KIND_NONE) {
			*why = CFI_FAIL_NO_ROW;
			break;
		}
		if (row->kind == KIND_BAD) {
			*why = CFI_FAIL_RULE;
			break;
		}
		frames[k] = k > 0 && (exact || row->kind == KIND_SIGNAL) ? pc + 1 : pc;
		k++;
		if (row->kind == KIND_END) {
			*n = k;
			return CFI_COMPLETE;
		}
		if (row->kind == KIND_SIGNAL) {
			/* rt_sigreturn's frame: a ucontext at the stack pointer */
			uintptr_t gregs = sp + offsetof(ucontext_t, uc_mcontext.gregs);
			uint64_t npc, nsp, nfp;

			if (!stack_word(gregs + REG_RIP * 8, lo, hi, &npc) ||
			    !stack_word(gregs + REG_RSP * 8, lo, hi, &nsp) ||
			    !stack_word(gregs + REG_RBP * 8, lo, hi, &nfp) || nsp <= sp) {
				*why = CFI_FAIL_STACK;
				break;
			}
			pc = (uintptr_t)npc;
			sp = (uintptr_t)nsp;
			fp = (uintptr_t)nfp;
			fp_known = 1;
			regs = NULL;
			regs_at = gregs;
			exact = 1;
			continue;
		}
		reg = row->reg & 0x1f;
		if (row->kind == KIND_PLT) {
			cfa = sp + (uintptr_t)(intptr_t)row->off +
			      ((pc & 15) >= (uintptr_t)row->fp_off ? 8 : 0);
		} else {
			if (reg == DW_RSP) {
				base = sp;
			} else if (reg == DW_RBP && fp_known) {
				base = fp;
			} else if (regs != NULL) {
				base = (uintptr_t)regs[cfi_greg[reg]];
			} else if (regs_at != 0 && stack_word(regs_at + (uintptr_t)cfi_greg[reg] * 8,
							      lo, hi, &word)) {
				base = (uintptr_t)word;
			} else {
				*why = CFI_FAIL_RULE;
				break;
			}
			cfa = base + (uintptr_t)(intptr_t)row->off;
			if (row->kind == KIND_DEREF) {
				if (!stack_word(cfa, lo, hi, &word)) {
					*why = CFI_FAIL_STACK;
					break;
				}
				cfa = (uintptr_t)word;
			}
		}
		if (cfa <= sp || !stack_word(cfa - 8, lo, hi, &word)) {
			*why = CFI_FAIL_STACK;
			break;
		}
		switch (row->reg >> 5) {
		case FP_OFFSET: {
			uint64_t saved;

			if (!stack_word(cfa + (uintptr_t)(intptr_t)row->fp_off, lo, hi, &saved)) {
				*why = CFI_FAIL_STACK;
				goto failed;
			}
			fp = (uintptr_t)saved;
			fp_known = 1;
			break;
		}
		case FP_AT_RBP: {
			uint64_t saved;

			if (!fp_known || !stack_word(fp + (uintptr_t)(intptr_t)row->fp_off, lo, hi, &saved)) {
				*why = CFI_FAIL_STACK;
				goto failed;
			}
			fp = (uintptr_t)saved;
			break;
		}
		case FP_SAME:
			break;
		default:
			fp_known = 0;
			break;
		}
		pc = (uintptr_t)word;
		sp = cfa;
		regs = NULL;
		regs_at = 0;
		exact = 0;
		if (pc == 0) {
			*n = k;
			return CFI_COMPLETE;
		}
	}
failed:
	*n = k;
	return CFI_FAILED;
#else
	(void)uc; (void)lo; (void)hi; (void)frames; (void)cap;
	*n = 0;
	*why = CFI_FAIL_NO_OBJECT;
	return CFI_FAILED;
#endif
}
