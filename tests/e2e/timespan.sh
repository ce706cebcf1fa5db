#!/usr/bin/env bash
# profview --time=FROM,TO: only the samples of a span of the run.
# tests/progs/phases.c computes in phase_one for a second of CPU time, then
# in phase_two, then in both at once (two threads, a second each), and
# prints when each phase began and ended; the trace's start is in its
# header (rawdump), so the spans are the phases' whatever the load.
#   - each one-function phase's span holds that function at >= 97%;
#   - the two-thread phase's holds both at 50% each, within the samples'
#     noise (CPU time per sample makes it closer still);
#   - percentages, open ends, several spans, an empty span, the header;
#   - an untimed profile and a malformed span are clear errors;
#   - the incomplete-stack warning counts the samples of the span and
#     the threads shown (a collect-gdb trace made by the test).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

[ -n "${RAWDUMP:-}" ] || fail "RAWDUMP is not set"
build phases
cd "$WORK"
"$COLLECT_TIMER" -q -o ph.raw ./phases >ph.txt || fail "collect-timer ./phases failed"
start=$("$RAWDUMP" ph.raw | awk '$1 == "header" { print $3; exit }')
[ -n "$start" ] || fail "no header in the trace"
# span PHASE: "FROM,TO" in seconds from the trace's start
span() {
	awk -v s="$start" -v p="$1" '$1 == p { printf "%.6f,%.6f", ($2 - s) / 1e9, ($3 - s) / 1e9 }' ph.txt
}
# cum_pct TABLE FUNCTION: the cumulative share of FUNCTION in a -t ';' flat table
cum_pct() {
	awk -F';' -v f="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["function"] == f { print $c["cum_pct"]; found = 1 } END { if (!found) print 0 }' "$1"
}
# samples TEXT_REPORT: the samples the header's time line says the spans hold
samples() {
	sed -n 's/^time: .*; \([0-9]*\) samples in.*/\1/p' "$1"
}

for ph in one two; do
	[ -n "$(span $ph)" ] || fail "phases printed no '$ph' phase: $(cat ph.txt)"
	"$PROFVIEW" --flat -t ';' --time="$(span $ph)" ph.raw >$ph.csv || fail "profview --time=$(span $ph) failed"
	fn=phase_$ph
	other=phase_two
	[ $ph = two ] && other=phase_one
	note "phase $ph ($(span $ph) s): $fn $(cum_pct $ph.csv $fn)%, $other $(cum_pct $ph.csv $other)%"
	awk -v s="$(cum_pct $ph.csv $fn)" 'BEGIN { exit !(s >= 97) }' ||
		fail "the span of phase $ph holds $fn at $(cum_pct $ph.csv $fn)%, not >= 97%"
done

"$PROFVIEW" --flat --time="$(span both)" ph.raw >both.txt
"$PROFVIEW" --flat -t ';' --time="$(span both)" ph.raw >both.csv
n=$(samples both.txt)
a=$(cum_pct both.csv phase_one)
b=$(cum_pct both.csv phase_two)
note "both ($(span both) s, $n samples): phase_one $a%, phase_two $b%"
# 5 sigma of a binomial share of n samples, and a point for the rounding
awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN {
	if (n < 100) exit 1
	tol = 100 * 5 * sqrt(0.25 / n) + 1
	da = a - 50; if (da < 0) da = -da; db = b - 50; if (db < 0) db = -db
	exit !(da <= tol && db <= tol)
}' || fail "the two-thread phase is $a% / $b% in $n samples, not 50/50"

# the whole run as a share, open ends, several spans
"$PROFVIEW" --flat ph.raw >all.txt
"$PROFVIEW" --flat --time=0%,100% ph.raw >pct.txt
all=$(sed -n 's/^profile: .* in \([0-9]*\) samples.*/\1/p' all.txt)
[ "$(samples pct.txt)" = "$all" ] || fail "--time=0%,100% holds $(samples pct.txt) samples, the run $all"
"$PROFVIEW" --flat --time=, ph.raw >open.txt
[ "$(samples open.txt)" = "$all" ] || fail "--time=, holds $(samples open.txt) samples, the run $all"
"$PROFVIEW" --flat --time="$(span one)" ph.raw >one.txt
"$PROFVIEW" --flat --time="$(span two)" ph.raw >two.txt
"$PROFVIEW" --flat --time="$(span one)" --time="$(span two)" ph.raw >onetwo.txt
[ "$(samples onetwo.txt)" = $(($(samples one.txt) + $(samples two.txt))) ] ||
	fail "two spans hold $(samples onetwo.txt) samples, not $(samples one.txt) + $(samples two.txt)"
