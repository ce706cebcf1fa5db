/* test-gdb.c - the gdb backtrace reader on real and hand-made dumps */
#include "check.h"
#include "error.h"
#include "gdb-read.h"

static int nerrors, nwarnings;
static char last_msg[1024];

static void sink(enum pv_level level, const char *msg)
{
	if (level == PV_LEVEL_ERROR)
		nerrors++;
	else if (level == PV_LEVEL_WARNING)
		nwarnings++;
	snprintf(last_msg, sizeof last_msg, "%s", msg);
}

static struct pv_profile *rd(const char *text)
{
	nerrors = nwarnings = 0;
	last_msg[0] = '\0';
	return gdb_read((const unsigned char *)text, strlen(text), "test");
}

static bool detect(const char *text)
{
	return gdb_detect((const unsigned char *)text, strlen(text));
}

/* "root;...;leaf" of sample i, each frame "function" or "function@line". */
static const char *stack_of(const struct pv_profile *p, size_t i, bool with_lines)
{
	static char buf[4096];
	const struct pv_sample *s = &p->samples[i];
	const uint32_t *locs = pv_sample_locs(p, s);
	size_t n = 0;

	buf[0] = '\0';
	for (uint32_t k = s->nlocs; k-- > 0;) {
		const struct pv_location *l = &p->locations[locs[k]];
		const struct pv_line *lines = pv_location_lines(p, l);
		for (uint32_t j = l->nlines; j-- > 0;) {
			const struct pv_function *f = &p->functions[lines[j].function];
			n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? ";" : "", pv_str(p, f->name));
			if (with_lines && lines[j].line)
				n += (size_t)snprintf(buf + n, sizeof buf - n, "@%lld", (long long)lines[j].line);
		}
	}
	return buf;
}

/* First sample of the thread with this tid, or -1. */
static long sample_of(const struct pv_profile *p, uint32_t tid, size_t nth)
{
	for (size_t i = 0; i < p->nsamples; i++) {
		uint32_t th = p->samples[i].thread;
		if (th != PV_NONE && p->threads[th].tid == tid && nth-- == 0)
			return (long)i;
	}
	return -1;
}

static const char *thread_name(const struct pv_profile *p, uint32_t tid)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid)
			return pv_str(p, p->threads[i].name);
	return NULL;
}

static const struct pv_function *function_named(const struct pv_profile *p, const char *name)
{
	for (size_t i = 0; i < p->nfunctions; i++)
		if (strcmp(pv_str(p, p->functions[i].name), name) == 0)
			return &p->functions[i];
	return NULL;
}

/* gdb 13.1, "thread apply all bt" of a 4-thread program, as -batch prints it. */
static const char real_dump[] =
	"[New LWP 14936]\n"
	"[Thread debugging using libthread_db enabled]\n"
	"Using host libthread_db library \"/lib/x86_64-linux-gnu/libthread_db.so.1\".\n"
	"0x00007f3335118df2 in __libc_pause () at ../sysdeps/unix/sysv/linux/pause.c:29\n"
	"29\t../sysdeps/unix/sysv/linux/pause.c: No such file or directory.\n"
	"\n"
	"Thread 4 (Thread 0x7f333403f6c0 (LWP 14938) \"sleeper\"):\n"
	"#0  0x00007f3335114545 in __GI___clock_nanosleep (clock_id=clock_id@entry=0, flags=flags@entry=0, req=req@entry=0x7f333403eea0, rem=rem@entry=0x0) at ../sysdeps/unix/sysv/linux/clock_nanosleep.c:48\n"
	"#1  0x00007f3335118e53 in __GI___nanosleep (req=req@entry=0x7f333403eea0, rem=rem@entry=0x0) at ../sysdeps/unix/sysv/linux/nanosleep.c:25\n"
	"#2  0x00007f3335144295 in usleep (useconds=useconds@entry=100000) at ../sysdeps/posix/usleep.c:31\n"
	"#3  0x0000564bc174518d in tc (x=<optimized out>) at mt.c:10\n"
	"#4  0x00007f33350ce1f5 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442\n"
	"#5  0x00007f333514e8ec in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81\n"
	"\n"
	"Thread 3 (Thread 0x7f33348406c0 (LWP 14937) \"worker-b\"):\n"
	"#0  0x0000564bc17451fc in spin_b () at mt.c:7\n"
	"#1  0x0000564bc174523f in tb (x=<optimized out>) at mt.c:9\n"
	"#2  0x00007f33350ce1f5 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442\n"
	"#3  0x00007f333514e8ec in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81\n"
	"\n"
	"Thread 2 (Thread 0x7f33350416c0 (LWP 14936) \"worker-a\"):\n"
	"#0  0x0000564bc17451a4 in spin_a () at mt.c:6\n"
	"#1  0x0000564bc17451e7 in ta (x=<optimized out>) at mt.c:8\n"
	"#2  0x00007f33350ce1f5 in start_thread (arg=<optimized out>) at ./nptl/pthread_create.c:442\n"
	"#3  0x00007f333514e8ec in clone3 () at ../sysdeps/unix/sysv/linux/x86_64/clone3.S:81\n"
	"\n"
	"Thread 1 (Thread 0x7f3335042740 (LWP 14934) \"mt\"):\n"
	"#0  0x00007f3335118df2 in __libc_pause () at ../sysdeps/unix/sysv/linux/pause.c:29\n"
	"#1  0x0000564bc1745299 in main () at mt.c:11\n"
	"[Inferior 1 (process 14934) detached]\n";

