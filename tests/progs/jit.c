/* jit.c - runs machine code it wrote into an anonymous executable mapping,
 * as a JIT compiler does: most of its CPU time is in that code.
 *
 * usage: jit [SECONDS [frames]]: with "frames" the code sets up a frame
 * pointer, as the code of most JIT compilers does. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	/* mov ecx, 2000000; 1: dec ecx; jnz 1b; ret */
	static const unsigned char code[] = { 0xb9, 0x80, 0x84, 0x1e, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3 };
	/* push rbp; mov rbp, rsp; the same; pop rbp; ret */
	static const unsigned char framed[] = { 0x55, 0x48, 0x89, 0xe5, 0xb9, 0x80, 0x84, 0x1e, 0x00,
						0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3 };
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	int frames = argc > 2 && strcmp(argv[2], "frames") == 0;
	void *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (frames)
		memcpy(mem, framed, sizeof framed);
	else
		memcpy(mem, code, sizeof code);
	void (*fn)(void) = (void (*)(void))mem;
	while (cpu_seconds() < seconds)
		fn();
	puts("jit: done");
	return 0;
}
