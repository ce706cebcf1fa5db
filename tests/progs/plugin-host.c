/* plugin-host.c - runs for a while, then loads PLUGIN with dlopen and
 * spends its CPU time in it: main > run_plugin > plugin_entry > plugin_hot. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) uint64_t run_plugin(uint64_t (*entry)(uint64_t), double seconds)
{
	uint64_t x = 1;
	while (cpu_seconds() < seconds)
		x = entry(x);
	return x;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: plugin-host PLUGIN [SECONDS]\n");
		return 2;
	}
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "plugin-host: %s\n", dlerror());
		return 1;
	}
	uint64_t (*entry)(uint64_t) = (uint64_t (*)(uint64_t))dlsym(h, "plugin_entry");
	if (!entry)
		return 1;
	printf("%llu\n", (unsigned long long)(run_plugin(entry, seconds) & 1));
	dlclose(h);
	return 0;
}