static void test_real_dump(void)
{
	struct pv_profile *p = rd(real_dump);
	long i;

	CHECK(detect(real_dump));
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(nerrors + nwarnings, 0);
	CHECK_EQ(p->nsamples, 4);
	CHECK_EQ(p->nthreads, 4);
	CHECK_EQ(p->pid, 14934);
	CHECK_STR(pv_str(p, p->source_format), "gdb backtraces");
	CHECK(p->finished);
	CHECK_STR(thread_name(p, 14936), "worker-a");
	CHECK_STR(thread_name(p, 14938), "sleeper");
	CHECK_STR(thread_name(p, 14934), "mt");
	i = sample_of(p, 14936, 0);
	CHECK(i >= 0);
	if (i >= 0)
		CHECK_STR(stack_of(p, (size_t)i, true), "clone3@81;start_thread@442;ta@8;spin_a@6");
	i = sample_of(p, 14938, 0);
	if (i >= 0)
		CHECK_STR(stack_of(p, (size_t)i, false),
			  "clone3;start_thread;tc;usleep;__nanosleep;__clock_nanosleep;" GDB_BLOCKED_FRAME);
	i = sample_of(p, 14934, 0);
	if (i >= 0)
		CHECK_STR(stack_of(p, (size_t)i, false), "main;__libc_pause;" GDB_BLOCKED_FRAME);
	/* one value only: a plain dump carries no time */
	CHECK_EQ(p->nvalues, 1);
	CHECK_EQ(pv_total(p, 0), 4);
	/* every location has its lines: nothing left to symbolize */
	for (size_t k = 0; k < p->nlocations; k++)
		CHECK(p->locations[k].nlines > 0);
	{
		const struct pv_function *f = function_named(p, "spin_a");
		CHECK(f != NULL);
		if (f)
			CHECK_STR(pv_str(p, f->filename), "mt.c");
	}
	CHECK_EQ(pv_profile_validate(p, "test"), 0);
	pv_profile_free(p);
}

/* Headers of other gdb versions and setups. */
static void test_headers(void)
{
	static const char text[] =
		"Thread 5 (Thread 0x7ffff77c4700 (LWP 1235)):\n"
		"#0  0x0000000000401136 in work () at a.c:3\n"
		"Thread 4 (LWP 77 \"lwp-only\"):\n"
		"#0  0x0000000000401136 in work () at a.c:3\n"
		"Thread 3 (Thread 42.43 \"remote\"):\n"
		"#0  0x0000000000401136 in work () at a.c:3\n"
		"Thread 1.2 (Thread 0x7f00 (LWP 9) \"inf \\\"q\\\" name\"):\n"
		"#0  0x0000000000401136 in work () at a.c:3\n"
		"Thread 1 (process 42):\n"
		"#0  0x0000000000401136 in work () at a.c:3\n";
	struct pv_profile *p = rd(text);

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(p->nsamples, 5);
	CHECK(sample_of(p, 1235, 0) >= 0);
	CHECK(sample_of(p, 77, 0) >= 0);
	CHECK(sample_of(p, 43, 0) >= 0);
	CHECK(sample_of(p, 9, 0) >= 0);
	CHECK(sample_of(p, 42, 0) >= 0);
	CHECK_STR(thread_name(p, 77), "lwp-only");
	CHECK_STR(thread_name(p, 43), "remote");
	CHECK_STR(thread_name(p, 9), "inf \\\"q\\\" name");
	CHECK_STR(thread_name(p, 1235), "");
	/* the same address in every thread is one location */
	CHECK_EQ(p->nlocations, 1);
	pv_profile_free(p);
}

