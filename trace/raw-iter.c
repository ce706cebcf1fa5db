/* raw-iter.c - read a raw trace's header and walk its records (see
 * raw-iter.h) */
#include "raw-iter.h"
#include "raw.h"
#include "raw-py.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

_Static_assert(RAW_MACHINE_X86_64 == EM_X86_64, "raw.h's machine is ELF's");

enum raw_head_status raw_iter_head(const unsigned char *buf, size_t len, struct raw_head *head)
{
	struct raw_header *h = &head->h;

	memset(head, 0, sizeof *head);
	head->fixed_size = sizeof *h;
	if (len < RAW_MAGIC_LEN || memcmp(buf, RAW_MAGIC, RAW_MAGIC_LEN) != 0)
		return RAW_HEAD_NOT_RAW;
	if (len < sizeof *h)
		return RAW_HEAD_SHORT;
	memcpy(h, buf, sizeof *h);
	if (h->version < RAW_VERSION_MIN || h->version > RAW_VERSION)
		return RAW_HEAD_VERSION;
	head->fixed_size = raw_header_fixed_size(h->version);
	if (len < head->fixed_size)
		return RAW_HEAD_SHORT;
	if (h->version == 1)
		head->arch = (struct raw_arch){ RAW_MACHINE_X86_64, RAW_REGS_DWARF, RAW_NREGS, 0 };
	else
		memcpy(&head->arch, buf + sizeof *h, sizeof head->arch);
	if (head->arch.machine != RAW_MACHINE_X86_64)
		return RAW_HEAD_MACHINE;
	if (head->arch.regs != RAW_REGS_DWARF || head->arch.nregs < RAW_NREGS ||
	    head->arch.nregs > RAW_MAX_REGS)
		return RAW_HEAD_REGS;
	if (h->header_size < head->fixed_size || h->header_size % RAW_ALIGN != 0 ||
	    h->exe_len > h->header_size - head->fixed_size)
		return RAW_HEAD_CORRUPT;
	if (h->header_size > len)
		return RAW_HEAD_CUT;
	return RAW_HEAD_OK;
}

const char *raw_iter_machine_say(char *buf, size_t n, uint32_t machine)
{
	/* the usual machines, with the article their name takes */
	static const struct {
		uint32_t machine;
		const char *name;
	} names[] = {
		{ EM_386, "an i386" },       { EM_MIPS, "a MIPS" },
		{ EM_PPC, "a ppc" },         { EM_PPC64, "a ppc64" },
		{ EM_S390, "an s390" },      { EM_ARM, "an ARM" },
		{ EM_X86_64, "an x86-64" },  { EM_AARCH64, "an aarch64" },
		{ EM_RISCV, "a RISC-V" },    { EM_LOONGARCH, "a LoongArch" },
	};
	const char *name = NULL;

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].machine == machine)
			name = names[i].name;
	if (name)
		snprintf(buf, n, "a trace of %s program (ELF machine %u): this profview reads x86-64 traces",
			 name, machine);
	else
		snprintf(buf, n, "a trace of a program of ELF machine %u: this profview reads x86-64 traces",
			 machine);
	return buf;
}

