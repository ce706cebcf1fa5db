/* pylayout.c - where the offsets into a CPython's structures come from
 * when they are not read from its debug information (see pylayout.h)
 *
 * The tables are facts of each version's headers (offsetof over the
 * structures, the same for 3.11.2 and 3.11.7); 3.13 publishes its own
 * offsets at the start of _PyRuntime (_Py_DebugOffsets).  Also the
 * version of the interpreter and where its evaluation loop is.
 */
#include "pylayout.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

static const struct py_layout py_layouts[] = {
	{
		.version = 0x0309,
		.runtime_interpreters_head = 32, .interp_threads_head = 8, .interp_next = 0,
		.tstate_next = 8, .tstate_thread_id = 176, .tstate_frame = 24,
		.frame_code = 32, .frame_instr = 104, .frame_previous = 24, .frame_owner = 104,
		.code_qualname = 112, /* co_name: 3.9 has no co_qualname */
		.code_filename = 104, .code_firstlineno = 40, .code_linetable = 120,
		.bytes_size = 16, .bytes_sval = 32,
		.unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 48,
		.unicode_utf8_length = 48, .unicode_utf8 = 56, .unicode_compact_data = 72,
		.object_type = 8, .lasti = 2,
	},
	{
		.version = 0x030a,
		.runtime_interpreters_head = 32, .interp_threads_head = 8, .interp_next = 0,
		.tstate_next = 8, .tstate_thread_id = 176, .tstate_frame = 24,
		.frame_code = 32, .frame_instr = 96, .frame_previous = 24, .frame_owner = 96,
		.code_qualname = 112, /* co_name */
		.code_filename = 104, .code_firstlineno = 40, .code_linetable = 120,
		.bytes_size = 16, .bytes_sval = 32,
		.unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 48,
		.unicode_utf8_length = 48, .unicode_utf8 = 56, .unicode_compact_data = 72,
		.object_type = 8, .lasti = 1,
	},
	{
		.version = 0x030b,
		.runtime_interpreters_head = 40, .interp_threads_head = 16, .interp_next = 0,
		.tstate_next = 8, .tstate_thread_id = 152, .tstate_frame = 56,
		.cframe_current_frame = 8,
		.frame_code = 32, .frame_instr = 56, .frame_previous = 48, .frame_owner = 68,
		.owner_cstack = 0,
		.code_qualname = 128, .code_filename = 112, .code_firstlineno = 72,
		.code_linetable = 136, .code_adaptive = 184,
		.bytes_size = 16, .bytes_sval = 32,
		.unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 48,
		.unicode_utf8_length = 48, .unicode_utf8 = 56, .unicode_compact_data = 72,
		.object_type = 8,
	},
	{
		.version = 0x030c,
		.runtime_interpreters_head = 40, .interp_threads_head = 72, .interp_next = 0,
		.tstate_next = 8, .tstate_thread_id = 136, .tstate_frame = 56,
		.cframe_current_frame = 0,
		.frame_code = 0, .frame_instr = 56, .frame_previous = 8, .frame_owner = 70,
		.owner_cstack = 3,
		.code_qualname = 128, .code_filename = 112, .code_firstlineno = 68,
		.code_linetable = 136, .code_adaptive = 192,
		.bytes_size = 16, .bytes_sval = 32,
		.unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 40,
		.unicode_utf8_length = 40, .unicode_utf8 = 48, .unicode_compact_data = 56,
		.object_type = 8,
	},
	{
		/* checked against, and mostly taken from, _Py_DebugOffsets */
		.version = 0x030d,
		.runtime_interpreters_head = 632, .interp_threads_head = 7344, .interp_next = 7264,
		.tstate_next = 8, .tstate_thread_id = 152, .tstate_frame = 72,
		.cframe_current_frame = 0,
		.frame_code = 0, .frame_instr = 56, .frame_previous = 8, .frame_owner = 70,
		.owner_cstack = 3,
		.code_qualname = 128, .code_filename = 112, .code_firstlineno = 68,
		.code_linetable = 136, .code_adaptive = 200,
		.bytes_size = 16, .bytes_sval = 32,
		.unicode_length = 16, .unicode_state = 32, .unicode_ascii_data = 40,
		.unicode_utf8_length = 40, .unicode_utf8 = 48, .unicode_compact_data = 56,
		.object_type = 8,
	},
};

