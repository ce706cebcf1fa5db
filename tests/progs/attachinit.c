/* attachinit.c - a thread that stays inside the dynamic loader, with its
 * lock held, below code that has no call frame information: the program
 * (built as is) prints "ready" and dlopens the library its argument names
 * (this file built with -shared -fPIC -DATTACHINIT_LIB), whose
 * constructor spins for ever in attachinit_spin, written in assembly
 * without CFI.  An unwinder stops at the first frame; what is above it
 * (the loader's frames) can only be seen by the words of the stack.
 */
#ifdef ATTACHINIT_LIB
__asm__(".text\n"
	".globl attachinit_spin\n"
	".type attachinit_spin, @function\n"
	"attachinit_spin:\n"
	"1:\tpause\n"
	"\tjmp 1b\n"
	".size attachinit_spin, .-attachinit_spin\n");

void attachinit_spin(void);

__attribute__((constructor)) static void attachinit_init(void)
{
	attachinit_spin();
}
#else
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: attachinit LIBRARY\n");
		return 2;
	}
	printf("ready\n");
	fflush(stdout);
	dlopen(argv[1], RTLD_NOW);
	return 1;
}
#endif
