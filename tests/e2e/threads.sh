#!/usr/bin/env bash
# Two threads, one always running and one at about half duty, run at once.
# Each thread's samples must match the CPU time the program measured for
# it (share within 3 sigma), and the CPU time the profile charges to each
# thread must match the thread's own clock.
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
note "spinner $spin_n samples $spin_ms ms (true $((spin_ns / 1000000)) ms); halfduty $half_n samples $half_ms ms (true $((half_ns / 1000000)) ms); expected halfduty share $expect"
within_sigma "$half_n" "$n" "$expect" 3 || fail "halfduty share $half_n/$n is not $expect within 3 sigma"
# CPU time charged per thread: within 5% (the time after a thread's last
# sample is not charged to anything).
for t in spin half; do
	eval "ms=\$${t}_ms ns=\$${t}_ns"
	awk -v ms="$ms" -v ns="$ns" 'BEGIN { d = ms - ns / 1e6; if (d < 0) d = -d; exit !(d <= 0.05 * ns / 1e6 + 25) }' ||
		fail "$t thread: profile charges $ms ms, the thread measured $((ns / 1000000)) ms"
done
# The hot function of each thread is under its own thread.
"$PROFVIEW" --threads duty.raw >tree.txt
awk '/\[thread .*"halfduty"\]/ { in_h = 1; next } /\[thread / { in_h = 0 } in_h && / spinner  / { bad = 1 } END { exit bad }' tree.txt ||
	fail "spinner() appears under the halfduty thread"
exit 0
