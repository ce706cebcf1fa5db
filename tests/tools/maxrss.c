/* maxrss - run a command and write the most memory it held at once
 *
 *   maxrss FILE COMMAND [ARG...]
 *
 * writes the peak resident set size of COMMAND (getrusage's ru_maxrss of
 * the child, in KiB) to FILE and exits with COMMAND's status (128 plus the
 * signal's number when a signal ended it).  For tests of how much memory
 * an input costs.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: maxrss FILE COMMAND [ARG...]\n");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("maxrss: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "maxrss: cannot run '%s': %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("maxrss: wait4");
			return 2;
		}
	f = fopen(argv[1], "w");
	if (!f || fprintf(f, "%ld\n", ru.ru_maxrss) < 0 || fclose(f) != 0) {
		fprintf(stderr, "maxrss: cannot write '%s'\n", argv[1]);
		return 2;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
