#!/usr/bin/env bash
# collect-gdb and the gdb trace reader on a real multi-threaded program
# (tests/progs/gdbtarget.c: "alpha" spins in alpha_hot, "beta" in beta_hot,
# "waiter" waits on a condition variable), in each dumper mode: each hot
# function must show under its own thread and only there, the waiting
# thread must end in [blocked]; every report must work on the traces and on
# the checked-in dumps (tests/data/gdb/); a target stopped with SIGSTOP
# must be left stopped, in every mode; and the error paths: no such pid,
# gdb (or eu-stack) missing, a gdb that does not start, another tracer,
# permission denied (another user, a process that is not dumpable), a gdb
# that hangs, an attach slower than its allowance (a 200-thread process).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
COLLECT_GDB=${COLLECT_GDB:-$(cd "$(dirname "$PROFVIEW")/../collectors/gdb" && pwd)/collect-gdb}
[ -x "$COLLECT_GDB" ] || fail "no collect-gdb at '$COLLECT_GDB'"
command -v gdb >/dev/null || { echo "gdb is not installed: skipped"; exit 77; }

build gdbtarget
cd "$WORK"
# (long enough for the whole test on a busy machine: it is killed at the end)
./gdbtarget 300 2>target.err &
TARGET=$!
many= nodump=
# (Each kill may find its process gone, reaped as it ended: under set -e a
# failed command here would turn the test's exit status into a failure.)
trap 'kill -CONT $TARGET 2>/dev/null || true; kill $TARGET $many $nodump 2>/dev/null || true; rm -rf "$WORK"' EXIT
sleep 0.3

# tid_of TRACE NAME: the tid profview shows for the thread named NAME
tid_of() {
	"$PROFVIEW" --threads --maxdepth=0 "$1" | awk -v n="\"$2\"]" '$NF == n { sub(/\[thread /, "", $(NF-1)); print $(NF-1); exit }'
}
# share TRACE TID FUNCTION: "k n", samples of TID with FUNCTION on the stack, of all of TID's
share() {
	"$PROFVIEW" --folded --sample-index=samples --tid="$2" "$1" | awk -v f="$3" '{
		n += $NF; k0 = split($0, a, ";"); line = $0; sub(/ [0-9]+$/, "", line)
		m = split(line, fr, ";"); for (i = 1; i <= m; i++) if (fr[i] == f) { k += $NF; break }
	} END { print k + 0, n + 0 }'
}
# (a process that is gone is in state "gone", and has no CPU time: a
# failing command substitution would end the test without a word)
state_of() { awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null || echo gone; }
# CPU time in clock ticks, user and system
cpu_of() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || fail "process $1 is gone"; }
# wait_state PID STATES: wait up to 3 s for one of STATES ("RS", "T")
wait_state() {
	local st
	for _ in $(seq 30); do
		st=$(state_of "$1")
		case $2 in *"$st"*) return 0 ;; esac
		sleep 0.1
	done
	return 1
}

