#!/usr/bin/env bash
# Linux perf's own capture, as perf script prints it: profview must read
# the same samples perf report counts (the same shares, to its rounding),
# the program's known split, its threads and call chains; the tree, pprof
# and time spans work on it; a perf.data given directly says what to do.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

command -v perf >/dev/null || { echo "perf is not installed: skipped"; exit 77; }
build split
build demo
cd "$WORK"
# perf may be refused (perf_event_paranoid, a container without the
# system call): then there is nothing to test here.
if ! perf record -q -e cpu-clock -g -o probe.data true >probe.log 2>&1; then
	echo "perf record is refused here: skipped ($(head -n 1 probe.log))"
	exit 77
fi

# 2 s of CPU time at perf's default 4000 Hz: about 8000 samples.
perf record -q -e cpu-clock -g -o split.data ./split 2.0 >/dev/null 2>perf.log ||
	fail "perf record failed: $(cat perf.log)"
perf script -i split.data >split.txt 2>/dev/null || fail "perf script failed"
"$PROFVIEW" --flat split.txt >flat.txt 2>err.txt || fail "profview --flat failed: $(cat err.txt)"
cat flat.txt
# read as it is, without a word
[ ! -s err.txt ] || fail "profview warned on perf script output: $(cat err.txt)"
grep -q '^program: split, perf script output' flat.txt || fail "no program line naming split"

# perf report's self shares of the same file.  Both count every sample of
# the file, each with the same period (cpu-clock's 250 us), so the shares
# are the same numbers: perf report prints them to 0.01 points, profview's
# counts give them exactly, so they must agree to 0.01 points (0.005 of
# rounding, twice).  One sample charged elsewhere is 100/8000 = 0.0125
# points off, more in a shorter run: a disagreement shows.
perf report -i split.data --stdio --no-children -g none --sort sym 2>/dev/null >report.txt ||
	fail "perf report failed"
total=$(awk '/^profile:/ { for (i = 1; i <= NF; i++) if ($i == "samples") print $(i - 1) }' flat.txt)
[ "${total:-0}" -ge 1000 ] || fail "too few samples: ${total:-0}"
for f in hot_work cold_work; do
	theirs=$(awk -v f="$f" '$NF == f { sub(/%/, "", $1); print $1; exit }' report.txt)
	ours=$(flat_self flat.txt "$f")
	note "$f: perf report ${theirs:-none}%, profview $ours of $total samples"
	[ -n "$theirs" ] || fail "perf report does not show $f"
	awk -v a="$theirs" -v k="$ours" -v n="$total" 'BEGIN { d = a - 100 * k / n; if (d < 0) d = -d; exit !(d <= 0.01 + 1e-9) }' ||
		fail "$f: profview's share $ours/$total differs from perf report's $theirs%"
done
# and the program's split, 3:1 in work (0.740 in time, measured: split.sh),
# within 5 sigma plus 0.02 as split.sh has it
hot=$(flat_self flat.txt hot_work)
cold=$(flat_self flat.txt cold_work)
within_sigma "$hot" $((hot + cold)) 0.75 5 0.02 || fail "hot share $hot/$((hot + cold)) is not 0.75 within 5 sigma"

# the call chains: hot_work under main, in the tree and the folded stacks
"$PROFVIEW" --tree split.txt >tree.txt || fail "profview --tree failed"
awk '/ main( |$)/ && !d { d = index($0, "main") } / hot_work( |$)/ && d { if (index($0, "hot_work") == d + 2) ok = 1 } END { exit !ok }' tree.txt ||
	fail "hot_work is not a child of main in the tree: $(head -n 20 tree.txt)"
"$PROFVIEW" --folded --sample-index=samples split.txt >folded.txt || fail "profview --folded failed"
read -r ok n < <(chain_share folded.txt SUBSEQ main hot_work)
note "$ok of $n hot_work stacks go through main"
at_least "$ok" "$n" 0.95 || fail "only $ok of $n hot_work stacks go through main"

# pprof: written and read back, the same counts
"$PROFVIEW" --pprof -o split.pb.gz split.txt || fail "profview --pprof failed"
"$PROFVIEW" --flat split.pb.gz >flat-pb.txt || fail "profview cannot read its pprof of perf script output"
[ "$(flat_self flat-pb.txt hot_work)" = "$hot" ] || fail "pprof: hot_work $(flat_self flat-pb.txt hot_work), not $hot"

# time spans: the two halves hold every sample
"$PROFVIEW" --flat --time ,50% split.txt >first.txt || fail "profview --time ,50% failed"
"$PROFVIEW" --flat --time 50%, split.txt >second.txt || fail "profview --time 50%, failed"
a=$(awk '/^time:/ { for (i = 1; i <= NF; i++) if ($i == "samples") print $(i - 1) }' first.txt)
b=$(awk '/^time:/ { for (i = 1; i <= NF; i++) if ($i == "samples") print $(i - 1) }' second.txt)
note "time halves: $a + $b of $total samples"
[ "$a" -gt 0 ] && [ "$b" -gt 0 ] && [ $((a + b)) -eq "$total" ] ||
	fail "the halves hold $a + $b samples, not $total"
"$PROFVIEW" --timeline -o timeline.svg split.txt || fail "profview --timeline failed"
grep -q '<svg' timeline.svg || fail "the timeline is no SVG"

# threads by tid, named by their command; kernel frames in their mapping
perf record -q -e cpu-clock -g -o demo.data ./demo >/dev/null 2>perf.log || fail "perf record demo failed"
perf script -i demo.data -F comm,pid,tid,time,period,event,ip,sym,dso >demo.txt 2>/dev/null ||
	fail "perf script -F failed"
"$PROFVIEW" --threads --tree demo.txt >threads.txt || fail "profview --threads failed"
for t in worker-1 worker-2; do
	grep -Eq "\[thread [0-9]+ \"$t\"\]" threads.txt || fail "thread $t is not in the report: $(head -n 30 threads.txt)"
done

# a perf.data file given directly: what to run instead, in one line
if "$PROFVIEW" --flat split.data >out.txt 2>err.txt; then
	fail "profview read a perf.data file"
fi
[ "$(wc -l <err.txt)" -eq 1 ] && grep -q 'perf script -i split.data | profview -' err.txt ||
	fail "perf.data: $(cat err.txt)"
exit 0
