#!/usr/bin/env bash
# The collector's unwind tables are made lazily, as walks need them, and
# what the collector costs is said, not charged to the program:
# (a) a plugin loaded with dlopen and spun in, by a program run at the end
#     of a fork and exec chain: every sample in the plugin's hot function
#     has the whole call chain through the plugin (whose rows, and the
#     program's, were made in the signal handler when first needed);
# (b) many short processes: collect-timer's summary says the collector's
#     own CPU time, no less than what the joined trace's collector records
#     say, which is what profview's header says, and no more than the
#     run's CPU time;
# (c) no function of the preload library is in any profile;
# (d) a chain of 60 execs in one process: every image's trace is in the
#     run, each under the same pid, and the run is one process;
# (e) a process that waits while others start and end has no control
#     thread, which their ends would wake;
# (f) what each process pays to start: the library is two segments (two
#     mappings) to load, bound at once; no process reads /proc/self/maps at its start
#     (the loader's objects; a fork child its parent's records) nor at a
#     dlopen (the loader's new objects), no process reads the boot id (the launcher's),
#     and none reads /proc/self/task when it has made no thread;
# (h) the pages a process's start writes: a program that says how many
#     page faults it took before its main, alone and as a child under
#     collect-timer (the least of five runs each), takes at most 44 more
#     there (some 35: the loader's work, the library's small variables on
#     a few pages, its large tables untouched until samples fill them;
#     50 before those shared pages);
# (g) what a sampled process pays at its end: one whose every sample is
#     in the loader's objects reads no maps then, one that runs code it
#     wrote into an anonymous mapping reads them, and its samples there
#     are marked as such;
# (i) the unwind rows a process makes are the run's: of eight processes
#     of the same program, one after the other, the first makes the rows
#     of the functions they all run, and the others none but for those of
#     code the first was never sampled in (each would make its own without
#     the share).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

lib=$(dirname "$COLLECT_TIMER")/libprofview-timer.so
[ -f "$lib" ] || fail "no preload library next to collect-timer: '$lib'"

# No frame pointers anywhere: only the CFI tables unwind these.
"$CC" -O2 -g -fomit-frame-pointer -fPIC -shared -o plugin.so "$SRCDIR/tests/progs/plugin.c" ||
	fail "cannot build plugin.so"
"$CC" -O2 -g -fomit-frame-pointer -o plugin-host "$SRCDIR/tests/progs/plugin-host.c" -ldl ||
	fail "cannot build plugin-host"
"$CC" -O2 -g -o forkexec "$SRCDIR/tests/progs/forkexec.c" || fail "cannot build forkexec"

# (a) the program at the end of a fork, fork, exec chain
"$COLLECT_TIMER" -q -o chain.raw ./forkexec - ./plugin-host ./plugin.so 1 >/dev/null ||
	fail "collect-timer failed"
"$PROFVIEW" --folded chain.raw >chain.folded || fail "profview failed"
# (folded stacks weigh CPU time; the flat profile counts samples)
"$PROFVIEW" --flat chain.raw >chain.txt || fail "profview failed"
hot=$(awk '$1 ~ /;plugin_hot$/ || $1 ~ /^plugin_hot$/ { n += $NF } END { print n + 0 }' chain.folded)
whole=$(awk '$1 ~ /(^|;)main;run_plugin;plugin_entry;plugin_hot$/ { n += $NF } END { print n + 0 }' chain.folded)
samples=$(flat_self chain.txt plugin_hot)
note "chain: $samples samples in plugin_hot; of their CPU time, $whole of $hot with main;run_plugin;plugin_entry;plugin_hot"
# 1 s of CPU at 250 Hz: some 250 samples; fewer than 50 is beyond chance
[ "$samples" -ge 50 ] || fail "too few samples in plugin_hot: $samples; $(head -12 chain.txt)"
[ "$whole" = "$hot" ] ||
	fail "samples in plugin_hot without the whole chain: $(grep 'plugin_hot ' chain.folded | grep -v 'main;run_plugin;plugin_entry;plugin_hot ' | head -3)"
