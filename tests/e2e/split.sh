#!/usr/bin/env bash
# A single-threaded program splits its CPU time 3:1 between two functions;
# the profile must show that split within 5 sigma, with the right callers.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

build split
cd "$WORK"
# 3 s of CPU time: about 750 samples (the program counts its own CPU time,
# so a loaded machine does not shorten it).
"$COLLECT_TIMER" -q -o split.raw ./split 3.0 >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --flat split.raw >flat.txt || fail "profview --flat failed"
"$PROFVIEW" --tree split.raw >tree.txt || fail "profview --tree failed"
cat flat.txt

hot=$(flat_self flat.txt hot_work)
cold=$(flat_self flat.txt cold_work)
n=$((hot + cold))
total=$(awk '/^program:/ {getline; for (i = 1; i <= NF; i++) if ($i == "samples") print $(i - 1)}' tree.txt | head -1)
note "hot_work $hot, cold_work $cold, of $total samples"
# About 750 expected; on a loaded machine the tick can miss the thread,
# and the sweeper then gets it a sample every 3 to 4 periods (ACCURACY in
# collect-timer(1)): still some 190 or more.
[ "$n" -ge 100 ] || fail "too few samples in hot_work/cold_work: $n"
# Nearly every sample is in one of the two, but for those in the clock read
# of main's loop.  Those are 0.5-1% here, and up to 11% on a loaded
# machine: the sweeper asks for a sample of a thread the tick missed, and
# that sample is taken when the thread runs again, for this program mostly
# where it was preempted, in its CPU clock read (ACCURACY in
# collect-timer(1)).  The rest (main's loop, jitter) are some 0.3%, 2 of
# 750: less than 90% in the two is more than 20 sigma (Poisson) away.
"$PROFVIEW" --folded --sample-index=samples split.raw >folded.txt || fail "profview --folded failed"
clock=$(awk '/(^|;)[^;]*clock_gettime[^;]*( |;)/ { n += $NF } END { print n + 0 }' folded.txt)
note "$clock samples in the clock read"
awk -v n="$n" -v t="${total:-0}" -v c="$clock" 'BEGIN { exit !(t - c > 0 && n / (t - c) >= 0.90) }' ||
	fail "only $n of $total samples ($clock in the clock read) in hot_work/cold_work"
# Which of the two a sample is in is binomial: runs of 490-750 samples
# spread as the binomial sigma says (the work comes in units of random
# size, so the tick does not alias with it).  5 sigma (two-sided: 6e-7 of
# the runs fail by chance) plus 0.02 for the program's own split, which is
# 3:1 in work and measured 0.740 +- 0.004 in time (13,600 samples): with
# 750 samples 0.75 +- 0.099, far inside what samples charged to the wrong
# function (0.5, 0.25, 1.0) would make.
within_sigma "$hot" "$n" 0.75 5 0.02 || fail "hot share $hot/$n is not 0.75 within 5 sigma"

# Both are called from main: the tree shows main, then the two below it.
grep -Eq '^ +[0-9]+ .* main  .*split\.c:[0-9]+$' tree.txt || fail "main is not in the tree"
awk '/ main  / { d = index($0, "main") } / hot_work  / && d { if (index($0, "hot_work") == d + 2) ok = 1 } END { exit !ok }' tree.txt ||
	fail "hot_work is not a child of main in the tree"
grep -q 'hot_work  .*split\.c:[0-9]' tree.txt || fail "hot_work has no file:line"
exit 0
