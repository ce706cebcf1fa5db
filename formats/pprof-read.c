/* pprof-read.c - read pprof's profile.proto into the profile model
 *
 * Two steps: a walk over the wire format that checks every tag, varint and
 * length against the schema and says at which byte the data goes wrong (a
 * cut or damaged file gets one precise message), then protobuf-c decodes
 * it and the messages are turned into the model, checking that every
 * index and id refers to something.
 */
#include "pprof-read.h"
#include "pprof-write.h"
#include "error.h"
#include "merge.h"
#include "util.h"
#include "profile.pb-c.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The schema, as far as the wire check needs it. */
enum msg { M_PROFILE, M_VALUE_TYPE, M_SAMPLE, M_LABEL, M_MAPPING, M_LOCATION, M_LINE, M_FUNCTION };
enum kind { K_ANY, K_VARINT, K_PACKED, K_BYTES, K_MSG };

struct field {
	uint8_t kind;
	uint8_t msg;           /* K_MSG: its type */
};

static const char *const msg_names[] = {
	"profile", "value type", "sample", "label", "mapping", "location", "line", "function",
};

#define MAX_FIELD 15
static const struct field schema[][MAX_FIELD + 1] = {
	[M_PROFILE] = {
		[1] = { K_MSG, M_VALUE_TYPE }, [2] = { K_MSG, M_SAMPLE }, [3] = { K_MSG, M_MAPPING },
		[4] = { K_MSG, M_LOCATION }, [5] = { K_MSG, M_FUNCTION }, [6] = { K_BYTES, 0 },
		[7] = { K_VARINT, 0 }, [8] = { K_VARINT, 0 }, [9] = { K_VARINT, 0 },
		[10] = { K_VARINT, 0 }, [11] = { K_MSG, M_VALUE_TYPE }, [12] = { K_VARINT, 0 },
		[13] = { K_PACKED, 0 }, [14] = { K_VARINT, 0 }, [15] = { K_BYTES, 0 },
	},
	[M_VALUE_TYPE] = { [1] = { K_VARINT, 0 }, [2] = { K_VARINT, 0 } },
	[M_SAMPLE] = { [1] = { K_PACKED, 0 }, [2] = { K_PACKED, 0 }, [3] = { K_MSG, M_LABEL } },
	[M_LABEL] = { [1] = { K_VARINT, 0 }, [2] = { K_VARINT, 0 }, [3] = { K_VARINT, 0 },
		      [4] = { K_VARINT, 0 } },
	[M_MAPPING] = { [1] = { K_VARINT, 0 }, [2] = { K_VARINT, 0 }, [3] = { K_VARINT, 0 },
			[4] = { K_VARINT, 0 }, [5] = { K_VARINT, 0 }, [6] = { K_VARINT, 0 },
			[7] = { K_VARINT, 0 }, [8] = { K_VARINT, 0 }, [9] = { K_VARINT, 0 },
			[10] = { K_VARINT, 0 } },
	[M_LOCATION] = { [1] = { K_VARINT, 0 }, [2] = { K_VARINT, 0 }, [3] = { K_VARINT, 0 },
			 [4] = { K_MSG, M_LINE }, [5] = { K_VARINT, 0 } },
	[M_LINE] = { [1] = { K_VARINT, 0 }, [2] = { K_VARINT, 0 }, [3] = { K_VARINT, 0 } },
	[M_FUNCTION] = { [1] = { K_VARINT, 0 }, [2] = { K_VARINT, 0 }, [3] = { K_VARINT, 0 },
			 [4] = { K_VARINT, 0 }, [5] = { K_VARINT, 0 } },
};

bool pprof_detect(const unsigned char *buf, size_t len)
{
	unsigned field, wire;

	if (len == 0)
		return false;
	/* Printable text is not taken for a protobuf: a real one has length
	 * and varint bytes outside that range within its first bytes. */
	bool text = true;
	for (size_t i = 0; text && i < len && i < 65536; i++)
		text = (buf[i] >= 0x20 && buf[i] < 0x7f) || buf[i] == '\t' || buf[i] == '\n' ||
		       buf[i] == '\r';
	if (text)
		return false;
	field = buf[0] >> 3;
	wire = buf[0] & 7;
	if (field < 1 || field > MAX_FIELD || !schema[M_PROFILE][field].kind)
		return false;
	switch (schema[M_PROFILE][field].kind) {
	case K_VARINT: return wire == 0;
	case K_PACKED: return wire == 0 || wire == 2;
	default: return wire == 2;
	}
}

