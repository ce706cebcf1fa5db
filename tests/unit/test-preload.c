/* test-preload.c - the preload library (collectors/preload) linked into a
 * host of the test's own, neither libprofview-timer.so nor
 * libprofview-heap.so: its only way to the host is host.h
 *
 * - the trace writer and the stack table write a trace (header, mappings,
 *   stacks, samples by stack id, an end) that formats/raw-iter.c reads
 *   back whole, each stack once under one id;
 * - preload_quiesce waits for the host's handlers_idle, and gives up
 *   after its timeout;
 * - the control thread asks the host to pause until --delay's start,
 *   to resume then, to pause and resume at the control signal (with the
 *   line on stderr that names the host's collector), and to end at the
 *   stop time; it runs as the collector's own work (preload_own_depth).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "collect-env.h"
#include "control.h"
#include "host.h"
#include "mappings.h"
#include "preload.h"
#include "raw-iter.h"
#include "stacktab.h"
#include "writer.h"

/* ---- the fake host ---- */

#define FAKE_CHANGES 16

static struct {
	_Atomic int running;
	/* handlers_idle says 0 this many more times */
	_Atomic int busy_calls;
	_Atomic int idle_calls;
	_Atomic int initial;             /* how control_initial said, or -1 */
	_Atomic int state;               /* as the host's control_apply left it */
	_Atomic int nchanges;
	int changes[FAKE_CHANGES];       /* each state applied, in order */
	uint64_t change_ns[FAKE_CHANGES];
	_Atomic int own_in_apply;        /* preload_own_depth seen in control_apply */
} fake = { .initial = -1, .own_in_apply = -1 };

static int fake_running(void)
{
	return atomic_load(&fake.running);
}

static int fake_handlers_idle(void)
{
	atomic_fetch_add(&fake.idle_calls, 1);
	if (atomic_load(&fake.busy_calls) > 0) {
		atomic_fetch_sub(&fake.busy_calls, 1);
		return 0;
	}
	return 1;
}

static void fake_control_initial(int how)
{
	atomic_store(&fake.initial, how);
	atomic_store(&fake.state, how);
}

static int fake_control_apply(int how)
{
	int n;

	atomic_store(&fake.own_in_apply, preload_own_depth);
	if (atomic_load(&fake.state) == CONTROL_END || atomic_load(&fake.state) == how)
		return 0;
	n = atomic_load(&fake.nchanges);
	if (n < FAKE_CHANGES) {
		fake.changes[n] = how;
		fake.change_ns[n] = preload_now();
		atomic_store(&fake.nchanges, n + 1);
	}
	atomic_store(&fake.state, how);
	return 1;
}

const struct preload_host preload_host = {
	.collector = "fake-collector",
	.library = "libfake-host",
	.running = fake_running,
	.handlers_idle = fake_handlers_idle,
	.control_initial = fake_control_initial,
	.control_apply = fake_control_apply,
	/* control_deferred, exec_prepare and exec_signal: none */
};

/* ---- a trace through the writer and the stack table ---- */

static unsigned char *read_whole(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) != 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 8);
	*len = buf != NULL ? (size_t)read(fd, buf, (size_t)st.st_size) : 0;
	close(fd);
	return buf;
}

static void write_sample(uint32_t stack_id, uint64_t t)
{
	struct raw_sample *s = writer_reserve(sizeof(*s), WRITER_WAIT);

	CHECK(s != NULL);
	if (s == NULL)
		return;
	memset(s, 0, sizeof(*s));
	s->tid = (uint32_t)preload_gettid();
	s->stack_id = stack_id;
	s->time_ns = t;
	s->weight_ns = 1000;
	writer_publish(s, RAW_SAMPLE, sizeof(*s));
}

static int start_trace(const char *path)
{
	struct raw_header h;
	struct raw_arch arch;
	const char *exe = "/fake/exe";

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, RAW_MAGIC, RAW_MAGIC_LEN);
	h.version = RAW_VERSION;
	h.exe_len = (uint32_t)strlen(exe) + 1;
	h.header_size = raw_header_fixed_size(RAW_VERSION) + raw_pad(h.exe_len);
	h.clock = RAW_CLOCK_CPU;
	h.unwind = RAW_UNWIND_CFI;
	h.pid = (uint32_t)getpid();
	h.ppid = (uint32_t)getppid();
	h.period_ns = 1000000;
	h.start_monotonic_ns = preload_now();
	memset(&arch, 0, sizeof(arch));
	arch.machine = RAW_MACHINE_X86_64;
	arch.regs = RAW_REGS_DWARF;
	arch.nregs = RAW_NREGS;
	if (writer_open(path, 1) != 0)
		return -1;
	return writer_init(&h, &arch, exe, 0);
}

