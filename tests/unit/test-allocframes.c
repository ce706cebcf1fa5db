/* test-allocframes.c - the allocator's frames trimmed from heap stacks:
 * which names are the allocator's (every form of operator new, mangled or
 * not; not the program's own wrappers), and what trimming leaves of a
 * stack: the caller as the leaf, an inlined location's other lines, a
 * stack that is the allocator's throughout whole. */
#include "allocframes.h"
#include "check.h"
#include "error.h"
#include "profile.h"

#include <string.h>

static void quiet_sink(enum pv_level level, const char *msg)
{
	(void)level;
	(void)msg;
}

static void test_names(void)
{
	static const char *const yes[] = {
		"malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign", "aligned_alloc",
		"memalign", "valloc", "pvalloc", "__libc_malloc", "_int_malloc", "__strdup", "strndup",
		"__GI___strdup",
		"operator new(unsigned long)", "operator new[](unsigned long)",
		"operator new(unsigned long, std::nothrow_t const&)",
		"operator new(unsigned long, std::align_val_t)", "operator new", "je_malloc_default",
		"mallocx", "rallocx", "tc_malloc", "tc_newarray_nothrow", "tcmalloc::allocate_full_malloc_oom(unsigned long)",
		"std::__new_allocator<int>::allocate(unsigned long, void const*)",
		"__gnu_cxx::new_allocator<char>::allocate(unsigned long, void const*)",
	};
	static const char *const no[] = {
		"main", "xmalloc", "my_malloc", "mallocate", "malloc_stats", "std::vector<int>::push_back(int const&)",
		"operator()", "Foo::operator()(int)", "new_thing", "__libc_start_main", "", "strdupa_like",
		"__GI_memcpy",
	};
	static const char *const mangled[] = {
		"_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamSt11align_val_t", "_ZnwmSt11align_val_tRKSt9nothrow_t", "_Znwj",
	};

	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		if (!pv_is_alloc_function(yes[i], NULL))
			CHECK_STR(yes[i], "an allocator function");
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		if (pv_is_alloc_function(no[i], NULL))
			CHECK_STR(no[i], "not an allocator function");
	/* by the name in the binary alone: --no-demangle, or a name that
	 * demangled into something else */
	for (size_t i = 0; i < sizeof mangled / sizeof mangled[0]; i++)
		CHECK(pv_is_alloc_function(mangled[i], mangled[i]));
	CHECK(!pv_is_alloc_function("_ZN3Foo3newEv", "_ZN3Foo3newEv"));
}

/* A heap profile with functions F[i], locations of one line each but the
 * last, where calloc is inlined into caller_c. */
enum { MAIN, CALLER, NEW, MALLOC, CALLER_C, CALLOC, NFN };
static const char *const fnames[NFN] = {
	"main", "caller", "operator new(unsigned long)", "malloc", "caller_c", "calloc",
};

static uint32_t stack_of(struct pv_profile *p, const uint32_t *locs, uint32_t n)
{
	struct pv_sample s = { .loc_off = pv_add_stack(p, locs, n), .nlocs = n, .thread = PV_NONE };

	s.values[0] = 1;
	s.values[1] = 4096;
	return pv_add_sample(p, &s) < 0 ? PV_NONE : (uint32_t)p->nsamples - 1;
}

static const char *leaf_name(const struct pv_profile *p, uint32_t si)
{
	const struct pv_sample *s = &p->samples[si];
	const struct pv_location *l = &p->locations[p->stack_locs[s->loc_off]];

	return pv_str(p, p->functions[p->lines[l->line_off].function].name);
}

static void test_trim(void)
{
	struct pv_profile *p = pv_profile_new();
	uint32_t fn[NFN], loc[NFN], file, inl, s1, s2, s3;

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK(!pv_is_heap_profile(p));
	pv_add_value_type(p, "inuse_objects", "count");
	pv_add_value_type(p, "inuse_space", "bytes");
	CHECK(pv_is_heap_profile(p));
	file = pv_intern_str(p, "a.c");
	for (int i = 0; i < NFN; i++) {
		uint32_t n = pv_intern_str(p, fnames[i]);
		struct pv_line l;

		fn[i] = pv_get_function(p, n, n, file, i);
		loc[i] = pv_get_location(p, 0x1000 + 0x10 * (uint64_t)i, PV_NONE);
		l = (struct pv_line){ fn[i], i + 1 };
		pv_set_lines(p, loc[i], &l, 1);
	}
	/* calloc inlined into caller_c: one location, calloc's line inside */
	inl = pv_get_location(p, 0x2000, PV_NONE);
	pv_set_lines(p, inl, (struct pv_line[]){ { fn[CALLOC], 7 }, { fn[CALLER_C], 8 } }, 2);
	/* leaf first */
	s1 = stack_of(p, (uint32_t[]){ loc[MALLOC], loc[NEW], loc[CALLER], loc[MAIN] }, 4);
	s2 = stack_of(p, (uint32_t[]){ inl, loc[MAIN] }, 2);
	s3 = stack_of(p, (uint32_t[]){ loc[MALLOC], loc[NEW] }, 2);
	CHECK_EQ(pv_trim_alloc_frames(p), 2);
	CHECK_EQ(p->samples[s1].nlocs, 2);
	CHECK_STR(leaf_name(p, s1), "caller");
	CHECK_EQ(p->samples[s2].nlocs, 2);
	CHECK_STR(leaf_name(p, s2), "caller_c");
	CHECK_EQ(p->locations[inl].nlines, 1);
	/* the allocator's throughout: left whole */
	CHECK_EQ(p->samples[s3].nlocs, 2);
	CHECK_STR(leaf_name(p, s3), "malloc");
	pv_profile_free(p);
}

int main(void)
{
	pv_error_set_sink(quiet_sink);
	test_names();
	test_trim();
	return check_done("test-allocframes");
}
