/* attachlock.c - a process whose allocator's lock is taken and given back
 * all the time: a thread that allocates and frees blocks too large for the
 * thread cache (each through its arena's lock) without end, while the
 * main thread waits for it.  Prints "ready" once it runs.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *hammer(void *unused)
{
	unsigned r = 12345;

	(void)unused;
	for (;;) {
		void *p;

		r = r * 1103515245u + 12345u;
		p = malloc(2048 + (r >> 16) % 30000);
		if (p == NULL)
			abort();
		*(volatile char *)p = 1;
		free(p);
	}
	return NULL;
}

int main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, hammer, NULL);
	printf("ready\n");
	fflush(stdout);
	pthread_join(t, NULL);
	return 0;
}