struct wire {
	const unsigned char *buf;
	size_t len;
	const char *name;
	bool gunzipped;
};

static int wire_error(const struct wire *w, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int wire_error(const struct wire *w, size_t at, const char *fmt, ...)
{
	char what[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return pv_error("'%s': corrupt profile.proto at byte %zu%s: %s", w->name, at,
			w->gunzipped ? " of the decompressed data" : "", what);
}

/* A varint at *at, below end; what names it in an error message. */
static int get_varint_slow(const struct wire *w, size_t *at, size_t end, uint64_t *v, const char *what)
{
	uint64_t x = 0;
	size_t start = *at;

	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (*at >= end) {
			if (end == w->len)
				return wire_error(w, start, "the data ends inside %s (the file is cut off)", what);
			return wire_error(w, start, "%s runs past the end of its message", what);
		}
		unsigned char b = w->buf[(*at)++];
		if (shift == 63 && b > 1)
			break;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return wire_error(w, start, "%s is longer than 10 bytes", what);
}

/* What a field is, for an error message: made only when one is. */
struct what {
	const char *fixed;     /* or: */
	uint64_t field;
	enum msg msg;
	const struct field *f;
	char buf[96];
};

static const char *what_str(struct what *x)
{
	if (x->fixed)
		return x->fixed;
	if (x->f && x->f->kind == K_MSG)
		snprintf(x->buf, sizeof x->buf, "a %s (field %" PRIu64 " of a %s)", msg_names[x->f->msg],
			 x->field, msg_names[x->msg]);
	else
		snprintf(x->buf, sizeof x->buf, "field %" PRIu64 " of a %s", x->field, msg_names[x->msg]);
	return x->buf;
}

/* The common case inline (a whole varint of up to 9 bytes inside the
 * message); anything else, errors included, the careful way. */
static inline int get_varint(const struct wire *w, size_t *at, size_t end, uint64_t *v, struct what *what)
{
	uint64_t x = 0;
	size_t i = *at;

	for (unsigned shift = 0; shift < 63 && i < end; shift += 7) {
		unsigned char b = w->buf[i++];
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			*at = i;
			return 0;
		}
	}
	return get_varint_slow(w, at, end, v, what_str(what));
}

/* Check a message of type msg in [at, end). */
static int check_msg(const struct wire *w, size_t at, size_t end, enum msg msg, unsigned depth)
{
	size_t start = at;
	bool has_id = false;

	if (depth > 4)
		return wire_error(w, at, "messages nested too deep");
	while (at < end) {
		size_t tag_at = at;
		uint64_t tag = 0, v = 0, len = 0;
		struct what tag_what = { .fixed = "a field tag" };

		if (get_varint(w, &at, end, &tag, &tag_what) < 0)
			return -1;
		uint64_t field = tag >> 3;
		unsigned wt = tag & 7;
		const struct field *f = field >= 1 && field <= MAX_FIELD ? &schema[msg][field] : NULL;
		unsigned kind = f ? f->kind : K_ANY;

		if (field == 0 || field > 536870911)
			return wire_error(w, tag_at, "field number %" PRIu64 " in a %s is invalid", field,
					  msg_names[msg]);
		struct what what = { .field = field, .msg = msg, .f = f };
		bool ok = kind == K_ANY ? (wt == 0 || wt == 1 || wt == 2 || wt == 5) :
			  kind == K_VARINT ? wt == 0 :
			  kind == K_PACKED ? (wt == 0 || wt == 2) : wt == 2;
		if (!ok)
			return wire_error(w, tag_at, "%s has wire type %u, which it cannot have", what_str(&what),
					  wt);
		switch (wt) {
		case 0:
			if (get_varint(w, &at, end, &v, &what) < 0)
				return -1;
			if (field == 1)
				has_id = v != 0;
			break;
		case 1:
		case 5: {
			size_t n = wt == 1 ? 8 : 4;
			if (end - at < n)
				return end == w->len ?
					wire_error(w, tag_at, "the data ends inside %s (the file is cut off)",
						   what_str(&what)) :
					wire_error(w, tag_at, "%s runs past the end of its message", what_str(&what));
			at += n;
			break;
		}
		case 2: {
			size_t len_at = at;
			if (get_varint(w, &at, end, &len, &what) < 0)
				return -1;
			if (len > end - at) {
				if (end == w->len)
					return wire_error(w, tag_at,
							  "%s needs %" PRIu64 " bytes, %zu are left (the file is cut off)",
							  what_str(&what), len, end - at);
				return wire_error(w, len_at, "%s needs %" PRIu64 " bytes, its message has %zu left",
						  what_str(&what), len, end - at);
			}
			size_t sub_end = at + (size_t)len;
			if (kind == K_MSG && check_msg(w, at, sub_end, f->msg, depth + 1) < 0)
				return -1;
			if (kind == K_PACKED)
				for (size_t q = at; q < sub_end;)
					if (get_varint(w, &q, sub_end, &v, &what) < 0)
						return -1;
			at = sub_end;
			break;
		}
		default:
			return wire_error(w, tag_at, "%s has wire type %u (groups are not used here)",
					  what_str(&what), wt);
		}
	}
	/* Said here, before anything is unpacked: a million empty ones
	 * would take gigabytes first. */
	if (!has_id && (msg == M_MAPPING || msg == M_LOCATION || msg == M_FUNCTION))
		return wire_error(w, start, "a %s without an id (ids start at 1)", msg_names[msg]);
	return 0;
}

/* Decoding into the model */

struct idmap {
	uint64_t id;
	uint32_t idx;
};

static int cmp_id(const void *a, const void *b)
{
	const struct idmap *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* A sorted id -> index table; error on a zero or repeated id. */
static struct idmap *make_ids(const char *name, const char *what, size_t n,
			      uint64_t (*id_of)(const void *arr, size_t i), const void *arr)
{
	struct idmap *m = malloc((n ? n : 1) * sizeof *m);

	if (!m) {
		pv_oom();
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		m[i].id = id_of(arr, i);
		m[i].idx = (uint32_t)i;
		if (m[i].id == 0) {
			pv_error("'%s': %s %zu has id 0", name, what, i + 1);
			free(m);
			return NULL;
		}
	}
	qsort(m, n, sizeof *m, cmp_id);
	for (size_t i = 1; i < n; i++)
		if (m[i].id == m[i - 1].id) {
			pv_error("'%s': two %ss have id %" PRIu64, name, what, m[i].id);
			free(m);
			return NULL;
		}
	return m;
}

/* Ids are most often 1..n in order (every writer we know numbers them so):
 * then the table is indexed directly. */
static uint32_t find_id(const struct idmap *m, size_t n, uint64_t id)
{
	if (id - 1 < n && m[id - 1].id == id)
		return m[id - 1].idx;
	struct idmap key = { id, 0 };
	const struct idmap *r = n ? bsearch(&key, m, n, sizeof *m, cmp_id) : NULL;
	return r ? r->idx : PV_NONE;
}

static uint64_t mapping_id(const void *arr, size_t i)
{
	return ((Perftools__Profiles__Mapping *const *)arr)[i]->id;
}
static uint64_t function_id(const void *arr, size_t i)
{
	return ((Perftools__Profiles__Function *const *)arr)[i]->id;
}
static uint64_t location_id(const void *arr, size_t i)
{
	return ((Perftools__Profiles__Location *const *)arr)[i]->id;
}

/* The string table, read from the wire: a run of equal entries is one
 * element (a table of a million empty strings is one). */
struct strrun {
	size_t first;            /* index of its first entry */
	size_t at;               /* the bytes, in the data */
	uint32_t len;
	uint32_t idx;            /* ours, PV_NONE until needed */
};

struct decoder {
	const char *name;
	const Perftools__Profiles__Profile *pb;
	struct pv_profile *p;
	const unsigned char *buf; /* the data */
	struct strrun *strs;
	size_t nruns, cap_runs, nstrings;
	struct idmap *maps, *fns, *locs;
	uint32_t *loc_index;     /* proto location -> ours */
	uint32_t *fn_index;      /* proto function -> ours */
	uint32_t *map_index;     /* proto mapping -> ours */
	uint32_t *stack;
	struct pv_line *lines;
	size_t cap_stack, cap_lines;
	size_t lines_cut;        /* locations with more than PV_MAX_DEPTH lines */
};

/* Entry of the string table at [at, at + len) of the data. */
static int add_string(struct decoder *d, size_t at, size_t len)
{
	struct strrun *last = d->nruns ? &d->strs[d->nruns - 1] : NULL;

	if (len > UINT32_MAX)
		return pv_error("'%s': a string of %zu bytes", d->name, len);
	if (!last || last->len != len || memcmp(d->buf + last->at, d->buf + at, len)) {
		if (pv_budget_charge(sizeof *d->strs) < 0 ||
		    pv_grow(&d->strs, &d->cap_runs, d->nruns + 1, sizeof *d->strs) < 0)
			return -1;
		d->strs[d->nruns++] = (struct strrun){ d->nstrings, at, (uint32_t)len, PV_NONE };
	}
	d->nstrings++;
	return 0;
}

/* Our index of string table entry i of the profile; PV_NONE after an
 * error (what names the referrer). */
static uint32_t dstr(struct decoder *d, int64_t i, const char *what, size_t which)
{
	size_t lo = 0, hi = d->nruns;

	if (i < 0 || (uint64_t)i >= d->nstrings) {
		pv_error("'%s': %s %zu refers to string %" PRId64 ", the string table has %zu",
			 d->name, what, which, i, d->nstrings);
		return PV_NONE;
	}
	/* the last run that starts at or before i */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->strs[mid].first <= (uint64_t)i)
			lo = mid;
		else
			hi = mid;
	}
	struct strrun *r = &d->strs[lo];
	if (r->idx == PV_NONE)
		r->idx = pv_intern(d->p, (const char *)d->buf + r->at, r->len);
	return r->idx;
}

