#!/usr/bin/env bash
# profview --diff-base: comparisons with a known truth.  tests/progs/
# diffwork.c burns exact CPU milliseconds in alpha, beta and gamma_ (by its
# thread's CPU clock), and collect-timer's CPU-time timers sample them:
#   - alpha doing 30% more work is called worse, beta and gamma_ are not;
#   - two runs of the same program (A/A), 20 pairs: the share of pairs
#     with any call stays within what the false discovery rate promises;
#   - a profile against itself: every delta 0, nothing called;
#   - --normalize, several base runs (values per run), --fdr;
#   - the tables of --field-separator, the folded "stack base new" lines,
#     pprof's -diff_base convention (the real pprof reads the same deltas),
#     a pprof comparison read back;
#   - usage errors.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

build diffwork -O2
cd "$WORK"

# run OUT MS_ALPHA MS_BETA MS_GAMMA
run() {
	"$COLLECT_TIMER" -q -o "$1" ./diffwork "$2" "$3" "$4" >/dev/null 2>&1 ||
		fail "collect-timer ./diffwork $2 $3 $4 failed"
}
# col FILE FUNCTION COLUMN: a column of FUNCTION's row in a table written
# with -t ';' (the header row names the columns)
col() {
	awk -F';' -v f="$2" -v c="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) idx[$i] = i; if (!(c in idx)) exit 2; next }
		$idx["function"] == f { print $idx[c]; found = 1; exit }
		END { if (!found) print "MISSING" }' "$1"
}

# 1. A 30% regression in one function.  At 250 samples a second alpha has
# 750 samples against 975: z = 5.4 for the binomial split (a p-value of
# 1e-7 before the adjustment, which multiplies it by about 10 here).  CPU
# timers sample more evenly than Poisson, so the count is that, give or
# take a few samples whose CPU time began in the turn before: the margin
# is for a loaded machine, whose late timers give samples of uneven
# weight (fewer effective samples).  beta and gamma_ use exactly the same
# CPU time in both runs.
run base.raw 3000 1000 1000 &
run new.raw 3900 1000 1000 &
wait
"$PROFVIEW" --flat --diff-base=base.raw new.raw >flat.txt || fail "profview --flat --diff-base failed"
cat flat.txt
grep -q '^base: ' flat.txt || fail "the header does not describe the base"
"$PROFVIEW" --flat -t ';' --diff-base=base.raw new.raw >flat.csv || fail "profview --flat -t failed"
head -1 flat.csv | grep -qx 'base;new;delta;delta_pct;q;verdict;function;location' ||
	fail "the flat table's header row is $(head -1 flat.csv)"
[ "$(col flat.csv alpha verdict)" = worse ] || fail "alpha, 30% more work, is not called worse"
for f in beta gamma_; do
	[ -z "$(col flat.csv "$f" verdict)" ] || fail "$f, unchanged, is called $(col flat.csv "$f" verdict)"
done
# the values are CPU milliseconds per run: alpha's within its samples' noise
# (each function burns CPU time by its thread's clock, a system call: the
# kernel's part of that time is its own here, --hide-kernel)
"$PROFVIEW" --flat --hide-kernel -t ';' --diff-base=base.raw new.raw >own.csv
awk -v b="$(col own.csv alpha base)" -v n="$(col own.csv alpha new)" 'BEGIN {
	exit !(b > 2700 && b < 3100 && n > 3500 && n < 4000) }' ||
	fail "alpha's base/new ms are $(col own.csv alpha base)/$(col own.csv alpha new), not about 3000/3900"
# every row has the header's number of fields
awk -F';' 'NR == 1 { n = NF } NF != n { exit 1 }' flat.csv || fail "the flat table's rows differ in fields"

# the tree: main -> alpha is worse, main -> beta is not; the root's path
# (main) is worse too, since it holds alpha
"$PROFVIEW" --tree -t ';' --diff-base=base.raw new.raw >tree.csv || fail "profview --tree -t failed"
head -1 tree.csv | grep -qx 'id;parent;depth;base;new;delta;delta_pct;q;verdict;function;location' ||
	fail "the tree table's header row is $(head -1 tree.csv)"