const struct py_layout *pylayout_table(uint32_t version)
{
	for (size_t i = 0; i < sizeof(py_layouts) / sizeof(py_layouts[0]); i++)
		if (py_layouts[i].version == version)
			return &py_layouts[i];
	return NULL;
}

/* 3.13: the offsets the interpreter publishes (_Py_DebugOffsets at the
 * start of _PyRuntime, read as words: their order is the header's), and
 * those of the compact str that follow from them (utf8_length, utf8 and
 * the text after the ASCII header, from 3.12 on).  Returns -1 when there
 * are none, -2 when they are of another version or of a free-threaded
 * build (refused). */
int pylayout_published(struct py_layout *l, uintptr_t runtime,
		       int (*read)(void *dst, uintptr_t addr, size_t len))
{
	uint64_t w[71];

	if (l->version < 0x030d || read(w, runtime, sizeof(w)) != 0 || memcmp(w, "xdebugpy", 8) != 0)
		return -1;
	if ((w[1] >> 16) != l->version || w[2] != 0)
		return -2;
	l->owner_cstack = 3;
	l->cframe_current_frame = 0;
	l->runtime_interpreters_head = (uint32_t)w[5];
	l->interp_next = (uint32_t)w[8];
	l->interp_threads_head = (uint32_t)w[9];
	l->tstate_next = (uint32_t)w[21];
	l->tstate_frame = (uint32_t)w[23];
	l->tstate_thread_id = (uint32_t)w[24];
	l->frame_previous = (uint32_t)w[29];
	l->frame_code = (uint32_t)w[30];
	l->frame_instr = (uint32_t)w[31];
	l->frame_owner = (uint32_t)w[33];
	l->code_filename = (uint32_t)w[35];
	l->code_qualname = (uint32_t)w[37];
	l->code_linetable = (uint32_t)w[38];
	l->code_firstlineno = (uint32_t)w[39];
	l->code_adaptive = (uint32_t)w[43];
	l->object_type = (uint32_t)w[45];
	l->bytes_size = (uint32_t)w[65];
	l->bytes_sval = (uint32_t)w[66];
	l->unicode_state = (uint32_t)w[68];
	l->unicode_length = (uint32_t)w[69];
	l->unicode_ascii_data = (uint32_t)w[70];
	l->unicode_utf8_length = l->unicode_ascii_data;
	l->unicode_utf8 = l->unicode_ascii_data + 8;
	l->unicode_compact_data = l->unicode_ascii_data + 16;
	return 0;
}

/* The version of the interpreter of lib, major << 8 | minor (0: not
 * known), and its third number + 1 in *micro (0: not known). */
uint32_t pylayout_version(void *lib, uint32_t *micro)
{
	const unsigned long *version = dlsym(lib, "Py_Version");
	const char *(*get)(void);
	unsigned major = 0, minor = 0, third = 0;
	const char *s;

	*micro = 0;
	if (version != NULL) {
		*micro = (uint32_t)((*version >> 8) & 0xff) + 1;
		return (uint32_t)(*version >> 16);
	}
	/* before 3.11: the version string, a static one formatted from
	 * constants (it is safe before the interpreter starts) */
	get = (const char *(*)(void))dlsym(lib, "Py_GetVersion");
	s = get != NULL ? get() : NULL;
	if (s == NULL || sscanf(s, "%u.%u", &major, &minor) != 2 || major > 255 || minor > 255)
		return 0;
	if (sscanf(s, "%*u.%*u.%u", &third) == 1 && third < 255)
		*micro = third + 1;
	return major << 8 | minor;
}

/* The address range of the evaluation loop's function. */
void pylayout_eval_range(void *lib, uintptr_t *lo, uintptr_t *hi)
{
	void *f = dlsym(lib, "_PyEval_EvalFrameDefault");
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (f != NULL && dladdr1(f, &info, (void **)&sym, RTLD_DL_SYMENT) != 0 && sym != NULL) {
		*lo = (uintptr_t)f;
		*hi = (uintptr_t)f + (sym->st_size ? sym->st_size : 1);
	}
}