static int decode_header(struct decoder *d)
{
	const Perftools__Profiles__Profile *pb = d->pb;
	struct pv_profile *p = d->p;

	/* profile.proto has no end marker: a file cut between two fields
	 * parses, and typically loses its string table, written last. */
	if (d->nstrings == 0)
		return pv_error("'%s': the profile has no string table (is the file cut off?)", d->name);
	if (d->strs[0].len && d->buf[d->strs[0].at] != '\0')
		return pv_error("'%s': the string table does not start with the empty string, as profile.proto requires",
				d->name);
	if (pb->n_sample_type > PV_MAX_VALUES)
		pv_warn("'%s': samples have %zu values; only the first %d are read", d->name,
			pb->n_sample_type, PV_MAX_VALUES);
	for (size_t i = 0; i < pb->n_sample_type && i < PV_MAX_VALUES; i++) {
		uint32_t t = dstr(d, pb->sample_type[i]->type, "sample type", i + 1), u;
		if (t == PV_NONE || (u = dstr(d, pb->sample_type[i]->unit, "sample type", i + 1)) == PV_NONE)
			return -1;
		if (pv_add_value_type(p, pv_str(p, t), pv_str(p, u)) == PV_NONE)
			return -1;
	}
	if (pb->period_type) {
		if ((p->period_type.type = dstr(d, pb->period_type->type, "period type", 1)) == PV_NONE ||
		    (p->period_type.unit = dstr(d, pb->period_type->unit, "period type", 1)) == PV_NONE)
			return -1;
	}
	p->period = pb->period;
	/* what pprof weighs by unless told */
	if (pb->default_sample_type > 0 && (uint64_t)pb->default_sample_type < d->nstrings &&
	    (p->default_type = dstr(d, pb->default_sample_type, "default sample type", 1)) == PV_NONE)
		return -1;
	p->time_ns = pb->time_nanos;
	p->duration_ns = pb->duration_nanos;
	p->finished = true;
	/* profview's own comment on the system CPU time */
	for (size_t i = 0; i < pb->n_comment; i++) {
		uint32_t ci = pb->comment[i] >= 0 && (uint64_t)pb->comment[i] < d->nstrings ?
			      dstr(d, pb->comment[i], "comment", i + 1) : 0;
		if (ci == PV_NONE)
			return -1;
		const char *c = pv_str(p, ci);
		size_t k = sizeof PPROF_SYSTEM_COMMENT - 1;
		char *end;
		long long v;
		if (strncmp(c, PPROF_SYSTEM_COMMENT, k) || c[k] < '0' || c[k] > '9')
			continue;
		errno = 0;
		v = strtoll(c + k, &end, 10);
		if (!errno && !*end)
			p->system_cpu_ns = v;
	}
	p->source_format = pv_intern_str(p, "pprof profile");
	return p->source_format == PV_NONE ? -1 : 0;
}