[ "$(col tree.csv alpha verdict)" = worse ] || fail "the tree's alpha node is not worse"
[ -z "$(col tree.csv beta verdict)" ] || fail "the tree's beta node is called"
[ "$(col tree.csv main verdict)" = worse ] || fail "main, holding alpha, is not worse in the tree"
"$PROFVIEW" --tree --diff-base=base.raw new.raw | grep -Eq '^ .*worse +alpha' || fail "the text tree shows no worse alpha"
# --significant: only the calls and their callers: every row shown has a
# verdict or is the parent of a row shown, and alpha is there
"$PROFVIEW" --tree -t ';' --significant --diff-base=base.raw new.raw >sig.csv
awk -F';' 'NR > 1 { parent[$2] = 1; v[$1] = $9; n++ } END {
	for (id in v) if (v[id] == "" && !(id in parent)) exit 1
	exit !(n > 0) }' sig.csv || fail "--significant shows a row with no verdict and nothing called below it"
[ "$(col sig.csv alpha verdict)" = worse ] || fail "--significant lost alpha"
[ "$(wc -l <sig.csv)" -lt "$(wc -l <tree.csv)" ] || fail "--significant hides nothing"

# 2. The same program twice, 20 pairs.  Benjamini-Hochberg at 5% keeps the
# chance of any call in a pair where nothing changed at 5% or less (the
# CPU-time timers sample more evenly than Poisson: less).  6 pairs of 20
# or more would happen by chance once in 3,000 runs at exactly 5%; 7 (the
# bound) once in 30,000.
for i in $(seq 0 20); do
	run "aa$i.raw" 300 300 300 &
	[ $((i % 2)) = 1 ] && wait
done
wait
flagged=0
for i in $(seq 1 20); do
	"$PROFVIEW" --flat -t ';' --diff-base="aa$((i - 1)).raw" "aa$i.raw" >aa.csv || fail "A/A flat failed"
	"$PROFVIEW" --tree -t ';' --diff-base="aa$((i - 1)).raw" "aa$i.raw" >aat.csv || fail "A/A tree failed"
	if awk -F';' 'NR > 1 && ($6 == "worse" || $6 == "better") { bad = 1 } END { exit !bad }' aa.csv ||
		awk -F';' 'NR > 1 && ($9 == "worse" || $9 == "better") { bad = 1 } END { exit !bad }' aat.csv; then
		flagged=$((flagged + 1))
		note "A/A pair $i: a call: $(grep -E 'worse|better' aa.csv aat.csv | head -3 | tr '\n' ' ')"
	fi
done
note "A/A: $flagged of 20 pairs with a call"
[ "$flagged" -le 6 ] || fail "$flagged of 20 A/A pairs have a call: more than a 5% false discovery rate allows"

# 3. Against itself: every delta exactly 0, q 1, no verdict.
"$PROFVIEW" --tree -t ';' --diff-base=base.raw base.raw >self.csv
awk -F';' 'NR > 1 && ($6 != 0 || $9 != "" || $8 != 1) { print; bad = 1 } END { exit bad }' self.csv ||
	fail "a profile against itself has a non-zero delta or a call"
[ "$(wc -l <self.csv)" -gt 5 ] || fail "the self-comparison's tree is empty"

# 4. --normalize scales the base to the new total: the outermost frames'
# two sides add up to the same (each row rounded to 0.05 ms at most; a
# sample in the library's constructor is under _dl_start_user, not
# _start); several base runs are averaged (values per run).
"$PROFVIEW" --tree -t ';' --normalize --diff-base=base.raw new.raw >norm.csv
awk -F';' 'NR > 1 && $3 == 1 { b += $4; n += $5; k++ }
	END { d = b - n; if (d < 0) d = -d; exit !(k > 0 && d <= 0.05 * k + 0.01) }' norm.csv ||
	fail "--normalize: the outermost frames' base and new differ: $(awk -F';' 'NR == 1 || $3 == 1' norm.csv)"
