#!/usr/bin/env bash
# Programs where the collector's paths are not plain: a program whose path
# has a newline in it (shown as "\012" in /proc/self/maps) is symbolized.
. "$(dirname "$0")/lib.sh"
e2e_init "$@"
cd "$WORK"

"$CC" -O1 -g -o accounted "$SRCDIR/tests/progs/accounted.c" || fail "cannot build accounted"

dir=$'new\nline'
mkdir "$dir"
cp accounted "$dir/acc"
"$COLLECT_TIMER" -q -o nl.raw "$WORK/$dir/acc" spin 0.3 >/dev/null 2>nl.err ||
	fail "the program in '$dir' failed: $(cat nl.err)"
"$PROFVIEW" --flat nl.raw >nl.txt 2>nl.perr || fail "profview failed: $(cat nl.perr)"
[ ! -s nl.perr ] || fail "profview warns about the program with a newline in its path: $(cat nl.perr)"
grep -q ' spin_to  .*accounted\.c:' nl.txt || fail "spin_to is not symbolized: $(head -8 nl.txt)"