# check_weights TRACE: each snapshot's "# weight-ns:" line follows it: the
# interval for the first, then the time the target ran since the previous
# snapshot: never more than the time between the two (their times are
# CLOCK_REALTIME, the weights CLOCK_MONOTONIC: 2 ms of slack), nor than
# two intervals.
check_weights() {
	awk '
	/^# interval-ns: / { iv = $3 }
	/^# snapshot: / { n++; t = $4; want = 1; next }
	want {
		if ($0 !~ /^# weight-ns: [0-9]+$/) { print "snapshot " n " has no weight line"; exit 1 }
		w = $3; want = 0
		if (n == 1 && w != iv) { print "the first snapshot weighs " w ", not the interval " iv; exit 1 }
		if (w > 2 * iv) { print "snapshot " n " weighs " w ", more than two intervals"; exit 1 }
		if (n > 1 && w > (t - prev) * 1e9 + 2e6) { print "snapshot " n " weighs " w " ns, " (t - prev) " s after the previous"; exit 1 }
	}
	/^# weight-ns: / { prev = t }
	END { if (n == 0) { print "no snapshot"; exit 1 } }' "$1" >"$1.weights" ||
		fail "$1: $(cat "$1.weights")"
}

check_trace() {
	local trace=$1 min=$2 t k n
	check_weights "$trace"
	"$PROFVIEW" --threads --maxdepth=1 "$trace" >"$trace.threads" || fail "$trace: profview --threads failed"
	for pair in alpha:alpha_hot beta:beta_hot; do
		local thread=${pair%%:*} fn=${pair##*:} other
		t=$(tid_of "$trace" "$thread")
		[ -n "$t" ] || fail "$trace: no thread '$thread'"
		read -r k n < <(share "$trace" "$t" "$fn")
		note "$trace: $fn in $k of $n samples of thread $thread ($t)"
		[ "$n" -ge "$min" ] || fail "$trace: only $n samples of thread $thread"
		# A spinning thread is inside its hot function nearly always: a
		# few instructions of its loop are outside, some 3e-5 of its time
		# (20,000 steps of a loop-carried add in each call).  The rest
		# would be a wrong stack.  One snapshot in five may miss it, and
		# one at least: with the 3 snapshots of --batch, 0.8 would have
		# wanted all three (one run in 5,000 would have missed one).
		local out=$((n / 5 > 1 ? n / 5 : 1))
		[ $((n - k)) -le "$out" ] || fail "$trace: $fn in only $k of $n samples of '$thread'"
		other=$([ "$thread" = alpha ] && echo beta_hot || echo alpha_hot)
		read -r k n < <(share "$trace" "$t" "$other")
		[ "$k" -eq 0 ] || fail "$trace: $other appears in thread '$thread'"
	done
	t=$(tid_of "$trace" waiter)
	[ -n "$t" ] || fail "$trace: no thread 'waiter'"
	"$PROFVIEW" --folded --sample-index=samples --tid="$t" "$trace" >"$trace.waiter"
	read -r k n < <(share "$trace" "$t" "[blocked]")
	at_least "$k" "$n" 1 || fail "$trace: the waiting thread is not all [blocked] ($k of $n)"
	grep -q 'pthread_cond_wait' "$trace.waiter" || fail "$trace: pthread_cond_wait not in the waiter's stacks"
	for r in --tree --flat --folded --sample-index=samples --lines --files --addresses; do
		"$PROFVIEW" "$r" "$trace" >/dev/null || fail "$trace: profview $r failed"
	done
}

# 1. Each mode on the running target; the target must run on afterwards.
"$COLLECT_GDB" -p "$TARGET" -i 0.02 -n 25 -o persistent.gdb 2>persistent.log || { cat persistent.log; fail "persistent mode failed"; }
cat persistent.log
grep -c '^# snapshot:' persistent.gdb | grep -qx 25 || fail "persistent: not 25 snapshots"
grep -q '^# end: .* count$' persistent.gdb || fail "persistent: no end line"
check_trace persistent.gdb 25

"$COLLECT_GDB" --batch -p "$TARGET" -i 0.01 -n 3 -o batch.gdb 2>batch.log || { cat batch.log; fail "batch mode failed"; }
cat batch.log
check_trace batch.gdb 3

if command -v eu-stack >/dev/null; then
	"$COLLECT_GDB" --mode=eu-stack -p "$TARGET" -i 0.02 -n 10 -o eu.gdb 2>eu.log || { cat eu.log; fail "eu-stack mode failed"; }
	cat eu.log
	check_trace eu.gdb 10
else
	note "eu-stack is not installed: its mode is not tested"
fi
"$COLLECT_GDB" -q --readnever -p "$TARGET" -i 0.02 -n 5 -o readnever.gdb || fail "--readnever failed"
[ "$("$PROFVIEW" --flat readnever.gdb | awk '$6 == "alpha_hot"' | wc -l)" -eq 1 ] || fail "--readnever: no alpha_hot"
st=$(state_of "$TARGET")
[ "$st" = R ] || [ "$st" = S ] || fail "the target was left in state '$st' after sampling"
grep -q '^TracerPid:[[:space:]]*0$' "/proc/$TARGET/status" || fail "the target is still traced"

# 1b. A target stopped with SIGSTOP (or ^Z) is left as found: stopped after
# sampling, and not running between snapshots either (no CPU time).
kill -STOP "$TARGET" || fail "the target is gone"
wait_state "$TARGET" T || fail "the target does not stop on SIGSTOP"
modes="persistent batch"
command -v eu-stack >/dev/null && modes="$modes eu-stack"
for m in $modes; do
	c0=$(cpu_of "$TARGET")
	"$COLLECT_GDB" -q --mode=$m -p "$TARGET" -i 0.05 -n 6 -o stopped-$m.gdb || fail "$m: sampling a stopped target failed"
	[ "$(grep -c '^# snapshot:' stopped-$m.gdb)" -eq 6 ] || fail "$m: not 6 snapshots of the stopped target"
	sleep 0.3
	st=$(state_of "$TARGET")
	[ "$st" = T ] || fail "$m: a target stopped before sampling was left in state '$st'"
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$TARGET/status" || fail "$m: the stopped target is still traced"
	c1=$(cpu_of "$TARGET")
	note "$m: the stopped target used $((c1 - c0)) ticks of CPU while sampled"
	[ $((c1 - c0)) -le 2 ] || fail "$m: the stopped target ran while sampled ($((c1 - c0)) ticks of CPU)"
done
# Someone sends a SIGCONT while it is sampled: it runs on, and is left running.
"$COLLECT_GDB" -q -p "$TARGET" -i 0.05 -d 1.5 -o resumed.gdb &
cg=$!
# (once gdb is attached: a SIGCONT before it is a target found running)
for _ in $(seq 200); do
	! grep -q '^TracerPid:[[:space:]]*0$' "/proc/$TARGET/status" && break
	sleep 0.05
done
sleep 0.2
kill -CONT "$TARGET" || fail "the target is gone"
wait $cg || fail "collect-gdb failed on a target resumed while sampled"
wait_state "$TARGET" RS || fail "a target resumed while sampled was left in state '$(state_of "$TARGET")'"
"$PROFVIEW" --flat resumed.gdb >/dev/null || fail "the trace of the resumed target is unreadable"

# 2. Start the program; it ends by itself: a normal end, its status returned.
# (It runs free while gdb starts, a second or more on a busy machine.)
rc=0
"$COLLECT_GDB" -i 0.05 -d 30 -o run.gdb -- ./gdbtarget 5 2>run.log || rc=$?
cat run.log
[ "$rc" -eq 0 ] || fail "collect-gdb -- ./gdbtarget exited $rc"
grep -q '^# end: .* exited$' run.gdb || fail "program run: the end is not 'exited'"
[ "$(grep -c '^# snapshot:' run.gdb)" -ge 2 ] || fail "program run: too few snapshots"
"$PROFVIEW" --threads run.gdb >/dev/null || fail "profview cannot read the run's trace"
rc=0
"$COLLECT_GDB" -q -n 2 -o /dev/null -- ./no-such-program 2>/dev/null || rc=$?
[ "$rc" -eq 127 ] || fail "a missing program is not 127 but $rc"

# 3. SIGINT ends sampling normally, the trace is complete, the target runs on.
"$COLLECT_GDB" -q -p "$TARGET" -i 0.02 -o int.gdb &
cg=$!
sleep 1.5
kill -INT $cg || fail "collect-gdb ended before its SIGINT"
rc=0
wait $cg || rc=$?
[ "$rc" -eq 0 ] || fail "collect-gdb interrupted by SIGINT exited $rc"
grep -q '^# end: .* interrupted$' int.gdb || fail "SIGINT: no end line"
"$PROFVIEW" int.gdb >/dev/null || fail "SIGINT: trace unreadable"
sleep 0.2
st=$(state_of "$TARGET")
[ "$st" = R ] || [ "$st" = S ] || fail "the target was left in state '$st' after SIGINT"

# 4. Errors: one line, nonzero exit.  (The summary line that says no
# snapshot was taken may follow; -q leaves it out.)
one_error() { # NAME EXPECTED-TEXT LOG
	local n
	n=$(grep -v '^collect-gdb: no snapshot taken; ' "$3" | wc -l)
	[ "$n" -eq 1 ] || { cat "$3"; fail "$1: $n lines, not one"; }
	grep -q '^collect-gdb: ' "$3" || { cat "$3"; fail "$1: no message"; }
	grep -q -- "$2" "$3" || { cat "$3"; fail "$1: message does not say '$2'"; }
}
sh -c 'exit 0' & gone=$!; wait $gone
if ! kill -0 "$gone" 2>/dev/null; then
	"$COLLECT_GDB" -p "$gone" -o e1.gdb 2>e1.log && fail "no such pid: exit 0"
	one_error "no such pid" "no process with pid $gone" e1.log
fi
PATH=/nonexistent "$COLLECT_GDB" -p "$TARGET" -o e2.gdb 2>e2.log && fail "gdb missing: exit 0"
one_error "gdb missing" "gdb is not installed" e2.log
"$COLLECT_GDB" --gdb=/nonexistent/gdb -p "$TARGET" -o e2.gdb 2>e2.log && fail "--gdb missing: exit 0"
one_error "--gdb missing" "cannot run gdb '/nonexistent/gdb'" e2.log
PATH=/nonexistent "$COLLECT_GDB" --mode=eu-stack -p "$TARGET" -o e2.gdb 2>e2.log && fail "eu-stack missing: exit 0"
one_error "eu-stack missing" "eu-stack is not installed" e2.log
# A full disk: the write error ends the sampling at once and is the one
# reported (the errno of the write, not whatever came last).
for m in $modes; do
	rc=0
	timeout 10 "$COLLECT_GDB" -q --mode=$m -p "$TARGET" -i 0.02 -n 1000 -o - >/dev/full 2>e2.log || rc=$?
	[ "$rc" -eq 1 ] || { cat e2.log; fail "$m: full disk: exit $rc, not 1"; }
	one_error "$m: full disk" "cannot write 'standard output': No space left on device" e2.log
done
# A "gdb" that never answers, and one that exits at once without a word.
printf '#!/bin/sh\nexec sleep 30\n' >mute-gdb
printf '#!/bin/sh\nexit 3\n' >false-gdb
chmod +x mute-gdb false-gdb
"$COLLECT_GDB" --gdb=./mute-gdb --attach-timeout=1 -p "$TARGET" -o e2.gdb 2>e2.log && fail "mute gdb: exit 0"
one_error "mute gdb" "gdb ('./mute-gdb') did not answer its first commands within 1 s of starting" e2.log
"$COLLECT_GDB" --gdb=./false-gdb -p "$TARGET" -o e2.gdb 2>e2.log && fail "false gdb: exit 0"
one_error "false gdb" "gdb ('./false-gdb') exited at start with status 3" e2.log

if command -v strace >/dev/null; then
	strace -o /dev/null -p "$TARGET" 2>/dev/null &
	tracer=$!
	for _ in $(seq 50); do grep -q "^TracerPid:[[:space:]]*$tracer" "/proc/$TARGET/status" && break; sleep 0.1; done
	"$COLLECT_GDB" -p "$TARGET" -o e3.gdb 2>e3.log && fail "another tracer: exit 0"
	one_error "another tracer" "already traced by process $tracer" e3.log
	kill $tracer 2>/dev/null || true
	wait $tracer 2>/dev/null || true
else
	note "strace is not installed: the other-tracer case is not tested"
fi

if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$COLLECT_GDB"; then
	# A process of another user; one of the same user that is not dumpable.
	chmod 755 "$WORK"
	cat >nodump.c <<'PROG'
#include <sys/prctl.h>
#include <unistd.h>
int main(void) { prctl(PR_SET_DUMPABLE, 0); for (;;) pause(); }
PROG
	"$CC" -o nodump nodump.c
	setpriv --reuid=65534 --regid=65534 --clear-groups ./nodump &
	nodump=$!
	sleep 0.3
	for m in $modes; do
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$COLLECT_GDB" --mode=$m -p "$TARGET" -o - >/dev/null 2>e4.log && fail "$m: permission denied: exit 0"
		one_error "$m: permission denied" "permission denied (it belongs to uid 0, you are uid 65534): run as that user or as root" e4.log
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$COLLECT_GDB" --mode=$m -p "$nodump" -o - >/dev/null 2>e4.log && fail "$m: not dumpable: exit 0"
		one_error "$m: not dumpable" "it is not dumpable.*run as root" e4.log
	done
	kill $nodump 2>/dev/null || fail "the process that is not dumpable ended while sampled"
	wait $nodump 2>/dev/null || true
else
	note "not root (or no setpriv): the permission case is not tested"
fi

# A gdb whose output stops once the target is stopped: the snapshot times
# out, gdb is ended, and the target must run on.
cat >hanging-gdb <<'EOF'
#!/bin/sh
gdb "$@" | while IFS= read -r l; do
	printf '%s\n' "$l"
	case $l in *'*stopped'*|*'[New LWP'*) exec sleep 20 ;; esac
done
EOF
chmod +x hanging-gdb
for m in persistent batch; do
	"$COLLECT_GDB" --mode=$m --gdb=./hanging-gdb --timeout=1 -p "$TARGET" -o e5.gdb 2>e5.log && fail "$m: hanging gdb: exit 0"
	one_error "$m: hanging gdb" "did not finish snapshot 1 of process $TARGET (5 threads) within 1 s: give a longer --timeout" e5.log
	sleep 0.3
	st=$(state_of "$TARGET")
	[ "$st" = R ] || [ "$st" = S ] || fail "$m: the target was left in state '$st' after a gdb timeout"
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$TARGET/status" || fail "$m: the target is still traced after a timeout"
done
"$COLLECT_GDB" -p "$TARGET" 2>/dev/null -i 0 && fail "interval 0 accepted"
rc=0
"$COLLECT_GDB" 2>/dev/null || rc=$?
[ "$rc" -eq 2 ] || fail "no target is not a usage error"

# The man page documents exactly the options --help lists.
help_opts=$("$COLLECT_GDB" --help | grep -oE -- '--[a-z][a-z-]*' | sort -u)
man_opts=$(sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$SRCDIR/man/collect-gdb.1.in" | grep -oE -- '\\-\\-[a-z][a-z\\-]*' |
	sed 's/\\//g' | sort -u)
[ "$help_opts" = "$man_opts" ] || fail "collect-gdb --help and collect-gdb.1 differ: $(diff <(echo "$help_opts") <(echo "$man_opts") | tr '\n' ' ')"
"$COLLECT_GDB" --version | grep -q '[0-9]\.[0-9]' || fail "collect-gdb --version"

# 5. A process of 200 threads: attaching stops and reads every one.  It
# gets its own allowance, --attach-timeout; when attaching takes longer
# (here a gdb that waits 4 s before it attaches: longer than the 3 s
# allowed whatever gdb's own start takes), the message says so.
build manythreads
./manythreads 200 60 >many.out &
many=$!
for _ in $(seq 50); do grep -q ready many.out && break; sleep 0.1; done
"$COLLECT_GDB" -p "$many" -i 0.05 -n 3 -o many.gdb 2>many.log || { cat many.log; fail "200 threads: sampling failed"; }
cat many.log
[ "$(awk '/^# snapshot: 1 /{ on = 1; next } /^# snapshot:/{ on = 0 } on && /^Thread /' many.gdb | wc -l)" -eq 201 ] ||
	fail "200 threads: snapshot 1 does not hold 201 threads"
cat >slow-attach-gdb <<'EOF'
#!/bin/sh
while IFS= read -r l; do
	case $l in *-target-attach*) sleep 4 ;; esac
	printf '%s\n' "$l"
