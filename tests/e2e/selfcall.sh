#!/usr/bin/env bash
# No frame is its own caller at one address: where the program did not
# recurse, no stack holds the same location twice in a row (checked with
# --addresses).  gcc splits a function and inlines the piece back into it
# (tests/progs/selfinline.c, as glibc's pread and read wrappers); its debug
# information then says the function is inlined into itself, called from
# its own declaration, which is no call.  Checked at every instruction of
# the function (a trace by tests/tools/rawsynth: no sample placement
# involved; with both symbolizers) and on a real profile of the program blocked in pread most of
# the time, which puts glibc's wrapper (with libc6-dbg) on every stack.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

[ -x "${RAWSYNTH:-}" ] || fail "RAWSYNTH is not set to tests/tools/rawsynth (meson test sets it)"
"$CC" -O2 -g -fno-omit-frame-pointer -o selfinline "$SRCDIR/tests/progs/selfinline.c" ||
	fail "cannot build selfinline"

# insns FUNCTION: the address (hex, as objdump writes it) of every
# instruction of FUNCTION
insns() {
	local lo size
	read -r lo size < <(nm -S selfinline | awk -v f="$1" '$4 == f { print $1, $2 }')
	[ -n "$lo" ] || fail "no symbol $1 in selfinline"
	objdump -d --no-show-raw-insn selfinline | awk -v lo=$((16#$lo)) -v hi=$((16#$lo + 16#$size)) '
		function hex(s,   i, n) {
			n = 0
			for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return n
		}
		/^ +[0-9a-f]+:/ { a = $1; sub(/:$/, "", a); v = hex(a); if (v >= lo && v < hi) print a }'
}
insns pv_pread >addrs
insns main >>addrs

# The program has the shape this is about (else the test tests nothing).
if command -v eu-addr2line >/dev/null; then
	n=$(while read -r a; do eu-addr2line -i -f -e selfinline "0x$a"; done <addrs |
		grep -c 'pv_pread inlined at .*selfinline\.c:[0-9]*:[0-9]* in pv_pread' || true)
	note "$n instructions of pv_pread inlined into itself"
	[ "$n" -gt 0 ] || fail "the compiler no longer inlines pv_pread into itself: selfinline.c needs another shape"
else
	note "eu-addr2line is not installed (Debian package elfutils): the program's shape is not checked"
fi

# repeats FOLDED: the stacks of a --folded --addresses report with the
# same frame twice in a row, one a line
repeats() {
	awk '{ line = $0; sub(/ [0-9]+$/, "", line); n = split(line, f, ";")
		for (i = 2; i <= n; i++) if (f[i] == f[i - 1]) { print; break } }' "$1"
}

"$RAWSYNTH" synth.raw ./selfinline <addrs || fail "rawsynth failed"
for s in dw bfd; do
	"$PROFVIEW" --symbolizer=$s --folded --addresses synth.raw >synth.folded || fail "profview failed"
	[ -s synth.folded ] || fail "no stacks from the synthetic trace"
	rep=$(repeats synth.folded)
	[ -z "$rep" ] || fail "--symbolizer=$s: a frame its own caller at one address: $rep"
done
"$PROFVIEW" --folded synth.raw >synth-fn.folded || fail "profview failed"
grep -q 'pv_pread;pv_pread' synth-fn.folded && fail "pv_pread its own caller: $(grep 'pv_pread;pv_pread' synth-fn.folded)"
grep -q 'pv_pread' synth-fn.folded || fail "no pv_pread in the synthetic trace: $(cat synth-fn.folded)"

# Blocked in a system call: the timer signal comes on the way back from
# the kernel, at the instruction after the syscall.
head -c $((1 << 20)) /dev/zero >data
"$COLLECT_TIMER" -q -o pread.raw ./selfinline data 0.5 >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --folded --addresses pread.raw >pread.folded || fail "profview failed"
rep=$(repeats pread.folded)
[ -z "$rep" ] || fail "a frame its own caller at one address in a real profile: $rep"
exit 0