static int decode_mappings(struct decoder *d)
{
	const Perftools__Profiles__Profile *pb = d->pb;
	struct pv_profile *p = d->p;

	d->maps = make_ids(d->name, "mapping", pb->n_mapping, mapping_id, pb->mapping);
	d->map_index = malloc((pb->n_mapping + 1) * sizeof *d->map_index);
	if (!d->maps || !d->map_index)
		return d->maps ? pv_oom() : -1;
	for (size_t i = 0; i < pb->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = pb->mapping[i];
		struct pv_mapping pm = {
			.start = m->memory_start, .limit = m->memory_limit, .offset = m->file_offset,
			.has_functions = m->has_functions, .has_filenames = m->has_filenames,
			.has_line_numbers = m->has_line_numbers,
		};
		if ((pm.file = dstr(d, m->filename, "mapping", i + 1)) == PV_NONE ||
		    (pm.build_id = dstr(d, m->build_id, "mapping", i + 1)) == PV_NONE)
			return -1;
		pm.kind = pv_mapping_kind_of(pv_str(p, pm.file));
		if ((d->map_index[i] = pv_add_mapping(p, &pm)) == PV_NONE)
			return -1;
	}
	/* the first mapping is the program's, unless it is the kernel's */
	for (size_t i = 0; i < p->nmappings && !p->program; i++)
		if (p->mappings[i].kind != PV_MAP_KERNEL)
			p->program = p->mappings[i].file;
	return 0;
}