"$PROFVIEW" --flat -t ';' --diff-base=base.raw --diff-base=base.raw new.raw >two.csv
[ "$(col two.csv alpha base)" = "$(col flat.csv alpha base)" ] ||
	fail "two copies of the base are not shown per run: $(col two.csv alpha base) vs $(col flat.csv alpha base)"
# a stricter rate calls no less rarely: q does not change, the verdict can
"$PROFVIEW" --flat -t ';' --fdr=1e-30 --diff-base=base.raw new.raw >strict.csv
[ "$(col strict.csv alpha q)" = "$(col flat.csv alpha q)" ] || fail "--fdr changed a q-value"
[ -z "$(col strict.csv alpha verdict)" ] || fail "--fdr=1e-30 still calls alpha"

# 5. Folded: "stack base new" in samples; read back, the same comparison
# of sample counts.
"$PROFVIEW" --folded --diff-base=base.raw new.raw >diff.folded
awk 'NF < 3 || $(NF-1) !~ /^[0-9]+$/ || $NF !~ /^[0-9]+$/ { exit 1 }' diff.folded ||
	fail "--folded of a comparison is not 'stack base new'"
"$PROFVIEW" --flat -t ';' --sample-index=samples --diff-base=base.raw new.raw >counts.csv
"$PROFVIEW" --flat -t ';' diff.folded >folded.csv || fail "cannot read the folded comparison back"
diff <(cut -d';' -f1-7 counts.csv) <(cut -d';' -f1-7 folded.csv) >/dev/null ||
	fail "the folded comparison reads differently: $(diff counts.csv folded.csv | head -5)"
[ "$(col folded.csv alpha verdict)" = worse ] || fail "the folded comparison does not call alpha worse"

# 6. Field separators in names become '.', and plain reports get tables.
printf 'main;f,g 3\nmain;h 1\n' >comma.folded
"$PROFVIEW" --flat -t , comma.folded >comma.csv
grep -q '^3,75.0,3,75.0,1.73,f.g,$' comma.csv || fail "a name holding the separator: $(cat comma.csv)"
awk -F, 'NR == 1 { n = NF } NF != n { exit 1 }' comma.csv || fail "the plain flat table's rows differ in fields"

# 7. pprof: --pprof of a comparison is pprof's -diff_base convention; the
# real pprof shows the same deltas; read back, it is the same comparison.
"$PROFVIEW" --pprof -o diff.pb.gz --diff-base=base.raw new.raw || fail "--pprof of a comparison failed"
"$PROFVIEW" --flat -t ';' diff.pb.gz >back.csv || fail "cannot read the comparison back"
# (q may move a little: a pprof sample sums equal stacks, so the spread of
# their weights is estimated, not known; so a verdict is compared only
# where q is far from the rate, 0.05)
sure() { awk -F';' 'NR > 1 && ($5 == "" || $5 + 0 < 0.01 || $5 + 0 > 0.25) { print $7 ";" $6 }' "$1" | LC_ALL=C sort; }
# same_comparison A B WHAT: the same values, and the same verdicts where
# they are sure
same_comparison() {
	diff <(cut -d';' -f1-4,7 "$1") <(cut -d';' -f1-4,7 "$2") >/dev/null ||
		fail "$3 differs: $(diff "$1" "$2" | head -5)"
	LC_ALL=C join -t';' <(sure "$1") <(sure "$2") | awk -F';' '$2 != $3 { bad = 1; print } END { exit bad }' >verdicts.bad ||
		fail "$3 has other verdicts: $(head -3 verdicts.bad)"
}
same_comparison flat.csv back.csv "the comparison read back from pprof"
PPROF=
if command -v go >/dev/null && [ -d /usr/share/gocode/src/github.com/google/pprof ]; then
	PPROF=$("$SRCDIR/scripts/install-pprof" "$WORK/tools") || fail "cannot build pprof"
