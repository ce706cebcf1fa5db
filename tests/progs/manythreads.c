/* manythreads.c - a process of many threads that wait, for collect-gdb's
 * tests: attaching to it stops every one of them.
 *
 * usage: manythreads [THREADS [SECONDS]]   (default: 200 threads, until
 * killed)
 *
 * Each thread waits in pause(); the main thread sleeps.  "ready" on
 * stdout once all threads are running.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *waiter(void *arg)
{
	for (;;)
		pause();
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	double secs = argc > 2 ? atof(argv[2]) : 0;
	pthread_attr_t attr;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < n; i++) {
		pthread_t t;
		if (pthread_create(&t, &attr, waiter, NULL) != 0) {
			fprintf(stderr, "manythreads: cannot start thread %d\n", i + 1);
			return 1;
		}
	}
	printf("ready\n");
	fflush(stdout);
	if (secs > 0)
		usleep((useconds_t)(secs * 1e6));
	else
		for (;;)
			pause();
	return 0;
}