/* What the walk over the trace found. */
struct seen {
	enum raw_next stop;
	uint32_t nstacks, nsamples, nmappings, nend;
	uint32_t stack_ids[4];
	uint64_t stack_first[4];
	uint32_t stack_n[4];
	uint32_t sample_ids[8];
	int own_exe_mapped;        /* a mapping of this program's own file */
};

static void walk(const unsigned char *buf, size_t len, const char *self, struct seen *w)
{
	struct raw_head head;
	struct raw_iter it;
	struct raw_record r;

	memset(w, 0, sizeof(*w));
	CHECK_EQ(raw_iter_head(buf, len, &head), RAW_HEAD_OK);
	CHECK_EQ(head.h.pid, getpid());
	CHECK_EQ(head.h.version, RAW_VERSION);
	raw_iter_init(&it, buf, len, head.h.header_size, head.arch.nregs);
	while ((w->stop = raw_iter_next(&it, &r)) == RAW_NEXT_RECORD) {
		if (r.type == RAW_STACK && w->nstacks < 4) {
			struct raw_stack st;

			memcpy(&st, r.data, sizeof(st));
			w->stack_ids[w->nstacks] = st.id;
			w->stack_n[w->nstacks] = st.nframes;
			memcpy(&w->stack_first[w->nstacks], r.data + sizeof(st), sizeof(uint64_t));
			w->nstacks++;
		} else if (r.type == RAW_SAMPLE && w->nsamples < 8) {
			struct raw_sample s;

			raw_sample_get(r.data, r.size, &s);
			w->sample_ids[w->nsamples++] = s.stack_id;
		} else if (r.type == RAW_MAPPING) {
			struct raw_mapping m;

			memcpy(&m, r.data, sizeof(m));
			w->nmappings++;
			if (m.path_len == strlen(self) + 1 &&
			    memcmp(r.data + sizeof(m), self, m.path_len) == 0)
				w->own_exe_mapped = 1;
		} else if (r.type == RAW_END) {
			w->nend++;
		}
	}
}

static void test_trace(const char *dir)
{
	static const uint64_t a[3] = { 0x401000, 0x402000, 0x403000 };
	static const uint64_t b[2] = { 0x501000, 0x502000 };
	char path[4096], self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	uint32_t ida, idb, ida2;
	struct raw_end *end;
	unsigned char *buf;
	size_t len = 0;
	struct seen w;
	int fd;

	self[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "%s/trace.raw", dir);
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY, 0600);
	CHECK(fd >= 0);
	close(fd);
	CHECK_EQ(start_trace(path), 0);
	CHECK_STR(writer_path(), path);
	atomic_store(&fake.running, 1);
	CHECK(mappings_write(0) > 0);
	/* the mappings were the collector's own work, and are done */
	CHECK_EQ(preload_own_depth, 0);
	CHECK_EQ(stacktab_init(), 0);
	ida = stacktab_intern(a, 3);
	idb = stacktab_intern(b, 2);
	ida2 = stacktab_intern(a, 3);
	CHECK(ida != 0 && idb != 0);
	CHECK(ida != idb);
	CHECK_EQ(ida2, ida);
	write_sample(ida, 1);
	write_sample(idb, 2);
	write_sample(ida2, 3);
	end = writer_reserve(sizeof(*end), WRITER_WAIT);
	CHECK(end != NULL);
	if (end != NULL) {
		memset(end, 0, sizeof(*end));
		end->time_ns = preload_now();
		end->samples = 3;
		writer_publish(end, RAW_END, sizeof(*end));
	}
	CHECK_EQ(writer_finish(), 0);
	atomic_store(&fake.running, 0);

	buf = read_whole(path, &len);
	CHECK(buf != NULL);
	if (buf == NULL)
		return;
	walk(buf, len, self, &w);
	/* read whole, up to the end record and no further */
	CHECK_EQ(w.stop, RAW_NEXT_ENDED);
	CHECK_EQ(w.nend, 1);
	CHECK(w.nmappings > 0);
	CHECK(w.own_exe_mapped);
	/* each stack written once, under its id, with its frames */
	CHECK_EQ(w.nstacks, 2);
	CHECK_EQ(w.stack_ids[0], ida);
	CHECK_EQ(w.stack_n[0], 3);
	CHECK_EQ(w.stack_first[0], a[0]);
	CHECK_EQ(w.stack_ids[1], idb);
	CHECK_EQ(w.stack_n[1], 2);
	CHECK_EQ(w.stack_first[1], b[0]);
	CHECK_EQ(w.nsamples, 3);
	CHECK_EQ(w.sample_ids[0], ida);
	CHECK_EQ(w.sample_ids[1], idb);
	CHECK_EQ(w.sample_ids[2], ida);
	free(buf);
	unlink(path);
}