# the walk was the collector's own (cfi), not the analyzer's of a stack copy
"$COLLECT_TIMER" -q --stats -o stats.raw ./forkexec ./plugin-host ./plugin.so 0.5 >/dev/null 2>stats.err ||
	fail "collect-timer --stats failed"
line=$(grep 'handler: [1-9][0-9]* samples' stats.err | sort -t' ' -k4 -n | tail -1)
note "${line:-no handler line}"
cfi=$(echo "$line" | sed -n 's/.*cfi unwound \([0-9]*\), fell back to the stack copy \([0-9]*\).*/\1 \2/p')
[ -n "$cfi" ] || fail "no cfi statistics from the plugin's process: $(cat stats.err)"
set -- $cfi
# a walk takes the stack copy only when it meets rows another is making:
# at most a few of 125
[ "$1" -ge 25 ] && [ "$2" -le $(($1 / 10)) ] ||
	fail "the collector unwound $1 samples and fell back for $2"

# (b) many short processes
"$COLLECT_TIMER" -o short.raw sh -c 'i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i + 1)); done' \
	>/dev/null 2>short.err || fail "collect-timer failed on short processes"
said=$(grep '^collect-timer: collector: ' short.err) ||
	fail "no collector line in the summary: $(tail -4 short.err)"
note "$said"
# "41.2 ms" as nanoseconds; "half" as the half of its last digit
ns() {
	awk -v v="$1" -v u="$2" -v half="${3:-}" 'BEGIN {
		m = u == "s" ? 1e9 : u == "ms" ? 1e6 : (u == "us" || u == "µs") ? 1e3 : 1
		d = index(v, ".") ? length(v) - index(v, ".") : 0
		printf "%.0f\n", half ? m * 10 ^ -d / 2 : v * m }'
}
read -r v u <<<"$(echo "$said" | sed -n 's/^collect-timer: collector: \([0-9.]*\) \([mµun]*s\) of CPU (\([0-9.]*\)%).*/\1 \2/p')"
[ -n "$v" ] || fail "the collector line does not say its CPU time: $said"
summary_ns=$(ns "$v" "$u")
records_ns=$("$RAWDUMP" short.raw | awk '/^collector / { n += $2 + $3 + $4 + $5 + $7 } END { printf "%.0f\n", n }')
"$PROFVIEW" --flat short.raw >short.txt || fail "profview failed"
header=$(grep '^collector: .* in its own start' short.txt || true)
note "profview: ${header:-no collector line}; records: $records_ns ns; summary: $summary_ns ns"
[ "$records_ns" -gt 0 ] || fail "no collector records in the joined trace"
# the summary counts the processes that had no sample too, whose traces
# are not joined
awk -v s="$summary_ns" -v r="$records_ns" -v h="$(ns "$v" "$u" half)" 'BEGIN { exit !(s + h >= r) }' ||
	fail "the summary says less than the records: $summary_ns < $records_ns ns"
if [ -n "$header" ]; then
	read -r hv hu <<<"$(echo "$header" | sed -n 's/^collector: \([0-9.]*\) \([mµun]*s\) of CPU.*/\1 \2/p')"
	awk -v h="$(ns "$hv" "$hu")" -v d="$(ns "$hv" "$hu" half)" -v r="$records_ns" \
		'BEGIN { exit !(h - r <= d + 1 && r - h <= d + 1) }' ||
		fail "profview's header says $hv $hu where the records say $records_ns ns"
