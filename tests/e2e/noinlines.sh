#!/usr/bin/env bash
# --noinlines: inlined calls become part of the function they were inlined
# into.  tests/progs/inlines.c at -O2 spends its time in hash_block, whose
# code is mostly mix_round and mix_step inlined into it.  On one profile,
# two views: without inlines, hash_block's self is exactly the sum of the
# self of hash_block, mix_round and mix_step with them -- in the flat
# report, the tree, the folded stacks, a comparison of two runs and the
# --pprof output read back; and the inlined functions are in no report.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"

"$CC" -O2 -g -fno-omit-frame-pointer -o "$WORK/inlines" "$SRCDIR/tests/progs/inlines.c" ||
	fail "cannot compile inlines.c"
cd "$WORK" || fail "cannot enter $WORK"
for run in a b; do
	"$COLLECT_TIMER" -q -o "$run.raw" ./inlines 1 >/dev/null || fail "collect-timer failed on inlines"
done

# self_of FILE FUNCTION...: the summed self samples of the FUNCTIONs in a
# flat table (-t TAB: self_samples first, the function eighth).
self_of() {
	local file=$1
	shift
	awk -F'\t' -v names="$*" '
		BEGIN { n = split(names, w, " "); for (i = 1; i <= n; i++) want[w[i]] = 1 }
		NR > 1 && ($8 in want) { s += $1 }
		END { print s + 0 }' "$file"
}

T=$'\t'
"$PROFVIEW" --flat -t "$T" a.raw >flat.txt || fail "profview --flat failed"
"$PROFVIEW" --flat -t "$T" --noinlines a.raw >flat-no.txt || fail "profview --flat --noinlines failed"
step=$(self_of flat.txt mix_step)
all=$(self_of flat.txt hash_block mix_round mix_step)
merged=$(self_of flat-no.txt hash_block)
note "with inlines: mix_step $step, hash_block and its inlined calls $all; without: hash_block $merged"
# mix_step runs most of the time (a sample of it is nearly certain)
[ "$step" -gt 0 ] || fail "no sample in the inlined mix_step: is it inlined?"
[ "$merged" -eq "$all" ] || fail "--noinlines --flat: hash_block's self $merged, not the $all of it and its inlined calls"
[ "$(self_of flat-no.txt mix_step mix_round)" -eq 0 ] || fail "--noinlines --flat: inlined functions still have rows"
grep -qE "${T}(mix_step|mix_round)${T}" flat-no.txt && fail "--noinlines --flat: rows of inlined functions"
# every sample is counted once either way
total() { awk -F'\t' 'NR > 1 { s += $1 } END { print s + 0 }' "$1"; }
[ "$(total flat.txt)" -eq "$(total flat-no.txt)" ] ||
	fail "--noinlines: the flat reports' self columns add up to $(total flat-no.txt), not $(total flat.txt)"

# The tree: hash_block under main keeps its cumulative samples and has no
# children; its self is what its subtree of inlined frames had.
"$PROFVIEW" --tree -t "$T" a.raw >tree.txt || fail "profview --tree failed"
"$PROFVIEW" --tree -t "$T" --noinlines a.raw >tree-no.txt || fail "profview --tree --noinlines failed"
# node_of FILE PARENT_FUNCTION FUNCTION: "id samples" of FUNCTION's node
# under PARENT_FUNCTION's (id, parent, depth, samples, ..., function 8th)
node_of() {
	awk -F'\t' -v par="$2" -v f="$3" '
		NR > 1 { fn[$1] = $8; up[$1] = $2; n[$1] = $4 }
		END { for (i in fn) if (fn[i] == f && fn[up[i]] == par) { print i, n[i]; exit } }' "$1"
}
read -r id cum < <(node_of tree.txt main hash_block)
read -r id_no cum_no < <(node_of tree-no.txt main hash_block)
[ -n "${cum:-}" ] && [ -n "${cum_no:-}" ] || fail "no hash_block under main in the trees"
[ "$cum_no" -eq "$cum" ] || fail "--noinlines --tree: hash_block has $cum_no samples, $cum with inlines"
# (its kernel frames, [k], are no calls of its own)
kids=$(awk -F'\t' -v id="$id_no" 'NR > 1 && $2 == id && $8 !~ /^\[k\] /' tree-no.txt | wc -l)
[ "$kids" -eq 0 ] || fail "--noinlines --tree: hash_block has $kids children (all its calls are inlined)"
below=$(awk -F'\t' -v id="$id" 'NR > 1 && $2 == id { s += $4 } END { print s + 0 }' tree.txt)
[ "$below" -gt 0 ] || fail "--tree: no inlined frames under hash_block"

