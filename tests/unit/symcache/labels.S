/* labels.S - symbols that tell apart the rules of an address's symbol:
 * sizeless labels (global, local, weak) between and inside sized symbols,
 * symbols nested in others, aliases at one address with other sizes and
 * bindings, a label at the end of one section with the next one starting
 * after a gap, an absolute symbol, objects, TLS and a unique symbol.
 * test-symcache asks about every address of this library, of libdwfl and
 * of the table, and wants the same names. */

	.text
	.p2align 4
	.globl	g_sized
	.type	g_sized, @function
g_sized:
	.skip	32
	.size	g_sized, 32
	.globl	g_label
g_label:
	.skip	16
l_label:
	.skip	16
	.weak	w_label
w_label:
	.skip	8

	/* A global with a weak and a local alias at its start, shorter,
	 * and symbols inside it. */
	.p2align 4
	.globl	outer
	.type	outer, @function
	.weak	outer_weak
	.type	outer_weak, @function
	.type	outer_local, @function
outer:
outer_weak:
outer_local:
	.skip	16
	.size	outer_weak, 16
	.size	outer_local, 24
inner_local:
	.skip	16
	.size	inner_local, 16
	.type	inner_local, @function
	.globl	inner_global
	.type	inner_global, @function
inner_global:
	.skip	8
	.globl	inner_label
inner_label:
	.skip	8
	.size	inner_global, 16
	.skip	16
	.size	outer, 64

	/* A weak symbol covering a global that starts later, and one
	 * starting at the same place with the same size. */
	.p2align 4
	.weak	wide_weak
	.type	wide_weak, @function
wide_weak:
	.skip	16
	.globl	narrow_global
	.type	narrow_global, @function
	.globl	narrow_twin
	.type	narrow_twin, @function
narrow_global:
narrow_twin:
	.skip	16
	.size	narrow_global, 16
	.size	narrow_twin, 16
	.skip	32
	.size	wide_weak, 64

	/* A global and a shorter weak alias at one start, four times: the
	 * linker's order of them in the table varies. */
	.p2align 4
	.globl	pair0_global
	.type	pair0_global, @function
	.weak	pair0_weak
	.type	pair0_weak, @function
pair0_global:
pair0_weak:
	.skip	8
	.size	pair0_weak, 8
	.skip	8
	.size	pair0_global, 16
	.p2align 4
	.globl	pair1_global
	.type	pair1_global, @function
	.weak	pair1_weak
	.type	pair1_weak, @function
pair1_global:
pair1_weak:
	.skip	8
	.size	pair1_weak, 8
	.skip	8
	.size	pair1_global, 16
	.p2align 4
	.globl	pair2_global
	.type	pair2_global, @function
	.weak	pair2_weak
	.type	pair2_weak, @function
pair2_global:
pair2_weak:
	.skip	8
	.size	pair2_weak, 8
	.skip	8
	.size	pair2_global, 16
	.p2align 4
	.globl	pair3_global
	.type	pair3_global, @function
	.weak	pair3_weak
	.type	pair3_weak, @function
pair3_global:
pair3_weak:
	.skip	8
	.size	pair3_weak, 8
	.skip	8
	.size	pair3_global, 16

	/* Local functions only, a global label inside one of them, labels
	 * right after their ends. */
	.p2align 4
	.type	loc_a, @function
loc_a:
	.skip	24
	.globl	label_in_local
label_in_local:
	.skip	8
	.size	loc_a, 32
after_a:
	.skip	16
	.type	loc_b, @function
loc_b:
	.skip	16
	.size	loc_b, 16
	.skip	16
	.globl	last_text_label
last_text_label:
	.skip	4

	/* Another executable section, after a gap: a label at its start,
	 * a sized symbol then bare bytes. */
	.section .othertext, "ax", @progbits
	.p2align 8
	.skip	16
other_label:
	.skip	16
	.globl	other_sized
	.type	other_sized, @function
other_sized:
	.skip	16
	.size	other_sized, 16
	.skip	48

	.data
	.p2align 4
	.globl	obj
	.type	obj, @object
obj:
	.quad	1, 2
	.size	obj, 16
data_label:
	.quad	3
	.type	uniq, @gnu_unique_object
	.globl	uniq
uniq:
	.quad	4
	.size	uniq, 8

	.section .tbss, "awT", @nobits
	.p2align 3
	.globl	tls_var
	.type	tls_var, @object
tls_var:
	.zero	8
	.size	tls_var, 8

	.globl	abs_sym
	.set	abs_sym, 0x1010

	.section .note.GNU-stack, "", @progbits
