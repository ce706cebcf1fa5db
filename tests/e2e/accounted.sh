#!/usr/bin/env bash
# Every process of a run accounted for: a child that runs a static
# program, a set-user-ID one, or one with an empty environment is not
# profiled, and is named with why and its CPU time (from its parent's
# wait); children that end by _exit or exit are normal ends, a kill is
# said with its signal; and the program's own signals keep their default
# action under the collector.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

"$CC" -O1 -g -o accounted "$SRCDIR/tests/progs/accounted.c" || fail "cannot build accounted"

# cpu_of FILE: the CPU time, in seconds, of the first "not profiled"
# entry's "..., NNN ms CPU" (or "N.NN s CPU")
cpu_of() {
	sed -n 's/.*not profiled: [^,]*, [^,]*, \([0-9.]*\) \(ms\|s\) CPU.*/\1 \2/p' "$1" | head -1 |
		awk '{ print ($2 == "ms" ? $1 / 1000 : $1) }'
}

# not_profiled NAME MODE PROG WHY: a child of MODE running PROG (0.5 s of
# CPU) is one process of the run, not profiled because WHY, with the CPU
# its parent's wait measured: at least the 0.5 s it used (its own clock),
# less than 0.5 s + 0.25 s for the exec and the start (CPU time, which a
# loaded machine does not stretch).
not_profiled() {
	local name=$1 mode=$2 prog=$3 why=$4 cpu
	"$COLLECT_TIMER" -o "$name.raw" ./accounted "$mode" "$prog" 0.5 >"$name.out" 2>"$name.err" ||
		fail "$name: the run failed: $(cat "$name.err")"
	grep -q "^collect-timer: 2 processes (1 not profiled: $prog, $why, " "$name.err" ||
		fail "$name: collect-timer does not name the child: $(cat "$name.err")"
	cpu=$(cpu_of "$name.err")
	awk -v c="$cpu" 'BEGIN { exit !(c >= 0.5 && c < 0.75) }' ||
		fail "$name: the child's CPU time is '$cpu' s, not 0.5 s: $(cat "$name.err")"
	"$PROFVIEW" --flat "$name.raw" >"$name.txt" 2>"$name.perr" || fail "$name: profview failed: $(cat "$name.perr")"
	[ ! -s "$name.perr" ] || fail "$name: profview warns: $(cat "$name.perr")"
	# (the child's image before its exec may have a sample of its own)
	grep -q "^profile: .*, 2 processes ([12] with samples; 1 not profiled: $prog, $why, [0-9.]* m\?s CPU)" "$name.txt" ||
		fail "$name: profview's header does not name the child: $(head -3 "$name.txt")"
}

if "$CC" -O1 -static -o accounted-static "$SRCDIR/tests/progs/accounted.c" 2>/dev/null; then
	not_profiled static exec ./accounted-static "static binary"
	not_profiled vfork vforkexec ./accounted-static "static binary"
	not_profiled spawn spawn ./accounted-static "static binary"
	# --split: the segments, read together or the last alone, account
	# for the child too, and the summary names it
	"$COLLECT_TIMER" --split=0.2 -o split.raw ./accounted exec ./accounted-static 0.5 >split.out 2>split.err ||
		fail "--split: the run failed: $(cat split.err)"
	last=$(ls split.seg*.raw | tail -n 1)
	grep -qF "collect-timer: 1 not profiled: ./accounted-static, static binary, " split.err ||
		fail "--split: collect-timer does not name the child: $(cat split.err)"
	grep -qF "; named in '$last'" split.err || fail "--split: the child is not named in the last segment: $(cat split.err)"
	"$PROFVIEW" --flat split.seg*.raw >split.txt 2>split.perr || fail "--split: profview failed: $(cat split.perr)"
	grep -q "^profile: .*, 2 processes ([12] with samples; 1 not profiled: ./accounted-static, static binary, [0-9.]* m\?s CPU)" split.txt ||
		fail "--split: the segments do not name the child: $(head -3 split.txt)"
	"$PROFVIEW" --flat "$last" >split-last.txt 2>split.perr || fail "--split: profview failed on '$last': $(cat split.perr)"
	grep -q "not profiled: ./accounted-static, static binary" split-last.txt ||
		fail "--split: the last segment alone does not name the child: $(head -3 split-last.txt)"
	grep -q "ended without running its exit handlers" split.err && fail "--split: a normal end said to be otherwise: $(cat split.err)"