static int decode_functions(struct decoder *d)
{
	const Perftools__Profiles__Profile *pb = d->pb;

	d->fns = make_ids(d->name, "function", pb->n_function, function_id, pb->function);
	d->fn_index = malloc((pb->n_function + 1) * sizeof *d->fn_index);
	if (!d->fns || !d->fn_index)
		return d->fns ? pv_oom() : -1;
	for (size_t i = 0; i < pb->n_function; i++) {
		const Perftools__Profiles__Function *f = pb->function[i];
		uint32_t nm, sn, fi;
		if ((nm = dstr(d, f->name, "function", i + 1)) == PV_NONE ||
		    (sn = dstr(d, f->system_name, "function", i + 1)) == PV_NONE ||
		    (fi = dstr(d, f->filename, "function", i + 1)) == PV_NONE)
			return -1;
		/* A function known only by its system name is shown by it. */
		if (!pv_str(d->p, nm)[0])
			nm = sn;
		if ((d->fn_index[i] = pv_get_function(d->p, nm, sn, fi, f->start_line)) == PV_NONE)
			return -1;
	}
	return 0;
}

static int decode_locations(struct decoder *d)
{
	const Perftools__Profiles__Profile *pb = d->pb;

	d->locs = make_ids(d->name, "location", pb->n_location, location_id, pb->location);
	d->loc_index = malloc((pb->n_location + 1) * sizeof *d->loc_index);
	if (!d->locs || !d->loc_index)
		return d->locs ? pv_oom() : -1;
	for (size_t i = 0; i < pb->n_location; i++) {
		const Perftools__Profiles__Location *l = pb->location[i];
		uint32_t mi = PV_NONE;

		if (l->mapping_id) {
			uint32_t k = find_id(d->maps, pb->n_mapping, l->mapping_id);
			if (k == PV_NONE)
				return pv_error("'%s': location %" PRIu64 " refers to mapping %" PRIu64 ", which is not in the profile",
						d->name, l->id, l->mapping_id);
			mi = d->map_index[k];
		}
		/* the innermost lines a stack may hold (PV_MAX_DEPTH) */
		size_t nl = 0, lines = l->n_line < PV_MAX_DEPTH ? l->n_line : PV_MAX_DEPTH;
		if (pv_grow(&d->lines, &d->cap_lines, lines + 1, sizeof *d->lines) < 0)
			return -1;
		d->lines_cut += l->n_line > lines;
		for (size_t j = 0; j < lines; j++) {
			/* Function id 0 is "none": a line that names no
			 * function is no frame (a location left with none is
			 * named by its address, as any unsymbolized one). */
			if (l->line[j]->function_id == 0)
				continue;
			uint32_t k = find_id(d->fns, pb->n_function, l->line[j]->function_id);
			if (k == PV_NONE)
				return pv_error("'%s': location %" PRIu64 " refers to function %" PRIu64 ", which is not in the profile",
						d->name, l->id, l->line[j]->function_id);
			d->lines[nl++] = (struct pv_line){ d->fn_index[k], l->line[j]->line };
		}
		/* An address with neither function nor mapping: the
		 * mapping that holds it, so that it is named in its module. */
		if (nl == 0 && mi == PV_NONE)
			mi = pv_find_mapping(d->p, l->address);
		d->loc_index[i] = pv_location_with_lines(d->p, l->address, mi, d->lines, (uint32_t)nl);
		if (d->loc_index[i] == PV_NONE)
			return -1;
	}
	return 0;
}

