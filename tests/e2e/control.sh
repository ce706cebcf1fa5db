#!/usr/bin/env bash
# Pausing and resuming sampling with the control signal, a program that
# takes that signal for itself, and --delay with --duration.  What is
# checked is what the trace records, exactly: no sample outside the
# stretches each thread was sampled in, no sample weighing time that was
# not sampled, and the reports' CPU time per thread equal to those
# stretches'.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
build pauser
cd "$WORK"

# intervals DUMP: checks every thread's stretches (a thread record, then
# its exit record): each sample lies inside one, and the weights of a
# stretch's samples add up to no more than its CPU time.  Prints one line
# per thread: "TID STRETCHES CPU_NS SAMPLES".
intervals() {
	awk '
	function bad(msg) { print "bad " msg; failed = 1; exit 1 }
	$1 == "thread" {
		if (open[$2]) next          # a new name only
		open[$2] = 1; t0[$2] = $3; c0[$2] = $4; w[$2] = 0; n[$2]++
		if (!($2 in order)) { order[$2] = ++k; tids[k] = $2 }
	}
	$1 == "exit" {
		if (!open[$2]) bad("exit of thread " $2 " with no stretch open")
		open[$2] = 0
		if (w[$2] > $4 - c0[$2]) bad("thread " $2 ": samples weigh " w[$2] " ns, its stretch " ($4 - c0[$2]) " ns")
		cpu[$2] += $4 - c0[$2]
	}
	$1 == "regs" || $1 == "sample" {
		if (!open[$2]) bad("thread " $2 ": a sample at " $3 " outside its stretches")
		if ($3 < t0[$2]) bad("thread " $2 ": a sample at " $3 " before its stretch began at " t0[$2])
		w[$2] += $4; s[$2]++
	}
	END {
		if (failed) exit 1
		for (i = 1; i <= k; i++) print tids[i], n[tids[i]], cpu[tids[i]], s[tids[i]] + 0
	}' "$1"
}

# 1. The program pauses itself (SIGUSR2) before phase_b and resumes after.
"$COLLECT_TIMER" -o t.raw ./pauser toggle 0.4 >t.out 2>t.err || fail "pauser toggle failed: $(cat t.err)"
cat t.out
grep -q 'sampling paused (signal 12)' t.err || fail "no line saying sampling paused: $(cat t.err)"
grep -q 'sampling resumed (signal 12)' t.err || fail "no line saying sampling resumed: $(cat t.err)"
"$RAWDUMP" t.raw >t.dump
intervals t.dump >t.iv || fail "$(grep '^bad' t.iv)"
cat t.iv
main=$(awk '$1 == "header" { print $2 }' t.dump)
[ "$(awk -v m="$main" '$1 == m { print $2 }' t.iv)" = 2 ] || fail "the main thread has not two stretches: $(cat t.iv)"
[ "$(wc -l <t.iv)" = 2 ] || fail "want two threads: $(cat t.iv)"
# The pause took effect in the 0.3 s nap before phase_b: most of phase_b's
# CPU time is in no stretch.  (It would fail only if the library's thread
# waited more than half a second for a CPU.)
b=$(awk '$2 == "b" { print $3 * 1000000 }' t.out)
gap=$(awk -v m="$main" '$1 == "exit" && $2 == m && !e { e = $4 } $1 == "thread" && $2 == m && e && !r { r = $4 } END { print r - e }' t.dump)
note "main's CPU time not sampled: $gap ns; phase_b used $b ns"
awk -v g="$gap" -v b="$b" 'BEGIN { exit !(g >= b * 0.75) }' || fail "the pause did not cover phase_b"
# The reports charge each thread exactly its stretches' CPU time, but for
# the samples that came in the collector's own work (starting, ending,
# recording what the program loaded), which the header says it leaves out:
# a thread may be short of its stretches by at most that much.
"$PROFVIEW" --threads --maxdepth=0 t.raw >t.threads 2>t.perr || fail "profview --threads failed: $(cat t.perr)"
own=$(awk '$1 == "collector:" { v = $2; if ($3 == "s") v *= 1000; else if ($3 != "ms") v /= 1000; print v; exit }' t.threads)
while read -r tid _ cpu _; do
	got=$(awk -v t="$tid" 'index($0, "[thread " t " ") { print $4 }' t.threads)
	awk -v g="$got" -v c="$cpu" -v o="${own:-0}" 'BEGIN { d = c / 1e6 - g; exit !(g != "" && d >= -0.15 && d <= 0.15 + o) }' ||
		fail "thread $tid: profview says $got ms, its stretches are $((cpu / 1000)) us: $(cat t.threads)"