fi
if [ -n "$PPROF" ]; then
	# pprof -top's flat column of alpha, in ms, is profview's delta
	pd=$("$PPROF" -top -unit=ms -symbolize=none diff.pb.gz 2>/dev/null | awk '$6 == "alpha" { sub(/ms$/, "", $1); print $1 }')
	note "pprof -top: alpha $pd ms; profview: $(col flat.csv alpha delta) ms"
	awk -v a="$pd" -v b="$(col flat.csv alpha delta)" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d < 0.1) }' ||
		fail "pprof reads alpha's delta as '$pd' ms, profview shows $(col flat.csv alpha delta)"
	# and pprof's own -diff_base of the two profiles, read by profview
	"$PROFVIEW" --pprof -o base.pb.gz base.raw
	"$PROFVIEW" --pprof -o new.pb.gz new.raw
	"$PPROF" -proto -diff_base=base.pb.gz -symbolize=none new.pb.gz >pp.pb.gz 2>/dev/null || fail "pprof -diff_base failed"
	"$PROFVIEW" --flat -t ';' pp.pb.gz >pp.csv
	same_comparison flat.csv pp.csv "pprof -diff_base's profile"
else
	note "pprof: no Go toolchain: pprof's reading not checked"
fi

# 8. Usage errors: one line, exit 2; a missing base: exit 1.
set +e
"$PROFVIEW" --flat --normalize new.raw >/dev/null 2>err.txt; st=$?
[ $st = 2 ] && grep -q 'diff-base' err.txt || fail "--normalize without a base: status $st, $(cat err.txt)"
"$PROFVIEW" --flat --fdr=2 --diff-base=base.raw new.raw >/dev/null 2>err.txt; st=$?
[ $st = 2 ] || fail "--fdr=2: status $st"
"$PROFVIEW" --flat --diff-base=nosuch.raw new.raw >/dev/null 2>err.txt; st=$?
[ $st = 1 ] && grep -q 'nosuch.raw' err.txt || fail "a missing base: status $st, $(cat err.txt)"
"$PROFVIEW" --flat --diff-base=diff.pb.gz new.raw >/dev/null 2>err.txt; st=$?
[ $st = 1 ] && grep -q 'comparison already' err.txt || fail "a comparison as a base: status $st, $(cat err.txt)"
for args in "--folded -t ," "--flame --significant --diff-base=base.raw"; do
	"$PROFVIEW" $args new.raw >/dev/null 2>err.txt; st=$?
	[ $st = 2 ] || fail "profview $args: status $st, $(cat err.txt)"
done
printf 'main;alpha 3\n' >counts.folded
"$PROFVIEW" --flat --diff-base=counts.folded new.raw >/dev/null 2>err.txt; st=$?
[ $st = 1 ] && grep -q '^profview: cannot compare: ' err.txt && [ "$(wc -l <err.txt)" = 1 ] ||
	fail "a base of other sample types: status $st, $(cat err.txt)"
set -e
# A side with no samples at all: nothing to judge, no verdict, no inf.
printf 'main;a 0\n' >none.folded
printf 'main;a 100\nmain;b 50\n' >some.folded
for pair in "none.folded some.folded" "some.folded none.folded"; do
	set -- $pair
	for report in "--flat" "--tree" "--flat -t ;" "--svg" "--flame"; do
		# shellcheck disable=SC2086
		"$PROFVIEW" $report --normalize --diff-base="$1" "$2" >one.out 2>err.txt ||
			fail "--diff-base=$1 $2 $report: $(cat err.txt)"
		grep -Eqi 'worse|better|inf' one.out && [ "$report" != "--svg" ] && [ "$report" != "--flame" ] &&
			fail "--diff-base=$1 $2 $report: a verdict or inf for a side with no samples: $(cat one.out)"
		case $report in --svg|--flame)
			grep -qE '>(worse|better)<|[+-]?inf%' one.out &&
				fail "--diff-base=$1 $2 $report: a verdict or inf% for a side with no samples" ;;
		esac
	done
	"$PROFVIEW" --flat --normalize --diff-base="$1" "$2" | grep -q 'side has no samples: no change can be judged' ||
		fail "--diff-base=$1 $2: nothing says a side has no samples"
done
echo "diff: ok"