/* Frame forms: inlined frames (no address), libraries, unknown frames, a
 * signal frame, C++ names, long and wrapped argument lists. */
static void test_frames(void)
{
	static const char text[] =
		"Thread 1 (Thread 0x7ffff7d8a740 (LWP 100) \"crash\"):\n"
		"#0  __pthread_kill_implementation (no_tid=0, signo=6, threadid=140737351558976) at ./nptl/pthread_kill.c:44\n"
		"#1  __pthread_kill_internal (signo=6, threadid=140737351558976) at ./nptl/pthread_kill.c:78\n"
		"#2  __GI___pthread_kill (threadid=140737351558976, signo=signo@entry=6) at ./nptl/pthread_kill.c:89\n"
		"#3  0x00007ffff7dd8476 in __GI_raise (sig=sig@entry=6) at ../sysdeps/posix/raise.c:26\n"
		"#4  <signal handler called>\n"
		"#5  0x00007ffff7e8a9ab in epoll_wait (epfd=3, events=0x1, maxevents=8, timeout=-1) from /lib/x86_64-linux-gnu/libc.so.6\n"
		"#6  0x0000000000000000 in ?? ()\n"
		"#7  0x0000555555555abc in std::vector<std::pair<int, std::map<int, long> >, std::allocator<std::pair<int, std::map<int, long> > > >::push_back (this=0x7fffffffe0a0, __x=...) at /usr/include/c++/12/bits/stl_vector.h:1283\n"
		"#8  0x0000555555555b00 in Functor<int>::operator() (this=0x7fffffffe0c0, v=std::vector of length 3, capacity 3 = {1, 2, 3}) at f.cc:20\n"
		"#9  0x0000555555555b10 in operator<< <char> (os=..., s=0x5555 \"a (b) at c:1\") at g.cc:30\n"
		"#10 0x0000555555555b20 in (anonymous namespace)::helper (a1=1, a2=2, a3=3, a4=4, a5=5, a6=6, a7=7, a8=8, a9=9, a10=10, a11=11, a12=12, a13=13, a14=14, a15=15, a16=16, a17=17, a18=18, a19=19, a20=20, a21=21, a22=22, a23=23, a24=24, a25=25, a26=26) at h.cc:40\n"
		"#11 0x0000555555555b30 in wrapped (a=1, b=2,\n"
		"    c=3) at w.c:50\n"
		"#12 0x0000555555555b40 in wrapped_at (a=1)\n"
		"    at w.c:60\n"
		"#13 0x00007ffff7b00000 in std::ostream::flush() () from /lib/x86_64-linux-gnu/libstdc++.so.6\n"
		"#14 main () at m.c:7\n"
		"        i = 3\n"
		"        No locals.\n";
	struct pv_profile *p = rd(text);
	const struct pv_function *f;

	CHECK(detect(text));
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(nwarnings + nerrors, 0);
	CHECK_EQ(p->nsamples, 1);
	CHECK_STR(stack_of(p, 0, false),
		  "main;std::ostream::flush();wrapped_at;wrapped;(anonymous namespace)::helper;operator<< <char>;"
		  "Functor<int>::operator();"
		  "std::vector<std::pair<int, std::map<int, long> >, std::allocator<std::pair<int, std::map<int, long> > > >::push_back;"
		  "??;epoll_wait;<signal handler called>;raise;__pthread_kill;__pthread_kill_internal;"
		  "__pthread_kill_implementation");
	CHECK_STR(stack_of(p, 0, true),
		  "main@7;std::ostream::flush();wrapped_at@60;wrapped@50;(anonymous namespace)::helper@40;"
		  "operator<< <char>@30;Functor<int>::operator()@20;"
		  "std::vector<std::pair<int, std::map<int, long> >, std::allocator<std::pair<int, std::map<int, long> > > >::push_back@1283;"
		  "??;epoll_wait;<signal handler called>;raise@26;__pthread_kill@89;__pthread_kill_internal@78;"
		  "__pthread_kill_implementation@44");
	/* The three pthread_kill frames (no address) are one location, innermost first. */
	{
		const uint32_t *locs = pv_sample_locs(p, &p->samples[0]);
		const struct pv_location *leaf = &p->locations[locs[0]];
		const struct pv_location *raise = &p->locations[locs[1]];
		CHECK_EQ(leaf->nlines, 3);
		CHECK_STR(pv_str(p, p->functions[pv_location_lines(p, leaf)[0].function].name),
			  "__pthread_kill_implementation");
		CHECK_EQ(raise->nlines, 1);
		/* a caller: inside its call, one byte before the
		 * return address gdb printed */
		CHECK_EQ(raise->address, 0x00007ffff7dd8475ULL);
		/* main, printed without an address, counts as inlined into
		 * the frame before it: 15 frames in 12 locations */
		CHECK_EQ(p->samples[0].nlocs, 12);
	}
	f = function_named(p, "epoll_wait");
	CHECK(f != NULL);
	if (f)
		CHECK_STR(pv_str(p, f->filename), "/lib/x86_64-linux-gnu/libc.so.6");
	f = function_named(p, "wrapped_at");
	if (f)
		CHECK_STR(pv_str(p, f->filename), "w.c");
	/* the leaf is not a blocking call: no [blocked] frame */
	CHECK(function_named(p, GDB_BLOCKED_FRAME) == NULL);
	CHECK_EQ(pv_profile_validate(p, "test"), 0);
	pv_profile_free(p);
}

