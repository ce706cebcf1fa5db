#!/usr/bin/env bash
# Binaries without debug info or without symbols, and code with no file at
# all: the names fall back to the symbol tables, then to module+offset,
# and code in anonymous memory (a JIT) is labelled as such.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

"$CC" -O2 -g -fno-omit-frame-pointer -o split "$SRCDIR/tests/progs/split.c" || fail "cannot build split"
cp split split-nodebug && strip --strip-debug split-nodebug
cp split split-stripped && strip --strip-all split-stripped

# No DWARF: names from .symtab, no file:line.
"$COLLECT_TIMER" -q --unwind=fp -o nodebug.raw ./split-nodebug 0.5 >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --flat nodebug.raw >nodebug.txt || fail "profview failed"
grep -Eq ' hot_work *$' nodebug.txt || fail "no hot_work from .symtab: $(cat nodebug.txt)"
grep -q 'split.c' nodebug.txt && fail "file:line without debug info?"

# No symbols at all: module+offset, within the executable.
"$COLLECT_TIMER" -q --unwind=fp -o stripped.raw ./split-stripped 0.5 >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --flat stripped.raw >stripped.txt || fail "profview failed"
grep -q 'hot_work' stripped.txt && fail "a name from nowhere in a stripped binary"
top=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /%$/ { print $6; exit }' stripped.txt)
note "hottest frame of the stripped binary: $top"
[[ $top == split-stripped+0x* ]] || fail "the stripped binary's hot frame is '$top', not split-stripped+0x..."
# The offset is the file offset of the sampled code, which in this PIE's
# text segment equals its address: inside hot_work by the unstripped
# binary's symbol table.
lo=$((16#$(nm split | awk '$3 == "hot_work" { print $1 }')))
size=$((16#$(nm -S split | awk '$4 == "hot_work" { print $2 }')))
want=$((16#${top#split-stripped+0x}))
[ "$want" -ge "$lo" ] && [ "$want" -lt $((lo + size)) ] ||
	fail "split-stripped+0x${top#split-stripped+0x} is not inside hot_work ($lo..$((lo + size)))"

# Code in anonymous memory.
"$CC" -O2 -g -o jit "$SRCDIR/tests/progs/jit.c" || fail "cannot build jit"
"$COLLECT_TIMER" -q -o jit.raw ./jit 0.5 >/dev/null || fail "collect-timer failed"
"$PROFVIEW" --flat jit.raw >jit.txt 2>jit.err || fail "profview failed"
top=$(awk '$1 ~ /^[0-9]+$/ && $2 ~ /%$/ { print $6; exit }' jit.txt)
note "hottest frame of the JIT program: $top"
[[ $top == "[anon]+0x"* ]] || fail "JIT code is '$top', not labelled [anon]+0x...: $(cat jit.txt)"
exit 0
