/* collect-main.c - run a program under a preload library: the launcher
 * of collect-timer (libprofview-timer.so) and collect-heap
 * (libprofview-heap.so), for the collector its main passes (collect.h)
 *
 * collect-timer [options] [--] program [args...]
 *
 * Checks that LD_PRELOAD can work for the program, creates the trace file,
 * runs the program with the preload library and its settings in the
 * environment, waits for it, then reads the trace back to print a summary
 * and to cut a trace the program could not finish (exit without exit
 * handlers, crash, kill) at its last record.
 *
 * The processes the program starts write traces of their own next to the
 * first, "<stem>.<pid>.raw" (and "<stem>.<pid>.<n>.raw" for an exec in a
 * pid that has one).  Unless --no-inherit, collect-timer is a child
 * subreaper: descendants whose parent is gone become its children, and it
 * waits until every descendant has ended.  Then it finds their traces by
 * scanning the directory: a trace started after collect-timer did (by
 * CLOCK_MONOTONIC) whose pid or parent pid is the program's or that of a
 * trace already found.  SIGTERM and SIGHUP sent to collect-timer by a
 * process are passed on to the program (to its descendants once it has
 * ended); SIGINT and SIGQUIT are ignored, since the terminal sends them to
 * the program itself.
 *
 * Exit status: the program's own, or 128 + the signal that killed it; 2 for
 * a usage error; 1 when collect-timer itself fails before running the
 * program; 126 when the program cannot be executed; 127 when it is not
 * found.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect-env.h"
#include "collect-attach.h"
#include "collect-launch.h"
#include "collect-options.h"
#include "collect-procs.h"
#include "collect-runseg.h"
#include "collect-summary.h"
#include "collect.h"
#include "segments.h"

static volatile pid_t collect_child_pid;  /* the program, until reaped */
static volatile sig_atomic_t collect_forward_sig;
static struct collect_control *collect_word; /* the run's control word */
static int collect_control_sig;
/* The lines said when the control signal sent to us resumes [0] or pauses
 * [1] sampling, made before it can come */
static char collect_said[2][200];
static size_t collect_said_len[2];

/* Makes those lines for signal sig. */
static void collect_said_lines(int sig)
{
	for (int pause = 0; pause <= 1; pause++) {
		int n = snprintf(collect_said[pause], sizeof(collect_said[pause]),
				 "%s: sampling %s (signal %d) in every process of the run, in each "
				 "thread at its next sample; the same signal %s it\n",
				 collect_tool->name, pause ? "paused" : "resumed", sig,
				 pause ? "resumes" : "pauses");

		collect_said_len[pause] = n > 0 && (size_t)n < sizeof(collect_said[pause]) ? (size_t)n : 0;
	}
}

/* Makes the run's control word (collect-env.h): memory of ours that every
 * process of the run opens by its /proc path and maps.  path gets it, or
 * "" when it cannot be made (then the control signal sent to us goes to
 * the program alone). */
static void collect_make_word(char *path, size_t cap)
{
	int fd = memfd_create("profview-control", MFD_CLOEXEC);
	void *p = MAP_FAILED;
	struct rlimit fsize;

	path[0] = '\0';
	if (fd < 0)
		return;
	/* with the run's share of unwind rows after it (zero: empty), or
	 * alone when the system will not have that (a file size limit below
	 * it: growing past it would end us with SIGXFSZ) */
	if ((getrlimit(RLIMIT_FSIZE, &fsize) == 0 &&
	     (fsize.rlim_cur == RLIM_INFINITY ||
	      fsize.rlim_cur >= (rlim_t)(COLLECT_CONTROL_SIZE + COLLECT_SHARE_SIZE)) &&
	     ftruncate(fd, (off_t)(COLLECT_CONTROL_SIZE + COLLECT_SHARE_SIZE)) == 0) ||
	    ftruncate(fd, COLLECT_CONTROL_SIZE) == 0)
		p = mmap(NULL, COLLECT_CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return;
	}
	collect_word = p;
	snprintf(path, cap, "/proc/%d/fd/%d", (int)getpid(), fd);
}

/* SIGTERM, SIGHUP and the control signal from a process are for the
 * program.  A SIGHUP from the kernel (the terminal hung up) reached the
 * program already. */
