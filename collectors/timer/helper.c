/* helper.c - the library's own threads (helper.h): started past an
 * interposed pthread_create, with every signal blocked so that the
 * program's signals and the profiler's go to the program's threads
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <time.h>

#include "helper.h"

int threads_start_helper(pthread_t *thread, void *(*fn)(void *), const char *name, size_t stack,
			 int detached)
{
	int (*create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *) =
		(int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))
			dlsym(RTLD_NEXT, "pthread_create");
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	if (create == NULL || pthread_attr_init(&attr) != 0)
		return -1;
	if (stack != 0)
		pthread_attr_setstacksize(&attr, stack);
	if (detached)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* It inherits a mask with every signal blocked: the program's signals
	 * and ours go to the program's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = create(thread, &attr, fn, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		return -1;
	pthread_setname_np(*thread, name);
	return 0;
}

uint64_t threads_helper_cpu_ns(pthread_t thread, int started)
{
	struct timespec ts;
	clockid_t clock;

	if (!started || pthread_getcpuclockid(thread, &clock) != 0 || clock_gettime(clock, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
