#!/usr/bin/env bash
# profview --svg: the call graph graphviz lays out and draws is valid XML,
# shows the hot functions with the shares the flat profile gives and the
# calls between them, escapes and shortens C++ names, prunes to
# --nodecount and says so in the legend, greys what is within the noise
# floor, follows the filters, and a headless Chromium renders it.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
part_needs render chromium "the pictures are not rendered (Debian package chromium)"
cd "$WORK"

command -v xmllint >/dev/null ||
	{ echo "SKIP: xmllint (Debian package libxml2-utils) is not installed"; exit 77; }

# xp FILE XPATH: the string value of an XPath expression.
xp() {
	xmllint --xpath "$2" "$1" 2>/dev/null || true
}

# node_tips FILE: the tooltip of every graph node, one a line
# ("name (where) flat ..., cum ...").
node_tips() {
	local i n
	n=$(xp "$1" 'count(//*[contains(concat(" ", @class, " "), " node ")])')
	for ((i = 1; i < n; i++)); do
		xp "$1" "string(//*[@id=\"a_N$i\"]/*[local-name()=\"a\"]/@*[local-name()=\"title\"])"
		echo
	done
}

# edge_tips FILE: "caller -> callee (...)" for every edge.
edge_tips() {
	local i n
	n=$(xp "$1" 'count(//*[@class="edge"])')
	for ((i = 1; i <= n; i++)); do
		xp "$1" "string(//*[@id=\"a_edge$i\"]/*[local-name()=\"a\"]/@*[local-name()=\"title\"])"
		echo
	done
}

# legend FILE: the legend's lines.
legend() {
	local i n
	n=$(xp "$1" 'count(//*[@id="legend"]//*[local-name()="text"])')
	for ((i = 1; i <= n; i++)); do
		xp "$1" "string((//*[@id=\"legend\"]//*[local-name()=\"text\"])[$i])"
		echo
	done
}

# flat_n TIPS NAME: the flat sample count of function NAME in node_tips.
flat_n() {
	awk -v f="$2" 'index($0, f " ") == 1 || $0 == f {
		if (match($0, / flat [^,]*, n=[0-9]+/)) { s = substr($0, RSTART, RLENGTH); sub(/.*n=/, "", s); print s; exit }
	}' "$1"
}

build split
"$COLLECT_TIMER" -q -o split.raw ./split 2 >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --svg -o split.svg split.raw || fail "profview --svg failed"
xmllint --noout split.svg || fail "--svg output is not well-formed XML"
[ "$(xp split.svg 'local-name(/*)')" = svg ] || fail "--svg output is not an SVG document"
node_tips split.svg >split.nodes
edge_tips split.svg >split.edges
legend split.svg >split.legend

# The flat counts in the graph are the flat profile's, exactly.
"$PROFVIEW" --flat split.raw >split.flat
total=$(awk '/ in [0-9]+ samples/ { for (i = 1; i <= NF; i++) if ($i == "samples" || $i == "samples,") print $(i - 1) }' split.flat | head -1)
for f in hot_work cold_work; do
	got=$(flat_n split.nodes "$f")
	want=$(flat_self split.flat "$f")
	[ -n "$got" ] || { cat split.nodes; fail "$f: no node in the graph"; }
	[ "$got" = "$want" ] || fail "$f: $got flat samples in the graph, $want in --flat"
done
# (Whether they make the program's 3:1 is split.sh's to check: here it
# would only add the chance of the samples.)
hot=$(flat_n split.nodes hot_work)
note "hot_work: $hot of $total samples in the graph, as in --flat"
grep -q '^main -> hot_work (' split.edges || { cat split.edges; fail "no edge main -> hot_work"; }
grep -q '^main -> cold_work (' split.edges || fail "no edge main -> cold_work"
grep -q '^Total: .* in '"$total"' samples' split.legend || { cat split.legend; fail "legend: no total"; }
grep -q '^File: split$' split.legend || fail "legend: no program name"

# The biggest flat share has the biggest font (hot_work has about three
# times cold_work's samples: as many is more than 10 sigma away).
big=$(xp split.svg 'string((//*[contains(concat(" ", @class, " "), " node ")][.//*[local-name()="text"][starts-with(., "hot_work")]]//*[local-name()="text"])[1]/@font-size)')
small=$(xp split.svg 'string((//*[contains(concat(" ", @class, " "), " node ")][.//*[local-name()="text"][starts-with(., "cold_work")]]//*[local-name()="text"])[1]/@font-size)')
awk -v b="$big" -v s="$small" 'BEGIN { exit !(b > s && s > 0) }' ||
	fail "hot_work's font ($big) is not bigger than cold_work's ($small)"

# --nodecount: that many nodes, and the legend says how many went.
"$PROFVIEW" --svg --nodecount=0 --nodefraction=0 --edgefraction=0 -o all.svg split.raw ||
	fail "--nodecount=0 failed"
all=$(($(xp all.svg 'count(//*[contains(concat(" ", @class, " "), " node ")])') - 1))
"$PROFVIEW" --svg --nodecount=3 -o three.svg split.raw || fail "--nodecount=3 failed"
xmllint --noout three.svg || fail "--nodecount=3: not well-formed"
kept=$(($(xp three.svg 'count(//*[contains(concat(" ", @class, " "), " node ")])') - 1))
[ "$kept" = 3 ] || fail "--nodecount=3 kept $kept nodes"
legend three.svg >three.legend
grep -q "^Dropped $((all - 3)) nodes" three.legend || { cat three.legend; fail "legend: not 'Dropped $((all - 3)) nodes'"; }
grep -q "^Showing 3 of $all nodes" three.legend || fail "legend: not 'Showing 3 of $all nodes'"
note "--nodecount=3: 3 of $all nodes"
"$PROFVIEW" --svg --nodecount=-1 split.raw >/dev/null 2>err.txt && fail "--nodecount=-1 accepted"
"$PROFVIEW" --svg --nodefraction=2 split.raw >/dev/null 2>err.txt && fail "--nodefraction=2 accepted"
grep -q "invalid --nodefraction '2'" err.txt || fail "--nodefraction=2: $(cat err.txt)"