# The folded stacks: the samples of every stack ending in hash_block or in
# its inlined frames, and of those ending in hash_block without them.
"$PROFVIEW" --folded --sample-index=samples a.raw >a.folded || fail "profview --folded failed"
"$PROFVIEW" --folded --sample-index=samples --noinlines a.raw >a-no.folded ||
	fail "profview --folded --noinlines failed"
f_all=$(awk '{ n = $NF; $NF = ""; sub(/ $/, "") }
	/;hash_block(;mix_round(;mix_step)?)?$/ { s += n } END { print s + 0 }' a.folded)
f_no=$(awk '{ n = $NF; $NF = ""; sub(/ $/, "") } /;hash_block$/ { s += n } END { print s + 0 }' a-no.folded)
[ "$f_all" -eq "$all" ] || fail "--folded: $f_all samples end in hash_block or its inlined calls, the flat report says $all"
[ "$f_no" -eq "$all" ] || fail "--folded --noinlines: $f_no samples end in hash_block, not $all"
grep -qE ';mix_(step|round)( |;)' a-no.folded && fail "--folded --noinlines: inlined frames remain"

# A comparison: both sides' self of hash_block the sums of both sides'.
"$PROFVIEW" --flat -t "$T" --sample-index=samples --diff-base=a.raw b.raw >diff.txt ||
	fail "profview --diff-base failed"
"$PROFVIEW" --flat -t "$T" --sample-index=samples --noinlines --diff-base=a.raw b.raw >diff-no.txt ||
	fail "profview --diff-base --noinlines failed"
# side FILE COLUMN FUNCTION...: the summed COLUMN (1 base, 2 new) of the rows
side() {
	local file=$1 col=$2
	shift 2
	awk -F'\t' -v c="$col" -v names="$*" '
		BEGIN { n = split(names, w, " "); for (i = 1; i <= n; i++) want[w[i]] = 1 }
		NR > 1 && ($7 in want) { s += $c }
		END { print s + 0 }' "$file"
}
for col in 1 2; do
	want=$(side diff.txt $col hash_block mix_round mix_step)
	got=$(side diff-no.txt $col hash_block)
	[ "$want" -gt 0 ] || fail "comparison: no samples in hash_block and its inlined calls (column $col)"
	[ "$got" -eq "$want" ] || fail "--noinlines --diff-base: hash_block's column $col is $got, not $want"
done
grep -qE "${T}mix_(step|round)${T}" diff-no.txt && fail "--noinlines --diff-base: rows of inlined functions"

# --pprof: the profile written without inlined frames, read back.
"$PROFVIEW" --pprof --noinlines -o a.pb.gz a.raw || fail "profview --pprof --noinlines failed"
"$PROFVIEW" --flat -t "$T" a.pb.gz >pb.txt || fail "profview cannot read its own --pprof --noinlines output"
[ "$(self_of pb.txt hash_block)" -eq "$all" ] ||
	fail "--pprof --noinlines: hash_block's self read back is $(self_of pb.txt hash_block), not $all"
grep -qE "${T}mix_(step|round)${T}" pb.txt && fail "--pprof --noinlines: inlined functions written"

# The pictures and speedscope: the inlined functions named with inlines,
# not without.
for r in svg flame timeline speedscope; do
	"$PROFVIEW" --$r -o "with.$r" a.raw || fail "profview --$r failed"
	"$PROFVIEW" --$r --noinlines -o "without.$r" a.raw || fail "profview --$r --noinlines failed"
	grep -q mix_step "with.$r" || fail "--$r: no mix_step with inlines"
	grep -q mix_step "without.$r" && fail "--$r --noinlines: mix_step is there"
	grep -q hash_block "without.$r" || fail "--$r --noinlines: no hash_block"
done

# --reverse: the inlined frames are part of the function they are in, which
# is where the time went.
"$PROFVIEW" --folded --sample-index=samples --noinlines --reverse a.raw >rev.folded ||
	fail "profview --noinlines --reverse failed"
r_no=$(awk '{ n = $NF; $NF = ""; sub(/ $/, "") } /^hash_block(;|$)/ { s += n } END { print s + 0 }' rev.folded)
[ "$r_no" -eq "$all" ] || fail "--noinlines --reverse: $r_no samples start at hash_block, not $all"
exit 0