done <t.iv
"$PROFVIEW" --flat t.raw >t.flat
cb=$(awk '$6 == "phase_b" { print $3 }' t.flat)
note "samples in phase_b: ${cb:-0}"
[ "${cb:-0}" -le 5 ] || fail "phase_b, while sampling was paused, has ${cb} samples"
[ "$(flat_cum t.flat phase_a)" -gt 0 ] && [ "$(flat_cum t.flat phase_c)" -gt 0 ] ||
	fail "phase_a or phase_c has no sample: $(head -12 t.flat)"

# 2. A program that installs its own SIGUSR2 handler keeps it, with
# sigaction and with signal; it was told the default was there.
for how in handler signal; do
	"$COLLECT_TIMER" -o h.raw ./pauser $how 0.3 >h.out 2>h.err || fail "pauser $how failed: $(cat h.err)"
	grep -qx 'before default' h.out || fail "$how: the program was not told SIG_DFL: $(cat h.out)"
	grep -qx 'caught 3' h.out || fail "$how: the program's handler did not get its 3 signals: $(cat h.out)"
	[ "$(grep -c 'installed its own handler for the control signal' h.err)" = 1 ] ||
		fail "$how: want one line saying the program took the signal: $(cat h.err)"
	! grep -q 'sampling paused' h.err || fail "$how: the program's signal paused sampling"
	"$RAWDUMP" h.raw >h.dump
	[ "$(grep -c '^exit' h.dump)" = 1 ] || fail "$how: sampling stopped somewhere: $(grep -Ev '^(regs|sample) ' h.dump)"
done

# 3. --delay=0.4 --duration=0.4 on a program that runs 1.2 s: every sample
# falls between the start and the stop the library was given, and the
# stretch holds no more CPU time than the window's wall-clock length.
"$COLLECT_TIMER" --delay=0.4 --duration=0.4 -o w.raw ./pauser window 1.2 >w.out 2>w.err ||
	fail "pauser window failed: $(cat w.err)"
"$RAWDUMP" w.raw >w.dump
intervals w.dump >w.iv || fail "$(grep '^bad' w.iv)"
start=$(awk '$1 == "start" { print $2 }' w.out)
stop=$(awk '$1 == "stop" { print $2 }' w.out)
awk -v a="$start" -v z="$stop" '
	($1 == "regs" || $1 == "sample") && $3 < a { print "a sample at " $3 " before the start at " a; bad = 1 }
	$1 == "thread" && $3 < a { print "a thread record at " $3 " before the start at " a; bad = 1 }
	$1 == "end" { if ($2 < z) { print "the trace ended at " $2 ", before the stop at " z; bad = 1 } end = $2 }
	$1 == "regs" || $1 == "sample" { n++; if ($3 > last) last = $3 }
	END { if (!n) { print "no sample"; bad = 1 } if (last > end) { print "a sample after the end"; bad = 1 } exit bad }' w.dump >w.bad ||
	fail "--delay/--duration: $(cat w.bad)"
cpu=$(awk '{ print $3 }' w.iv)
note "window: $(awk '{ print $4 }' w.iv) samples, $((cpu / 1000000)) ms of CPU in it"
[ "$cpu" -le $((stop - start + 20000000)) ] || fail "--delay: $cpu ns of CPU time in a window of $((stop - start)) ns"

# 4. The control signal sent to collect-timer goes to the program.
"$COLLECT_TIMER" -o k.raw ./pauser window 1.5 >/dev/null 2>k.err &
launcher=$!
for _ in $(seq 100); do [ -s k.raw ] && break; sleep 0.05; done
sleep 0.2
kill -USR2 $launcher
wait $launcher || fail "pauser window failed under a forwarded signal: $(cat k.err)"
grep -q 'sampling paused' k.err || fail "the control signal sent to collect-timer did not pause: $(cat k.err)"

# 5. --control-signal=none leaves SIGUSR2 alone; a bad name is refused.
set +e
"$COLLECT_TIMER" --control-signal=none -o n.raw ./pauser toggle 0.05 >/dev/null 2>n.err
st=$?
"$COLLECT_TIMER" --control-signal=KILL true 2>bad.err
bad=$?
set -e
[ "$st" = $((128 + 12)) ] || fail "--control-signal=none: the program was not killed by its SIGUSR2 (status $st)"
[ "$bad" = 2 ] && grep -q 'cannot be the control signal' bad.err || fail "--control-signal=KILL was not refused"

# 6. --delay=0 is no delay, as perf record -D 0; a negative one is refused.
"$COLLECT_TIMER" -q --delay=0 -o z.raw ./pauser window 0.2 >/dev/null 2>z.err ||
	fail "--delay=0: $(cat z.err)"
"$PROFVIEW" --flat z.raw >z.txt 2>&1 || fail "--delay=0: no trace: $(cat z.txt)"
set +e
"$COLLECT_TIMER" --delay=-1 true 2>neg.err
st=$?
set -e
[ "$st" = 2 ] && grep -q "invalid delay '-1'" neg.err || fail "--delay=-1: status $st, $(cat neg.err)"
exit 0
