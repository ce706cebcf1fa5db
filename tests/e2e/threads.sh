#!/usr/bin/env bash
# Two threads, one always running and one at about half duty, run at once.
# The profile's split of CPU time between them must match the CPU time the
# program measured for each (within 3 sigma of the sample count), and the
# time charged to each thread must match the thread's own clock within 2%.
# (Counting samples alone would not do: the kernel checks CPU timers on its
# tick, so a thread that runs in short bursts gets fewer signals than its
# CPU time is worth; each sample's weight makes up for it.)
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
note "spinner $spin_n samples $spin_ms ms (true $((spin_ns / 1000000)) ms); halfduty $half_n samples $half_ms ms (true $((half_ns / 1000000)) ms)"
note "halfduty share of CPU: profile $got, true $expect; by sample count $(awk -v a="$half_n" -v n="$n" 'BEGIN { print a / n }')"
[ "$n" -ge 200 ] || fail "too few samples: $n"
awk -v g="$got" -v p="$expect" -v n="$n" 'BEGIN { d = g - p; if (d < 0) d = -d; exit !(d <= 3 * sqrt(p * (1 - p) / n)) }' ||
	fail "halfduty share $got is not $expect within 3 sigma"
# The time after a thread's last sample is not charged: allow 2% + 10 ms.
for t in spin half; do
	eval "ms=\$${t}_ms ns=\$${t}_ns"
	awk -v ms="$ms" -v ns="$ns" 'BEGIN { d = ms - ns / 1e6; if (d < 0) d = -d; exit !(d <= 0.02 * ns / 1e6 + 10) }' ||
		fail "$t thread: profile charges $ms ms, the thread measured $((ns / 1000000)) ms"
done
# The hot function of each thread is under its own thread.
"$PROFVIEW" --threads duty.raw >tree.txt
awk '/\[thread .*"halfduty"\]/ { in_h = 1; next } /\[thread / { in_h = 0 } in_h && / spinner  / { bad = 1 } END { exit bad }' tree.txt ||
	fail "spinner() appears under the halfduty thread"
exit 0