grep -q '^time: .*, .* of ' onetwo.txt || fail "the header does not list both spans: $(grep '^time' onetwo.txt)"
# the pause between phases one and two holds no sample
gap=$(awk -v s="$start" '$1 == "one" { e = $3 } $1 == "two" { printf "%.6f,%.6f", (e - s) / 1e9 + 0.02, ($2 - s) / 1e9 - 0.02 }' ph.txt)
"$PROFVIEW" --tree --time="$gap" ph.raw >gap.txt
[ "$(samples gap.txt)" = 0 ] && grep -q '^no samples' gap.txt || fail "the pause ($gap s) holds samples: $(cat gap.txt)"
# spans apply to every report: the pictures and --pprof hold the span's samples
"$PROFVIEW" --pprof -o one.pb.gz --time="$(span one)" ph.raw
"$PROFVIEW" --flat one.pb.gz >back.txt
[ "$(sed -n 's/^profile: .* in \([0-9]*\) samples.*/\1/p' back.txt)" = "$(samples one.txt)" ] ||
	fail "--pprof --time wrote another number of samples than the span holds"

# the pictures' legends say which span they show
"$PROFVIEW" --flame --time="$(span one)" -o one.svg ph.raw
grep -q "time [0-9.]*-[0-9.]* s of [0-9.]* s, $(samples one.txt) samples" one.svg ||
	fail "the flame graph does not say which span it shows"

# errors
set +e
printf 'main;f 3\n' >x.folded
"$PROFVIEW" --flat --time=1,2 x.folded >/dev/null 2>err.txt; st=$?
[ $st = 1 ] && grep -q 'does not say when' err.txt || fail "--time on folded stacks: status $st, $(cat err.txt)"
for bad in 1 1,2,3 a,b 5%%,1 -1,2 200%, 3,1 20%,10% 2,2; do
	"$PROFVIEW" --flat --time="$bad" ph.raw >/dev/null 2>err.txt; st=$?
	[ $st = 2 ] && grep -q 'invalid --time' err.txt || fail "--time=$bad: status $st, $(cat err.txt)"
done
# a span that is empty only once its share is resolved: one line, exit 1
"$PROFVIEW" --flat --time=90%,0.001 ph.raw >/dev/null 2>err.txt; st=$?
[ $st = 1 ] && grep -q 'is empty' err.txt && [ "$(wc -l <err.txt)" = 1 ] || fail "--time=90%,0.001: status $st, $(cat err.txt)"
# a span that starts after the run ends: as empty, one line, exit 1
for after in 1000,2000 1000, ; do
	"$PROFVIEW" --flat --time=$after ph.raw >/dev/null 2>err.txt; st=$?
	[ $st = 1 ] && grep -q 'starts after this [0-9.]* s run ends' err.txt && [ "$(wc -l <err.txt)" = 1 ] ||
		fail "--time=$after: status $st, $(cat err.txt)"
done
set -e

# The warnings count the samples shown: a collect-gdb trace made here, ten
# snapshots 0.1 s apart of two threads, the first five snapshots of thread
# 100 with a frame missing (#0, then #2: an incomplete stack)
{
	printf '# profview-gdb 1\n# pid: 100\n# program: /bin/true\n# mode: persistent\n'
	printf '# interval-ns: 100000000\n# start: 1700000000.000000000\n'
	for i in 0 1 2 3 4 5 6 7 8 9; do
		printf '# snapshot: %d 1700000000.%d50000000\n# weight-ns: 100000000\n' $((i + 1)) $i
		printf 'Thread 1 (Thread 0x7f3335042740 (LWP 100) "t"):\n#0  0x0000000000401000 in leaf () at t.c:6\n'
		printf '#%d  0x0000000000401100 in main () at t.c:11\n\n' $((i < 5 ? 2 : 1))
		printf 'Thread 2 (Thread 0x7f3335041740 (LWP 101) "u"):\n#0  0x0000000000401200 in other () at t.c:16\n'
		printf '#1  0x0000000000401100 in main () at t.c:11\n\n'
	done
	printf '# end: 1700000001.000000000 count\n'
} >cut.gdb
# warned ARGS...: the incomplete-stack warning of the --flat report, or "none"
warned() {
	"$PROFVIEW" --flat "$@" cut.gdb >w.txt 2>&1 || fail "profview --flat $* cut.gdb failed: $(cat w.txt)"
	sed -n 's/^warning: \(.*\) with incomplete stacks.*/\1/p' w.txt | grep . || echo none
}
[ "$(warned)" = "5 samples (25.0%)" ] || fail "the whole trace: '$(warned)', not 5 samples (25.0%)"
[ "$(warned --time=0.6,1)" = none ] || fail "--time=0.6,1 warns of '$(warned --time=0.6,1)', where no stack is incomplete"
[ "$(warned --time=0,0.3)" = "3 samples (50.0%)" ] || fail "--time=0,0.3: '$(warned --time=0,0.3)', not 3 samples (50.0%)"
[ "$(warned --tid=101)" = none ] || fail "--tid=101 warns of '$(warned --tid=101)', a thread with no incomplete stack"
[ "$(warned --tid=100 --time=0,0.5)" = "5 samples (100.0%)" ] ||
	fail "--tid=100 --time=0,0.5: '$(warned --tid=100 --time=0,0.5)', not 5 samples (100.0%)"
echo "timespan: ok"
