/* test-control.c - the control signal of the preload libraries
 * (collectors/timer/control.c), in this process and children of it, with
 * the library's side of it (control_apply...) recorded by fakehost.c:
 * how sampling starts (--delay, --duration), the signal pausing and
 * resuming through the control thread, a signal the program sends itself
 * at the default action, a handler of the program's own, the signals held
 * across an exec and let through by the new image
 * (PROFVIEW_CONTROL_HELD), and what is pending of the old image's
 * sampling then. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "collect-env.h"
#include "control.h"
#include "fakehost.h"
#include "helper.h"
#include "preload.h"
#include "tracetest.h"

#define CTL SIGUSR2

/* Runs fn in a child; its checks must all pass. */
static void in_child(const char *what, void (*fn)(void))
{
	int status = 0;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		check_failures = check_count = 0;
		fn();
		fflush(NULL);
		_exit(check_failures ? 1 : check_count == 0 ? 2 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fprintf(stderr, "control: %s: failed (status %#x)\n", what, status);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ---- what the library writes on stderr, caught ---- */

static int capture_fd = -1, saved_fd = -1;
static char captured[8192];

static void capture_begin(void)
{
	char name[] = "/tmp/profview-control.XXXXXX";

	fflush(stderr);
	capture_fd = mkstemp(name);
	unlink(name);
	saved_fd = dup(2);
	dup2(capture_fd, 2);
}

static const char *capture_end(void)
{
	ssize_t n;

	fflush(stderr);
	dup2(saved_fd, 2);
	close(saved_fd);
	n = pread(capture_fd, captured, sizeof(captured) - 1, 0);
	captured[n > 0 ? n : 0] = '\0';
	close(capture_fd);
	/* a check that failed meanwhile said so in there */
	if (check_failures)
		fputs(captured, stderr);
	return captured;
}

/* ---- the library's side, as fakehost.c recorded it ---- */

static int last_applied(void)
{
	int n = atomic_load(&fakehost_napplied);

	return n == 0 ? -1 : atomic_load(&fakehost_applied[(n < FAKEHOST_CALLS ? n : FAKEHOST_CALLS) - 1]);
}

/* The run's control word, as collect-timer shares it (collect-env.h),
 * when a test made one. */
static struct collect_control *run;

static void map_run_word(void)
{
	char path[64];
	int fd = memfd_create("profview-control", MFD_CLOEXEC);

	CHECK(fd >= 0 && ftruncate(fd, COLLECT_CONTROL_SIZE) == 0);
	run = mmap(NULL, COLLECT_CONTROL_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(run != MAP_FAILED);
	/* the library maps it again by this name, as its launcher's */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	setenv(COLLECT_ENV_CONTROL_WORD, path, 1);
}

/* Wakes the control thread as a request would, without one: it looks at
 * the time again. */
static void kick(void)
{
	if (run != NULL)
		syscall(SYS_futex, (void *)&run->requests, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Waits until control_apply was called n times or more, the last with
 * how: a deadline for a failure, not a measure (5 s). */
static int wait_applied(int n, int how)
{
	for (int i = 0; i < 5000; i++) {
		struct timespec ms = { 0, 1000000 };

		kick();
		if (atomic_load(&fakehost_napplied) >= n && last_applied() == how)
			return 1;
		nanosleep(&ms, NULL);
	}
	return 0;
}

static void set_default(int sig)
{
	struct sigaction dfl;

	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	control_real_sigaction(sig, &dfl, NULL);
}

static void setenv_ns(const char *name, uint64_t ns)
{
	char v[32];

	snprintf(v, sizeof(v), "%llu", (unsigned long long)ns);
	setenv(name, v, 1);
}

/* ---- how sampling starts ---- */

static void test_initial(void)
{
	uint64_t now = preload_now();

	/* no signal taken: these calls only set the state */
	setenv(COLLECT_ENV_CONTROL, "0", 1);
	unsetenv(COLLECT_ENV_START_NS);
	fakehost_reset();
	control_init(SIGPROF, 0);
	CHECK_EQ(fakehost_initial, CONTROL_RESUME);
	CHECK(!control_owns(CTL));
	/* --delay: paused until the start */
	setenv_ns(COLLECT_ENV_START_NS, now + 3600000000000ull);
	control_init(SIGPROF, 0);
	CHECK_EQ(fakehost_initial, CONTROL_PAUSE);
	/* a start already past */
	setenv_ns(COLLECT_ENV_START_NS, now - 1);
	control_init(SIGPROF, 0);
	CHECK_EQ(fakehost_initial, CONTROL_RESUME);
	/* --duration already over: ended, also with a start to come */
	control_init(SIGPROF, now - 1);
	CHECK_EQ(fakehost_initial, CONTROL_END);
	setenv_ns(COLLECT_ENV_START_NS, now + 3600000000000ull);
	control_init(SIGPROF, now - 1);
	CHECK_EQ(fakehost_initial, CONTROL_END);
	unsetenv(COLLECT_ENV_START_NS);
	unsetenv(COLLECT_ENV_CONTROL);
	/* which signals may control */
	CHECK(control_default_kills(SIGTERM) && control_default_kills(CTL));
	CHECK(!control_default_kills(SIGCHLD) && !control_default_kills(SIGCONT) &&
	      !control_default_kills(SIGWINCH) && !control_default_kills(SIGTSTP));
	CHECK(!control_default_kills(0) && !control_default_kills(NSIG));
}

/* ---- the signal and the thread ---- */

/* The signal sent to the process pauses, the next one resumes, through
 * the control thread, each change said once on stderr; the thread does
 * the library's deferred work; it stops when told. */
static void child_toggle(void)
{
	const char *err;

	unsetenv(COLLECT_ENV_CONTROL);
	unsetenv(COLLECT_ENV_START_NS);
	set_default(CTL);
	fakehost_reset();
	control_init(SIGPROF, 0);
	CHECK(control_owns(CTL));
	CHECK_EQ(fakehost_initial, CONTROL_RESUME);
	capture_begin();
	CHECK(control_start() == 0);
	/* a fork child's first act: sampling as the run is (running) */
	CHECK(wait_applied(1, CONTROL_RESUME));
	kill(getpid(), CTL);
	CHECK(wait_applied(2, CONTROL_PAUSE));
	kill(getpid(), CTL);
	CHECK(wait_applied(3, CONTROL_RESUME));
	CHECK(control_cpu_ns() > 0);
	control_stop();
	err = capture_end();
	CHECK(atomic_load(&fakehost_deferred_calls) > 0);
	CHECK_EQ(control_cpu_ns(), 0);
	CHECK_CONTAINS(err, "sampling paused (signal 12); the same signal resumes it");
	CHECK_CONTAINS(err, "sampling resumed (signal 12); the same signal pauses it");
	CHECK(strstr(strstr(err, "paused") + 1, "paused") == NULL);
}

/* --delay and --duration as time passes (the fake clock, moved on, and
 * the thread woken to look at it): it resumes at the start and ends at
 * the stop, without a line; a request after the end does not resume. */
static void child_delay(void)
{
	uint64_t now = preload_now();
	const char *err;

	map_run_word();
	unsetenv(COLLECT_ENV_CONTROL);
	setenv_ns(COLLECT_ENV_START_NS, now + 3600000000000ull);
	set_default(CTL);
	fakehost_reset();
	control_init(SIGPROF, now + 7200000000000ull);
	CHECK_EQ(fakehost_initial, CONTROL_PAUSE);
	capture_begin();
	CHECK(control_start() == 0);
	CHECK(wait_applied(1, CONTROL_PAUSE));
	fakehost_clock_skew += 3600000000000ull;
	CHECK(wait_applied(2, CONTROL_RESUME));
	fakehost_clock_skew += 3600000000000ull;
	CHECK(wait_applied(3, CONTROL_END));
	kill(getpid(), CTL);
	CHECK(wait_applied(4, CONTROL_END));
	control_stop();
	err = capture_end();
	CHECK(strstr(err, "sampling") == NULL);
	CHECK_EQ(atomic_load(&run->requests), 1);
}

/* Requests through the run's word, as another process of the run (or
 * collect-timer) makes them: each pauses or resumes here; the line about
 * it is said by the first process to act on it, once for the run. */
static void child_run(void)
{
	const char *err;

	map_run_word();
	unsetenv(COLLECT_ENV_CONTROL);
	unsetenv(COLLECT_ENV_START_NS);
	set_default(CTL);
	fakehost_reset();
	control_init(SIGPROF, 0);
	capture_begin();
	CHECK(control_start() == 0);
	CHECK(wait_applied(1, CONTROL_RESUME));
	atomic_fetch_add(&run->requests, 1);
	CHECK(wait_applied(2, CONTROL_PAUSE));
	/* another process said this one already */
	atomic_store(&run->said, 2);
	atomic_fetch_add(&run->requests, 1);
	CHECK(wait_applied(3, CONTROL_RESUME));
	/* the signal to this process: a request for the run */
	kill(getpid(), CTL);
	CHECK(wait_applied(4, CONTROL_PAUSE));
	control_stop();
	err = capture_end();
	CHECK_EQ(atomic_load(&run->requests), 3);
	CHECK_CONTAINS(err, "sampling paused (signal 12) in every process of the run; the same "
			    "signal resumes it");
	CHECK(strstr(err, "resumed") == NULL);
	CHECK(strstr(strstr(err, "paused") + 1, "paused") != NULL);
}

/* A request before the thread runs is not lost: the thread starts as it
 * says (paused). */
static void child_early(void)
{
	unsetenv(COLLECT_ENV_CONTROL);
	unsetenv(COLLECT_ENV_START_NS);
	set_default(CTL);
	fakehost_reset();
	control_init(SIGPROF, 0);
	kill(getpid(), CTL);
	CHECK(control_start() == 0);
	CHECK(wait_applied(1, CONTROL_PAUSE));
	control_stop();
}

/* The program sends its own thread the signal while its action is the
 * default: that action, which ends the process, as without the library. */
static void child_raise(void)
{
	unsetenv(COLLECT_ENV_CONTROL);
	set_default(CTL);
	control_init(SIGPROF, 0);
	raise(CTL);
	CHECK(0); /* not reached */
}

static _Atomic int program_got;

static void program_handler(int sig)
{
	(void)sig;
	atomic_fetch_add(&program_got, 1);
}

/* Another control signal, the profiler's own refused, one that is not
 * at its default left alone. */
static void child_choice(void)
{
	struct sigaction ign;

	set_default(SIGUSR1);
	setenv(COLLECT_ENV_CONTROL, "10", 1);
	control_init(SIGPROF, 0);
	CHECK(control_owns(SIGUSR1) && !control_owns(CTL));
	/* the sampling signal itself cannot be it */
	setenv(COLLECT_ENV_CONTROL, "27", 1);
	set_default(SIGPROF);
	control_init(SIGPROF, 0);
	CHECK(!control_owns(SIGPROF));
	/* nor one the kernel sends for a fault */
	setenv(COLLECT_ENV_CONTROL, "11", 1);
	control_init(SIGPROF, 0);
	CHECK(!control_owns(SIGSEGV));
	/* ignored by the program: taken, and still ignored as it sees it */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	control_real_sigaction(CTL, &ign, NULL);
	unsetenv(COLLECT_ENV_CONTROL);
	control_init(SIGPROF, 0);
	CHECK(control_owns(CTL));
	memset(&ign, 0, sizeof(ign));
	CHECK(control_sigaction(CTL, NULL, &ign) == 0);
	CHECK(ign.sa_handler == SIG_IGN);
	/* signal() of a signal the library holds: through its sigaction,
	 * with SA_RESTART, the program's old action returned */
	CHECK(control_signal(CTL, SIG_DFL, control_owns, control_sigaction) == SIG_IGN);
	CHECK(control_owns(CTL));
	CHECK(control_sigaction(CTL, NULL, &ign) == 0);
	CHECK(ign.sa_handler == SIG_DFL && (ign.sa_flags & SA_RESTART));
	/* of another: libc's */
	CHECK(control_signal(SIGWINCH, program_handler, control_owns, control_sigaction) == SIG_DFL);
	CHECK(control_real_sigaction(SIGWINCH, NULL, &ign) == 0 && ign.sa_handler == program_handler);
}

/* The program installs a handler of its own: it gets the signal, which
 * is no request any more; one line says so.  Before that, SIG_IGN and
 * SIG_DFL are only noted as the program's, and told back to it. */
static void child_program_handler(void)
{
	struct sigaction act, old;
	const char *err;

	unsetenv(COLLECT_ENV_CONTROL);
	set_default(CTL);
	fakehost_reset();
	control_init(SIGPROF, 0);
	CHECK(control_owns(CTL));
	memset(&act, 0, sizeof(act));
	act.sa_handler = SIG_IGN;
	CHECK(control_sigaction(CTL, &act, &old) == 0);
	CHECK(old.sa_handler == SIG_DFL);
	CHECK(control_owns(CTL));
	capture_begin();
	act.sa_handler = program_handler;
	CHECK(control_sigaction(CTL, &act, &old) == 0);
	CHECK(old.sa_handler == SIG_IGN);
	CHECK(!control_owns(CTL));
	raise(CTL);
	kill(getpid(), CTL);
	err = capture_end();
	CHECK_EQ(atomic_load(&program_got), 2);
	CHECK_CONTAINS(err, "the program installed its own handler for the control signal (SIGUSR2)");
	/* no request came of it */
	CHECK(control_start() == 0);
	CHECK(wait_applied(1, CONTROL_RESUME));
	control_stop();
	CHECK_EQ(atomic_load(&fakehost_napplied), 1);
}

/* A handler the program had before the library started: not taken. */
static void child_handler_before(void)
{
	struct sigaction act;
	const char *err;

	memset(&act, 0, sizeof(act));
	act.sa_handler = program_handler;
	control_real_sigaction(CTL, &act, NULL);
	unsetenv(COLLECT_ENV_CONTROL);
	capture_begin();
	control_init(SIGPROF, 0);
	err = capture_end();
	CHECK(!control_owns(CTL));
	CHECK_CONTAINS(err, "its own handler for the control signal (SIGUSR2)");
	kill(getpid(), CTL);
	CHECK_EQ(atomic_load(&program_got), 1);
}

/* ---- across an exec ---- */

static int blocked(int sig)
{
	sigset_t cur;

	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	return sigismember(&cur, sig);
}

static void block(int sig, int how)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, sig);
	pthread_sigmask(how, &set, NULL);
}

/* PROFVIEW_CONTROL_HELD as a new image's constructor reads it: "1" lets
 * the control signal through, "1,S" it and S, the old image's sampling
 * signal, "0,S" S alone; anything else neither; the variable goes in any
 * case. */
static void child_unhold(void)
{
	char both[32], samp_only[32], killsig[32], junk[32];
	int samp = SIGRTMIN + 3;
	const struct {
		const char *held, *ctl;
		int ctl_free, samp_free;
	} cases[] = {
		{ NULL, NULL, 0, 0 },    { "1", NULL, 1, 0 },    { both, NULL, 1, 1 },
		{ samp_only, NULL, 0, 1 }, { "2", NULL, 0, 0 },  { "1x", NULL, 0, 0 },
		{ "", NULL, 0, 0 },      { "yes", NULL, 0, 0 },  { killsig, NULL, 0, 0 },
		{ junk, NULL, 0, 0 },     { "0,-3", NULL, 0, 0 },
		/* another control signal: that one */
		{ "1", "10", 1, 0 },
		/* one that cannot be the control signal: none */
		{ "1", "11", 0, 0 },
	};

	snprintf(both, sizeof(both), "1,%d", samp);
	snprintf(samp_only, sizeof(samp_only), "0,%d", samp);
	snprintf(killsig, sizeof(killsig), "0,%d", SIGKILL);
	snprintf(junk, sizeof(junk), "1x,%d", samp);
	/* (the sampling signal handled by nobody, and none pending) */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ctl = cases[i].ctl != NULL ? atoi(cases[i].ctl) : CTL, ok;

		block(CTL, SIG_BLOCK);
		block(SIGUSR1, SIG_BLOCK);
		block(SIGSEGV, SIG_BLOCK);
		block(samp, SIG_BLOCK);
		if (cases[i].held != NULL)
			setenv(COLLECT_ENV_HELD, cases[i].held, 1);
		else
			unsetenv(COLLECT_ENV_HELD);
		if (cases[i].ctl != NULL)
			setenv(COLLECT_ENV_CONTROL, cases[i].ctl, 1);
		else
			unsetenv(COLLECT_ENV_CONTROL);
		control_unhold();
		ok = blocked(ctl) != cases[i].ctl_free && blocked(samp) != cases[i].samp_free &&
		     (ctl == CTL || blocked(CTL)) && getenv(COLLECT_ENV_HELD) == NULL;
		if (!ok)
			fprintf(stderr, "unhold case %zu ('%s'): control %s, sampling %s\n", i,
				cases[i].held ? cases[i].held : "(unset)",
				blocked(ctl) ? "held" : "free", blocked(samp) ? "held" : "free");
		CHECK(ok);
	}
	unsetenv(COLLECT_ENV_CONTROL);
}

static _Atomic int samp_got;

static void samp_plain(int sig)
{
	(void)sig;
	atomic_fetch_add(&samp_got, 1);
}

static void samp_info(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	(void)uc;
	atomic_fetch_add(&samp_got, 1);
}

/* Pending instances of the old image's sampling signal: a timer's and a
 * perf event's (POLL_IN), then one the program sent.  When the new image
 * has no handler of its own that tells them apart (SA_SIGINFO), the
 * sampling ones are taken back and the program's is delivered; with
 * one, all are, to it. */
static void unhold_pending(int siginfo)
{
	int samp = SIGRTMIN + 3;
	struct sigevent ev;
	struct itimerspec its;
	struct sigaction act;
	siginfo_t si;
	sigset_t pend;
	timer_t tm;
	char held[32];
	int i;

	memset(&act, 0, sizeof(act));
	if (siginfo) {
		act.sa_sigaction = samp_info;
		act.sa_flags = SA_SIGINFO;
	} else {
		act.sa_handler = samp_plain;
	}
	control_real_sigaction(samp, &act, NULL);
	block(samp, SIG_BLOCK);
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = samp;
	CHECK(timer_create(CLOCK_MONOTONIC, &ev, &tm) == 0);
	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = 1000;
	CHECK(timer_settime(tm, 0, &its, NULL) == 0);
	for (i = 0; i < 5000; i++) {
		struct timespec ms = { 0, 1000000 };

		sigpending(&pend);
		if (sigismember(&pend, samp))
			break;
		nanosleep(&ms, NULL);
	}
	CHECK(i < 5000);
	memset(&si, 0, sizeof(si));
	si.si_signo = samp;
	si.si_code = POLL_IN;
	CHECK(syscall(SYS_rt_tgsigqueueinfo, getpid(), syscall(SYS_gettid), samp, &si) == 0);
	CHECK(sigqueue(getpid(), samp, (union sigval){ .sival_int = 7 }) == 0);
	snprintf(held, sizeof(held), "0,%d", samp);
	setenv(COLLECT_ENV_HELD, held, 1);
	control_unhold();
	CHECK(!blocked(samp));
	CHECK_EQ(atomic_load(&samp_got), siginfo ? 3 : 1);
	timer_delete(tm);
}

static void child_pending_plain(void)
{
	unhold_pending(0);
}

static void child_pending_siginfo(void)
{
	unhold_pending(1);
}

/* The image exec'd by the tests below: says what it was given and what
 * control_unhold left, on stdout. */
static int held_report(int samp)
{
	const char *h = getenv(COLLECT_ENV_HELD);
	int n = 0;
	extern char **environ;

	for (char **e = environ; *e != NULL; e++)
		n += strncmp(*e, COLLECT_ENV_HELD "=", strlen(COLLECT_ENV_HELD) + 1) == 0;
	printf("before %d %d %s %d\n", blocked(CTL), blocked(samp), h != NULL ? h : "-", n);
	control_unhold();
	h = getenv(COLLECT_ENV_HELD);
	printf("after %d %d %s\n", blocked(CTL), blocked(samp), h != NULL ? h : "-");
	return 0;
}

/* Execs this program as held_report, from a process whose library took
 * the control signal, with env; returns its report. */
static const char *exec_report(char *const env[], int ctl_blocked, int exec_signal)
{
	static char out[512];
	int p[2], status = 0;
	char samp[16];
	ssize_t n, got = 0;
	pid_t pid;

	snprintf(samp, sizeof(samp), "%d", SIGRTMIN + 3);
	CHECK(pipe(p) == 0);
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		char *argv[] = { "test-control", "--held-report", samp, NULL };
		int null = open("/dev/null", O_WRONLY);

		unsetenv(COLLECT_ENV_CONTROL);
		set_default(CTL);
		control_init(SIGPROF, 0);
		if (ctl_blocked)
			block(CTL, SIG_BLOCK);
		atomic_store(&fakehost_exec_signal, exec_signal);
		dup2(p[1], 1);
		/* the loader's line about the library it cannot find */
		dup2(null, 2);
		execve("/proc/self/exe", argv, env);
		_exit(127);
	}
	close(p[1]);
	while (got < (ssize_t)sizeof(out) - 1 && (n = read(p[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += n;
	out[got] = '\0';
	close(p[0]);
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	return out;
}

/* Before an exec of an image that loads the library again, the control
 * signal and the sampling signal are held and the environment says so,
 * once; the new image lets them through and drops the variable.  One the
 * thread already blocks stays the program's; an image that does not load
 * the library gets nothing held. */
static void test_exec(void)
{
	char preload[] = "LD_PRELOAD=/nonexistent/libprofview-fakehost.so";
	char stale[] = "PROFVIEW_CONTROL_HELD=junk";
	char *with[] = { stale, preload, NULL };
	char *without[] = { "LD_PRELOAD=", NULL };
	char want[128];
	int samp = SIGRTMIN + 3;

	snprintf(want, sizeof(want), "before 1 1 1,%d 1\nafter 0 0 -\n", samp);
	CHECK_STR(exec_report(with, 0, samp), want);
	snprintf(want, sizeof(want), "before 1 1 0,%d 1\nafter 1 0 -\n", samp);
	CHECK_STR(exec_report(with, 1, samp), want);
	CHECK_STR(exec_report(with, 0, 0), "before 1 0 1 1\nafter 0 0 -\n");
	CHECK_STR(exec_report(without, 0, samp), "before 0 0 - 0\nafter 0 0 -\n");
}

/* An exec that fails: the mask as it was, errno the exec's, the
 * library's undo called. */
static void child_exec_fails(void)
{
	char *argv[] = { "nothing", NULL };
	char *env[] = { "LD_PRELOAD=libprofview-fakehost.so", NULL };

	unsetenv(COLLECT_ENV_CONTROL);
	set_default(CTL);
	fakehost_reset();
	control_init(SIGPROF, 0);
	atomic_store(&fakehost_exec_signal, SIGRTMIN + 3);
	errno = 0;
	CHECK_EQ(execve("/nonexistent/nothing", argv, env), -1);
	CHECK_EQ(errno, ENOENT);
	CHECK(!blocked(CTL) && !blocked(SIGRTMIN + 3));
	CHECK_EQ(atomic_load(&fakehost_prepared[0]), 1);
	CHECK_EQ(atomic_load(&fakehost_prepared[1]), 1);
}

static void *helper_returns(void *unused)
{
	return unused;
}

/* A helper thread that cannot start says why (errno), and one that can
 * starts. */
static void child_helper_errors(void)
{
	pthread_t t;

	errno = 0;
	/* a stack no address space holds: pthread_create fails (EAGAIN,
	 * or EINVAL where the size itself is refused) */
	CHECK_EQ(threads_start_helper(&t, helper_returns, "too-big", (size_t)1 << 62, 0), -1);
	CHECK(errno == EAGAIN || errno == ENOMEM || errno == EINVAL);
	CHECK_EQ(threads_start_helper(&t, helper_returns, "fine", 64 << 10, 0), 0);
	CHECK_EQ(pthread_join(t, NULL), 0);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--held-report") == 0)
		return held_report(atoi(argv[2]));
	test_initial();
	in_child("toggle", child_toggle);
	in_child("delay", child_delay);
	in_child("run", child_run);
	in_child("early", child_early);
	in_child("choice", child_choice);
	in_child("program handler", child_program_handler);
	in_child("handler before", child_handler_before);
	in_child("unhold", child_unhold);
	in_child("pending, plain handler", child_pending_plain);
	in_child("pending, siginfo handler", child_pending_siginfo);
	in_child("exec fails", child_exec_fails);
	in_child("helper errors", child_helper_errors);
	test_exec();
	{
		int status = 0;
		pid_t pid = fork();

		if (pid == 0) {
			child_raise();
			_exit(0);
		}
		CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == CTL);
	}
	return check_done("control");
}