fi
TIMEFORMAT='%3U %3S'
run_cpu=$({ time "$COLLECT_TIMER" -q -o again.raw sh -c 'i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i + 1)); done' >/dev/null 2>&1; } 2>&1 | awk '{ printf "%.0f\n", ($1 + $2) * 1e9 }')
awk -v s="$summary_ns" -v c="$run_cpu" 'BEGIN { exit !(s < c) }' ||
	fail "the collector's CPU time ($summary_ns ns) is more than a whole run's ($run_cpu ns)"

# (d) each image of a chain of execs has a trace of its own (named after
# the pid and a number: found by a search, not by trying every name)
"$CC" -O2 -o selfexec "$SRCDIR/scripts/bench/selfexec.c" || fail "cannot build selfexec"
"$COLLECT_TIMER" -o execs.raw ./selfexec 60 >/dev/null 2>execs.err ||
	fail "collect-timer failed on an exec chain: $(cat execs.err)"
"$RAWDUMP" execs.raw >execs.txt || fail "rawdump failed on the exec chain's run"
parts=$(grep -c '^part ' execs.txt || true)
pids=$(awk '$1 == "part" { print $2 }' execs.txt | sort -u | wc -l)
note "exec chain: $parts parts, $pids pid(s)"
[ "$parts" = 61 ] || fail "the run of 61 images has $parts parts"
[ "$pids" = 1 ] || fail "the images of one process are under $pids pids"
[ -z "$(ls | grep '^execs\.[0-9]')" ] || fail "traces left beside the run: $(ls | grep '^execs\.' | head -3)"
grep -q '^collect-timer: 1 process, ' execs.err || fail "the exec chain is not one process: $(cat execs.err)"

# (e) a process of one thread (with its perf event) that waits while 300
# others start and end has no control thread (were there one, its wakes by
# the others' ends would be counted)
cat >ctlwatch.c <<'EOC'
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct timespec step = { 0, 5000000 };
	double t0 = now();
	char path[300], line[256];
	struct dirent *d;
	DIR *dir;

	while (argc > 1 && access(argv[1], F_OK) != 0 && now() - t0 < 120)
		nanosleep(&step, NULL);
	dir = opendir("/proc/self/task");
	while (dir != NULL && (d = readdir(dir)) != NULL) {
		long wakes = -1;
		int ctl = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/task/%s/status", d->d_name);
		if (d->d_name[0] == '.' || (f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL) {
			ctl |= strcmp(line, "Name:\tprofview-ctl\n") == 0;
			sscanf(line, "voluntary_ctxt_switches: %ld", &wakes);
		}
		fclose(f);
		if (ctl)
			printf("control %ld %.3f\n", wakes, now() - t0);
	}
	return 0;
}
EOC
"$CC" -O1 -o ctlwatch ctlwatch.c || fail "cannot compile ctlwatch.c"
"$COLLECT_TIMER" -q -o wakes.raw sh -c './ctlwatch ends.done & w=$!; i=0
	while [ $i -lt 300 ]; do /bin/true; i=$((i + 1)); done; touch ends.done; wait $w' >wakes.txt ||
	fail "collect-timer failed on the wakes run"
if grep -q '^control ' wakes.txt; then
	read -r _ wakes secs <<<"$(grep '^control ' wakes.txt)"
	fail "the waiting process has a control thread, woken $wakes times in $secs s"
fi

# (f) the library's loadable segments: code and read-only data in one
readelf -lW "$lib" >segments.txt || fail "readelf cannot read '$lib'"
loads=$(grep -c '^ *LOAD ' segments.txt || true)
note "the preload library: $loads loadable segments"
[ "$loads" -le 2 ] || fail "the preload library has $loads loadable segments: $(grep '^ *LOAD ' segments.txt)"
# (f) its calls into libc bound when it is loaded, not through the
# loader's trampoline at each one's first call
readelf -dW "$lib" >dynamic.txt || fail "readelf cannot read '$lib'"
grep -Eq '\(FLAGS_1\).*\bNOW\b|\(FLAGS\).*\bBIND_NOW\b' dynamic.txt ||
	fail "the preload library is bound lazily: $(grep -E 'FLAGS' dynamic.txt)"
