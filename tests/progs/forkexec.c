/* forkexec.c - a fork and exec chain: forks, the child runs argv[1..]
 * with execv, the parent waits for it; "-" as argv[1] first forks a
 * child that forks and execs in turn (a chain of two), so that the
 * program a test names runs in the grandchild.
 *
 * usage: forkexec [-] PROGRAM [ARGS...]
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int run(char **argv)
{
	int status;
	pid_t pid = fork();

	if (pid < 0) {
		perror("forkexec: fork");
		return 1;
	}
	if (pid == 0) {
		if (strcmp(argv[0], "-") == 0)
			_exit(run(argv + 1));
		execv(argv[0], argv);
		perror("forkexec: exec");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2 || (strcmp(argv[1], "-") == 0 && argc < 3)) {
		fprintf(stderr, "usage: forkexec [-] PROGRAM [ARGS...]\n");
		return 2;
	}
	return run(argv + 1);
}