/* Inlined frames that do print an address share it with their caller. */
static void test_inline_same_pc(void)
{
	static const char text[] =
		"#0  0x0000555555555140 in mix_step (h=1, v=2) at i.c:14\n"
		"#1  0x0000555555555140 in mix_round (h=1) at i.c:21\n"
		"#2  hash_block (v=0x1, n=256) at i.c:29\n"
		"#3  0x00005555555550e2 in main () at i.c:57\n";
	struct pv_profile *p = rd(text);

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(p->nsamples, 1);
	CHECK_EQ(p->samples[0].nlocs, 2);
	CHECK_EQ(p->locations[pv_sample_locs(p, &p->samples[0])[0]].nlines, 3);
	CHECK_STR(stack_of(p, 0, false), "main;hash_block;mix_round;mix_step");
	/* without a thread header: one anonymous thread */
	CHECK_EQ(p->nthreads, 1);
	pv_profile_free(p);
}

/* A dump cut off in the middle of a line. */
static void test_cut(void)
{
	static const char cut_in_args[] =
		"Thread 2 (Thread 0x7f (LWP 11) \"w\"):\n"
		"#0  0x0000000000401136 in leaf () at a.c:3\n"
		"#1  0x0000000000401150 in middle (a=1, b=";
	static const char cut_in_name[] =
		"Thread 2 (Thread 0x7f (LWP 11) \"w\"):\n"
		"#0  0x0000000000401136 in leaf () at a.c:3\n"
		"#1  0x0000000000401150 in midd";
	struct pv_profile *p = rd(cut_in_args);

	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(nwarnings, 1);
		CHECK_CONTAINS(last_msg, "cut off");
		CHECK_EQ(p->nsamples, 1);
		CHECK_STR(stack_of(p, 0, false), "middle;leaf");
		CHECK(p->samples[0].flags & PV_SAMPLE_TRUNCATED);
		CHECK_EQ(p->truncated, 1);
		CHECK(!p->finished);
		pv_profile_free(p);
	}
	p = rd(cut_in_name);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(nwarnings, 1);
		CHECK_STR(stack_of(p, 0, false), "leaf");
		CHECK(p->samples[0].flags & PV_SAMPLE_TRUNCATED);
		pv_profile_free(p);
	}
	/* every prefix of a real dump reads or fails cleanly */
	for (size_t n = 1; n < sizeof real_dump - 1; n++) {
		struct pv_profile *q = gdb_read((const unsigned char *)real_dump, n, "prefix");
		if (q) {
			CHECK_EQ(pv_profile_validate(q, "prefix"), 0);
			pv_profile_free(q);
		}
	}
}

