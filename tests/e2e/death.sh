#!/usr/bin/env bash
# A program that dies keeps its samples: SIGKILL at a random moment (sent to
# the program, not to collect-timer), abort(), and a trace that cannot grow
# (file size limit): the samples that could not be stored are counted.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

"$CC" -O2 -g -pthread -o tcases "$SRCDIR/tests/progs/timer-cases.c" || fail "cannot build timer-cases"

# cpu_ms FILE: the CPU time of a --flat report's header, in ms
cpu_ms() {
	awk '/^profile:/ { for (i = 1; i <= NF; i++) if ($i == "CPU") {
		v = $(i + 1); u = $(i + 2); sub(/,$/, "", u); print (u == "s" ? v * 1000 : v); exit } }' "$1"
}

# SIGKILL: the trace holds the samples up to the kill.  The check is on CPU
# time, which a loaded machine does not stretch: the CPU time of the trace
# against the program's CPU clock read just before the kill.  A killed
# thread has no exit record: its samples weigh what they recorded, the
# CPU time up to the last one, which the tick takes within 2 periods of
# CPU time of the one before.  For that the program computes without a
# system call in its loop (TIMER_CASES_CRUNCH): one that reads its CPU
# clock can be preempted between ticks on a loaded machine, and then its
# samples come from the sweeper, 3 to 4 periods apart.
for round in 1 2 3; do
	rm -f k.raw out.txt
	TIMER_CASES_CRUNCH=1 "$COLLECT_TIMER" -q -o k.raw ./tcases forever >out.txt 2>k.err &
	launcher=$!
	for _ in $(seq 200); do [ -s out.txt ] && break; sleep 0.05; done
	app=$(awk '/^pid/ { print $2 }' out.txt)
	[ -n "$app" ] || fail "the program did not start"
	sleep "0.$((RANDOM % 7 + 2))"
	kill_rt=$(date +%s%N)
	kill_cpu=$(./tcases killcpu "$app") || fail "cannot kill the program"
	set +e
	wait $launcher
	st=$?
	set -e
	[ "$st" -eq 137 ] || fail "SIGKILL gave status $st, not 137"
	"$PROFVIEW" --flat k.raw >k.txt 2>k.perr || fail "profview on the killed trace"
	grep -q 'not finished' k.perr || fail "the killed trace is not reported as unfinished: $(cat k.perr)"
	trace_cpu=$(cpu_ms k.txt)
	# The program's CPU time before the library started (loading, the
	# dynamic linker: milliseconds on a loaded machine) is in no trace:
	# each thread's first record says how much it had.
	before=$("$RAWDUMP" k.raw | awk '$1 == "thread" && !seen[$2]++ { s += $4 } END { print s + 0 }')
	kill_cpu=$((kill_cpu - before))
	period_ms=4
	note "round $round: CPU at the kill (less $((before / 1000)) us before the start) $(awk -v c="$kill_cpu" 'BEGIN { printf "%.1f", c / 1e6 }') ms, in the trace $trace_cpu ms"
	awk -v c="$kill_cpu" -v t="$trace_cpu" -v p=$period_ms 'BEGIN {
		d = c / 1e6 - t; if (d < 0) d = -d; exit !(d <= 2 * p + 10) }' ||
		fail "the killed trace has $trace_cpu ms of CPU, the program had used $((kill_cpu / 1000000)) ms"
	# The same in wall-clock time, for information only (a loaded machine
	# may not run the program just before the kill).
	start_rt=$(od -An -t u8 -j 40 -N 8 k.raw | tr -d ' ')
	upto=$(sed -n 's/.* up to \([0-9.]*\) s$/\1/p' k.perr)
	note "round $round: last sample $(awk -v k="$kill_rt" -v s="$start_rt" -v u="$upto" 'BEGIN { printf "%.1f", (k - s) / 1e6 - u * 1000 }') ms before the kill"
done

# A trace read while its program runs: what came so far, said to be of a
# running program; read again and again as the program ends (when the
# collector cuts the file to its end): never a crash.
"$COLLECT_TIMER" -q -o live.raw ./tcases spin 1.5 >/dev/null 2>&1 &
launcher=$!
for _ in $(seq 100); do [ -s live.raw ] && break; sleep 0.05; done
sleep 0.3
"$PROFVIEW" --flat live.raw >live.txt 2>live.err || fail "profview on a live trace failed: $(cat live.err)"
grep -q "live.raw': pid [0-9]* (tcases): the program is still running: read [0-9]* samples up to" live.err ||
	fail "a live trace is not said to be of a running program: $(cat live.err)"
grep -q '^program: .*, still running$' live.txt || fail "the header does not say still running: $(head -1 live.txt)"
reads=0
while kill -0 $launcher 2>/dev/null; do
	st=0
	"$PROFVIEW" -q --flat live.raw >/dev/null 2>&1 || st=$?
	[ "$st" -lt 128 ] || fail "profview died of signal $((st - 128)) reading a trace as its program ended"
	reads=$((reads + 1))
done
wait $launcher || fail "the live run failed"
note "a live trace read $reads times as its program ran and ended"
"$PROFVIEW" --flat live.raw >live2.txt 2>live2.err || fail "profview on the finished trace"
grep -q 'still running\|not finished' live2.err live2.txt && fail "the finished trace: $(cat live2.err)"