# (f) the /proc files each process reads at its start: with sampling
# delayed (no sample, so no process reads its maps again at its end), a
# shell that forks twice and then execs a program, and that program, read
# no maps (their start lists the loader's objects; the forks' children
# write their parent's records)
if ! command -v strace >/dev/null; then
	note "strace is missing (apt-get install strace): the check of the files read at start is skipped"
else
	"$COLLECT_TIMER" -q --delay=60 -o procs.raw strace -f -e trace=open,openat -o procs.st \
		bash -c '(exit 0); (exit 0) & wait; /bin/true' || fail "collect-timer failed on the fork run"
	maps=$(grep -c '"/proc/self/maps"' procs.st || true)
	boot=$(grep -c 'random/boot_id"' procs.st || true)
	task=$(grep -c '"/proc/self/task"' procs.st || true)
	note "two images and two fork children read the maps $maps times, the boot id $boot, /proc/self/task $task"
	[ "$maps" = 0 ] || fail "the maps read $maps times at the processes' start: $(grep maps procs.st | head -3)"
	[ "$boot" = 0 ] || fail "the boot id read by the processes: $(grep boot_id procs.st | head -3)"
	[ "$task" = 0 ] || fail "/proc/self/task read by processes of one thread: $(grep task procs.st | head -3)"
	# a dlopen writes the new object's records from the loader's list too
	"$COLLECT_TIMER" -q --delay=60 -o dl.raw strace -f -e trace=open,openat -o dl.st \
		./plugin-host "$WORK/plugin.so" 0.05 >/dev/null || fail "collect-timer failed on the dlopen run"
	grep -q 'plugin\.so"' dl.st || fail "the dlopen run opened no plugin.so: $(tail -3 dl.st)"
	maps=$(grep -c '"/proc/self/maps"' dl.st || true)
	note "a program that loads a library with dlopen read the maps $maps times"
	[ "$maps" = 0 ] || fail "the maps read $maps times by a program's dlopen"
fi

# (h) the page faults of a start
cat >faults.c <<'EOF'
#include <stdio.h>
#include <sys/resource.h>
int main(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	printf("%ld\n", ru.ru_minflt);
	return 0;
}
EOF
"$CC" -O2 -o faults faults.c || fail "cannot build faults"
runs='for i in 1 2 3 4 5; do ./faults; done'
alone=$(sh -c "$runs" | sort -n | head -1)
under=$("$COLLECT_TIMER" -q -o faults.raw sh -c "$runs" | sort -n | head -1) ||
	fail "collect-timer failed on the faults run"
note "page faults before main: $alone alone, $under under collect-timer"
[ -n "$alone" ] && [ -n "$under" ] || fail "no count of page faults: '$alone' '$under'"
[ $((under - alone)) -le 44 ] ||
	fail "a start under collect-timer takes $((under - alone)) page faults more than alone ($under, $alone)"