/* Dumps pasted one after another: a thread seen again starts a snapshot. */
static void test_concatenated(void)
{
	static const char text[] =
		"Thread 2 (Thread 0x7f (LWP 11) \"a\"):\n"
		"#0  0x0000000000401136 in f () at a.c:3\n"
		"Thread 1 (Thread 0x7e (LWP 10) \"m\"):\n"
		"#0  0x0000000000401200 in g () at a.c:9\n"
		"\n"
		"Thread 2 (Thread 0x7f (LWP 11) \"a\"):\n"
		"#0  0x0000000000401136 in f () at a.c:3\n"
		"Thread 1 (Thread 0x7e (LWP 10) \"m\"):\n"
		"#0  0x0000000000401300 in h () at a.c:12\n"
		"Backtrace stopped: previous frame inner to this frame (corrupt stack?)\n";
	struct pv_profile *p = rd(text);

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(p->nsamples, 4);
	CHECK_EQ(p->nthreads, 2);
	CHECK(sample_of(p, 11, 1) >= 0);
	CHECK(sample_of(p, 10, 1) >= 0);
	CHECK_EQ(p->truncated, 1);
	CHECK(p->samples[3].flags & PV_SAMPLE_TRUNCATED);
	pv_profile_free(p);
}

/* The weights collect-gdb writes ("# weight-ns:") are what the samples
 * weigh, whatever the times say; glibc's hidden aliases are shown by the
 * name they alias, and keep gdb's as their system name. */
static void test_weights_names(void)
{
	struct pv_profile *p = rd(
		"# profview-gdb 1\n# interval-ns: 100000000\n# start: 1700000000.0\n"
		"# snapshot: 1 1700000000.1\n# weight-ns: 100000000\n"
		"Thread 1 (LWP 5):\n#0  0x00007f00000010 in __GI___libc_write (fd=1) at write.c:26\n"
		"#1  0x0000000000401300 in main () at s.c:20\n"
		"# snapshot: 2 1700000001.27\n# weight-ns: 70000000\n"
		"Thread 1 (LWP 5):\n#0  0x00007f00000020 in __GI_fdatasync (fd=3) at fdatasync.c:28\n"
		"#1  0x0000000000401300 in main () at s.c:20\n"
		"# snapshot: 3 1700000001.37\n# weight-ns: 95000000\n"
		"Thread 1 (LWP 5):\n#0  0x00007f00000030 in __GI_ () at x.c:1\n"
		"#1  0x0000000000401300 in main () at s.c:20\n"
		"# end: 1700000001.4 count\n");
	uint32_t wall;

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(nwarnings + nerrors, 0);
	wall = pv_find_value_type(p, "wall");
	CHECK(wall != PV_NONE);
	CHECK_EQ(p->nsamples, 3);
	if (wall != PV_NONE && p->nsamples == 3) {
		CHECK_EQ(p->samples[0].values[wall], 100000000);
		CHECK_EQ(p->samples[1].values[wall], 70000000);
		CHECK_EQ(p->samples[2].values[wall], 95000000);
	}
	CHECK_STR(stack_of(p, 0, false), "main;__libc_write");
	CHECK_STR(stack_of(p, 1, false), "main;fdatasync");
	/* "__GI_" alone names nothing else */
	CHECK_STR(stack_of(p, 2, false), "main;__GI_");
	for (size_t i = 0; i < p->nfunctions; i++)
		if (strcmp(pv_str(p, p->functions[i].name), "fdatasync") == 0)
			CHECK_STR(pv_str(p, p->functions[i].system_name), "__GI_fdatasync");
	pv_profile_free(p);
}

