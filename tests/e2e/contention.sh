#!/usr/bin/env bash
# More busy processes than CPUs.  The kernel checks CPU-time timers only at
# the scheduler tick, for the thread running then; a process that makes
# system calls in its loop, sharing a CPU with one that only computes, can
# be preempted between ticks every time and never get its timer signal.
# collect-timer's sweeper asks such threads for their samples, so in every
# run every process gets samples all along its run, and profview does not
# warn that the timers missed any.
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

# recorded_ms RUN PID: the CPU time the samples of process PID's trace in
# a run file carry as the collector recorded them (the sum of their
# weights, trace/raw.h), in ms: what profview shows before it shares a
# thread's measured CPU time out over its samples.  That share hides a
# timer that missed the thread for most of its run; the recorded weights
# show it.  (A run file: the processes' traces, then an index of them and
# a footer; trace/raw.h.)
recorded_ms() {
	perl -e 'local $/; open(my $f, "<", $ARGV[0]) or die; my $d = <$f>; my $pid = $ARGV[1];
		my ($from, $len) = (0, length($d));
		if (length($d) >= 32 && substr($d, -8) eq "PVRUNIX\n") {
			my ($ix, $n) = unpack("Q<V", substr($d, -32, 12));
			for my $i (0 .. $n - 1) {
				my ($o, $l, $p) = unpack("Q<Q<V", substr($d, $ix + 32 * $i, 20));
				($from, $len) = ($o, $l) if $p == $pid;
			}
		}
		$d = substr($d, $from, $len);
		my $off = unpack("V", substr($d, 12, 4)); my $w = 0;
		while ($off + 8 <= length($d)) {
			my ($type, $size) = unpack("VV", substr($d, $off, 8));
			last if $size < 8 || $off + $size > length($d) || $type == 7;
			$w += unpack("Q<", substr($d, $off + 24, 8)) if ($type == 4 || $type == 8) && $size >= 32;
			$off += $size;
		}
		printf "%.1f\n", $w / 1e6' "$1" "$2"
}

runs=${CONTENTION_RUNS:-10}
for ((run = 1; run <= runs; run++)); do
	rm -rf crowd
	mkdir crowd
	"$COLLECT_TIMER" -q -o crowd/t.raw ./timer-cases crowd 4 0.3 >crowd.out ||
		fail "run $run: timer-cases crowd failed under collect-timer"
	[ "$(ls crowd)" = t.raw ] || fail "run $run: want the one file of the run, got $(ls crowd | tr '\n' ' ')"
	f=crowd/t.raw
	"$PROFVIEW" -q --flat "$f" >all.txt || fail "run $run: profview $f failed"
	grep -q ', 4 processes (4 with samples), ' all.txt || fail "run $run: not 4 processes: $(grep '^profile:' all.txt)"
	line=""
	while read -r _ role pid; do
		"$PROFVIEW" -q --flat --pid="$pid" "$f" >rep.txt || fail "run $run: profview --pid=$pid $f failed"
		grep -q 'the timers missed' rep.txt && fail "run $run: $role process $pid: $(grep '^warning' rep.txt)"
		ms=$(cpu_ms rep.txt)
		rec=$(recorded_ms "$f" "$pid")
		line+=" $role=${ms}ms/$rec"
		# A spinning process spins 300 ms of its own CPU time (the first
		# one 20 ms more), and its samples share exactly what its exit
		# record counts: 300.1 ms, every time.  As recorded, they carry
		# all of it but what came after the last sample: 94% or more
		# in 60 such processes with the sweeper; 0 to 83% in 9 runs
		# of 20 without, and down to 27% when the sweeper asked only
		# threads it found on a CPU (collect-timer(1), ACCURACY).
		if [ "$role" = spin ]; then
			awk -v m="$ms" 'BEGIN { exit !(m >= 295) }' ||
				fail "run $run: the spinning process $pid used 300 ms of CPU, its samples carry $ms ms"
			awk -v m="$rec" 'BEGIN { exit !(m >= 255) }' ||
				fail "run $run: the spinning process $pid used 300 ms of CPU, its samples recorded $rec ms"
		fi
	done <crowd.out
	note "run $run:$line"
done

exit 0