# abort(): SIGABRT's status, the samples before it, an unfinished trace.
set +e
"$COLLECT_TIMER" -q -o ab.raw ./tcases abort >/dev/null 2>&1
st=$?
set -e
[ "$st" -eq 134 ] || fail "abort() gave status $st, not 134"
"$PROFVIEW" --flat ab.raw >ab.txt 2>ab.err || fail "profview on the abort trace"
grep -q 'not finished' ab.err || fail "abort: the trace is not reported as unfinished"
[ "$(cpu_ms ab.txt | cut -d. -f1)" -ge 150 ] || fail "abort: only $(cpu_ms ab.txt) ms of the 200 ms spin kept"

# A trace that cannot grow: a file size limit (1 MiB, then 640 KiB).  The
# program runs as usual and keeps its status, the trace is finished and
# says how many samples it could not keep.  In dwarf mode a sample of the main
# thread is 1.2 to 8.3 KiB (the stack from the stack pointer to its top,
# which ASLR moves by up to 8 KiB; 8 KiB at most are copied), so the trace
# (about 390 KiB of it, here) holds some 45 to 330 of them: 3 s at 250 Hz
# are 750.  The program computes without a system call in its loop
# (TIMER_CASES_CRUNCH), so that the 750 come on a loaded machine too, not
# the 190 or so of a thread the sweeper paces (all of which could fit).
set +e
(ulimit -f 1024 && exec "$COLLECT_TIMER" -o lim.raw ./tcases exit 5 >/dev/null 2>lim.err)
st=$?
(ulimit -f 640 && TIMER_CASES_CRUNCH=1 exec "$COLLECT_TIMER" --unwind=dwarf -o big.raw ./tcases spin 3) >/dev/null 2>big.err
bst=$?
set -e
[ "$st" -eq 5 ] || fail "under a file size limit the program's status was $st, not 5"
[ "$bst" -eq 0 ] || fail "under a file size limit a long run gave status $bst: $(cat big.err)"
size=$(stat -c %s big.raw)
[ "$size" -le 655360 ] || fail "the trace grew to $size bytes past the 640 KiB limit"
"$PROFVIEW" --flat big.raw >big.txt 2>big.perr || fail "profview on the limited trace"
grep -q 'not finished' big.perr big.txt && fail "the limited trace is not finished: $(cat big.perr)"
lost=$(sed -n 's/^warning: \([0-9]*\) samples lost.*/\1/p' big.txt)
[ "${lost:-0}" -ge 50 ] || fail "the limited trace reports ${lost:-no} lost samples: $(head -3 big.txt)"
# and why, in both tools
grep -q "^warning: $lost samples\? lost ([0-9.]*%): the trace could not grow: it reached the file size limit (ulimit -f)" big.txt ||
	fail "profview does not say why samples were lost: $(grep '^warning' big.txt)"
grep -q "lost (the trace could not grow: it reached the file size limit (ulimit -f))" big.err ||
	fail "collect-timer does not say why samples were lost: $(cat big.err)"
samples=$(awk '/^profile:/ { for (i = 1; i <= NF; i++) if ($i == "samples") print $(i - 1) }' big.txt)
[ "${samples:-0}" -ge 30 ] || fail "the limited trace kept only ${samples:-0} samples"
note "640 KiB limit: $samples samples kept, $lost lost"

# A program that starts as root and becomes another user could not open
# its (root's, private) trace to make it grow: through libc's setuid the
# trace is kept open and nothing is lost; with the bare system call the
# loss is said to be the user change.  The library maps 2 MiB at first and
# grows the file when less than 1 MiB is left; the last 256 KiB are kept
# for the end.  3 s at 1 kHz are some 3,000 dwarf-mode samples of 1 KiB or
# more: the trace must grow, and cannot hold them without.
if [ "$(id -u)" -eq 0 ]; then
	"$COLLECT_TIMER" -F 1000 --engine=perf --unwind=dwarf -o su.raw ./tcases setuid 3 >/dev/null 2>su.err || fail "setuid case failed: $(cat su.err)"
	grep -q ' 0 lost, written' su.err || fail "setuid: samples were lost: $(cat su.err)"
	[ "$(stat -c %s su.raw)" -gt $((3 << 19)) ] || fail "setuid: the trace did not need to grow ($(stat -c %s su.raw) bytes)"
	"$PROFVIEW" --flat su.raw >su.txt 2>&1 || fail "profview on the setuid trace"
	grep -q 'samples lost' su.txt && fail "setuid: $(grep 'samples lost' su.txt)"
	"$COLLECT_TIMER" -F 1000 --engine=perf --unwind=dwarf -o sur.raw ./tcases setuid-raw 3 >/dev/null 2>sur.err || fail "setuid-raw case failed: $(cat sur.err)"
	grep -q ' [1-9][0-9]* lost (the trace could not grow: the program changed its user id and could not open it any more)' sur.err ||
		fail "setuid-raw: the loss is not put down to the user change: $(cat sur.err)"
else
	note "not root: the setuid cases are skipped"
fi
exit 0
