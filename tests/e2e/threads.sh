#!/usr/bin/env bash
# Two threads, one always running and one at about half duty, run at once.
# The time charged to each thread must match the thread's own clock, and so
# the profile's split of CPU time between them the split the program
# measured.  (Counting samples alone would not do: the kernel checks CPU
# timers on its tick, so a thread that runs in short bursts gets fewer
# signals than its CPU time is worth; each sample's weight makes up for it.)
# Nothing here is left to chance: a thread's samples share exactly the CPU
# time its exit record counts (trace/raw-cpu.h), which differs from what
# the thread reads on its clock by microseconds (before its timer was armed,
# after its function returned).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

build duty
cd "$WORK"
"$COLLECT_TIMER" -q -o duty.raw ./duty 2.0 >truth.txt || fail "collect-timer failed"
cat truth.txt
"$PROFVIEW" --threads --maxdepth=1 duty.raw >threads.txt || fail "profview --threads failed"
cat threads.txt

spin_ns=$(awk '/^cpu_ns/ { print $3 }' truth.txt)
half_ns=$(awk '/^cpu_ns/ { print $5 }' truth.txt)
# Lines: count, %, sigma, CPU ms, [thread TID "name"]
row() { awk -v n="\"$1\"]" '$NF == n { print $1, $4 }' threads.txt; }
read -r spin_n spin_ms < <(row spinner) || fail "no spinner thread in the profile"
read -r half_n half_ms < <(row halfduty) || fail "no halfduty thread in the profile"
n=$((spin_n + half_n))
expect=$(awk -v a="$half_ns" -v b="$spin_ns" 'BEGIN { print a / (a + b) }')
got=$(awk -v a="$half_ms" -v b="$spin_ms" 'BEGIN { print a / (a + b) }')
ms_of() { awk -v ns="$1" 'BEGIN { printf "%.1f", ns / 1e6 }'; }
note "spinner $spin_n samples $spin_ms ms (true $(ms_of "$spin_ns") ms); halfduty $half_n samples $half_ms ms (true $(ms_of "$half_ns") ms)"
note "halfduty share of CPU: profile $got, true $expect; by sample count $(awk -v a="$half_n" -v n="$n" 'BEGIN { print a / n }')"
# About 700 samples expected (500 and 200); a loaded machine gives the
# program less CPU time in its 2 s (1.26 s and 0.70 s of the 2.0 and 1.0
# beside a 2-thread CPU hog: 410 samples), and the sweeper may pace them at
# one every 3 to 4 periods (ACCURACY in collect-timer(1)).  50 is what a
# third of the machine, paced so, would still give.
[ "$n" -ge 50 ] || fail "too few samples: $n"
# Each thread's CPU time, charged to it in the profile, against its own
# clock: 1 ms (the report's 0.1 ms rounding, the CPU time the thread used
# outside its profiled life, seen within 0.1 ms) plus 0.1% (2 ms of the
# spinner's 2 s).  Without the exit records' rescaling the time after a
# thread's last sample (up to a period, 4 ms) would be missing.
for t in spin half; do
	eval "ms=\$${t}_ms ns=\$${t}_ns"
	awk -v ms="$ms" -v ns="$ns" 'BEGIN { d = ms - ns / 1e6; if (d < 0) d = -d; exit !(d <= 0.001 * ns / 1e6 + 1) }' ||
		fail "$t thread: profile charges $ms ms, the thread measured $((ns / 1000000)) ms"
done
# Hence the split of the CPU time: the two bounds above allow 0.003 of the
# 1 to 3 s the two threads use; 0.005.
awk -v g="$got" -v p="$expect" 'BEGIN { d = g - p; if (d < 0) d = -d; exit !(d <= 0.005) }' ||
	fail "halfduty share $got is not $expect"
# The hot function of each thread is under its own thread.
"$PROFVIEW" --threads duty.raw >tree.txt
awk '/\[thread .*"halfduty"\]/ { in_h = 1; next } /\[thread / { in_h = 0 } in_h && / spinner  / { bad = 1 } END { exit bad }' tree.txt ||
	fail "spinner() appears under the halfduty thread"
exit 0
