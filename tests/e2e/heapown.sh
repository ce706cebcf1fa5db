#!/usr/bin/env bash
# A program with its own allocator (tests/progs/ownalloc.c: malloc and
# free over a static arena, in the executable): collect-heap sees none of
# its allocations, and both collect-heap's summary and profview's header
# say why, in one line each, with what to do.  A program on the C
# library's malloc draws no such line.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"
[ -x "$COLLECT_HEAP" ] || fail "no collect-heap next to $COLLECT_TIMER"

build ownalloc
build heapcases
"$COLLECT_HEAP" -o own.raw ./ownalloc 2>own.err || fail "collect-heap ./ownalloc failed: $(cat own.err)"
cat own.err
[ "$(grep -c "'./ownalloc' defines its own malloc" own.err)" = 1 ] ||
	fail "collect-heap does not say the program has its own malloc: $(cat own.err)"
grep "defines its own malloc" own.err | grep -q "link it with the C library's malloc" ||
	fail "collect-heap does not say what to do: $(cat own.err)"
"$PROFVIEW" --flat own.raw >own.txt 2>&1 || fail "profview of own.raw failed: $(cat own.txt)"
[ "$(grep -c "^warning: '.*ownalloc' defines its own malloc" own.txt)" = 1 ] ||
	fail "profview's header does not say the program has its own malloc: $(cat own.txt)"
# -q: the summary goes, the reason stays
"$COLLECT_HEAP" -q -o own.raw ./ownalloc 2>own.err || fail "collect-heap -q ./ownalloc failed"
grep -q "defines its own malloc" own.err || fail "collect-heap -q does not say the program has its own malloc"

# a program on the C library's malloc: no word of it
"$COLLECT_HEAP" -o libc.raw ./heapcases known 2>libc.err || fail "collect-heap ./heapcases failed"
grep -q "its own malloc" libc.err && fail "collect-heap says heapcases has its own malloc: $(cat libc.err)"
"$PROFVIEW" --flat libc.raw >libc.txt 2>&1 || fail "profview of libc.raw failed"
grep -q "its own malloc" libc.txt && fail "profview says heapcases has its own malloc: $(head -5 libc.txt)"
exit 0
