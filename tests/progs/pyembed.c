/* pyembed.c - a C program that embeds a CPython it loads itself: dlopen's
 * the libpython named on its command line (nothing of Python is in the
 * process before), starts the interpreter and runs Python code that spends
 * its time in one named function, embedded_spin, for SECONDS of CPU
 *
 * usage: pyembed LIBPYTHON SECONDS
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	char code[512];
	void *lib;
	void (*init)(void);
	int (*run)(const char *);

	if (argc != 3) {
		fprintf(stderr, "usage: pyembed LIBPYTHON SECONDS\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		fprintf(stderr, "pyembed: %s\n", dlerror());
		return 1;
	}
	init = (void (*)(void))dlsym(lib, "Py_Initialize");
	run = (int (*)(const char *))dlsym(lib, "PyRun_SimpleString");
	if (init == NULL || run == NULL) {
		fprintf(stderr, "pyembed: %s has no Py_Initialize or PyRun_SimpleString\n", argv[1]);
		return 1;
	}
	init();
	snprintf(code, sizeof code,
		 "import time\n"
		 "def embedded_spin(seconds):\n"
		 "    end = time.thread_time() + seconds\n"
		 "    n = 0\n"
		 "    while time.thread_time() < end:\n"
		 "        for i in range(1000):\n"
		 "            n += i * i\n"
		 "    return n\n"
		 "embedded_spin(%g)\n",
		 atof(argv[2]));
	return run(code) == 0 ? 0 : 1;
}
