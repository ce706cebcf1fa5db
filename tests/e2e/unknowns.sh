#!/usr/bin/env bash
# Code no symbol names keeps its address, spelled alike whoever collected
# it: a stripped shared library (tests/progs/statics.c) whose time is in
# two functions with internal linkage, profiled with collect-timer and
# collect-gdb (gdb, and eu-stack when installed).  Every sample in the
# library's unnamed code is a row "libstatics.so+0xOFFSET" of its own
# address, the offset lies inside one of the two functions (by the
# unstripped library's symbols), both functions have rows, and nothing is
# named "??" or after its module alone.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
COLLECT_GDB=${COLLECT_GDB:-$(cd "$(dirname "$PROFVIEW")/../collectors/gdb" && pwd)/collect-gdb}
[ -x "$COLLECT_GDB" ] || fail "no collect-gdb at '$COLLECT_GDB'"
cd "$WORK"

mkdir lib
"$CC" -O1 -g -fno-omit-frame-pointer -fPIC -shared -o libstatics.so "$SRCDIR/tests/progs/statics.c" ||
	fail "cannot build libstatics.so"
cp libstatics.so lib/libstatics.so && strip --strip-all lib/libstatics.so
"$CC" -O1 -g -fno-omit-frame-pointer -o statics-host "$SRCDIR/tests/progs/statics-host.c" \
	-L lib -lstatics -Wl,-rpath,'$ORIGIN/lib' || fail "cannot build statics-host"
nm lib/libstatics.so 2>/dev/null | grep -q statics_first && fail "the library was not stripped"

# The offset named is the file offset; in this library's code segment it
# equals the address nm gives (checked, not assumed).
readelf -lW lib/libstatics.so | awk '$1 == "LOAD" && $7 ~ /E/ { exit !($2 == $3) } END { }' ||
	fail "the code segment's file offset is not its address: $(readelf -lW lib/libstatics.so)"
# range FUNCTION: "LO HI" of FUNCTION in the unstripped library, decimal
range() {
	local lo size
	read -r lo size < <(nm -S libstatics.so | awk -v f="$1" '$4 == f { print $1, $2 }')
	[ -n "$lo" ] && echo $((16#$lo)) $((16#$lo + 16#$size))
}
read -r first_lo first_hi < <(range statics_first)
read -r second_lo second_hi < <(range statics_second)
[ -n "${first_lo:-}" ] && [ -n "${second_lo:-}" ] || fail "no statics_first/statics_second in libstatics.so"

# check REPORT WHO: the rules above, on a --flat report
check() {
	local report=$1 who=$2 bad counts
	grep -Eq '(^| )\?\?( |$)' "$report" && fail "$who: a frame named '??': $(cat "$report")"
	awk '$1 ~ /^[0-9]+$/ && $2 ~ /%$/ && $6 == "-"' "$report" | grep -q . &&
		fail "$who: a frame named '-': $(cat "$report")"
	bad=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /%$/ && $6 ~ /^libstatics/ && $6 !~ /^libstatics\.so\+0x[0-9a-f]+$/ { print $6 }' "$report")
	[ -z "$bad" ] || fail "$who: library frames not spelled libstatics.so+0xOFFSET: $bad"
	# each row's offset is in one function: "first second" rows
	counts=$(awk -v a="$first_lo" -v b="$first_hi" -v c="$second_lo" -v d="$second_hi" '
		function hex(s,   i, n) {
			n = 0
			for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return n
		}
		$1 ~ /^[0-9]+$/ && $2 ~ /%$/ && $6 ~ /^libstatics\.so\+0x/ {
			o = $6; sub(/^libstatics\.so\+0x/, "", o); o = hex(o)
			if (o >= a && o < b) f++
			else if (o >= c && o < d) s++
			else out = out " " $6
		} END { print f + 0, s + 0, (out == "" ? "-" : out) }' "$report")
	read -r nf ns outside <<<"$counts"
	note "$who: $nf addresses in statics_first, $ns in statics_second"
	[ "$outside" = - ] || fail "$who: addresses outside both functions:$outside"
	# Each function has half of the samples: that none falls in one of
	# them has a chance of 2^-25 at least (25 samples or more).
	[ "$nf" -gt 0 ] && [ "$ns" -gt 0 ] || fail "$who: not both functions by their addresses: $(cat "$report")"
	# rows per address, never one per library
	[ "$((nf + ns))" -ge 2 ] || fail "$who: one row for the library's code"
}

"$COLLECT_TIMER" -q -o timer.raw ./statics-host 1 >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --flat timer.raw >timer.txt || fail "profview failed on the collect-timer trace"
check timer.txt collect-timer

command -v gdb >/dev/null || { note "gdb is not installed: collect-gdb not tested"; exit 0; }
./statics-host 600 >/dev/null &
TARGET=$!
trap 'kill $TARGET 2>/dev/null || true; rm -rf "$WORK"' EXIT
"$COLLECT_GDB" -q -p "$TARGET" -i 0.02 -n 30 -o gdb.gdb || fail "collect-gdb failed"
grep -q '^# map: [0-9a-f]*-[0-9a-f]* [0-9a-f]* .*/lib/libstatics\.so$' gdb.gdb ||
	fail "the gdb trace does not map libstatics.so: $(grep '^# ' gdb.gdb | head -20)"
grep -q ' in ?? () from .*/libstatics\.so$' gdb.gdb || fail "gdb named the library's static functions?"
"$PROFVIEW" --flat --sample-index=samples gdb.gdb >gdb.txt || fail "profview failed on the gdb trace"
check gdb.txt "collect-gdb (gdb)"
if command -v eu-stack >/dev/null; then
	"$COLLECT_GDB" -q --mode=eu-stack --readnever -p "$TARGET" -i 0.02 -n 30 -o eu.gdb ||
		fail "collect-gdb --mode=eu-stack failed"
	"$PROFVIEW" --flat --sample-index=samples eu.gdb >eu.txt || fail "profview failed on the eu-stack trace"
	check eu.txt "collect-gdb (eu-stack)"
else
	note "eu-stack is not installed (Debian package elfutils): its mode is not tested"
fi

# A trace with no map lines (an older collect-gdb, or gdb's own output):
# the address itself, in the library gdb named.
grep -v '^# map:' gdb.gdb >nomaps.gdb
"$PROFVIEW" --flat --sample-index=samples nomaps.gdb >nomaps.txt || fail "profview failed without maps"
grep -Eq '(^| )\?\?( |$)' nomaps.txt && fail "without maps: a frame named '??': $(cat nomaps.txt)"
awk '$1 ~ /^[0-9]+$/ && $2 ~ /%$/ && $6 ~ /^0x[0-9a-f]+$/ && $7 ~ /libstatics\.so$/' nomaps.txt | grep -q . ||
	fail "without maps: no 0xADDRESS frame in libstatics.so: $(cat nomaps.txt)"
exit 0
