/* fuzz-ehcfi.c - libFuzzer target for the unwind tables made of
 * .eh_frame (ehcfi.h): any bytes of a file, taken as an object whose
 * .eh_frame_hdr is somewhere in them, must give rows or none, never a read
 * outside them; and walks over the rows, of stacks made of the same bytes,
 * must end without a read outside the stack.
 *
 * The input: a 2-byte offset of the .eh_frame_hdr, then the object's
 * bytes (one segment at address SEG, as a segment after a program's text
 * is); the walks start from registers and stacks cut out of the same
 * bytes. */
#include "ehcfi.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SEG 0x100000
#define BIAS 0x10000

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct ehcfi_rows rows = { 0 };
	struct ehcfi_image img = { 0 };
	struct ehcfi_range range;
	uint64_t frames[64], regs[EHCFI_NREGS];
	unsigned char *obj;
	size_t n;
	uint16_t at;

	if (size < 2)
		return 0;
	memcpy(&at, data, 2);
	n = size - 2;
	/* a copy of its own size: the sanitizer sees any read past it */
	obj = malloc(n ? n : 1);
	if (!obj)
		return 0;
	memcpy(obj, data + 2, n);
	img.bias = (uintptr_t)obj - SEG;
	img.eh_frame_hdr = (uintptr_t)obj + (n ? at % n : 0);
	img.seg[0][0] = (uintptr_t)obj;
	img.seg[0][1] = (uintptr_t)obj + n;
	img.nseg = 1;
	ehcfi_build(&img, &rows);
	range = (struct ehcfi_range){ BIAS, BIAS + 2 * SEG, BIAS, rows.v,
				      (uint32_t)rows.n, rows.page_base, rows.npages, rows.pages };
	for (size_t k = 0; k < 4 && n >= 8; k++) {
		struct ehcfi_stack st;
		enum ehcfi_failure why;
		uint32_t got;

		for (int i = 0; i < EHCFI_NREGS; i++) {
			uint64_t v = 0;

			memcpy(&v, obj + (k * 8 + (size_t)i * 8) % (n - 7), 8);
			regs[i] = v;
		}
		regs[EHCFI_NREGS - 1] = BIAS + SEG - (regs[EHCFI_NREGS - 1] % SEG);
		regs[7] = 0x7f0000 + (regs[7] & 0xfff8);
		st = (struct ehcfi_stack){ regs[7], regs[7] + n, obj };
		ehcfi_walk(&range, 1, regs, &st, k & 1 ? EHCFI_EXACT : 0, frames, 64, &got, &why);
	}
	free(rows.v);
	free(obj);
	return 0;
}