static void collect_on_signal(int sig, siginfo_t *si, void *uc)
{
	pid_t child = collect_child_pid;

	(void)uc;
	if (si->si_code > 0)
		return;
	if (sig == collect_control_sig && collect_word != NULL) {
		/* a pause or resume for every process of the run, each at its
		 * next sample (a process that has a control thread is woken):
		 * said here, at once, and by none of them */
		uint32_t req = atomic_fetch_add(&collect_word->requests, 1) + 1;
		int saved_errno = errno;
		ssize_t w;

		atomic_store(&collect_word->said, req);
		syscall(SYS_futex, (void *)&collect_word->requests, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
		w = write(STDERR_FILENO, collect_said[req & 1], collect_said_len[req & 1]);
		(void)w;
		errno = saved_errno;
		return;
	}
	collect_forward_sig = sig;
	if (child > 0)
		kill(child, sig);
}

/* Passes sig on to every child of ours (the program's descendants that
 * lost their parent). */
static void collect_forward_children(int sig)
{
	char path[64], buf[4096], *p, *e;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	for (p = buf;; p = e) {
		long c = strtol(p, &e, 10);

		if (e == p)
			break;
		if (c > 0)
			kill((pid_t)c, sig);
	}
}

/* The processes we reaped: the program, and the descendants whose parent
 * ended first (collect-procs.h). */
static struct collect_ends collect_reaped;

static void collect_reaped_add(pid_t pid, int status, const struct rusage *ru)
{
	collect_ends_add(&collect_reaped, (uint32_t)pid, (uint32_t)status,
			 (uint64_t)ru->ru_utime.tv_sec * 1000000000ull +
				 (uint64_t)ru->ru_utime.tv_usec * 1000u +
				 (uint64_t)ru->ru_stime.tv_sec * 1000000000ull +
				 (uint64_t)ru->ru_stime.tv_usec * 1000u);
}

static uint64_t collect_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Waits for the program; with seg, reads its trace (at live) into
 * segments meanwhile, every COLLECT_POLL_NS, and removes it once it has
 * ended (--duration), all of it in the segments, while the program runs
 * on; with rs, the other processes' traces too.  Returns 0, or -1 with a
 * message. */
static int collect_wait_program(pid_t pid, struct seg *seg, struct collect_runseg *rs,
				const char *live, int *status)
{
	int ended = seg == NULL;

	for (;;) {
		struct rusage ru;
		pid_t w = wait4(pid, status, ended && rs == NULL ? 0 : WNOHANG, &ru);
		struct timespec ts = { 0, COLLECT_POLL_NS };

		if (w == pid) {
			collect_reaped_add(w, *status, &ru);
			return 0;
		}
		if (w < 0 && errno != EINTR) {
			cli_msg("cannot wait for the program: %s", strerror(errno));
			return -1;
		}
		if (w == 0) {
			uint64_t now = collect_now();

			if (!ended) {
				ended = seg_poll(seg, now);
				if (ended)
					unlink(live);
			}
			if (rs != NULL)
				collect_runseg_poll(rs, now);
			nanosleep(&ts, NULL);
		}
	}
}

/* Waits for the descendants left when the program has ended; with rs,
 * cuts their traces into segments meanwhile. */
static void collect_wait_rest(struct collect_runseg *rs)
{
	for (;;) {
		int sig = collect_forward_sig, status;
		struct rusage ru;
		pid_t w;

		if (sig != 0) {
			collect_forward_sig = 0;
			collect_forward_children(sig);
		}
		w = wait4(-1, &status, rs != NULL ? WNOHANG : 0, &ru);
		if (w < 0 && errno != EINTR)
			break;
		if (w > 0)
			collect_reaped_add(w, status, &ru);
		if (w == 0) {
			struct timespec ts = { 0, COLLECT_POLL_NS };

			collect_runseg_poll(rs, collect_now());
			nanosleep(&ts, NULL);
		}
	}
}

int collect_main(int argc, char **argv, const struct collect_tool *tool)
{
	struct collect_opts o = { 0 };
	struct seg *seg = NULL;
	struct collect_runseg *rs = NULL;
	struct seg_summary sum;
	char prog[PATH_MAX], lib[PATH_MAX], shown[PATH_MAX + 2], short_path[PATH_MAX + 16];
	ssize_t n, got = 0;
	int rc, pipefd[2], status, others = 0, own_malloc;
	struct sigaction sa;
	struct timespec t0;
	sigset_t hold, entry, dfl;
	pid_t pid;

	collect_tool = tool;
	/* The default control signal waits from the first thing we do (see
	 * below); the one named is known after the options. */
	sigemptyset(&dfl);
	sigaddset(&dfl, COLLECT_CONTROL_DEFAULT);
	sigprocmask(SIG_BLOCK, &dfl, &entry);
	rc = collect_parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	if (o.nattach > 0 || o.attach_name != NULL)
		return collect_attach(&o);
	if (o.control != COLLECT_CONTROL_DEFAULT && sigismember(&entry, COLLECT_CONTROL_DEFAULT) == 0)
		sigprocmask(SIG_UNBLOCK, &dfl, NULL);
	rc = collect_resolve(o.argv[0], prog, sizeof(prog));
	if (rc != 0)
		return rc;
	if (collect_check_binary(prog) != 0 || collect_check_output(&o, prog) != 0 ||
	    collect_find_preload(lib, sizeof(lib)) != 0 || collect_claim_output(&o) != 0)
		return COLLECT_EXIT_FAIL;
	own_malloc = collect_own_allocator(prog);
	if (pipe2(pipefd, O_CLOEXEC) != 0) {
		cli_msg("cannot create a pipe: %s", strerror(errno));
		return COLLECT_EXIT_FAIL;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* Descendants whose parent ends become ours, so that we can wait
	 * for them (and their traces). */
	if (!o.no_inherit)
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = collect_on_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	/* The control signal may come at any time, even before we or the
	 * program's library have a handler for it: it waits, blocked, until
	 * then (in the program, until the library's constructor unblocks it),
	 * rather than meet its default action, which kills.  One the user
	 * blocks already is left as it is. */
	if (o.control != 0 && sigismember(&entry, o.control) == 0) {
		sigemptyset(&hold);
		sigaddset(&hold, o.control);
		o.held = sigprocmask(SIG_BLOCK, &hold, NULL) == 0;
	}
	if (o.control != 0) {
		collect_make_word(o.word, sizeof(o.word));
		collect_said_lines(o.control);
	}
	collect_control_sig = o.control;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		cli_msg("cannot fork: %s", strerror(errno));
		return COLLECT_EXIT_FAIL;
	}
	if (pid == 0) {
		close(pipefd[0]);
		collect_child(&o, prog, lib, pipefd[1]);
	}
	close(pipefd[1]);
	/* Like time(1): a ^C or ^\ is for the program. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	collect_child_pid = pid;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* so that it can be sent to collect-timer too */
	if (o.control != 0 && o.control != SIGINT && o.control != SIGQUIT)
		sigaction(o.control, &sa, NULL);
	if (o.held)
		sigprocmask(SIG_UNBLOCK, &hold, NULL);
	while (got < (ssize_t)sizeof(shown) - 1 &&
	       ((n = read(pipefd[0], shown + got, sizeof(shown) - 1 - (size_t)got)) > 0 ||
		(n < 0 && errno == EINTR)))
		got += n > 0 ? n : 0;
	close(pipefd[0]);
	shown[got] = '\0';
	if (o.split > 0 && got > 0 && (size_t)got == strlen(shown) + 1) {
		seg = seg_new(shown, (uint64_t)(o.split * 1e9), (unsigned)o.keep, cli_msg);
		if (seg != NULL)
			seg_clear_old(seg);
		else
			cli_msg("cannot cut the trace into segments: out of memory; it is written "
				    "whole to '%s'", shown);
	}
	if (seg != NULL && !o.no_inherit)
		rs = collect_runseg_new(seg, shown, pid,
					(uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec,
					o.split, o.keep);
	if (collect_wait_program(pid, seg, rs, shown, &status) != 0)
		return COLLECT_EXIT_FAIL;
	collect_child_pid = 0;
	if (seg != NULL) {
		seg_finish(seg);
		seg_summary(seg, &sum);
		if (!sum.started) {
			/* no trace was written at all: said as without --split */
			seg_free(seg);
			seg = NULL;
		}
	}
	if (!o.no_inherit)
		collect_wait_rest(seg != NULL ? rs : NULL);
	if (rs != NULL && seg != NULL)
		collect_runseg_finish(rs);
	collect_runseg_free(rs);
	if (got > 0 && (size_t)got > strlen(shown) + 1) {
		/* exec failed: the child said why; no trace to speak of */
		unlink(shown);
	} else if (got > 0) {
		others = collect_report(shown, pid,
					(uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec,
					!o.no_inherit, o.quiet, o.verbose, seg, &collect_reaped);
	}
	/* the short images' traces are read (or none ran) */
	if (got > 0 && collect_env_short_path(shown, short_path, sizeof(short_path)) == 0)
		unlink(short_path);
	if (own_malloc)
		cli_msg("'%s' defines its own malloc: the program's allocations go to it, "
			    "not to %s, and are not seen; link it with the C library's malloc to "
			    "profile its heap", prog, collect_tool->library);
	if (seg != NULL) {
		/* all of the program's is in the segments now */
		if (!others)
			unlink(shown);
		seg_free(seg);
	}
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		if (!o.quiet)
			cli_msg("the program was killed by signal %d (%s)", sig, strsignal(sig));
		return 128 + sig;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : COLLECT_EXIT_FAIL;
}
