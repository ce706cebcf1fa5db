/* selfexec.c - execs itself N times (scripts/bench/startcost): a chain of
 * short process images, each of which a preloaded collector starts in
 *
 * usage: selfexec N
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 0;
	char left[32];

	if (n <= 0)
		return 0;
	snprintf(left, sizeof(left), "%ld", n - 1);
	execl("/proc/self/exe", argv[0], left, (char *)NULL);
	perror("selfexec: exec");
	return 1;
}