/* The least size of each known record type; any record has its header. */
static uint32_t raw_iter_min_size(uint32_t type)
{
	switch (type) {
	case RAW_MAPPING: return sizeof(struct raw_mapping);
	case RAW_THREAD: return RAW_THREAD_MIN_SIZE;
	case RAW_STACK: return sizeof(struct raw_stack);
	case RAW_SAMPLE: return RAW_SAMPLE_SHORT_SIZE;
	case RAW_LOST: return RAW_LOST_MIN_SIZE;
	case RAW_THREAD_EXIT: return RAW_THREAD_EXIT_MIN_SIZE;
	case RAW_END: return sizeof(struct raw_end);
	case RAW_SAMPLE_REGS: return sizeof(struct raw_sample_regs);
	case RAW_CHECK_FRAMES: return sizeof(struct raw_unwind_check);
	case RAW_SAMPLE_KERNEL: return sizeof(struct raw_sample_kernel);
	case RAW_KERNEL: return sizeof(struct raw_kernel);
	case RAW_SEGMENT: return sizeof(struct raw_segment);
	case RAW_HEAP_ALLOC: return sizeof(struct raw_heap_alloc);
	case RAW_HEAP_FREE: return sizeof(struct raw_heap_free);
	case RAW_COLLECTOR: return sizeof(struct raw_collector);
	case RAW_EXEC: return sizeof(struct raw_exec);
	case RAW_CHILD: return sizeof(struct raw_child);
	case RAW_PYCODE: return sizeof(struct raw_pycode);
	case RAW_PYSTACK: return sizeof(struct raw_pystack);
	case RAW_SAMPLE_PY: return sizeof(struct raw_sample_py);
	case RAW_PYTHON: return sizeof(struct raw_python);
	case RAW_STACK_PY: return sizeof(struct raw_stack_py);
	case RAW_STACK_PYREF: return sizeof(struct raw_stack_pyref);
	case RAW_PYPART: return sizeof(struct raw_pypart);
	case RAW_PYCODES: return sizeof(struct raw_pycodes);
	case RAW_PYRUNCODES: return sizeof(struct raw_pyruncodes);
	case RAW_PYPARTS: return sizeof(struct raw_pyparts);
	case RAW_PYRUNPARTS: return sizeof(struct raw_pyrunparts);
	default: return sizeof(struct raw_rec);
	}
}

/* Does the record at r, of a size already checked against the buffer, hold
 * what its type needs: its fixed part, and the variable part its counts
 * say? */
static int raw_iter_fits(const struct raw_iter *it, const unsigned char *r, uint32_t type,
			 uint32_t size)
{
	if (size < raw_iter_min_size(type))
		return 0;
	switch (type) {
	case RAW_MAPPING: {
		struct raw_mapping m;

		memcpy(&m, r, sizeof m);
		return m.path_len <= size - sizeof m && m.build_id_len <= sizeof m.build_id;
	}
	case RAW_EXEC: {
		struct raw_exec e;

		memcpy(&e, r, sizeof e);
		return e.path_len <= size - sizeof e;
	}
	case RAW_STACK: {
		struct raw_stack s;

		memcpy(&s, r, sizeof s);
		return s.nframes <= RAW_MAX_FRAMES && (uint64_t)s.nframes * 8 <= size - sizeof s;
	}
	case RAW_SAMPLE: {
		struct raw_sample s;

		if (size < sizeof s) { /* the short form: a stack by id */
			memcpy(&s, r, RAW_SAMPLE_SHORT_SIZE);
			return s.stack_id != 0;
		}
		memcpy(&s, r, sizeof s);
		return s.nframes <= RAW_MAX_FRAMES && (uint64_t)s.nframes * 8 <= size - sizeof s;
	}
	case RAW_SAMPLE_REGS: {
		struct raw_sample_regs s;

		memcpy(&s, r, sizeof s);
		return s.nregs >= it->min_regs && s.nregs <= RAW_MAX_REGS &&
		       (uint64_t)s.nregs * 8 + s.stack_len <= size - sizeof s;
	}
	case RAW_SAMPLE_KERNEL: {
		struct raw_sample_kernel k;

		memcpy(&k, r, sizeof k);
		return k.nframes <= RAW_MAX_FRAMES && (uint64_t)k.nframes * 8 <= size - sizeof k;
	}
	case RAW_HEAP_ALLOC: {
		struct raw_heap_alloc a;

		memcpy(&a, r, sizeof a);
		return a.nframes <= RAW_MAX_FRAMES && (uint64_t)a.nframes * 8 <= size - sizeof a &&
		       (a.stack_id == 0 || a.nframes == 0);
	}
	case RAW_PYCODE: {
		struct raw_pycode c;

		memcpy(&c, r, sizeof c);
		return (uint64_t)c.name_len + c.file_len + c.table_len <= size - sizeof c;
	}
	case RAW_PYSTACK: {
		struct raw_pystack g;

		memcpy(&g, r, sizeof g);
		return g.nframes <= RAW_PY_MAX_STACK && (uint64_t)g.nframes * 8 <= size - sizeof g;
	}
	case RAW_STACK_PY:
		return (size - sizeof(struct raw_stack_py)) / 8 <= RAW_MAX_FRAMES;
	case RAW_PYPART: {
		struct raw_pypart g;

		memcpy(&g, r, sizeof g);
		return g.nwords >= 1 && g.nwords <= RAW_PY_MAX_STACK && g.len >= 2 * g.nwords &&
		       (g.parent == 0 ? 16 : 0) + (uint64_t)g.len <= size - sizeof g;
	}
	case RAW_SAMPLE_PY: {
		struct raw_sample_py y;

		memcpy(&y, r, sizeof y);
		return y.nwords <= RAW_PY_MAX_STACK && y.ngroups <= y.nwords &&
		       (uint64_t)y.nwords * 8 + (uint64_t)y.ngroups * 4 <= size - sizeof y;
	}
	case RAW_CHECK_FRAMES: {
		struct raw_unwind_check c;

		memcpy(&c, r, sizeof c);
		return c.nframes <= RAW_MAX_FRAMES && (uint64_t)c.nframes * 8 <= size - sizeof c;
	}
	default:
		return 1;
	}
}

