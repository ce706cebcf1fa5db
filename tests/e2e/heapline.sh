#!/usr/bin/env bash
# profview --timeline on a heap trace: the heap in use along the run, and
# --time on a heap trace.  tests/progs/heapcases.c "line" keeps 40 MiB in
# steady(), then holds 80 MiB in burst() for 0.3 s and frees it, and
# prints when each step began and ended; the trace's start is in its
# header (rawdump), so the steps' columns are known whatever the load.
# Blocks of 4 KiB at a rate of 4 KiB: each is sampled with p = 1 - 1/e
# and the estimate of N blocks has the relative sigma sqrt((1-p)/(N p)):
#   - the SVG is well-formed, has one script, refers to nothing outside;
#   - the curve's peak (the #peak mark, the script's data) is the most of
#     the curve and peak_space's total (heapcases known, whose peak is
#     freed at once), within 5 sigma of 120 MiB, between burst()'s start and
#     its frees; burst() holds 80 MiB (5 sigma) while it holds them, and
#     nothing after its frees, when the curve is steady()'s 40 MiB;
#   - --time over burst()'s allocations and frees shows none of its
#     bytes, over its allocations alone all of them (5 sigma);
#   - in headless Chromium, the selection of a span has the bytes and
#     sampled blocks of "profview --time" over it;
#   - a function named to close the script and the CDATA section stays a
#     string, in the legend as it is.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
part_needs render chromium "the heap line's script is not run (Debian package chromium)"
cd "$WORK"
[ -x "$COLLECT_HEAP" ] || fail "no collect-heap next to $COLLECT_TIMER"
[ -n "${RAWDUMP:-}" ] || fail "RAWDUMP is not set"
command -v xmllint >/dev/null || fail "xmllint is missing (Debian libxml2-utils; scripts/test installs it)"
command -v python3 >/dev/null || fail "python3 is missing"

build heapcases
"$COLLECT_HEAP" -q --rate=4k -o line.raw ./heapcases line >line.txt || fail "collect-heap ./heapcases line failed"
start=$("$RAWDUMP" line.raw | awk '$1 == "header" { print $3; exit }')
[ -n "$start" ] || fail "no header in the trace"
# at STEP: seconds from the trace's start
at() {
	awk -v s="$start" -v p="$1" '$1 == p { printf "%.6f", ($2 - s) / 1e9 }' line.txt
}
# mid A B: the middle of two steps, in seconds
mid() {
	awk -v a="$(at "$1")" -v b="$(at "$2")" 'BEGIN { printf "%.6f", (a + b) / 2 }'
}
"$PROFVIEW" --timeline -o line.svg line.raw || fail "profview --timeline of a heap trace failed"
xmllint --noout line.svg || fail "the heap timeline is not well-formed XML"
! grep -Eq '(href|src)=|url\([^#]|@import' line.svg || fail "the heap timeline refers to something outside it"
[ "$(grep -c '</script>' line.svg)" = 1 ] && [ "$(grep -c ']]>' line.svg)" = 1 ] || fail "not one script"
grep -q 'heap in use' line.svg || fail "the title does not say it is the heap in use"
note "heap timeline: $(stat -c %s line.svg) bytes of SVG for a $(stat -c %s line.raw)-byte trace"
[ "$(stat -c %s line.svg)" -le $((4 * $(stat -c %s line.raw) + 200000)) ] || fail "the SVG is far larger than the trace"

