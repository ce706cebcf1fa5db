/* edges.S - a unit whose line program holds what compilers seldom write,
 * for test-lines (which asks libdw and the line reader about every
 * address of it, and a few at a time):
 *  - the sequence at the highest addresses ends with two normal rows at
 *    the address of its end: libdw makes the later one, the last row in
 *    its order, an end, and the one before it answers there;
 *  - a sequence whose addresses go down once without an end (two runs);
 *  - a sequence of its end alone, at the address of the end before it;
 *  - a row at an address no other row of its sequence is above, ended at
 *    that same address (an empty last entry).
 * The program is DWARF 4's, written here byte by byte (DWARF 5, section
 * 6.2; version 4 has the same opcodes). */

	.text
	.globl	edges_lo
	.type	edges_lo, @function
edges_lo:
	.fill	64, 1, 0x90
	.size	edges_lo, 64
	.globl	edges_hi
	.type	edges_hi, @function
edges_hi:
	.fill	64, 1, 0x90
	.size	edges_hi, 64
edges_end:

	.section .debug_abbrev, "", @progbits
.Labbrev:
	.uleb128 1		/* code */
	.uleb128 0x11		/* DW_TAG_compile_unit */
	.byte	0		/* no children */
	.uleb128 0x03, 0x08	/* DW_AT_name, DW_FORM_string */
	.uleb128 0x1b, 0x08	/* DW_AT_comp_dir, DW_FORM_string */
	.uleb128 0x10, 0x17	/* DW_AT_stmt_list, DW_FORM_sec_offset */
	.uleb128 0x11, 0x01	/* DW_AT_low_pc, DW_FORM_addr */
	.uleb128 0x12, 0x07	/* DW_AT_high_pc, DW_FORM_data8 (a length) */
	.uleb128 0, 0
	.uleb128 0

	.section .debug_info, "", @progbits
.Linfo:
	.long	.Linfo_end - .Linfo_start
.Linfo_start:
	.value	4		/* version */
	.long	.Labbrev
	.byte	8		/* address size */
	.uleb128 1
	.string	"edges.c"
	.string	"/src"
	.long	.Lline
	.quad	edges_lo
	.quad	edges_end - edges_lo
.Linfo_end:

	.section .debug_aranges, "", @progbits
	.long	.Laranges_end - .Laranges_start
.Laranges_start:
	.value	2		/* version */
	.long	.Linfo
	.byte	8, 0		/* address size, no segments */
	.long	0		/* to a multiple of twice the address size */
	.quad	edges_lo
	.quad	edges_end - edges_lo
	.quad	0, 0
.Laranges_end:

/* Opcodes: 1 copy, 2 advance_pc, 3 advance_line; 0 n sub: extended (1
 * end_sequence, 2 set_address). */
#define SET(addr)	.byte 0, 9, 2; .quad addr
#define END		.byte 0, 1, 1
#define ROW(dline)	.byte 3; .sleb128 dline; .byte 1
#define PC(n)		.byte 2; .uleb128 n

	.section .debug_line, "", @progbits
.Lline:
	.long	.Lline_end - .Lline_start
.Lline_start:
	.value	4		/* version */
	.long	.Lprogram - .Lheader
.Lheader:
	.byte	1		/* minimum instruction length */
	.byte	1		/* maximum operations per instruction */
	.byte	1		/* default is_stmt */
	.byte	-5		/* line base */
	.byte	14		/* line range */
	.byte	13		/* opcode base */
	.byte	0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1
	.string	"inc"		/* directory 1 */
	.byte	0
	.string	"edges.c"	/* file 1, in directory 0 */
	.uleb128 0, 0, 0
	.string	"edges.h"	/* file 2, in directory 1 */
	.uleb128 1, 0, 0
	.byte	0
.Lprogram:
	/* the highest sequence: lines 10, 11, then 12 and 13 at its end */
	SET(edges_hi)
	ROW(9)
	PC(16)
	ROW(1)
	PC(16)
	ROW(1)
	ROW(1)
	END
	/* down once: 20 at +0, 21 at +8, 22 at +4, 23 at +12, end at +24 */
	SET(edges_lo)
	ROW(19)
	PC(8)
	ROW(1)
	SET(edges_lo + 4)
	ROW(1)
	SET(edges_lo + 12)
	.byte	4, 2		/* set_file 2 */
	ROW(1)
	PC(12)
	END
	/* an end alone, where the sequence before ended */
	SET(edges_lo + 24)
	END
	/* 30 at +40, the end of its sequence at +40 too */
	SET(edges_lo + 40)
	ROW(29)
	END
	/* 40 at +30, ended at +36 */
	SET(edges_lo + 30)
	ROW(39)
	PC(6)
	END
.Lline_end:

	.section .note.GNU-stack, "", @progbits
