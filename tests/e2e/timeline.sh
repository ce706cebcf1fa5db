#!/usr/bin/env bash
# profview --timeline: a row per thread along the run, coloured by function,
# and the flame graph of a span selected in it.
# tests/progs/phases.c computes in phase_one, then in phase_two, then in
# both at once (two threads), and prints when each phase began and ended;
# the trace's start is in its header (rawdump), so the phases' columns are
# known whatever the load.
#   - the SVG is well-formed, refers to nothing outside, has a row per
#     thread labelled with its tid, and the marks of each phase's columns
#     are that phase's function's colour (most of them: a sample now and
#     then is in clock_gettime, below it);
#   - in headless Chromium, the selection of each phase (timelineSelect,
#     and a drag with the mouse) has the totals and the function shares
#     of "profview --flat --time" over the same span, the hover shows the
#     column's stack, and the standalone SVG runs its script too;
#   - a collect-gdb trace gives a row per thread, the waiting one hatched
#     (off-CPU); hostile names stay inside their strings; an untimed
#     profile is an error; -o does not follow a link.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
part_needs render chromium "the timeline's script is not run (Debian package chromium)"

[ -n "${RAWDUMP:-}" ] || fail "RAWDUMP is not set"
command -v xmllint >/dev/null || fail "xmllint is missing (Debian libxml2-utils; scripts/test installs it)"
COLLECT_GDB=${COLLECT_GDB:-$(cd "$(dirname "$PROFVIEW")/../collectors/gdb" && pwd)/collect-gdb}
build phases
build gdbtarget
cd "$WORK"
"$COLLECT_TIMER" -q -o ph.raw ./phases 0.5 >ph.txt || fail "collect-timer ./phases failed"
read -r pid start period < <("$RAWDUMP" ph.raw | awk '$1 == "header" { print $2, $3, $5; exit }')
[ -n "$start" ] || fail "no header in the trace"
"$PROFVIEW" --timeline -o ph.svg ph.raw || fail "profview --timeline failed"
xmllint --noout ph.svg || fail "--timeline output is not well-formed XML"
! grep -Eq '(href|src)=|url\([^#]|@import' ph.svg || fail "the timeline refers to something outside it"
[ "$(grep -c '</script>' ph.svg)" = 1 ] && [ "$(grep -c ']]>' ph.svg)" = 1 ] || fail "not one script"
note "timeline of $(grep -o '[0-9]* samples, CPU [^;]*' ph.svg | head -n 1): $(stat -c %s ph.svg) bytes"

