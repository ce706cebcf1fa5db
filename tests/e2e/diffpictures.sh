#!/usr/bin/env bash
# profview --flame and --svg of a comparison (--diff-base): well-formed
# XML; the function that got 50% slower is marked worse (red), the ones
# that did not change are not marked (grey); the numbers in the titles and
# tooltips are those of the comparison's tables (--tree for the flame
# graph's nodes, --flat --sort=cum for the call graph's frames); a profile
# compared with itself has nothing marked; hostile names stay escaped.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

command -v xmllint >/dev/null ||
	{ echo "SKIP: xmllint (Debian package libxml2-utils) is not installed"; exit 77; }

# xp FILE XPATH: the string value of an XPath 1.0 expression (elements by
# local-name(), the default namespace aside).
xp() {
	xmllint --xpath "$2" "$1" 2>/dev/null || true
}
NL=$'\n'
# box NAME: the flame graph's boxes (<g>) whose name, the first line of
# the title, is NAME.
box() {
	echo "//*[local-name()='g'][substring-before(*[local-name()='title'], '$NL') = '$1']"
}
# gnode NAME: the call graph's node whose tooltip is NAME's.
gnode() {
	echo "//*[local-name()='g'][contains(concat(' ', @class, ' '), ' node ')][.//*[local-name()='a'][starts-with(@*[local-name()='title'], '$1 ')]]"
}
# gtip FILE NAME: that node's tooltip.
gtip() {
	xp "$1" "string($(gnode "$2")//*[local-name()='a']/@*[local-name()='title'])"
}
# rgb COLOUR: "R G B" of "rgb(R,G,B)" or "#rrggbb".
rgb() {
	case $1 in
	rgb*) echo "$1" | tr -c '0-9\n' ' ' ;;
	'#'*) printf '%d %d %d\n' "0x${1:1:2}" "0x${1:3:2}" "0x${1:5:2}" ;;
	*) echo "x x x" ;;
	esac
}
# red COLOUR, grey COLOUR: is the colour one of the comparison's reds
# (red well above green and blue), one of its greys (R = G = B)?
red() {
	rgb "$1" | awk '{ exit !($1 ~ /^[0-9]+$/ && $1 > $2 + 40 && $1 > $3 + 40) }'
}
grey() {
	rgb "$1" | awk '{ exit !($1 ~ /^[0-9]+$/ && $1 == $2 && $2 == $3) }'
}
# near SHOWN WANT_MS: is a duration as the pictures write it ("1.00 s",
# "996.2 ms", "996.22ms", "7.20us") WANT_MS as the tables write it (0.1
# ms), to the digits each shows?
near() {
	awk -v s="$1" -v w="$2" 'BEGIN {
		gsub(/ /, "", s)
		if (!match(s, /(ms|us|ns|s)$/)) exit 1
		u = substr(s, RSTART); n = substr(s, 1, RSTART - 1)
		f = u == "s" ? 1000 : u == "ms" ? 1 : u == "us" ? 0.001 : 0.000001
		d = index(n, ".") ? length(n) - index(n, ".") : 0
		tol = 0.5 * f / 10 ^ d + 0.05
		x = n * f - w; if (x < 0) x = -x
		exit !(x <= tol + 1e-9)
	}'
}
# field LINE NAME: the text after the last "NAME " that starts the line or
# follows a space, up to the next ", " or ")".
field() {
	awk -v s="$1" -v k="$2" 'BEGIN {
		n = split(s, w, " "); v = ""
		for (i = 1; i < n; i++) if (w[i] == k) { v = ""; for (j = i + 1; j <= n; j++) { v = v (v == "" ? "" : " ") w[j]; if (w[j] ~ /[,)]$/) break } }
		sub(/[,)]$/, "", v); print v
	}'
}

build diffwork
# The same work but alpha's, 50% more: CPU-time timers make the counts
# nearly what the milliseconds say, so alpha is far beyond the noise (about
# 250 samples against 375) and beta and gamma_ within it.
"$COLLECT_TIMER" -q -o a.raw ./diffwork 1000 1000 1000 >/dev/null || fail "collect-timer failed (base)"
"$COLLECT_TIMER" -q -o b.raw ./diffwork 1500 1000 1000 >/dev/null || fail "collect-timer failed (new)"

# The flame graph: widths the new side's, colours the verdicts of the
# tree's nodes, which --tree's table gives.
"$PROFVIEW" --flame --diff-base=a.raw -o flame.svg b.raw || fail "profview --flame --diff-base failed"
xmllint --noout flame.svg || fail "the comparison's flame graph is not well-formed XML"
"$PROFVIEW" --tree -t ';' --diff-base=a.raw b.raw >tree.csv || fail "profview --tree -t ';' --diff-base failed"
head -1 tree.csv | grep -q '^id;parent;depth;base;new;delta;delta_pct;q;verdict;function;location$' ||
	fail "--tree -t ';': unexpected columns: $(head -1 tree.csv)"
