#!/usr/bin/env bash
# Binaries without debug info or without symbols, and code with no file at
# all: the names fall back to the symbol tables, then to module+offset,
# and code in anonymous memory (a JIT) is labelled as such.
#
# How each instruction is named does not depend on where samples land: a
# trace written by tests/tools/rawsynth has a sample at every instruction
# of hot_work and cold_work.  Real profiles of the same binaries check the
# rest of the way (the collector's mappings of a stripped program).
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

[ -x "${RAWSYNTH:-}" ] || fail "RAWSYNTH is not set to tests/tools/rawsynth (meson test sets it)"
"$CC" -O2 -g -fno-omit-frame-pointer -o split "$SRCDIR/tests/progs/split.c" || fail "cannot build split"
cp split split-nodebug && strip --strip-debug split-nodebug
cp split split-stripped && strip --strip-all split-stripped

# insns FUNCTION: the address (hex, as objdump writes it) of every
# instruction of FUNCTION in the unstripped binary, by its symbol's size.
insns() {
	local lo size
	read -r lo size < <(nm -S split | awk -v f="$1" '$4 == f { print $1, $2 }')
	[ -n "$lo" ] || fail "no symbol $1 in split"
	objdump -d --no-show-raw-insn split | awk -v lo=$((16#$lo)) -v hi=$((16#$lo + 16#$size)) '
		function hex(s,   i, n) {
			n = 0
			for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return n
		}
		/^ +[0-9a-f]+:/ { a = $1; sub(/:$/, "", a); v = hex(a); if (v >= lo && v < hi) print a }'
}
insns hot_work >hot.addrs
insns cold_work >cold.addrs
nhot=$(wc -l <hot.addrs)
ncold=$(wc -l <cold.addrs)
[ "$nhot" -ge 5 ] && [ "$ncold" -ge 5 ] || fail "hot_work has $nhot instructions, cold_work $ncold"

# No DWARF: names from .symtab, no file:line, on every instruction.
cat hot.addrs cold.addrs | "$RAWSYNTH" nodebug-all.raw ./split-nodebug || fail "rawsynth split-nodebug failed"
"$PROFVIEW" --flat nodebug-all.raw >nodebug-all.txt || fail "profview failed"
[ "$(flat_self nodebug-all.txt hot_work)" -eq "$nhot" ] ||
	fail "$(flat_self nodebug-all.txt hot_work) of hot_work's $nhot instructions named hot_work: $(cat nodebug-all.txt)"
[ "$(flat_self nodebug-all.txt cold_work)" -eq "$ncold" ] ||
	fail "$(flat_self nodebug-all.txt cold_work) of cold_work's $ncold instructions named cold_work: $(cat nodebug-all.txt)"
grep -q 'split.c' nodebug-all.txt && fail "file:line without debug info?"
# and in a real profile
"$COLLECT_TIMER" -q --unwind=fp -o nodebug.raw ./split-nodebug 0.5 >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --flat nodebug.raw >nodebug.txt || fail "profview failed"
# hot_work has three quarters of some 125 samples: none is 0.25^125 likely
grep -Eq ' hot_work *$' nodebug.txt || fail "no hot_work from .symtab: $(cat nodebug.txt)"
grep -q 'split.c' nodebug.txt && fail "file:line without debug info?"

# No symbols at all: module+offset, within the executable.  The offset is
# the file offset of the code, which in this PIE's text segment equals its
# address: each instruction of hot_work is named split-stripped+0xADDRESS.
"$RAWSYNTH" stripped-hot.raw ./split-stripped <hot.addrs || fail "rawsynth split-stripped failed"
"$PROFVIEW" --flat stripped-hot.raw >stripped-hot.txt || fail "profview failed"
awk '$1 ~ /^[0-9]+$/ && $2 ~ /%$/ && $1 > 0 { print $6 }' stripped-hot.txt | sort >got.names
sed 's/^0*/split-stripped+0x/' hot.addrs | sort >want.names
diff want.names got.names >&2 || fail "the instructions of hot_work in the stripped binary are not named split-stripped+0xADDRESS"
# A real profile: no name from nowhere, and the samples inside hot_work by
# the unstripped binary's symbols are the most of them: 74% expected, 66%
# or more on a loaded machine (where the sweeper's samples come in the
# clock read: see split.sh), of some 250 (120 or more when loaded); less
# than a third is 7 sigma away.
"$COLLECT_TIMER" -q --unwind=fp -o stripped.raw ./split-stripped 1.0 >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --flat stripped.raw >stripped.txt || fail "profview failed"
grep -q 'hot_work' stripped.txt && fail "a name from nowhere in a stripped binary"
total=$(awk '/^profile:/ { for (i = 1; i <= NF; i++) if ($i == "samples") print $(i - 1) }' stripped.txt)
inhot=$(awk -v f="$(tr '\n' ' ' <hot.addrs)" 'BEGIN { n = split(f, a, " "); for (i = 1; i <= n; i++) { sub(/^0*/, "", a[i]); want["split-stripped+0x" a[i]] = 1 } }
	$1 ~ /^[0-9]+$/ && $2 ~ /%$/ && ($6 in want) { s += $1 } END { print s + 0 }' stripped.txt)
note "stripped binary: $inhot of $total samples at an address of hot_work"
[ "${total:-0}" -gt 0 ] && [ $((3 * inhot)) -ge "$total" ] ||
	fail "only $inhot of $total samples of the stripped binary are in hot_work: $(head -12 stripped.txt)"

# Code in anonymous memory: the program's 10 bytes of machine code, named
# [anon]+0xOFFSET within them.  Nearly all the time is there (the rest, the
# clock read of main's loop, is 0.1%, up to some 10% on a loaded machine):
# at least half of the samples, every [anon] offset below 10.
"$CC" -O2 -g -o jit "$SRCDIR/tests/progs/jit.c" || fail "cannot build jit"
"$COLLECT_TIMER" -q -o jit.raw ./jit 0.5 >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --flat jit.raw >jit.txt 2>jit.err || fail "profview failed"
total=$(awk '/^profile:/ { for (i = 1; i <= NF; i++) if ($i == "samples") print $(i - 1) }' jit.txt)
read -r anon bad < <(awk '$1 ~ /^[0-9]+$/ && $2 ~ /%$/ && $6 ~ /^\[anon\]\+0x/ {
		s += $1; off = $6; sub(/^\[anon\]\+0x/, "", off)
		if (length(off) > 1 || off !~ /^[0-9]$/) b = b " " $6
	} END { print s + 0, (b == "" ? "-" : b) }' jit.txt)
note "JIT program: $anon of $total samples in [anon]"
[ "$bad" = - ] || fail "JIT code named outside its 10 bytes:$bad"
[ "${total:-0}" -gt 0 ] && [ $((2 * anon)) -ge "$total" ] ||
	fail "only $anon of $total samples of the JIT program labelled [anon]+0x...: $(cat jit.txt)"
# A separate debug file by .gnu_debuglink, in the program's folder and in
# its .debug folder (libdwfl's places, which profview looks at first to
# know whether libdwfl's search may find anything): file:line from it, on
# every instruction of hot_work.  And for a program with none anywhere and
# no debuginfod server named (DEBUGINFOD_URLS empty), libdebuginfod is not
# loaded: libdw 0.188 would load it (and libcurl with it) to learn that
# there is no server.
mkdir -p linked/.debug
objcopy --only-keep-debug split linked/split.dbg || fail "objcopy --only-keep-debug failed"
strip --strip-debug -o linked/split split && objcopy --add-gnu-debuglink=linked/split.dbg linked/split ||
	fail "cannot make a program with a debug link"
"$RAWSYNTH" linked.raw ./linked/split <hot.addrs || fail "rawsynth linked/split failed"
for place in linked linked/.debug; do
	[ "$place" = linked ] || mv linked/split.dbg linked/.debug/
	DEBUGINFOD_URLS= "$PROFVIEW" --flat linked.raw >linked.txt || fail "profview failed"
	n=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /%$/ && $6 == "hot_work" && $7 ~ /split\.c:[0-9]+$/ { s += $1 } END { print s + 0 }' linked.txt)
	[ "$n" -eq "$nhot" ] || fail "$n of hot_work's $nhot instructions named with split.c:LINE by the debug file in $place: $(cat linked.txt)"
done
if DEBUGINFOD_URLS= LD_DEBUG=files "$PROFVIEW" --flat nodebug-all.raw 2>&1 >/dev/null | grep -q 'file=libdebuginfod'; then
	fail "libdebuginfod loaded for a program without debug info, with no server to ask"
fi
exit 0
