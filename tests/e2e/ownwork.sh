#!/usr/bin/env bash
# collect-timer's own work in the program's threads stays out of the
# program's functions: a program that loads and closes a plugin over and
# over (tests/progs/dlloop.c) makes the collector record the mappings of
# every load (mappings_refresh, under its dlopen wrapper).  Those samples
# are left out of the profile and their CPU time is said in the header;
# none of the collector's mapping functions is in any stack, and no walk
# loops on a frame (its own caller at one address, over and over).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

"$CC" -O2 -g -fPIC -shared -o plugin.so "$SRCDIR/tests/progs/plugin.c" || fail "cannot build plugin.so"
build dlloop -ldl
"$COLLECT_TIMER" -q -o dl.raw ./dlloop ./plugin.so 1 >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --folded dl.raw >dl.folded || fail "profview failed"
"$PROFVIEW" --flat dl.raw >dl.txt || fail "profview failed"
grep -q 'dlopen' dl.folded || fail "no dlopen in the profile: $(head -20 dl.txt)"
# (nor its sorting: dlloop and the loader never call qsort; the tables'
# refresh after a dlclose does)
own=$(grep -E ';(mappings_(refresh|write|read_maps|parse)|__qsort_r|qsort|msort_with_tmp)( |;)' dl.folded || true)
[ -z "$own" ] || fail "the collector's work charged to the program: $(echo "$own" | head -3)"
# The collector's work is about half of this program's CPU time: with
# some 200 samples, that none of them is the collector's is beyond chance.
line=$(grep '^collector: ' dl.txt) || fail "no collector line in the header: $(head -6 dl.txt)"
note "$line"
echo "$line" | grep -Eq '^collector: [0-9.]+ [mµ]?s of CPU in [1-9][0-9]* samples? of the collector.s own work' ||
	fail "the collector line does not say its CPU time and samples: $line"
"$PROFVIEW" --folded --addresses dl.raw >dl-addr.folded || fail "profview failed"
# (A recursion from one call site, such as the loader's dfs_traversal,
# repeats a frame at one address a few times; a walk that loops repeats it
# until the walk's limit: 32 in a row is the loop.)
rep=$(awk '{ line = $0; sub(/ [0-9]+$/, "", line); n = split(line, f, ";"); run = 1
	for (i = 2; i <= n; i++) { run = f[i] == f[i - 1] ? run + 1 : 1; if (run >= 32) { print; break } } }' dl-addr.folded)
[ -z "$rep" ] || fail "a walk that loops on one frame: $(echo "$rep" | cut -c1-400)"
exit 0