/* A sample's values as stored (raw), before the base's are turned back to
 * their own sign: none may be negative.  pprof stores a comparison's base
 * negated (-diff_base, its samples labelled pprof::base): only there has a
 * negative value a meaning, and there a positive one is wrong, as is
 * INT64_MIN, whose magnitude has no int64_t. */
static int check_values(const struct decoder *d, size_t which, const int64_t *raw, bool base)
{
	const struct pv_profile *p = d->p;

	for (uint32_t v = 0; v < p->nvalues; v++) {
		const char *type = pv_str(p, p->sample_types[v].type);
		if (base && raw[v] == INT64_MIN)
			return pv_error("'%s': sample %zu has the '%s' value %" PRId64 " in the base of a comparison, whose magnitude profview cannot count",
					d->name, which, type, raw[v]);
		if (base ? raw[v] > 0 : raw[v] < 0)
			return pv_error("'%s': sample %zu has a %s '%s' value%s: only the base of a comparison (labelled pprof::base) is stored negated",
					d->name, which, base ? "positive" : "negative", type,
					base ? " in the base of a comparison" : "");
	}
	return 0;
}

/* The thread a sample's labels name, PV_NONE when none does. */
static int sample_thread(struct decoder *d, const Perftools__Profiles__Sample *s, size_t which,
			 uint32_t *thread, bool *base)
{
	int64_t tid = -1;
	uint32_t name = PV_NONE;

	*thread = PV_NONE;
	*base = false;
	for (size_t i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *l = s->label[i];
		uint32_t k = dstr(d, l->key, "label of sample", which);
		if (k == PV_NONE)
			return -1;
		const char *key = pv_str(d->p, k);
		if (strcmp(key, "thread") == 0 || strcmp(key, "tid") == 0 || strcmp(key, "thread_id") == 0) {
			if (l->str) {
				uint32_t v = dstr(d, l->str, "label of sample", which);
				char *end;
				if (v == PV_NONE)
					return -1;
				long long t = strtoll(pv_str(d->p, v), &end, 10);
				if (end != pv_str(d->p, v) && !*end && t > 0 && t <= UINT32_MAX)
					tid = t;
			} else if (l->num > 0 && l->num <= UINT32_MAX) {
				tid = l->num;
			}
		} else if (strcmp(key, "pprof::base") == 0) {
			/* pprof -diff_base's base sample: negated, marked */
			*base = true;
		} else if (strcmp(key, "thread_name") == 0 && l->str) {
			if ((name = dstr(d, l->str, "label of sample", which)) == PV_NONE)
				return -1;
		}
	}
	if (tid > 0 && (*thread = pv_get_thread(d->p, (uint32_t)tid, name)) == PV_NONE)
		return -1;
	return 0;
}

static int decode_samples(struct decoder *d)
{
	const Perftools__Profiles__Profile *pb = d->pb;
	struct pv_profile *p = d->p;

	for (size_t i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];
		struct pv_sample ps = { 0 };

		if (s->n_value != pb->n_sample_type)
			return pv_error("'%s': sample %zu has %zu values, the profile has %zu sample types",
					d->name, i + 1, s->n_value, pb->n_sample_type);
		/* past PV_MAX_DEPTH locations the outermost are only checked */
		size_t nlocs = s->n_location_id < PV_MAX_DEPTH ? s->n_location_id : PV_MAX_DEPTH;
		if (pv_grow(&d->stack, &d->cap_stack, nlocs + 1, sizeof *d->stack) < 0)
			return -1;
		for (size_t j = 0; j < s->n_location_id; j++) {
			uint32_t k = find_id(d->locs, pb->n_location, s->location_id[j]);
			if (k == PV_NONE)
				return pv_error("'%s': sample %zu refers to location %" PRIu64 ", which is not in the profile",
						d->name, i + 1, s->location_id[j]);
			if (j < nlocs)
				d->stack[j] = d->loc_index[k];
		}
		bool base;
		if (pv_add_stack_capped(p, &ps, d->stack, (uint32_t)nlocs, nlocs < s->n_location_id) < 0 ||
		    sample_thread(d, s, i + 1, &ps.thread, &base) < 0)
			return -1;
		for (size_t v = 0; v < p->nvalues; v++)
			ps.values[v] = s->value[v];
		if (check_values(d, i + 1, ps.values, base) < 0)
			return -1;
		if (base) {
			/* back to the base's own values */
			ps.flags |= PV_SAMPLE_BASE;
			for (size_t v = 0; v < p->nvalues; v++)
				ps.values[v] = (int64_t)(0 - (uint64_t)ps.values[v]);
			p->diff = true;
		}
		if (pv_add_sample_merged(p, &ps) < 0)
			return -1;
	}
	return 0;
}

