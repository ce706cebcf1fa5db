#!/usr/bin/env bash
# The collector on awkward programs: it must not change what they do, and
# the trace must say what happened.  Deep and small stacks, many threads,
# a signal storm with sigaltstack, thread churn (no timer left behind), a
# program with its own SIGPROF, _exit, a crash, fork and a thread rename.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

"$CC" -O2 -g -pthread -o rstress "$SRCDIR/tests/progs/regs-stress.c" -ldl || fail "cannot build regs-stress"
"$CC" -O2 -g -fPIC -shared -o regs-plugin.so "$SRCDIR/tests/progs/regs-plugin.c" || fail "cannot build regs-plugin"
"$CC" -O2 -g -pthread -o tcases "$SRCDIR/tests/progs/timer-cases.c" || fail "cannot build timer-cases"

# Same output with and without the profiler, in both unwinding modes.
for mode in deep small many signals magic "dlopen ./regs-plugin.so"; do
	# shellcheck disable=SC2086
	want=$(./rstress $mode 0.3) || fail "regs-stress $mode failed on its own"
	for unwind in dwarf fp; do
		# shellcheck disable=SC2086
		got=$("$COLLECT_TIMER" -q --unwind=$unwind -o s.raw ./rstress $mode 0.3) ||
			fail "regs-stress $mode failed under collect-timer --unwind=$unwind"
		[ "$got" = "$want" ] || fail "regs-stress $mode printed '$got' under the profiler, '$want' without"
		"$PROFVIEW" --flat s.raw >s.txt 2>s.err || fail "profview failed on regs-stress $mode"
		grep -v 'incomplete stacks' s.err | grep -q . && fail "regs-stress $mode ($unwind): $(cat s.err)"
		samples=$(awk '/^profile:/ { for (i = 1; i <= NF; i++) if ($i == "samples") print $(i - 1) }' s.txt)
		note "regs-stress $mode ($unwind): ${samples:-0} samples"
		# 75 to 250 expected, a third of that or less on a loaded machine,
		# where the sweeper paces the samples of a thread that reads its
		# CPU clock in its loop (ACCURACY in collect-timer(1)); none if
		# the profiler did not work
		[ "${samples:-0}" -ge 8 ] || fail "regs-stress $mode ($unwind): only ${samples:-0} samples"
		rm -f s.raw*
	done
done
# The plugin loaded and closed mid-run is symbolized.
"$COLLECT_TIMER" -q -o p.raw ./rstress dlopen ./regs-plugin.so 0.3 >/dev/null
"$PROFVIEW" --flat p.raw | grep -q ' plugin_step  ' || fail "no plugin_step in the dlopen'ed library"

# Thread churn: every thread's timer goes with it (only main's are left:
# its sampling timer, and on a loaded machine the sweeper's nudge for it,
# a one-shot timer made when main is found waiting for a CPU; a leak of
# the 2,000 threads' would leave hundreds).
left=$("$COLLECT_TIMER" -q --engine=posix -o churn.raw ./tcases churn 2000 | awk '/timers left/ { print $3 }')
[ "${left:-0}" -ge 1 ] && [ "$left" -le 2 ] || fail "${left:-no} POSIX timers left after 2000 threads (want main's only)"
# The same with perf events, whose descriptors go with their threads.
left=$("$COLLECT_TIMER" -q --engine=perf -o churn.raw ./tcases churn 2000 | awk '/perf events left/ { print $4 }')
if "$PROFVIEW" --flat churn.raw | grep -q '^profile:.*, perf events)'; then
	[ "$left" = 1 ] || fail "$left perf event descriptors left after 2000 threads (want main's only)"
else
	note "perf events not permitted here: the churn ran with POSIX timers"
fi
"$PROFVIEW" --flat churn.raw >/dev/null 2>churn.err || fail "profview on the churn trace"

