#!/usr/bin/env bash
# A pre-fork server under collect-timer: the control signal sent to
# collect-timer pauses and resumes sampling in every process of the run,
# the workers forked before and the one forked while paused, though the
# program handles SIGUSR2 itself (its handler gets none of those); one
# line says the program took the signal and names --control-signal.
# What is checked is what the trace records: every sample inside its
# thread's stretches, each process's stretch cut by the pause, and the
# worker forked while paused sampled only after the resume.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
build pauser
cd "$WORK"

# wait_for COMMAND: until COMMAND succeeds (a minute at most).
wait_for() {
	for _ in $(seq 1200); do
		eval "$1" && return 0
		sleep 0.05
	done
	fail "still not so after a minute: $1"
}
# exits_in TRACE: the exit records in a live trace (0 when unreadable yet).
exits_in() {
	"$RAWDUMP" "$1" 2>/dev/null | grep -c '^exit' || true
}
# count_in TRACE TYPE: the records of TYPE (a regular expression: thread, sample|regs) in a live trace.
count_in() {
	"$RAWDUMP" "$1" 2>/dev/null | grep -cE "^($2) " || true
}
# paused_all N: every process's live trace holds N exit records or more.
paused_all() {
	for f in s.raw s.*.raw; do
		[ "$(exits_in "$f")" -ge "$1" ] || return 1
	done
}

mkdir d
"$COLLECT_TIMER" -o s.raw ./pauser prefork 2 d handler >s.out 2>s.err &
launcher=$!
wait_for '[ -e d/w0 ] && [ -e d/w1 ] && [ -e "s.$(cat d/w0).raw" ] && [ -e "s.$(cat d/w1).raw" ]'
before="s.raw s.$(cat d/w0).raw s.$(cat d/w1).raw"
# every process has samples before the pause
wait_for '(for f in $before; do [ "$(count_in "$f" "sample|regs")" -gt 0 ] || exit 1; done)'
kill -USR2 $launcher
wait_for 'grep -q "sampling paused" s.err && paused_all 1'
touch d/more
wait_for '[ -e d/w2 ]'
sleep 0.3
kill -USR2 $launcher
# every process resumed (a second stretch), the late worker sampled
wait_for 'grep -q "sampling resumed" s.err'
wait_for '(for f in $before; do [ "$(count_in "$f" thread)" -ge 2 ] || exit 1; done)'
wait_for '[ "$(count_in "s.$(cat d/w2).raw" "sample|regs")" -gt 0 ]'
# sent to a worker, the signal is the program's: no pause
kill -USR2 "$(cat d/w0)"
sleep 0.2
touch d/stop
wait $launcher || fail "the server failed under collect-timer: $(cat s.err)"
cat s.out
note "$(cat s.err)"

grep -qx 'caught 0' s.out || fail "the server's own handler got collect-timer's requests: $(cat s.out)"
grep -q "^worker 0 $(cat d/w0) caught 1$" s.out || fail "worker 0 did not get the signal sent to it: $(cat s.out)"
[ "$(grep -c 'installed its own handler for the control signal' s.err)" = 1 ] ||
	fail "want one line saying the program took the signal: $(cat s.err)"
grep 'installed its own handler' s.err | grep -q -- '--control-signal' ||
	fail "the line does not name --control-signal: $(cat s.err)"
[ "$(grep -c 'sampling paused' s.err)" = 1 ] && [ "$(grep -c 'sampling resumed' s.err)" = 1 ] ||
	fail "want one pause and one resume: $(cat s.err)"

"$RAWDUMP" s.raw >s.dump
[ "$(grep -c '^part' s.dump)" = 4 ] || fail "want the server and its 3 workers in s.raw: $(grep '^part' s.dump)"
# per thread (a process's only thread here): its stretches, every sample
# inside one; prints "TID STRETCHES FIRST_START LAST_PAUSE SAMPLES"
awk '
	function bad(msg) { print "bad " msg; failed = 1; exit 1 }
	$1 == "thread" {
		if (open[$2]) next
		open[$2] = 1; t0[$2] = $3; n[$2]++
		if (!($2 in first)) { first[$2] = $3; tids[++k] = $2 }
	}
	$1 == "exit" {
		if (!open[$2]) bad("exit of thread " $2 " with no stretch open")
		open[$2] = 0
		if (!($2 in pause)) pause[$2] = $3
	}
	$1 == "regs" || $1 == "sample" {
		if (!open[$2]) bad("thread " $2 ": a sample at " $3 " outside its stretches")
		if ($3 < t0[$2]) bad("thread " $2 ": a sample at " $3 " before its stretch")
		s[$2]++
	}
	END {
		if (failed) exit 1
		for (i = 1; i <= k; i++) {
			t = tids[i]
			printf "%s %d %s %s %d\n", t, n[t], first[t], (t in pause) ? pause[t] : 0, s[t]
		}
	}' s.dump >s.iv || fail "$(grep '^bad' s.iv)"