# (g) the maps at a sampled process's end: only for an address the start
# did not write.  A program that spins in its own function (its walks all
# in the program, libc and the vDSO) and the JIT program, each sampled
# some 50 times.
if command -v strace >/dev/null; then
	cat >spin.c <<'EOF'
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
static double cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
static void __attribute__((noinline)) spin_work(void)
{
	for (int i = 0; i < 100000; i++)
		sink += (unsigned long)i * i;
}
int main(int argc, char **argv)
{
	double s = argc > 1 ? atof(argv[1]) : 0.2;
	while (cpu() < s)
		spin_work();
	return 0;
}
EOF
	"$CC" -O2 -g -o spin spin.c || fail "cannot build spin"
	"$CC" -O2 -g -fno-omit-frame-pointer -o jit "$SRCDIR/tests/progs/jit.c" || fail "cannot build jit"
	"$COLLECT_TIMER" -q -o spin.raw strace -f -e trace=openat -o spin.st ./spin 0.2 ||
		fail "collect-timer failed on spin"
	"$COLLECT_TIMER" -q -o jit.raw strace -f -e trace=openat -o jit.st ./jit 0.2 frames >/dev/null ||
		fail "collect-timer failed on jit"
	"$PROFVIEW" --folded spin.raw >spin.folded || fail "profview failed on spin.raw"
	"$PROFVIEW" --folded jit.raw >jit.folded || fail "profview failed on jit.raw"
	grep -q ';spin_work ' spin.folded || fail "spin: no sample in spin_work: $(head -3 spin.folded)"
	maps=$(grep -c '"/proc/self/maps"' spin.st || true)
	note "a sampled process of the loader's objects only read the maps $maps times"
	# (once at most: at its end, when a sample came at an address in no
	# mapping written, the vdso's say, which depends on where it landed)
	[ "$maps" -le 1 ] || fail "spin: the maps read $maps times: $(grep maps spin.st | head -3)"
	maps=$(grep -c '"/proc/self/maps"' jit.st || true)
	anon=$(awk '/;main;\[anon\]/ { t += $NF } END { print t + 0 }' jit.folded)
	note "a sampled process that runs JIT code read the maps $maps times, $anon µs in [anon] under main"
	[ "$maps" -ge 1 ] || fail "jit: the maps not read at the end"
	[ "$anon" -gt 0 ] || fail "jit: no sample in [anon] under main: $(sort -t' ' -k2 -n jit.folded | tail -3)"
fi

# (c) none of the library's functions in any profile
# (not _init and _fini, which every object has: a sample in a plugin's
# _init, as dlopen runs it, is the plugin's)
nm --defined-only "$lib" | awk '$2 ~ /^[tTwW]$/ && $3 != "_init" && $3 != "_fini" { print $3 }' |
	sort -u >libfns.txt
[ -s libfns.txt ] || fail "no function names in '$lib'"
for t in chain.raw stats.raw short.raw; do
	"$PROFVIEW" --folded "$t" | sed 's/ [0-9]*$//' | tr ';' '\n' | sort -u >frames.txt
	own=$(grep -Fxf libfns.txt frames.txt || true)
	[ -z "$own" ] || fail "$t: the preload library's functions in the profile: $(echo "$own" | head -5 | tr '\n' ' ')"
done

# (i) eight runs of the same program, the first of 1 s of CPU (some 250
# samples), the others of 0.3 s: the processes that made rows, from each
# image's thread name and collector record ("collector START TABLES
# HANDLER END ROWS HELPERS").  Every run makes the rows of the functions
# every sample walks through unless the share has them: without it all
# eight make some.  With it, a later run makes some only when a sample
# meets code no earlier one was sampled in (its start or its end), which
# about 1 in 9 does (16 of 140 later runs): 6 or 7 of the 7 later ones
# doing so has a chance near 1e-5.
"$COLLECT_TIMER" -q -o shared.raw sh -c './plugin-host ./plugin.so 1
	for i in 1 2 3 4 5 6 7; do ./plugin-host ./plugin.so 0.3; done' \
	>/dev/null || fail "collect-timer failed on the eight runs"
made=$("$RAWDUMP" shared.raw | awk '$1 == "thread" { name = $NF }
	$1 == "collector" && name == "plugin-host" { n++; if ($6 > 0) m++; printf "%d ", $6 }
	END { printf "\n%d %d\n", n, m }')
note "rows made by each run: $(echo "$made" | head -1)"
read -r runs making <<<"$(echo "$made" | tail -1)"
[ "$runs" = 8 ] || fail "$runs runs of plugin-host in the trace, not 8"
[ "$making" -ge 1 ] && [ "$making" -le 6 ] ||
	fail "$making of the 8 runs made unwind rows: the rows are not shared ($(echo "$made" | head -1))"
exit 0
