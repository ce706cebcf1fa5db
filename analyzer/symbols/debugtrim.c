/* debugtrim.c - how much of a debug file's DWARF a set of addresses needs
 * (see debugtrim.h) */
#include "debugtrim.h"

#include <string.h>

/* Forms whose value is an offset outside the attribute's own unit. */
enum {
	FORM_REF_ADDR = 0x10,
	FORM_INDIRECT = 0x16,
	FORM_REF_SUP4 = 0x1c,
	FORM_REF_SIG8 = 0x20,
	FORM_IMPLICIT_CONST = 0x21,
	FORM_REF_SUP8 = 0x24,
	FORM_GNU_REF_ALT = 0x1f20,
};

/* An unsigned LEB128 at *p (before end) into *v, *p moved past it; false
 * when it runs past end or holds more than 64 bits. */
static inline bool uleb(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	uint64_t x = 0;

	if (*p < end && !(**p & 0x80)) {
		*v = *(*p)++; /* most of an abbreviation table's numbers */
		return true;
	}
	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char b = *(*p)++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

bool debugtrim_units_self_contained(const unsigned char *abbrev, size_t len)
{
	const unsigned char *p = abbrev, *end = abbrev + len;

	while (p < end) {
		uint64_t code, tag, name, form, skip;
		if (!uleb(&p, end, &code))
			return false;
		if (code == 0)
			continue; /* the end of a unit's table */
		if (!uleb(&p, end, &tag) || p == end)
			return false;
		p++; /* DW_CHILDREN_yes or _no */
		do {
			if (!uleb(&p, end, &name) || !uleb(&p, end, &form))
				return false;
			if (form == FORM_REF_ADDR || form == FORM_INDIRECT || form == FORM_REF_SUP4 ||
			    form == FORM_REF_SIG8 || form == FORM_REF_SUP8 || form == FORM_GNU_REF_ALT)
				return false;
			if (form == FORM_IMPLICIT_CONST && !uleb(&p, end, &skip))
				return false; /* (a signed LEB128 has the same length) */
		} while (name != 0 || form != 0);
	}
	return true;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Is one of addrs[0..n) in [lo, lo + size)? */
static bool holds_one(const uint64_t *addrs, size_t n, uint64_t lo, uint64_t size)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (addrs[mid] < lo)
			a = mid + 1;
		else
			b = mid;
	}
	return a < n && addrs[a] - lo < size;
}

/* The set at buf[at..): its length (header included) in *size and its
 * unit's offset in *unit; with addrs, whether its ranges hold one of them
 * in *holds.  false when it cannot be read. */
static bool aranges_set(const unsigned char *buf, size_t len, size_t at, const uint64_t *addrs,
			size_t n, size_t *size, uint64_t *unit, bool *holds)
{
	uint32_t length;
	size_t t;

	if (len - at < 12)
		return false;
	length = get32(buf + at);
	if (length >= 0xfffffff0u || length > len - at - 4 || length < 8)
		return false;
	/* version (2 bytes), unit offset (4), address size, segment size */
	if (buf[at + 10] != 8 || buf[at + 11] != 0)
		return false;
	*size = 4 + (size_t)length;
	*unit = get32(buf + at + 6);
	*holds = false;
	/* the tuples start at a multiple of their size from the set's start */
	for (t = at + 16; t + 16 <= at + *size; t += 16) {
		uint64_t lo = get64(buf + t), sz = get64(buf + t + 8);
		if (lo == 0 && sz == 0)
			break;
		if (holds_one(addrs, n, lo, sz)) {
			*holds = true;
			break;
		}
	}
	return true;
}

bool debugtrim_last_unit(const unsigned char *buf, size_t len, const uint64_t *addrs, size_t n,
			 uint64_t *last)
{
	size_t at, size;
	uint64_t unit;
	bool holds;

	*last = 0;
	for (at = 0; at < len; at += size) {
		if (!aranges_set(buf, len, at, addrs, n, &size, &unit, &holds))
			return false;
		if (holds && unit > *last)
			*last = unit;
	}
	return true;
}

bool debugtrim_aranges(unsigned char *buf, size_t *len, const uint64_t *addrs, size_t n,
		       uint64_t *last)
{
	size_t at, out, size;
	uint64_t unit;
	bool holds;

	if (!debugtrim_last_unit(buf, *len, addrs, n, last))
		return false;
	for (at = out = 0; at < *len; at += size) {
		aranges_set(buf, *len, at, addrs, 0, &size, &unit, &holds);
		if (unit > *last)
			continue;
		memmove(buf + out, buf + at, size);
		out += size;
	}
	*len = out;
	return true;
}

uint64_t debugtrim_unit_after(const unsigned char *buf, size_t len, uint64_t unit)
{
	uint64_t after = UINT64_MAX, u;
	size_t at, size;
	bool holds;

	for (at = 0; at < len; at += size) {
		if (!aranges_set(buf, len, at, NULL, 0, &size, &u, &holds))
			return UINT64_MAX;
		if (u > unit && u < after)
			after = u;
	}
	return after;
}

uint64_t debugtrim_unit_size(const unsigned char hdr[12])
{
	uint32_t length = get32(hdr);

	if (length == 0xffffffffu)
		return get64(hdr + 4) <= UINT64_MAX - 12 ? get64(hdr + 4) + 12 : 0;
	if (length >= 0xfffffff0u || length == 0)
		return 0;
	return (uint64_t)length + 4;
}
