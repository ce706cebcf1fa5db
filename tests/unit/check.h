/* check.h - tiny assertion helpers for the unit tests */
#ifndef PROFVIEW_CHECK_H
#define PROFVIEW_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                  \
	do {                                                                         \
		check_count++;                                                       \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
				#cond);                                              \
			check_failures++;                                            \
		}                                                                    \
	} while (0)

#define CHECK_EQ(a, b)                                                               \
	do {                                                                         \
		long long va_ = (long long)(a), vb_ = (long long)(b);                \
		check_count++;                                                       \
		if (va_ != vb_) {                                                    \
			fprintf(stderr, "%s:%d: check failed: %s == %s (%lld != %lld)\n", \
				__FILE__, __LINE__, #a, #b, va_, vb_);               \
			check_failures++;                                            \
		}                                                                    \
	} while (0)

#define CHECK_STR(a, b)                                                              \
	do {                                                                         \
		const char *sa_ = (a), *sb_ = (b);                                   \
		check_count++;                                                       \
		if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                         \
			fprintf(stderr, "%s:%d: check failed: %s == %s (\"%s\" != \"%s\")\n", \
				__FILE__, __LINE__, #a, #b, sa_ ? sa_ : "(null)",     \
				sb_ ? sb_ : "(null)");                               \
			check_failures++;                                            \
		}                                                                    \
	} while (0)

#define CHECK_CONTAINS(hay, needle)                                                  \
	do {                                                                         \
		const char *h_ = (hay), *n_ = (needle);                              \
		check_count++;                                                       \
		if (!h_ || !strstr(h_, n_)) {                                        \
			fprintf(stderr, "%s:%d: check failed: \"%s\" not found in:\n%s\n", \
				__FILE__, __LINE__, n_, h_ ? h_ : "(null)");          \
			check_failures++;                                            \
		}                                                                    \
	} while (0)

/* The exit status of a unit test: a test that ran no check failed too
 * (a main that forgot to call its parts checks nothing). */
static inline int check_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
	if (check_count == 0)
		fprintf(stderr, "%s: no check ran\n", name);
	return check_failures || check_count == 0 ? 1 : 0;
}

#endif
