#!/usr/bin/env bash
# Programs where the collector's paths are not plain: a program whose path
# has a newline in it (shown as "\012" in /proc/self/maps) is symbolized;
# one that changes its root directory keeps writing its trace, which the
# new root does not reach by its path (or, calling the system call itself,
# loses its samples for that reason, said so).
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

# chroot (as root only): large stack copies fill the first part of the
# file in a tenth of the run, so the trace must grow after the chroot.
if [ "$(id -u)" = 0 ]; then
	mkdir jail
	"$COLLECT_TIMER" --unwind=dwarf --stack-size=65536 -o ch.raw ./accounted chroot "$WORK/jail" 1 \
		>/dev/null 2>ch.err || fail "the chroot'ed program failed: $(cat ch.err)"
	grep -q "^collect-timer: pid [0-9]* (accounted): [0-9]* samples (.*), 1 thread, 0 lost, " ch.err ||
		fail "samples lost after the chroot: $(cat ch.err)"
	size=$(stat -c %s ch.raw)
	[ "$size" -gt 3145728 ] || fail "the trace did not grow after the chroot: $size bytes"
	# the system call itself, behind libc's back: the samples after the
	# first part of the file are lost, for that reason
	"$COLLECT_TIMER" --unwind=dwarf --stack-size=65536 -o sch.raw ./accounted syschroot "$WORK/jail" 1 \
		>/dev/null 2>sch.err || fail "the program that calls chroot itself failed: $(cat sch.err)"
	grep -q " [1-9][0-9]* lost (the trace could not grow: the program changed its root directory (chroot) " sch.err ||
		fail "the samples lost after the chroot system call are not said so: $(cat sch.err)"
else
	note "not root: chroot is not tried"
fi
