/* test-outfile.c - pv_outfile_open on what can lie at an output path: nothing,
 * one's own file, a symbolic link (dangling or not), a FIFO, a directory, a
 * hard link, another user's file */
#include "check.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/test-outfile.XXXXXX";
static char why[256];

static const char *at(const char *name)
{
	static char path[2][512];
	static int i;

	i = !i;
	snprintf(path[i], sizeof path[i], "%s/%s", dir, name);
	return path[i];
}

static void put(const char *name, const char *text)
{
	FILE *f = fopen(at(name), "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static bool has(const char *name, const char *text)
{
	char buf[256] = "";
	FILE *f = fopen(at(name), "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return strcmp(buf, text) == 0;
}

static mode_t mode_of(const char *name)
{
	struct stat st;

	return lstat(at(name), &st) == 0 ? st.st_mode & 07777 : (mode_t)-1;
}

/* Opens name; writes text if it opened.  The fd or -1. */
static int open_write(const char *name, mode_t mode, int flags, const char *text)
{
	int fd = pv_outfile_open(at(name), mode, flags, why, sizeof why);

	if (fd >= 0) {
		CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
		CHECK((fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
		CHECK((fcntl(fd, F_GETFL) & O_NONBLOCK) == 0);
		close(fd);
	}
	return fd;
}

static void test_new_and_own(void)
{
	struct stat a, b;

	/* Created with the mode, less the umask. */
	CHECK(open_write("report", PV_OUTFILE_REPORT_MODE, 0, "r\n") >= 0);
	CHECK_EQ(mode_of("report"), 0644);
	CHECK(open_write("trace", PV_OUTFILE_TRACE_MODE, PV_OUTFILE_NEW, "t\n") >= 0);
	CHECK_EQ(mode_of("trace"), 0600);

	/* One's own file is truncated: same file, no stale tail, mode kept. */
	put("own", "a long first text\n");
	chmod(at("own"), 0640);
	CHECK(stat(at("own"), &a) == 0);
	CHECK(open_write("own", PV_OUTFILE_REPORT_MODE, 0, "short\n") >= 0);
	CHECK(stat(at("own"), &b) == 0);
	CHECK(has("own", "short\n"));
	CHECK_EQ(a.st_ino, b.st_ino);
	CHECK_EQ(mode_of("own"), 0640);

	/* PV_OUTFILE_NEW: a new file in its place, with the mode asked; who
	 * held the old one open still reads the old one. */
	put("old", "a long first text\n");
	int held = open(at("old"), O_RDONLY);
	CHECK(open_write("old", PV_OUTFILE_TRACE_MODE, PV_OUTFILE_NEW, "new\n") >= 0);
	CHECK(has("old", "new\n"));
	CHECK_EQ(mode_of("old"), 0600);
	CHECK(fstat(held, &a) == 0);
	CHECK_EQ(a.st_nlink, 0);
	CHECK_EQ(a.st_size, strlen("a long first text\n"));
	close(held);
}

static void test_refused(void)
{
	for (int flags = 0; flags <= PV_OUTFILE_NEW; flags++) {
		/* A link to a file: the file is left alone. */
		put("target", "keep\n");
		CHECK(symlink("target", at("link")) == 0);
		CHECK_EQ(open_write("link", 0666, flags, "x"), -1);
		CHECK_STR(why, "it is a symbolic link; not following it");
		CHECK(has("target", "keep\n"));

		/* A dangling link: nothing is created where it points. */
		CHECK(symlink("nothing", at("dangling")) == 0);
		CHECK_EQ(open_write("dangling", 0666, flags, "x"), -1);
		CHECK_STR(why, "it is a symbolic link; not following it");
		CHECK(access(at("nothing"), F_OK) != 0);

		/* A FIFO with no reader, without blocking; a directory. */
		CHECK(mkfifo(at("fifo"), 0600) == 0);
		CHECK_EQ(open_write("fifo", 0666, flags, "x"), -1);
		CHECK_STR(why, "it is not a regular file");
		CHECK(mkdir(at("sub"), 0700) == 0);
		CHECK_EQ(open_write("sub", 0666, flags, "x"), -1);

		/* A second name of a file: neither is written. */
		CHECK(link(at("target"), at("hard")) == 0);
		CHECK_EQ(open_write("hard", 0666, flags, "x"), -1);
		CHECK_STR(why, "it has other hard links; not overwriting it");
		CHECK(has("target", "keep\n"));

		/* Another user's file, when we can make one. */
		if (geteuid() == 0) {
			put("theirs", "theirs\n");
			CHECK(chown(at("theirs"), 65534, 65534) == 0);
			CHECK_EQ(open_write("theirs", 0666, flags, "x"), -1);
			CHECK_STR(why, "it belongs to another user (uid 65534); not overwriting it");
			CHECK(has("theirs", "theirs\n"));
			unlink(at("theirs"));
		}
		unlink(at("link"));
		unlink(at("dangling"));
		unlink(at("fifo"));
		rmdir(at("sub"));
		unlink(at("hard"));
		unlink(at("target"));
	}

	/* A character device is written to as it is, but never replaced. */
	{
		char why2[256];
		int fd = pv_outfile_open("/dev/null", 0666, 0, why2, sizeof why2);
		CHECK(fd >= 0);
		if (fd >= 0) {
			CHECK_EQ(write(fd, "x", 1), 1);
			close(fd);
		}
		CHECK_EQ(pv_outfile_open("/dev/null", 0600, PV_OUTFILE_NEW, why2, sizeof why2), -1);
		CHECK_STR(why2, "it is not a regular file");
		struct stat st;
		CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
	}

	/* A directory on the way that does not exist: errno's text. */
	CHECK_EQ(open_write("no/such", 0666, 0, "x"), -1);
	CHECK_STR(why, strerror(ENOENT));
}

int main(void)
{
	const char *names[] = { "report", "trace", "own", "old" };

	umask(022);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_new_and_own();
	test_refused();
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		unlink(at(names[i]));
	if (rmdir(dir) != 0)
		fprintf(stderr, "cannot remove '%s': %s\n", dir, strerror(errno));
	return check_done("test-outfile");
}