/* A collect-gdb trace: header, timestamps, wall time per sample. */
static void test_trace(void)
{
	static const char text[] =
		"# profview-gdb 1\n"
		"# pid: 4242\n"
		"# program: /opt/app/server\n"
		"# mode: persistent\n"
		"# interval-ns: 100000000\n"
		"# start: 1700000000.000000000\n"
		"# dumper: GNU gdb (Debian 13.1-3) 13.1\n"
		"# some-future-key: ignored\n"
		"# snapshot: 1 1700000000.100000000\n"
		"Thread 2 (Thread 0x7f (LWP 4243) \"worker\"):\n"
		"#0  0x0000000000401136 in crunch () at s.c:3\n"
		"#1  0x0000000000401150 in worker () at s.c:9\n"
		"Thread 1 (Thread 0x7e (LWP 4242) \"server\"):\n"
		"#0  0x00007f0000001000 in __futex_abstimed_wait_common64 (private=0) at futex-internal.c:57\n"
		"#1  0x00007f0000002000 in __pthread_cond_wait (cond=0x1) at pthread_cond_wait.c:503\n"
		"#2  0x0000000000401300 in main () at s.c:20\n"
		"# snapshot: 2 1700000000.350000000\n"
		"Thread 2 (Thread 0x7f (LWP 4243) \"worker\"):\n"
		"#0  0x0000000000401136 in crunch () at s.c:3\n"
		"#1  0x0000000000401150 in worker () at s.c:9\n"
		"# end: 1700000000.400000000 exited\n";
	struct pv_profile *p = rd(text);
	uint32_t wall;

	CHECK(detect(text));
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_EQ(nwarnings + nerrors, 0);
	CHECK_EQ(p->pid, 4242);
	CHECK_STR(pv_str(p, p->program), "/opt/app/server");
	CHECK(p->finished);
	CHECK_EQ(p->time_ns, 1700000000000000000LL);
	CHECK_EQ(p->duration_ns, 400000000);
	CHECK_EQ(p->period, 100000000);
	CHECK_STR(pv_str(p, p->period_type.type), "wall");
	CHECK_EQ(p->nsamples, 3);
	wall = pv_find_value_type(p, "wall");
	CHECK(wall != PV_NONE);
	if (wall != PV_NONE) {
		/* first snapshot: the interval; then the time since the
		 * previous one (250 ms), at most two intervals */
		CHECK_EQ(p->samples[0].values[wall], 100000000);
		CHECK_EQ(p->samples[1].values[wall], 100000000);
		CHECK_EQ(p->samples[2].values[wall], 200000000);
	}
	CHECK_STR(stack_of(p, 1, false),
		  "main;__pthread_cond_wait;__futex_abstimed_wait_common64;" GDB_BLOCKED_FRAME);
	CHECK_STR(stack_of(p, 2, false), "worker;crunch");
	pv_profile_free(p);

	/* without its end line the trace is read with a warning */
	{
		char cut[sizeof text];
		const char *end = strstr(text, "# end:");
		memcpy(cut, text, (size_t)(end - text));
		cut[end - text] = '\0';
		p = rd(cut);
		CHECK(p != NULL);
		if (p) {
			CHECK_EQ(nwarnings, 1);
			CHECK_CONTAINS(last_msg, "not finished");
			CHECK(!p->finished);
			CHECK_EQ(p->nsamples, 3);
			CHECK_EQ(p->duration_ns, 450000000);
			pv_profile_free(p);
		}
	}
	/* a trace with no snapshot at all is an empty profile, not an error */
	p = rd("# profview-gdb 1\n# pid: 1\n# interval-ns: 1000\n# end: 5.0 error\n");
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 0);
		pv_profile_free(p);
	}
}