# A program with its own SIGPROF handler still gets its signals: some 50
# in 0.5 s of CPU time, in a loop without system calls (TIMER_CASES_CRUNCH:
# see signals.sh), alone or profiled; at least 0.7 of them.
own=$(TIMER_CASES_CRUNCH=1 ./tcases sigprof-late | awk '{ print $NF }')
prof=$(TIMER_CASES_CRUNCH=1 "$COLLECT_TIMER" -q -o sp.raw ./tcases sigprof-late 2>/dev/null | awk '{ print $NF }')
note "own SIGPROF signals: $own alone, $prof profiled"
awk -v a="$own" -v b="$prof" 'BEGIN { exit !(b >= 0.7 * a && b > 0) }' ||
	fail "the program got $prof of its own SIGPROFs under the profiler, $own without"

# _exit and a crash: the exit status passes through, the samples are kept.
set +e
"$COLLECT_TIMER" -q -o ex.raw ./tcases exit 3 >/dev/null 2>&1
st=$?
"$COLLECT_TIMER" -q -o cr.raw ./tcases crash >/dev/null 2>&1
cst=$?
set -e
[ "$st" -eq 3 ] || fail "_exit(3) gave status $st"
[ "$cst" -eq 139 ] || fail "a SIGSEGV gave status $cst, not 139"
for t in ex cr; do
	"$PROFVIEW" --flat $t.raw >$t.txt 2>$t.err || fail "profview on the $t trace"
	if [ $t = ex ]; then
		# _exit is a normal end: the trace is whole up to its last record
		[ ! -s $t.err ] || fail "ex: the end by _exit is warned about: $(cat $t.err)"
		! grep -q 'not finished' $t.txt || fail "ex: the header says the trace is unfinished"
	else
		grep -q 'not finished: the process was killed by signal 11 ' $t.err ||
			fail "$t: the crash is not reported with its signal: $(cat $t.err)"
		grep -q 'not finished' $t.txt || fail "$t: the header does not say the trace is unfinished"
	fi
	samples=$(awk '/^profile:/ { for (i = 1; i <= NF; i++) if ($i == "samples") print $(i - 1) }' $t.txt)
	note "$t: $samples samples"
	# 50 expected in 0.2 s of CPU time, a third of that or less on a
	# loaded machine (as above)
	[ "${samples:-0}" -ge 8 ] || fail "$t: only ${samples:-0} samples kept of ~0.2 s"
done

# fork: the child never writes into the parent's trace: the run holds two
# processes of a thread each, both whole (the child ends with _exit, no
# exit handlers: a normal end).
"$COLLECT_TIMER" -q -o fk.raw ./tcases fork >/dev/null || fail "fork case failed"
"$PROFVIEW" --flat fk.raw >fk.txt 2>fk.err || fail "profview on the fork trace"
grep -q ', 2 processes (2 with samples), 2 threads$' fk.txt || fail "fork trace: not a process of one thread each: $(head -2 fk.txt)"
parent=$(sed -n 's/^program: .* (pid \([0-9]*\)).*/\1/p' fk.txt)
[ -n "$parent" ] || fail "fork trace: no pid in the header: $(head -1 fk.txt)"
[ ! -s fk.err ] || fail "fork trace: $(cat fk.err)"

# The main thread renamed just before the end: the end reads its name.
cat >mainname.c <<'EOC'
#include <sys/prctl.h>
#include <time.h>

int main(void)
{
	struct timespec ts;
	volatile unsigned long x = 0;

	do {
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	} while (ts.tv_sec == 0 && ts.tv_nsec < 200000000);
	prctl(PR_SET_NAME, "renamed-main", 0, 0, 0);
	return 0;
}
EOC
"$CC" -O1 -o mainname mainname.c || fail "cannot compile mainname.c"
"$COLLECT_TIMER" -q -o mn.raw ./mainname || fail "collect-timer failed on mainname"
"$PROFVIEW" --threads --maxdepth=1 mn.raw | grep -q '"renamed-main"\]' ||
	fail "the main thread renamed before the end is not 'renamed-main': $("$PROFVIEW" --threads --maxdepth=1 mn.raw | head -5)"

# A thread that renames itself shows under its new name.
"$COLLECT_TIMER" -q -o rn.raw ./tcases rename >/dev/null || fail "rename case failed"
"$PROFVIEW" --threads --maxdepth=1 rn.raw | grep -q '"worker-1"\]' || fail "the renamed thread is not 'worker-1'"
exit 0