xp flame.svg "string(//*[@id='comparison'])" | grep -q '^Against the base.*FDR 0.05' ||
	fail "the flame graph does not say it is a comparison: $(xp flame.svg "string(//*[@id='comparison'])")"
for f in alpha beta gamma_; do
	[ "$(awk -F';' -v f="$f" '$10 == f' tree.csv | wc -l)" = 1 ] || fail "$f: not one node in the tree"
	[ "$(xp flame.svg "count($(box "$f"))")" = 1 ] || fail "$f: not one box in the flame graph"
	row=$(awk -F';' -v f="$f" '$10 == f' tree.csv)
	IFS=';' read -r _ _ _ base new _ pct q verdict _ <<<"$row"
	cls=$(xp flame.svg "string($(box "$f")/@class)")
	fill=$(xp flame.svg "string($(box "$f")/*[local-name()='rect']/@fill)")
	title=$(xp flame.svg "string($(box "$f")/*[local-name()='title'])")
	line=$(printf '%s\n' "$title" | grep '^base ' || true)
	note "$f: $cls, $fill; $line"
	[ -n "$line" ] || fail "$f: no comparison in the title: $title"
	near "$(field "$line" base)" "$base" || fail "$f: base '$(field "$line" base)' in the title, $base ms in --tree"
	near "$(field "$line" new)" "$new" || fail "$f: new '$(field "$line" new)' in the title, $new ms in --tree"
	[ "$(field "$line" q)" = "$q" ] || fail "$f: q $(field "$line" q) in the title, $q in --tree"
	case $line in *"($pct%)"*) ;; *) fail "$f: not $pct% in the title" ;; esac
	if [ "$f" = alpha ]; then
		[ "$verdict" = worse ] || fail "alpha 50% slower is not 'worse' in --tree: $row"
		[ "$cls" = "f worse" ] || fail "alpha's box is not marked worse: '$cls'"
		red "$fill" || fail "alpha's box is not red: $fill"
		case $line in *", worse") ;; *) fail "alpha's title does not say worse: $line" ;; esac
	else
		[ -z "$verdict" ] || fail "$f, unchanged, is '$verdict' in --tree: $row"
		[ "$cls" = "f insignificant" ] || fail "$f's box is marked '$cls'"
		grey "$fill" || fail "$f's box is not grey: $fill"
		case $line in *", not significant") ;; *) fail "$f's title does not say not significant: $line" ;; esac
	fi
done
"$PROFVIEW" --icicle --diff-base=a.raw -o icicle.svg b.raw || fail "profview --icicle --diff-base failed"
xmllint --noout icicle.svg || fail "the comparison's icicle graph is not well-formed XML"
[ "$(xp icicle.svg "string($(box alpha)/@class)")" = "f worse" ] || fail "--icicle: alpha's box is not marked worse"

# The call graph: each frame marked by its change of cum, as the flat
# table sorted by cum tests it.
"$PROFVIEW" --svg --diff-base=a.raw -o graph.svg b.raw || fail "profview --svg --diff-base failed"
xmllint --noout graph.svg || fail "the comparison's call graph is not well-formed XML"
"$PROFVIEW" --flat --sort=cum -t ';' --diff-base=a.raw b.raw >flat.csv || fail "profview --flat -t ';' --diff-base failed"
head -1 flat.csv | grep -q '^base;new;delta;delta_pct;q;verdict;function;location$' ||
	fail "--flat -t ';': unexpected columns: $(head -1 flat.csv)"
xp graph.svg "string(//*[@id='legend'])" | grep -q 'Comparison with the base' ||
	fail "the call graph's legend does not say it is a comparison"
xp graph.svg "string(//*[@id='legend'])" | grep -q 'false discovery rate 0.05' ||
	fail "the call graph's legend does not give the false discovery rate"
