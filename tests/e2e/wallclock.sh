#!/usr/bin/env bash
# --clock=wall: a thread that sleeps about half of the time (nanosleep and
# poll in turn) has its off-CPU share of wall-clock time right within 5
# sigma (of the time it ran or blocked), its off-CPU samples end in
# "[off-cpu]" under the blocking call, an always-running thread is on CPU
# as much as it says, and the sampler of off-CPU threads interrupts no
# blocked call: the program sees EINTR no more than the sweeper's race
# (below) makes it.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

"$CC" -O2 -g -o "$WORK/sleeper" "$SRCDIR/tests/progs/sleeper.c" -lpthread || fail "cannot compile sleeper.c"
cd "$WORK"
./sleeper 0.5 >bare.txt || fail "sleeper failed"
# 3 s of wall-clock time: some 700 samples of each thread (250 to 430
# beside a 2-thread CPU hog).
"$COLLECT_TIMER" --clock=wall -o wall.raw ./sleeper 3 >truth.txt 2>err.txt || fail "collect-timer --clock=wall failed"
cat truth.txt err.txt
grep -q 'wall-clock time' err.txt || fail "the summary does not speak of wall-clock time"
# Alone, no signal comes: no EINTR.  Profiled, the off-CPU sampler sends
# no signal either, but the sweeper may: it signals a running thread the
# CPU timer missed, and one that blocks in nanosleep or poll between the
# sweeper's look and the signal's arrival has the call interrupted
# (ACCURACY in collect-timer(1)).  On an idle machine that never happens;
# beside a 2-thread CPU hog it did in 5 of 8 runs, once each, of 120 to 180
# naps (2 at most in a run of 1.5 s, in 12).  A sampler that interrupted
# blocked calls would interrupt nearly every nap (each is 3 to 8 ms, the
# sampler looks every 4 ms): at most one nap in four is far from both.
[ "$(grep eintr bare.txt)" = "eintr 0" ] || fail "sleeper alone saw EINTR: $(cat bare.txt)"
eintr=$(awk '$1 == "eintr" { print $2 }' truth.txt)
naps=$(awk '$1 == "naps" { print $2 }' truth.txt)
note "profiled: EINTR in $eintr of $naps naps"
[ "${naps:-0}" -ge 20 ] || fail "the napper made only ${naps:-no} naps"
[ $((4 * eintr)) -le "$naps" ] || fail "the program saw EINTR in $eintr of its $naps naps under the profiler, in none alone"
"$PROFVIEW" --threads wall.raw >tree.txt || fail "profview failed"
"$PROFVIEW" --threads --folded --sample-index=samples wall.raw >folded.txt || fail "profview --folded --sample-index=samples failed"
head -3 tree.txt
# Per thread: wall ms in all, and in [off-cpu] leaves (column 4 of the tree).
share() {
	awk -v n="\"$1\"]" '/\[thread / { in_t = ($NF == n); if (in_t) { total = $4; count = $1 }; next }
		in_t && $5 == "[off-cpu]" { off += $4 } END { if (total > 0) print off / total, total, count }' tree.txt
}
for t in napper spinner; do
	read -r got total n < <(share $t) || fail "no $t thread in the profile"
	read -r cpu wall runq < <(awk -v t=$t '$1 == "thread" && $2 == t { print $4, $6, $10 }' truth.txt)
	# Off CPU is the time blocked: neither running nor runnable (a thread
	# waiting for a processor is "running" to the kernel, and not counted).
	expect=$(awk -v c="$cpu" -v w="$wall" -v q="$runq" 'BEGIN { b = w - c - q; if (b < 0) b = 0; print b / (c + b) }')
	# The share is estimated from the thread's samples, n of them: the
	# on-CPU ones weigh the CPU time exactly, the off-CPU ones the wall time
	# since the sampler's last look.  Runs spread by half the binomial
	# sigma (0.021 beside a CPU hog, where it is 0.045): the looks come
	# every 4 ms, a nap or a spin lasts 3 to 8.  5 binomial sigmas (10 of
	# the spread seen), with a floor of 0.02 for p (the spinner's share is
	# 0), plus 0.01 for the program's own measure: 0.5 +- 0.10 with 700
	# samples, 0.5 +- 0.17 with 250.
	note "$t: off-CPU share $got of $total ms in the profile, true $expect ($n samples)"
	awk -v g="$got" -v p="$expect" -v n="$n" 'BEGIN { d = g - p; if (d < 0) d = -d;
		s = sqrt((p < 0.02 ? 0.02 : p) * (1 - p) / n); exit !(d <= 5 * s + 0.01) }' ||
		fail "$t: off-CPU share $got is not $expect within 5 sigma"
done
# The napper's off-CPU samples wait in the calls it makes.
off=$(grep '"napper"\]' folded.txt | grep ';\[off-cpu\] ' | awk '{ s += $NF } END { print s + 0 }')
ns=$(grep '"napper"\]' folded.txt | grep -E ';nap_nanosleep;.*(nanosleep|clock_nanosleep);\[off-cpu\] ' | awk '{ s += $NF } END { print s + 0 }')
pl=$(grep '"napper"\]' folded.txt | grep -E ';nap_poll;.*poll;\[off-cpu\] ' | awk '{ s += $NF } END { print s + 0 }')
note "napper off-CPU samples: $off, in nanosleep $ns, in poll $pl"
[ "$ns" -gt 0 ] && [ "$pl" -gt 0 ] || fail "the blocking calls are not under the off-CPU samples"
at_least $((ns + pl)) "$off" 0.8 || fail "only $((ns + pl)) of $off off-CPU samples under nanosleep or poll"
# The main thread waits in pthread_join the whole time.
grep -E '"sleeper"\];.*main;.*pthread.*join.*;\[off-cpu\] ' folded.txt >/dev/null ||
	fail "the main thread's wait in pthread_join is not shown"
exit 0
