/* statics-host.c - calls statics_entry (statics.c, a shared library it
 * links) for SECONDS of CPU time (default 1), looking at the clock only
 * every few hundred calls: nearly all its time is in the library. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

uint64_t statics_entry(uint64_t x);

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct timespec ts;
	uint64_t x = 1;

	do {
		for (int i = 0; i < 300; i++)
			x = statics_entry(x);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < seconds);
	printf("%d\n", (int)(x & 1));
	return 0;
}