cat s.iv
late=$(cat d/w2)
for pid in $(awk '$1 == "part" { print $2 }' s.dump); do
	row=$(awk -v p="$pid" '$1 == p' s.iv)
	[ -n "$row" ] || fail "pid $pid has no thread in the trace"
	set -- $row
	[ "$5" -gt 0 ] || fail "pid $pid has no sample: $row"
	[ "$pid" = "$late" ] && continue
	[ "$2" = 2 ] || fail "pid $pid, forked before the pause: want 2 stretches (paused, resumed): $row"
done
# the worker forked while paused starts after every other process paused
latest=$(awk -v l="$late" '$1 != l { print $4 }' s.iv | sort -n | tail -1)
start=$(awk -v l="$late" '$1 == l { print $3 }' s.iv)
[ "$start" -gt "$latest" ] || fail "the worker forked while paused was sampled from $start, before the last pause at $latest"
# and every process is in the report
"$PROFVIEW" --flat s.raw >s.flat 2>s.perr || fail "profview failed: $(cat s.perr)"
for f in phase_a phase_b phase_c; do
	[ "$(flat_cum s.flat $f)" -gt 0 ] || fail "$f has no sample: $(head -12 s.flat)"
done

# --split: while the server runs, its segments hold the workers' samples
# of their windows, the worker forked later's too; at the end the
# segments hold every sample of every worker's whole trace, each once.
# seg_with PID...: a segment on disk holds samples of every PID.
seg_with() {
	for f in p.seg*.raw; do
		[ -e "$f" ] || continue
		"$RAWDUMP" "$f" 2>/dev/null | awk -v want="$*" '
			BEGIN { n = split(want, p, " ") }
			$1 == "sample" || $1 == "regs" { got[$2] = 1 }
			END { for (i = 1; i <= n; i++) if (!(p[i] in got)) exit 1 }' && return 0
	done
	return 1
}
mkdir e
"$COLLECT_TIMER" --split=0.5 -o p.raw ./pauser prefork 2 e >p.out 2>p.err &
launcher=$!
wait_for '[ -e e/w0 ] && [ -e e/w1 ]'
wait_for 'seg_with "$(cat e/w0)" "$(cat e/w1)"'
[ ! -e e/stop ] && kill -0 "$(cat e/w0)" || fail "the workers ended before their segment"
touch e/more
wait_for '[ -e e/w2 ]'
wait_for 'seg_with "$(cat e/w0)" "$(cat e/w1)" "$(cat e/w2)"'
kill -0 "$(cat e/w2)" || fail "the late worker ended before its segment"
touch e/stop
wait $launcher || fail "the server failed under --split: $(cat p.err)"
note "$(cat p.err)"
ls p.seg*.raw >p.segs
note "$(wc -l <p.segs) segments"
! ls p.*.seg*.raw* 2>/dev/null | grep -q . || fail "segments left apart: $(ls p.*.seg*)"
for w in 0 1 2; do
	pid=$(cat e/w$w)
	whole=$("$RAWDUMP" p.raw | awk -v p="$pid" '($1 == "sample" || $1 == "regs") && $2 == p { n++ } END { print n + 0 }')
	cut=$(while read -r f; do "$RAWDUMP" "$f"; done <p.segs |
		awk -v p="$pid" '($1 == "sample" || $1 == "regs") && $2 == p { n++ } END { print n + 0 }')
	note "worker $w (pid $pid): $whole samples, $cut in the segments"
	[ "$whole" -gt 0 ] && [ "$whole" = "$cut" ] || fail "worker $w: $whole samples in its trace, $cut in the segments"
done
while read -r f; do
	"$PROFVIEW" --flat "$f" >seg.flat 2>seg.err || fail "profview cannot read $f: $(cat seg.err)"
	[ ! -s seg.err ] || fail "$f: $(cat seg.err)"
done <p.segs
exit 0
