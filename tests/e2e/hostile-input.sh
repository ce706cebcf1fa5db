#!/usr/bin/env bash
# Profiles written to attack the viewer: names holding terminal escape
# sequences and bytes XML forbids, stacks tens of thousands of frames
# deep, inputs without end.  No control character reaches a text report,
# a message or a picture; every report stays a small multiple of its
# input and finishes quickly; reading stops at a limit.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

# no_controls FILE WHAT: FILE holds no control character but newlines (a
# C0, DEL, or a C1 as UTF-8) and is valid UTF-8.
no_controls() {
	if LC_ALL=C grep -q '[[:cntrl:]]' "$1"; then
		LC_ALL=C grep -m 3 '[[:cntrl:]]' "$1" | od -c | head -n 8 >&2
		fail "$2: a control character reached the output"
	fi
	if LC_ALL=C grep -q $'\xc2[\x80-\x9f]' "$1"; then
		fail "$2: a C1 control character reached the output"
	fi
	iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1 || fail "$2: the output is not valid UTF-8"
}

# Folded stacks can carry any byte but NUL and newline in a name: a
# window-title and clear-screen sequence, BEL, DEL, a C1 CSI (as UTF-8 and
# as a lone byte), a tab, and valid UTF-8 that must stay as it is.
printf 'main;\033]0;pwned\007\033[2Jevil 5\nmain;ctl\001\177\302\233\233x\tcaf\303\251 3\nmain;\346\227\245\346\234\254 2\n' >names.folded
for report in tree flat folded; do
	"$PROFVIEW" --$report names.folded >esc.$report 2>esc.err || fail "profview --$report on escape sequences: $(cat esc.err)"
	no_controls esc.$report "--$report"
	no_controls esc.err "--$report (stderr)"
done
grep -qF '^[]0' esc.tree || fail "--tree: the escape sequence is not shown as ^[: $(cat esc.tree)"
grep -qF 'pwned^G^[[2Jevil' esc.flat || fail "--flat: BEL is not shown as ^G: $(cat esc.flat)"
grep -qF 'ctl^A^?\xc2\x9b\x9bx^Icafé' esc.flat || fail "--flat: $(grep ctl esc.flat)"
grep -qF '日本' esc.tree || fail "--tree: UTF-8 names are not kept as they are"
# Folded: one line per stack (in folded input the ';' of the sequence
# separates frames: only a name from elsewhere can hold one, below).
[ "$(wc -l <esc.folded)" -eq 3 ] || fail "--folded: not 3 lines"
grep -qxF 'main;^[]0;pwned^G^[[2Jevil 5' esc.folded || fail "--folded: $(cat esc.folded)"
"$PROFVIEW" --color=always --tree names.folded >esc.color || fail "--color=always failed"
sed 's/\x1b\[[0-9]*m//g' esc.color >esc.plain
no_controls esc.plain "--tree --color=always (once its attributes are removed)"
note "folded names with escape sequences: shown as ^[, ^G, \\xHH in every text report"

# A real program: its symbols renamed (one with a ';', a newline, a C1
# CSI, a character reference, a backslash, quotes and angle brackets), its
# file name and a thread's name holding escape sequences.
"$CC" -O1 -fno-omit-frame-pointer -pthread -o names "$SRCDIR/tests/progs/hostile-names.c" ||
	fail "cannot compile hostile-names.c"
prog=$'prog\e[2J'
warm=$'line\nbreak;semi colon\xc2\x9b&#27;&amp;\\N"\'<>'
objcopy --redefine-sym hot=$'\e]0;pwned\a\e[2J'hot --redefine-sym warm="$warm" names "$prog" ||
	fail "objcopy --redefine-sym failed"
"$COLLECT_TIMER" -q -o names.raw "./$prog" 0.3 >/dev/null || fail "collect-timer on the renamed program failed"
for report in tree flat folded "tree --threads" "folded --threads" "flat --lines" "tree --addresses"; do
	# shellcheck disable=SC2086
	"$PROFVIEW" --$report names.raw >t.out 2>t.err || fail "profview --$report on the trace: $(cat t.err)"
	no_controls t.out "--$report (trace)"
	no_controls t.err "--$report (trace, stderr)"
