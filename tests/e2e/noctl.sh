#!/usr/bin/env bash
# A process of one thread runs without a thread of the collector's
# ("profview-ctl"): a chain of short images under collect-timer and
# collect-heap lists only its own thread, and so does a process that waits
# while the control signal sent to the launcher pauses and resumes
# sampling, and one under --delay with --duration; the pause, the resume,
# the start and the end still work there, each thread acting at its next
# sample.  A program of one thread that closes every descriptor with
# close_range, close, dup2 or dup3 (the events too) is sampled on: the control thread and the
# sweeper that gives its thread a new event start then.  Every count checked is exact or has a margin of half its
# expected value or more: a pause is seen at the first sample after it,
# the phases are 0.2 s of CPU time each (about 200 samples at 1000 Hz,
# thousands of sampled allocations at --rate=64k).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"
[ -x "$COLLECT_HEAP" ] || fail "no collect-heap next to $COLLECT_TIMER"
build ctlless

# own_threads_only FILE WHAT: every "thread" line of FILE is ctlless's
# own thread (the process has no other), and there are N of them at least.
own_threads_only() {
	local n
	n=$(grep -c '^thread ctlless$' "$1" || true)
	! grep '^thread ' "$1" | grep -qv '^thread ctlless$' ||
		fail "$2: a thread besides the program's: $(grep '^thread ' "$1" | sort | uniq -c | tr '\n' ' ')"
	[ "$n" -ge "$3" ] || fail "$2: $n listings of the program's thread, want $3: $(cat "$1")"
}

# 1. A chain of short images, each listing its threads.
for c in "$COLLECT_TIMER" "$COLLECT_HEAP"; do
	name=$(basename "$c")
	"$c" -q -o chain.raw sh -c './ctlless threads; ./ctlless threads; exec ./ctlless threads' \
		>chain-$name.txt 2>chain.err || fail "$name on a chain failed: $(cat chain.err)"
	own_threads_only chain-$name.txt "$name, a chain of images" 3
done

# 2. The control signal sent to the launcher while the program waits:
# paused from phase_b on, resumed before phase_c.
# steps COLLECTOR ARGS...: runs "ctlless steps" under it, to steps.raw
steps() {
	rm -rf steps && mkdir steps
	"$@" -o steps.raw ./ctlless steps steps 0.2 >steps.out 2>steps.err &
	launcher=$!
	await_file steps/a "" steps.err
	kill -USR2 $launcher
	await_file steps.err 'sampling paused (signal 12) in every process' steps.err
	touch steps/go-b
	await_file steps/b "" steps.err
	kill -USR2 $launcher
	await_file steps.err 'sampling resumed (signal 12) in every process' steps.err
	touch steps/go-c
	wait $launcher || fail "ctlless steps failed under $1: $(cat steps.err)"
}
if ! "$COLLECT_TIMER" -q --engine=perf -o probe.raw true 2>probe.err; then
	note "no perf events here ($(head -1 probe.err)): a thread samples with a POSIX timer, which the sweeper's thread watches; the timer's part is not run"
