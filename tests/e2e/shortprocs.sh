#!/usr/bin/env bash
# A run of many short processes, most of which exit at once and a few of
# which work: every process is counted, by collect-timer's summary and by
# profview's header, however little it did, and every process that worked
# has its samples in its own function: a child that forks a grandchild
# after its own samples, the grandchild, and a process whose only work
# (and so its first sample) is in a thread other than its main one, and one
# killed by SIGKILL after its samples.  The images that never sample make
# no trace file of their own (writer.c), and nothing of them is left.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
build shortprocs
cd "$WORK"

# 80 children: 8 that spin 100 ms and fork a grandchild that spins 100 ms,
# 8 whose second thread spins 100 ms, 8 that spin 100 ms and are killed,
# 8 that run /bin/true, 48 that exit at once
"$COLLECT_TIMER" -o run.raw ./shortprocs 80 100 >run.out 2>run.err ||
	fail "collect-timer failed: $(cat run.err)"
made=$(sed -n 's/^processes \([0-9]*\)$/\1/p' run.out)
left=$(ls run.raw?* 2>/dev/null || true)
[ -z "$left" ] || fail "files of the run left beside run.raw: $left"
[ -n "$made" ] || fail "shortprocs said no count: $(tail -3 run.out)"
note "$made processes made; $(grep -c '^busy ' run.out) busy"
grep -q "^collect-timer: $made processes, " run.err ||
	fail "collect-timer's summary does not count $made processes: $(grep 'processes' run.err)"
"$PROFVIEW" --flat run.raw >run.txt 2>run.perr || fail "profview failed: $(cat run.perr)"
# (the killed ones are said, and nothing else)
! grep -v 'trace was not finished: the process was killed by signal 9' run.perr ||
	fail "profview warns about the run: $(cat run.perr)"
[ "$(grep -c 'killed by signal 9' run.perr)" = "$(grep -c '^busy killed ' run.out)" ] ||
	fail "not every killed process is said: $(cat run.perr)"
grep -qE "^profile: .*, $made processes \([0-9]+ with samples\)" run.txt ||
	fail "profview's header does not count $made processes: $(sed -n 2p run.txt)"
# Each busy process: 100 ms of CPU at 250 Hz, some 25 samples; fewer than 3
# has a chance below 1e-8 (Poisson), so each must have 3 in its function.
while read -r _ kind pid; do
	"$PROFVIEW" --flat --pid="$pid" run.raw >p.txt 2>&1 || fail "profview --pid=$pid: $(cat p.txt)"
	n=$(flat_cum p.txt "spin_$kind")
	[ "$kind" != killed ] || grep -qE "^profile: .*, 1 process" p.txt ||
		fail "killed $pid: not one process: $(sed -n 2p p.txt)"
	[ "$n" -ge 3 ] || fail "$kind $pid: $n samples in spin_$kind: $(sed -n 2p p.txt)"
done < <(grep '^busy ' run.out)
exit 0
