#!/usr/bin/env bash
# Deep recursion: --fold-recursion folds a frame that calls itself (directly
# or through a cycle) in the tree, the folded stacks, the flame graph and the
# call graph, leaving every function's own time as it was; a flame graph of
# many distinct deep stacks stays small (narrow frames summed in
# "[N narrower]" boxes) and still adds up; a flame graph thousands of
# pixels high opens at its root (headless Chromium).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
part_needs render chromium "where the flame graph opens is not checked (Debian package chromium)"
part_needs render python3 "where the flame graph opens is not checked"
cd "$WORK"
command -v xmllint >/dev/null || fail "xmllint is missing (Debian libxml2-utils; scripts/test installs it)"

build recursion
# 500 frames: whole stacks (the checks of what folding leaves need them);
# 2,000: stacks deeper than the flame graph draws.
"$COLLECT_TIMER" -q -o r500.raw ./recursion deep 500 1 || fail "collect-timer failed on recursion deep 500"
"$COLLECT_TIMER" -q -o deep.raw ./recursion deep 2000 1 || fail "collect-timer failed on recursion deep 2000"

# repeats FILE: the folded stacks in FILE that hold a frame twice
repeats() {
	awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); delete seen
	       for (i = 1; i <= n; i++) { if (f[i] in seen) { c++; break } seen[f[i]] = 1 } }
	     END { print c + 0 }' "$1"
}
total() { awk '{ s += $NF } END { print s + 0 }' "$1"; }

"$PROFVIEW" --folded r500.raw >plain.folded || fail "profview --folded"
"$PROFVIEW" --folded --fold-recursion r500.raw >fold.folded || fail "profview --folded --fold-recursion"
[ "$(repeats plain.folded)" -gt 0 ] || fail "no stack of the recursion repeats a frame: $(head -3 plain.folded)"
[ "$(repeats fold.folded)" = 0 ] || fail "--fold-recursion left a frame twice on a stack: $(awk 'length < 300' fold.folded | head)"
[ "$(total plain.folded)" = "$(total fold.folded)" ] ||
	fail "--fold-recursion changed the total: $(total plain.folded) to $(total fold.folded)"
# the cycle: ping calls leafwork at the bottom, 500 frames of ping and pong
# above main, folded to ping alone
grep -q ';main;ping;leafwork ' fold.folded || fail "the cycle of ping and pong is not folded: $(head fold.folded)"

# Every function's own samples are the same, folded or not; the cumulative
# ones of deep and ping are at most the total (each counted once a stack).
"$PROFVIEW" --flat r500.raw >plain.flat || fail "profview --flat"
"$PROFVIEW" --flat --fold-recursion r500.raw >fold.flat || fail "profview --flat --fold-recursion"
for fn in leafwork deep ping pong; do
	[ "$(flat_self plain.flat "$fn")" = "$(flat_self fold.flat "$fn")" ] ||
		fail "$fn: $(flat_self plain.flat "$fn") own samples, $(flat_self fold.flat "$fn") folded"
done
grep -q '^filters: .*fold-recursion' fold.flat || fail "the header does not say fold-recursion: $(head -3 fold.flat)"

# The tree: no frame under itself (at most _start, the libc's two, main,
# the cycle's two functions and leafwork; without the kernel's frames,
# which a perf event's sample in the kernel has, as deep as its call was).
"$PROFVIEW" --tree --fold-recursion --hide-kernel r500.raw >fold.tree || fail "profview --tree --fold-recursion"
depth=$(awk 'NR > 4 && $5 != "" { match($0, /^ *[0-9]+ +[0-9.]+% +[0-9]+ +[0-9.]+  */); s = substr($0, RLENGTH + 1); d = match(s, /[^ ]/) - 1; if (d > m) m = d } END { print m / 2 }' fold.tree)
[ "$depth" -le 10 ] || fail "--tree --fold-recursion is $depth levels deep: $(head -30 fold.tree)"

# The flame graph: a tower of 1,024 rows without, a few with (the user
# frames: a perf event's sample in the kernel has its own frames on top).
"$PROFVIEW" --flame -o plain.svg deep.raw || fail "profview --flame"
"$PROFVIEW" --flame --fold-recursion --hide-kernel -o fold.svg deep.raw || fail "profview --flame --fold-recursion"
xmllint --noout plain.svg && xmllint --noout fold.svg || fail "a flame graph is not well-formed XML"
rows() { sed -n 's/.*MAXD = \([0-9]*\).*/\1/p' "$1"; }
[ "$(rows plain.svg)" -ge 1000 ] || fail "the recursion is only $(rows plain.svg) rows high"
[ "$(rows fold.svg)" -le 10 ] || fail "--flame --fold-recursion is $(rows fold.svg) rows high"

