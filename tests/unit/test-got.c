/* test-got.c - the allocator's calls redirected through the GOT and put
 * back (collectors/heap/got.c), in this process: linked with -z now, so
 * that its entries are in pages made read-only after relocation. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "got.h"

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static volatile int mallocs, frees;

static void *count_malloc(size_t n)
{
	mallocs++;
	return real_malloc(n);
}

static void count_free(void *p)
{
	frees++;
	real_free(p);
}

/* malloc and free called through this program's GOT */
__attribute__((noinline)) static void alloc_some(int n)
{
	for (int i = 0; i < n; i++) {
		void *volatile p = malloc(100 + (size_t)i);

		free(p);
	}
}

/* The permissions of the mapping that holds addr ("r--p"), in perms. */
static void perms_of(const void *addr, char *perms)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];

	strcpy(perms, "none");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo, hi;
		char p[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, p) == 3 && (uintptr_t)addr >= lo &&
		    (uintptr_t)addr < hi)
			strcpy(perms, p);
	}
	if (f != NULL)
		fclose(f);
}

int main(void)
{
	const struct got_hook hooks[] = {
		{ "malloc", (void *)count_malloc },
		{ "free", (void *)count_free },
	};
	struct got_state st = { 0 };
	void *(*volatile taken)(size_t);
	char during[8], after[8];
	void **first;
	int n;

	real_malloc = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "malloc");
	real_free = (void (*)(void *))dlsym(RTLD_DEFAULT, "free");
	CHECK(real_malloc != NULL && real_free != NULL);
	taken = malloc;
	CHECK(taken == real_malloc);

	n = got_patch(&st, hooks, 2, NULL);
	CHECK(n > 0);
	/* every entry held the real function (bound at start: -z now) */
	for (size_t k = 0; k < st.n; k++) {
		CHECK(st.v[k].was == (void *)real_malloc || st.v[k].was == (void *)real_free);
		CHECK(*st.v[k].where == st.v[k].to);
	}
	perms_of(st.v[0].where, during);
	mallocs = frees = 0;
	alloc_some(10);
	CHECK_EQ(mallocs, 10);
	CHECK_EQ(frees, 10);
	/* the symbol is the C library's still; a pointer taken now, ours */
	CHECK(dlsym(RTLD_DEFAULT, "malloc") == (void *)real_malloc);
	taken = malloc;
	CHECK(taken == count_malloc);
	/* a second pass finds nothing new */
	CHECK_EQ(got_patch(&st, hooks, 2, NULL), 0);

	CHECK_EQ((int)got_restore(&st), 0);
	CHECK(st.n == 0 && st.v == NULL);
	mallocs = frees = 0;
	alloc_some(10);
	CHECK_EQ(mallocs, 0);
	CHECK_EQ(frees, 0);
	taken = malloc;
	CHECK(taken == real_malloc);

	/* this program skipped: its calls are not redirected */
	n = got_patch(&st, hooks, 2, (const void *)main);
	CHECK(n >= 0);
	for (size_t k = 0; k < st.n; k++)
		CHECK(st.v[k].where != NULL);
	mallocs = frees = 0;
	alloc_some(5);
	CHECK_EQ(mallocs, 0);
	CHECK_EQ((int)got_restore(&st), 0);

	/* the pages the loader made read-only are read-only while patched
	 * and after */
	n = got_patch(&st, hooks, 2, NULL);
	CHECK(n > 0);
	first = st.v[0].where;
	CHECK_EQ((int)got_restore(&st), 0);
	perms_of(first, after);
	CHECK_STR(during, "r--p");
	CHECK_STR(after, "r--p");
	printf("got: %d entries, the first in a mapping %s\n", n, during);
	return check_done("got");
}