/* Samples without labels, the bulk of a big profile, are decoded from the
 * wire here instead of being unpacked by protobuf-c into a message each,
 * and so is the string table: protobuf-c unpacks the rest.  The data was
 * checked (check_msg) before. */

/* The top-level fields of the profile at w: the string table into d's
 * runs, the samples left out unless with_samples, everything else copied
 * to *rest.  *labels is set when a sample has a label (then the caller
 * unpacks the samples too).  0 or -1. */
static int split(struct decoder *d, const struct wire *w, bool with_samples, unsigned char **rest,
		 size_t *rest_len, bool *labels)
{
	size_t at = 0, rn = 0;
	struct what what = { .fixed = "a field of a Profile" };

	*labels = false;
	*rest = malloc(w->len ? w->len : 1);
	if (!*rest)
		return pv_oom();
	while (at < w->len) {
		size_t tag_at = at;
		uint64_t tag = 0, len = 0, v = 0;
		if (get_varint(w, &at, w->len, &tag, &what) < 0)
			return -1;
		switch (tag & 7) {
		case 0:
			if (get_varint(w, &at, w->len, &v, &what) < 0)
				return -1;
			break;
		case 1: at += 8; break;
		case 5: at += 4; break;
		case 2:
			if (get_varint(w, &at, w->len, &len, &what) < 0)
				return -1;
			if (tag >> 3 == 6) {
				if (add_string(d, at, len) < 0)
					return -1;
				at += len;
				continue;
			}
			if (tag >> 3 == 2) {
				/* a Sample: any label in it? */
				for (size_t q = at; q < at + len;) {
					uint64_t st = 0, sv = 0, sl = 0;
					if (get_varint(w, &q, at + len, &st, &what) < 0)
						return -1;
					if (st >> 3 == 3)
						*labels = true;
					if ((st & 7) == 0)
						get_varint(w, &q, at + len, &sv, &what);
					else if ((st & 7) == 1)
						q += 8;
					else if ((st & 7) == 5)
						q += 4;
					else if (get_varint(w, &q, at + len, &sl, &what) == 0)
						q += sl;
					else
						return -1;
				}
				if (!with_samples) {
					at += len;
					continue;
				}
			}
			at += len;
			break;
		}
		memcpy(*rest + rn, w->buf + tag_at, at - tag_at);
		rn += at - tag_at;
	}
	*rest_len = rn;
	return 0;
}

static int decode_sample_wire(struct decoder *d, const struct wire *w, size_t at, size_t end,
			      size_t which);

/* The samples, from the wire. */
static int decode_samples_wire(struct decoder *d, const struct wire *w)
{
	size_t at = 0, which = 0;
	struct what what = { .fixed = "a field of a Profile" };

	while (at < w->len) {
		uint64_t tag = 0, len = 0, v = 0;
		if (get_varint(w, &at, w->len, &tag, &what) < 0)
			return -1;
		switch (tag & 7) {
		case 0:
			if (get_varint(w, &at, w->len, &v, &what) < 0)
				return -1;
			break;
		case 1: at += 8; break;
		case 5: at += 4; break;
		case 2:
			if (get_varint(w, &at, w->len, &len, &what) < 0)
				return -1;
			if (tag >> 3 == 2 && decode_sample_wire(d, w, at, at + len, ++which) < 0)
				return -1;
			at += len;
			break;
		}
	}
	return 0;
}

/* protobuf-c's memory, charged to the profile's budget. */
static void *pb_alloc(void *data, size_t size)
{
	(void)data;
	/* malloc's own 16 bytes a block with it */
	return pv_budget_charge(size + 16) < 0 ? NULL : malloc(size);
}

static void pb_free(void *data, void *ptr)
{
	(void)data;
	free(ptr);
}

static ProtobufCAllocator pb_allocator = { pb_alloc, pb_free, NULL };

