#!/usr/bin/env bash
# The auto engine moves a thread that switches context often from its perf
# event (which the scheduler stops and starts at every switch) to a POSIX
# CPU timer, and keeps the events of the others: switchy's "ping" and
# "pong" pass a byte back and forth on one CPU, a switch every few
# microseconds of their CPU time, and "spinner" computes on another.  The
# trace says which threads moved (RAW_EXIT_MOVED in their exit records), the
# summary how many; --engine=perf moves none; each thread's CPU time in the
# profile is still what its own clock says.  Run once alone and once beside
# two busy loops on the ping-pong's CPU, so that nothing depends on an idle
# machine.  Nothing here depends on where a sample lands or on timing: a
# thread moves on its counts of context switches and CPU time.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

build switchy
cd "$WORK"
trap 'hogs_stop; rm -rf "$WORK" || true' EXIT
cpu=$(first_cpu)

# check NAME [ENGINE]: one run of switchy; the threads' exit records and the
# profile's threads checked against what the program says.
check() {
	local name=$1 engine=${2:-auto} t n ms ns moved
	"$COLLECT_TIMER" --engine="$engine" -F 1000 -o "$name.raw" ./switchy 40000 0.2 \
		>"$name.truth" 2>"$name.err" || fail "$name: collect-timer failed: $(cat "$name.err")"
	cat "$name.truth" "$name.err"
	if grep -q 'perf events are not permitted' "$name.err"; then
		echo "SKIP: perf events are refused on this machine"
		exit 77
	fi
	"$RAWDUMP" "$name.raw" >"$name.dump" || fail "$name: rawdump cannot read the trace"
	"$PROFVIEW" --threads --maxdepth=1 "$name.raw" >"$name.threads" || fail "$name: profview failed"
	cat "$name.threads"
	for t in ping pong spinner; do
		# the thread's tid, from its record (named by the program after
		# it started: the last name record of the tid)
		tid=$(awk -v t="$t" '$1 == "thread" && $5 == t { print $2 }' "$name.dump" | tail -n 1)
		[ -n "$tid" ] || fail "$name: no thread record named $t"
		moved=$(awk -v tid="$tid" '$1 == "exit" && $2 == tid { m = ($NF == "moved") } END { print m + 0 }' "$name.dump")
		note "$name: $t (tid $tid) moved: $moved"
		if [ "$engine" = perf ]; then
			[ "$moved" = 0 ] || fail "$name: --engine=perf moved $t to a POSIX timer"
		elif [ "$t" != spinner ]; then
			# a switch every few microseconds of its CPU time, against
			# one per 200 us for a move: 40000 round trips are far more
			# than the few periods of CPU time a look spans
			[ "$moved" = 1 ] || fail "$name: $t switched context at every round trip and kept its perf event"
		elif grep -q '^spinner could move 0$' "$name.truth"; then
			[ "$moved" = 0 ] || fail "$name: spinner moved, but was never switched out often enough"
		else
			note "$name: something else on the spinner's CPU switched it out often: its move not checked"
		fi
		# Its CPU time in the profile: what its clock says (the weights
		# are its CPU clock's steps, whichever timer sent them), within
		# the report's rounding and the time after its function returned:
		# 1 ms plus 0.1%, as for perf events (engine.sh).
		read -r n ms < <(awk -v n="\"$t\"]" '$NF == n { print $1, $4 }' "$name.threads") ||
			fail "$name: no $t thread in the profile"
		ns=$(awk -v t="$t" '/^cpu_ns/ { for (i = 2; i < NF; i++) if ($i == t) print $(i + 1) }' "$name.truth")
		note "$name: $t: $n samples, $ms ms charged, $(awk -v ns="$ns" 'BEGIN { printf "%.1f", ns / 1e6 }') ms measured"
		awk -v ms="$ms" -v ns="$ns" 'BEGIN { d = ms - ns / 1e6; if (d < 0) d = -d; exit !(d <= 0.001 * ns / 1e6 + 1) }' ||
			fail "$name: $t: the profile charges $ms ms, the thread measured $((ns / 1000000)) ms"
	done
	if [ "$engine" = auto ]; then
		grep -q 'threads switched context often and moved from their perf event' "$name.err" ||
			fail "$name: the summary does not say that threads moved"
	fi
}

check alone
check perf perf
hogs_start "$cpu"
check hogs
hogs_stop
echo PASS