done
"$PROFVIEW" --tree --threads names.raw >t.tree
grep -qF "program: $PWD/prog^[[2J (pid" t.tree || fail "--tree: the program name is not escaped: $(head -n 1 t.tree)"
grep -qF '"^[]0;t^G^[[2J"]' t.tree || fail "--tree --threads: the thread name is not escaped: $(grep thread t.tree)"
"$PROFVIEW" --flat names.raw >t.flat
grep -qF '^[]0;pwned^G^[[2Jhot' t.flat || fail "--flat: no escaped hot: $(cat t.flat)"
grep -qF 'line^Jbreak;semi colon\xc2\x9b&#27;&amp;\N"'"'"'<>' t.flat || fail "--flat: no escaped warm: $(cat t.flat)"
# Folded: every line is a stack and its count, whatever the names held.
"$PROFVIEW" --folded --threads names.raw >t.folded
awk '!/;/ || !/ [0-9]+$/ { bad = 1 } END { exit bad }' t.folded || fail "--folded: a line is not a stack: $(cat t.folded)"
grep -qF ';line^Jbreak:semi colon\xc2\x9b&#27:&amp:\N' t.folded || fail "--folded: the ';' in a name is not ':': $(cat t.folded)"
grep -q '^break' t.folded && fail "--folded: a newline in a name started a line: $(cat t.folded)"
"$PROFVIEW" --flat t.folded >t.again 2>t.err || fail "--folded output does not read back: $(cat t.err)"
# A message quoting a name from the trace: the program is gone.
mv "$prog" gone
"$PROFVIEW" --flat names.raw >/dev/null 2>t.err || fail "profview without the program failed: $(cat t.err)"
no_controls t.err "the warning about a missing program"
grep -qF "'$PWD/prog^[[2J'" t.err || fail "the warning does not name the program, escaped: $(cat t.err)"
mv gone "$prog"
note "renamed symbols, program and thread names: escaped in reports and messages"

# The pictures: well-formed XML (1.0 forbids most C0 characters even as
# character references, and graphviz decodes "&#27;" from its input),
# the names in their titles as the text reports show them.
command -v xmllint >/dev/null || fail "xmllint is missing (Debian libxml2-utils; scripts/test installs it)"
shown_warm='line^Jbreak;semi colon\xc2\x9b&#27;&amp;\N"'"'"'<>'
for pic in svg flame icicle; do
	"$PROFVIEW" --$pic -o names.$pic.svg names.raw 2>t.err || fail "profview --$pic on the trace: $(cat t.err)"
	xmllint --noout names.$pic.svg || fail "--$pic: names with control characters make malformed XML"
	no_controls names.$pic.svg "--$pic"
	"$PROFVIEW" --$pic -o folded.$pic.svg names.folded 2>t.err || fail "profview --$pic on folded names: $(cat t.err)"
	xmllint --noout folded.$pic.svg || fail "--$pic: folded names with control characters make malformed XML"
	no_controls folded.$pic.svg "--$pic (folded)"
done
# title PICTURE PREFIX: the first title (a tooltip in the call graph, a
# box's <title> in the flame graph) that starts with PREFIX, parsed.
title() {
	xmllint --xpath "string((//*[local-name()='a']/@*[local-name()='title'] | //*[local-name()='title'])[starts-with(., '$2')][1])" \
		"$1" 2>/dev/null || true
}
case "$(title names.svg.svg 'line^J')" in
"$shown_warm flat "*) ;;
*) fail "--svg: the tooltip does not show the name as it is: $(title names.svg.svg 'line^J')" ;;
esac
case "$(title names.svg.svg '^[]0')" in
'^[]0;pwned^G^[[2Jhot flat '*) ;;
*) fail "--svg: no escaped hot in the tooltips" ;;
esac
case "$(title names.flame.svg 'line^J')" in
"$shown_warm"$'\n'*) ;;
*) fail "--flame: the title does not show the name as it is: $(title names.flame.svg 'line^J')" ;;
esac
note "the call graph and the flame graph: well-formed, the names escaped"

# Deep stacks: 65,536 frames of distinct functions, and as many of one
# recursive function.  The tree's indentation grew with the depth (4.3 GB
# of text for half a megabyte): every report must now stay within a small
# multiple of its input, and finish quickly.
awk 'BEGIN {
	printf "main"; for (i = 1; i < 65536; i++) printf ";f%d", i; print " 7"
	printf "main"; for (i = 1; i < 65536; i++) printf ";rec"; print " 5"
}' >deep.folded
"$PROFVIEW" --pprof -o deep.pb.gz deep.folded || fail "--pprof of the deep stacks failed"
for input in deep.folded deep.pb.gz; do
	insize=$(stat -c %s $input)
	for report in tree flat folded svg flame icicle pprof; do
		start=$(date +%s%N)
		# A file size limit keeps a regression from filling the disk.
		(ulimit -f $((50 * insize / 1024)) && timeout 20 "$PROFVIEW" --$report -o deep.out $input) 2>deep.err ||
			fail "--$report on $input: failed, took more than 20 s or wrote more than 50 times its input: $(cat deep.err)"
		ms=$((($(date +%s%N) - start) / 1000000))
		size=$(stat -c %s deep.out)
		[ "$size" -lt $((50 * insize)) ] || fail "--$report on $input: $size bytes of output for $insize of input"
		note "--$report on $input ($insize bytes): $size bytes in $ms ms"
	done