/* ---- the wait for the host's handlers ---- */

static void test_quiesce(void)
{
	uint64_t t0;

	atomic_store(&fake.idle_calls, 0);
	atomic_store(&fake.busy_calls, 3);
	CHECK_EQ(preload_quiesce(10000000000ull, 100000), 0);
	/* busy three times, then idle: four looks */
	CHECK_EQ(atomic_load(&fake.idle_calls), 4);

	atomic_store(&fake.busy_calls, 1 << 30);
	t0 = preload_now();
	CHECK_EQ(preload_quiesce(20000000, 1000000), -1);
	CHECK(preload_now() - t0 >= 20000000);
	atomic_store(&fake.busy_calls, 0);
}

/* ---- the control thread ---- */

/* Waits (10 s at most) until the host has seen n changes. */
static int wait_changes(int n)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; i < 10000 && atomic_load(&fake.nchanges) < n; i++)
		nanosleep(&ms, NULL);
	return atomic_load(&fake.nchanges) >= n;
}

static void set_env_u64(const char *name, uint64_t v)
{
	char s[32];

	snprintf(s, sizeof(s), "%llu", (unsigned long long)v);
	setenv(name, s, 1);
}

static void test_control(const char *dir)
{
	char path[4096], text[4096], want[256];
	struct sigaction dfl;
	uint64_t start, stop;
	int err, saved, fd;
	ssize_t n;

	atomic_store(&fake.running, 1);
	/* --delay: paused until the start, then resumed by the thread */
	start = preload_now() + 30000000;
	set_env_u64(COLLECT_ENV_START_NS, start);
	unsetenv(COLLECT_ENV_CONTROL);
	control_init(0, 0);
	CHECK_EQ(atomic_load(&fake.initial), CONTROL_PAUSE);
	CHECK(control_owns(COLLECT_CONTROL_DEFAULT));
	CHECK_EQ(control_start(), 0);
	CHECK(wait_changes(1));
	CHECK_EQ(fake.changes[0], CONTROL_RESUME);
	CHECK(fake.change_ns[0] >= start);
	/* the thread's work is the collector's own */
	CHECK_EQ(atomic_load(&fake.own_in_apply), 1);

	/* the control signal, sent to the process: pause, then resume, each
	 * said on stderr in the host's name */
	snprintf(path, sizeof(path), "%s/stderr", dir);
	err = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	saved = dup(STDERR_FILENO);
	CHECK(err >= 0 && saved >= 0);
	dup2(err, STDERR_FILENO);
	kill(getpid(), COLLECT_CONTROL_DEFAULT);
	CHECK(wait_changes(2));
	kill(getpid(), COLLECT_CONTROL_DEFAULT);
	CHECK(wait_changes(3));
	dup2(saved, STDERR_FILENO);
	close(saved);
	CHECK_EQ(fake.changes[1], CONTROL_PAUSE);
	CHECK_EQ(fake.changes[2], CONTROL_RESUME);
	control_stop();
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
	text[n > 0 ? n : 0] = '\0';
	if (fd >= 0)
		close(fd);
	close(err);
	unlink(path);
	snprintf(want, sizeof(want), "fake-collector: pid %d (test-preload): sampling paused", (int)getpid());
	CHECK_CONTAINS(text, want);

	/* --duration: the thread ends sampling at the stop time (the control
	 * signal's action back at its default first, as at a new start) */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	CHECK_EQ(control_real_sigaction(COLLECT_CONTROL_DEFAULT, &dfl, NULL), 0);
	unsetenv(COLLECT_ENV_START_NS);
	stop = preload_now() + 30000000;
	control_init(0, stop);
	CHECK_EQ(atomic_load(&fake.initial), CONTROL_RESUME);
	CHECK_EQ(control_start(), 0);
	CHECK(wait_changes(4));
	CHECK_EQ(fake.changes[3], CONTROL_END);
	CHECK(fake.change_ns[3] >= stop);
	control_stop();
	atomic_store(&fake.running, 0);
}

int main(void)
{
	char dir[] = "/tmp/test-preload-XXXXXX";

	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	test_trace(dir);
	test_quiesce();
	test_control(dir);
	rmdir(dir);
	return check_done("preload");
}