# --noisefloor greys the nodes whose cumulative time is at most K standard
# errors of all samples' (2 sqrt(N) samples of the total N, perf events'
# samples weighing much the same: within 5%, and the shares in the
# tooltips to 0.1%: the nodes that close to the floor may go either way);
# hot_work is far above.
"$PROFVIEW" --svg --noisefloor=2 --nodecount=0 --nodefraction=0 -o noise.svg split.raw ||
	fail "--noisefloor failed"
grey=$(xp noise.svg 'count(//*[contains(concat(" ", @class, " "), " node ")]//*[local-name()="polygon" or local-name()="path"][@fill="#f0f0f0"])')
tips=$(node_tips noise.svg)
floor=$(awk -v n="$total" 'BEGIN { print 200 * sqrt(n) / n }')
read -r lo hi < <(printf '%s\n' "$tips" | awk -v fl="$floor" 'NF { s = $0; sub(/.* cum [^(]*\(/, "", s); sub(/%.*/, "", s)
	if (s + 0 < 0.95 * fl - 0.15) lo++; if (s + 0 <= 1.05 * fl + 0.15) hi++ } END { print lo + 0, hi + 0 }')
[ "$grey" -ge "$lo" ] && [ "$grey" -le "$hi" ] ||
	fail "--noisefloor=2: $grey grey nodes, $lo to $hi at or below twice the total's error, $floor%"
printf '%s\n' "$tips" | grep '^hot_work ' | grep -q 'within the noise floor' && fail "hot_work marked as noise"
note "--noisefloor=2: $grey nodes grey"

# C++ names: escaped in the file, whole in tooltips, short in labels (the
# two instantiations of spin apart by their template arguments); with
# --full-names, a label too long is cut.
"$CXX" -O2 -g -fno-omit-frame-pointer -o cxxnames "$SRCDIR/tests/progs/cxxnames.cc" ||
	fail "cannot compile cxxnames.cc"
"$COLLECT_TIMER" -q -o cxx.raw ./cxxnames 1 >/dev/null || fail "collect-timer failed on cxxnames"
"$PROFVIEW" --svg -o cxx.svg cxx.raw || fail "profview --svg failed on cxxnames"
xmllint --noout cxx.svg || fail "C++ names make the SVG ill-formed"
node_tips cxx.svg >cxx.nodes
grep -q '^shapes::Accumulator<unsigned long>::spin(int) ' cxx.nodes ||
	{ cat cxx.nodes; fail "no tooltip with the whole name of Accumulator<unsigned long>::spin"; }
grep -q 'Accumulator&lt;unsigned long&gt;::spin' cxx.svg || fail "'<' and '>' not escaped in the SVG"
xp cxx.svg '//*[local-name()="text"]' | grep -q '>shapes::Accumulator&lt;unsigned long&gt;::spin<' ||
	fail "the label of Accumulator<unsigned long>::spin is not its short name"
"$PROFVIEW" --svg --full-names -o cxx-full.svg cxx.raw || fail "profview --svg --full-names failed on cxxnames"
xp cxx-full.svg '//*[local-name()="text"]' | grep -q 'shapes::Accumulator&lt;…&gt;::spin()' ||
	fail "--full-names: the long template name is not shortened in its label"

# Filters, when profview has them: the focused function there, the ignored
# one gone.
if "$PROFVIEW" --help | grep -q -- --focus; then
	"$PROFVIEW" --svg --ignore=cold_work -o ign.svg split.raw || fail "--svg --ignore failed"
	xmllint --noout ign.svg || fail "--ignore: not well-formed"
	node_tips ign.svg >ign.nodes
	grep -q '^hot_work ' ign.nodes || fail "--ignore=cold_work: hot_work is gone"
	grep -q '^cold_work ' ign.nodes && fail "--ignore=cold_work: cold_work still there"
	"$PROFVIEW" --svg --focus=cold_work -o foc.svg split.raw || fail "--svg --focus failed"
	node_tips foc.svg >foc.nodes
	grep -q '^cold_work ' foc.nodes || fail "--focus=cold_work: cold_work is gone"
	grep -q '^hot_work ' foc.nodes && fail "--focus=cold_work: hot_work still there"
	legend foc.svg | grep -q '^Filters: .*cold_work' || fail "--focus: the legend does not name the filter"
	note "--focus and --ignore: the graph follows them"
else
	note "no filters in this profview: their checks left out"
fi

# Headless Chromium draws it, and the flame graph (the part "render").
part_starts render
CHROMIUM=$(command -v chromium)
render() {
	local prof
	prof=$(mktemp -d "$WORK/chromium.XXXXXX")
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$prof" --screenshot="$WORK/$2" --window-size=1200,1600 \
		"file://$WORK/$1" >/dev/null 2>&1 || true
	[ -s "$2" ] || fail "Chromium did not render $1"
	# A blank page compresses to a few kilobytes; a graph does not.
	[ "$(stat -c %s "$2")" -gt 20000 ] || fail "$2: Chromium's picture of $1 looks blank"
}
render split.svg split.png
render cxx.svg cxx.png
if "$PROFVIEW" --help | grep -q -- --flame; then
	"$PROFVIEW" --flame -o flame.svg split.raw || fail "profview --flame failed"
	render flame.svg flame.png
fi
note "Chromium rendered the graphs"