/* Sample which (1-based) from the wire, at [at, end). */
static int decode_sample_wire(struct decoder *d, const struct wire *w, size_t at, size_t end,
			      size_t which)
{
	const Perftools__Profiles__Profile *pb = d->pb;
	struct pv_profile *p = d->p;
	struct pv_sample ps = { .thread = PV_NONE };
	struct what what = { .fixed = "a field of a Sample" };
	size_t nlocs = 0, nvalues = 0;
	bool cut = false;

	while (at < end) {
		uint64_t tag = 0, v = 0, len = 0;
		if (get_varint(w, &at, end, &tag, &what) < 0)
			return -1;
		unsigned field = (unsigned)(tag >> 3), wt = tag & 7;
		size_t from = at, to = at;
		if (wt == 1 || wt == 5) {
			at += wt == 1 ? 8 : 4;
			continue;
		}
		if (wt == 2) {
			if (get_varint(w, &at, end, &len, &what) < 0)
				return -1;
			from = at;
			to = at = at + len;
		}
		if (field != 1 && field != 2) {
			if (wt == 0 && get_varint(w, &at, end, &v, &what) < 0)
				return -1;
			continue;
		}
		/* one value (wire type 0) or packed values */
		for (size_t q = wt == 0 ? at : from; wt == 0 ? q == at : q < to;) {
			if (get_varint(w, &q, wt == 0 ? end : to, &v, &what) < 0)
				return -1;
			if (field == 1) {
				uint32_t k = find_id(d->locs, pb->n_location, v);
				if (k == PV_NONE)
					return pv_error("'%s': sample %zu refers to location %" PRIu64
							", which is not in the profile", d->name, which, v);
				/* past PV_MAX_DEPTH the outermost are only checked */
				if (nlocs >= PV_MAX_DEPTH) {
					cut = true;
				} else {
					if (nlocs >= d->cap_stack &&
					    pv_grow(&d->stack, &d->cap_stack, nlocs + 1, sizeof *d->stack) < 0)
						return -1;
					d->stack[nlocs++] = d->loc_index[k];
				}
			} else {
				if (nvalues < PV_MAX_VALUES)
					ps.values[nvalues] = (int64_t)v;
				nvalues++;
			}
			if (wt == 0) {
				at = q;
				break;
			}
		}
	}
	if (nvalues != pb->n_sample_type)
		return pv_error("'%s': sample %zu has %zu values, the profile has %zu sample types",
				d->name, which, nvalues, pb->n_sample_type);
	if (pv_add_stack_capped(p, &ps, d->stack, (uint32_t)nlocs, cut) < 0)
		return -1;
	if (check_values(d, which, ps.values, false) < 0)
		return -1;
	return pv_add_sample_merged(p, &ps);
}

struct pv_profile *pprof_read(const unsigned char *buf, size_t len, const char *name,
			      bool gunzipped)
{
	struct wire w = { buf, len, name, gunzipped };
	struct decoder d = { .name = name, .buf = buf };
	Perftools__Profiles__Profile *pb = NULL;
	struct pv_profile *p = NULL;
	size_t rest_len = 0;
	unsigned char *rest = NULL;
	bool labels;

	if (check_msg(&w, 0, len, M_PROFILE, 0) < 0)
		return NULL;
	if (split(&d, &w, false, &rest, &rest_len, &labels) < 0)
		goto fail;
	if (labels) {
		free(rest);
		d.nruns = d.nstrings = 0;
		if (split(&d, &w, true, &rest, &rest_len, &labels) < 0)
			goto fail;
	}
	pb = perftools__profiles__profile__unpack(&pb_allocator, rest_len, rest);
	free(rest);
	rest = NULL;
	if (!pb) {
		if (!pv_budget_refused())
			pv_error("'%s': profile.proto cannot be decoded (a field holds a value of the wrong kind)",
				 name);
		goto fail;
	}
	d.pb = pb;
	d.p = p = pv_profile_new();
	if (!p)
		goto fail;
	if (decode_header(&d) < 0 || decode_mappings(&d) < 0 || decode_functions(&d) < 0 ||
	    decode_locations(&d) < 0 || decode_samples(&d) < 0 ||
	    (!labels && decode_samples_wire(&d, &w) < 0))
		goto fail;
	pv_flag_kernel_samples(p);
	if (d.lines_cut)
		pv_warn("'%s': %zu location%s more than %d inlined lines: cut to %s innermost %d",
			name, d.lines_cut, d.lines_cut == 1 ? " has" : "s have", PV_MAX_DEPTH,
			d.lines_cut == 1 ? "its" : "their", PV_MAX_DEPTH);
	goto out;
fail:
	pv_profile_free(p);
	p = NULL;
out:
	free(rest);
	free(d.strs);
	free(d.maps);
	free(d.fns);
	free(d.locs);
	free(d.loc_index);
	free(d.fn_index);
	free(d.map_index);
	free(d.stack);
	free(d.lines);
	perftools__profiles__profile__free_unpacked(pb, &pb_allocator);
	return p;
}
