/* dlloop.c - loads PLUGIN with dlopen and closes it again, over and over,
 * for SECONDS of CPU time: most of its time is the dynamic loader's, and
 * under collect-timer the collector records the mappings of every load. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;
	struct timespec ts;
	long loads = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: dlloop PLUGIN [SECONDS]\n");
		return 2;
	}
	do {
		void *h = dlopen(argv[1], RTLD_NOW);
		if (!h) {
			fprintf(stderr, "dlloop: %s\n", dlerror());
			return 1;
		}
		dlclose(h);
		loads++;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < seconds);
	printf("%ld\n", loads);
	return 0;
}
