#!/usr/bin/env bash
# More busy processes than CPUs.  The kernel checks CPU-time timers only at
# the scheduler tick, for the thread running then; a process that makes
# system calls in its loop, sharing a CPU with one that only computes, can
# be preempted between ticks every time and never get its timer signal.
# collect-timer's sweeper asks such threads for their samples, so in every
# run every process's samples carry nearly all the CPU time it used, and
# profview does not warn that the timers missed any.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

build timer-cases

# cpu_ms FILE: the CPU time in the header of a report, in ms
cpu_ms() {
	awk '/^profile:/ {
		for (i = 1; i <= NF; i++) if ($i == "CPU") { v = $(i + 1); u = $(i + 2) }
		sub(/,$/, "", u)
		print (u == "s" ? v * 1000 : v) + 0; exit
	}' "$1"
}

runs=10
for ((run = 1; run <= runs; run++)); do
	rm -rf crowd
	mkdir crowd
	"$COLLECT_TIMER" -q -o crowd/t.raw ./timer-cases crowd 4 0.3 >crowd.out ||
		fail "run $run: timer-cases crowd failed under collect-timer"
	[ "$(find crowd -name '*.raw' | wc -l)" -eq 4 ] || fail "run $run: want 4 traces, got $(ls crowd | tr '\n' ' ')"
	line=""
	while read -r _ role pid; do
		# the first process writes t.raw, the others t.PID.raw
		f=crowd/t.$pid.raw
		[ -f "$f" ] || f=crowd/t.raw
		"$PROFVIEW" -q --flat "$f" >rep.txt || fail "run $run: profview $f failed"
		grep -q 'the timers missed' rep.txt && fail "run $run: $role process $pid: $(grep '^warning' rep.txt)"
		ms=$(cpu_ms rep.txt)
		line+=" $role=${ms}ms"
		# A spinning process spins 300 ms of its own CPU time; its samples
		# miss only what it used before the first and after the last one.
		if [ "$role" = spin ]; then
			awk -v m="$ms" 'BEGIN { exit !(m >= 255) }' ||
				fail "run $run: the spinning process $pid used 300 ms of CPU, its samples carry $ms ms"
		fi
	done <crowd.out
	note "run $run:$line"
done
exit 0