void raw_iter_init(struct raw_iter *it, const unsigned char *buf, size_t len, size_t start,
		   uint32_t min_regs)
{
	memset(it, 0, sizeof *it);
	it->buf = buf;
	it->len = len;
	it->off = start < len ? start : len;
	it->min_regs = min_regs;
}

enum raw_next raw_iter_next(struct raw_iter *it, struct raw_record *rec)
{
	struct raw_rec h;
	size_t left = it->len - it->off;

	rec->data = it->buf + it->off;
	rec->off = it->off;
	rec->type = rec->size = 0;
	if (it->ended)
		return RAW_NEXT_ENDED;
	if (left == 0)
		return RAW_NEXT_DONE;
	if (left < sizeof h)
		return RAW_NEXT_CUT_HEADER;
	memcpy(&h, rec->data, sizeof h);
	rec->type = h.type;
	rec->size = h.size;
	/* End of the written data of a trace that was not finished, or a
	 * record reserved but never published. */
	if (h.type == 0)
		return RAW_NEXT_ZEROS;
	if (h.size < sizeof h || h.size % RAW_ALIGN != 0 || h.size > RAW_MAX_RECORD)
		return RAW_NEXT_BAD_SIZE;
	if (h.size > left)
		return RAW_NEXT_CUT;
	if (!raw_iter_fits(it, rec->data, h.type, h.size))
		return RAW_NEXT_MALFORMED;
	it->off += h.size;
	it->nrecords++;
	it->ended = h.type == RAW_END;
	return RAW_NEXT_RECORD;
}

long raw_run_index(const unsigned char *buf, size_t len, struct raw_run_footer *footer)
{
	struct raw_run_footer f;

	if (len < RAW_RUN_FOOTER_SIZE)
		return 0;
	memcpy(&f, buf + len - RAW_RUN_FOOTER_SIZE, sizeof(f));
	if (memcmp(f.magic, RAW_RUN_MAGIC, RAW_MAGIC_LEN) != 0)
		return 0;
	/* the index and the footer end the file, the parts come before */
	if (f.nparts == 0 || f.nparts > RAW_RUN_MAX_PARTS || f.index_offset % 8 != 0 ||
	    f.index_offset > len - RAW_RUN_FOOTER_SIZE ||
	    (len - RAW_RUN_FOOTER_SIZE - f.index_offset) / sizeof(struct raw_run_part) != f.nparts ||
	    (len - RAW_RUN_FOOTER_SIZE - f.index_offset) % sizeof(struct raw_run_part) != 0)
		return -1;
	*footer = f;
	return (long)f.nparts;
}