# The curve, from the script's data: its peak, burst()'s bytes and the
# total in the columns of each step.
python3 - line.svg "$(at burst_start)" "$(at burst_end)" "$(at free_start)" "$(at free_end)" >curve.txt <<'EOF' ||
import json, math, re, sys
svg = open(sys.argv[1], encoding='utf-8').read()
bs, be, fs, fe = (float(x) for x in sys.argv[2:6])
D = json.loads(re.search(r'var HL = (\{.*?\});\n', svg, re.S).group(1))
peak = re.search(r'id="peak" data-bytes="(\d+)" data-time="([0-9.]+)" data-column="(\d+)"', svg)
n, a, l, u, b = D['n'], D['a'], D['l'], D['u'], D['b']
col = lambda sec: min(n - 1, max(0, int((sec * 1e9 - a) * n // l)))
fn = lambda st: D['f'][D['s'][st][-1]] if D['s'][st] else ''
def held(name, c):
    return sum(b[i + 4] for i in range(0, len(b), 6)
               if b[i] <= c < b[i + 1] and fn(b[i + 2]) == name)
print('peak', peak.group(1), D['peak'][1], max(u), peak.group(2))
during = range(col(be) + 1, col(fs))
after = range(col(fe) + 1, n)
print('burst_during', min(held('burst', c) for c in during), max(held('burst', c) for c in during))
print('burst_after', max(held('burst', c) for c in after))
print('total_after', min(u[c] for c in after), max(u[c] for c in after))
print('names', ' '.join(sorted(set(D['f']))))
EOF
	fail "cannot read the curve from the SVG"
cat curve.txt
MIB=1048576
# within5 ESTIMATE MIB N: is an estimate of N 4 KiB blocks within 5 sigma
# of MIB MiB (plus SLACK bytes of the program's and libc's own blocks)?
within5() {
	awk -v e="$1" -v m="$2" -v n="$3" -v slack="${SLACK:-0}" 'BEGIN {
		p = 1 - exp(-1); t = m * 1048576; sd = t * sqrt((1 - p) / (n * p))
		exit !(e >= t - 5 * sd && e <= t + 5 * sd + slack)
	}'
}
read -r _ mark data most ptime < <(grep '^peak' curve.txt)
[ "$mark" = "$data" ] && [ "$data" = "$most" ] || fail "the peak marked ($mark) is not the curve's most ($most, data $data)"
SLACK=$MIB within5 "$mark" 120 30720 || fail "the peak, $mark bytes, is not 120 MiB within 5 sigma"
awk -v t="$ptime" -v a="$(at burst_start)" -v b="$(at free_start)" 'BEGIN { exit !(t >= a && t <= b + 0.01) }' ||
	fail "the peak is at $ptime s, not between burst()'s start and its frees"
read -r _ lo hi < <(grep '^burst_during' curve.txt)
[ "$lo" = "$hi" ] || fail "burst()'s bytes change while it holds them: $lo to $hi"
within5 "$lo" 80 20480 || fail "burst() holds $lo bytes, not 80 MiB within 5 sigma"
[ "$(awk '$1 == "burst_after" { print $2 }' curve.txt)" = 0 ] || fail "burst() holds bytes after its frees"
read -r _ lo hi < <(grep '^total_after' curve.txt)
SLACK=$MIB within5 "$lo" 40 10240 && SLACK=$MIB within5 "$hi" 40 10240 ||
	fail "after burst()'s frees the heap is $lo to $hi bytes, not steady()'s 40 MiB"
grep -q '^names.* burst .*steady' curve.txt || fail "burst and steady are not among the frames"
for f in burst steady; do
	[ "$(xmllint --xpath "count(//*[local-name()='g'][@id='legend']//*[local-name()='text'][.='$f'])" line.svg)" = 1 ] ||
		fail "$f is not in the legend"
done

# The peak marked is peak_space's total, by construction: heapcases known
# holds peak()'s blocks and frees them at once, in the column of the peak
# (a curve of the columns' ends alone misses the bytes freed after the
# peak in its column); the curve's data says the same.
"$COLLECT_HEAP" -q --rate=64k -o known.raw ./heapcases known || fail "collect-heap ./heapcases known failed"
"$PROFVIEW" --timeline -o known.svg known.raw || fail "profview --timeline of known.raw failed"
mark=$(sed -n 's/.*id="peak" data-bytes="\([0-9]*\)".*/\1/p' known.svg)
data=$(sed -n 's/.*"peak":\[[0-9]*,\([0-9]*\)\].*/\1/p' known.svg)
want=$("$PROFVIEW" -q --folded --sample-index=peak_space known.raw | awk '{ s += $NF } END { print s + 0 }')
[ -n "$mark" ] && [ "$mark" = "$want" ] && [ "$data" = "$want" ] ||
	fail "the timeline's peak is $mark bytes (data $data), peak_space's total $want"
note "known: the timeline's peak and peak_space are both $want bytes"

# --time: the blocks allocated in the span and in use at its end.
# held_in FROM TO FUNCTION: the bytes of FUNCTION's blocks --time keeps
held_in() {
	"$PROFVIEW" -q --folded --sample-index=inuse_space --time="$1,$2" line.raw >span.folded ||
		fail "profview --time=$1,$2 failed"
	awk -v f="$3" '{ n = split($1, a, ";"); if (a[n] == f) s += $NF } END { print s + 0 }' span.folded
}
from=$(mid steady_end burst_start)
whole=$(held_in "$from" "$(mid free_end exit)" burst)
[ "$whole" = 0 ] || fail "--time over burst()'s allocations and frees shows $whole of its bytes"
before=$(held_in "$from" "$(mid burst_end free_start)" burst)
within5 "$before" 80 20480 || fail "--time ending before burst()'s frees shows $before of its bytes, not 80 MiB"
[ "$(held_in "$from" "$(mid burst_end free_start)" steady)" = 0 ] ||
	fail "--time after steady() shows its blocks"
note "burst(): $before bytes in use before its frees, $whole after"

# A function named to close the script and its CDATA section.
"$CC" -O1 -fno-omit-frame-pointer -o plain "$SRCDIR/tests/progs/heapcases.c" -lpthread || fail "cannot compile heapcases.c"
objcopy --redefine-sym burst='burst]]></script><script>alert(1)</script>&amp;"'"'"'<x>' plain evil
"$COLLECT_HEAP" -q --rate=64k -o evil.raw ./evil line >/dev/null || fail "collect-heap ./evil line failed"
"$PROFVIEW" --timeline -o evil.svg evil.raw || fail "--timeline on hostile names failed"
xmllint --noout evil.svg || fail "hostile names make malformed XML"
[ "$(grep -c '</script>' evil.svg)" = 1 ] && [ "$(grep -c ']]>' evil.svg)" = 1 ] ||
	fail "a name closed the script or its CDATA section"
[ "$(xmllint --xpath "count(//*[@id='legend']//*[starts-with(., 'burst]]></script>')])" evil.svg)" -ge 1 ] ||
	fail "the hostile name is not in the legend as it is"

# The browser (the part "render"): a selection's bytes and blocks are
# --time's.
part_starts render
CHROME_TIMEOUT=60
to=$(mid burst_end free_start)
{
	echo '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
	sed 1d line.svg
	echo '<pre id="out"></pre><script>'
	echo "var r = heaplineSelect($from, $to);"
	cat <<'EOF'
var out = ['sel ' + r.from.toFixed(9) + ' ' + r.to.toFixed(9) + ' ' + r.total + ' ' + r.samples,
  'burst ' + (r.functions.burst ? r.functions.burst.self : 0)];
heaplineSelect();
out.push('flame ' + document.querySelectorAll('#flame > g').length);
document.getElementById('out').textContent = out.join('\n');
EOF
	echo '</script></body></html>'
} >page.html
chrome --dump-dom "file://$WORK/page.html" >page.dom || { cat chrome.log >&2; fail "chromium could not load the page"; }
sed -n '/<pre id="out">/,/<\/pre>/p' page.dom | sed 's/.*<pre id="out">//; s/<\/pre>.*//' >res.txt
cat res.txt
grep -q '^flame [1-9]' res.txt || { cat chrome.log >&2; fail "the script did not run to its end: $(cat res.txt)"; }
read -r _ sfrom sto stotal ssamples < <(grep '^sel' res.txt)
"$PROFVIEW" -q --folded --sample-index=inuse_space --time="$sfrom,$sto" line.raw >sel.folded || fail "--time=$sfrom,$sto failed"
"$PROFVIEW" -q --folded --sample-index=samples --time="$sfrom,$sto" line.raw >sel-n.folded || fail "--time=$sfrom,$sto failed"
[ "$stotal" = "$(awk '{ s += $NF } END { print s + 0 }' sel.folded)" ] ||
	fail "the selection's $stotal bytes are not --time's $(awk '{ s += $NF } END { print s + 0 }' sel.folded)"
[ "$ssamples" = "$(awk '{ s += $NF } END { print s + 0 }' sel-n.folded)" ] ||
	fail "the selection's $ssamples blocks are not --time's"
[ "$(awk '$1 == "burst" { print $2 }' res.txt)" = "$before" ] || fail "the selection's burst() is not --time's"
note "selection $sfrom-$sto s: $stotal bytes in $ssamples sampled blocks, as --time"
chrome --dump-dom "file://$WORK/evil.svg" >evil.dom || fail "chromium could not load evil.svg"
grep -q 'id="selection"[^>]*data-samples="[1-9]' evil.dom || fail "the hostile names stopped the script"
exit 0
