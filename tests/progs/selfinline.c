/* selfinline.c - a function that gcc -O2 splits and inlines back into
 * itself, the shape of glibc's system call wrappers: a fast path, and a
 * slower one around the call (here pread, of FILE, in a loop for SECONDS
 * of CPU time).  Its debug information then says that pv_pread is inlined
 * into pv_pread, "called" from its own declaration. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile int single;

__attribute__((noinline)) int enter_slow(void)
{
	__asm__ volatile("" ::: "memory");
	return errno;
}

__attribute__((noinline)) void leave_slow(int old)
{
	__asm__ volatile("" ::"r"(old) : "memory");
}

ssize_t pv_pread(int fd, void *buf, size_t n, off_t off)
{
	if (single)
		return pread(fd, buf, n, off);
	int old = enter_slow();
	ssize_t r = pread(fd, buf, n, off);
	leave_slow(old);
	return r;
}

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	double seconds = argc > 2 ? atof(argv[2]) : 1.0;
	struct timespec ts;
	long total = 0;
	int fd;

	if (argc < 2 || (fd = open(argv[1], O_RDONLY)) < 0) {
		fprintf(stderr, "usage: selfinline FILE [SECONDS]\n");
		return 2;
	}
	do {
		for (int i = 0; i < 64; i++)
			total += pv_pread(fd, buf, sizeof buf, (off_t)(i % 16) << 16);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	} while (ts.tv_sec + ts.tv_nsec / 1e9 < seconds);
	printf("%ld\n", total);
	return 0;
}