for f in alpha beta gamma_; do
	[ "$(xp graph.svg "count($(gnode "$f"))")" = 1 ] || fail "$f: not one node in the call graph"
	row=$(awk -F';' -v f="$f" '$7 == f' flat.csv)
	IFS=';' read -r base new _ pct q verdict _ <<<"$row"
	cls=$(xp graph.svg "string($(gnode "$f")/@class)")
	fill=$(xp graph.svg "string($(gnode "$f")//*[local-name()='polygon']/@fill)")
	stroke=$(xp graph.svg "string($(gnode "$f")//*[local-name()='polygon']/@stroke)")
	tip=$(gtip graph.svg "$f")
	label=$(xp graph.svg "string(($(gnode "$f")//*[local-name()='text'])[last()])")
	note "$f: $cls, $fill/$stroke; $label"
	near "$(field "$tip" base)" "$base" || fail "$f: cum base '$(field "$tip" base)' in the tooltip, $base ms in --flat"
	near "$(field "$tip" new)" "$new" || fail "$f: cum new '$(field "$tip" new)' in the tooltip, $new ms in --flat"
	[ "$(field "$tip" q)" = "$q" ] || fail "$f: q $(field "$tip" q) in the tooltip, $q in --flat"
	if [ "$f" = alpha ]; then
		[ "$verdict" = worse ] || fail "alpha 50% slower is not 'worse' in --flat: $row"
		[ "$cls" = "node worse" ] || fail "alpha's node is not marked worse: '$cls'"
		red "$fill" && red "$stroke" || fail "alpha's node is not red: $fill, $stroke"
		[ "$label" = "$pct% (q $q) worse" ] || fail "alpha's label says '$label', not '$pct% (q $q) worse'"
	else
		[ -z "$verdict" ] || fail "$f, unchanged, is '$verdict' in --flat: $row"
		[ "$cls" = "node insignificant" ] || fail "$f's node is marked '$cls'"
		grey "$fill" && grey "$stroke" || fail "$f's node is not grey: $fill, $stroke"
		[ "$label" = "$pct% (q $q)" ] || fail "$f's label says '$label', not '$pct% (q $q)'"
	fi
done
# The edges are the new side's: main -> alpha weighs what alpha's cum does
# in the new profile.
etip=$(xp graph.svg "string(//*[local-name()='g'][contains(concat(' ', @class, ' '), ' edge ')]//*[local-name()='a'][starts-with(@*[local-name()='title'], 'main -> alpha (')]/@*[local-name()='title'])")
ew=$(printf '%s\n' "$etip" | sed -n 's/^main -> alpha (\([^ ]*\) .*/\1/p')
anew=$(awk -F';' '$7 == "alpha" { print $2 }' flat.csv)
near "$ew" "$anew" || fail "the edge main -> alpha weighs '$ew', alpha's cum is $anew ms in the new profile: $etip"

# A profile compared with itself: nothing changed, nothing marked.
"$PROFVIEW" --flame --diff-base=a.raw -o same.svg a.raw || fail "profview --flame (a against a) failed"
xmllint --noout same.svg || fail "a against a: the flame graph is not well-formed XML"
[ "$(xp same.svg "count(//*[@id='frames']/*[local-name()='g'][@class='f worse' or @class='f better'])")" = 0 ] ||
	fail "a against a: boxes marked worse or better"
xp same.svg "//*[@id='frames']//*[local-name()='rect']/@fill" | tr ' ' '\n' | sed -n 's/^fill="\(.*\)"$/\1/p' >same.fills
[ -s same.fills ] || fail "a against a: no boxes"
while read -r c; do
	grey "$c" || fail "a against a: a box is $c, not grey"
done <same.fills
"$PROFVIEW" --svg --diff-base=a.raw -o sameg.svg a.raw || fail "profview --svg (a against a) failed"
xmllint --noout sameg.svg || fail "a against a: the call graph is not well-formed XML"
[ "$(xp sameg.svg "count(//*[local-name()='g'][@class='node worse' or @class='node better'])")" = 0 ] ||
	fail "a against a: call graph nodes marked worse or better"
xp sameg.svg "//*[local-name()='g'][starts-with(@class, 'node ') and @class != 'node legend']//*[local-name()='polygon']/@fill" |
	tr ' ' '\n' | sed -n 's/^fill="\(.*\)"$/\1/p' >sameg.fills
[ -s sameg.fills ] || fail "a against a: no call graph nodes"
while read -r c; do
	grey "$c" || fail "a against a: a call graph node is $c, not grey"
done <sameg.fills
note "a against a: $(wc -l <same.fills) boxes and $(wc -l <sameg.fills) nodes, all grey"

# Hostile names in a comparison: still well-formed, still whole once parsed.
printf 'main;a<b>&"c'"'"'d;\377x\300 5\nmain;plain 7\n' >h1.folded
printf 'main;a<b>&"c'"'"'d;\377x\300 50\nmain;plain 7\n' >h2.folded
"$PROFVIEW" --flame --diff-base=h1.folded -o hostile.svg h2.folded || fail "--flame --diff-base failed on hostile names"
xmllint --noout hostile.svg || fail "hostile names make the comparison's flame graph malformed"
[ "$(xp hostile.svg "count(//*[local-name()='title'][contains(., concat('a<b>&\"c', \"'\", 'd'))])")" = 1 ] ||
	fail "a hostile name did not survive escaping in the comparison's flame graph"
"$PROFVIEW" --svg --diff-base=h1.folded -o hostileg.svg h2.folded || fail "--svg --diff-base failed on hostile names"
xmllint --noout hostileg.svg || fail "hostile names make the comparison's call graph malformed"
[ "$(xp hostileg.svg "count(//*[local-name()='a'][contains(@*[local-name()='title'], concat('a<b>&\"c', \"'\", 'd'))])")" -ge 1 ] ||
	fail "a hostile name did not survive escaping in the comparison's call graph"