else
	note "no static libc: the static child is not tried"
fi
not_profiled bare bareexec ./accounted "environment without the collector's library"

# A set-user-ID program of another user: the loader ignores LD_PRELOAD.
# Only as root, where the bit takes effect (not on a nosuid mount).
cp accounted accounted-suid
if [ "$(id -u)" = 0 ] && chown nobody accounted-suid 2>/dev/null && chmod 4755 accounted-suid &&
	[ "$(stat -c %u accounted-suid)" != 0 ] && ! findmnt -n -o OPTIONS -T . | grep -qw nosuid; then
	not_profiled suid exec ./accounted-suid "set-user-ID or set-group-ID program"
else
	note "not root or a nosuid file system: the set-user-ID child is not tried"
fi

# -v lists the process not profiled with its end.
"$COLLECT_TIMER" -v -o v.raw ./accounted bareexec ./accounted 0.1 >/dev/null 2>v.err || fail "-v: the run failed"
grep -q "^collect-timer: pid [0-9]* (./accounted): not profiled: environment without the collector's library, .* of CPU, exit status 0$" v.err ||
	fail "-v does not list the process not profiled: $(cat v.err)"

# Ends: 20 children each, that leave by _exit or exit (normal ends: nothing
# said, each trace ended whole), or are killed by SIGKILL or SIGSEGV (said,
# with the signal).
for how in _exit exit; do
	"$COLLECT_TIMER" -o "$how.raw" ./accounted end "$how" 20 >/dev/null 2>"$how.err" || fail "$how: the run failed"
	! grep -q "killed\|exit handlers\|not finished" "$how.err" ||
		fail "$how: collect-timer says a child was cut short: $(cat "$how.err")"
	grep -q "^collect-timer: 21 processes, 21 with samples" "$how.err" ||
		fail "$how: not 21 processes with samples: $(cat "$how.err")"
	"$PROFVIEW" --flat "$how.raw" >"$how.txt" 2>"$how.perr" || fail "$how: profview failed"
	[ ! -s "$how.perr" ] || fail "$how: profview warns: $(cat "$how.perr")"
	! grep -q "not finished" "$how.txt" || fail "$how: the run reads as not finished: $(head -2 "$how.txt")"
	# each process's trace ends as the destructor would end it: its
	# thread's CPU time (what the run's CPU total counts), the
	# collector's own, the end
	for rec in exit collector end; do
		n=$("$RAWDUMP" "$how.raw" | awk -v r=$rec '$1 == r { n++ } END { print n + 0 }')
		[ "$n" = 21 ] || fail "$how: $n $rec records for 21 processes"
	done
done
for c in "kill 9" "segv 11"; do
	set -- $c
	"$COLLECT_TIMER" -o "$1.raw" ./accounted end "$1" 2 >/dev/null 2>"$1.err" || fail "$1: the run failed"
	[ "$(grep -c "(accounted): .*; killed by signal $2 " "$1.err")" = 2 ] ||
		fail "$1: collect-timer does not say both children were killed by signal $2: $(cat "$1.err")"
	"$PROFVIEW" --flat "$1.raw" >"$1.txt" 2>"$1.perr" || fail "$1: profview failed"
	[ "$(grep -c "(accounted): trace was not finished: the process was killed by signal $2 " "$1.perr")" = 2 ] ||
		fail "$1: profview does not say both children were killed by signal $2: $(cat "$1.perr")"
done

# The program's own signals with their default action end it as they
# would alone: ITIMER_PROF without a handler (SIGPROF), raise(SIGUSR2).
set +e
"$COLLECT_TIMER" -q -o it.raw ./accounted itimer >it.out 2>it.err
st=$?
set -e
[ "$st" = $((128 + $(kill -l PROF))) ] || fail "ITIMER_PROF: status $st, not killed by SIGPROF: $(cat it.out it.err)"
! grep -q survived it.out || fail "ITIMER_PROF: the program survived its timer"
set +e
"$COLLECT_TIMER" -q -o r.raw ./accounted raise "$(kill -l USR2)" >r.out 2>r.err
st=$?
set -e
[ "$st" = $((128 + $(kill -l USR2))) ] || fail "raise(SIGUSR2): status $st, not killed by it: $(cat r.out r.err)"
! grep -q survived r.out || fail "raise(SIGUSR2): the program survived it"
