/* accounted.c - processes that end in every way, and programs run where
 * the collector cannot follow.
 *
 *   accounted spin S              use S seconds of CPU (the process's clock)
 *   accounted exec PROG S         a child that runs PROG S (execl)
 *   accounted bareexec PROG S     a child that runs PROG S with an empty
 *                                 environment
 *   accounted vforkexec PROG S    the same as exec, through vfork
 *   accounted spawn PROG S        the same through posix_spawn (whose exec
 *                                 is inside the C library)
 *   accounted end HOW N           N children that use 0.1 s of CPU and end by
 *                                 HOW: _exit, exit, kill (SIGKILL), segv
 *   accounted itimer              arms ITIMER_PROF without a handler
 *   accounted raise SIG           raises signal SIG, its action the default
 *   accounted chroot DIR S        changes its root to DIR, then uses S seconds
 *                                 of CPU 60 KiB down its stack (so that stack
 *                                 copies are large)
 *   accounted syschroot DIR S     the same with the system call itself, not
 *                                 libc's chroot
 *
 * The parent uses 0.2 s of CPU first, waits for its children and prints
 * each one's wait status.
 */
#include <spawn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile double sink;

/* Until the process has used s seconds of CPU in all. */
static void spin_to(double s)
{
	while (cpu_now() < s)
		for (int i = 0; i < 100000; i++)
			sink += i * 0.5;
}

static void child_end(const char *how)
{
	spin_to(cpu_now() + 0.1);
	if (strcmp(how, "_exit") == 0)
		_exit(0);
	if (strcmp(how, "exit") == 0)
		exit(0);
	if (strcmp(how, "kill") == 0)
		raise(SIGKILL);
	if (strcmp(how, "segv") == 0) {
		volatile int *volatile nowhere = NULL;

		*nowhere = 1;
	}
	_exit(3);
}

/* Spins to s 60 KiB down the stack. */
static void spin_deep(double s)
{
	volatile char pad[60 << 10];

	pad[0] = 1;
	spin_to(s);
	pad[sizeof(pad) - 1] = pad[0];
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int n = 1, status;
	pid_t pid;

	if (strcmp(mode, "spin") == 0 && argc > 2) {
		spin_to(atof(argv[2]));
		return 0;
	}
	if (strcmp(mode, "itimer") == 0) {
		struct itimerval it = { { 0, 10000 }, { 0, 10000 } };

		setitimer(ITIMER_PROF, &it, NULL);
		spin_to(cpu_now() + 2);
		puts("survived ITIMER_PROF");
		return 0;
	}
	if ((strcmp(mode, "chroot") == 0 || strcmp(mode, "syschroot") == 0) && argc > 3) {
		int rc = mode[0] == 's' ? (int)syscall(SYS_chroot, argv[2]) : chroot(argv[2]);

		if (rc != 0 || chdir("/") != 0) {
			perror("chroot");
			return 1;
		}
		spin_deep(atof(argv[3]));
		return 0;
	}
	if (strcmp(mode, "raise") == 0 && argc > 2) {
		spin_to(0.1);
		raise(atoi(argv[2]));
		puts("survived the signal");
		return 0;
	}
	if (strcmp(mode, "end") == 0 && argc > 3)
		n = atoi(argv[3]);
	spin_to(0.2);
	if (strcmp(mode, "spawn") == 0 && argc > 3) {
		char *args[] = { argv[2], "spin", argv[3], NULL };
		int rc = posix_spawn(&pid, argv[2], NULL, NULL, args, environ);

		if (rc != 0) {
			fprintf(stderr, "posix_spawn: %s\n", strerror(rc));
			return 1;
		}
		n = 0;
	}
	for (int i = 0; i < n; i++) {
		char *empty[] = { NULL };

		pid = strcmp(mode, "vforkexec") == 0 ? vfork() : fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid > 0)
			continue;
		if (strcmp(mode, "exec") == 0 || strcmp(mode, "vforkexec") == 0)
			execl(argv[2], argv[2], "spin", argv[3], (char *)NULL);
		if (strcmp(mode, "bareexec") == 0) {
			char *args[] = { argv[2], "spin", argv[3], NULL };

			execve(argv[2], args, empty);
		}
		if (strcmp(mode, "end") == 0)
			child_end(argv[2]);
		_exit(127);
	}
	while ((pid = wait(&status)) > 0)
		printf("child %d status %d\n", (int)pid, status);
	return 0;
}