done
"$PROFVIEW" --tree deep.folded >deep.tree
grep -qF '[+65] f64' deep.tree || fail "--tree: no depth shown past the indentation limit: $(sed -n 66p deep.tree)"
grep -qE '^ +\[65440 frames of one call chain not shown: depth 81 to 65520\]$' deep.tree ||
	fail "--tree: the deep chain is not elided: $(grep 'not shown' deep.tree)"
grep -qF '[+65536] f65535' deep.tree || fail "--tree: the leaf of the deep chain is not shown"
grep -qF '[+65536] rec' deep.tree || fail "--tree: the leaf of the deep recursion is not shown"
"$PROFVIEW" --folded deep.folded | cmp -s - deep.folded || fail "--folded does not give back the deep stacks"
"$PROFVIEW" --flame -o deep.svg deep.folded
xmllint --noout deep.svg || fail "--flame of the deep stacks is not well-formed"
grep -qF 'frames deeper than 1024 are summed' deep.svg || fail "--flame does not say that it left deep frames out"

# Deeper than the folded reader keeps: cut to the innermost frames, said.
awk 'BEGIN { printf "main"; for (i = 1; i < 70000; i++) printf ";f%d", i; print " 3"; print "main;g 1" }' >deeper.folded
"$PROFVIEW" --flat deeper.folded >deeper.flat 2>deeper.err || fail "a stack of 70,000 frames: $(cat deeper.err)"
grep -qF "'deeper.folded': 1 stack deeper than 65536 frames (the first at line 1) cut to its innermost 65536" deeper.err ||
	fail "no warning about the cut stack: $(cat deeper.err)"
grep -q '^warning: 1 sample .* with incomplete stacks' deeper.flat || fail "the cut stack is not counted as incomplete"
grep -q ' f69999$' deeper.flat || fail "the cut stack lost its leaf"

# Inputs without end.  /dev/zero and a pipe of zeros are no profile: said
# after their first bytes, not after gigabytes.

# bounded CMD...: CMD with 20 s and 4 GiB of address space at most, so
# that a regression fails the test, not the machine (not under
# AddressSanitizer, whose shadow memory alone is terabytes of addresses).
if grep -q __asan_init "$PROFVIEW"; then
	bounded() {
		timeout 20 "$@"
	}
else
	bounded() {
		(ulimit -v 4194304 && timeout 20 "$@")
	}
fi
for src in /dev/zero -; do
	start=$(date +%s)
	set +e
	head -c 1G /dev/zero | bounded "$PROFVIEW" --flat $src >/dev/null 2>zero.err
	st=$?
	set -e
	[ $st -eq 1 ] || fail "profview $src exited $st: $(cat zero.err)"
	grep -qE "^profview: '(/dev/zero|standard input)' is not a profile profview can read" zero.err ||
		fail "profview $src: $(cat zero.err)"
	[ $(($(date +%s) - start)) -le 5 ] || fail "profview $src took $(($(date +%s) - start)) s to say it is no profile"
done
# An endless pipe of what looks like folded stacks stops at --max-input.
set +e
yes 'main;f 1' | bounded "$PROFVIEW" --flat --max-input=1M - >/dev/null 2>yes.err
st=$?
set -e
[ $st -eq 1 ] || fail "an endless pipe with --max-input=1M exited $st: $(cat yes.err)"
grep -qxF "profview: 'standard input': input is larger than 1 MiB; stopped reading (raise the limit with --max-input)" yes.err ||
	fail "an endless pipe: $(cat yes.err)"
yes 'main;f 1' | head -n 200000 | "$PROFVIEW" --flat --max-input=2M - >yes.flat 2>yes.err ||
	fail "1.8 MB on a pipe with --max-input=2M: $(cat yes.err)"
[ "$(flat_self yes.flat f)" = 200000 ] || fail "1.8 MB on a pipe: $(cat yes.flat)"
"$PROFVIEW" --flat --max-input=1K deep.folded >/dev/null || fail "--max-input limits a regular file"

# Reports of nothing: a focus that matches no frame, a thread that is not
# there.  Each is a picture of no sample (under the sanitizers: without
# undefined behaviour on the empty arrays).
printf 'main;f 3\nmain;g 2\n' >two.folded
for report in --svg --flame --tree --flat --folded --speedscope; do
	"$PROFVIEW" -q $report --focus=nomatch two.folded >nothing.out 2>nothing.err ||
		fail "$report --focus=nomatch: $(cat nothing.err)"
