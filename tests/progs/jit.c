/* jit.c - runs machine code it wrote into an anonymous executable mapping,
 * as a JIT compiler does: most of its CPU time is in that code.
 *
 * usage: jit [SECONDS [frames|alloc]]: with "frames" the code sets up a
 * frame pointer, as the code of most JIT compilers does; with "alloc" the
 * code (with a frame pointer) calls allocate(), which takes 64 KiB from
 * malloc and gives it back, so that an allocation's stack holds it. */
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

static volatile unsigned char *kept;

static void allocate(void)
{
	unsigned char *p = malloc(65536);

	if (p != NULL) {
		p[0] = 1;
		kept = p;
		free(p);
	}
}

int main(int argc, char **argv)
{
	/* mov ecx, 2000000; 1: dec ecx; jnz 1b; ret */
	static const unsigned char code[] = { 0xb9, 0x80, 0x84, 0x1e, 0x00, 0xff, 0xc9, 0x75, 0xfc, 0xc3 };
	/* push rbp; mov rbp, rsp; the same; pop rbp; ret */
	static const unsigned char framed[] = { 0x55, 0x48, 0x89, 0xe5, 0xb9, 0x80, 0x84, 0x1e, 0x00,
						0xff, 0xc9, 0x75, 0xfc, 0x5d, 0xc3 };
	/* push rbp; mov rbp, rsp; movabs rax, allocate; call rax; pop rbp; ret */
	unsigned char calls[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0,
				  0xff, 0xd0, 0x5d, 0xc3 };
	void (*target)(void) = allocate;
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	int frames = argc > 2 && strcmp(argv[2], "frames") == 0;
	int alloc = argc > 2 && strcmp(argv[2], "alloc") == 0;
	void *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(calls + 6, &target, sizeof(target));
	if (alloc)
		memcpy(mem, calls, sizeof calls);
	else if (frames)
		memcpy(mem, framed, sizeof framed);
	else
		memcpy(mem, code, sizeof code);
	void (*fn)(void) = (void (*)(void))mem;
	while (cpu_seconds() < seconds)
		fn();
	puts("jit: done");
	return 0;
}
