/* helper.c - the library's own threads (helper.h): started past an
 * interposed pthread_create, with every signal blocked so that the
 * program's signals and the profiler's go to the program's threads
 *
 * Each names itself (PR_SET_NAME) as it starts.  pthread_setname_np on
 * another thread writes /proc/self/task/TID/comm, and a process that did
 * so costs the one that reaps it some 0.4 to 1.4 ms of system time
 * (release_task's walk of the process's /proc dentries), measured here
 * on a process with one such thread; named from inside, nothing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "helper.h"

/* What a helper starts with: its function and its name, in a slot of its
 * own until it has read them (no allocation: the heap library samples
 * the allocator's callers). */
#define HELPER_SLOTS 16

static struct helper_start {
	_Atomic int busy;
	void *(*fn)(void *);
	char name[16];
} helper_slots[HELPER_SLOTS];

static void *helper_main(void *p)
{
	struct helper_start *slot = p;
	void *(*fn)(void *) = slot->fn;
	char name[16];

	memcpy(name, slot->name, sizeof(name));
	atomic_store(&slot->busy, 0);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	return fn(NULL);
}

typedef int (*helper_create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

/* libc's pthread_create, looked up once (a lookup through every loaded
 * object's symbols each time cost a few microseconds of every start). */
static helper_create_fn helper_real_create(void)
{
	static _Atomic(helper_create_fn) real;
	helper_create_fn fn = atomic_load(&real);

	if (fn == NULL) {
		fn = (helper_create_fn)dlsym(RTLD_NEXT, "pthread_create");
		atomic_store(&real, fn);
	}
	return fn;
}

int threads_start_helper(pthread_t *thread, void *(*fn)(void *), const char *name, size_t stack,
			 int detached)
{
	helper_create_fn create = helper_real_create();
	struct helper_start *st = NULL;
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	for (int i = 0; i < HELPER_SLOTS && st == NULL; i++)
		if (!atomic_exchange(&helper_slots[i].busy, 1))
			st = &helper_slots[i];
	if (st == NULL) {
		errno = EBUSY; /* every slot taken by a start not yet begun */
		return -1;
	}
	if (create == NULL || (rc = pthread_attr_init(&attr)) != 0) {
		atomic_store(&st->busy, 0);
		errno = create == NULL ? ENOSYS : rc;
		return -1;
	}
	st->fn = fn;
	snprintf(st->name, sizeof(st->name), "%s", name);
	if (stack != 0)
		pthread_attr_setstacksize(&attr, stack);
	if (detached)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* It inherits a mask with every signal blocked: the program's signals
	 * and ours go to the program's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = create(thread, &attr, helper_main, st);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		atomic_store(&st->busy, 0);
		errno = rc;
		return -1;
	}
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