else
	steps "$COLLECT_TIMER" --engine=perf -F 1000
	own_threads_only steps.out "collect-timer, paused and resumed" 3
	"$RAWDUMP" steps.raw >steps.dump
	# the program's thread: two stretches, the pause between them
	[ "$(awk '$1 == "exit"' steps.dump | wc -l)" = 2 ] ||
		fail "collect-timer: want the one thread's two stretches: $(grep -E '^(thread|exit) ' steps.dump)"
	"$PROFVIEW" --flat steps.raw >steps.flat 2>steps.perr || fail "profview --flat failed: $(cat steps.perr)"
	a=$(flat_cum steps.flat phase_a)
	b=$(flat_cum steps.flat phase_b)
	c=$(flat_cum steps.flat phase_c)
	note "collect-timer: samples in phase_a $a, phase_b $b, phase_c $c"
	[ "$b" = 0 ] || fail "collect-timer: phase_b, while paused, has $b samples"
	[ "$a" -ge 100 ] && [ "$c" -ge 100 ] ||
		fail "collect-timer: want 100 samples at least in phase_a and phase_c (0.2 s at 1000 Hz): $a, $c"

	# 0.3 s of CPU time after every descriptor was closed: 300 samples
	# at 1000 Hz, less what is missed until the sweeper gives the thread
	# a new event (a few periods).  By the range, one at a time, or by
	# putting another file on the event's number; and a pipe left on every
	# number, whose bytes the program reads back whole (the old event,
	# alive while its ring is mapped, still signals with its number).
	for how in range each dup2 dup3 pipe; do
		"$COLLECT_TIMER" --engine=perf -F 1000 -o closed.raw ./ctlless closed 0.3 $how >closed.out 2>closed.err ||
			fail "ctlless closed $how failed: $(cat closed.err)"
		grep -qx closed closed.out || fail "ctlless closed $how did not finish: $(cat closed.out)"
		"$PROFVIEW" --flat closed.raw >closed.flat 2>closed.perr || fail "profview --flat failed: $(cat closed.perr)"
		a=$(flat_cum closed.flat phase_a)
		note "collect-timer: $a samples in 0.3 s of CPU time after closing by $how"
		[ "$a" -ge 150 ] || fail "collect-timer: $a samples after closing by $how, want 150 of 300 at least"
	done

	# a child made by vfork that closes its descriptors runs on its
	# parent's memory: it starts no thread there, and the parent ends
	timeout 60 "$COLLECT_TIMER" -q -o vforked.raw ./ctlless vforked 30 >vforked.out 2>vforked.err ||
		fail "collect-timer on 30 vfork children that close their descriptors: status $?: $(cat vforked.err)"
	grep -qx vforked vforked.out || fail "ctlless vforked did not finish: $(cat vforked.out)"
fi

steps "$COLLECT_HEAP" --rate=64k
own_threads_only steps.out "collect-heap, paused and resumed" 3
"$PROFVIEW" -q --folded --sample-index=alloc_space steps.raw >steps.folded ||
	fail "profview --folded of the heap trace failed"
for p in phase_a phase_b phase_c; do
	eval "$p=\$(awk -v f=$p '\$1 ~ (\";\" f \"(;|\$)\") { n += \$NF } END { print n + 0 }' steps.folded)"
done
note "collect-heap: bytes sampled in phase_a $phase_a, phase_b $phase_b, phase_c $phase_c"
[ "$phase_b" = 0 ] || fail "collect-heap: phase_b, while paused, has $phase_b bytes sampled"
[ "$phase_a" -gt 0 ] && [ "$phase_c" -gt 0 ] || fail "collect-heap: phase_a or phase_c has no sample"

# 3. --delay=0.3 --duration=0.3 on a program that runs 1 s: no sample
# outside the window.  (collect-timer ends its trace at --duration with a
# thread of its own, "profview-stop", as before.)
for c in "$COLLECT_TIMER" "$COLLECT_HEAP"; do
	name=$(basename "$c")
	"$c" --delay=0.3 --duration=0.3 -o w.raw ./ctlless window 1 >w-$name.txt 2>w.err ||
		fail "$name --delay --duration failed: $(cat w.err)"
	! grep -q '^thread profview-ctl$' w-$name.txt || fail "$name: a control thread under --delay"
	start=$(awk '$1 == "start" { print $2 }' w-$name.txt)
	stop=$(awk '$1 == "stop" { print $2 }' w-$name.txt)
	"$RAWDUMP" w.raw >w.dump
	awk -v a="$start" -v z="$stop" '
		$1 == "regs" || $1 == "sample" || $1 == "heapalloc" {
			n++
			if ($3 < a || $3 > z + 20000000) { print "a sample at " $3 " outside " a " to " z; bad = 1 }
		}
		END { if (!n) { print "no sample"; bad = 1 } exit bad }' w.dump >w.bad ||
		fail "$name --delay/--duration: $(cat w.bad)"
	note "$name: $(grep -cE '^(regs|sample|heapalloc) ' w.dump) samples in the window"
done
exit 0