int raw_run_part_get(const unsigned char *buf, size_t len, const struct raw_run_footer *footer,
		     uint32_t i, struct raw_run_part *part)
{
	if (i >= footer->nparts || footer->index_offset > len)
		return -1;
	memcpy(part, buf + footer->index_offset + (size_t)i * sizeof(*part), sizeof(*part));
	if (part->offset % RAW_RUN_ALIGN != 0 || part->offset > footer->index_offset ||
	    part->length == 0 || part->length > footer->index_offset - part->offset)
		return -1;
	return 0;
}

const char *raw_why_say(uint32_t why)
{
	switch (why) {
	case RAW_WHY_STATIC: return "static binary";
	case RAW_WHY_SETID: return "set-user-ID or set-group-ID program";
	case RAW_WHY_ENV: return "environment without the collector's library";
	case RAW_WHY_REFUSED: return "the collector's library did not start in it";
	case RAW_WHY_UNSEEN: return "started where the collector does not see";
	default: return "reason not known";
	}
}

int raw_run_other_next(const unsigned char *buf, size_t len, const struct raw_run_footer *footer,
		       uint64_t *pos, struct raw_run_other *other, const char **name)
{
	struct raw_run_others head;
	uint64_t off = footer->others_offset, end = footer->index_offset, at;

	if (off == 0)
		return 0;
	if (off % 8 != 0 || off > end || end - off < sizeof(head) || end > len)
		return -1;
	memcpy(&head, buf + off, sizeof(head));
	if (memcmp(head.magic, RAW_RUN_OTHERS_MAGIC, RAW_MAGIC_LEN) != 0 ||
	    head.count > RAW_RUN_OTHERS_MAX)
		return -1;
	if (*pos == 0)
		*pos = off + sizeof(head);
	/* the entries before this one: counted by where they end */
	at = *pos;
	if (at == end)
		return 0;
	if (at > end || end - at < sizeof(*other))
		return -1;
	memcpy(other, buf + at, sizeof(*other));
	if (other->name_len > RAW_RUN_OTHER_NAME_MAX ||
	    raw_pad((uint32_t)sizeof(*other) + other->name_len) > end - at)
		return -1;
	*name = (const char *)buf + at + sizeof(*other);
	*pos = at + raw_pad((uint32_t)sizeof(*other) + other->name_len);
	return 1;
}

int raw_run_pynames(const unsigned char *buf, size_t len, const struct raw_run_footer *footer,
		    uint64_t *off, uint64_t *size, uint64_t *inflated)
{
	struct raw_run_pynamez z;
	uint64_t end = footer->others_offset ? footer->others_offset : footer->index_offset;
	char magic[RAW_MAGIC_LEN];

	if (end > len || end < RAW_MAGIC_LEN || end % 8 != 0)
		return 0;
	memcpy(magic, buf + end - RAW_MAGIC_LEN, RAW_MAGIC_LEN);
	if (memcmp(magic, RAW_RUN_PYNAMES_MAGIC, RAW_MAGIC_LEN) == 0) {
		struct raw_run_pynames t;

		if (end < sizeof(t))
			return -1;
		memcpy(&t, buf + end - sizeof(t), sizeof(t));
		z = (struct raw_run_pynamez){ .size = t.size, .inflated = 0 };
		end -= sizeof(t);
	} else if (memcmp(magic, RAW_RUN_PYNAMEZ_MAGIC, RAW_MAGIC_LEN) == 0) {
		if (end < sizeof(z))
			return -1;
		memcpy(&z, buf + end - sizeof(z), sizeof(z));
		/* (deflate makes at most 1032 bytes of one: a larger size
		 * is a lie, not memory to set aside) */
		if (z.inflated == 0 || z.inflated % 8 != 0 || z.inflated > RAW_RUN_PYNAMES_MAX ||
		    z.size == 0 || z.inflated / 1032 > z.size)
			return -1;
		end -= sizeof(z);
	} else {
		return 0;
	}
	if (z.size % 8 != 0 || z.size > RAW_RUN_PYNAMES_MAX || z.size > end)
		return -1;
	*off = end - z.size;
	*size = z.size;
	*inflated = z.inflated;
	return 1;
}
