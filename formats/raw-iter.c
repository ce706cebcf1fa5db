/* raw-iter.c - walk the records of a raw trace (see raw-iter.h) */
#include "raw-iter.h"
#include "raw.h"

#include <string.h>

/* The least size of each known record type; any record has its header. */
static uint32_t raw_iter_min_size(uint32_t type)
{
	switch (type) {
	case RAW_MAPPING: return sizeof(struct raw_mapping);
	case RAW_THREAD: return RAW_THREAD_MIN_SIZE;
	case RAW_STACK: return sizeof(struct raw_stack);
	case RAW_SAMPLE: return sizeof(struct raw_sample);
	case RAW_LOST: return RAW_LOST_MIN_SIZE;
	case RAW_THREAD_EXIT: return sizeof(struct raw_thread_exit);
	case RAW_END: return sizeof(struct raw_end);
	case RAW_SAMPLE_REGS: return sizeof(struct raw_sample_regs);
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
	case RAW_STACK: {
		struct raw_stack s;

		memcpy(&s, r, sizeof s);
		return s.nframes <= RAW_MAX_FRAMES && (uint64_t)s.nframes * 8 <= size - sizeof s;
	}
	case RAW_SAMPLE: {
		struct raw_sample s;

		memcpy(&s, r, sizeof s);
		return s.nframes <= RAW_MAX_FRAMES && (uint64_t)s.nframes * 8 <= size - sizeof s;
	}
	case RAW_SAMPLE_REGS: {
		struct raw_sample_regs s;

		memcpy(&s, r, sizeof s);
		return s.nregs >= it->min_regs && s.nregs <= RAW_MAX_REGS &&
		       (uint64_t)s.nregs * 8 + s.stack_len <= size - sizeof s;
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
