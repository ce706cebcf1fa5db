#!/usr/bin/env bash
# collect-heap's pauses: --delay past a first phase of allocations, and
# --duration ending before a second, sample only the other phase; the
# control signal sent to collect-heap pauses sampling across a phase and
# the frees made while paused are recorded (the blocks sampled before the
# pause and freed during it are not in use at the end); a signal sent
# however early never kills the program; a program with its own SIGUSR2
# handler gets one line and keeps its handler.  Each phase allocates 2000
# blocks of 32 KiB (tests/progs/heapphases.c): a phase sampled is within
# 5 sigma of the truth, a phase not sampled has no sample at all.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"
[ -x "$COLLECT_HEAP" ] || fail "no collect-heap next to $COLLECT_TIMER"
build heapphases
build pauser

RATE=65536
SIZE=32768
N=2000
# phases TRACE TYPE: "phase_x bytes" of the trace by TYPE, into TYPE.txt
phases() {
	"$PROFVIEW" -q --folded --sample-index="$2" "$1" >"$2.folded" || fail "profview --sample-index=$2 of $1 failed"
	awk '{ n = split($1, a, ";"); for (i = 1; i <= n; i++) if (a[i] ~ /^phase_[abc]$/) { s[a[i]] += $NF; break } }
		END { for (k in s) print k, s[k] }' "$2.folded" >"$2.txt"
}
value_of() {
	awk -v f="$2" '$1 == f { print $2; found = 1 } END { if (!found) print 0 }' "$1"
}
# sampled_ok PHASE WHAT [TYPE]: TYPE.txt (alloc_space.txt) has N blocks
# of SIZE for PHASE within 5 sigma (a block is sampled with
# p = 1-exp(-SIZE/RATE), independently)
sampled_ok() {
	local e f=${3:-alloc_space}.txt
	e=$(value_of "$f" "$1")
	awk -v e="$e" -v n=$N -v s=$SIZE -v r=$RATE 'BEGIN {
		p = 1 - exp(-s / r); t = n * s; sd = t * sqrt((1 - p) / (n * p))
		d = e - t; if (d < 0) d = -d
		exit !(d <= 5 * sd)
	}' || fail "$2: $1 has $e bytes in $f, not $N x $SIZE within 5 sigma: $(cat "$f")"
}
# unsampled PHASE WHAT: PHASE has no sample in alloc_space.txt
unsampled() {
	[ "$(value_of alloc_space.txt "$1")" = 0 ] || fail "$2: $1 was sampled: $(cat alloc_space.txt)"
}

# 1. --delay=1 past phase_a (at once), phase_b 1.5 s after the start.  (It
# would fail only if the library's thread waited half a second for a CPU.)
"$COLLECT_HEAP" -q --rate=64k --delay=1 -o d.raw ./heapphases sleep 1.5 2>d.err ||
	fail "collect-heap --delay failed: $(cat d.err)"
phases d.raw alloc_space
note "--delay=1: $(tr '\n' ' ' <alloc_space.txt)"
unsampled phase_a --delay
sampled_ok phase_b --delay

# 2. --duration=1 ends before phase_b, 1.5 s after the start; the program
# runs on.
"$COLLECT_HEAP" -q --rate=64k --duration=1 -o u.raw ./heapphases sleep 1.5 2>u.err ||
	fail "collect-heap --duration failed: $(cat u.err)"
phases u.raw alloc_space
note "--duration=1: $(tr '\n' ' ' <alloc_space.txt)"
sampled_ok phase_a --duration
unsampled phase_b --duration
phases u.raw inuse_space
sampled_ok phase_a "--duration" inuse_space

# 3. The control signal sent to collect-heap after phase_a pauses sampling
# before phase_b (the program waits for the line that says so), which
# frees phase_a's blocks; the next resumes it before phase_c.
mkdir -p steps
"$COLLECT_HEAP" --rate=64k -o s.raw ./heapphases steps steps 2>s.err &
launcher=$!
await_file steps/a "" s.err
kill -USR2 $launcher
await_file s.err 'sampling paused (signal 12) in every process' s.err
touch steps/go-b
await_file steps/b "" s.err
kill -USR2 $launcher
await_file s.err 'sampling resumed (signal 12) in every process' s.err
touch steps/go-c
wait $launcher || fail "heapphases steps failed under the control signal: $(cat s.err)"
phases s.raw alloc_space
note "control signal: allocated $(tr '\n' ' ' <alloc_space.txt)"
sampled_ok phase_a "control signal"
unsampled phase_b "control signal"
sampled_ok phase_c "control signal"
phases s.raw inuse_space
note "control signal: in use $(tr '\n' ' ' <inuse_space.txt)"
[ "$(value_of inuse_space.txt phase_a)" = 0 ] ||
	fail "phase_a's blocks, freed while paused, are in use at the end: $(cat inuse_space.txt)"
[ "$("$RAWDUMP" s.raw | grep -c '^heapfree ')" -gt 0 ] || fail "no heap-free record in s.raw"

# 4. A program with its own SIGUSR2 handler: one line, naming
# --control-signal, and its handler gets the signals; sampling goes on.
"$COLLECT_HEAP" --rate=64k -o h.raw ./heapphases handler >h.out 2>h.err ||
	fail "heapphases handler failed: $(cat h.err)"
grep -qx 'caught 3' h.out || fail "the program's handler did not get its 3 signals: $(cat h.out)"
[ "$(grep -c 'installed its own handler for the control signal (SIGUSR2).*--control-signal' h.err)" = 1 ] ||
	fail "want one line saying the program took the signal: $(cat h.err)"
! grep -q 'sampling paused' h.err || fail "the program's own signal paused sampling"
phases h.raw alloc_space
sampled_ok phase_a "own handler"
for how in handler signal; do
	"$COLLECT_HEAP" -o p.raw ./pauser $how 0.2 >p.out 2>p.err || fail "pauser $how failed: $(cat p.err)"
	grep -qx 'before default' p.out || fail "$how: the program was not told SIG_DFL: $(cat p.out)"
	grep -qx 'caught 3' p.out || fail "$how: the program's handler did not get its 3 signals: $(cat p.out)"
done

# 5. An early signal never kills: to collect-heap 0 to 10 ms after it has
# begun, and to the program as soon as it is forked; to the children a
# program forks and execs, right after the fork.
early_control_signal "$COLLECT_HEAP"

# 6. --control-signal=none leaves SIGUSR2 to its default; bad values refused.
set +e
"$COLLECT_HEAP" --control-signal=none -o n.raw ./pauser toggle 0.05 >/dev/null 2>n.err
st=$?
"$COLLECT_HEAP" --control-signal=KILL true 2>k.err
kst=$?
"$COLLECT_HEAP" --duration=0 true 2>z.err
zst=$?
set -e
[ "$st" = $((128 + 12)) ] || fail "--control-signal=none: the program was not killed by its SIGUSR2 (status $st)"
[ "$kst" = 2 ] && grep -q 'cannot be the control signal' k.err || fail "--control-signal=KILL was not refused"
[ "$zst" = 2 ] && grep -q "invalid duration '0'" z.err || fail "--duration=0: status $zst, $(cat z.err)"
exit 0