done
"$CC" -O1 -g -o spinner "$SRCDIR/tests/progs/hostile-names.c" -pthread 2>/dev/null ||
	fail "cannot compile hostile-names.c"
"$RAWSYNTH" one.raw ./spinner "$(nm spinner | awk '$3 == "main" { print $1; exit }')" ||
	fail "rawsynth failed"
for report in "--timeline" "--svg" "--speedscope" "--flat"; do
	# shellcheck disable=SC2086
	"$PROFVIEW" -q $report --tid=999 one.raw >nothing.out 2>nothing.err ||
		fail "$report --tid=999: $(cat nothing.err)"
done

# Counts whose sum profview cannot hold: refused, naming the value, not
# shown as negative samples; a negative count is no count.
printf 'main;a 4611686018427387904\nmain;b 4611686018427387904\n' >over.folded
st=0
"$PROFVIEW" --flat over.folded >over.out 2>over.err || st=$?
[ $st -eq 1 ] || fail "counts that add up to 2^63 exited $st: $(cat over.out over.err)"
grep -qxF "profview: 'over.folded': the samples' 'samples' values add up to more than 9223372036854775807, which profview cannot count" over.err ||
	fail "counts that add up to 2^63: $(cat over.err)"
printf 'main;a 4611686018427387904\nmain;b 4611686018427387903\n' >max.folded
"$PROFVIEW" --flat max.folded >max.out || fail "counts that add up to 2^63 - 1 are refused"
grep -qE "(in |profile: )9223372036854775807 samples" max.out || fail "counts that add up to 2^63 - 1: $(cat max.out)"
grep -q -- '-[0-9]' max.out && fail "counts that add up to 2^63 - 1: a negative number: $(cat max.out)"
# merged from two files, the same
printf 'main;a 4611686018427387904\n' >half.folded
st=0
"$PROFVIEW" --flat half.folded half.folded >over.out 2>over.err || st=$?
[ $st -eq 1 ] && grep -qF "values add up to more than" over.err ||
	fail "two files whose counts add up to 2^63: $st $(cat over.out over.err)"

# gzip bombs.  2 GiB of zeros in 256 gzip members: no profile, said after
# the first decompressed bytes.  16 MiB of folded stacks (less 64 bytes):
# stopped at the limit, read whole under a higher one.
head -c 8M /dev/zero | gzip -c >zero8.gz
for i in $(seq 256); do cat zero8.gz; done >zero.gz
start=$(date +%s)
set +e
bounded "$PROFVIEW" --flat zero.gz >/dev/null 2>bomb.err
st=$?
set -e
[ $st -eq 1 ] || fail "a gzip bomb of zeros exited $st: $(cat bomb.err)"
grep -qxF "profview: 'zero.gz' is gzip-compressed, but what it holds is not a profile profview can read" bomb.err ||
	fail "a gzip bomb of zeros: $(cat bomb.err)"
[ $(($(date +%s) - start)) -le 5 ] || fail "a gzip bomb of zeros took $(($(date +%s) - start)) s"
yes 'main;f 1' | head -n 116508 | gzip -c >folded1.gz
for i in $(seq 16); do cat folded1.gz; done >folded.gz
set +e
bounded "$PROFVIEW" --flat --max-input=4M folded.gz >/dev/null 2>bomb.err
st=$?
set -e
[ $st -eq 1 ] || fail "16 MiB of gzip-compressed folded stacks with --max-input=4M exited $st"
grep -qxF "profview: 'folded.gz': decompressed data is larger than 4 MiB; stopped decompressing (raise the limit with --max-input)" bomb.err ||
	fail "a gzip bomb of folded stacks: $(cat bomb.err)"
"$PROFVIEW" --flat --max-input=16M folded.gz >bomb.flat || fail "16 MiB with --max-input=16M"
[ "$(flat_self bomb.flat f)" = $((16 * 116508)) ] || fail "16 MiB of gzip-compressed folded stacks: $(cat bomb.flat)"

# The option itself.
for bad in abc 1X -1 12KB7; do
	set +e
	"$PROFVIEW" --max-input=$bad deep.folded >/dev/null 2>opt.err
	st=$?
	set -e
	[ $st -eq 2 ] && grep -q "invalid --max-input '$bad'" opt.err || fail "--max-input=$bad: exit $st, $(cat opt.err)"
done
note "/dev/zero, endless pipes and gzip bombs stop early, with --max-input named"
exit 0