done | gdb "$@"
EOF
chmod +x slow-attach-gdb
# (3 s: gdb's own start is in it, a second or more on a busy machine)
"$COLLECT_GDB" --gdb=./slow-attach-gdb --attach-timeout=3 -p "$many" -n 2 -o e6.gdb 2>e6.log && fail "slow attach: exit 0"
one_error "slow attach" "attaching to process $many (201 threads) took longer than 3 s: give a longer --attach-timeout" e6.log
wait_state "$many" S || fail "slow attach: the target was left in state '$(state_of "$many")'"
grep -q '^TracerPid:[[:space:]]*0$' "/proc/$many/status" || fail "slow attach: the target is still traced"
# A --timeout shorter than the attach is for the snapshots: the attach
# still has its own.  (3 s: a snapshot of 201 threads takes a second or
# more on a busy machine.)
"$COLLECT_GDB" -q --gdb=./slow-attach-gdb --timeout=3 -p "$many" -n 2 -o e6.gdb || fail "slow attach with --timeout=3 failed"
kill $many 2>/dev/null || fail "the 200-thread process ended while sampled: $(cat many.out)"
wait $many 2>/dev/null || true

# 6. Checked-in dumps: real gdb 13 output and hand-made edge cases.
data=$SRCDIR/tests/data/gdb
for f in "$data"/*; do
	for r in --tree --flat --folded --sample-index=samples --threads; do
		"$PROFVIEW" -q "$r" "$f" >/dev/null || fail "profview $r $(basename "$f") failed"
	done
done
"$PROFVIEW" --folded --sample-index=samples --threads "$data/gdb13-batch-4threads.txt" >b.folded
grep -qx '\[thread 14936 "worker-a"\];clone3;start_thread;ta;spin_a 1' b.folded || fail "gdb13 dump: worker-a"
grep -qx '\[thread 14934 "mt"\];main;__libc_pause;\[blocked\] 1' b.folded || fail "gdb13 dump: main"
"$PROFVIEW" --folded --full-names --sample-index=samples --threads "$data/edge-cases.txt" >edge.folded 2>edge.err
cat edge.folded edge.err
grep -q 'cut off' edge.err || fail "edge cases: the cut is not reported"
grep -qx '\[thread 1233 "server"\];main;hash_block;mix_round;mix_step 1' edge.folded || fail "edge cases: inlined frames"
grep -qx '\[thread 1235 ""\];clone3;start_thread;event_loop;epoll_wait;\[blocked\] 1' edge.folded ||
	grep -qx '\[thread 1235\];clone3;start_thread;event_loop;epoll_wait;\[blocked\] 1' edge.folded || fail "edge cases: epoll_wait thread"
grep -q '^\[thread 1236 "cut"\];worker;crunch 1$' edge.folded || fail "edge cases: the cut thread"
grep -q 'Functor<int>::operator();std::vector<.*>::push_back;<signal handler called>;raise;__pthread_kill;__pthread_kill_internal;__pthread_kill_implementation 1$' edge.folded ||
	fail "edge cases: C++ and signal frames"
"$PROFVIEW" "$data/gdb13-persistent.gdb" | grep -q 'gdb backtraces' || fail "the persistent trace's header"
exit 0