# xp FILE XPATH: an XPath 1.0 expression on an SVG (elements by local-name())
xp() {
	xmllint --xpath "$2" "$1" 2>/dev/null || true
}
# The rows: one per thread, the main thread's (its tid is the pid) first.
"$PROFVIEW" --threads --maxdepth=0 ph.raw | sed -n 's/.*\[thread \([0-9]*\).*/\1/p' | sort >tids.txt
[ "$(wc -l <tids.txt)" = 2 ] || fail "phases has not 2 threads: $(cat tids.txt)"
[ "$(xp ph.svg "count(//*[@class='row'])")" = 2 ] || fail "not one row per thread"
other=$(grep -vx "$pid" tids.txt)
[ "$(xp ph.svg "string((//*[@class='row'])[1]/@id)")" = "t$pid" ] || fail "the main thread's row is not first"
for tid in $pid $other; do
	case "$(xp ph.svg "string(//*[@id='t$tid']/*[@class='label'])")" in
	"$tid "*) ;;
	*) fail "the row of thread $tid is labelled '$(xp ph.svg "string(//*[@id='t$tid']/*[@class='label'])")'" ;;
	esac
done
# colour FUNCTION: its colour in the legend
colour() {
	xp ph.svg "string(//*[@id='legend']/*[*[local-name()='text'] = '$1']/*[local-name()='rect']/@fill)"
}
one=$(colour phase_one)
two=$(colour phase_two)
[ -n "$one" ] && [ -n "$two" ] && [ "$one" != "$two" ] || fail "phase_one ($one) and phase_two ($two) have no colours of their own"
len=$(grep -o '"l":[0-9]*' ph.svg | cut -d: -f2)
cols=$(grep -o '"n":[0-9]*' ph.svg | cut -d: -f2)
# cols PHASE: its columns "FROM TO", less 2 columns and 2 periods each side
# (a sample carries the CPU time since the one before it)
phase_cols() {
	awk -v s="$start" -v p="$1" -v l="$len" -v n="$cols" -v per="$period" '$1 == p {
		printf "%d %d", ($2 - s + 2 * per) * n / l + 2, ($3 - s - 2 * per) * n / l - 2 }' ph.txt
}
# marks TID FROM TO: "COLOUR PX" of the row's marks within columns [FROM, TO)
marks() {
	xp ph.svg "//*[@id='t$1']//*[local-name()='rect'][@fill]" | grep -o '<rect[^>]*>' |
		sed 's/.* x="\([0-9]*\)".* width="\([0-9]*\)".* fill="\([^"]*\)".*/\1 \2 \3/' |
		awk -v a="$2" -v b="$3" -v l="$(grep -o '"x0":[0-9]*' ph.svg | cut -d: -f2)" '{
			x0 = $1 - l; x1 = x0 + $2; if (x0 < a) x0 = a; if (x1 > b) x1 = b
			if (x1 > x0) px[$3] += x1 - x0 } END { for (c in px) print c, px[c] }'
}
# share TID PHASE COLOUR: "PX_OF_COLOUR PX_MARKED" in the phase's columns
share() {
	marks "$1" $(phase_cols "$2") | awk -v c="$3" '{ all += $2; if ($1 == c) k += $2 } END { print k + 0, all + 0 }'
}
for check in "$pid one $one" "$pid two $two" "$pid both $one" "$other both $two"; do
	set -- $check
	read -r k n < <(share "$1" "$2" "$3")
	note "thread $1, phase $2: $k of $n px marked in $3"
	# Most of a phase's columns are its function's; the others are those
	# where a clock read (the vDSO, now()) weighed most, and the marks a
	# thread keeps across a short gap take the colour before the gap: on
	# a loaded machine, where the timers fire late and unevenly, that
	# was up to 14% of them.  Two thirds leaves room for worse.
	[ "$n" -ge 20 ] && [ $((k * 3)) -ge $((n * 2)) ] || fail "thread $1 in phase $2: only $k of $n px in its function's colour $3"
done
read -r k n < <(share "$pid" one "$two")
[ "$k" = 0 ] || fail "phase_two's colour in phase one"
both_col=$(awk -v s="$start" -v l="$len" -v n="$cols" '$1 == "both" { printf "%d", ($2 - s) * n / l - 1 }' ph.txt)
read -r k n < <(marks "$other" 0 "$both_col" | awk '{ s += $2 } END { print s + 0 }')
[ "$k" = 0 ] || fail "the second thread has marks before it started"

# Errors: an untimed profile, a link as -o, --highlight alone.
printf 'main;f 3\n' >x.folded
set +e
"$PROFVIEW" --timeline x.folded >/dev/null 2>err.txt; st=$?
[ $st = 1 ] && [ "$(wc -l <err.txt)" = 1 ] && grep -q 'does not say when' err.txt || fail "--timeline on folded stacks: status $st, $(cat err.txt)"
ln -s absent link.svg
"$PROFVIEW" --timeline -o link.svg ph.raw 2>err.txt; st=$?
[ $st = 1 ] && grep -q 'symbolic link' err.txt && [ ! -e absent ] || fail "-o through a link: status $st, $(cat err.txt)"
"$PROFVIEW" --flat --highlight=f ph.raw >/dev/null 2>err.txt; st=$?
[ $st = 2 ] || fail "--highlight without --timeline: status $st"
"$PROFVIEW" --timeline --highlight='(' ph.raw >/dev/null 2>err.txt; st=$?
[ $st = 2 ] && grep -q "invalid --highlight" err.txt || fail "--highlight='(': status $st, $(cat err.txt)"
set -e
# --highlight: the samples without phase_two are grey, phase_two's coloured.
"$PROFVIEW" --timeline --highlight='^phase_two$' -o hl.svg ph.raw || fail "--highlight failed"
xmllint --noout hl.svg || fail "--highlight output is not well-formed XML"
# (by width: a run of columns of one colour is one mark, so a count of
# marks would say more about the gaps than the colours)
hl_one=$(xp hl.svg "//*[@id='t$pid']//*[local-name()='rect'][@fill]" | grep -o '<rect[^>]*>' |
	sed 's/.* width="\([0-9]*\)".* fill="\([^"]*\)".*/\1 \2/' |
	awk '{ px[$2] += $1 } END { for (c in px) print px[c], c }' | sort -rn | head -n 1)
case "$hl_one" in *' #c4c4c4') ;; *) fail "--highlight=phase_two: the main thread is mostly $hl_one, not grey" ;; esac
grep -q "\"$two\"" hl.svg || fail "--highlight=phase_two: phase_two is not coloured"

# A collect-gdb trace: a row per thread, the waiter's marks hatched.
if command -v gdb >/dev/null; then
	./gdbtarget 20 2>/dev/null &
	target=$!
	trap 'kill $target 2>/dev/null || true; rm -rf "$WORK"' EXIT
	sleep 0.3
	"$COLLECT_GDB" -q -p $target -i 0.02 -n 12 -o g.gdb || fail "collect-gdb failed"
	kill $target 2>/dev/null || true
	"$PROFVIEW" --timeline -o g.svg g.gdb || fail "profview --timeline on a gdb trace failed"
	xmllint --noout g.svg || fail "the gdb trace's timeline is not well-formed XML"
	nthreads=$("$PROFVIEW" --threads --maxdepth=0 g.gdb | grep -c '\[thread ')
	[ "$(xp g.svg "count(//*[@class='row'])")" = "$nthreads" ] || fail "the gdb timeline has not $nthreads rows"
	gtid() { "$PROFVIEW" --threads --maxdepth=0 g.gdb | sed -n "s/.*\[thread \([0-9]*\) \"$1\"\]/\1/p"; }
	waiter=$(gtid waiter)
	alpha=$(gtid alpha)
	[ "$(xp g.svg "count(//*[@id='t$waiter']/*[@class='on']/*)")" = 0 ] &&
		[ "$(xp g.svg "count(//*[@id='t$waiter']/*[@class='off']/*)")" -ge 1 ] ||
		fail "the waiting thread is not drawn off-CPU"
	[ "$(xp g.svg "count(//*[@id='t$alpha']/*[@class='on']/*)")" -ge 1 ] || fail "the spinning thread is not drawn on-CPU"
	grep -q 'off-CPU' g.svg || fail "the legend does not say what hatched marks are"
	note "gdb trace: $nthreads rows, the waiter off-CPU, alpha on it"
else
	note "gdb is not installed: the timeline of a gdb trace is not checked"
fi

# Hostile names: a function named to close the script and the CDATA
# section; it stays a string.
"$CC" -O1 -fno-omit-frame-pointer -pthread -o names "$SRCDIR/tests/progs/hostile-names.c" ||
	fail "cannot compile hostile-names.c"
objcopy --redefine-sym hot='hot]]></script><script>alert(1)</script>&amp;"'"'" names evil
"$COLLECT_TIMER" -q -o evil.raw ./evil 0.2 >/dev/null || fail "collect-timer ./evil failed"
"$PROFVIEW" --timeline -o evil.svg evil.raw || fail "--timeline on hostile names failed"
xmllint --noout evil.svg || fail "hostile names make malformed XML"
[ "$(grep -c '</script>' evil.svg)" = 1 ] && [ "$(grep -c ']]>' evil.svg)" = 1 ] ||
	fail "a name closed the script or its CDATA section"
[ "$(xp evil.svg "count(//*[@id='legend']//*[starts-with(., 'hot]]></script>')])")" -ge 1 ] ||
	fail "the hostile name is not in the legend as it is"

# The browser (the part "render"): selections, their totals against
# --flat, drag and hover.
part_starts render
CHROME_TIMEOUT=60
# span PHASE: "FROM TO" in seconds from the trace's start
span() {
	awk -v s="$start" -v p="$1" '$1 == p { printf "%.6f %.6f", ($2 - s) / 1e9, ($3 - s) / 1e9 }' ph.txt
}
# The page: the SVG inline, then a script that selects each phase, drags
# across phase two and hovers over phase one's columns, and writes what
# it saw in <pre id="out">.
{
	echo '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>'
	sed 1d ph.svg
	echo '<pre id="out"></pre><script>'
	echo "var spans = { one: [$(span one | tr ' ' ,)], two: [$(span two | tr ' ' ,)], both: [$(span both | tr ' ' ,)] };"
	cat <<'EOF'
var out = [], svg = document.getElementById('timeline');
for (var p in spans) {
  var r = timelineSelect(spans[p][0], spans[p][1]);
  out.push(['sel', p, r.from.toFixed(9), r.to.toFixed(9), r.total, r.samples].join(' '));
  for (var f in r.functions) out.push(['fn', p, f, r.functions[f].self, r.functions[f].cum].join(' '));
}
function col(sec) { return Math.round((sec * 1e9 - TL.a) * TL.n / TL.l); }
function mouse(type, c, row) {
  var m = svg.getScreenCTM();
  var x = TL.x0 + c + 0.5, y = TL.y0 + row * TL.step + TL.row / 2;
  svg.dispatchEvent(new MouseEvent(type, { clientX: m.a * x + m.e, clientY: m.d * y + m.f, bubbles: true }));
}
var a = col(spans.two[0]), b = col(spans.two[1]) - 1;
mouse('mousedown', a, 0); mouse('mousemove', (a + b) >> 1, 0); mouse('mousemove', b, 0); mouse('mouseup', b, 0);
var st = document.getElementById('selection');
out.push(['drag', st.getAttribute('data-from'), st.getAttribute('data-to'), st.getAttribute('data-samples')].join(' '));
var tip = document.getElementById('tip'), seen = 0, hit = 0;
for (var c = col(spans.one[0]) + 3; c < col(spans.one[1]) - 3; c += 5) {
  mouse('mousemove', c, 0);
  var t = tip.textContent;
  if (tip.getAttribute('display') === 'none' || t.indexOf('no samples') >= 0) continue;
  seen++;
  if (t.indexOf('phase_one') >= 0 && t.indexOf(' s') >= 0) hit++;
}
out.push('hover ' + seen + ' ' + hit);
timelineSelect();
out.push('flame ' + document.querySelectorAll('#flame > g').length);
document.getElementById('out').textContent = out.join('\n');
EOF
	echo '</script></body></html>'
} >page.html
chrome --dump-dom "file://$WORK/page.html" >page.dom || { cat chrome.log >&2; fail "chromium could not load the page"; }
sed -n '/<pre id="out">/,/<\/pre>/p' page.dom | sed 's/.*<pre id="out">//; s/<\/pre>.*//' >res.txt
grep -q '^flame [1-9]' res.txt || { cat chrome.log >&2; fail "the script did not run to its end: $(cat res.txt)"; }

# flat PHASE FROM TO: profview --flat -t ';' over FROM,TO into PHASE.csv,
# its text header into PHASE.txt
flat() {
	"$PROFVIEW" --flat -t ';' --time="$2,$3" ph.raw >"$1.csv" || fail "profview --flat --time=$2,$3 failed"
	"$PROFVIEW" --flat --time="$2,$3" ph.raw >"$1.txt"
}
# col_of CSV FUNCTION COLUMN: a field of FUNCTION's row (0 when absent)
col_of() {
	awk -F';' -v f="$2" -v k="$3" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["function"] == f { print $c[k]; found = 1 } END { if (!found) print 0 }' "$1"
}
in_span() { sed -n 's/^time: .*; \([0-9]*\) samples in.*/\1/p' "$1"; }
dt=$((len / cols))
for ph in one two both; do
	read -r _ _ from to total samples < <(grep "^sel $ph " res.txt)
	[ -n "$total" ] || fail "no selection of phase $ph: $(cat res.txt)"
	# 1. Over the columns selected, exactly: the same samples, and every
	# function's CPU time to the microsecond --flat prints.
	flat "snap-$ph" "$from" "$to"
	[ "$(in_span "snap-$ph.txt")" = "$samples" ] ||
		fail "phase $ph: the selection $from-$to s holds $samples samples, --flat --time $(in_span "snap-$ph.txt")"
	# (a name may hold spaces: a kernel frame's is "[k] NAME")
	while IFS=$'\t' read -r fn self cum; do
		for k in self cum; do
			want=$(col_of "snap-$ph.csv" "$fn" "${k}_cpu_ms")
			got=$([ $k = self ] && echo "$self" || echo "$cum")
			awk -v w="$want" -v g="$got" 'BEGIN { d = w - g / 1e6; exit !(d < 0.0015 && d > -0.0015) }' ||
				fail "phase $ph: $fn's $k time is $got ns in the selection, $want ms in --flat"
		done
	done < <(grep "^fn $ph " res.txt | awk '{ n = $3; for (i = 4; i <= NF - 2; i++) n = n " " $i; print n "\t" $(NF - 1) "\t" $NF }')
	# 2. Against the phase's own span, not rounded to columns: the shares
	# within a percentage point, plus what moving each end by up to half a
	# column can change: two ends, two threads, half a column of CPU time
	# and a sample's period (a sample carries the CPU time since the one
	# before it) each, of the selection's total.
	flat "$ph" $(span $ph)
	tol=$(awk -v t="$total" -v dt="$dt" -v per="$period" 'BEGIN { printf "%.2f", 1 + 100 * 4 * (dt / 2 + per) / t }')
	for fn in phase_one phase_two main; do
		js=$(grep "^fn $ph $fn " res.txt | awk -v t="$total" '{ printf "%.2f", 100 * $5 / t }')
		want=$(col_of "$ph.csv" "$fn" cum_pct)
		awk -v a="${js:-0}" -v b="$want" -v tol="$tol" 'BEGIN { d = a - b; exit !(d <= tol && d >= -tol) }' ||
			fail "phase $ph: $fn is ${js:-0}% of the selection, $want% in --flat --time=$(span $ph | tr ' ' ,) (tolerance $tol)"
	done
	note "phase $ph: $samples samples in $from-$to s; phase_one $(col_of "$ph.csv" phase_one cum_pct)%, phase_two $(col_of "$ph.csv" phase_two cum_pct)% (tolerance ${tol} points)"
done
read -r _ dfrom dto dsamples < <(grep '^drag ' res.txt)
flat drag "$dfrom" "$dto"
[ -n "$dsamples" ] && [ "$(in_span drag.txt)" = "$dsamples" ] || fail "the drag selected $dsamples samples in $dfrom-$dto s, --flat $(in_span drag.txt)"
awk -v a="$dfrom" -v b="$dto" -v s="$(span two)" -v dt="$dt" 'BEGIN { split(s, p, " ")
	d = a - p[1]; e = b - p[2]; m = 2 * dt / 1e9; exit !(d < m && d > -m && e < m && e > -m) }' ||
	fail "the drag across phase two selected $dfrom-$dto s, not $(span two)"
read -r _ seen hit < <(grep '^hover ' res.txt)
note "hover over phase one: $seen columns with samples, $hit showing phase_one"
[ "$seen" -ge 5 ] && [ "$hit" = "$seen" ] || fail "the hover over phase one showed phase_one in $hit of $seen columns"

# The SVG alone runs its script: opened with a span selected, it draws the
# span's flame graph.
chrome --dump-dom "file://$WORK/ph.svg#sel=$(span two | tr ' ' ,)" >alone.dom || fail "chromium could not load ph.svg"
read -r _ _ _ _ _ samples < <(grep "^sel two " res.txt)
grep -q "id=\"selection\"[^>]*data-samples=\"$samples\"" alone.dom || fail "ph.svg#sel=: not phase two's $samples samples: $(grep -o '<text id="selection"[^>]*>' alone.dom)"
grep -q '<text[^>]*>phase_two</text>' alone.dom || fail "ph.svg#sel=: no phase_two box in the flame graph"
chrome --dump-dom "file://$WORK/evil.svg" >evil.dom || fail "chromium could not load evil.svg"
grep -q 'id="selection"[^>]*data-samples="[1-9]' evil.dom || fail "the hostile names stopped the script"
exit 0
