#!/usr/bin/env bash
# A single-threaded program splits its CPU time 3:1 between two functions;
# the profile must show that split within 3 sigma, with the right callers.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

build split
cd "$WORK"
"$COLLECT_TIMER" -q -o split.raw ./split 2.0 >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --flat split.raw >flat.txt || fail "profview --flat failed"
"$PROFVIEW" --tree split.raw >tree.txt || fail "profview --tree failed"
cat flat.txt

hot=$(flat_self flat.txt hot_work)
cold=$(flat_self flat.txt cold_work)
n=$((hot + cold))
total=$(awk '/^program:/ {getline; for (i = 1; i <= NF; i++) if ($i == "samples") print $(i - 1)}' tree.txt | head -1)
note "hot_work $hot, cold_work $cold, of $total samples"
[ "$n" -ge 100 ] || fail "too few samples in hot_work/cold_work: $n"
# Nearly every sample is in one of the two.
awk -v n="$n" -v t="${total:-0}" 'BEGIN { exit !(t > 0 && n / t >= 0.95) }' ||
	fail "only $n of $total samples in hot_work/cold_work"
within_sigma "$hot" "$n" 0.75 3 || fail "hot share $hot/$n is not 0.75 within 3 sigma"

# Both are called from main: the tree shows main, then the two below it.
grep -Eq '^ +[0-9]+ .* main  .*split\.c:[0-9]+$' tree.txt || fail "main is not in the tree"
awk '/ main  / { d = index($0, "main") } / hot_work  / && d { if (index($0, "hot_work") == d + 2) ok = 1 } END { exit !ok }' tree.txt ||
	fail "hot_work is not a child of main in the tree"
grep -q 'hot_work  .*split\.c:[0-9]' tree.txt || fail "hot_work has no file:line"
exit 0