# The call graph: deep calls itself and pong calls ping, unless folded.
"$PROFVIEW" --svg -o plain-graph.svg r500.raw || fail "profview --svg"
"$PROFVIEW" --svg --fold-recursion -o fold-graph.svg r500.raw || fail "profview --svg --fold-recursion"
# self_edges FILE: the edges of graphviz's SVG from a node to itself
self_edges() { grep -oE '<title>N[0-9]+&#45;&gt;N[0-9]+</title>' "$1" | sed 's/<title>\(N[0-9]*\)&#45;&gt;\(N[0-9]*\)<.*/\1 \2/' | awk '$1 == $2' | wc -l; }
# back_edges FILE: pairs of nodes with an edge each way
back_edges() { grep -oE '<title>N[0-9]+&#45;&gt;N[0-9]+</title>' "$1" | sed 's/<title>\(N[0-9]*\)&#45;&gt;\(N[0-9]*\)<.*/\1 \2/' | awk '{ e[$1 " " $2] = 1 } END { for (k in e) { split(k, a, " "); if (a[1] != a[2] && (a[2] " " a[1]) in e) c++ } print c + 0 }'; }
[ "$(self_edges plain-graph.svg)" -ge 1 ] || fail "the call graph has no edge of deep to itself"
[ "$(back_edges plain-graph.svg)" -ge 1 ] || fail "the call graph has no edges of the ping/pong cycle"
[ "$(self_edges fold-graph.svg)" = 0 ] || fail "--svg --fold-recursion: an edge of a node to itself"
[ "$(back_edges fold-graph.svg)" = 0 ] || fail "--svg --fold-recursion: a cycle of two nodes"

# Many distinct deep stacks: the file stays under 2 MiB, the narrow frames
# summed and said to be, and the boxes still add up to the root.
"$COLLECT_TIMER" -q -o branchy.raw ./recursion branchy 2000 2.5 || fail "collect-timer failed on recursion branchy"
"$PROFVIEW" --flame -o branchy.svg branchy.raw || fail "profview --flame on branchy"
size=$(stat -c %s branchy.svg)
note "branchy: $(sed -n 2p <("$PROFVIEW" branchy.raw)); flame graph $size bytes"
[ "$size" -le 2097152 ] || fail "the flame graph of branchy is $size bytes"
xmllint --noout branchy.svg || fail "the flame graph of branchy is not well-formed XML"
grep -q 'frames narrower than [0-9.]* px are summed in \[N narrower\] boxes' branchy.svg ||
	fail "the picture does not say that narrow frames are summed"
grep -q '<title>\[[0-9]* narrower\]' branchy.svg || fail "no [N narrower] box"
# the boxes of the row above the root fill it (to the 0.01 px of each width)
awk -v RS='</g>' '{ i = index($0, "<g class"); if (!i) next; $0 = substr($0, i); match($0, /y="[0-9.]+"/); y = substr($0, RSTART + 3, RLENGTH - 4) + 0
	match($0, /width="[0-9.]+"/); w[y] += substr($0, RSTART + 7, RLENGTH - 8); if (y > ymax) ymax = y }
	END { root = w[ymax]; up = w[ymax - 16]; d = root - up; if (d < 0) d = -d
	      printf "root %.2f px, the row above %.2f px\n", root, up; exit !(root > 1179 && d < 0.5) }' branchy.svg >rows.txt ||
	fail "the boxes do not add up: $(cat rows.txt)"

# Opening (the part "render"): the root's box is in the window, not
# 16,000 pixels below it.
part_starts render
at=$(timeout 120 python3 "$SRCDIR/tests/e2e/cdp-eval.py" "file://$WORK/plain.svg" \
	"(function () { var r = document.querySelector('#frames > g rect').getBoundingClientRect(); return [r.top, r.bottom, innerHeight]; })()" \
	"$(mktemp -d "$WORK/chrome.XXXXXX")") || fail "chromium could not open plain.svg"
note "the root's box opens at top, bottom, window height: $at"
echo "$at" | tr -d '[] ' | awk -F, '{ exit !(NF == 3 && $1 ~ /^[0-9.]+$/ && $2 ~ /^[0-9.]+$/ && $3 ~ /^[0-9.]+$/ && $1 + 0 >= 0 && $2 + 0 <= $3 + 0) }' || fail "the flame graph does not open at its root: $at"
exit 0