/* Numbers of a damaged header: no overflow, no negative time. */
static void test_header_numbers(void)
{
	static const char snap[] = "Thread 1 (LWP 5 \"a\"):\n#0  main () at a.c:1\n";
	size_t n = 10000, len = 0, cap = 256 + n * sizeof snap;
	char *text = malloc(cap);
	struct pv_profile *p;
	uint32_t wall;

	if (!text)
		return;
	/* An interval of 31 years: ignored, with a warning. */
	len = (size_t)snprintf(text, cap, "# profview-gdb 1\n# interval-ns: 999999999999999999\n");
	for (int i = 0; i < 12; i++)
		len += (size_t)snprintf(text + len, cap - len, "%s", snap);
	p = rd(text);
	CHECK(p != NULL);
	if (p) {
		CHECK(p->duration_ns >= 0);
		CHECK_EQ(p->nsamples, 12);
		CHECK_EQ(nwarnings, 2); /* the interval, and no end line */
		CHECK(pv_find_value_type(p, "wall") == PV_NONE);
		pv_profile_free(p);
	}
	p = rd("# profview-gdb 1\n# interval-ns: 99999999999999999999999\n# end: 1.0 count\n");
	CHECK(p != NULL);
	CHECK_EQ(nwarnings, 1);
	CHECK_CONTAINS(last_msg, "line 2: interval-ns '99999999999999999999999'");
	pv_profile_free(p);

	/* The longest interval there can be, times 10000 snapshots: more
	 * than INT64_MAX nanoseconds, so the duration stops there. */
	len = (size_t)snprintf(text, cap, "# profview-gdb 1\n# interval-ns: 1000000000000000\n");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(text + len, cap - len, "%s", snap);
	p = rd(text);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, n);
		CHECK_EQ(p->duration_ns, INT64_MAX);
		wall = pv_find_value_type(p, "wall");
		CHECK(wall != PV_NONE);
		if (wall != PV_NONE)
			CHECK(pv_total(p, wall) > 0);
		pv_profile_free(p);
	}
	free(text);

	/* Snapshots 250 years apart, two threads each: the late one weighs
	 * two intervals, not 250 years. */
	p = rd("# profview-gdb 1\n# interval-ns: 1000\n# start: 1.0\n"
	       "# snapshot: 1 1.0\n"
	       "Thread 1 (LWP 5):\n#0  main () at a.c:1\nThread 2 (LWP 6):\n#0  main () at a.c:1\n"
	       "# snapshot: 2 8000000000.0\n"
	       "Thread 1 (LWP 5):\n#0  main () at a.c:1\nThread 2 (LWP 6):\n#0  main () at a.c:1\n"
	       "# end: 8000000001.0 count\n");
	CHECK(p != NULL);
	if (p) {
		wall = pv_find_value_type(p, "wall");
		CHECK_EQ(nwarnings + nerrors, 0);
		CHECK_EQ(p->nsamples, 4);
		CHECK_EQ(p->duration_ns, 8000000000000000000LL);
		CHECK(wall != PV_NONE);
		if (wall != PV_NONE) {
			CHECK_EQ(p->samples[2].values[wall], 2000);
			CHECK_EQ(p->samples[3].values[wall], 2000);
			CHECK(pv_total(p, wall) > 0);
		}
		pv_profile_free(p);
	}

	/* Frame numbers and lines past 64 bits. */
	p = rd("Thread 1 (LWP 5):\n"
	       "#9223372036854775807 0x1000 in inner () at a.c:99999999999999999999\n"
	       "#9223372036854775808 0x2000 in middle () at a.c:2\n"
	       "#99999999999999999999 0x3000 in outer () at a.c:3\n");
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ(p->nsamples, 1);
		CHECK_STR(stack_of(p, 0, true), "outer@3;middle@2;inner");
		pv_profile_free(p);
	}
}

static void test_detect_and_errors(void)
{
	struct pv_profile *p;

	CHECK(detect("#0  main () at a.c:3\n"));
	CHECK(detect("some text\r\n#0  0x0000000000401136 in main () at a.c:3\r\n"));
	CHECK(detect("#1  <signal handler called>\n"));
	CHECK(!detect("main;f;g 42\nmain;f 3\n"));
	CHECK(!detect("# a comment\n#include <stdio.h>\n"));
	CHECK(!detect("#0 is a number\n"));
	CHECK(!detect("PROFVIEW\0\1\2\3#0  main () at a.c:3\n"));
	CHECK(!detect(""));

	p = rd("hello\nworld\n");
	CHECK(p == NULL);
	CHECK_EQ(nerrors, 1);
	CHECK_CONTAINS(last_msg, "no backtrace");
	CHECK_CONTAINS(last_msg, "'test'");
}

static void test_blocking_names(void)
{
	static const char *const yes[] = {
		"__GI___clock_nanosleep", "__libc_pause", "__GI___poll", "epoll_wait",
		"__futex_abstimed_wait_common64", "futex_wait", "__GI___libc_read", "__libc_accept",
		"pthread_cond_wait", "__pthread_cond_wait", "__lll_lock_wait", "syscall",
		"__select", "__GI___nanosleep", "__recvmsg_nocancel", "do_futex_wait",
	};
	static const char *const no[] = {
		"spin_a", "main", "readdir", "pthread_create", "memcpy", "futex", "__GI_raise", "",
	};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		CHECK(gdb_is_blocking_function(yes[i], strlen(yes[i])));
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		CHECK(!gdb_is_blocking_function(no[i], strlen(no[i])));
}

int main(void)
{
	test_weights_names();
	pv_error_set_sink(sink);
	test_real_dump();
	test_headers();
	test_frames();
	test_inline_same_pc();
	test_cut();
	test_concatenated();
	test_trace();
	test_header_numbers();
	test_detect_and_errors();
	test_blocking_names();
	return check_done("test-gdb");
}
